/* The constant-input test kernels ask through their host (kernel.h: tc_kernel_input_is_constant),
 * the float32 copies of widened initializers, and constants a plan owns. */
#include <stdlib.h>
#include <string.h>

#include "runtime/session/session_internal.h"

/* The plan holding the initializer that input `index` of the running step reads, and its slot,
 * when the input is that initializer (or a copy the plan derived from it); else NULL. */
static const tc_graph_plan *constant_slot(const tc_kernel_ctx *ctx, size_t index, uint32_t *slot) {
    const tc_session *s = ctx->session;
    if (!s || !s->current_env || !s->current_step || index >= ctx->n_inputs ||
        index >= s->current_step->n_inputs || !ctx->inputs[index])
        return NULL;
    tc_slot_ref ref = s->current_step->inputs[index];
    const tc_run_env *env = s->current_env;
    for (uint32_t i = 0; i < ref.up && env; i++)
        env = env->parent;
    if (!env || ref.slot == TC_NO_SLOT || ref.slot >= env->plan->n_slots)
        return NULL;
    const tc_rt_tensor *constant = &env->plan->constants[ref.slot];
    if (constant->dtype == TCONV_DTYPE_UNDEFINED || !constant->data)
        return NULL;
    /* An initializer a run's inputs override sits in the slot as the caller's data instead. */
    const void *data = ctx->inputs[index]->data;
    const tc_rt_tensor *wide =
        env->plan->wide_constants ? &env->plan->wide_constants[ref.slot] : NULL;
    if (constant->data != data && (!wide || !wide->data || wide->data != data))
        return NULL;
    *slot = ref.slot;
    return env->plan;
}

bool tc_session_input_is_constant(const tc_kernel_ctx *ctx, size_t index) {
    const tc_step_plan *step = ctx->session ? ctx->session->current_step : NULL;
    if (step && step->folded && index < TC_FOLD_INPUTS && index < ctx->n_inputs &&
        ctx->inputs[index] && step->folded[index].data &&
        step->folded[index].data == ctx->inputs[index]->data)
        return true;
    uint32_t slot;
    return constant_slot(ctx, index, &slot) != NULL;
}

const tc_rt_tensor *tc_step_wide_constant(const tc_kernel_ctx *ctx, size_t index) {
    uint32_t slot;
    const tc_graph_plan *plan = constant_slot(ctx, index, &slot);
    if (!plan || !plan->wide_constants || plan->wide_constants[slot].dtype != TCONV_DTYPE_FLOAT)
        return NULL;
    return &plan->wide_constants[slot];
}

tconv_status tc_plan_constant_alloc(tc_session *session, tconv_dtype dtype, int rank,
                                    const int64_t *dims, const char *what, tc_rt_tensor *out,
                                    tc_error *err) {
    memset(out, 0, sizeof *out);
    size_t esize = tc_rt_dtype_size(dtype);
    int64_t n, nbytes = 0;
    if (!tc_shape_elements(dims, rank, &n) || esize == 0 || !tc_mul_i64(n, (int64_t)esize, &nbytes))
        return tc_error_set(err, TCONV_ERR_LIMIT, "%s: shape overflows", what);
    tconv_status st;
    void *data = NULL;
    if (nbytes > 0 &&
        (st = tc_session_alloc_bytes(session, (size_t)nbytes, what, &data, err)) != TCONV_OK)
        return st;
    out->dtype = dtype;
    out->rank = rank;
    memcpy(out->dims, dims, (size_t)rank * sizeof *dims);
    out->n_elements = n;
    out->data = data;
    out->nbytes = (size_t)nbytes;
    out->owns_data = data != NULL;
    session->budget.stats.constant_bytes += (size_t)nbytes;
    return TCONV_OK;
}
