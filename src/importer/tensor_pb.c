/* Serialized TensorProto files (input_N.pb / output_N.pb of ONNX test data). The message is
 * unpacked into the model's arena, so the tensor can borrow from it like a model's initializers
 * do and nothing has to be released separately. */
#include "importer/importer.h"
#include "importer/onnx_internal.h"

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

tconv_status tc_tensor_load_pb_buffer(tconv_model *model, const void *data, size_t size,
                                      const char *label, tconv_tensor **out, tc_error *err) {
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
    tconv_status st = unpack_tensor(model, data ? data : "", size, &proto, err);
    if (st == TCONV_OK) {
        tc_onnx_tensor_options options = {0, false, "is not supported in .pb tensor files"};
        st = tc_onnx_tensor_from_proto(model, proto, &options, out, err);
    }
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "%s: ", label);
    return TCONV_OK;
}

tconv_status tc_tensor_load_pb(tconv_model *model, const char *path, tconv_tensor **out,
                               tc_error *err) {
    tc_error local;
    if (!err)
        err = &local;
    *out = NULL;
    void *data;
    size_t size;
    tconv_status st = tc_read_file(path, TENSOR_PB_MAX_FILE_BYTES, &data, &size, err);
    if (st != TCONV_OK)
        return st;
    st = tc_tensor_load_pb_buffer(model, data, size, path, out, err);
    free(data);
    return st;
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
