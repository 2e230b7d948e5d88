/* shape-infer: static and symbolic shapes for the ops the runtime knows.
 *
 * Nodes are visited in order (the IR is topological), subgraphs before the node that holds them.
 * A rule (one op family a file, see shape_infer.h) says what it can tell about the outputs; the
 * driver merges that into the declared type of each output:
 *   - a declared static dim that inference computes differently is an error (never loosen what
 *     the model declares);
 *   - a declared symbolic or unknown dim that inference finds static is refined;
 *   - where inference cannot tell, the declared type stays as it is (and is not marked dirty).
 * Every intermediate value whose type changed gets a value_info entry, so the saved model carries
 * the shapes. Unknown ops and other domains leave their outputs alone. */
#include "passes/shape_infer.h"
#include "ir/shape_rules.h"
#include "ir/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- merging into declared types */

typedef struct merged_type {
    tconv_dtype dtype;
    int rank;
    tc_dim dims[TC_MAX_RANK];
} merged_type;

static tconv_status conflict(tc_si_ctx *ctx, const tconv_node *node, const tconv_value *value,
                             const char *what) {
    return tc_si_fail(ctx, node, "output '%s': %s", value->name, what);
}

static tconv_status merge_dtype(tc_si_ctx *ctx, const tconv_node *node, const tconv_value *value,
                                tconv_dtype inferred, merged_type *m) {
    const tc_type *t = tc_si_type(ctx, value);
    tconv_dtype declared = t->kind == TCONV_TYPE_TENSOR ? t->dtype : TCONV_DTYPE_UNDEFINED;
    if (declared != TCONV_DTYPE_UNDEFINED && inferred != TCONV_DTYPE_UNDEFINED &&
        declared != inferred) {
        char what[160];
        snprintf(what, sizeof what, "declared dtype %s but the inputs give %s",
                 tconv_dtype_name(declared), tconv_dtype_name(inferred));
        return conflict(ctx, node, value, what);
    }
    m->dtype = declared != TCONV_DTYPE_UNDEFINED ? declared : inferred;
    return TCONV_OK;
}

/* A model declares ConvTranspose's output sizes as ONNX defines them; under --convention ort
 * the node computes what onnxruntime 1.30 does, which is shorter where it clamps a negative
 * total (onnxruntime runs such a model and ignores the declaration; the lint shows both sizes).
 * There the inferred size replaces the declared one. */
static bool convention_resizes(const tc_si_ctx *ctx, const tconv_node *node) {
    return ctx->convention != TCONV_CONVENTION_ONNX && node->kind == TC_KIND_ConvTranspose;
}

/* Declared static wins (a different inferred static is an error, but see convention_resizes), then
 * inferred static, then a declared symbol, then an inferred symbol, then whatever was declared. The
 * declared dim's origin (denotation) is kept. */
static tconv_status merge_dim(tc_si_ctx *ctx, const tconv_node *node, const tconv_value *value,
                              int axis, const tc_dim *declared, const tc_dim *inferred,
                              tc_dim *out) {
    /* Some exporters write dim_value -1 for "dynamic": that declares nothing. */
    if (declared && declared->kind == TCONV_DIM_STATIC && declared->value >= 0) {
        if (inferred && inferred->kind == TCONV_DIM_STATIC && inferred->value != declared->value &&
            convention_resizes(ctx, node)) {
            *out = *inferred;
            out->origin = declared->origin;
            return TCONV_OK;
        }
        if (inferred && inferred->kind == TCONV_DIM_STATIC && inferred->value != declared->value) {
            char what[200];
            snprintf(what, sizeof what, "axis %d is declared %lld but inference gives %lld", axis,
                     (long long)declared->value, (long long)inferred->value);
            return conflict(ctx, node, value, what);
        }
        *out = *declared;
        return TCONV_OK;
    }
    bool inferred_static = inferred && inferred->kind == TCONV_DIM_STATIC;
    bool declared_symbol = declared && declared->kind == TCONV_DIM_SYMBOLIC;
    bool inferred_symbol = inferred && inferred->kind == TCONV_DIM_SYMBOLIC;
    if (inferred_static || (!declared_symbol && inferred_symbol)) {
        *out = *inferred;
        out->origin = declared ? declared->origin : NULL;
    } else {
        *out = declared ? *declared : tc_si_dim_unknown();
    }
    return TCONV_OK;
}

