/* Zero-copy loading and streamed saving of large models (importer internals).
 *
 * Loading: the file is mapped read-only. protobuf-c copies every bytes field it unpacks, so
 * before unpacking, a compact copy of the wire data is built in which every large
 * TensorProto.raw_data payload (initializers, Constant/attribute tensors, sparse tensor values,
 * at any depth) is replaced by an empty raw_data field; that copy is unpacked, and the emptied
 * fields are then pointed back at the payload bytes in the mapping. The mapping lives as long as
 * the model (tc_onnx_loaded_free is the model's release function). A restored message is
 * the same message protobuf-c would have unpacked from the file, so saving it packs the same
 * bytes (raw_data is packed in its canonical place, like every known field).
 *
 * Saving: the message is packed straight into the temp file through a ProtobufCBuffer; raw
 * payloads that live in the mapping are written from there without an intermediate copy. */
#ifndef TC_IMPORTER_MODEL_MAP_H
#define TC_IMPORTER_MODEL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "importer/onnx_internal.h"

/* Smallest raw_data payload borrowed from the input instead of copied by protobuf-c. */
#define TC_HOLLOW_MIN_BYTES 64

/* ---------------------------------------------------------------- hollowing (wire_hollow.c) */

typedef struct tc_onnx_payload {
    size_t offset, len;    /* the raw_data bytes in the input */
    size_t path, path_len; /* steps (2 entries each) in tc_onnx_hollow.steps */
} tc_onnx_payload;

/* The compact copy and where each removed payload sits. A path is the chain of message fields
 * from the root to the TensorProto: (field index in the descriptor, element index) per step. */
typedef struct tc_onnx_hollow {
    uint8_t *compact;
    size_t compact_len, compact_cap;
    tc_onnx_payload *payloads;
    size_t n_payloads, cap_payloads;
    uint32_t *steps;
    size_t n_steps, cap_steps; /* in uint32_t entries */
} tc_onnx_hollow;

/* Builds the compact copy of `data` (a `descriptor` message) without the raw_data payloads of
 * at least min_bytes. Returns false when the data cannot be hollowed safely (malformed wire
 * data, a non-repeated message field given twice, out of memory): the caller then unpacks
 * `data` as it is. Never reads outside data[0, size). */
bool tc_onnx_hollow_build(const uint8_t *data, size_t size,
                          const ProtobufCMessageDescriptor *descriptor, size_t min_bytes,
                          tc_onnx_hollow *out);
/* Points each emptied raw_data of `message` (unpacked from the compact copy) back at its
 * payload in `data`. False if a payload's tensor is not where the scan saw it (then nothing
 * may rely on the message's raw_data: free it and unpack `data` as it is). */
bool tc_onnx_hollow_restore(const tc_onnx_hollow *hollow, ProtobufCMessage *message,
                            const uint8_t *data);
void tc_onnx_hollow_free(tc_onnx_hollow *hollow);

/* ---------------------------------------------------------------- loaded bytes (model_map.c) */

/* The input bytes of a model (a read-only mapping of the file, or an owned copy of a caller's
 * buffer) and the message unpacked from them, which may point into them. */
typedef struct tc_onnx_loaded tc_onnx_loaded;

/* Maps `path` (a regular file of at most max_bytes, 0: no limit). Errors name the path. */
tconv_status tc_onnx_loaded_map_file(const char *path, size_t max_bytes, tc_onnx_loaded **out,
                                     tc_error *err);
/* Copies a caller's buffer once: the model never borrows memory it does not own. */
tconv_status tc_onnx_loaded_copy(const void *data, size_t size, tc_onnx_loaded **out,
                                 tc_error *err);
const uint8_t *tc_onnx_loaded_bytes(const tc_onnx_loaded *loaded, size_t *size);
/* Unpacks the bytes as a ModelProto whose large raw_data payloads point into them (the wire
 * data must have passed tc_onnx_check_wire_bounded). The message is owned by `loaded`. */
tconv_status tc_onnx_loaded_unpack(tc_onnx_loaded *loaded, Onnx__ModelProto **out, tc_error *err);
/* Frees the message, then the mapping or copy (NULL is fine). Fits tconv_model.release. */
void tc_onnx_loaded_free(void *loaded);
/* The loaded bytes a model borrows from (NULL if it was not loaded through these functions). */
const tc_onnx_loaded *tc_onnx_model_loaded(const tconv_model *model);
/* Whether p points into the loaded bytes and [p, p + len) lies inside them. */
bool tc_onnx_loaded_contains(const tc_onnx_loaded *loaded, const void *p, size_t len);
/* When [p, p + len) lies in a mapped file: that file and the offset of p in it. */
bool tc_onnx_loaded_file_range(const tc_onnx_loaded *loaded, const void *p, size_t len, int *fd,
                               int64_t *offset);

/* ---------------------------------------------------------------- streamed saving */

/* The ModelProto for `model`, built in `tmp` (onnx_save.c). */
tconv_status tc_onnx_model_to_proto(const tconv_model *model, tc_arena *tmp, Onnx__ModelProto **out,
                                    tc_error *err);
/* A message to pack and the loaded input its large payloads may lie in (NULL: none). */
typedef struct tc_onnx_packed {
    const ProtobufCMessage *message;
    const tc_onnx_loaded *source;
} tc_onnx_packed;
/* A tc_fd_writer (importer.h) for a tc_onnx_packed: packs the message into fd as it goes,
 * copying payloads that lie in a mapped input file in the kernel where it can (stream_save.c).
 * Errors name path. */
tconv_status tc_onnx_write_packed(int fd, const char *path, void *packed, tc_error *err);

#endif
