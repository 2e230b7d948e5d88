/* Runtime tensors: dense row-major buffers in native (little-endian) byte order. */
#include "runtime/compute/rt_tensor.h"
#include "ir/check.h"

#include "runtime/compute/convert.h"

#include <stdlib.h>
#include <string.h>

size_t tc_rt_dtype_size(tconv_dtype dtype) {
    return tc_dtype_traits_of(dtype)->size;
}

/* Element count and byte size of a shape, overflow-checked. */
static tconv_status shape_byte_size(tconv_dtype dtype, int rank, const int64_t *dims,
                                    int64_t *n_elements, size_t *nbytes, tc_error *err) {
    size_t esize = tc_rt_dtype_size(dtype);
    if (esize == 0)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                            "unsupported dtype %s: the runtime has no storage for it",
                            tconv_dtype_name(dtype));
    if (rank < 0 || rank > TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "rank %d is outside 0..%d", rank,
                            TC_MAX_RANK);
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return tc_error_set(err, TCONV_ERR_INVALID, "negative dimension %lld at axis %d",
                                (long long)dims[i], i);
    }
    int64_t n, bytes;
    if (!tc_shape_elements(dims, rank, &n) || !tc_mul_i64(n, (int64_t)esize, &bytes) ||
        (uint64_t)bytes > (uint64_t)(SIZE_MAX / 2))
        return tc_error_set(err, TCONV_ERR_LIMIT, "tensor size overflows (%s, rank %d)",
                            tconv_dtype_name(dtype), rank);
    TC_ASSERT(n == 0 || (size_t)bytes / esize == (size_t)n);
    *n_elements = n;
    *nbytes = (size_t)bytes;
    return TCONV_OK;
}

tconv_status tc_rt_tensor_view(tc_rt_tensor *t, tconv_dtype dtype, int rank, const int64_t *dims,
                               void *data, tc_error *err) {
    int64_t n = 0;
    size_t nbytes = 0;
    tconv_status st = shape_byte_size(dtype, rank, dims, &n, &nbytes, err);
    if (st != TCONV_OK)
        return st;
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    if (rank > 0)
        memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
    t->n_elements = n;
    t->data = nbytes ? data : NULL;
    t->nbytes = nbytes;
    return TCONV_OK;
}

static tconv_status tensor_alloc(tc_rt_tensor *t, tconv_dtype dtype, int rank, const int64_t *dims,
                                 bool zero, tc_error *err) {
    tc_rt_tensor shaped;
    tconv_status st = tc_rt_tensor_view(&shaped, dtype, rank, dims, NULL, err);
    if (st != TCONV_OK)
        return st;
    if (shaped.nbytes > 0) {
        shaped.data = zero ? calloc(1, shaped.nbytes) : malloc(shaped.nbytes);
        if (!shaped.data)
            return tc_error_nomem(err, "tensor data");
        shaped.owns_data = true;
    }
    *t = shaped;
    return TCONV_OK;
}

tconv_status tc_rt_tensor_alloc(tc_rt_tensor *t, tconv_dtype dtype, int rank, const int64_t *dims,
                                tc_error *err) {
    return tensor_alloc(t, dtype, rank, dims, true, err);
}

tconv_status tc_rt_tensor_alloc_uninit(tc_rt_tensor *t, tconv_dtype dtype, int rank,
                                       const int64_t *dims, tc_error *err) {
    return tensor_alloc(t, dtype, rank, dims, false, err);
}

void tc_rt_tensor_release(tc_rt_tensor *t) {
    if (!t)
        return;
    if (t->owns_data)
        free(t->data);
    memset(t, 0, sizeof *t);
}

/* TensorProto packs sub-byte elements, the first in the low bits of a byte; the runtime keeps
 * each in a byte (signed types sign-extended). */
static void unpack_subbyte(tconv_dtype dtype, const uint8_t *packed, uint8_t *out, int64_t n) {
    int bits = tc_dtype_bits(dtype);
    int per_byte = 8 / bits;
    unsigned mask = (1u << bits) - 1u;
    bool is_signed = dtype == TCONV_DTYPE_INT4 || dtype == TCONV_DTYPE_INT2;
    for (int64_t i = 0; i < n; i++) {
        unsigned v = (packed[i / per_byte] >> (bits * (int)(i % per_byte))) & mask;
        if (is_signed && (v >> (bits - 1)))
            v |= ~mask;
        out[i] = (uint8_t)v;
    }
}

static void pack_subbyte(tconv_dtype dtype, const uint8_t *in, uint8_t *packed, size_t nbytes,
                         int64_t n) {
    int bits = tc_dtype_bits(dtype);
    int per_byte = 8 / bits;
    unsigned mask = (1u << bits) - 1u;
    memset(packed, 0, nbytes);
    for (int64_t i = 0; i < n; i++)
        packed[i / per_byte] |= (uint8_t)((in[i] & mask) << (bits * (int)(i % per_byte)));
}

tconv_status tc_rt_tensor_from_ir(tconv_tensor *src, tc_rt_tensor *dst, tc_error *err) {
    const char *name = src->name ? src->name : "";
    if (tc_rt_dtype_size(src->dtype) == 0)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                            "tensor '%s': unsupported dtype %s for the runtime", name,
                            tconv_dtype_name(src->dtype));
    tc_rt_tensor t;
    tconv_status st = tc_rt_tensor_alloc(&t, src->dtype, src->rank, src->dims, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "tensor '%s': ", name);
    if (tc_dtype_is_subbyte(src->dtype)) {
        const void *packed;
        size_t packed_bytes, want;
        st = tc_tensor_data(src, &packed, &packed_bytes, err);
        if (st == TCONV_OK &&
            (!tc_dtype_storage_bytes(src->dtype, t.n_elements, &want) || want != packed_bytes))
            st = tc_error_set(err, TCONV_ERR_INVALID, "tensor '%s': %zu bytes for %lld %s values",
                              name, packed_bytes, (long long)t.n_elements,
                              tconv_dtype_name(src->dtype));
        if (st != TCONV_OK) {
            tc_rt_tensor_release(&t);
            return st;
        }
        unpack_subbyte(src->dtype, packed, t.data, t.n_elements);
        *dst = t;
        return TCONV_OK;
    }
    /* External data and typed fields are decoded straight into the copy (no second copy in
     * the model: the session counts this one against its memory limit). */
    st = tc_tensor_copy_data(src, t.data, t.nbytes, err);
    if (st != TCONV_OK) {
        tc_rt_tensor_release(&t);
        return st;
    }
    *dst = t;
    return TCONV_OK;
}

tconv_status tc_rt_tensor_to_ir(const tc_rt_tensor *t, tconv_model *model, const char *name,
                                tconv_tensor **out, tc_error *err) {
    if (!tc_dtype_is_subbyte(t->dtype))
        return tc_tensor_create(model, name, t->dtype, t->rank, t->dims, t->data, t->nbytes, out,
                                err);
    size_t nbytes;
    if (!tc_dtype_storage_bytes(t->dtype, t->n_elements, &nbytes))
        return tc_error_set(err, TCONV_ERR_LIMIT, "tensor '%s': size overflows", name);
    uint8_t *packed = malloc(nbytes ? nbytes : 1);
    if (!packed)
        return tc_error_nomem(err, "a packed sub-byte tensor");
    pack_subbyte(t->dtype, t->data, packed, nbytes, t->n_elements);
    tconv_status st =
        tc_tensor_create(model, name, t->dtype, t->rank, t->dims, packed, nbytes, out, err);
    free(packed);
    return st;
}
