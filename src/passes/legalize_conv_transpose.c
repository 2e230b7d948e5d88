/* legalize-conv-transpose (docs/semantics.md, the rewrite): every ConvTranspose that the policy
 * selects becomes
 *
 *   T = ConvTranspose(X, W[, B])   pads 0, no auto_pad/output_shape/output_padding: length F
 *   U = Slice(T)                   only the axes that crop: [max(pb,0), F - max(pe-op,0))
 *   V = Pad(U, 0)                  only where the result reaches past F: max(-pb,0), max(op-pe,0)
 *   Y = Add(V, B as [C,1,...,1])   only when a Pad was emitted: bias moves after the Pad
 *
 * Slice ends are negative offsets from the end, so SAME and explicit pads need no static size.
 * The emitted forms follow the model's opset (Slice-1 attributes vs Slice-10 inputs, Pad-1/2
 * attributes vs Pad-11 inputs, Unsqueeze-1 vs -13, Add-6 legacy broadcast). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/name_map.h"
#include "ir/check.h"
#include "passes/conv_transpose_match.h"
#include "passes/target_lower.h"

/* The int64 constants (Slice starts/ends/axes, Pad pads, Unsqueeze axes) earlier rewrites added
 * to a graph, by content: every ConvTranspose with the same crop reads the same initializers,
 * named after the first one. A graph of many alike layers would otherwise gain three tensors
 * and three names per rewrite. */
typedef struct shared_constants {
    tc_name_map by_content; /* "suffix:v0,v1,..." (in the model arena) -> tconv_value * */
} shared_constants;

/* Nodes one rewrite may emit: 4 for constant crops, about 40 for a crop computed at run time. */
#define MAX_EMITTED 64

typedef struct rewrite_plan {
    int rank; /* spatial axes */
    int64_t crop_begin[TC_MAX_SPATIAL];
    int64_t crop_end[TC_MAX_SPATIAL]; /* elements cut from the end of F */
    int64_t extend_begin[TC_MAX_SPATIAL];
    int64_t extend_end[TC_MAX_SPATIAL];
    bool crops, extends, moves_bias;
} rewrite_plan;

typedef struct rewriter {
    tconv_model *model;
    tconv_graph *graph;
    tconv_node *node;
    const tc_conv_transpose_match *match;
    rewrite_plan plan;
    int64_t opset;
    const char *base; /* readable prefix of new names: the node name, or its output's */
    tconv_node *last; /* new nodes go after this one */
    tconv_node *emitted[MAX_EMITTED];
    size_t n_emitted;
    tconv_value *declared[6]; /* new values this rewrite gave a value_info entry */
    size_t n_declared;
    shared_constants *shared;
    tc_error *err;
} rewriter;

static void plan_rewrite(const tc_conv_transpose_match *m, bool has_bias, rewrite_plan *p) {
    memset(p, 0, sizeof *p);
    const tc_conv_transpose_geometry *g = &m->geometry;
    p->rank = g->spatial_rank;
    for (int i = 0; i < p->rank; i++) {
        int64_t pb = g->pad_begin[i], pe = g->pad_end[i], op = g->output_padding[i];
        p->crop_begin[i] = pb > 0 ? pb : 0;
        p->crop_end[i] = pe - op > 0 ? pe - op : 0;
        p->extend_begin[i] = pb < 0 ? -pb : 0;
        p->extend_end[i] = op - pe > 0 ? op - pe : 0;
        int64_t full = g->full[i], out = g->out[i];
        if (full >= 0 && out >= 0 && pb > full) {
            /* the window [pb, pb + out) starts past F (output_padding beyond a short F): keep
             * nothing of F, every output position is padding */
            p->crop_begin[i] = full;
            p->crop_end[i] = 0;
            p->extend_begin[i] = 0;
            p->extend_end[i] = out;
        }
        p->crops |= p->crop_begin[i] > 0 || p->crop_end[i] > 0;
        p->extends |= p->extend_begin[i] > 0 || p->extend_end[i] > 0;
    }
    p->moves_bias = p->extends && has_bias;
}

/* ---------------------------------------------------------------- building blocks */

static tconv_status new_value(rewriter *rw, const char *suffix, tconv_value **out) {
    char *base = tc_arena_sprintf(rw->model->arena, "%s/%s", rw->base, suffix);
    if (!base)
        return tc_error_nomem(rw->err, "a value name");
    return tc_graph_add_unique_value(rw->graph, base, out, rw->err);
}

/* A node named <base>/<suffix>, linked after the previous new node. */
static tconv_status new_node(rewriter *rw, const char *op_type, const char *suffix,
                             tconv_node **out) {
    if (rw->n_emitted == MAX_EMITTED)
        return tc_error_set(rw->err, TCONV_ERR_LIMIT, "internal: rewrite emits too many nodes");
    char *base = tc_arena_sprintf(rw->model->arena, "%s/%s", rw->base, suffix);
    const char *name = base ? tc_model_unique_node_name(rw->model, base) : NULL;
    if (!name)
        return tc_error_nomem(rw->err, "a node name");
    tconv_status st = tc_node_create(rw->graph, op_type, NULL, name, out, rw->err);
    if (st != TCONV_OK)
        return st;
    tc_graph_insert_after(rw->graph, rw->last, *out);
    rw->last = *out;
    rw->emitted[rw->n_emitted++] = *out;
    return TCONV_OK;
}

