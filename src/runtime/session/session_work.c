/* The work limit: the session refuses a run whose planned work exceeds
 * tc_session_options.max_work before it computes anything, as it refuses memory. A 120-byte
 * model (ConvTranspose of two [1,1,1000,1000] graph inputs) asks for 1e12 multiply-adds, about
 * 22 minutes of one core.
 *
 * The unit is one multiply-add, comparison or element read or written: each op's cost function
 * (op_work.c, declared with the op in ir/ops.def) counts what its kernel does. Each node's work
 * comes from its input and output shapes: the declared ones when the plan is checked (at session
 * creation, and once the inputs fix the symbolic dims), the actual ones when the kernel allocates
 * its first output (which every kernel does before it computes; kernels/kernel_ctx.c charges it to
 * the budget), so that nodes of unknown shape are held to the same limit before they run. */
#include "runtime/budget/budget.h"
#include "runtime/session/session_internal.h"

#include <inttypes.h>
#include <stdio.h>

static uint64_t add_sat(uint64_t a, uint64_t b) {
    return tc_work_add_sat(a, b);
}

/* ---------------------------------------------------------------- planning */

static uint64_t step_planned_work(const tc_session *session, const tc_step_plan *step,
                                  const tc_plan_dim_values *bound) {
    const tconv_node *node = step->node;
    int64_t in_dims[TC_WORK_MAX_INPUTS][TC_MAX_RANK], out_dims[TC_MAX_RANK];
    tc_work_shapes w = {0};
    w.n_in = node->n_inputs < TC_WORK_MAX_INPUTS ? node->n_inputs : TC_WORK_MAX_INPUTS;
    for (size_t i = 0; i < w.n_in; i++) {
        w.in_rank[i] = -1;
        if (tc_plan_value_dims(session, node->inputs[i], bound, in_dims[i], &w.in_rank[i]))
            w.in_dims[i] = in_dims[i];
    }
    w.out_rank = -1;
    if (node->n_outputs > 0 &&
        tc_plan_value_dims(session, node->outputs[0], bound, out_dims, &w.out_rank))
        w.out_dims = out_dims;
    uint64_t work = 0;
    if (!tc_op_work(node, &w, &work))
        work = 0; /* unknown now: counted when the kernel allocates its output */
    for (size_t i = 0; i < step->n_subplans; i++) {
        const tc_graph_plan *sub = step->subplans[i];
        for (size_t k = 0; k < sub->n_steps; k++)
            work = add_sat(work, step_planned_work(session, &sub->steps[k], bound));
    }
    return work;
}

tconv_status tc_plan_check_work(const tc_session *session, const tc_graph_plan *plan,
                                const tc_plan_dim_values *bound, tc_error *err) {
    uint64_t limit = session->options.max_work;
    if (limit == 0)
        return TCONV_OK;
    /* constant folding's work at planning was charged to the same budget */
    uint64_t total = session->budget.stats.fold_work;
    const tc_step_plan *largest = NULL;
    uint64_t largest_work = 0;
    for (size_t i = 0; i < plan->n_steps; i++) {
        uint64_t w = step_planned_work(session, &plan->steps[i], bound);
        if (!largest || w > largest_work) {
            largest = &plan->steps[i];
            largest_work = w;
        }
        total = add_sat(total, w);
    }
    if (total <= limit)
        return TCONV_OK;
    char where[256] = "no node", folded[96] = "";
    if (largest)
        tc_node_describe(largest->node, where, sizeof where);
    if (session->budget.stats.fold_work > 0)
        snprintf(folded, sizeof folded, ", %" PRIu64 " folded into constants at planning",
                 session->budget.stats.fold_work);
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "planned work of %" PRIu64
                        " (multiply-adds and element operations; %" PRIu64
                        " at %s%s) exceeds the work limit of %" PRIu64,
                        total, largest_work, where, folded, limit);
}
