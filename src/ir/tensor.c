/* IR tensors: creation, element counts and on-demand access to their bytes. Typed-field
 * decoding and external data reading are the importer's (through tensor->source). */
#include "ir/ir.h"

#include <string.h>

bool tc_tensor_elements(const tconv_tensor *tensor, int64_t *out) {
    return tc_shape_elements(tensor->dims, tensor->rank, out);
}

tconv_status tc_tensor_create(tconv_model *model, const char *name, tconv_dtype dtype, int rank,
                              const int64_t *dims, const void *data, size_t nbytes,
                              tconv_tensor **out, tc_error *err) {
    int64_t n;
    size_t expected;
    if (rank < 0 || rank > TC_MAX_RANK || (rank > 0 && !dims) ||
        !tc_shape_elements(dims, rank, &n) || !tc_dtype_storage_bytes(dtype, n, &expected))
        return tc_error_set(err, TCONV_ERR_INVALID, "tensor '%s': bad dtype %d or shape",
                            name ? name : "", (int)dtype);
    if (data && nbytes != expected)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "tensor '%s': %zu data bytes given, %s[%lld elements] needs %zu",
                            name ? name : "", nbytes, tconv_dtype_name(dtype), (long long)n,
                            expected);
    tconv_tensor *t = tc_arena_alloc(model->arena, sizeof *t);
    int64_t *dims_copy = tc_arena_calloc(model->arena, (size_t)rank + 1, sizeof(int64_t));
    void *bytes = tc_arena_alloc(model->arena, expected);
    if (!t || !dims_copy || !bytes || (name && !(t->name = tc_arena_strdup(model->arena, name))))
        return tc_error_nomem(err, "a tensor");
    if (rank)
        memcpy(dims_copy, dims, (size_t)rank * sizeof(int64_t));
    if (data && expected)
        memcpy(bytes, data, expected);
    t->model = model;
    t->dtype = dtype;
    t->rank = rank;
    t->dims = dims_copy;
    t->storage = TCONV_STORAGE_RAW;
    t->raw = bytes;
    t->raw_size = expected;
    t->dirty = true;
    *out = t;
    return TCONV_OK;
}

static tconv_status tensor_expected_bytes(const tconv_tensor *tensor, size_t *out, tc_error *err) {
    int64_t n;
    if (!tc_tensor_elements(tensor, &n) || !tc_dtype_storage_bytes(tensor->dtype, n, out))
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "tensor '%s': dims or dtype %d give no valid byte size",
                            tensor->name ? tensor->name : "", (int)tensor->dtype);
    return TCONV_OK;
}

static tconv_status no_decoder(const tconv_tensor *tensor, tc_error *err) {
    return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "tensor '%s': no decoder for its data",
                        tensor->name ? tensor->name : "");
}

tconv_status tc_tensor_data(tconv_tensor *tensor, const void **data, size_t *nbytes,
                            tc_error *err) {
    size_t expected;
    tconv_status st = tensor_expected_bytes(tensor, &expected, err);
    if (st != TCONV_OK)
        return st;
    if (tensor->storage == TCONV_STORAGE_RAW || tensor->storage == TCONV_STORAGE_NONE) {
        size_t have = tensor->storage == TCONV_STORAGE_RAW ? tensor->raw_size : 0;
        if (have != expected)
            return tc_error_set(
                err, TCONV_ERR_INVALID, "tensor '%s': raw_data has %zu bytes, dims x %s need %zu",
                tensor->name ? tensor->name : "", have, tconv_dtype_name(tensor->dtype), expected);
        *data = tensor->raw;
        *nbytes = have;
        return TCONV_OK;
    }
    if (!tensor->decoded) {
        if (!tensor->source || !tensor->source->decode)
            return no_decoder(tensor, err);
        tconv_model *model = tensor->model;
        size_t limit = model->max_decoded_bytes, held = model->decoded_bytes;
        if (limit && (held > limit || expected > limit - held))
            return tc_error_set(err, TCONV_ERR_LIMIT,
                                "tensor '%s': reading its %zu bytes of data would exceed the "
                                "memory limit of %zu bytes (%zu bytes of tensor data already "
                                "read)",
                                tensor->name ? tensor->name : "", expected, limit, held);
        void *buf = tc_arena_alloc(model->arena, expected);
        if (!buf)
            return tc_error_nomem(err, "decoded tensor data");
        st = tensor->source->decode(tensor, buf, expected, err);
        if (st != TCONV_OK)
            return st;
        tensor->decoded = buf;
        tensor->decoded_size = expected;
        model->decoded_bytes = held + expected;
    }
    *data = tensor->decoded;
    *nbytes = tensor->decoded_size;
    return TCONV_OK;
}

