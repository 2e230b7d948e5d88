/* Internals shared by the importer's files (loader, saver, tensor .pb files). Not installed:
 * only src/importer includes it, since it exposes protobuf-c types. */
#ifndef TC_IMPORTER_ONNX_INTERNAL_H
#define TC_IMPORTER_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "onnx.pb-c.h"

#include "importer/importer.h"

/* How a TensorProto is read into the IR. */
typedef struct tc_onnx_tensor_options {
    size_t max_tensor_bytes;        /* 0: no limit */
    bool allow_external;            /* false: data_location EXTERNAL is an error */
    const char *no_external_reason; /* why external data is refused, for the message */
} tc_onnx_tensor_options;

/* A tensor owned by `model` that borrows `proto` (which must live as long as the model): raw
 * data is referenced in place, typed fields and external data are decoded on first use through
 * tc_onnx_tensor_source. Validates dtype, dims, byte counts and external locations. Errors
 * name the tensor and the field; the caller adds where the tensor sits. */
tconv_status tc_onnx_tensor_from_proto(tconv_model *model, const Onnx__TensorProto *proto,
                                       const tc_onnx_tensor_options *options, tconv_tensor **out,
                                       tc_error *err);

/* A TensorProto for `tensor` built in `tmp` (unchanged tensors return their origin). */
Onnx__TensorProto *tc_onnx_tensor_to_proto(tc_arena *tmp, tconv_tensor *tensor, tc_error *err);

/* One protobuf varint at *p (advanced past it); false when it runs past end. */
bool tc_onnx_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

/* Checks that `data` is well-formed protobuf wire data for `descriptor` whose nesting of
 * sub-messages stays within max_depth, without recursing deeper than that (protobuf-c's
 * unpacker recurses once per nesting level with no limit of its own, so a crafted file could
 * otherwise exhaust the stack), and refuses (TCONV_ERR_LIMIT) data whose unpacking would allocate
 * more than max_overhead bytes (0: no limit) beyond the file's own bytes: message structs, arrays
 * and unknown-field records, which a file of many tiny sub-messages multiplies ~100-fold. */
tconv_status tc_onnx_check_wire_bounded(const void *data, size_t size,
                                        const ProtobufCMessageDescriptor *descriptor, int max_depth,
                                        size_t max_overhead, tc_error *err);

/* `dir`/`location` after checking that location is relative, has no ".." component and, once
 * symlinks are resolved, stays inside dir. malloc'd, caller frees. */
tconv_status tc_onnx_resolve_external(const char *dir, const char *location, char **out,
                                      tc_error *err);

/* The folder part of a path ("." when it has none); malloc'd. */
char *tc_path_dirname(const char *path);
/* a/b joined with one '/'; malloc'd. */
char *tc_path_join(const char *dir, const char *name);

#endif
