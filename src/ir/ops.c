/* The op table: ops.def expanded into tc_ops, and the name -> entry lookup nodes resolve with. */
#include "ir/ops.h"

#include <string.h>

#define REQ true
#define OPT false
#define A(attr, type, req) {#attr, TCONV_ATTR_##type, req},
#define TC_UNPAREN(...) __VA_ARGS__

/* Each entry's attribute list (one spare element: C has no empty arrays). */
#define TC_OP(dom, name, since, until, in_min, in_max, out_min, out_max, attrs, shape, kernel)     \
    static const tc_op_attr ATTRS_##name##_##since[] = {TC_UNPAREN attrs{NULL, 0, false}};
#include "ir/ops.def"
#undef TC_OP

#define S(fn) true
#define S0 false
#define K(fn) true
#define K0 false
#define TC_OP(dom, name, since, until, in_min, in_max, out_min, out_max, attrs, shape, kernel)     \
    [TC_OP_##name##_##since] = {#name,                                                             \
                                TC_DOMAIN_##dom,                                                   \
                                since,                                                             \
                                until,                                                             \
                                in_min,                                                            \
                                in_max,                                                            \
                                out_min,                                                           \
                                out_max,                                                           \
                                ATTRS_##name##_##since,                                            \
                                sizeof ATTRS_##name##_##since / sizeof(tc_op_attr) - 1,            \
                                shape,                                                             \
                                kernel},
const tc_op_def tc_ops[TC_OP_COUNT] = {
    [TC_OP_NONE] = {NULL, "", 0, 0, 0, 0, 0, 0, NULL, 0, false, false},
#include "ir/ops.def"
};
#undef TC_OP

_Static_assert(sizeof tc_ops / sizeof tc_ops[0] == TC_OP_COUNT, "one tc_ops entry per tc_op");

static bool is_default_domain(const char *domain) {
    return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

static bool same_domain(const char *entry, const char *domain) {
    return is_default_domain(domain) ? !*entry : strcmp(entry, domain) == 0;
}

/* A linear scan: it runs once per node created (and per node when an opset changes), never per
 * run, and the first-character test skips most entries. */
tc_op tc_op_find(const char *domain, const char *op_type, int64_t opset) {
    if (!op_type || !*op_type || opset <= 0)
        return TC_OP_NONE;
    for (int i = 1; i < TC_OP_COUNT; i++) {
        const tc_op_def *d = &tc_ops[i];
        if (d->name[0] == op_type[0] && opset >= d->since && opset <= d->until &&
            strcmp(d->name, op_type) == 0 && same_domain(d->domain, domain))
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