/* "suffix:v0,v1,...": what identifies a shared constant (at most 2 * TC_MAX_RANK values). */
static void constant_key(const char *suffix, const int64_t *values, size_t count, char *key,
                         size_t size) {
    size_t used = (size_t)snprintf(key, size, "%s:", suffix);
    for (size_t i = 0; i < count && used < size; i++)
        used +=
            (size_t)snprintf(key + used, size - used, "%s%lld", i ? "," : "", (long long)values[i]);
}

/* A constant int64 vector as an initializer of the node's graph, shared with earlier rewrites
 * that needed the same one. IR < 4 requires every initializer to be a graph input as well. */
static tconv_status add_int64_initializer(rewriter *rw, const char *suffix, const int64_t *values,
                                          size_t count, tconv_value **out) {
    char key[64 + 2 * TC_MAX_RANK * 21];
    constant_key(suffix, values, count, key, sizeof key);
    tconv_value *value = tc_name_map_get(&rw->shared->by_content, key);
    if (value) {
        *out = value;
        return TCONV_OK;
    }
    tconv_status st = new_value(rw, suffix, &value);
    if (st != TCONV_OK)
        return st;
    int64_t dims[1] = {(int64_t)count};
    tconv_tensor *tensor;
    st = tc_tensor_create(rw->model, value->name, TCONV_DTYPE_INT64, 1, dims, values,
                          count * sizeof(int64_t), &tensor, rw->err);
    if (st == TCONV_OK)
        st = tc_graph_add_initializer(rw->graph, tensor, rw->err);
    if (st == TCONV_OK && rw->model->has_ir_version && rw->model->ir_version < 4)
        st = tc_graph_add_input(rw->graph, value, NULL, rw->err);
    const char *stored = st == TCONV_OK ? tc_arena_strdup(rw->model->arena, key) : NULL;
    if (st == TCONV_OK && (!stored || !tc_name_map_put(&rw->shared->by_content, stored, value)))
        st = tc_error_nomem(rw->err, "the shared constants");
    *out = value;
    return st;
}

static bool was_declared(const rewriter *rw, const tconv_value *value) {
    for (size_t i = 0; i < rw->n_declared; i++) {
        if (rw->declared[i] == value)
            return true;
    }
    return false;
}

/* Declares the shape of a new intermediate value where it is known, so the saved model carries
 * it: N from X, C from W, spatial sizes from the plan (-1 stays unknown). */
static tconv_status declare_type(rewriter *rw, tconv_value *value, const int64_t *spatial) {
    const tc_conv_transpose_match *m = rw->match;
    const tconv_value *y = rw->node->n_outputs ? rw->node->outputs[0] : NULL;
    const tconv_value *x = rw->node->inputs[0];
    tconv_dtype dtype = y && y->type.kind == TCONV_TYPE_TENSOR ? y->type.dtype
                        : x->type.kind == TCONV_TYPE_TENSOR    ? x->type.dtype
                                                               : TCONV_DTYPE_UNDEFINED;
    if (dtype == TCONV_DTYPE_UNDEFINED)
        return TCONV_OK;
    int rank = m->attrs.spatial_rank + 2;
    tc_dim dims[TC_MAX_RANK];
    memset(dims, 0, sizeof dims);
    if (x->type.kind == TCONV_TYPE_TENSOR && x->type.rank == rank)
        dims[0] = x->type.dims[0]; /* batch, static or symbolic */
    dims[0].origin = NULL;
    int64_t sizes[TC_MAX_RANK];
    sizes[1] = m->geometry.c_out;
    for (int i = 0; i < m->attrs.spatial_rank; i++)
        sizes[2 + i] = spatial[i];
    for (int i = 1; i < rank; i++) {
        dims[i].kind = sizes[i] >= 0 ? TCONV_DIM_STATIC : TCONV_DIM_UNKNOWN;
        dims[i].value = sizes[i] >= 0 ? sizes[i] : 0;
    }
    tconv_status st = tc_value_set_tensor_type(value, dtype, rank, dims, rw->err);
    /* value is new (no entry yet): no search of the graph's value_info, which would make the
     * pass quadratic in graph size */
    if (st == TCONV_OK && !was_declared(rw, value) &&
        rw->n_declared < sizeof rw->declared / sizeof rw->declared[0]) {
        st = tc_graph_add_value_info(rw->graph, value, NULL, rw->err);
        if (st == TCONV_OK)
            rw->declared[rw->n_declared++] = value;
    }
    return st;
}

/* ---------------------------------------------------------------- the four steps */

static const char *const PADDING_ATTRS[] = {"auto_pad", "pads", "output_shape", "output_padding"};

/* The original node becomes the VALID ConvTranspose: same node (its doc_string and metadata
 * stay), renamed <base>/valid, padding attributes removed, writing a new value. */
