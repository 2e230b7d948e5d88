/* Elementwise kernels: Relu, LeakyRelu, Elu, HardSigmoid, Sigmoid, Tanh and Clip (float and
 * double; Relu also int32/int64, Clip int8, int32 and int64), and the epilogue that applies any
 * fusable activation (tc_kernel_activation_apply). The broadcasting binary ops (Add, Sub, Mul, Div
 * ...) are in kernels_math.c. */
#include "runtime/kernels/activation.h"
#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel_util.h"

#include <math.h>
#include <string.h>

#define DTYPES_F64 TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE)
#define DTYPES_REAL (TC_DTYPES_FLOAT | DTYPES_F64)
#define DTYPES_HALF (TC_DTYPE_BIT(TCONV_DTYPE_FLOAT16) | TC_DTYPE_BIT(TCONV_DTYPE_BFLOAT16))
#define DTYPES_NUMERIC_F64 (TC_DTYPES_NUMERIC | DTYPES_F64)
/* ---------------------------------------------------------------- unary */

/* Checks the dtype, allocates an output shaped like input 0 (not zeroed: every kernel here
 * writes each element). */
static tconv_status prepare_unary(tc_kernel_ctx *ctx, uint32_t dtypes, const tc_rt_tensor **x,
                                  tc_rt_tensor **y) {
    tconv_status st = tc_kernel_require_input(ctx, 0, x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, dtypes);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output_uninit(ctx, 0, (*x)->dtype, (*x)->rank, (*x)->dims, y);
    return st;
}

/* The expansions of ops.def below go over the fusable activations (ACT(fn, cost) on a TC_KIND
 * line): a case of TC_ACTIVATION_<fn> calling its scalar function tc_act_<fn>f (activation.h), so
 * a row made fusable needs nothing here. */
#define TC_OP(...)
#define ACT0
#define TC_KIND(dom, name, flags, activation) activation

/* One value through the activation: the standalone kernels and the fused epilogues (Conv,
 * ConvTranspose) compute exactly this. */
static inline __attribute__((always_inline)) float activation_one(tc_activation_kind kind, float a,
                                                                  float b, float v) {
    switch (kind) {
#define ACT(fn, cost)                                                                              \
    case TC_ACTIVATION_##fn:                                                                       \
        return tc_act_##fn##f(v, a, b);
#include "ir/ops.def"
#undef ACT
    default:
        return v;
    }
}

/* Separate loops for in place and not: restrict lets GCC vectorize without alias checks, and an
 * in-place call must not go through restrict pointers. Inlined with a constant kind per call. */
static inline __attribute__((always_inline)) void activation_span(tc_activation_kind kind, float a,
                                                                  float b, float *restrict dst,
                                                                  const float *restrict src,
                                                                  int64_t n) {
    for (int64_t i = 0; i < n; i++)
        dst[i] = activation_one(kind, a, b, src[i]);
}

/* dst[i] = act(src[i] + b): the sum rounded to float first, as an Add then the activation. dst
 * may be src (each element is read before it is written), so no restrict. */
static inline __attribute__((always_inline)) void activation_span_plus(tc_activation_kind kind,
                                                                       float a, float b, float *dst,
                                                                       const float *src, float bias,
                                                                       int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float v = src[i] + bias;
        dst[i] = activation_one(kind, a, b, v);
    }
}

static inline __attribute__((always_inline)) void
activation_in_place(tc_activation_kind kind, float a, float b, float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        x[i] = activation_one(kind, a, b, x[i]);
}

/* The activations run over whole Conv outputs: each entry point has an AVX-512 copy (16 floats a
 * step instead of SSE's 4) and an AVX2 one (8) chosen at run time. The same IEEE operations
 * either way (C11 mode contracts no a*b+c into an FMA), so the bits do not depend on the copy.
 * On an AVX2-only core (Zen 3) DCGAN's final Tanh (2 x 3 x 64 x 64) took 6.4% of the model's
 * time at SSE's width. */
#define ACTIVATION_CASE(KIND)                                                                      \
    case KIND:                                                                                     \
        if (dst == src)                                                                            \
            activation_in_place(KIND, act->alpha, act->beta, dst, n);                              \
        else                                                                                       \
            activation_span(KIND, act->alpha, act->beta, dst, src, n);                             \
        return

static inline __attribute__((always_inline)) void
activation_apply(const tc_kernel_activation *act, float *dst, const float *src, int64_t n) {
    switch (act->kind) {
#define ACT(fn, cost) ACTIVATION_CASE(TC_ACTIVATION_##fn);
#include "ir/ops.def"
#undef ACT
    default:
        return;
    }
}

