/* legalize-conv-transpose (DESIGN.md section 2): every ConvTranspose that the policy selects
 * becomes
 *
 *   T = ConvTranspose(X, W[, B])   pads 0, no auto_pad/output_shape/output_padding: length F
 *   U = Slice(T)                   only the axes that crop: [max(pb,0), F - max(pe-op,0))
 *   V = Pad(U, 0)                  only where the result reaches past F: max(-pb,0), max(op-pe,0)
 *   Y = Add(V, B as [C,1,...,1])   only when a Pad was emitted: bias moves after the Pad
 *
 * Slice ends are negative offsets from the end, so SAME and explicit pads need no static size.
 * The emitted forms follow the model's opset (Slice-1 attributes vs Slice-10 inputs, Pad-1/2
 * attributes vs Pad-11 inputs, Unsqueeze-1 vs -13, Add-6 legacy broadcast). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/name_map.h"
#include "passes/conv_transpose_match.h"

/* The int64 constants (Slice starts/ends/axes, Pad pads, Unsqueeze axes) earlier rewrites added
 * to a graph, by content: every ConvTranspose with the same crop reads the same initializers,
 * named after the first one. A graph of many alike layers would otherwise gain three tensors
 * and three names per rewrite. */
typedef struct shared_constants {
    tc_name_map by_content; /* "suffix:v0,v1,..." (in the model arena) -> tconv_value * */
} shared_constants;

typedef struct rewrite_plan {
    int rank; /* spatial axes */
    int64_t crop_begin[TCONV_MAX_SPATIAL];
    int64_t crop_end[TCONV_MAX_SPATIAL]; /* elements cut from the end of F */
    int64_t extend_begin[TCONV_MAX_SPATIAL];
    int64_t extend_end[TCONV_MAX_SPATIAL];
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
    tconv_node *emitted[6];
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

/* "suffix:v0,v1,...": what identifies a shared constant (at most 2 * TCONV_MAX_RANK values). */
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
    char key[64 + 2 * TCONV_MAX_RANK * 21];
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
    tc_dim dims[TCONV_MAX_RANK];
    memset(dims, 0, sizeof dims);
    if (x->type.kind == TCONV_TYPE_TENSOR && x->type.rank == rank)
        dims[0] = x->type.dims[0]; /* batch, static or symbolic */
    dims[0].origin = NULL;
    int64_t sizes[TCONV_MAX_RANK];
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
    node->name = name;
    for (size_t i = 0; i < sizeof PADDING_ATTRS / sizeof PADDING_ATTRS[0]; i++)
        tc_node_remove_attr(node, PADDING_ATTRS[i]);
    tconv_status st;
    if (rw->plan.moves_bias) {
        st = tc_node_set_input(node, 2, NULL, rw->err);
        if (st != TCONV_OK)
            return st;
        node->n_inputs = 2;
    }
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
    int64_t starts[TCONV_MAX_SPATIAL], ends[TCONV_MAX_SPATIAL], axes[TCONV_MAX_SPATIAL];
    int64_t cropped[TCONV_MAX_SPATIAL];
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
    int64_t pads[2 * TCONV_MAX_RANK] = {0};
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
    int64_t axes[TCONV_MAX_SPATIAL];
    for (int i = 0; i < rank; i++)
        axes[i] = 1 + i;
    tconv_tensor *init = bias->initializer;
    if (init && init->rank == 1) {
        const void *data;
        size_t nbytes;
        tconv_status st = tc_tensor_data(init, &data, &nbytes, rw->err);
        int64_t dims[TCONV_MAX_SPATIAL + 1];
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
    if (!producer) /* cannot happen: the chain always has at least the VALID node */
        return tc_error_set(rw->err, TCONV_ERR_INVALID, "internal: chain value unproduced");
    tconv_status st = tc_node_set_output(producer, last->producer_index, y, rw->err);
    if (st == TCONV_OK && was_declared(rw, last)) {
        /* The intermediate name is gone; drop its value_info entry, one of the last few added
         * (searched from the end, so a rewrite costs O(1), not O(graph)). */
        tc_value_info *vi = rw->graph->value_info;
        size_t n = rw->graph->n_value_info;
        for (size_t i = n; i-- > 0;) {
            if (vi[i].value == last) {
                memmove(vi + i, vi + i + 1, (n - i - 1) * sizeof *vi);
                rw->graph->n_value_info = n - 1;
                break;
            }
        }
    }
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

/* ---------------------------------------------------------------- the pass */

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
    if (!tc_conv_transpose_needs_rewrite(&match, options->policy))
        return TCONV_OK;
    char where[256];
    if (!match.geometry.pads_known)
        return tc_error_set(w->err, TCONV_ERR_UNSUPPORTED,
                            "%s: output_shape needs a static input size to place the crop, "
                            "but X's spatial size is dynamic (run shape-infer or give "
                            "static input dims)",
                            tc_node_describe_at(node, index, where, sizeof where));
    (void)tc_conv_transpose_lint_node_at(node, index, options->convention, options->diagnostics,
                                         NULL);
    char *old_attributes = options->report ? tc_node_attributes_json(node) : NULL;
    const char *old_name = node->name && *node->name ? node->name : node->outputs[0]->name;
    rewriter rw = {.model = node->graph->model,
                   .graph = node->graph,
                   .node = node,
                   .match = &match,
                   .opset = tc_model_opset(node->graph->model, ""),
                   .base = old_name,
                   .last = node,
                   .shared = shared,
                   .err = w->err};
    bool has_bias = node->n_inputs > 2 && node->inputs[2];
    plan_rewrite(&match, has_bias, &rw.plan);
    st = rewrite_node(&rw);
    if (st == TCONV_OK && options->report)
        return tc_rewrite_report_add(options->report, old_name, old_attributes, rw.emitted,
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
