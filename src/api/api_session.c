/* Sessions planned from inferred shapes (issue 16, item 9). The runtime plans a session's memory
 * and work from the types the model gives its values, and a value whose shape the model does
 * not declare counts as 0 bytes there (the per-allocation check holds it only once it is
 * computed): a model without value_info was refused mid-run, after kernels had run. The runtime
 * calls no pass, so the API runs shape inference for it: on the caller's model, for the time
 * the session is planned, and then puts every type and value_info list back as it was, so the
 * model the caller holds (and saves) is not changed. */
#include "api/api_internal.h"
#include "ir/vec.h"
#include "passes/pass.h"

#include <stdlib.h>

/* What inference may change: the types of node outputs and the length of value_info lists. */
typedef struct saved_type {
    tconv_value *value;
    tc_type type;
    bool dirty;
} saved_type;

typedef struct saved_graph {
    tconv_graph *graph;
    size_t n_value_info;
} saved_graph;

typedef struct snapshot {
    saved_type *types;
    size_t n_types, cap_types;
    saved_graph *graphs;
    size_t n_graphs, cap_graphs;
} snapshot;

static tconv_status save_graph(tconv_graph *graph, void *ctx) {
    snapshot *s = ctx;
    if (!TC_VEC_RESERVE(s->graphs, s->cap_graphs, s->n_graphs + 1))
        return TCONV_ERR_NOMEM;
    s->graphs[s->n_graphs++] = (saved_graph){graph, graph->n_value_info};
    for (tconv_node *n = graph->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_outputs; i++) {
            if (!n->outputs[i])
                continue;
            if (!TC_VEC_RESERVE(s->types, s->cap_types, s->n_types + 1))
                return TCONV_ERR_NOMEM;
            s->types[s->n_types++] =
                (saved_type){n->outputs[i], n->outputs[i]->type, n->outputs[i]->type_dirty};
        }
        tconv_status st = tc_node_for_each_subgraph(n, save_graph, s);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

static void restore(const snapshot *s) {
    for (size_t i = 0; i < s->n_types; i++) {
        s->types[i].value->type = s->types[i].type;
        s->types[i].value->type_dirty = s->types[i].dirty;
    }
    for (size_t i = 0; i < s->n_graphs; i++)
        s->graphs[i].graph->n_value_info = s->graphs[i].n_value_info;
}

static void snapshot_free(snapshot *s) {
    free(s->types);
    free(s->graphs);
}

/* Types the model's intermediate values by shape inference, as far as it can tell. A model
 * inference refuses (a declared shape it contradicts) keeps what was inferred before that
 * point: planning with less is what the runtime did before. */
static void infer(tconv_model *model, tconv_convention convention) {
    tc_error local = {0};
    tc_pass_options options;
    tc_pass_options_init(&options);
    options.convention = convention;
    (void)tc_pass_shape_infer(model->graph, &options, &local);
}

/* The constant inputs of a node the session does not fold (tc_session_options.refine_types):
 * each folded value's type becomes its constant's (exact) and a small integer one's contents
 * known, then the node's rule runs again with them. That is inference with the values only the
 * runtime's folded kernels compute: a reflect Pad's pads, built by Reshape/Slice/Transpose, give
 * the Pad's output shape, and from it the shapes of everything after, whose Shape nodes then fold.
 * Types change only where inference can tell more; they are put back with the rest. */
static void refine_node(void *ctx, const tconv_node *node, const tc_rt_tensor *const *constants) {
    tc_shape_refiner *refiner = ctx;
    tconv_node *n = (tconv_node *)node; /* the plan's view of the caller's (mutable) model */
    for (size_t k = 0; k < n->n_inputs; k++) {
        const tc_rt_tensor *t = constants[k];
        tconv_value *v = n->inputs[k];
        if (!t || !v || v->initializer)
            continue;
        tc_dim dims[TCONV_MAX_RANK];
        for (int i = 0; i < t->rank; i++)
            dims[i] = (tc_dim){.kind = TCONV_DIM_STATIC, .value = t->dims[i]};
        tc_error scratch;
        if (v->type.kind != TCONV_TYPE_OTHER &&
            tc_value_set_tensor_type(v, t->dtype, t->rank, dims, &scratch) != TCONV_OK)
            continue;
        int64_t values[64];
        if (t->rank > 1 || t->n_elements > 64 ||
            (t->dtype != TCONV_DTYPE_INT64 && t->dtype != TCONV_DTYPE_INT32))
            continue;
        for (int64_t i = 0; i < t->n_elements; i++)
            values[i] = t->dtype == TCONV_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
                                                      : ((const int32_t *)t->data)[i];
        (void)tc_shape_refiner_set_data(refiner, v, t->rank, (int)t->n_elements, values);
    }
    (void)tc_shape_refiner_node(refiner, n);
}

tconv_status tc_api_session_create(tconv_model *model, const tc_session_options *options,
                                   tc_session **out, tc_error *err) {
    snapshot s = {0};
    tc_error local = {0};
    /* inference walks only IR that verifies; anything else the session itself reports */
    bool annotated = model && model->graph && tc_model_verify(model, &local) == TCONV_OK &&
                     save_graph(model->graph, &s) == TCONV_OK;
    tconv_convention convention = options ? options->convention : TCONV_CONVENTION_ONNX;
    tc_session_options refined;
    tc_shape_refiner *refiner = NULL;
    if (options)
        refined = *options;
    else
        tc_session_options_init(&refined);
    if (!refined.function_library)
        refined.function_library = tc_api_function_library();
    if (annotated) {
        infer(model, convention);
        if (tc_shape_refiner_new(model, convention, &refiner) == TCONV_OK) {
            refined.refine_types = refine_node;
            refined.refine_ctx = refiner;
        }
    }
    tconv_status st = tc_session_create(model, &refined, out, err);
    tc_shape_refiner_free(refiner);
    if (annotated)
        restore(&s);
    snapshot_free(&s);
    return st;
}
