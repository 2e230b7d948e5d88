/* The op table: ops.def expanded into tc_ops, and the name -> entry lookup nodes resolve with. */
#include "ir/ops.h"

#include <stdlib.h>
#include <string.h>

#define REQ true
#define OPT false
#define A(attr, type, req) {#attr, TCONV_ATTR_##type, req},
#define TC_UNPAREN(...) __VA_ARGS__

/* Each entry's attribute list, ending with a NULL name (so that an empty list is an array too),
 * and a compile-time check of its opset range and arity. */
#define TC_OP(dom, op, v0, v1, i0, i1, o0, o1, at, shape, kernel)                                  \
    static const tc_op_attr ATTRS_##op##_##v0[] = {TC_UNPAREN at{NULL, 0, false}};                 \
    _Static_assert(1 <= (v0) && (v0) <= (v1) && (v1) <= TC_OPSET_LATEST, #op "-" #v0 ": opsets");  \
    _Static_assert((i0) <= (i1) && (i1) <= TC_MANY && (o0) <= (o1) && (o1) <= TC_MANY,             \
                   #op "-" #v0 ": arity");
#include "ir/ops.def"
#undef TC_OP

#define S(fn) true
#define S0 false
#define K(fn) true
#define KP(fn) true
#define K0 false
#define TC_OP(dom, op, v0, v1, i0, i1, o0, o1, at, shape, kernel)                                  \
    [TC_OP_##op##_##v0] = {.name = #op,                                                            \
                           .domain = TC_DOMAIN_##dom,                                              \
                           .since = v0,                                                            \
                           .until = v1,                                                            \
                           .min_in = i0,                                                           \
                           .max_in = i1,                                                           \
                           .min_out = o0,                                                          \
                           .max_out = o1,                                                          \
                           .attrs = ATTRS_##op##_##v0,                                             \
                           .n_attrs = sizeof ATTRS_##op##_##v0 / sizeof(tc_op_attr) - 1,           \
                           .has_shape_rule = shape,                                                \
                           .has_kernel = kernel},
/* Indexed by tc_op, entry TC_OP_NONE left empty. */
const tc_op_def tc_ops[TC_OP_COUNT] = {
#include "ir/ops.def"
};
#undef TC_OP

static bool is_default_domain(const char *domain) {
    return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

static bool same_domain(const char *entry, const char *domain) {
    return is_default_domain(domain) ? !*entry : strcmp(entry, domain) == 0;
}

/* Entries are sorted by name (strcmp order; tests/ir/test_ops.c keeps them so): a binary search
 * finds an op's first entry, then its versions follow. Runs once per node created (and per node
 * when an opset changes), never per run. */
tc_op tc_op_find(const char *domain, const char *op_type, int64_t opset) {
    if (!op_type || !*op_type || opset <= 0)
        return TC_OP_NONE;
    int lo = 1, hi = TC_OP_COUNT;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(tc_ops[mid].name, op_type) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = lo; i < TC_OP_COUNT && strcmp(tc_ops[i].name, op_type) == 0; i++) {
        const tc_op_def *d = &tc_ops[i];
        if (opset >= d->since && opset <= d->until && same_domain(d->domain, domain))
            return (tc_op)i;
    }
    return TC_OP_NONE;
}

const tc_op_attr *tc_op_attr_find(tc_op op, const char *name) {
    const tc_op_def *d = &tc_ops[op];
    for (size_t i = 0; name && i < d->n_attrs; i++) {
        if (strcmp(d->attrs[i].name, name) == 0)
            return &d->attrs[i];
    }
    return NULL;
}

bool tc_op_kernel_span(const char *domain, const char *op_type, int *first, int *last) {
    bool found = false;
    for (int i = 1; op_type && i < TC_OP_COUNT; i++) {
        const tc_op_def *d = &tc_ops[i];
        if (!d->has_kernel || strcmp(d->name, op_type) != 0 || !same_domain(d->domain, domain))
            continue;
        if (!found || d->since < *first)
            *first = d->since;
        if (!found || d->until > *last)
            *last = d->until;
        found = true;
    }
    return found;
}

/* Ops whose kernels only move, select or reinterpret elements (or read shapes), so they take
 * float16/bfloat16 tensors as 2-byte elements (TCONV_DTYPES_ANY), Cast, which converts
 * between every float type itself, Relu, which selects on the 16-bit patterns (the bits of
 * the float32 round trip), and QuantizeLinear/DequantizeLinear, whose roundings depend on the
 * 16-bit types (kernels_quant.c). Every other op with a kernel computes in float: the executor
 * runs it on float32 copies of its float16/bfloat16 inputs and rounds its float outputs back
 * (session_half.c). Sorted (strcmp): looked up by binary search. An op left off only costs two
 * conversions (widening is exact, so data movement gives the same bits); an op listed must take
 * float16 and bfloat16 itself. */
static const char *const HALF_NATIVE_OPS[] = {
    "Cast",   "CastLike",       "Concat",    "Constant", "DequantizeLinear",
    "Expand", "Flatten",        "Gather",    "Identity", "If",
    "Loop",   "QuantizeLinear", "Relu",      "Reshape",  "Scan",
    "Shape",  "Size",           "Slice",     "Split",    "Squeeze",
    "Tile",   "Transpose",      "Unsqueeze",
};

static int compare_names(const void *key, const void *entry) {
    return strcmp((const char *)key, *(const char *const *)entry);
}

bool tc_op_half_native(tc_op op) {
    if (op <= TC_OP_NONE || op >= TC_OP_COUNT || !same_domain(tc_ops[op].domain, ""))
        return false;
    return bsearch(tc_ops[op].name, HALF_NATIVE_OPS,
                   sizeof HALF_NATIVE_OPS / sizeof HALF_NATIVE_OPS[0], sizeof HALF_NATIVE_OPS[0],
                   compare_names) != NULL;
}

size_t tc_op_half_native_names(const char *const **names) {
    *names = HALF_NATIVE_OPS;
    return sizeof HALF_NATIVE_OPS / sizeof HALF_NATIVE_OPS[0];
}

/* Ops whose schemas give their float inputs different type constraints: BatchNormalization's
 * scale/B (T1) and mean/var (T2) beside X (T), Dropout's ratio (T1), OneHot's depth (T2) and
 * values (T3), Pow's exponent (T1), Resize's roi (T2), Resize's and Upsample's scales (float).
 * Every other op ties its float inputs to one type T, so a float16 input beside a float32 one
 * is refused, not widened and computed (issue 27). Sorted (strcmp): binary search. */
static const char *const MIXED_FLOAT_OPS[] = {
    "BatchNormalization", "Dropout", "OneHot", "Pow", "Resize", "Upsample",
};

bool tc_op_mixed_float_inputs(tc_op op) {
    if (op <= TC_OP_NONE || op >= TC_OP_COUNT || !same_domain(tc_ops[op].domain, ""))
        return true; /* unknown schema: not ours to refuse */
    return bsearch(tc_ops[op].name, MIXED_FLOAT_OPS,
                   sizeof MIXED_FLOAT_OPS / sizeof MIXED_FLOAT_OPS[0], sizeof MIXED_FLOAT_OPS[0],
                   compare_names) != NULL;
}
