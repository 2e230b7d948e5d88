/* The op table: ops.def expanded into tc_ops, and the name -> entry lookup nodes resolve with. */
#include "ir/ops.h"

#include <float.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define REQ true
#define OPT false
/* A(name, TYPE, REQ|OPT) or A(name, TYPE, OPT, default): the count of arguments picks the form. */
#define TC_DEFAULT_FLOAT(d) .def_float = (d)
#define TC_DEFAULT_INT(d) .def_int = (d)
#define TC_DEFAULT_STRING(d) .def_string = (d)
#define TC_ATTR3(attr, ty, req) {.name = #attr, .type = TCONV_ATTR_##ty, .required = req},
#define TC_ATTR4(attr, ty, req, def)                                                               \
    {.name = #attr,                                                                                \
     .type = TCONV_ATTR_##ty,                                                                      \
     .required = req,                                                                              \
     .has_default = true,                                                                          \
     TC_DEFAULT_##ty(def)},
#define TC_ATTR_PICK(a1, a2, a3, a4, form, ...) form
#define A(...) TC_ATTR_PICK(__VA_ARGS__, TC_ATTR4, TC_ATTR3, none, none)(__VA_ARGS__)
#define TC_UNPAREN(...) __VA_ARGS__

#define F(flags) (flags)
#define F0 0u
#define ACT(fn, cost) TC_ACTIVATION_##fn, cost
#define ACT0 TC_ACTIVATION_NONE, 0
#define TC_KIND(dom, op, flags, activation)                                                        \
    [TC_KIND_##op] = {#op, TC_DOMAIN_##dom, flags, activation},
/* Indexed by tc_op_kind, entry TC_KIND_NONE left empty. */
#define TC_OP(...)
const tc_kind_def tc_kinds[TC_KIND_COUNT] = {
#include "ir/ops.def"
};
#undef TC_OP
#undef TC_KIND

/* Each entry's attribute list, ending with a NULL name (so that an empty list is an array too),
 * and a compile-time check of its opset range and arity. */
#define TC_OP(dom, op, v0, v1, i0, i1, o0, o1, at, shape, kernel)                                  \
    static const tc_op_attr ATTRS_##op##_##v0[] = {TC_UNPAREN at{.name = NULL}};                   \
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
                           .kind = TC_KIND_##op,                                                   \
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

/* The first row of table (count rows of `size` bytes, each starting with its name, row 0 left
 * empty) whose name is not before `name` in strcmp order: tc_ops and tc_kinds are sorted by name
 * (tests/ir/test_ops.c keeps them so). */
_Static_assert(offsetof(tc_op_def, name) == 0 && offsetof(tc_kind_def, name) == 0,
               "first_named reads a row's name as its first member");
static int first_named(const void *table, size_t size, int count, const char *name) {
    int lo = 1, hi = count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const char *const *row = (const char *const *)((const char *)table + (size_t)mid * size);
        if (strcmp(*row, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A binary search finds an op's first entry, then its versions follow. Runs once per node created
 * (and per node when an opset changes), never per run. */
tc_op tc_op_find(const char *domain, const char *op_type, int64_t opset) {
    if (!op_type || !*op_type || opset <= 0)
        return TC_OP_NONE;
    int lo = first_named(tc_ops, sizeof tc_ops[0], TC_OP_COUNT, op_type);
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

/* Runs once per node created, never per run. */
tc_op_kind tc_kind_find(const char *domain, const char *op_type) {
    if (!op_type || !*op_type)
        return TC_KIND_NONE;
    int lo = first_named(tc_kinds, sizeof tc_kinds[0], TC_KIND_COUNT, op_type);
    for (int i = lo; i < TC_KIND_COUNT && strcmp(tc_kinds[i].name, op_type) == 0; i++) {
        if (same_domain(tc_kinds[i].domain, domain))
            return (tc_op_kind)i;
    }
    return TC_KIND_NONE;
}

const char *tc_kind_name(tc_op_kind kind) {
    return kind > TC_KIND_NONE && kind < TC_KIND_COUNT ? tc_kinds[kind].name : "";
}

const tc_op_attr *tc_kind_attr_default(tc_op_kind kind, const char *name) {
    for (int i = TC_OP_COUNT - 1; kind != TC_KIND_NONE && i > TC_OP_NONE; i--) {
        const tc_op_attr *a = tc_ops[i].kind == kind ? tc_op_attr_find((tc_op)i, name) : NULL;
        if (a && a->has_default)
            return a;
    }
    return NULL;
}

bool tc_kind_has(tc_op_kind kind, unsigned flags) {
    return kind > TC_KIND_NONE && kind < TC_KIND_COUNT && (tc_kinds[kind].flags & flags) == flags;
}

bool tc_op_half_native(tc_op op) {
    return op > TC_OP_NONE && op < TC_OP_COUNT && tc_kind_has(tc_ops[op].kind, TC_OPF_HALF_NATIVE);
}

bool tc_op_mixed_float_inputs(tc_op op) {
    if (op <= TC_OP_NONE || op >= TC_OP_COUNT)
        return true; /* unknown schema: not ours to refuse */
    return tc_kind_has(tc_ops[op].kind, TC_OPF_MIXED_FLOAT);
}