tconv_status tc_tensor_copy_data(tconv_tensor *tensor, void *dst, size_t dst_bytes, tc_error *err) {
    size_t expected;
    tconv_status st = tensor_expected_bytes(tensor, &expected, err);
    if (st != TCONV_OK)
        return st;
    if (expected != dst_bytes)
        return tc_error_set(err, TCONV_ERR_INVALID, "tensor '%s': %zu data bytes, expected %zu",
                            tensor->name ? tensor->name : "", expected, dst_bytes);
    bool raw = tensor->storage == TCONV_STORAGE_RAW || tensor->storage == TCONV_STORAGE_NONE;
    if (raw || tensor->decoded) {
        const void *data;
        size_t nbytes;
        st = tc_tensor_data(tensor, &data, &nbytes, err);
        if (st == TCONV_OK && nbytes)
            memcpy(dst, data, nbytes);
        return st;
    }
    if (!tensor->source || !tensor->source->decode)
        return no_decoder(tensor, err);
    return tensor->source->decode(tensor, dst, dst_bytes, err);
}

tconv_status tc_tensor_get_i64(tconv_tensor *tensor, int64_t index, int64_t *out, tc_error *err) {
    const void *data;
    size_t nbytes;
    tconv_status st = tc_tensor_data(tensor, &data, &nbytes, err);
    if (st != TCONV_OK)
        return st;
    int64_t n;
    if (!tc_tensor_elements(tensor, &n) || index < 0 || index >= n)
        return tc_error_set(err, TCONV_ERR_INVALID, "tensor '%s': element %lld out of range",
                            tensor->name ? tensor->name : "", (long long)index);
    const tc_dtype_traits *traits = tc_dtype_traits_of(tensor->dtype);
    if (!traits->get_bits || traits->subbyte) /* integers and bool, not packed */
        return tc_error_set(err, TCONV_ERR_INVALID, "tensor '%s': %s is not an integer type",
                            tensor->name ? tensor->name : "", tconv_dtype_name(tensor->dtype));
    uint64_t element; /* aligned: raw_data need not be */
    memcpy(&element, (const unsigned char *)data + traits->size * (size_t)index, traits->size);
    *out = (int64_t)traits->get_bits(&element, 0);
    return TCONV_OK;
}

tconv_status tc_tensor_strings(tconv_tensor *tensor, const tc_bytes **strings, size_t *count,
                               tc_error *err) {
    int64_t n;
    if (tensor->dtype != TCONV_DTYPE_STRING || !tc_tensor_elements(tensor, &n))
        return tc_error_set(err, TCONV_ERR_INVALID, "tensor '%s' is not a string tensor",
                            tensor->name ? tensor->name : "");
    if (!tensor->decoded) {
        if (!tensor->source || !tensor->source->decode_strings)
            return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                                "tensor '%s': no decoder for its strings",
                                tensor->name ? tensor->name : "");
        tc_bytes *buf = tc_arena_calloc(tensor->model->arena, (size_t)n + 1, sizeof(tc_bytes));
        if (!buf)
            return tc_error_nomem(err, "string tensor data");
        tconv_status st = tensor->source->decode_strings(tensor, buf, (size_t)n, err);
        if (st != TCONV_OK)
            return st;
        tensor->decoded = buf;
        tensor->decoded_size = (size_t)n * sizeof(tc_bytes);
    }
    *strings = tensor->decoded;
    *count = (size_t)n;
    return TCONV_OK;
}