static tconv_status make_valid_conv_transpose(rewriter *rw, tconv_value **t_out) {
    tconv_node *node = rw->node;
    char *base = tc_arena_sprintf(rw->model->arena, "%s/valid", rw->base);
    const char *name = base ? tc_model_unique_node_name(rw->model, base) : NULL;
    if (!name)
        return tc_error_nomem(rw->err, "a node name");
    tconv_status st = tc_node_set_name(node, name, rw->err);
    if (st != TCONV_OK)
        return st;
    for (size_t i = 0; i < sizeof PADDING_ATTRS / sizeof PADDING_ATTRS[0]; i++)
        tc_node_remove_attr(node, PADDING_ATTRS[i]);
    if (rw->plan.moves_bias)
        tc_node_truncate_inputs(node, 2);
    st = new_value(rw, "valid_output", t_out);
    if (st == TCONV_OK)
        st = tc_node_set_output(node, 0, *t_out, rw->err);
    if (st == TCONV_OK)
        st = declare_type(rw, *t_out, rw->match->geometry.full);
    rw->emitted[rw->n_emitted++] = node;
    return st;
}

static tconv_status emit_crop(rewriter *rw, tconv_value *in, tconv_value **out) {
    const rewrite_plan *p = &rw->plan;
    int64_t starts[TC_MAX_SPATIAL], ends[TC_MAX_SPATIAL], axes[TC_MAX_SPATIAL];
    int64_t cropped[TC_MAX_SPATIAL];
    size_t n = 0;
    for (int i = 0; i < p->rank; i++) {
        int64_t full = rw->match->geometry.full[i];
        cropped[i] = full >= 0 ? full - p->crop_begin[i] - p->crop_end[i] : -1;
        if (p->crop_begin[i] == 0 && p->crop_end[i] == 0)
            continue;
        starts[n] = p->crop_begin[i];
        ends[n] = p->crop_end[i] > 0 ? -p->crop_end[i] : INT64_MAX;
        axes[n] = 2 + i;
        n++;
    }
    tconv_node *slice;
    tconv_status st = new_node(rw, "Slice", "crop", &slice);
    if (st == TCONV_OK)
        st = tc_node_add_input(slice, in, rw->err);
    if (st == TCONV_OK && rw->opset < 10) {
        if ((st = tc_node_set_attr_ints(slice, "starts", starts, n, rw->err)) == TCONV_OK &&
            (st = tc_node_set_attr_ints(slice, "ends", ends, n, rw->err)) == TCONV_OK)
            st = tc_node_set_attr_ints(slice, "axes", axes, n, rw->err);
    } else if (st == TCONV_OK) {
        tconv_value *starts_v, *ends_v, *axes_v;
        if ((st = add_int64_initializer(rw, "crop_starts", starts, n, &starts_v)) == TCONV_OK &&
            (st = add_int64_initializer(rw, "crop_ends", ends, n, &ends_v)) == TCONV_OK &&
            (st = add_int64_initializer(rw, "crop_axes", axes, n, &axes_v)) == TCONV_OK &&
            (st = tc_node_add_input(slice, starts_v, rw->err)) == TCONV_OK &&
            (st = tc_node_add_input(slice, ends_v, rw->err)) == TCONV_OK)
            st = tc_node_add_input(slice, axes_v, rw->err);
    }
    if (st == TCONV_OK)
        st = new_value(rw, "crop_output", out);
    if (st == TCONV_OK)
        st = tc_node_add_output(slice, *out, rw->err);
    if (st == TCONV_OK)
        st = declare_type(rw, *out, cropped);
    return st;
}

static tconv_status emit_extend(rewriter *rw, tconv_value *in, tconv_value **out) {
    const rewrite_plan *p = &rw->plan;
    int full_rank = p->rank + 2;
    int64_t pads[2 * TC_MAX_RANK] = {0};
    for (int i = 0; i < p->rank; i++) {
        pads[2 + i] = p->extend_begin[i];
        pads[full_rank + 2 + i] = p->extend_end[i];
    }
    tconv_node *pad;
    tconv_status st = new_node(rw, "Pad", "extend", &pad);
    if (st == TCONV_OK)
        st = tc_node_add_input(pad, in, rw->err);
    if (st == TCONV_OK && rw->opset < 11) {
        /* Pad-1 called the attribute "paddings"; Pad-2 renamed it "pads". */
        const char *attr = rw->opset < 2 ? "paddings" : "pads";
        st = tc_node_set_attr_ints(pad, attr, pads, (size_t)(2 * full_rank), rw->err);
    } else if (st == TCONV_OK) {
        tconv_value *pads_v;
        st = add_int64_initializer(rw, "extend_pads", pads, (size_t)(2 * full_rank), &pads_v);
        if (st == TCONV_OK)
            st = tc_node_add_input(pad, pads_v, rw->err);
    }
    if (st == TCONV_OK)
        st = new_value(rw, "extend_output", out);
    if (st == TCONV_OK)
        st = tc_node_add_output(pad, *out, rw->err);
    if (st == TCONV_OK)
        st = declare_type(rw, *out, rw->match->geometry.out);
    return st;
}

/* B as [C, 1, ..., 1] so that it broadcasts over N and the spatial axes: a reshaped copy when B
 * is an initializer, else an Unsqueeze node. */
