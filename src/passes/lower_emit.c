#include "passes/lower_emit.h"
#include "ir/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tc_emitter_init(tc_emitter *e, tconv_node *anchor, const char *base, tc_error *err) {
    memset(e, 0, sizeof *e);
    e->model = anchor->graph->model;
    e->graph = anchor->graph;
    e->base = base;
    e->before = anchor;
    e->last = anchor;
    e->opset = tc_model_opset(e->model, "");
    e->err = err;
}

void tc_emitter_free(tc_emitter *e) {
    free(e->emitted);
    e->emitted = NULL;
    e->n_emitted = e->cap_emitted = 0;
}

void tc_emitter_after(tc_emitter *e, tconv_node *node) {
    e->before = NULL;
    e->last = node;
}

void tc_emitter_before(tc_emitter *e, tconv_node *node) {
    e->before = node;
}

tconv_status tc_emitter_record(tc_emitter *e, tconv_node *node) {
    for (size_t i = 0; i < e->n_emitted; i++) {
        if (e->emitted[i] == node)
            return TCONV_OK;
    }
    if (!TC_VEC_RESERVE(e->emitted, e->cap_emitted, e->n_emitted + 1))
        return tc_error_nomem(e->err, "a lowering");
    e->emitted[e->n_emitted++] = node;
    return TCONV_OK;
}

tconv_status tc_emit_value(tc_emitter *e, const char *suffix, tconv_value **out) {
    char *name = tc_arena_sprintf(e->model->arena, "%s/%s", e->base, suffix);
    if (!name)
        return tc_error_nomem(e->err, "a value name");
    return tc_graph_add_unique_value(e->graph, name, out, e->err);
}

tconv_status tc_emit_node(tc_emitter *e, const char *op_type, const char *suffix,
                          tconv_value *const *inputs, size_t n_inputs, tconv_node **node,
                          tconv_value **out) {
    char *base = tc_arena_sprintf(e->model->arena, "%s/%s", e->base, suffix);
    const char *name = base ? tc_model_unique_node_name(e->model, base) : NULL;
    if (!name)
        return tc_error_nomem(e->err, "a node name");
    tconv_node *n;
    tconv_status st = tc_node_create(e->graph, op_type, NULL, name, &n, e->err);
    if (st != TCONV_OK)
        return st;
    if (e->before) {
        tc_graph_insert_before(e->graph, e->before, n);
    } else {
        tc_graph_insert_after(e->graph, e->last, n);
        e->last = n;
    }
    st = tc_emitter_record(e, n);
    for (size_t i = 0; st == TCONV_OK && i < n_inputs; i++)
        st = tc_node_add_input(n, inputs[i], e->err);
    tconv_value *v = NULL;
    if (st == TCONV_OK && out) {
        char value_suffix[96];
        snprintf(value_suffix, sizeof value_suffix, "%s_output", suffix);
        st = tc_emit_value(e, value_suffix, &v);
        if (st == TCONV_OK)
            st = tc_node_add_output(n, v, e->err);
        *out = v;
    }
    if (node)
        *node = n;
    return st;
}

tconv_status tc_emit_int64(tc_emitter *e, const char *suffix, const int64_t *values, size_t n,
                           tconv_value **out) {
    tconv_status st = tc_emit_value(e, suffix, out);
    int64_t dims[1] = {(int64_t)n};
    tconv_tensor *tensor;
    if (st == TCONV_OK)
        st = tc_tensor_create(e->model, (*out)->name, TCONV_DTYPE_INT64, 1, dims, values,
                              n * sizeof(int64_t), &tensor, e->err);
    if (st == TCONV_OK)
        st = tc_graph_add_initializer(e->graph, tensor, e->err);
    if (st == TCONV_OK && e->model->has_ir_version && e->model->ir_version < 4)
        st = tc_graph_add_input(e->graph, *out, NULL, e->err);
    return st;
}

/* An op whose int64 list is an attribute before `since_input` and an input from then on. */
static tconv_status emit_with_list(tc_emitter *e, const char *op_type, const char *suffix,
                                   tconv_value *in, const char *attr, const int64_t *values,
                                   size_t n, int64_t since_input, tconv_value **out) {
    tconv_node *node;
    tconv_value *inputs[2] = {in, NULL};
    tconv_status st = TCONV_OK;
    if (e->opset >= since_input) {
        char name[96];
        snprintf(name, sizeof name, "%s_%s", suffix, attr);
        st = tc_emit_int64(e, name, values, n, &inputs[1]);
    }
    if (st == TCONV_OK)
        st = tc_emit_node(e, op_type, suffix, inputs, inputs[1] ? 2 : 1, &node, out);
    if (st == TCONV_OK && e->opset < since_input)
        st = tc_node_set_attr_ints(node, attr, values, n, e->err);
    return st;
}