#define ACTIVATION_PLUS_CASE(KIND)                                                                 \
    case KIND:                                                                                     \
        activation_span_plus(KIND, act->alpha, act->beta, dst, src, bias, n);                      \
        return

static inline __attribute__((always_inline)) void
activation_apply_plus(const tc_kernel_activation *act, float *dst, const float *src, float bias,
                      int64_t n) {
    switch (act->kind) {
#define ACT(fn, cost) ACTIVATION_PLUS_CASE(TC_ACTIVATION_##fn);
#include "ir/ops.def"
#undef ACT
    default:
        return;
    }
}

TC_ISA_DISPATCH(, tc_kernel_activation_apply, activation_apply,
                (const tc_kernel_activation *act, float *dst, const float *src, int64_t n),
                (act, dst, src, n))

TC_ISA_DISPATCH(, tc_kernel_activation_apply_plus, activation_apply_plus,
                (const tc_kernel_activation *act, float *dst, const float *src, float bias,
                 int64_t n),
                (act, dst, src, bias, n))

/* Work per element (parallel.h): ops.def's cost column, in streamed elements (the polynomial
 * tanh and the branch-free sigmoid about 4 each). */
static double activation_cost(tc_activation_kind kind) {
    static const unsigned char COST[TC_ACTIVATION_COUNT] = {
#define ACT(fn, cost) [TC_ACTIVATION_##fn] = cost,
#include "ir/ops.def"
#undef ACT
    };
    return (kind < TC_ACTIVATION_COUNT && COST[kind] ? COST[kind] : 1) * TC_PARALLEL_COST_STREAM;
}

/* The double body of an activation op: activation.h's double function of its kind (ops.def's
 * activation column). */
static void activation_f64(tc_activation_kind kind, double a, double b, const tc_rt_tensor *x,
                           tc_rt_tensor *y) {
    const double *in = x->data;
    double *out = y->data;
    switch (kind) {
#define ACT(fn, cost)                                                                              \
    case TC_ACTIVATION_##fn:                                                                       \
        for (int64_t i = 0; i < x->n_elements; i++)                                                \
            out[i] = tc_act_##fn(in[i], a, b);                                                     \
        return;
#include "ir/ops.def"
#undef ACT
    default:
        return;
    }
}

#undef TC_KIND
#undef ACT0
#undef TC_OP

typedef struct activation_job {
    tc_kernel_activation act;
    const float *in;
    float *out;
} activation_job;

static void activation_range(void *vjob, int64_t begin, int64_t end) {
    const activation_job *job = vjob;
    tc_kernel_activation_apply(&job->act, job->out + begin, job->in + begin, end - begin);
}

/* The float32 bodies run over ranges of elements (tc_parallel_ranges): a large tensor is split
 * over the session's threads, a small one runs in the calling thread. */
void tc_kernel_activation_apply_threads(const tc_kernel_ctx *ctx, const tc_kernel_activation *act,
                                        float *dst, const float *src, int64_t n) {
    activation_job job = {*act, src, dst};
    /* whole cache lines per range, at least 4096 elements */
    tc_parallel_ranges(ctx->pool, ctx->n_threads, n, activation_cost(act->kind), 16, 4096,
                       activation_range, &job);
}

static void activation_f32(tc_kernel_ctx *ctx, tc_activation_kind kind, float a, float b,
                           const tc_rt_tensor *x, tc_rt_tensor *y) {
    tc_kernel_activation act = {kind, a, b};
    tc_kernel_activation_apply_threads(ctx, &act, y->data, x->data, x->n_elements);
}

/* A standalone activation op on float or double: the epilogue's float bodies, activation.h's
 * double ones. */
static tconv_status run_activation(tc_kernel_ctx *ctx, tc_activation_kind kind, float a, float b) {
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    tconv_status st = prepare_unary(ctx, DTYPES_REAL, &x, &y);
    if (st != TCONV_OK)
        return st;
    if (x->dtype == TCONV_DTYPE_DOUBLE)
        activation_f64(kind, a, b, x, y);
    else
        activation_f32(ctx, kind, a, b, x, y);
    return TCONV_OK;
}

/* Relu on float16/bfloat16 bits (the op is TC_OPF_HALF_NATIVE: no float32 copy in and out,
 * about a tenth of a float16 DCGAN's time). The same bits as widening, Relu in float and
 * rounding back: a negative number and -0 become +0, positive numbers stay, and a NaN goes
 * through those very conversions (the rounding quiets it). */
