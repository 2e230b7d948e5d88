/* float16 and bfloat16 around float kernels: one mechanism instead of half kernels. For a step
 * whose op computes in float (not listed by tc_op_half_native), the executor gives the kernel
 * float32 copies of its float16/bfloat16 inputs, runs the float32 kernel, and rounds each float
 * output the node declares as a 16-bit float (or leaves undeclared) back to that type, to
 * nearest even (NaN stays NaN, overflow becomes infinity, subnormals are rounded, not flushed).
 * Widening is exact, so an op that only moves data gives the same bits either way; the list of
 * native ops only saves the copies. */
#include "runtime/kernels/kernels.h"
#include "runtime/session/session_internal.h"
#include "runtime/compute/compute.h"

#include <stdlib.h>
#include <string.h>

/* The 16-bit float type of the step's first such input, or UNDEFINED. */
static tconv_dtype half_input_dtype(const tc_kernel_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        if (ctx->inputs[i] && tc_dtype_is_half(ctx->inputs[i]->dtype))
            return ctx->inputs[i]->dtype;
    }
    return TCONV_DTYPE_UNDEFINED;
}

typedef struct convert_job {
    const void *src;
    void *dst;
    tconv_dtype half; /* the 16-bit side */
    bool widen;       /* half -> float, else float -> half */
} convert_job;

/* Elements [begin, end) of the job. */
static void convert_range(void *p, int64_t begin, int64_t end) {
    const convert_job *job = p;
    int64_t count = end - begin;
    if (job->half == TCONV_DTYPE_FLOAT16) {
        if (job->widen)
            tc_half_to_float_n((const uint16_t *)job->src + begin, (float *)job->dst + begin,
                               count);
        else
            tc_float_to_half_n((const float *)job->src + begin, (uint16_t *)job->dst + begin,
                               count);
    } else if (job->widen) {
        const uint16_t *in = job->src;
        float *out = job->dst;
        for (int64_t i = begin; i < end; i++)
            out[i] = tc_bfloat16_to_float(in[i]);
    } else {
        const float *in = job->src;
        uint16_t *out = job->dst;
        for (int64_t i = begin; i < end; i++)
            out[i] = tc_float_to_bfloat16(in[i]);
    }
}

static void convert_data(tc_kernel_ctx *ctx, const tc_rt_tensor *src, tc_rt_tensor *dst) {
    bool widen = dst->dtype == TCONV_DTYPE_FLOAT;
    convert_job job = {src->data, dst->data, widen ? src->dtype : dst->dtype, widen};
    tc_parallel_ranges(ctx->pool, ctx->n_threads, src->n_elements, TC_PARALLEL_COST_STREAM, 16,
                       4096, convert_range, &job);
}

/* dst: a new session tensor of type `to` holding src's values. */
static tconv_status convert(tc_kernel_ctx *ctx, const tc_rt_tensor *src, tconv_dtype to,
                            tc_rt_tensor *dst) {
    /* every element is written by convert_data */
    tconv_status st =
        tc_session_alloc_uninit(ctx->session, dst, to, src->rank, src->dims, ctx->err);
    if (st == TCONV_OK)
        convert_data(ctx, src, dst);
    return st;
}

/* view: a float32 copy of src in kernel scratch memory (`piece`, released by the caller in
 * reverse order): it lives only while the kernel runs, and the same cache-warm bytes serve every
 * step. */
static tconv_status widen_to_scratch(tc_kernel_ctx *ctx, const tc_rt_tensor *src,
                                     tc_rt_tensor *piece, tc_rt_tensor *view) {
    memset(view, 0, sizeof *view);
    tconv_status st = tc_kernel_scratch(ctx, (size_t)src->n_elements * sizeof(float), piece);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st,
                               "float32 copy of a %s input: ", tconv_dtype_name(src->dtype));
    view->dtype = TCONV_DTYPE_FLOAT;
    view->rank = src->rank;
    memcpy(view->dims, src->dims, sizeof view->dims);
    view->n_elements = src->n_elements;
    view->data = piece->data;
    view->nbytes = (size_t)src->n_elements * sizeof(float);
    convert_data(ctx, src, view);
    return TCONV_OK;
}

