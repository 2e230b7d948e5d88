/* Constant folding at planning time. Exporters leave whole subgraphs that compute the same
 * value every run: PyTorch's reflect pad builds its pads from Constant, ConstantOfShape, Concat,
 * Reshape, Slice, Transpose and Cast; its LSTM builds zero initial states from Shape, Gather,
 * Unsqueeze, Concat and Expand. Each of those nodes costs a dispatch and an allocation per run,
 * more than the few bytes it computes. Here a step whose inputs are all constants (initializers,
 * or outputs of steps folded before it), or a Shape of a value whose shape the plan knows
 * statically, runs once when the session is planned; its outputs become plan constants and the
 * step leaves the plan. The graph is not changed: this is a property of the plan, not a pass,
 * and a proof (options.unfused) runs every node as written.
 *
 * Bounds: a folded node may allocate at most TC_FOLD_MAX_BYTES per tensor and do at most
 * TC_FOLD_MAX_WORK work units (session_work.c), so a ConstantOfShape of 10 GB is not made at
 * planning; its outputs count as constant bytes against the memory limit. All folding of a
 * session does at most TC_FOLD_MAX_TOTAL_WORK and at most max_work units in total
 * (stats.fold_work), charged to the same budget as a run: the session's work check counts them
 * beside the plan's (session_work.c), so a model cannot have its work done at planning, outside
 * the limit. A node that fails
 * (a kernel error, a bound) is simply not folded: it stays a step, and the run reports its error
 * naming the node exactly as before.
 *
 * Shapes: a Shape is folded only in the main graph (a Loop body's inputs may change shape from
 * one iteration to the next whatever they declare) and only when every dim of its input is
 * static. When that input is a graph input or a constant, its shape is checked when the run
 * binds it or is fixed; otherwise the dims come from shape inference or a declared value_info,
 * and the step stays as a guard that checks the actual shape against the folded one without
 * allocating (a wrong value_info gives an error naming the node, never a wrong result). */
#include "runtime/kernels/kernels.h"
#include "ir/check.h"
#include "runtime/budget/budget.h"
#include "runtime/session/session_internal.h"

#include <string.h>

/* The largest tensor one folded node may allocate (output or scratch). */
#define TC_FOLD_MAX_BYTES ((size_t)4 << 20)
/* The most work one folded node may do: a few milliseconds. */
#define TC_FOLD_MAX_WORK ((uint64_t)1 << 26)
/* The most all folding of one session may do, subgraphs included: 4,000 folded MatMuls each
 * under the node's bound did 250 times max_work at planning (issue 27). Within max_work too. */
#define TC_FOLD_MAX_TOTAL_WORK ((uint64_t)1 << 28)

struct tc_shape_guard {
    int rank;
    int64_t dims[TC_MAX_RANK];
    const tc_rt_tensor *value; /* the folded Shape output, a plan constant */
};

/* Ops whose outputs differ from run to run (TC_OPF_NONDETERMINISTIC): never folded. */
static bool is_nondeterministic(const tconv_node *node) {
    return tc_kind_has(node->kind, TC_OPF_NONDETERMINISTIC);
}

static bool is_constant_input(const tc_graph_plan *plan, tc_slot_ref ref) {
    return ref.slot != TC_NO_SLOT && ref.up == 0 &&
           plan->constants[ref.slot].dtype != TCONV_DTYPE_UNDEFINED;
}

static bool is_graph_input(const tc_graph_plan *plan, uint32_t slot) {
    for (size_t i = 0; i < plan->n_inputs; i++) {
        if (plan->inputs[i] == slot)
            return true;
    }
    return false;
}

/* What folding a step needs: its inputs as tensors, a stand-in for a Shape's input (dims only,
 * no data: the Shape kernel reads nothing else), and whether that Shape needs a guard. */
typedef struct fold_inputs {
    const tc_rt_tensor **ptrs; /* plan->max_inputs */
    tc_rt_tensor shape_of;     /* the Shape's input, by its static dims */
    bool needs_guard;
    uint64_t max_work; /* the caller's max_work (0: none) */
} fold_inputs;

/* The static shape of a Shape's input, when the plan may rely on it. */
static bool static_shape_input(const tc_session *session, const tc_graph_plan *plan,
                               const tc_step_plan *step, fold_inputs *in) {
    const tconv_node *node = step->node;
    /* half_native: the stand-in has no data, so it must reach the kernel as it is */
    if (plan->parent || node->kind != TC_KIND_Shape || !step->half_native || step->n_inputs != 1 ||
        step->inputs[0].slot == TC_NO_SLOT || step->inputs[0].up != 0)
        return false;
    const tconv_value *x = node->inputs[0];
    tc_rt_tensor *t = &in->shape_of;
    memset(t, 0, sizeof *t);
    if (!x || tc_session_type(session, x)->dtype == TCONV_DTYPE_UNDEFINED ||
        !tc_plan_value_dims(session, x, NULL, t->dims, &t->rank))
        return false;
    t->dtype = tc_session_type(session, x)->dtype;
    in->ptrs[0] = t;
    in->needs_guard = !is_graph_input(plan, step->inputs[0].slot);
    return true;
}

