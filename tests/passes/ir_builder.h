/* Terse hand-building of IR graphs for pass tests, through the ir.h API only.
 *
 * Shapes are written as text: "N,3,?,5" is [N (symbolic), 3, unknown, 5]; "" is a scalar; NULL
 * means no shape (rank unknown). Value lists are comma-separated names; an empty name is an
 * omitted optional input. Include after <cmocka.h>. */
#ifndef TC_TESTS_PASSES_IR_BUILDER_H
#define TC_TESTS_PASSES_IR_BUILDER_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

#define B_OK(call)                                                                                 \
    do {                                                                                           \
        tc_error b_err_;                                                                           \
        tc_error_clear(&b_err_);                                                                   \
        if ((call) != TCONV_OK)                                                                    \
            fail_msg("%s failed: %s", #call, b_err_.message);                                      \
    } while (0)

static inline tconv_model *b_model(int64_t opset) {
    tconv_model *m;
    tc_error err;
    if (tc_model_create(&m, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    tc_model_set_ir_version(m, 8);
    if (tc_model_set_opset(m, "", opset, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    return m;
}

/* Parses "N,3,?,5" into dims; symbol names are copied into the model's arena. */
static inline int b_parse_dims(tconv_model *m, const char *spec, tc_dim *dims, int max) {
    int rank = 0;
    const char *p = spec;
    while (*p) {
        size_t len = strcspn(p, ",");
        char tok[64];
        assert_true(len < sizeof tok && rank < max);
        memcpy(tok, p, len);
        tok[len] = '\0';
        tc_dim *d = &dims[rank++];
        memset(d, 0, sizeof *d);
        if (strcmp(tok, "?") == 0) {
            d->kind = TCONV_DIM_UNKNOWN;
        } else if (isdigit((unsigned char)tok[0])) {
            d->kind = TCONV_DIM_STATIC;
            d->value = strtoll(tok, NULL, 10);
        } else {
            d->kind = TCONV_DIM_SYMBOLIC;
            d->param = tc_arena_strdup(m->arena, tok);
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return rank;
}

static inline tconv_value *b_value(tconv_graph *g, const char *name) {
    tconv_value *v = tc_graph_find_value(g, name);
    if (!v)
        B_OK(tc_graph_get_or_add_value(g, name, &v, &b_err_));
    return v;
}

/* Sets a tensor type (spec NULL: dtype only) and clears the dirty flag, as after loading. */
static inline void b_type(tconv_value *v, tconv_dtype dtype, const char *spec) {
    tc_dim dims[TC_MAX_RANK];
    int rank = spec ? b_parse_dims(v->graph->model, spec, dims, TC_MAX_RANK) : -1;
    B_OK(tc_value_set_tensor_type(v, dtype, rank, dims, &b_err_));
    v->type_dirty = false;
}

static inline tconv_value *b_input(tconv_graph *g, const char *name, tconv_dtype dtype,
                                   const char *spec) {
    tconv_value *v = b_value(g, name);
    b_type(v, dtype, spec);
    B_OK(tc_graph_add_input(g, v, NULL, &b_err_));
    return v;
}

static inline tconv_value *b_output(tconv_graph *g, const char *name) {
    tconv_value *v = b_value(g, name);
    B_OK(tc_graph_add_output(g, v, NULL, &b_err_));
    return v;
}

/* A node appended to g reading `inputs` and writing `outputs` (comma-separated names). */
static inline tconv_node *b_node(tconv_graph *g, const char *op, const char *name,
                                 const char *inputs, const char *outputs) {
    tconv_node *n;
    B_OK(tc_node_create(g, op, NULL, name, &n, &b_err_));
    for (int pass = 0; pass < 2; pass++) {
        const char *p = pass == 0 ? inputs : outputs;
        while (p && *p) {
            size_t len = strcspn(p, ",");
            char tok[128];
            assert_true(len < sizeof tok);
            memcpy(tok, p, len);
            tok[len] = '\0';
            if (pass == 0) {
                tconv_value *v = len ? b_value(g, tok) : NULL;
                B_OK(tc_node_add_input(n, v, &b_err_));
            } else {
                tconv_value *v;
                B_OK(tc_graph_get_or_add_value(g, tok, &v, &b_err_));
                B_OK(tc_node_add_output(n, v, &b_err_));
            }
            p += len;
            if (*p == ',') {
                p++;
                if (!*p && pass == 0)
                    B_OK(tc_node_add_input(n, NULL, &b_err_));
            }
        }
    }
    tc_graph_append_node(g, n);
    return n;
}

static inline void b_ints(tconv_node *n, const char *attr, const int64_t *values, size_t count) {
    B_OK(tc_node_set_attr_ints(n, attr, values, count, &b_err_));
}

static inline void b_int(tconv_node *n, const char *attr, int64_t value) {
    B_OK(tc_node_set_attr_int(n, attr, value, &b_err_));
}

static inline void b_string(tconv_node *n, const char *attr, const char *value) {
    B_OK(tc_node_set_attr_string(n, attr, value, &b_err_));
}

static inline void b_graph_attr(tconv_node *n, const char *attr, tconv_graph *sub) {
    tc_attr a;
    memset(&a, 0, sizeof a);
    a.name = attr;
    a.type = TCONV_ATTR_GRAPH;
    a.g = sub;
    sub->owner = n;
    B_OK(tc_node_add_attr(n, &a, &b_err_));
}

static inline tconv_graph *b_subgraph(tconv_graph *parent, const char *name) {
    tconv_graph *sub;
    B_OK(tc_graph_create(parent->model, parent, &sub, &b_err_));
    sub->name = name;
    return sub;
}

/* A 1-D int64 initializer (count values); rank 0 when count is -1 (one value). */
static inline tconv_value *b_i64(tconv_graph *g, const char *name, const int64_t *values,
                                 int count) {
    int64_t dims[1] = {count < 0 ? 1 : count};
    int rank = count < 0 ? 0 : 1;
    size_t n = (size_t)(count < 0 ? 1 : count);
    tconv_tensor *t;
    B_OK(tc_tensor_create(g->model, name, TCONV_DTYPE_INT64, rank, dims, values,
                          n * sizeof(int64_t), &t, &b_err_));
    B_OK(tc_graph_add_initializer(g, t, &b_err_));
    return t->value;
}

static inline tconv_value *b_f32(tconv_graph *g, const char *name, const char *spec,
                                 const float *values) {
    tc_dim dims[TC_MAX_RANK];
    int64_t shape[TC_MAX_RANK];
    int rank = b_parse_dims(g->model, spec, dims, TC_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        shape[i] = dims[i].value;
        n *= shape[i];
    }
    tconv_tensor *t;
    B_OK(tc_tensor_create(g->model, name, TCONV_DTYPE_FLOAT, rank, shape, values,
                          values ? (size_t)n * sizeof(float) : 0, &t, &b_err_));
    B_OK(tc_graph_add_initializer(g, t, &b_err_));
    return t->value;
}

/* "float[N,3,?,5]", "float[]" (scalar), "float" (no shape), "none" or "other". */
static inline const char *b_type_str(const tconv_value *v, char *buf, size_t size) {
    const tc_type *t = &v->type;
    if (t->kind != TCONV_TYPE_TENSOR)
        return snprintf(buf, size, "%s", t->kind == TCONV_TYPE_NONE ? "none" : "other"), buf;
    size_t len = (size_t)snprintf(buf, size, "%s", tconv_dtype_name(t->dtype));
    if (t->rank < 0)
        return buf;
    len += (size_t)snprintf(buf + len, size - len, "[");
    for (int i = 0; i < t->rank && len < size; i++) {
        const tc_dim *d = &t->dims[i];
        const char *sep = i ? "," : "";
        if (d->kind == TCONV_DIM_STATIC)
            len += (size_t)snprintf(buf + len, size - len, "%s%lld", sep, (long long)d->value);
        else if (d->kind == TCONV_DIM_SYMBOLIC)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, d->param);
        else
            len += (size_t)snprintf(buf + len, size - len, "%s?", sep);
    }
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}

#define assert_type(graph, name, expected)                                                         \
    do {                                                                                           \
        char b_buf_[256];                                                                          \
        tconv_value *b_v_ = tc_graph_find_value((graph), (name));                                  \
        if (!b_v_)                                                                                 \
            fail_msg("no value '%s'", (name));                                                     \
        assert_string_equal(b_type_str(b_v_, b_buf_, sizeof b_buf_), (expected));                  \
    } while (0)

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        if (!strstr((haystack), (needle)))                                                         \
            fail_msg("message \"%s\" lacks \"%s\"", (haystack), (needle));                         \
    } while (0)

#endif