/* Output i's type: the node's declared one when it is a 16-bit float or float (LayerNorm's Mean
 * stays float for float16 data), else the inputs' 16-bit type. */
static tconv_dtype output_target(const tc_session *session, const tconv_node *node, size_t i,
                                 tconv_dtype half) {
    const tconv_value *v = i < node->n_outputs ? node->outputs[i] : NULL;
    tconv_dtype declared = v ? tc_session_type(session, v)->dtype : TCONV_DTYPE_UNDEFINED;
    if (tc_dtype_is_half(declared) || declared == TCONV_DTYPE_FLOAT)
        return declared;
    return half;
}

static tconv_status narrow_outputs(const tc_step_plan *step, tc_kernel_ctx *ctx, tconv_dtype half) {
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        tc_rt_tensor *out = &ctx->outputs[i];
        tconv_dtype to = output_target(ctx->session, step->node, i, half);
        if (out->dtype != TCONV_DTYPE_FLOAT || to == TCONV_DTYPE_FLOAT)
            continue;
        tc_rt_tensor narrow;
        tconv_status st = convert(ctx, out, to, &narrow);
        if (st != TCONV_OK)
            return st;
        tc_session_release(ctx->session, out);
        *out = narrow;
    }
    return TCONV_OK;
}

int tc_test_watch_prepared_runs = 0;
int tc_test_plant_attr_read = 0;
tc_test_prepared_counts tc_test_prepared_seen;

static void count_watched(const tc_step_plan *step, const tc_kernel_ctx *ctx, bool widened) {
    tc_test_prepared_counts *c = &tc_test_prepared_seen;
    const tc_rt_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    c->runs++;
    c->crop += ctx->crop != NULL;
    c->activation += ctx->activation != NULL;
    c->folded += step->folded != NULL;
    c->widened += widened;
    c->f64 += x && x->dtype == TCONV_DTYPE_DOUBLE;
}

/* The step's kernel itself. A prepared kernel's run is watched when a test asks
 * (test_hooks.h): attribute reads during it are counted by the IR. */
static tconv_status call_kernel(const tc_step_plan *step, tc_kernel_ctx *ctx, bool widened) {
    if (!tc_test_watch_prepared_runs || !step->node_free) /* tests only */
        return step->kernel(ctx);
    count_watched(step, ctx, widened);
    tc_test_attr_watch++;
    if (tc_test_plant_attr_read)
        (void)tc_node_attr(step->node, "group");
    tconv_status st = step->kernel(ctx);
    tc_test_attr_watch--;
    return st;
}

/* Inputs of up to this many: the arrays of run_widened live on the stack. */
#define WIDENED_LOCAL 8

