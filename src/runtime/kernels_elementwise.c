/* Elementwise kernels: Relu, LeakyRelu, Sigmoid, Tanh and Clip (float and double; Relu also
 * int32/int64, Clip int8, int32 and int64). The broadcasting binary ops (Add, Sub, Mul, Div ...)
 * are in kernels_math.c. */
#include "runtime/fast_tanh.h"
#include "runtime/kernel_util.h"

#include <float.h>
#include <math.h>

#define DTYPES_F64 TCONV_DTYPE_BIT(TCONV_DTYPE_DOUBLE)
#define DTYPES_REAL (TCONV_DTYPES_FLOAT | DTYPES_F64)
#define DTYPES_NUMERIC_F64 (TCONV_DTYPES_NUMERIC | DTYPES_F64)
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

/* ---------------------------------------------------------------- float32, split over threads
 *
 * The float32 bodies run over ranges of elements (tc_parallel_ranges): a large tensor is split
 * over the session's threads, a small one runs in the calling thread. */

typedef enum f32_op { F32_RELU, F32_LEAKY_RELU, F32_SIGMOID, F32_TANH, F32_CLIP } f32_op;

typedef struct f32_job {
    f32_op op;
    const float *in;
    float *out;
    float alpha, lo, hi; /* LeakyRelu's slope; Clip's bounds */
} f32_job;

/* Work per element (parallel.h): the polynomial tanh about 4 streamed elements, sigmoid's expf
 * a libm call. */
#define COST_STREAM TCONV_PARALLEL_COST_STREAM
#define COST_TANH (4.0 * TCONV_PARALLEL_COST_STREAM)
#define COST_SIGMOID TCONV_PARALLEL_COST_LIBM

static float sigmoid(float v);
static void tanh_array(float *restrict out, const float *restrict in, int64_t n);
static void clip_f32(const float *in, float *out, int64_t n, float lo, float hi);

static void f32_range(void *vjob, int64_t begin, int64_t end) {
    const f32_job *job = vjob;
    const float *restrict in = job->in + begin;
    float *restrict out = job->out + begin;
    int64_t n = end - begin;
    float alpha = job->alpha;
    switch (job->op) {
    case F32_RELU:
        for (int64_t i = 0; i < n; i++)
            out[i] = in[i] < 0.0f ? 0.0f : in[i]; /* NaN stays NaN */
        break;
    case F32_LEAKY_RELU:
        for (int64_t i = 0; i < n; i++)
            out[i] = in[i] < 0.0f ? alpha * in[i] : in[i];
        break;
    case F32_SIGMOID:
        for (int64_t i = 0; i < n; i++)
            out[i] = sigmoid(in[i]);
        break;
    case F32_TANH:
        tanh_array(out, in, n);
        break;
    case F32_CLIP:
        clip_f32(in, out, n, job->lo, job->hi);
        break;
    }
}

static void run_f32(tc_kernel_ctx *ctx, f32_job job, const tc_rt_tensor *x, tc_rt_tensor *y) {
    static const double costs[] = {COST_STREAM, COST_STREAM, COST_SIGMOID, COST_TANH, COST_STREAM};
    job.in = x->data;
    job.out = y->data;
    /* whole cache lines per range, at least 4096 elements */
    tc_parallel_ranges(ctx->pool, ctx->n_threads, x->n_elements, costs[job.op], 16, 4096, f32_range,
                       &job);
}

tconv_status tc_run_relu(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    uint32_t dtypes = ctx->opset >= 14 ? DTYPES_NUMERIC_F64 : DTYPES_REAL;
    tconv_status st = prepare_unary(ctx, dtypes, &x, &y);
    if (st != TCONV_OK)
        return st;
    int64_t n = x->n_elements;
    if (x->dtype == TCONV_DTYPE_FLOAT) {
        run_f32(ctx, (f32_job){.op = F32_RELU}, x, y);
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
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    float alpha;
    tconv_status st = tc_node_attr_float(ctx->node, "alpha", 0.01f, &alpha, ctx->err);
    if (st == TCONV_OK)
        st = prepare_unary(ctx, DTYPES_REAL, &x, &y);
    if (st != TCONV_OK)
        return st;
    if (x->dtype == TCONV_DTYPE_DOUBLE) {
        const double *in = x->data;
        double *out = y->data;
        for (int64_t i = 0; i < x->n_elements; i++)
            out[i] = in[i] < 0.0 ? (double)alpha * in[i] : in[i];
        return TCONV_OK;
    }
    run_f32(ctx, (f32_job){.op = F32_LEAKY_RELU, .alpha = alpha}, x, y);
    return TCONV_OK;
}

static float sigmoid(float v) {
    if (v >= 0.0f)
        return 1.0f / (1.0f + expf(-v));
    float e = expf(v);
    return e / (1.0f + e);
}

tconv_status tc_run_sigmoid(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    tconv_status st = prepare_unary(ctx, DTYPES_REAL, &x, &y);
    if (st != TCONV_OK)
        return st;
    if (x->dtype == TCONV_DTYPE_DOUBLE) {
        const double *in = x->data;
        double *out = y->data;
        for (int64_t i = 0; i < x->n_elements; i++)
            out[i] = in[i] >= 0.0 ? 1.0 / (1.0 + exp(-in[i])) : exp(in[i]) / (1.0 + exp(in[i]));
        return TCONV_OK;
    }
    run_f32(ctx, (f32_job){.op = F32_SIGMOID}, x, y);
    return TCONV_OK;
}

/* restrict: without it GCC keeps the loop scalar (in and out might overlap). */
static void tanh_array(float *restrict out, const float *restrict in, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        out[i] = tc_tanh_f32(in[i]);
}

tconv_status tc_run_tanh(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    tconv_status st = prepare_unary(ctx, DTYPES_REAL, &x, &y);
    if (st != TCONV_OK)
        return st;
    if (x->dtype == TCONV_DTYPE_DOUBLE) {
        const double *in = x->data;
        double *out = y->data;
        for (int64_t i = 0; i < x->n_elements; i++)
            out[i] = tanh(in[i]); /* libm: exact to an ulp */
        return TCONV_OK;
    }
    run_f32(ctx, (f32_job){.op = F32_TANH}, x, y);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Clip */

/* min(max(x, lo), hi), as numpy: with lo > hi every element becomes hi; NaN stays NaN. */
static void clip_f32(const float *in, float *out, int64_t n, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) {
        float v = in[i] < lo ? lo : in[i];
        out[i] = v > hi ? hi : v;
    }
}

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
    tconv_status st = tc_node_attr_float(ctx->node, "min", -FLT_MAX, &lo, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float(ctx->node, "max", FLT_MAX, &hi, ctx->err);
    if (st == TCONV_OK)
        st = prepare_unary(ctx, DTYPES_REAL, &x, &y);
    if (st != TCONV_OK)
        return st;
    if (x->dtype == TCONV_DTYPE_DOUBLE)
        clip_f64(x->data, y->data, x->n_elements, lo, hi);
    else
        run_f32(ctx, (f32_job){.op = F32_CLIP, .lo = lo, .hi = hi}, x, y);
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
        ctx->opset >= 12 ? DTYPES_NUMERIC_F64 | TCONV_DTYPE_BIT(TCONV_DTYPE_INT8) : DTYPES_REAL;
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
        run_f32(ctx, (f32_job){.op = F32_CLIP, .lo = lo, .hi = hi}, x, y);
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
