/* Serialized TensorProto files (input_N.pb / output_N.pb of ONNX test data). The message is
 * unpacked into the model's arena, so the tensor can borrow from it like a model's initializers
 * do and nothing has to be released separately. */
#include "importer/importer.h"
#include "importer/onnx_internal.h"

#include <inttypes.h>
#include <stdlib.h>

/* A TensorProto nests at most StringStringEntryProto and Segment; more is not a tensor file. */
#define TENSOR_PB_MAX_NESTING 4
#define TENSOR_PB_MAX_FILE_BYTES ((size_t)1 << 31)

static void *arena_pb_alloc(void *arena, size_t size) {
    return tc_arena_alloc(arena, size);
}

static void arena_pb_free(void *arena, void *pointer) {
    (void)arena; /* the arena owns it until the model is freed */
    (void)pointer;
}

static tconv_status unpack_tensor(tconv_model *model, const void *data, size_t size,
                                  Onnx__TensorProto **out, tc_error *err) {
    tconv_status st =
        tc_onnx_check_wire_bounded(data, size, &onnx__tensor_proto__descriptor,
                                   TENSOR_PB_MAX_NESTING, TENSOR_PB_MAX_FILE_BYTES, err);
    if (st != TCONV_OK)
        return st;
    ProtobufCAllocator allocator = {arena_pb_alloc, arena_pb_free, model->arena};
    *out = onnx__tensor_proto__unpack(&allocator, size, data);
    if (!*out)
        return tc_error_set(err, TCONV_ERR_PARSE,
                            "not a valid ONNX TensorProto (protobuf decoding failed)");
    return TCONV_OK;
}

/* ---------------------------------------------------------------- the declared size */

/* Skips a field's payload of wire type wt; false on a malformed one. */
static bool wire_skip(const uint8_t **p, const uint8_t *end, unsigned wt) {
    uint64_t v;
    size_t fixed = wt == 1 ? 8 : wt == 5 ? 4 : 0;
    if (wt == 0)
        return tc_onnx_read_varint(p, end, &v);
    if (wt == 2) {
        if (!tc_onnx_read_varint(p, end, &v) || v > (uint64_t)(end - *p))
            return false;
        *p += v;
        return true;
    }
    if (fixed == 0 || fixed > (size_t)(end - *p))
        return false;
    *p += fixed;
    return true;
}

/* Multiplies the element count by one dim; a negative dim is left to the decoder. */
static void count_dim(uint64_t dim, uint64_t *elements, bool *overflow) {
    if ((int64_t)dim < 0)
        return;
    if (dim != 0 && *elements > UINT64_MAX / dim)
        *overflow = true;
    else
        *elements *= dim;
}

/* Reads the TensorProto's dims (field 1, packed or not) and data_type (field 2) without
 * decoding its data. false when the wire is malformed (the decoder then says how). */
static bool declared_size(const uint8_t *p, const uint8_t *end, int *dtype, uint64_t *elements,
                          bool *overflow) {
    *dtype = 0;
    *elements = 1;
    *overflow = false;
    while (p < end) {
        uint64_t key, v;
        if (!tc_onnx_read_varint(&p, end, &key))
            return false;
        unsigned field = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        if (field == 1 && wt == 0) {
            if (!tc_onnx_read_varint(&p, end, &v))
                return false;
            count_dim(v, elements, overflow);
        } else if (field == 1 && wt == 2) {
            if (!tc_onnx_read_varint(&p, end, &v) || v > (uint64_t)(end - p))
                return false;
            const uint8_t *packed_end = p + v;
            while (p < packed_end) {
                if (!tc_onnx_read_varint(&p, packed_end, &v))
                    return false;
                count_dim(v, elements, overflow);
            }
        } else if (field == 2 && wt == 0) {
            if (!tc_onnx_read_varint(&p, end, &v))
                return false;
            *dtype = (int)(int32_t)v;
        } else if (!wire_skip(&p, end, wt)) {
            return false;
        }
    }
    return true;
}

/* Refuses, before anything is decoded, a tensor whose dims and data_type need more than
 * max_bytes (0: no limit): decoding a packed field can take 8 times the file's size. */