static tconv_status bias_for_broadcast(rewriter *rw, tconv_value *bias, tconv_value **out) {
    int rank = rw->plan.rank;
    int64_t axes[TC_MAX_SPATIAL];
    for (int i = 0; i < rank; i++)
        axes[i] = 1 + i;
    tconv_tensor *init = bias->initializer;
    if (init && init->rank == 1) {
        const void *data;
        size_t nbytes;
        tconv_status st = tc_tensor_data(init, &data, &nbytes, rw->err);
        int64_t dims[TC_MAX_SPATIAL + 1];
        dims[0] = init->dims[0];
        for (int i = 0; i < rank; i++)
            dims[1 + i] = 1;
        tconv_tensor *tensor;
        if (st == TCONV_OK)
            st = new_value(rw, "bias_reshaped", out);
        if (st == TCONV_OK)
            st = tc_tensor_create(rw->model, (*out)->name, init->dtype, rank + 1, dims, data,
                                  nbytes, &tensor, rw->err);
        if (st == TCONV_OK)
            st = tc_graph_add_initializer(rw->graph, tensor, rw->err);
        if (st == TCONV_OK && rw->model->has_ir_version && rw->model->ir_version < 4)
            st = tc_graph_add_input(rw->graph, *out, NULL, rw->err);
        return st;
    }
    tconv_node *unsqueeze;
    tconv_status st = new_node(rw, "Unsqueeze", "bias_unsqueeze", &unsqueeze);
    if (st == TCONV_OK)
        st = tc_node_add_input(unsqueeze, bias, rw->err);
    if (st == TCONV_OK && rw->opset < 13) {
        st = tc_node_set_attr_ints(unsqueeze, "axes", axes, (size_t)rank, rw->err);
    } else if (st == TCONV_OK) {
        tconv_value *axes_v;
        st = add_int64_initializer(rw, "bias_axes", axes, (size_t)rank, &axes_v);
        if (st == TCONV_OK)
            st = tc_node_add_input(unsqueeze, axes_v, rw->err);
    }
    if (st == TCONV_OK)
        st = new_value(rw, "bias_unsqueezed", out);
    if (st == TCONV_OK)
        st = tc_node_add_output(unsqueeze, *out, rw->err);
    return st;
}

static tconv_status emit_bias(rewriter *rw, tconv_value *in, tconv_value *bias, tconv_value **out) {
    tconv_value *broadcast_bias = bias;
    tconv_status st = TCONV_OK;
    bool legacy_broadcast = rw->opset < 7; /* Add-6 and older broadcast only when told to */
    if (!legacy_broadcast)
        st = bias_for_broadcast(rw, bias, &broadcast_bias);
    tconv_node *add;
    if (st == TCONV_OK)
        st = new_node(rw, "Add", "bias", &add);
    if (st == TCONV_OK && legacy_broadcast) {
        if ((st = tc_node_set_attr_int(add, "broadcast", 1, rw->err)) == TCONV_OK)
            st = tc_node_set_attr_int(add, "axis", 1, rw->err);
    }
    if (st == TCONV_OK)
        st = tc_node_add_input(add, in, rw->err);
    if (st == TCONV_OK)
        st = tc_node_add_input(add, broadcast_bias, rw->err);
    if (st == TCONV_OK)
        st = new_value(rw, "bias_output", out);
    if (st == TCONV_OK)
        st = tc_node_add_output(add, *out, rw->err);
    return st;
}

/* The last value of the chain takes over the original output, so consumers and graph outputs
 * stay untouched and the original name ends the chain. */
static tconv_status hand_over_output(rewriter *rw, tconv_value *last, tconv_value *y) {
    tconv_node *producer = last->producer;
    if (TC_NEVER(!producer)) /* the chain always has at least the VALID node */
        return tc_error_set(rw->err, TCONV_ERR_INVALID, "internal: chain value unproduced");
    tconv_status st = tc_node_set_output(producer, last->producer_index, y, rw->err);
    /* The intermediate name is gone; drop its value_info entry, one of the last few added
     * (tc_graph_remove_value_info searches from the end: a rewrite costs O(1), not O(graph)). */
    if (st == TCONV_OK && was_declared(rw, last))
        tc_graph_remove_value_info(rw->graph, last);
    return st;
}

static tconv_status rewrite_node(rewriter *rw) {
    tconv_node *node = rw->node;
    tconv_value *y = node->outputs[0];
    tconv_value *bias = node->n_inputs > 2 ? node->inputs[2] : NULL;
    tconv_value *current;
    tconv_status st = make_valid_conv_transpose(rw, &current);
    if (st == TCONV_OK && rw->plan.crops)
        st = emit_crop(rw, current, &current);
    if (st == TCONV_OK && rw->plan.extends)
        st = emit_extend(rw, current, &current);
    if (st == TCONV_OK && rw->plan.moves_bias)
        st = emit_bias(rw, current, bias, &current);
    if (st == TCONV_OK)
        st = hand_over_output(rw, current, y);
    return st;
}

/* ---------------------------------------------------------------- output_shape at run time */