tconv_status tc_emit_slice(tc_emitter *e, tconv_value *in, const int64_t *axes,
                           const int64_t *starts, const int64_t *ends, size_t n, const char *suffix,
                           tconv_value **out) {
    tconv_node *node;
    tconv_status st;
    if (e->opset < 10) {
        tconv_value *inputs[1] = {in};
        if ((st = tc_emit_node(e, "Slice", suffix, inputs, 1, &node, out)) ||
            (st = tc_node_set_attr_ints(node, "starts", starts, n, e->err)) ||
            (st = tc_node_set_attr_ints(node, "ends", ends, n, e->err)))
            return st;
        return tc_node_set_attr_ints(node, "axes", axes, n, e->err);
    }
    tconv_value *inputs[4] = {in, NULL, NULL, NULL};
    char name[96];
    snprintf(name, sizeof name, "%s_starts", suffix);
    if ((st = tc_emit_int64(e, name, starts, n, &inputs[1])))
        return st;
    snprintf(name, sizeof name, "%s_ends", suffix);
    if ((st = tc_emit_int64(e, name, ends, n, &inputs[2])))
        return st;
    snprintf(name, sizeof name, "%s_axes", suffix);
    if ((st = tc_emit_int64(e, name, axes, n, &inputs[3])))
        return st;
    return tc_emit_node(e, "Slice", suffix, inputs, 4, &node, out);
}

tconv_status tc_emit_unsqueeze(tc_emitter *e, tconv_value *in, const int64_t *axes, size_t n,
                               const char *suffix, tconv_value **out) {
    return emit_with_list(e, "Unsqueeze", suffix, in, "axes", axes, n, 13, out);
}

tconv_status tc_emit_squeeze(tc_emitter *e, tconv_value *in, const int64_t *axes, size_t n,
                             const char *suffix, tconv_value **out) {
    return emit_with_list(e, "Squeeze", suffix, in, "axes", axes, n, 13, out);
}

tconv_status tc_emit_reshape(tc_emitter *e, tconv_value *in, const int64_t *shape, int rank,
                             const char *suffix, tconv_value **out) {
    return emit_with_list(e, "Reshape", suffix, in, "shape", shape, (size_t)rank, 5, out);
}

tconv_status tc_emit_pad(tc_emitter *e, tconv_value *in, const int64_t *pads, int rank,
                         const char *suffix, tconv_value **out) {
    const char *attr = e->opset < 2 ? "paddings" : "pads";
    return emit_with_list(e, "Pad", suffix, in, attr, pads, (size_t)(2 * rank), 11, out);
}

tconv_status tc_emit_transpose(tc_emitter *e, tconv_value *in, const int64_t *perm, int rank,
                               const char *suffix, tconv_value **out) {
    tconv_node *node;
    tconv_value *inputs[1] = {in};
    tconv_status st = tc_emit_node(e, "Transpose", suffix, inputs, 1, &node, out);
    return st == TCONV_OK ? tc_node_set_attr_ints(node, "perm", perm, (size_t)rank, e->err) : st;
}

tconv_status tc_emit_concat(tc_emitter *e, tconv_value *const *inputs, size_t n, int64_t axis,
                            const char *suffix, tconv_value **out) {
    tconv_node *node;
    tconv_status st = tc_emit_node(e, "Concat", suffix, inputs, n, &node, out);
    return st == TCONV_OK ? tc_node_set_attr_int(node, "axis", axis, e->err) : st;
}

tconv_status tc_emit_declare(tc_emitter *e, tconv_value *value, tconv_dtype dtype, int rank,
                             const int64_t *dims) {
    if (dtype == TCONV_DTYPE_UNDEFINED)
        return TCONV_OK;
    tc_dim d[TC_MAX_RANK];
    memset(d, 0, sizeof d);
    for (int i = 0; i < rank; i++) {
        d[i].kind = dims[i] >= 0 ? TCONV_DIM_STATIC : TCONV_DIM_UNKNOWN;
        d[i].value = dims[i] >= 0 ? dims[i] : 0;
    }
    tconv_status st = tc_value_set_tensor_type(value, dtype, rank, d, e->err);
    return st == TCONV_OK ? tc_graph_add_value_info(e->graph, value, NULL, e->err) : st;
}
