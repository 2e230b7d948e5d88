/* Sessions planned from inferred shapes (issue 16, item 9). The runtime plans a session's memory
 * and work from the types of its values, and a value whose shape the model does not declare
 * counts as 0 bytes there (the per-allocation check holds it only once it is computed): a model
 * without value_info was refused mid-run, after kernels had run. The runtime calls no pass, so
 * the API runs shape inference for it, into a side table (ir/type_table.h) that it hands to the
 * session: planning reads each value's type there first. The caller's model is only read, so
 * the model the caller holds (and saves) is not changed, and sessions may be created from one
 * model on several threads at once. The door is one-way: the API calls the pass and the
 * runtime; the runtime sees only the table. */
#include "api/api_internal.h"
#include "passes/pass.h"

#include <stdlib.h>

/* Types the model's intermediate values by shape inference, as far as it can tell, into
 * `types`. A model inference refuses (a declared shape it contradicts) keeps what was inferred
 * before that point: planning with less is what the runtime did before. */
static void infer(tconv_model *model, tconv_convention convention, tc_type_table *types) {
    tc_error local = {0};
    tc_pass_options options;
    tc_pass_options_init(&options);
    options.convention = convention;
    (void)tc_shape_infer_into(model->graph, &options, types, &local);
}

typedef struct refine_ctx {
    tc_shape_refiner *refiner;
    tc_type_table *types;
} refine_ctx;

/* The constant inputs of a node the session does not fold (tc_session_options.refine_types):
 * each folded value's type becomes its constant's (exact) and a small integer one's contents
 * known, then the node's rule runs again with them. That is inference with the values only the
 * runtime's folded kernels compute: a reflect Pad's pads, built by Reshape/Slice/Transpose, give
 * the Pad's output shape, and from it the shapes of everything after, whose Shape nodes then fold.
 * Types change only in the session's table, where inference can tell more. */
static void refine_node(void *ctx, const tconv_node *node, const tc_rt_tensor *const *constants) {
    refine_ctx *r = ctx;
    /* the refiner's rules take a mutable node; with a table they only read it */
    tconv_node *n = (tconv_node *)node;
    for (size_t k = 0; k < n->n_inputs; k++) {
        const tc_rt_tensor *t = constants[k];
        tconv_value *v = n->inputs[k];
        if (!t || !v || v->initializer)
            continue;
        tc_dim dims[TC_MAX_RANK];
        for (int i = 0; i < t->rank; i++)
            dims[i] = (tc_dim){.kind = TCONV_DIM_STATIC, .value = t->dims[i]};
        tc_error scratch;
        if (v->type.kind != TCONV_TYPE_OTHER &&
            tc_type_table_put(r->types, v, t->dtype, t->rank, dims, &scratch) != TCONV_OK)
            continue;
        int64_t values[64];
        if (t->rank > 1 || t->n_elements > 64 ||
            (t->dtype != TCONV_DTYPE_INT64 && t->dtype != TCONV_DTYPE_INT32))
            continue;
        for (int64_t i = 0; i < t->n_elements; i++)
            values[i] = t->dtype == TCONV_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
                                                      : ((const int32_t *)t->data)[i];
        (void)tc_shape_refiner_set_data(r->refiner, v, t->rank, (int)t->n_elements, values);
    }
    (void)tc_shape_refiner_node(r->refiner, n);
}

tconv_status tc_api_session_create(tconv_model *model, const tc_session_options *options,
                                   tc_session **out, tc_error *err) {
    tc_error local = {0};
    /* inference walks only IR that verifies; anything else the session itself reports */
    bool annotated = model && model->graph && tc_model_verify(model, &local) == TCONV_OK;
    tconv_convention convention = options ? options->convention : TCONV_CONVENTION_ONNX;
    tc_session_options refined;
    if (options)
        refined = *options;
    else
        tc_session_options_init(&refined);
    if (!refined.function_library)
        refined.function_library = tc_api_function_library();
    tc_type_table *types = NULL;
    refine_ctx refine = {0};
    if (annotated && (types = calloc(1, sizeof *types))) {
        tc_type_table_init(types);
        infer(model, convention, types);
        refine.types = types;
        if (tc_shape_refiner_new(model, convention, types, &refine.refiner) == TCONV_OK) {
            refined.refine_types = refine_node;
            refined.refine_ctx = &refine;
        }
        refined.types = types;
    }
    tconv_status st = tc_session_create(model, &refined, out, err);
    tc_shape_refiner_free(refine.refiner);
    if (st != TCONV_OK && types) { /* the session took it only when it was made */
        tc_type_table_free(types);
        free(types);
    }
    return st;
}