/* With output_shape and a dynamic input size the crop depends on that size, so it is computed
 * in the graph (int64 vectors over the spatial axes, from Shape(X)):
 *
 *   F = s*x + ke - s,  u = F + op - O (the total),  h = floor(u/2),  b = h or u - h (ONNX)
 *   Y = Pad(Slice(T, starts = max(b,0), ends = b + O), pads = max(-b,0) | max(b + O - max(F,b), 0))
 *
 * Output o is T[o + b]: the Slice keeps [b, b + O) clamped to [0, F) (b + O > 0 always), the
 * Pad adds the rest. Only Abs, Add, Sub, Mul and Div appear, on non-negative dividends
 * (max(v,0) = (v + |v|) / 2; floor(u/2) = (u + 2*O)/2 - O, as u >= 1 - O), so truncating and
 * flooring division agree and every opset from 11 (Slice-10, Pad-11 inputs) has them. */
typedef struct dyn_ctx {
    rewriter *rw;
    size_t r; /* spatial axes */
} dyn_ctx;

static tconv_status dyn_const(dyn_ctx *d, const char *suffix, const int64_t *values, size_t n,
                              tconv_value **out) {
    return add_int64_initializer(d->rw, suffix, values, n, out);
}

/* out = op_type(a[, b]), a new node and value named after `suffix`. */
static tconv_status dyn_op(dyn_ctx *d, const char *op_type, const char *suffix, tconv_value *a,
                           tconv_value *b, tconv_value **out) {
    tconv_node *node;
    tconv_status st = new_node(d->rw, op_type, suffix, &node);
    if (st == TCONV_OK)
        st = tc_node_add_input(node, a, d->rw->err);
    if (st == TCONV_OK && b)
        st = tc_node_add_input(node, b, d->rw->err);
    if (st == TCONV_OK)
        st = new_value(d->rw, suffix, out);
    if (st == TCONV_OK)
        st = tc_node_add_output(node, *out, d->rw->err);
    return st;
}

/* max(v, 0) = (v + |v|) / 2 */
static tconv_status dyn_relu(dyn_ctx *d, const char *suffix, tconv_value *v, tconv_value *two,
                             tconv_value **out) {
    tconv_value *a, *sum;
    tconv_status st = dyn_op(d, "Abs", "abs", v, NULL, &a);
    if (st == TCONV_OK)
        st = dyn_op(d, "Add", "abs_sum", v, a, &sum);
    if (st == TCONV_OK)
        st = dyn_op(d, "Div", suffix, sum, two, out);
    return st;
}

/* The per-axis constants of the arithmetic. */
typedef struct dyn_consts {
    tconv_value *axes, *strides, *ke_minus_s, *op_minus_o, *two_o, *o, *o_plus_1, *two, *zero;
    tconv_value *c_plus_1; /* op - s + 1 (onnxruntime's window of negative totals) */
} dyn_consts;

static tconv_status dyn_make_consts(dyn_ctx *d, dyn_consts *c) {
    const tc_conv_transpose_geometry *g = &d->rw->match->geometry;
    const int64_t *os = d->rw->match->attrs.output_shape;
    int64_t v[10][TC_MAX_SPATIAL];
    for (size_t i = 0; i < d->r; i++) {
        int64_t ke = (g->kernel[i] - 1) * g->dilations[i] + 1, s = g->strides[i];
        int64_t op = g->output_padding[i];
        v[0][i] = 2 + (int64_t)i;
        v[1][i] = s;
        v[2][i] = ke - s;
        v[3][i] = op - os[i];
        v[4][i] = 2 * os[i];
        v[5][i] = os[i];
        v[6][i] = os[i] + 1;
        v[7][i] = 2;
        v[8][i] = 0;
        v[9][i] = op - s + 1;
    }
    static const char *const names[10] = {"crop_axes", "strides", "ke_minus_s", "op_minus_o",
                                          "two_o",     "o",       "o_plus_1",   "two",
                                          "zero",      "c_plus_1"};
    tconv_value **slots[10] = {&c->axes,  &c->strides, &c->ke_minus_s, &c->op_minus_o,
                               &c->two_o, &c->o,       &c->o_plus_1,   &c->two,
                               &c->zero,  &c->c_plus_1};
    tconv_status st = TCONV_OK;
    for (int k = 0; k < 10 && st == TCONV_OK; k++)
        st = dyn_const(d, names[k], v[k], d->r, slots[k]);
    return st;
}

/* I(z >= 1) for 0 <= z <= O: (z + O) / (O + 1). */
static tconv_status dyn_positive(dyn_ctx *d, const dyn_consts *c, tconv_value *z,
                                 tconv_value **out) {
    tconv_value *sum;
    tconv_status st = dyn_op(d, "Add", "step_sum", z, c->o, &sum);
    if (st == TCONV_OK)
        st = dyn_op(d, "Div", "step", sum, c->o_plus_1, out);
    return st;
}

/* 1 when any axis is refused (refused: 0/1 per axis), as a 1-element vector: the sum over the
 * axes (Gather + Add), then I(sum >= 1) = (sum + r - 1) / r. */
