/* float16 and bfloat16 around float kernels: one mechanism instead of half kernels. For a step
 * whose op computes in float (not listed by tc_op_half_native), the executor gives the kernel
 * float32 copies of its float16/bfloat16 inputs, runs the float32 kernel, and rounds each float
 * output the node declares as a 16-bit float (or leaves undeclared) back to that type, to
 * nearest even (NaN stays NaN, overflow becomes infinity, subnormals are rounded, not flushed).
 * Widening is exact, so an op that only moves data gives the same bits either way; the list of
 * native ops only saves the copies. */
#include "runtime/kernel_util.h"
#include "runtime/session_internal.h"

#include <stdlib.h>

static bool is_half(tconv_dtype d) {
    return d == TCONV_DTYPE_FLOAT16 || d == TCONV_DTYPE_BFLOAT16;
}

/* The 16-bit float type of the step's first such input, or UNDEFINED. */
static tconv_dtype half_input_dtype(const tc_kernel_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        if (ctx->inputs[i] && is_half(ctx->inputs[i]->dtype))
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

static void convert_range(void *p, int64_t begin, int64_t end) {
    const convert_job *job = p;
    bool bf16 = job->half == TCONV_DTYPE_BFLOAT16;
    if (job->widen) {
        const uint16_t *in = job->src;
        float *out = job->dst;
        for (int64_t i = begin; i < end; i++)
            out[i] = bf16 ? tc_bfloat16_to_float(in[i]) : tc_half_to_float(in[i]);
    } else {
        const float *in = job->src;
        uint16_t *out = job->dst;
        for (int64_t i = begin; i < end; i++)
            out[i] = bf16 ? tc_float_to_bfloat16(in[i]) : tc_float_to_half(in[i]);
    }
}

static tconv_status convert(tc_kernel_ctx *ctx, const tc_rt_tensor *src, tconv_dtype to,
                            tc_rt_tensor *dst) {
    /* every element is written below */
    tconv_status st =
        tc_session_alloc_uninit(ctx->session, dst, to, src->rank, src->dims, ctx->err);
    if (st != TCONV_OK)
        return st;
    bool widen = to == TCONV_DTYPE_FLOAT;
    convert_job job = {src->data, dst->data, widen ? src->dtype : to, widen};
    tc_parallel_ranges(ctx->pool, ctx->n_threads, src->n_elements, TCONV_PARALLEL_COST_STREAM, 16,
                       4096, convert_range, &job);
    return TCONV_OK;
}

/* Output i's type: the node's declared one when it is a 16-bit float or float (LayerNorm's Mean
 * stays float for float16 data), else the inputs' 16-bit type. */
static tconv_dtype output_target(const tconv_node *node, size_t i, tconv_dtype half) {
    const tconv_value *v = i < node->n_outputs ? node->outputs[i] : NULL;
    tconv_dtype declared = v ? v->type.dtype : TCONV_DTYPE_UNDEFINED;
    if (is_half(declared) || declared == TCONV_DTYPE_FLOAT)
        return declared;
    return half;
}

static tconv_status narrow_outputs(tc_kernel_ctx *ctx, tconv_dtype half) {
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        tc_rt_tensor *out = &ctx->outputs[i];
        tconv_dtype to = output_target(ctx->node, i, half);
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

static tconv_status run_widened(const tc_step_plan *step, tc_kernel_ctx *ctx, tconv_dtype half) {
    size_t n = ctx->n_inputs;
    tc_rt_tensor *wide = calloc(n ? n : 1, sizeof *wide);
    const tc_rt_tensor **ptrs = calloc(n ? n : 1, sizeof *ptrs);
    if (!wide || !ptrs) {
        free(wide);
        free(ptrs);
        return tc_error_nomem(ctx->err, "float32 copies of float16 inputs");
    }
    tconv_status st = TCONV_OK;
    for (size_t i = 0; i < n && st == TCONV_OK; i++) {
        ptrs[i] = ctx->inputs[i];
        if (ctx->inputs[i] && is_half(ctx->inputs[i]->dtype)) {
            st = convert(ctx, ctx->inputs[i], TCONV_DTYPE_FLOAT, &wide[i]);
            ptrs[i] = &wide[i];
        }
    }
    const tc_rt_tensor *const *saved = ctx->inputs;
    if (st == TCONV_OK) {
        ctx->inputs = ptrs;
        st = step->kernel(ctx);
        ctx->inputs = saved;
    }
    for (size_t i = 0; i < n; i++)
        tc_session_release(ctx->session, &wide[i]);
    free(wide);
    free(ptrs);
    if (st == TCONV_ERR_UNSUPPORTED) /* a dtype message would name float, not what was given */
        return tc_error_prefix(ctx->err, st,
                               "%s inputs widened to float: ", tconv_dtype_name(half));
    return st == TCONV_OK ? narrow_outputs(ctx, half) : st;
}

tconv_status tc_step_run_kernel(const tc_step_plan *step, tc_kernel_ctx *ctx) {
    tconv_dtype half = step->half_native ? TCONV_DTYPE_UNDEFINED : half_input_dtype(ctx);
    if (half == TCONV_DTYPE_UNDEFINED)
        return step->kernel(ctx);
    return run_widened(step, ctx, half);
}