static tconv_status merge_shape(tc_si_ctx *ctx, const tconv_node *node, const tconv_value *value,
                                const tc_si_shape *inferred, merged_type *m) {
    const tc_type *t = tc_si_type(ctx, value);
    int declared_rank = t->kind == TCONV_TYPE_TENSOR ? t->rank : -1;
    if (declared_rank >= 0 && inferred->rank >= 0 && declared_rank != inferred->rank) {
        char what[160];
        snprintf(what, sizeof what, "declared with rank %d but inference gives rank %d",
                 declared_rank, inferred->rank);
        return conflict(ctx, node, value, what);
    }
    m->rank = declared_rank >= 0 ? declared_rank : inferred->rank;
    for (int i = 0; i < m->rank; i++) {
        tconv_status st = merge_dim(ctx, node, value, i, declared_rank >= 0 ? &t->dims[i] : NULL,
                                    inferred->rank >= 0 ? &inferred->dims[i] : NULL, &m->dims[i]);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

static bool dims_identical(const tc_dim *a, const tc_dim *b) {
    if (a->kind != b->kind)
        return false;
    if (a->kind == TCONV_DIM_STATIC)
        return a->value == b->value;
    if (a->kind == TCONV_DIM_SYMBOLIC)
        return (a->param == b->param) || (a->param && b->param && !strcmp(a->param, b->param));
    return true;
}

static bool type_changed(const tc_type *t, const merged_type *m) {
    if (t->kind != TCONV_TYPE_TENSOR || t->dtype != m->dtype || t->rank != m->rank)
        return true;
    for (int i = 0; i < m->rank; i++) {
        if (!dims_identical(&t->dims[i], &m->dims[i]))
            return true;
    }
    return false;
}

static tconv_status describe_value(tc_si_ctx *ctx, tconv_value *value) {
    if (value->is_graph_input || value->initializer || tc_ptr_map_get(&ctx->described, value))
        return TCONV_OK;
    tconv_status st = tc_graph_add_value_info(value->graph, value, NULL, ctx->err);
    if (st == TCONV_OK && !tc_ptr_map_put(&ctx->described, value, value))
        st = tc_error_nomem(ctx->err, "the value_info set");
    return st;
}

/* Merges one output's inferred type into its declared type and records the result. */
static tconv_status apply_output(tc_si_ctx *ctx, const tconv_node *node, tconv_value *value,
                                 const tc_si_out *out) {
    const tc_type *t = tc_si_type(ctx, value);
    if (t->kind == TCONV_TYPE_OTHER || (t->kind == TCONV_TYPE_TENSOR && t->rank > TC_MAX_RANK))
        return TCONV_OK; /* not a tensor, or beyond what inference models */
    if (out->dtype == TCONV_DTYPE_UNDEFINED && out->shape.rank < 0)
        return TCONV_OK;
    merged_type m;
    tconv_status st = merge_dtype(ctx, node, value, out->dtype, &m);
    if (st == TCONV_OK)
        st = merge_shape(ctx, node, value, &out->shape, &m);
    if (st != TCONV_OK)
        return st;
    /* A tensor type needs an element type; without one there is nothing worth writing. */
    if (m.dtype == TCONV_DTYPE_UNDEFINED || !type_changed(t, &m))
        return TCONV_OK;
    if (ctx->types) /* the model stays as it is: no value_info either */
        return tc_type_table_put(ctx->types, value, m.dtype, m.rank, m.dims, ctx->err);
    st = tc_value_set_tensor_type(value, m.dtype, m.rank, m.dims, ctx->err);
    return st == TCONV_OK ? describe_value(ctx, value) : st;
}

/* ---------------------------------------------------------------- If */

static const tconv_graph *graph_attr(const tconv_node *node, const char *name) {
    const tc_attr *a = tc_node_attr(node, name);
    return a && a->type == TCONV_ATTR_GRAPH ? a->g : NULL;
}

/* Both branches' output types, keeping what agrees. */
tconv_status tc_si_infer_if(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    const tconv_graph *then_branch = graph_attr(node, "then_branch");
    const tconv_graph *else_branch = graph_attr(node, "else_branch");
    if (!then_branch || !else_branch)
        return TCONV_OK;
    for (size_t i = 0; i < node->n_outputs; i++) {
        if (i >= then_branch->n_outputs || i >= else_branch->n_outputs)
            break;
        if (!then_branch->outputs[i].value || !else_branch->outputs[i].value)
            continue;
        tc_si_tensor a, b;
        tc_si_value_tensor(ctx, then_branch->outputs[i].value, &a);
        tc_si_value_tensor(ctx, else_branch->outputs[i].value, &b);
        outs[i].dtype = a.dtype == b.dtype ? a.dtype : TCONV_DTYPE_UNDEFINED;
        outs[i].shape.rank = a.shape.rank == b.shape.rank ? a.shape.rank : -1;
        for (int k = 0; k < outs[i].shape.rank; k++)
            outs[i].shape.dims[k] = tc_si_dim_agree(&a.shape.dims[k], &b.shape.dims[k]);
    }
    return TCONV_OK;
}

/* What both a and b say (a loop-carried value before and after an iteration). */
static void agree_tensors(const tc_si_tensor *a, const tc_si_tensor *b, tc_si_out *out) {
    out->dtype = a->dtype == b->dtype ? a->dtype : TCONV_DTYPE_UNDEFINED;
    out->shape.rank = a->shape.rank == b->shape.rank ? a->shape.rank : -1;
    for (int k = 0; k < out->shape.rank; k++)
        out->shape.dims[k] = tc_si_dim_agree(&a->shape.dims[k], &b->shape.dims[k]);
}

/* The body output's type with a new axis `axis` (in [-(rank+1), rank], negative: from the end)
 * of size `len` inserted: a stacked scan output. */
static void stacked_output(const tc_si_ctx *ctx, const tconv_graph *body, size_t index,
                           int64_t axis, tc_dim len, tc_si_out *out) {
    tc_si_tensor t;
    if (index >= body->n_outputs || !body->outputs[index].value)
        return;
    tc_si_value_tensor(ctx, body->outputs[index].value, &t);
    out->dtype = t.dtype;
    if (t.shape.rank < 0 || t.shape.rank + 1 > TC_MAX_RANK)
        return;
    int rank = t.shape.rank + 1;
    int at;
    if (!tc_axis_normalize(axis, rank, &at))
        return;
    axis = at;
    out->shape.rank = rank;
    for (int i = 0, k = 0; i < rank; i++)
        out->shape.dims[i] = i == axis ? len : t.shape.dims[k++];
}

/* Loop: loop-carried outputs are what the initial value and the body's result agree on; scan
 * outputs are the body's per-iteration type under a new first axis (trip count unknown). */
tconv_status tc_si_infer_loop(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    const tconv_graph *body = graph_attr(node, "body");
    if (!body)
        return TCONV_OK;
    size_t n_carried = node->n_inputs > 2 ? node->n_inputs - 2 : 0;
    for (size_t i = 0; i < node->n_outputs; i++) {
        if (i < n_carried) {
            tc_si_tensor a, b;
            if (!tc_si_input(ctx, node, 2 + i, &a) || 1 + i >= body->n_outputs ||
                !body->outputs[1 + i].value)
                continue;
            tc_si_value_tensor(ctx, body->outputs[1 + i].value, &b);
            agree_tensors(&a, &b, &outs[i]);
        } else {
            stacked_output(ctx, body, 1 + i, 0, tc_si_dim_unknown(), &outs[i]);
        }
    }
    return TCONV_OK;
}

/* Scan (9+): states as Loop's; scan outputs stacked along scan_output_axes with the length of
 * the first scan input along its scan axis. */
tconv_status tc_si_infer_scan(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    const tconv_graph *body = graph_attr(node, "body");
    int64_t n_scan;
    tconv_status st = tc_node_attr_int(node, "num_scan_inputs", 0, &n_scan, ctx->err);
    if (st != TCONV_OK || !body || n_scan < 1 || (size_t)n_scan > node->n_inputs)
        return st;
    size_t n_state = node->n_inputs - (size_t)n_scan;
    bool present;
    const int64_t *in_axes, *out_axes;
    size_t n_in_axes, n_out_axes;
    st = tc_node_attr_ints(node, "scan_input_axes", &present, &in_axes, &n_in_axes, ctx->err);
    if (st == TCONV_OK)
        st =
            tc_node_attr_ints(node, "scan_output_axes", &present, &out_axes, &n_out_axes, ctx->err);
    if (st != TCONV_OK)
        return st;
    tc_dim len = tc_si_dim_unknown();
    tc_si_tensor x;
    if (tc_si_input(ctx, node, n_state, &x) && x.shape.rank > 0) {
        int64_t axis = n_in_axes ? in_axes[0] : 0;
        if (axis < 0)
            axis += x.shape.rank;
        if (axis >= 0 && axis < x.shape.rank)
            len = x.shape.dims[axis];
    }
    for (size_t i = 0; i < node->n_outputs; i++) {
        if (i < n_state) {
            tc_si_tensor a, b;
            if (!tc_si_input(ctx, node, i, &a) || i >= body->n_outputs || !body->outputs[i].value)
                continue;
            tc_si_value_tensor(ctx, body->outputs[i].value, &b);
            agree_tensors(&a, &b, &outs[i]);
        } else {
            size_t k = i - n_state;
            stacked_output(ctx, body, i, k < n_out_axes ? out_axes[k] : 0, len, &outs[i]);
        }
    }
    return TCONV_OK;
}

/* Scan-8: states as Scan's; scan outputs [B, T, body output dims] with B and T from the first
 * scan input. */
tconv_status tc_si_infer_scan_8(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    const tconv_graph *body = graph_attr(node, "body");
    int64_t n_scan;
    tconv_status st = tc_node_attr_int(node, "num_scan_inputs", 0, &n_scan, ctx->err);
    if (st != TCONV_OK || !body || n_scan < 1 || (size_t)n_scan + 1 > node->n_inputs)
        return st;
    size_t n_state = node->n_inputs - 1 - (size_t)n_scan;
    tc_dim batch = tc_si_dim_unknown(), len = tc_si_dim_unknown();
    tc_si_tensor x;
    if (tc_si_input(ctx, node, 1 + n_state, &x) && x.shape.rank >= 2) {
        batch = x.shape.dims[0];
        len = x.shape.dims[1];
    }
    for (size_t i = 0; i < node->n_outputs && i < body->n_outputs && body->outputs[i].value; i++) {
        tc_si_tensor a, t;
        tc_si_value_tensor(ctx, body->outputs[i].value, &t);
        if (i < n_state) {
            if (tc_si_input(ctx, node, 1 + i, &a) && a.shape.rank >= 1 && t.shape.rank >= 0 &&
                t.shape.rank + 1 == a.shape.rank) {
                outs[i].dtype = a.dtype;
                outs[i].shape = a.shape;
            }
            continue;
        }
        outs[i].dtype = t.dtype;
        if (t.shape.rank < 0 || t.shape.rank + 2 > TC_MAX_RANK)
            continue;
        outs[i].shape.rank = t.shape.rank + 2;
        outs[i].shape.dims[0] = batch;
        outs[i].shape.dims[1] = len;
        for (int k = 0; k < t.shape.rank; k++)
            outs[i].shape.dims[k + 2] = t.shape.dims[k];
    }
    return TCONV_OK;
}

#define S(fn) fn
#define S0 NULL
#define TC_OP(dom, name, since, until, in_min, in_max, out_min, out_max, attrs, shape, kernel)     \
    [TC_OP_##name##_##since] = shape,
static const tc_si_fn RULES[TC_OP_COUNT] = {
#include "ir/ops.def"
};
#undef TC_OP
#undef S
#undef S0

tc_si_fn tc_si_rule_for(tc_op op) {
    return op > TC_OP_NONE && TC_ALWAYS(op < TC_OP_COUNT) ? RULES[op] : NULL;
}

/* ---------------------------------------------------------------- the walk */

static tconv_status infer_graph(tc_si_ctx *ctx, tconv_graph *graph);

static tconv_status infer_subgraph(tconv_graph *sub, void *ctx) {
    return infer_graph(ctx, sub);
}

static void free_outs(tc_si_out *outs, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(outs[i].data);
    free(outs);
}

/* Applies the rule's results; known contents move into ctx's table. */
static tconv_status apply_outputs(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    for (size_t i = 0; i < node->n_outputs; i++) {
        tconv_value *value = node->outputs[i];
        if (!value)
            continue;
        tconv_status st = apply_output(ctx, node, value, &outs[i]);
        if (st != TCONV_OK)
            return st;
        if (outs[i].data) {
            if (!tc_ptr_map_put(&ctx->data, value, outs[i].data))
                return tc_error_nomem(ctx->err, "shape inference data");
            outs[i].data = NULL;
        }
    }
    return TCONV_OK;
}

/* The node's own rule, its subgraphs already done. */
static tconv_status apply_rule(tc_si_ctx *ctx, tconv_node *node) {
    if (!tc_node_is_onnx_domain(node) || node->n_outputs == 0)
        return TCONV_OK;
    tc_si_fn rule = tc_si_rule_for(node->op);
    if (!rule)
        return TCONV_OK;
    tc_si_out *outs = calloc(node->n_outputs, sizeof *outs);
    if (!outs)
        return tc_error_nomem(ctx->err, "shape inference results");
    for (size_t i = 0; i < node->n_outputs; i++)
        outs[i].shape.rank = -1;
    tconv_status st = rule(ctx, node, outs);
    if (st == TCONV_OK)
        st = apply_outputs(ctx, node, outs);
    free_outs(outs, node->n_outputs);
    return st;
}

static tconv_status infer_node(tc_si_ctx *ctx, tconv_node *node) {
    tconv_status st = tc_node_for_each_subgraph(node, infer_subgraph, ctx);
    return st == TCONV_OK ? apply_rule(ctx, node) : st;
}

/* Values that already have an entry (value_info or a graph output) get no new value_info. */
static tconv_status note_described(tc_si_ctx *ctx, const tc_value_info *list, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (list[i].value && !tc_ptr_map_put(&ctx->described, list[i].value, list[i].value))
            return tc_error_nomem(ctx->err, "the value_info set");
    }
    return TCONV_OK;
}

static tconv_status infer_graph(tc_si_ctx *ctx, tconv_graph *graph) {
    tconv_status st = note_described(ctx, graph->value_info, graph->n_value_info);
    if (st == TCONV_OK)
        st = note_described(ctx, graph->outputs, graph->n_outputs);
    for (tconv_node *node = graph->first; node && st == TCONV_OK; node = node->next)
        st = infer_node(ctx, node);
    return st;
}

/* ---------------------------------------------------------------- the pass */

static void ctx_free(tc_si_ctx *ctx) {
    for (size_t i = 0; i < ctx->data.capacity; i++) {
        if (ctx->data.keys[i])
            free(ctx->data.values[i]);
    }
    tc_ptr_map_free(&ctx->data);
    tc_ptr_map_free(&ctx->described);
}

tconv_status tc_pass_shape_infer(tconv_graph *graph, const tc_pass_options *options,
                                 tc_error *err) {
    return tc_shape_infer_into(graph, options, NULL, err);
}

tconv_status tc_shape_infer_into(tconv_graph *graph, const tc_pass_options *options,
                                 tc_type_table *types, tc_error *err) {
    tc_si_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.types = types;
    ctx.model = graph->model;
    ctx.opset = tc_model_opset(graph->model, "");
    ctx.convention = options ? options->convention : TCONV_CONVENTION_ONNX;
    ctx.err = err;
    tconv_status st = infer_graph(&ctx, graph);
    ctx_free(&ctx);
    return st;
}

/* ---------------------------------------------------------------- one node at a time */

struct tc_shape_refiner {
    tc_si_ctx ctx;
    tc_error err;
};

tconv_status tc_shape_refiner_new(tconv_model *model, tconv_convention convention,
                                  tc_type_table *types, tc_shape_refiner **out) {
    tc_shape_refiner *r = calloc(1, sizeof *r);
    *out = r;
    if (!r)
        return TCONV_ERR_NOMEM;
    r->ctx.model = model;
    r->ctx.types = types;
    r->ctx.opset = tc_model_opset(model, "");
    r->ctx.convention = convention;
    r->ctx.err = &r->err;
    return TCONV_OK;
}

void tc_shape_refiner_free(tc_shape_refiner *refiner) {
    if (!refiner)
        return;
    ctx_free(&refiner->ctx);
    free(refiner);
}

bool tc_shape_refiner_set_data(tc_shape_refiner *refiner, tconv_value *value, int rank, int count,
                               const int64_t *values) {
    if (rank > 1 || count < 0 || count > TC_SI_MAX_DATA || (rank == 0 && count != 1))
        return false;
    if (tc_ptr_map_get(&refiner->ctx.data, value))
        return true;
    tc_si_data *data = calloc(1, sizeof *data);
    if (!data)
        return false;
    data->rank = rank;
    data->count = count;
    for (int i = 0; i < count; i++)
        data->elems[i] = tc_si_dim_static(values[i]);
    if (!tc_ptr_map_put(&refiner->ctx.data, value, data)) {
        free(data);
        return false;
    }
    return true;
}

bool tc_shape_refiner_node(tc_shape_refiner *refiner, tconv_node *node) {
    tc_error_clear(&refiner->err);
    return apply_rule(&refiner->ctx, node) == TCONV_OK;
}