static tconv_status run_widened(const tc_step_plan *step, tc_kernel_ctx *ctx, tconv_dtype half) {
    size_t n = ctx->n_inputs;
    tc_rt_tensor local[2 * WIDENED_LOCAL];
    const tc_rt_tensor *local_ptrs[WIDENED_LOCAL];
    bool heap = n > WIDENED_LOCAL;
    tc_rt_tensor *wide = heap ? calloc(2 * n, sizeof *wide) : local; /* views, then pieces */
    const tc_rt_tensor **ptrs = heap ? calloc(n, sizeof *ptrs) : local_ptrs;
    if (!wide || !ptrs) {
        free(heap ? wide : NULL);
        free(heap ? ptrs : NULL);
        return tc_error_nomem(ctx->err, "float32 copies of float16 inputs");
    }
    tc_rt_tensor *pieces = wide + n;
    memset(wide, 0, 2 * n * sizeof *wide);
    tconv_status st = TCONV_OK;
    for (size_t i = 0; i < n && st == TCONV_OK; i++) {
        ptrs[i] = ctx->inputs[i];
        if (!ctx->inputs[i] || !tc_dtype_is_half(ctx->inputs[i]->dtype))
            continue;
        const tc_rt_tensor *kept = tc_step_wide_constant(ctx, i);
        if (kept) {
            ptrs[i] = kept;
            continue;
        }
        st = widen_to_scratch(ctx, ctx->inputs[i], &pieces[i], &wide[i]);
        ptrs[i] = &wide[i];
        if (ctx->session)
            ctx->session->budget.stats.n_half_widenings++;
    }
    const tc_rt_tensor *const *saved = ctx->inputs;
    if (st == TCONV_OK) {
        ctx->inputs = ptrs;
        st = call_kernel(step, ctx, true);
        ctx->inputs = saved;
    }
    for (size_t i = n; i-- > 0;)
        tc_kernel_scratch_release(ctx, &pieces[i]);
    if (heap) {
        free(wide);
        free(ptrs);
    }
    if (st == TCONV_ERR_UNSUPPORTED) /* a dtype message would name float, not what was given */
        return tc_error_prefix(ctx->err, st,
                               "%s inputs widened to float: ", tconv_dtype_name(half));
    return st == TCONV_OK ? narrow_outputs(step, ctx, half) : st;
}

static bool is_float_type(tconv_dtype d) {
    return tc_dtype_is_half(d) || d == TCONV_DTYPE_FLOAT || d == TCONV_DTYPE_DOUBLE;
}

/* A float input of another type beside the 16-bit one, where the op's schema ties its float
 * inputs to one type T: widening would make them agree and compute silently (issue 27). */
static tconv_status check_one_float_type(const tc_step_plan *step, const tc_kernel_ctx *ctx,
                                         tconv_dtype half) {
    if (tc_op_mixed_float_inputs(step->node->op))
        return TCONV_OK;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const tc_rt_tensor *t = ctx->inputs[i];
        if (t && is_float_type(t->dtype) && t->dtype != half)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "input %zu ('%s') is %s beside %s inputs: %s's type constraint "
                                "takes one type for them",
                                i, tc_kernel_input_name(ctx, i), tconv_dtype_name(t->dtype),
                                tconv_dtype_name(half), step->node->op_type);
    }
    return TCONV_OK;
}

static tconv_status run_kernel(const tc_step_plan *step, tc_kernel_ctx *ctx) {
    tconv_dtype half = step->half_native ? TCONV_DTYPE_UNDEFINED : half_input_dtype(ctx);
    if (half == TCONV_DTYPE_UNDEFINED)
        return call_kernel(step, ctx, false);
    return run_widened(step, ctx, half);
}

tconv_status tc_step_run_kernel(const tc_step_plan *step, tc_kernel_ctx *ctx) {
    /* on the inputs as the graph gives them (a folded W' is float32 by design) */
    tconv_dtype half = step->half_native ? TCONV_DTYPE_UNDEFINED : half_input_dtype(ctx);
    if (half != TCONV_DTYPE_UNDEFINED) {
        tconv_status st = check_one_float_type(step, ctx, half);
        if (st != TCONV_OK)
            return st;
    }
    if (!step->folded || ctx->n_inputs > TC_FOLD_INPUTS)
        return run_kernel(step, ctx);
    /* W and B of a folded BatchNormalization (session_fold.c) replace the initializers; they
     * were made for X of W's type, which the graph as written requires too. */
    const tc_rt_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    if (x && x->dtype != step->folded_x_dtype)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "X is %s but W is %s",
                            tconv_dtype_name(x->dtype), tconv_dtype_name(step->folded_x_dtype));
    const tc_rt_tensor *inputs[TC_FOLD_INPUTS];
    for (size_t i = 0; i < ctx->n_inputs; i++)
        inputs[i] =
            step->folded[i].dtype != TCONV_DTYPE_UNDEFINED ? &step->folded[i] : ctx->inputs[i];
    const tc_rt_tensor *const *saved = ctx->inputs;
    ctx->inputs = inputs;
    tconv_status st = run_kernel(step, ctx);
    ctx->inputs = saved;
    return st;
}