static uint16_t relu_half_bits(uint16_t h, bool bf16) {
    uint16_t magnitude = h & 0x7fff, nan_above = bf16 ? 0x7f80 : 0x7c00;
    if (magnitude > nan_above)
        return bf16 ? tc_float_to_bfloat16(tc_bfloat16_to_float(h))
                    : tc_float_to_half(tc_half_to_float(h));
    return h >= 0x8000 ? 0 : h; /* the sign set: a negative number or -0 */
}

typedef struct relu_half_job {
    const uint16_t *in;
    uint16_t *out;
    bool bf16;
} relu_half_job;

/* A vectorizable pass (a pattern from 0x8000 up is -0, a negative number, or a NaN with its
 * sign set), then, only for a range holding a NaN, the exact one. */
static void relu_half_range(void *vjob, int64_t begin, int64_t end) {
    const relu_half_job *job = vjob;
    const uint16_t *restrict in = job->in;
    uint16_t *restrict out = job->out;
    uint16_t nan_above = job->bf16 ? 0x7f80 : 0x7c00;
    int any_nan = 0;
    for (int64_t i = begin; i < end; i++) {
        uint16_t h = in[i];
        any_nan |= (h & 0x7fff) > nan_above;
        out[i] = h >= 0x8000 ? 0 : h;
    }
    if (any_nan) {
        for (int64_t i = begin; i < end; i++)
            out[i] = relu_half_bits(in[i], job->bf16);
    }
}

tconv_status tc_run_relu(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    uint32_t dtypes = (ctx->opset >= 14 ? DTYPES_NUMERIC_F64 : DTYPES_REAL) | DTYPES_HALF;
    tconv_status st = prepare_unary(ctx, dtypes, &x, &y);
    if (st != TCONV_OK)
        return st;
    int64_t n = x->n_elements;
    if (tc_dtype_is_half(x->dtype)) {
        relu_half_job job = {x->data, y->data, x->dtype == TCONV_DTYPE_BFLOAT16};
        tc_parallel_ranges(ctx->pool, ctx->n_threads, n, TC_PARALLEL_COST_STREAM, 32, 4096,
                           relu_half_range, &job);
    } else if (x->dtype == TCONV_DTYPE_FLOAT) {
        activation_f32(ctx, TC_ACTIVATION_relu, 0.0f, 0.0f, x, y);
    } else if (x->dtype == TCONV_DTYPE_DOUBLE) {
        const double *in = x->data;
        double *out = y->data;
        for (int64_t i = 0; i < n; i++)
            out[i] = in[i] < 0.0 ? 0.0 : in[i];
    } else if (x->dtype == TCONV_DTYPE_INT32) {
        const int32_t *in = x->data;
        int32_t *out = y->data;
        for (int64_t i = 0; i < n; i++)
            out[i] = in[i] < 0 ? 0 : in[i];
    } else {
        const int64_t *in = x->data;
        int64_t *out = y->data;
        for (int64_t i = 0; i < n; i++)
            out[i] = in[i] < 0 ? 0 : in[i];
    }
    return TCONV_OK;
}

tconv_status tc_run_leaky_relu(tc_kernel_ctx *ctx) {
    float alpha;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "alpha", &alpha, ctx->err);
    return st == TCONV_OK ? run_activation(ctx, TC_ACTIVATION_leaky_relu, alpha, 0.0f) : st;
}

/* Elu and HardSigmoid here too, through the activations' copies per instruction set (in the
 * generic unary loop, built for the baseline, EnCodec's standalone Elus took 7% of its time) */
tconv_status tc_run_elu(tc_kernel_ctx *ctx) {
    float alpha;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "alpha", &alpha, ctx->err);
    return st == TCONV_OK ? run_activation(ctx, TC_ACTIVATION_elu, alpha, 0.0f) : st;
}

tconv_status tc_run_hard_sigmoid(tc_kernel_ctx *ctx) {
    float alpha, beta;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "alpha", &alpha, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "beta", &beta, ctx->err);
    return st == TCONV_OK ? run_activation(ctx, TC_ACTIVATION_hard_sigmoid, alpha, beta) : st;
}

tconv_status tc_run_sigmoid(tc_kernel_ctx *ctx) {
    return run_activation(ctx, TC_ACTIVATION_sigmoid, 0.0f, 0.0f);
}

