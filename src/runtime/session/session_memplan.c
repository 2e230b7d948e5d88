/* The session's planned memory: it refuses a graph whose planned memory exceeds the limit before
 * it allocates anything for it. The plan is the lifetime plan of session_plan.c replayed over the
 * values' declared shapes: initializer copies, plus every intermediate value from the step that
 * produces it to the step that releases it. Values whose shape is not known in advance count as
 * 0 bytes there; the per-allocation check of the budget (tc_budget_alloc) still holds them to the
 * same limit while the graph runs. Also the caller's input bytes against the same limit. */
#include "runtime/session/session_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void tc_session_yield_to(tc_session *done, const tc_rt_tensor *outputs, size_t n_outputs,
                         tc_session *next) {
    tc_buffer_cache_drop(&done->budget.cache);
    if (done->budget.scratch.used == 0)
        tc_scratch_arena_free(&done->budget.scratch);
    size_t held = done->budget.stats.constant_bytes;
    for (size_t i = 0; i < n_outputs; i++)
        held += outputs[i].nbytes;
    next->budget.external_bytes = held;
}

static uint64_t add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool bound_dim(const tc_plan_dim_values *bound, const char *param, int64_t *out) {
    for (size_t i = 0; bound && param && i < bound->n; i++) {
        if (bound->items[i].name && strcmp(bound->items[i].name, param) == 0) {
            *out = bound->items[i].value;
            return true;
        }
    }
    return false;
}

bool tc_plan_value_dims(const tc_session *session, const tconv_value *v,
                        const tc_plan_dim_values *bound, int64_t *dims, int *rank) {
    const tc_type *type = v ? tc_session_type(session, v) : NULL;
    if (!type || type->kind != TCONV_TYPE_TENSOR || type->rank < 0 || type->rank > TC_MAX_RANK)
        return false;
    for (int i = 0; i < type->rank; i++) {
        const tc_dim *d = &type->dims[i];
        if (d->kind == TCONV_DIM_STATIC)
            dims[i] = d->value;
        else if (d->kind != TCONV_DIM_SYMBOLIC || !bound_dim(bound, d->param, &dims[i]))
            return false;
        if (dims[i] < 0)
            return false;
    }
    *rank = type->rank;
    return true;
}

/* The bytes a value's tensor takes when its dtype and every dim are known (static, or symbolic
 * and bound); UINT64_MAX when that size overflows. false when unknown. */
static bool value_bytes(const tc_session *session, const tconv_value *v,
                        const tc_plan_dim_values *bound, uint64_t *out) {
    int64_t dims[TC_MAX_RANK];
    int rank;
    size_t esize = v ? tc_rt_dtype_size(tc_session_type(session, v)->dtype) : 0;
    if (esize == 0 || !tc_plan_value_dims(session, v, bound, dims, &rank))
        return false;
    int64_t n = 1;
    bool overflow = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) {
            *out = 0; /* an empty tensor, whatever the other dims say */
            return true;
        }
        if (!overflow && !tc_mul_i64(n, dims[i], &n))
            overflow = true;
    }
    int64_t bytes;
    *out = overflow || !tc_mul_i64(n, (int64_t)esize, &bytes) ? UINT64_MAX : (uint64_t)bytes;
    return true;
}

static uint64_t slot_bytes(const tc_session *session, const tc_graph_plan *plan, uint32_t slot,
                           const tc_plan_dim_values *bound) {
    uint64_t bytes = 0;
    if (slot != TC_NO_SLOT && slot < plan->n_slots &&
        !value_bytes(session, plan->slot_values[slot], bound, &bytes))
        bytes = 0;
    return bytes;
}

/* The main graph's inputs: the caller holds them for the whole run. */
static uint64_t input_bytes(const tc_session *session, const tc_graph_plan *plan,
                            const tc_plan_dim_values *bound) {
    if (plan->parent)
        return 0; /* a subgraph's inputs are its parent's values */
    if (bound && bound->inputs_given)
        return bound->input_bytes;
    uint64_t total = 0;
    for (size_t i = 0; i < plan->n_inputs; i++)
        total = add_sat(total, slot_bytes(session, plan, plan->inputs[i], bound));
    return total;
}