static tconv_status dyn_any_axis(dyn_ctx *d, tconv_value *refused, tconv_value **out) {
    tconv_value *sum = NULL, *bias, *divisor, *shifted;
    tconv_status st = TCONV_OK;
    for (size_t i = 0; i < d->r && st == TCONV_OK; i++) {
        int64_t index = (int64_t)i;
        tconv_value *idx, *one;
        if ((st = dyn_const(d, "axis_index", &index, 1, &idx)) ||
            (st = dyn_op(d, "Gather", "axis_refused", refused, idx, &one)))
            break;
        if (sum)
            st = dyn_op(d, "Add", "refused_axes", sum, one, &sum);
        else
            sum = one;
    }
    int64_t r_minus_1 = (int64_t)d->r - 1, r = (int64_t)d->r;
    if (st || (st = dyn_const(d, "rank_minus_1", &r_minus_1, 1, &bias)) ||
        (st = dyn_const(d, "rank", &r, 1, &divisor)) ||
        (st = dyn_op(d, "Add", "refused_shifted", sum, bias, &shifted)))
        return st;
    return dyn_op(d, "Div", "node_refused", shifted, divisor, out);
}

/* onnxruntime 1.30 (docs/semantics.md) clamps a negative total to 0 (b = 0) where it runs the
 * node: on an axis with op - s < u < 0; with u <= op - s on any axis it refuses the whole node
 * and tconv follows ONNX. So b -= b * I(op-s < u <= -1) * (1 - I(some axis has u <= op-s)), the
 * per-axis indicators being I(-u >= 1) and I(op - s + 1 - u >= 1) (arguments at most O). */
static tconv_status dyn_ort_clamp(dyn_ctx *d, const dyn_consts *c, tconv_value *u,
                                  tconv_value **b) {
    tconv_value *neg_u, *z1, *i1, *shifted, *z2, *i2, *mid, *prod;
    tconv_status st;
    if ((st = dyn_op(d, "Sub", "neg_total", c->zero, u, &neg_u)) ||
        (st = dyn_relu(d, "below_zero", neg_u, c->two, &z1)) ||
        (st = dyn_positive(d, c, z1, &i1)) ||
        (st = dyn_op(d, "Sub", "below_window", c->c_plus_1, u, &shifted)) ||
        (st = dyn_relu(d, "below_window_pos", shifted, c->two, &z2)) ||
        (st = dyn_positive(d, c, z2, &i2)) || (st = dyn_op(d, "Sub", "in_window", i1, i2, &mid)))
        return st;
    if (d->r > 1) { /* one axis alone: its own refusal already zeroes mid */
        tconv_value *refused, *one, *kept;
        int64_t one_value = 1;
        if ((st = dyn_any_axis(d, i2, &refused)) ||
            (st = dyn_const(d, "one", &one_value, 1, &one)) ||
            (st = dyn_op(d, "Sub", "node_runs", one, refused, &kept)) ||
            (st = dyn_op(d, "Mul", "in_window_runs", mid, kept, &mid)))
            return st;
    }
    if ((st = dyn_op(d, "Mul", "window_begin", *b, mid, &prod)))
        return st;
    return dyn_op(d, "Sub", "begin_clamped", *b, prod, b);
}

/* b, the begin pad of the convention (ONNX, or onnxruntime's clamp), from the total u. */
static tconv_status dyn_begin(dyn_ctx *d, const dyn_consts *c, tconv_value *u,
                              tconv_convention convention, tconv_value **b) {
    const tc_conv_transpose_attrs *a = &d->rw->match->attrs;
    bool upper = a->auto_pad == TCONV_AUTO_PAD_SAME_UPPER;
    tconv_status st = TCONV_OK;
    if (convention == TCONV_CONVENTION_ORT_LEGACY) { /* total clamped to 0, odd extra swapped */
        st = dyn_relu(d, "total_clamped", u, c->two, &u);
        upper = !upper;
    }
    tconv_value *shifted, *halved, *h;
    if (st == TCONV_OK)
        st = dyn_op(d, "Add", "total_shifted", u, c->two_o, &shifted);
    if (st == TCONV_OK)
        st = dyn_op(d, "Div", "total_halved", shifted, c->two, &halved);
    if (st == TCONV_OK)
        st = dyn_op(d, "Sub", "total_floor_half", halved, c->o, &h);
    if (st == TCONV_OK && upper)
        *b = h;
    else if (st == TCONV_OK)
        st = dyn_op(d, "Sub", "pad_begin", u, h, b);
    if (st == TCONV_OK && convention == TCONV_CONVENTION_ORT)
        st = dyn_ort_clamp(d, c, u, b);
    return st;
}