/* ---------------------------------------------------------------- constants widened once */

/* The plan defining the value that `ref` names from `plan`. */
static tc_graph_plan *owner_plan(tc_graph_plan *plan, tc_slot_ref ref) {
    for (uint32_t i = 0; i < ref.up && plan; i++)
        plan = plan->parent;
    return plan;
}

static tconv_status widen_constant(tc_session *session, tc_graph_plan *owner, uint32_t slot,
                                   tc_error *err) {
    const tc_rt_tensor *src = &owner->constants[slot];
    if (!tc_dtype_is_half(src->dtype))
        return TCONV_OK;
    if (!owner->wide_constants) {
        owner->wide_constants =
            tc_arena_calloc(session->arena, owner->n_slots, sizeof *owner->wide_constants);
        if (!owner->wide_constants)
            return tc_error_nomem(err, "an execution plan");
    }
    tc_rt_tensor *wide = &owner->wide_constants[slot];
    if (wide->dtype != TCONV_DTYPE_UNDEFINED)
        return TCONV_OK;
    const char *name = owner->slot_values[slot]->name;
    tconv_status st = tc_plan_constant_alloc(session, TCONV_DTYPE_FLOAT, src->rank, src->dims,
                                             "a float32 copy of a 16-bit initializer", wide, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "initializer '%s': ", name ? name : "");
    /* an empty initializer has no data: no offset may be taken from its NULL pointer */
    if (src->n_elements == 0)
        return TCONV_OK;
    convert_job job = {.src = src->data, .dst = wide->data, .half = src->dtype, .widen = true};
    convert_range(&job, 0, src->n_elements);
    return TCONV_OK;
}

tconv_status tc_plan_widen_constants(tc_session *session, tc_graph_plan *plan, tc_error *err) {
    for (size_t i = 0; i < plan->n_steps; i++) {
        const tc_step_plan *step = &plan->steps[i];
        if (step->half_native || step->forwards_input)
            continue;
        for (size_t k = 0; k < step->n_inputs; k++) {
            tc_slot_ref ref = step->inputs[k];
            if (ref.slot == TC_NO_SLOT || (step->folded && k < TC_FOLD_INPUTS &&
                                           step->folded[k].dtype != TCONV_DTYPE_UNDEFINED))
                continue;
            tc_graph_plan *owner = owner_plan(plan, ref);
            if (!owner || ref.slot >= owner->n_slots)
                continue;
            tconv_status st = widen_constant(session, owner, ref.slot, err);
            if (st != TCONV_OK)
                return st;
        }
    }
    return TCONV_OK;
}

void tc_step_kernel_ctx(tc_kernel_ctx *ctx, tc_session *s, const tc_step_plan *step,
                        const tc_rt_tensor **inputs, tc_rt_tensor *outputs, tc_error *err) {
    memset(ctx, 0, sizeof *ctx);
    ctx->node = step->node_free ? NULL : step->node;
    ctx->params = step->params;
    ctx->op_type = step->node->op_type;
    ctx->input_names = step->input_names;
    ctx->work = step->work;
    ctx->types = s->options.types;
    ctx->opset = step->opset;
    ctx->inputs = inputs;
    ctx->n_inputs = step->n_inputs;
    ctx->outputs = outputs;
    ctx->n_outputs = step->n_outputs;
    ctx->session = s;
    ctx->budget = &s->budget;
    ctx->host = s->host;
    ctx->n_threads = s->step_threads;
    ctx->pool = s->options.pool ? s->options.pool : s->own_pool;
    ctx->err = err;
    ctx->crop = step->crop;
    ctx->activation = step->activation;
    ctx->convention = s->options.convention;
}
