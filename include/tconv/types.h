/* The handles and enums every part of the tconv API shares.
 *
 * Handles are opaque. A tconv_model owns everything reachable from it: its graphs, nodes,
 * values and tensors. Those handles are never freed one by one; they stay valid until the model
 * is freed with tconv_model_free (a node removed with tconv_node_remove must not be used again).
 * The other objects (tconv_pipeline, tconv_report, tconv_runner, tconv_comparison) are created
 * by a *_new function (or handed out by a call that says so) and freed by their *_free.
 *
 * Errors: every call that can fail returns a tconv_status. The message that explains a failure
 * is kept by the object the call worked on (tconv_model_last_error, tconv_pipeline_last_error,
 * tconv_runner_last_error, tconv_comparison_last_error); a call with a NULL handle returns
 * TCONV_ERR_USAGE and has nowhere to keep a message. The library never prints, never exits and
 * never aborts on bad input.
 *
 * Threads: separate models (and the objects made from them) can be used from separate threads at
 * the same time; the library has no global mutable state. One model, and everything made from
 * it, must be used by one thread at a time, reads included (failed calls record their message in
 * the model). The helper threads of multi-threaded runs belong to an object too: each runner
 * (and each model a comparison runs) owns a pool, started on first use and joined when it is
 * freed, unless the caller gives runners a shared tconv_threadpool (tconv/runtime.h). */
#ifndef TCONV_TYPES_H
#define TCONV_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tconv/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tconv_model tconv_model; /* an ONNX model: graphs, opsets, metadata */
typedef struct tconv_graph tconv_graph; /* the main graph or a subgraph (If/Loop/Scan body) */
typedef struct tconv_node tconv_node;   /* one operator */
typedef struct tconv_value tconv_value; /* a named SSA value: graph input, initializer or output */
typedef struct tconv_tensor tconv_tensor; /* constant data: an initializer or a TENSOR attribute */

/* Element types: ONNX TensorProto.DataType, same numbers. */
typedef enum tconv_dtype {
    TCONV_DTYPE_UNDEFINED = 0,
    TCONV_DTYPE_FLOAT = 1,
    TCONV_DTYPE_UINT8 = 2,
    TCONV_DTYPE_INT8 = 3,
    TCONV_DTYPE_UINT16 = 4,
    TCONV_DTYPE_INT16 = 5,
    TCONV_DTYPE_INT32 = 6,
    TCONV_DTYPE_INT64 = 7,
    TCONV_DTYPE_STRING = 8,
    TCONV_DTYPE_BOOL = 9,
    TCONV_DTYPE_FLOAT16 = 10,
    TCONV_DTYPE_DOUBLE = 11,
    TCONV_DTYPE_UINT32 = 12,
    TCONV_DTYPE_UINT64 = 13,
    TCONV_DTYPE_COMPLEX64 = 14,
    TCONV_DTYPE_COMPLEX128 = 15,
    TCONV_DTYPE_BFLOAT16 = 16,
    TCONV_DTYPE_FLOAT8E4M3FN = 17,
    TCONV_DTYPE_FLOAT8E4M3FNUZ = 18,
    TCONV_DTYPE_FLOAT8E5M2 = 19,
    TCONV_DTYPE_FLOAT8E5M2FNUZ = 20,
    TCONV_DTYPE_UINT4 = 21,
    TCONV_DTYPE_INT4 = 22,
    TCONV_DTYPE_FLOAT4E2M1 = 23,
    TCONV_DTYPE_FLOAT8E8M0 = 24,
    TCONV_DTYPE_UINT2 = 25,
    TCONV_DTYPE_INT2 = 26
} tconv_dtype;

/* Attribute types: ONNX AttributeProto.AttributeType, same numbers. */
typedef enum tconv_attr_type {
    TCONV_ATTR_UNDEFINED = 0, /* also: "no such attribute" */
    TCONV_ATTR_FLOAT = 1,
    TCONV_ATTR_INT = 2,
    TCONV_ATTR_STRING = 3,
    TCONV_ATTR_TENSOR = 4,
    TCONV_ATTR_GRAPH = 5,
    TCONV_ATTR_FLOATS = 6,
    TCONV_ATTR_INTS = 7,
    TCONV_ATTR_STRINGS = 8,
    TCONV_ATTR_TENSORS = 9,
    TCONV_ATTR_GRAPHS = 10,
    TCONV_ATTR_SPARSE_TENSOR = 11,
    TCONV_ATTR_SPARSE_TENSORS = 12,
    TCONV_ATTR_TYPE_PROTO = 13,
    TCONV_ATTR_TYPE_PROTOS = 14
} tconv_attr_type;

/* Which ConvTranspose nodes legalize-conv-transpose rewrites. */
typedef enum tconv_policy {
    TCONV_POLICY_SAME_OR_ASYMMETRIC = 0, /* SAME_*, asymmetric pads, output_shape, output_padding */
    TCONV_POLICY_VALID_ONLY              /* every ConvTranspose that is not plain VALID */
} tconv_policy;

/* Whose ConvTranspose pad split to reproduce where runtimes disagree (docs/semantics.md). */
typedef enum tconv_convention {
    TCONV_CONVENTION_ONNX = 0,  /* the ONNX spec (default) */
    TCONV_CONVENTION_ORT,       /* onnxruntime 1.30, measured: negative totals clamped to 0; ONNX
                                   for the nodes it refuses */
    TCONV_CONVENTION_ORT_LEGACY /* onnxruntime <= 1.12: SAME_UPPER odd extra at the beginning,
                                   output_shape/SAME_LOWER odd extra at the end, clamped */
} tconv_convention;

/* "float", "int64", ...; "undefined" for numbers that are not a tconv_dtype. Never NULL; the
 * string is static. */
const char *tconv_dtype_name(int dtype);

/* "INT", "FLOATS", ... as ONNX spells them; "UNKNOWN" for other numbers. Never NULL; static. */
const char *tconv_attr_type_name(int type);

/* Names in a model are bytes from a file: before printing one, escape it. Writes `text` into
 * buf[0 .. size-1] with control bytes (and C1 controls) and bytes that are not valid UTF-8 shown
 * as \xNN, valid UTF-8 kept, cut at a character boundary; NULL shows as "". Library messages
 * (the *_last_error functions) are escaped already. Returns buf. */
const char *tconv_escape_text(char *buf, size_t size, const char *text);

/* Frees memory the library handed to the caller with "free it with tconv_free" (serialized
 * models, IR text, JSON). NULL is ignored. */
void tconv_free(void *memory);

#ifdef __cplusplus
}
#endif

#endif
