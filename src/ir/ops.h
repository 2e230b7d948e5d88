/* The op table (ops.def expanded): one entry per op and range of opset versions, with its arity
 * and attribute schema, and one kind per op, with its properties. A node carries its entry
 * (tconv_node.op), resolved from its domain, op type and the model's opset when it is created and
 * again when the opset changes, and its kind (tconv_node.kind, whatever the opset); verifier,
 * shape inference and runtime index their tables by them, and code outside src/ir tests kinds and
 * properties, never op names. */
#ifndef TC_IR_OPS_H
#define TC_IR_OPS_H

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

/* The op, whatever the opset: one per TC_KIND line of ops.def. */
typedef enum tc_op_kind {
    TC_KIND_NONE = 0, /* an op the table does not know */
#define TC_OP(...)
#define TC_KIND(dom, name, ...) TC_KIND_##name,
#include "ir/ops.def"
#undef TC_KIND
#undef TC_OP
    TC_KIND_COUNT
} tc_op_kind;

/* The properties of a kind (ops.def's flags column says what each means). */
typedef enum tc_op_flag {
    TC_OPF_HALF_NATIVE = 1u << 0,
    TC_OPF_MIXED_FLOAT = 1u << 1,
    TC_OPF_EPILOGUE = 1u << 2,
    TC_OPF_NONDETERMINISTIC = 1u << 3,
    TC_OPF_ROUNDING_COMMUTES = 1u << 4,
} tc_op_flag;

/* The elementwise activations a TC_OPF_EPILOGUE kernel may apply: one per ACT(fn, cost) of
 * ops.def, TC_ACTIVATION_<fn>; its scalar function is tc_act_<fn>f
 * (src/runtime/kernels/activation.h). */
typedef enum tc_activation_kind {
    TC_ACTIVATION_NONE = 0,
#define ACT(fn, cost) TC_ACTIVATION_##fn,
#define ACT0
#define TC_KIND(dom, name, flags, activation) activation
#define TC_OP(...)
#include "ir/ops.def"
#undef TC_OP
#undef TC_KIND
#undef ACT
#undef ACT0
    TC_ACTIVATION_COUNT
} tc_activation_kind;

typedef struct tc_kind_def {
    const char *name;   /* op_type */
    const char *domain; /* "" for ai.onnx */
    unsigned flags;     /* tc_op_flag */
    tc_activation_kind activation;
    unsigned char activation_cost; /* work per element, in streamed elements (parallel.h) */
} tc_kind_def;

/* Indexed by tc_op_kind; entry TC_KIND_NONE has a NULL name. */
extern const tc_kind_def tc_kinds[TC_KIND_COUNT];

/* An attribute of an entry's schema. has_default: the default ONNX gives it (ops.def writes it
 * where code reads it), in the field of its type. */
typedef struct tc_op_attr {
    const char *name;
    tconv_attr_type type;
    bool required;
    bool has_default;
    float def_float;
    int64_t def_int;
    const char *def_string;
} tc_op_attr;

typedef struct tc_op_def {
    const char *name;   /* op_type */
    const char *domain; /* "" for ai.onnx */
    tc_op_kind kind;
    int since, until; /* opset versions this entry covers, inclusive */
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

/* The kind of (domain, op_type) at any opset (domain NULL, "" or "ai.onnx": the default one);
 * TC_KIND_NONE when unknown. */
tc_op_kind tc_kind_find(const char *domain, const char *op_type);
/* The op_type of a kind, for code that creates nodes (e.g. tc_kind_name(TC_KIND_Slice)). */
const char *tc_kind_name(tc_op_kind kind);
/* The default of attribute `name` in the newest entry of kind that gives one, or NULL. */
const tc_op_attr *tc_kind_attr_default(tc_op_kind kind, const char *name);
/* Whether kind has every flag of `flags` (tc_op_flag); false for TC_KIND_NONE. */
bool tc_kind_has(tc_op_kind kind, unsigned flags);

/* float16/bfloat16 at runtime: true when the op's kernel takes them itself (TC_OPF_HALF_NATIVE);
 * false when the executor widens them to float32 around the kernel. */
bool tc_op_half_native(tc_op op);
/* Whether the op's schema lets its float inputs have different float types (TC_OPF_MIXED_FLOAT);
 * true for an op the table does not know (not ours to refuse). */
bool tc_op_mixed_float_inputs(tc_op op);

#endif