tconv_status tc_run_tanh(tc_kernel_ctx *ctx) {
    return run_activation(ctx, TC_ACTIVATION_tanh, 0.0f, 0.0f);
}

/* ---------------------------------------------------------------- Clip */

/* min(max(x, lo), hi), as numpy (float: activation_one). */
#define DEFINE_CLIP_INT(name, T)                                                                   \
    static void name(const T *in, T *out, int64_t n, T lo, T hi) {                                 \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T v = in[i] < lo ? lo : in[i];                                                         \
            out[i] = v > hi ? hi : v;                                                              \
        }                                                                                          \
    }
DEFINE_CLIP_INT(clip_f64, double)
DEFINE_CLIP_INT(clip_i8, int8_t)
DEFINE_CLIP_INT(clip_i32, int32_t)
DEFINE_CLIP_INT(clip_i64, int64_t)

tconv_status tc_run_clip_6(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    float lo, hi;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "min", &lo, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "max", &hi, ctx->err);
    if (st == TCONV_OK)
        st = prepare_unary(ctx, DTYPES_REAL, &x, &y);
    if (st != TCONV_OK)
        return st;
    if (x->dtype == TCONV_DTYPE_DOUBLE)
        clip_f64(x->data, y->data, x->n_elements, lo, hi);
    else
        activation_f32(ctx, TC_ACTIVATION_clip, lo, hi, x, y);
    return TCONV_OK;
}

/* Optional scalar bound input (min or max) of Clip-11+; must have the data's dtype. */
static tconv_status clip_bound(tc_kernel_ctx *ctx, size_t index, const tc_rt_tensor *x,
                               bool *present, const tc_rt_tensor **bound) {
    const tc_rt_tensor *b = tc_kernel_input(ctx, index);
    *present = b != NULL;
    *bound = b;
    if (!b)
        return TCONV_OK;
    if (b->dtype != x->dtype)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "input %zu ('%s') is %s, the data is %s",
                            index, tc_kernel_input_name(ctx, index), tconv_dtype_name(b->dtype),
                            tconv_dtype_name(x->dtype));
    if (b->n_elements != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "input %zu ('%s') must be a scalar, has %lld elements", index,
                            tc_kernel_input_name(ctx, index), (long long)b->n_elements);
    return TCONV_OK;
}

tconv_status tc_run_clip_11(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *bmin, *bmax;
    tc_rt_tensor *y;
    bool has_min, has_max;
    uint32_t dtypes =
        ctx->opset >= 12 ? DTYPES_NUMERIC_F64 | TC_DTYPE_BIT(TCONV_DTYPE_INT8) : DTYPES_REAL;
    tconv_status st = prepare_unary(ctx, dtypes, &x, &y);
    if (st == TCONV_OK)
        st = clip_bound(ctx, 1, x, &has_min, &bmin);
    if (st == TCONV_OK)
        st = clip_bound(ctx, 2, x, &has_max, &bmax);
    if (st != TCONV_OK)
        return st;
    if (x->dtype == TCONV_DTYPE_FLOAT) {
        float lo = has_min ? *(const float *)bmin->data : -INFINITY;
        float hi = has_max ? *(const float *)bmax->data : INFINITY;
        activation_f32(ctx, TC_ACTIVATION_clip, lo, hi, x, y);
    } else if (x->dtype == TCONV_DTYPE_DOUBLE) {
        double lo = has_min ? *(const double *)bmin->data : -INFINITY;
        double hi = has_max ? *(const double *)bmax->data : INFINITY;
        clip_f64(x->data, y->data, x->n_elements, lo, hi);
    } else if (x->dtype == TCONV_DTYPE_INT8) {
        int8_t lo = has_min ? *(const int8_t *)bmin->data : INT8_MIN;
        int8_t hi = has_max ? *(const int8_t *)bmax->data : INT8_MAX;
        clip_i8(x->data, y->data, x->n_elements, lo, hi);
    } else if (x->dtype == TCONV_DTYPE_INT32) {
        int32_t lo = has_min ? *(const int32_t *)bmin->data : INT32_MIN;
        int32_t hi = has_max ? *(const int32_t *)bmax->data : INT32_MAX;
        clip_i32(x->data, y->data, x->n_elements, lo, hi);
    } else {
        int64_t lo = has_min ? *(const int64_t *)bmin->data : INT64_MIN;
        int64_t hi = has_max ? *(const int64_t *)bmax->data : INT64_MAX;
        clip_i64(x->data, y->data, x->n_elements, lo, hi);
    }
    return TCONV_OK;
}