/* Slice(T, max(b,0), b + O) then Pad(max(-b,0) | max(b + O - max(F,b), 0)). */
static tconv_status dyn_crop_and_extend(dyn_ctx *d, const dyn_consts *c, tconv_value *t,
                                        tconv_value *f, tconv_value *b, tconv_value **out) {
    tconv_value *starts, *ends, *neg_b, *ext_begin, *diff, *abs_diff, *sum, *sum2, *max_fb;
    tconv_value *room, *ext_end, *zeros2, *pads, *cropped;
    tconv_status st;
    int64_t zeros[2] = {0, 0};
    if ((st = dyn_relu(d, "crop_starts", b, c->two, &starts)) ||
        (st = dyn_op(d, "Add", "crop_ends", b, c->o, &ends)) ||
        (st = dyn_op(d, "Sub", "neg_begin", c->zero, b, &neg_b)) ||
        (st = dyn_relu(d, "extend_begin", neg_b, c->two, &ext_begin)) ||
        (st = dyn_op(d, "Sub", "full_minus_begin", f, b, &diff)) ||
        (st = dyn_op(d, "Abs", "abs", diff, NULL, &abs_diff)) ||
        (st = dyn_op(d, "Add", "full_plus_begin", f, b, &sum)) ||
        (st = dyn_op(d, "Add", "max_sum", sum, abs_diff, &sum2)) ||
        (st = dyn_op(d, "Div", "max_full_begin", sum2, c->two, &max_fb)) ||
        (st = dyn_op(d, "Sub", "end_room", ends, max_fb, &room)) ||
        (st = dyn_relu(d, "extend_end", room, c->two, &ext_end)) ||
        (st = dyn_const(d, "zeros_nc", zeros, 2, &zeros2)))
        return st;
    tconv_node *concat, *slice, *pad;
    if ((st = new_node(d->rw, "Concat", "extend_pads", &concat)) ||
        (st = tc_node_set_attr_int(concat, "axis", 0, d->rw->err)))
        return st;
    tconv_value *parts[4] = {zeros2, ext_begin, zeros2, ext_end};
    for (int k = 0; k < 4 && st == TCONV_OK; k++)
        st = tc_node_add_input(concat, parts[k], d->rw->err);
    if (st || (st = new_value(d->rw, "extend_pads", &pads)) ||
        (st = tc_node_add_output(concat, pads, d->rw->err)) ||
        (st = new_node(d->rw, "Slice", "crop", &slice)))
        return st;
    tconv_value *slice_in[4] = {t, starts, ends, c->axes};
    for (int k = 0; k < 4 && st == TCONV_OK; k++)
        st = tc_node_add_input(slice, slice_in[k], d->rw->err);
    int64_t unknown[TC_MAX_SPATIAL];
    for (size_t i = 0; i < d->r; i++)
        unknown[i] = -1;
    if (st || (st = new_value(d->rw, "crop_output", &cropped)) ||
        (st = tc_node_add_output(slice, cropped, d->rw->err)) ||
        (st = declare_type(d->rw, cropped, unknown)) ||
        (st = new_node(d->rw, "Pad", "extend", &pad)) ||
        (st = tc_node_add_input(pad, cropped, d->rw->err)) ||
        (st = tc_node_add_input(pad, pads, d->rw->err)) ||
        (st = new_value(d->rw, "extend_output", out)) ||
        (st = tc_node_add_output(pad, *out, d->rw->err)))
        return st;
    return declare_type(d->rw, *out, d->rw->match->geometry.out);
}

/* The rewrite of a node with output_shape whose input size is dynamic (opset >= 11). */
static tconv_status rewrite_node_dynamic(rewriter *rw, tconv_convention convention) {
    tconv_node *node = rw->node;
    tconv_value *x = node->inputs[0], *y = node->outputs[0];
    tconv_value *bias = node->n_inputs > 2 ? node->inputs[2] : NULL;
    dyn_ctx d = {rw, (size_t)rw->match->attrs.spatial_rank};
    dyn_consts c;
    tconv_value *t, *shape, *xs, *scaled, *f, *u, *b, *current;
    tconv_status st;
    if ((st = make_valid_conv_transpose(rw, &t)) || (st = dyn_make_consts(&d, &c)) ||
        (st = dyn_op(&d, "Shape", "input_shape", x, NULL, &shape)) ||
        (st = dyn_op(&d, "Gather", "input_size", shape, c.axes, &xs)) ||
        (st = dyn_op(&d, "Mul", "input_scaled", xs, c.strides, &scaled)) ||
        (st = dyn_op(&d, "Add", "full_size", scaled, c.ke_minus_s, &f)) ||
        (st = dyn_op(&d, "Add", "total", f, c.op_minus_o, &u)) ||
        (st = dyn_begin(&d, &c, u, convention, &b)) ||
        (st = dyn_crop_and_extend(&d, &c, t, f, b, &current)))
        return st;
    if (bias)
        st = emit_bias(rw, current, bias, &current);
    if (st == TCONV_OK)
        st = hand_over_output(rw, current, y);
    return st;
}

/* A crop computed at run time needs Slice-10 and Pad-11: an error below opset 11. */
static tconv_status check_dynamic_opset(int64_t opset, const char *where, tc_error *err) {
    if (opset >= 11)
        return TCONV_OK;
    return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                        "%s: output_shape with a dynamic input size needs the crop computed at "
                        "run time, which needs opset 11 or later (Slice-10 and Pad-11 take "
                        "starts, ends and pads as inputs); the model has opset %lld",
                        where, (long long)opset);
}

/* ---------------------------------------------------------------- the pass */

