/* The op table (ops.def expanded): one entry per op and range of opset versions, with its arity
 * and attribute schema. A node carries its entry (tconv_node.op), resolved from its domain, op
 * type and the model's opset when it is created and again when the opset changes; verifier, shape
 * inference and runtime index their tables by it instead of matching op names. */
#ifndef TCONV_IR_OPS_H
#define TCONV_IR_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tconv/types.h"

/* Newest opset version tconv knows; entries that run "to the latest" end here. */
#define TC_OPSET_LATEST 27
/* An arity without upper bound. */
#define TC_MANY 255

#define TC_DOMAIN_onnx ""

typedef enum tc_op {
    TC_OP_NONE = 0, /* an op (or a version of it) the table does not know */
#define TC_OP(dom, name, since, ...) TC_OP_##name##_##since,
#include "ir/ops.def"
#undef TC_OP
    TC_OP_COUNT
} tc_op;

typedef struct tc_op_attr {
    const char *name;
    tconv_attr_type type;
    bool required;
} tc_op_attr;

typedef struct tc_op_def {
    const char *name;   /* op_type */
    const char *domain; /* "" for ai.onnx */
    int since, until;   /* opset versions this entry covers, inclusive */
    unsigned char min_in, max_in, min_out, max_out; /* TC_MANY: no upper bound */
    const tc_op_attr *attrs;
    size_t n_attrs;
    bool has_shape_rule;
    bool has_kernel;
} tc_op_def;

/* Indexed by tc_op; entry TC_OP_NONE has a NULL name. */
extern const tc_op_def tc_ops[TC_OP_COUNT];

/* The entry of (domain, op_type) at `opset` (domain NULL, "" or "ai.onnx": the default one);
 * TC_OP_NONE when unknown or opset <= 0. */
tc_op tc_op_find(const char *domain, const char *op_type, int64_t opset);
/* The schema of attribute `name` in entry `op`, or NULL. */
const tc_op_attr *tc_op_attr_find(tc_op op, const char *name);
/* The first and last opset at which (domain, op_type) has a kernel; false when it has none. */
bool tc_op_kernel_span(const char *domain, const char *op_type, int *first, int *last);

/* float16/bfloat16 at runtime: true when the op's kernel takes them itself (it moves 2-byte
 * elements, or it is Cast); false when the executor widens them to float32 around the kernel. */
bool tc_op_half_native(tc_op op);
/* Whether the op's schema lets its float inputs have different float types (separate type
 * constraints, e.g. BatchNormalization's T, T1, T2); false: one constraint T ties them. */
bool tc_op_mixed_float_inputs(tc_op op);
/* That list of op names (sorted), for the op table's test. */
size_t tc_op_half_native_names(const char *const **names);

#endif