static tconv_status check_declared_size(const void *data, size_t size, size_t max_bytes,
                                        tc_error *err) {
    int dtype;
    uint64_t elements;
    bool overflow;
    size_t bytes = 0;
    if (max_bytes == 0 ||
        !declared_size(data, (const uint8_t *)data + size, &dtype, &elements, &overflow))
        return TCONV_OK;
    if (!overflow && elements <= (uint64_t)INT64_MAX &&
        (!tc_dtype_storage_bytes(dtype, (int64_t)elements, &bytes) || bytes <= max_bytes))
        return TCONV_OK; /* an unknown dtype is the decoder's to refuse */
    if (overflow || elements > (uint64_t)INT64_MAX || bytes == 0)
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "its dims declare more elements than fit in 64 bits (limit %zu "
                            "bytes)",
                            max_bytes);
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "its dims and data_type declare %zu bytes of data (%" PRIu64
                        " elements of %s), over the limit of %zu bytes",
                        bytes, elements, tconv_dtype_name((tconv_dtype)dtype), max_bytes);
}

/* ---------------------------------------------------------------- loading */

static tconv_status load_buffer(tconv_model *model, const void *data, size_t size,
                                const char *label, size_t max_bytes, tconv_tensor **out,
                                tc_error *err) {
    tc_error local;
    if (!err)
        err = &local;
    *out = NULL;
    if (!label)
        label = "<memory>";
    if (!data && size)
        return tc_error_set(err, TCONV_ERR_USAGE, "%s: tensor buffer is NULL", label);
    if (size > TENSOR_PB_MAX_FILE_BYTES)
        return tc_error_set(err, TCONV_ERR_LIMIT, "%s: %zu bytes, over the limit of %zu", label,
                            size, TENSOR_PB_MAX_FILE_BYTES);
    Onnx__TensorProto *proto = NULL;
    tconv_status st = check_declared_size(data, size, max_bytes, err);
    if (st == TCONV_OK)
        st = unpack_tensor(model, data ? data : "", size, &proto, err);
    if (st == TCONV_OK) {
        tc_onnx_tensor_options options = {0, false, "is not supported in .pb tensor files"};
        st = tc_onnx_tensor_from_proto(model, proto, &options, out, err);
    }
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "%s: ", label);
    return TCONV_OK;
}

tconv_status tc_tensor_load_pb_buffer(tconv_model *model, const void *data, size_t size,
                                      const char *label, tconv_tensor **out, tc_error *err) {
    return load_buffer(model, data, size, label, 0, out, err);
}

tconv_status tc_tensor_load_pb_within(tconv_model *model, const char *path, size_t max_bytes,
                                      tconv_tensor **out, tc_error *err) {
    tc_error local;
    if (!err)
        err = &local;
    *out = NULL;
    void *data;
    size_t size;
    size_t max_file =
        max_bytes && max_bytes < TENSOR_PB_MAX_FILE_BYTES ? max_bytes : TENSOR_PB_MAX_FILE_BYTES;
    /* the file is read whole before it is decoded: its size counts first */
    tconv_status st = tc_read_file(path, max_file, &data, &size, err);
    if (st != TCONV_OK)
        return st;
    st = load_buffer(model, data, size, path, max_bytes, out, err);
    free(data);
    return st;
}

tconv_status tc_tensor_load_pb(tconv_model *model, const char *path, tconv_tensor **out,
                               tc_error *err) {
    return tc_tensor_load_pb_within(model, path, 0, out, err);
}

tconv_status tc_tensor_save_pb(tconv_tensor *tensor, const char *path, tc_error *err) {
    tc_error local;
    if (!err)
        err = &local;
    tc_arena *tmp = tc_arena_create();
    if (!tmp)
        return tc_error_nomem(err, "the tensor writer");
    tconv_status st = TCONV_OK;
    Onnx__TensorProto *proto = tc_onnx_tensor_to_proto(tmp, tensor, err);
    if (!proto) {
        st = err->status;
    } else if (proto->has_data_location &&
               proto->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        st = tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                          "tensor '%s' keeps its data in an external file; .pb tensor files "
                          "hold their data inline",
                          tensor->name ? tensor->name : "");
    } else {
        size_t size = protobuf_c_message_get_packed_size(&proto->base);
        uint8_t *buf = malloc(size ? size : 1);
        if (!buf) {
            st = tc_error_nomem(err, "the serialized tensor");
        } else {
            protobuf_c_message_pack(&proto->base, buf);
            st = tc_write_file_atomic(path, buf, size, err);
            free(buf);
            tc_arena_destroy(tmp);
            return st; /* its errors name the path */
        }
    }
    tc_arena_destroy(tmp);
    return st == TCONV_OK ? TCONV_OK : tc_error_prefix(err, st, "%s: ", path);
}