tconv_status tc_plan_check_memory(const tc_session *session, const tc_graph_plan *plan,
                                  const tc_plan_dim_values *bound, tc_error *err) {
    size_t limit = session->options.max_memory_bytes;
    if (limit == 0)
        return TCONV_OK;
    uint64_t constants = session->budget.stats.constant_bytes;
    uint64_t inputs = input_bytes(session, plan, bound);
    uint64_t held = add_sat(add_sat(constants, inputs), session->budget.external_bytes);
    uint64_t live = held, peak = held;
    const tc_step_plan *peak_step = NULL;
    for (size_t i = 0; i < plan->n_steps; i++) {
        const tc_step_plan *step = &plan->steps[i];
        for (size_t k = 0; k < step->n_outputs; k++)
            live = add_sat(live, slot_bytes(session, plan, step->outputs[k], bound));
        if (live > peak) {
            peak = live;
            peak_step = step;
        }
        for (size_t k = 0; k < step->n_releases; k++) {
            uint64_t b = slot_bytes(session, plan, step->releases[k], bound);
            live = live > b ? live - b : 0;
        }
    }
    if (peak <= (uint64_t)limit)
        return TCONV_OK;
    char where[256] = "the graph inputs and initializers";
    if (peak_step)
        tc_node_describe(peak_step->node, where, sizeof where);
    if (peak == UINT64_MAX)
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "planned memory overflows (a declared shape is too large, at %s); "
                            "the memory limit is %zu bytes",
                            where, limit);
    char beside[96] = "";
    if (session->budget.external_bytes)
        snprintf(beside, sizeof beside, ", %zu of another model's run",
                 session->budget.external_bytes);
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "planned memory of %" PRIu64 " bytes (%" PRIu64 " of graph inputs, %" PRIu64
                        " of initializers%s, peak at %s) exceeds the memory limit of %zu bytes",
                        peak, inputs, constants, beside, where, limit);
}

tconv_status tc_session_check_input_bytes(const tc_session *session, uint64_t bytes,
                                          const char *what, tc_error *err) {
    size_t limit = session->options.max_memory_bytes;
    uint64_t held = session->budget.stats.constant_bytes;
    if (limit == 0 || (held <= limit && bytes <= (uint64_t)limit - held))
        return TCONV_OK;
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "input '%s': %" PRIu64 " bytes of inputs and %" PRIu64 " of initializers "
                        "exceed the memory limit of %zu bytes",
                        what, bytes, held, limit);
}

size_t tc_session_input_room(const tc_session *session, uint64_t held) {
    size_t limit = session->options.max_memory_bytes;
    if (limit == 0)
        return SIZE_MAX;
    uint64_t used = add_sat(held, session->budget.stats.constant_bytes);
    return used >= limit ? 0 : (size_t)(limit - used);
}

tconv_status tc_plan_check_constant(const tc_session *session, const tconv_tensor *t,
                                    tc_error *err) {
    size_t limit = session->options.max_memory_bytes;
    int64_t n;
    size_t esize = tc_rt_dtype_size(t->dtype);
    if (limit == 0 || esize == 0 || !tc_tensor_elements(t, &n))
        return TCONV_OK; /* the copy itself reports what it cannot handle */
    int64_t bytes;
    uint64_t held = session->budget.stats.constant_bytes;
    if (tc_mul_i64(n, (int64_t)esize, &bytes) && held <= limit &&
        (uint64_t)bytes <= (uint64_t)limit - held)
        return TCONV_OK;
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "initializer '%s' needs %" PRId64 " x %zu bytes, over the memory limit "
                        "of %zu bytes (%" PRIu64 " bytes of initializers already held)",
                        t->name ? t->name : "", n, esize, limit, held);
}