/* Whether the step may be folded, and its inputs if so. */
static bool foldable(const tc_session *session, const tc_graph_plan *plan, const tc_step_plan *step,
                     fold_inputs *in) {
    const tconv_node *node = step->node;
    if (!step->kernel || step->n_subplans > 0 || step->n_captures > 0 || is_nondeterministic(node))
        return false;
    in->needs_guard = false;
    bool all_constant = true;
    for (size_t k = 0; k < step->n_inputs; k++) {
        in->ptrs[k] = NULL;
        if (step->inputs[k].slot == TC_NO_SLOT)
            continue;
        if (!is_constant_input(plan, step->inputs[k])) {
            all_constant = false;
            break;
        }
        in->ptrs[k] = &plan->constants[step->inputs[k].slot];
    }
    if (!all_constant && !static_shape_input(session, plan, step, in))
        return false;
    for (size_t k = 0; k < step->n_outputs; k++) {
        if (step->outputs[k] == TC_NO_SLOT)
            continue;
        /* a declared or inferred size past the bound: not worth running to find out */
        const tconv_value *v = node->outputs[k];
        int64_t dims[TC_MAX_RANK], n;
        int rank;
        size_t esize = tc_rt_dtype_size(tc_session_type(session, v)->dtype);
        if (esize && tc_plan_value_dims(session, v, NULL, dims, &rank) &&
            (!tc_shape_elements(dims, rank, &n) || (uint64_t)n > TC_FOLD_MAX_BYTES / esize))
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------- plan-owned constants */

tconv_status tc_plan_adopt_constant(tc_session *session, tc_graph_plan *plan, uint32_t slot,
                                    tc_rt_tensor *t) {
    if (TC_NEVER(slot >= plan->n_slots) || TC_NEVER(!t->owns_data && t->nbytes > 0))
        return TCONV_ERR_USAGE;
    if (session->budget.stats.live_bytes >= t->nbytes)
        session->budget.stats.live_bytes -= t->nbytes;
    session->budget.stats.constant_bytes += t->nbytes;
    tc_rt_tensor *old = &plan->constants[slot];
    if (old->dtype != TCONV_DTYPE_UNDEFINED)
        session->budget.stats.constant_bytes -= old->nbytes;
    tc_rt_tensor_release(old);
    *old = *t;
    memset(t, 0, sizeof *t);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- running a step once */

static void release_outputs(tc_session *s, tc_rt_tensor *outputs, size_t n) {
    for (size_t i = 0; i < n; i++)
        tc_session_release(s, &outputs[i]);
}

/* What the next folded node may do: its own bound, within what the session's folding has left
 * of the total and of the caller's max_work (0: nothing left). */
static uint64_t fold_work_left(const tc_session *s, uint64_t max_work) {
    uint64_t total =
        max_work == 0 || max_work > TC_FOLD_MAX_TOTAL_WORK ? TC_FOLD_MAX_TOTAL_WORK : max_work;
    uint64_t left = s->budget.stats.fold_work < total ? total - s->budget.stats.fold_work : 0;
    return left < TC_FOLD_MAX_WORK ? left : TC_FOLD_MAX_WORK;
}

/* Runs the step on in's tensors; true with its outputs made plan constants, false (nothing
 * kept) when its kernel fails, meets a bound or returns a view of something else. */
static bool fold_step(tc_session *s, tc_graph_plan *plan, const tc_step_plan *step, fold_inputs *in,
                      tc_rt_tensor *outputs) {
    tc_error local;
    tc_error_clear(&local);
    memset(outputs, 0, step->n_outputs * sizeof *outputs);
    tc_kernel_ctx ctx;
    tc_step_kernel_ctx(&ctx, s, step, in->ptrs, outputs, &local);
    ctx.n_threads = 1; /* once, at planning: not worth waking the pool */
    ctx.pool = NULL;
    s->budget.stats.work = 0;
    s->budget.max_work = fold_work_left(s, in->max_work);
    tconv_status st = s->budget.max_work > 0 ? tc_step_run_kernel(step, &ctx) : TCONV_ERR_LIMIT;
    /* a node refused part-way did that work too */
    s->budget.stats.fold_work = tc_work_add_sat(s->budget.stats.fold_work, s->budget.stats.work);
    for (size_t k = 0; st == TCONV_OK && k < step->n_outputs; k++) {
        const tc_rt_tensor *t = &outputs[k];
        if (step->outputs[k] != TC_NO_SLOT &&
            (t->dtype == TCONV_DTYPE_UNDEFINED || (!t->owns_data && t->nbytes > 0)))
            st = TCONV_ERR_INVALID;
    }
    if (st != TCONV_OK) {
        release_outputs(s, outputs, step->n_outputs);
        return false;
    }
    for (size_t k = 0; k < step->n_outputs; k++) {
        if (step->outputs[k] == TC_NO_SLOT)
            tc_session_release(s, &outputs[k]);
        else
            (void)tc_plan_adopt_constant(s, plan, step->outputs[k], &outputs[k]);
    }
    return true;
}

/* ---------------------------------------------------------------- the Shape guard */

/* The kernel of a folded Shape whose input's shape came from inference: checks it, and hands
 * on the folded value. */
static tconv_status run_shape_guard(tc_kernel_ctx *ctx) {
    const tc_shape_guard *g = ctx->session->current_step->shape_guard;
    const tc_rt_tensor *x = ctx->inputs[0];
    if (x->rank != g->rank || memcmp(x->dims, g->dims, (size_t)g->rank * sizeof *g->dims) != 0) {
        char actual[160], planned[160];
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "input '%s' has shape %s, not the shape %s the model declares for it "
                            "(folded into a constant when the session was planned)",
                            ctx->node->inputs[0]->name,
                            tc_shape_format(x->rank, x->dims, actual, sizeof actual),
                            tc_shape_format(g->rank, g->dims, planned, sizeof planned));
    }
    ctx->outputs[0] = *g->value;
    ctx->outputs[0].owns_data = false; /* a view of the plan's constant */
    return TCONV_OK;
}

static tconv_status make_guard(tc_session *s, const tc_graph_plan *plan, tc_step_plan *step,
                               const fold_inputs *in, tc_error *err) {
    tc_shape_guard *g = tc_arena_alloc(s->arena, sizeof *g);
    if (!g)
        return tc_error_nomem(err, "an execution plan");
    g->rank = in->shape_of.rank;
    memcpy(g->dims, in->shape_of.dims, sizeof g->dims);
    g->value = &plan->constants[step->outputs[0]];
    step->shape_guard = g;
    step->kernel = run_shape_guard; /* an executor step of its own: it reads its node */
    step->params = NULL;
    step->work = NULL;
    step->node_free = false;
    step->epilogues = 0;
    step->half_native = true; /* it reads no data */
    return TCONV_OK;
}

/* ---------------------------------------------------------------- sharper types */

/* A step that stays: its constant inputs (folded ones included) go to options.refine_types,
 * which may make its outputs' shapes static, and so fold the Shapes that read them. */
static void refine_step(tc_session *s, const tc_graph_plan *plan, const tc_step_plan *step,
                        const tc_rt_tensor **constants) {
    if (!s->options.refine_types || plan->parent || step->n_subplans > 0)
        return;
    for (size_t k = 0; k < step->n_inputs; k++)
        constants[k] = is_constant_input(plan, step->inputs[k])
                           ? &plan->constants[step->inputs[k].slot]
                           : NULL;
    s->options.refine_types(s->options.refine_ctx, step->node, constants);
}

/* ---------------------------------------------------------------- the plan */

tconv_status tc_plan_fold_constants(tc_session *s, tc_graph_plan *plan, tc_error *err) {
    tc_rt_tensor *outputs =
        tc_arena_calloc(s->arena, plan->max_outputs ? plan->max_outputs : 1, sizeof *outputs);
    fold_inputs in;
    in.ptrs = tc_arena_calloc(s->arena, plan->max_inputs ? plan->max_inputs : 1, sizeof *in.ptrs);
    if (!outputs || !in.ptrs)
        return tc_error_nomem(err, "an execution plan");
    uint64_t saved_max_work = s->budget.max_work;
    in.max_work = saved_max_work;
    s->budget.fold_max_bytes = TC_FOLD_MAX_BYTES;
    const tc_run_env *saved_env = s->current_env;
    const tc_step_plan *saved_step = s->current_step;
    s->current_env = NULL; /* no node caches: the folded step leaves the plan */
    s->current_step = NULL;
    tconv_status st = TCONV_OK;
    size_t kept = 0;
    for (size_t i = 0; i < plan->n_steps; i++) {
        tc_step_plan *step = &plan->steps[i];
        bool folded = foldable(s, plan, step, &in) && fold_step(s, plan, step, &in, outputs);
        if (folded && !in.needs_guard)
            continue;
        if (!folded)
            refine_step(s, plan, step, in.ptrs);
        if (folded && st == TCONV_OK)
            st = make_guard(s, plan, step, &in, err);
        plan->steps[kept++] = *step;
    }
    plan->n_steps = kept;
    s->current_env = saved_env;
    s->current_step = saved_step;
    s->budget.fold_max_bytes = 0;
    s->budget.max_work = saved_max_work;
    /* what the folded kernels ran is no run's: the statistics start from planning's state */
    s->budget.stats.work = 0;
    s->budget.stats.peak_live_bytes = s->budget.stats.live_bytes;
    s->budget.stats.n_allocations = 0;
    return st;
}