/* Whether, on some spatial axis of unknown input size x, pads known, the output
 * s*(x-1) + ke + op - pb - pe is 0 or negative for small x >= 1: ConvTranspose fails there (as
 * shape inference does for such a static size), while a VALID ConvTranspose and a Slice would
 * give an empty tensor (issue 27). `below`: the smallest input size that gives an output. */
static bool empty_at_small_sizes(const tc_conv_transpose_geometry *g, int *axis, int64_t *below) {
    if (!g->pads_known)
        return false; /* output_shape: the output size is fixed */
    for (int i = 0; i < g->spatial_rank; i++) {
        if (g->in[i] >= 0)
            continue; /* a static size: shape inference has checked it */
        /* in double: attributes may be near INT64_MAX (an estimate is enough past 2^53) */
        double ke = (double)(g->kernel[i] - 1) * (double)g->dilations[i] + 1;
        double at_one =
            ke + (double)g->output_padding[i] - (double)g->pad_begin[i] - (double)g->pad_end[i];
        if (at_one >= 1)
            continue;
        double x = 1 + ceil((1 - at_one) / (double)(g->strides[i] > 0 ? g->strides[i] : 1));
        *axis = i;
        *below = x < 9.2e18 ? (int64_t)x : INT64_MAX;
        return true;
    }
    return false;
}

typedef struct legalize_walk {
    const tc_pass_options *options;
    tc_error *err;
} legalize_walk;

static tconv_status legalize_node(tconv_node *node, size_t index, const legalize_walk *w,
                                  shared_constants *shared) {
    const tc_pass_options *options = w->options;
    tc_conv_transpose_match match;
    tconv_status st = tc_conv_transpose_match_node(node, options->convention, &match, w->err);
    if (st != TCONV_OK)
        return st;
    bool needed = options->target ? !tc_target_keeps_pads(options->target, &match)
                                  : tc_conv_transpose_needs_rewrite(&match, options->policy);
    if (!needed)
        return TCONV_OK;
    char where[256];
    int64_t opset = tc_model_opset(node->graph->model, "");
    if (!match.geometry.pads_known &&
        (st = check_dynamic_opset(opset, tc_node_describe_at(node, index, where, sizeof where),
                                  w->err)) != TCONV_OK)
        return st;
    int empty_axis;
    int64_t below;
    if (empty_at_small_sizes(&match.geometry, &empty_axis, &below)) {
        tc_diagnostics_add(options->diagnostics,
                           "%s: not rewritten: for input sizes below %lld on spatial axis %d its "
                           "output size is 0 or negative, where ConvTranspose fails and a "
                           "rewritten crop would return an empty tensor",
                           tc_node_describe_at(node, index, where, sizeof where), (long long)below,
                           empty_axis);
        return TCONV_OK;
    }
    (void)tc_conv_transpose_lint_node_at(node, index, options->convention, options->diagnostics,
                                         NULL);
    char *old_attributes = options->report ? tc_node_attributes_json(node) : NULL;
    const char *old_name = node->name && *node->name ? node->name : node->outputs[0]->name;
    char old_path[512];
    uint64_t old_id = node->id;
    tc_node_path(node, old_path, sizeof old_path);
    rewriter rw = {.model = node->graph->model,
                   .graph = node->graph,
                   .node = node,
                   .match = &match,
                   .opset = opset,
                   .base = old_name,
                   .last = node,
                   .shared = shared,
                   .err = w->err};
    bool has_bias = node->n_inputs > 2 && node->inputs[2];
    plan_rewrite(&match, has_bias, &rw.plan);
    if (match.geometry.pads_known) {
        st = rewrite_node(&rw);
    } else {
        rw.plan.moves_bias = has_bias; /* the Pad may extend at some sizes */
        st = rewrite_node_dynamic(&rw, match.geometry.convention_refusal ? TCONV_CONVENTION_ONNX
                                                                         : options->convention);
    }
    if (st == TCONV_OK && options->report)
        return tc_rewrite_report_add(options->report, old_path, old_id, old_attributes, rw.emitted,
                                     rw.n_emitted, w->err);
    free(old_attributes);
    return st;
}

static tconv_status legalize_graph(tconv_graph *graph, void *ctx) {
    const legalize_walk *w = ctx;
    shared_constants shared;
    tc_name_map_init(&shared.by_content);
    tconv_node *node = graph->first;
    size_t index = 0; /* node's position, counted as we go (for messages) */
    tconv_status st = TCONV_OK;
    while (node && st == TCONV_OK) {
        /* New nodes go right after `node`; continuing from its old successor skips them. */
        tconv_node *next = node->next;
        st = tc_node_for_each_subgraph(node, legalize_graph, ctx);
        if (st == TCONV_OK && tc_is_conv_transpose(node))
            st = legalize_node(node, index, w, &shared);
        for (tconv_node *n = node; n && n != next; n = n->next)
            index++;
        node = next;
    }
    tc_name_map_free(&shared.by_content);
    return st;
}

tconv_status tc_pass_legalize_conv_transpose(tconv_graph *graph, const tc_pass_options *options,
                                             tc_error *err) {
    legalize_walk w = {options, err};
    return legalize_graph(graph, &w);
}
