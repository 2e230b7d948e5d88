/* Normalizations: Softmax and LogSoftmax (opset < 13: the input coerced to 2-D at axis; 13+:
 * along one axis), LayerNormalization, GroupNormalization (opset 18: scale and bias per group;
 * 21: per channel), InstanceNormalization and LRN; float32 and float64.
 *
 * Statistics are computed in double whatever the element type: the mean first, then the
 * variance as the mean of squared deviations (two passes: no cancellation of E[x^2] - E[x]^2),
 * and softmax subtracts the maximum before exponentiating. Independent rows or groups are split
 * over the kernel's thread pool when there is enough work. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel_util.h"

#define FLOAT_DTYPES (TC_DTYPES_FLOAT | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE))

/* Element i of a float or double buffer, and a store into one. */
static inline double load_f(const void *p, bool is_double, int64_t i) {
    return is_double ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static inline void store_f(void *p, bool is_double, int64_t i, double v) {
    if (is_double)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

static int threads_for(const tc_kernel_ctx *ctx, int64_t elements, double flops_per_element) {
    return tc_parallel_threads_for_work(ctx->pool, ctx->n_threads,
                                        (double)elements * flops_per_element);
}

/* ================================================================ Softmax, LogSoftmax */

typedef struct softmax_job {
    const void *x;
    void *y;
    bool is_double, log;
    int64_t n, inner; /* the normalized axis (or coerced row) and what follows it */
} softmax_job;

/* One task, float64 or any layout: every (inner) row of outer index o. */
static void softmax_task_generic(const softmax_job *job, int64_t o) {
    bool dbl = job->is_double;
    for (int64_t i = 0; i < job->inner; i++) {
        int64_t first = o * job->n * job->inner + i, step = job->inner;
        double max = -INFINITY;
        for (int64_t k = 0; k < job->n; k++) {
            double v = load_f(job->x, dbl, first + k * step);
            max = v > max ? v : max;
        }
        if (!isfinite(max))
            max = 0.0; /* all -inf, or inf/NaN present: let them propagate */
        double sum = 0.0;
        for (int64_t k = 0; k < job->n; k++) {
            double e = exp(load_f(job->x, dbl, first + k * step) - max);
            sum += e;
            if (!job->log)
                store_f(job->y, dbl, first + k * step, e);
        }
        double log_sum = log(sum);
        for (int64_t k = 0; k < job->n; k++) {
            int64_t at = first + k * step;
            if (job->log)
                store_f(job->y, dbl, at, load_f(job->x, dbl, at) - max - log_sum);
            else
                store_f(job->y, dbl, at, load_f(job->y, dbl, at) / sum);
        }
    }
}

#define SOFTMAX_COLS 256

/* float32: columns of the inner rows SOFTMAX_COLS at a time (unit stride), expf, sums in
 * double. A contiguous row (inner 1) is the case of one column. */
static void softmax_columns_f32(const softmax_job *job, const float *x, float *y, int64_t cols) {
    float max[SOFTMAX_COLS];
    double sum[SOFTMAX_COLS];
    int64_t n = job->n, inner = job->inner;
    for (int64_t j = 0; j < cols; j++) {
        max[j] = -INFINITY;
        sum[j] = 0.0;
    }
    for (int64_t k = 0; k < n; k++)
        for (int64_t j = 0; j < cols; j++)
            max[j] = x[k * inner + j] > max[j] ? x[k * inner + j] : max[j];
    for (int64_t j = 0; j < cols; j++)
        max[j] = isfinite(max[j]) ? max[j] : 0.0f;
    for (int64_t k = 0; k < n; k++) {
        for (int64_t j = 0; j < cols; j++) {
            float e = expf(x[k * inner + j] - max[j]);
            sum[j] += e;
            if (!job->log)
                y[k * inner + j] = e;
        }
    }
    /* log: y = (x - max) - log sum, in that order (x - max is exact for nearby values; max +
     * log sum would round at max's magnitude); else y = e * (1 / sum). */
    float scale[SOFTMAX_COLS];
    for (int64_t j = 0; j < cols; j++)
        scale[j] = (float)(job->log ? log(sum[j]) : 1.0 / sum[j]);
    for (int64_t k = 0; k < n; k++)
        for (int64_t j = 0; j < cols; j++)
            y[k * inner + j] =
                job->log ? (x[k * inner + j] - max[j]) - scale[j] : y[k * inner + j] * scale[j];
}

static void softmax_row_f32(const softmax_job *job, const float *x, float *y) {
    int64_t n = job->n;
    float max = -INFINITY;
    for (int64_t k = 0; k < n; k++)
        max = x[k] > max ? x[k] : max;
    max = isfinite(max) ? max : 0.0f;
    double s[4] = {0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        for (int l = 0; l < 4; l++) {
            float e = expf(x[k + l] - max);
            s[l] += e;
            if (!job->log)
                y[k + l] = e;
        }
    }
    for (; k < n; k++) {
        float e = expf(x[k] - max);
        s[0] += e;
        if (!job->log)
            y[k] = e;
    }
    double sum = (s[0] + s[1]) + (s[2] + s[3]);
    if (job->log) {
        float log_sum = (float)log(sum);
        for (k = 0; k < n; k++)
            y[k] = (x[k] - max) - log_sum;
    } else {
        float scale = (float)(1.0 / sum);
        for (k = 0; k < n; k++)
            y[k] *= scale;
    }
}

/* Task o: outer index o / col_tasks, columns from (o % col_tasks) * SOFTMAX_COLS. */
static void softmax_task(void *arg, int64_t task, int worker) {
    (void)worker;
    const softmax_job *job = arg;
    if (job->is_double) {
        softmax_task_generic(job, task);
        return;
    }
    int64_t col_tasks = (job->inner + SOFTMAX_COLS - 1) / SOFTMAX_COLS;
    int64_t o = task / col_tasks, j0 = task % col_tasks * SOFTMAX_COLS;
    int64_t cols = job->inner - j0 < SOFTMAX_COLS ? job->inner - j0 : SOFTMAX_COLS;
    int64_t first = o * job->n * job->inner + j0;
    const float *x = (const float *)job->x + first;
    float *y = (float *)job->y + first;
    if (job->inner == 1)
        softmax_row_f32(job, x, y);
    else
        softmax_columns_f32(job, x, y, cols);
}

static tconv_status run_softmax(tc_kernel_ctx *ctx, bool log) {
    const tc_rt_tensor *x;
    bool coerce_2d = ctx->opset < 13;
    int64_t axis;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, FLOAT_DTYPES);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", coerce_2d ? 1 : -1, &axis, ctx->err);
    if (st != TCONV_OK)
        return st;
    /* Before 13 axis may equal rank (a 2-D view with one column per row). */
    int limit = coerce_2d ? x->rank : x->rank - 1;
    if (axis < -(int64_t)x->rank || axis > limit)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "axis %lld is out of range for rank %d",
                            (long long)axis, x->rank);
    if (axis < 0)
        axis += x->rank;
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    int64_t outer = 1, n = 1, inner = 1; /* all dims > 0 here: products <= n_elements */
    for (int i = 0; i < x->rank; i++) {
        if (i < axis)
            outer *= x->dims[i];
        else if (i == axis || coerce_2d)
            n *= x->dims[i];
        else
            inner *= x->dims[i];
    }
    softmax_job job = {x->data, y->data, x->dtype == TCONV_DTYPE_DOUBLE, log, n, inner};
    int64_t n_tasks = job.is_double ? outer : outer * ((inner + SOFTMAX_COLS - 1) / SOFTMAX_COLS);
    int threads = threads_for(ctx, x->n_elements, TC_PARALLEL_COST_LIBM); /* an expf each */
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, n_tasks), n_tasks, softmax_task, &job);
    return TCONV_OK;
}

tconv_status tc_run_softmax(tc_kernel_ctx *ctx) {
    return run_softmax(ctx, false);
}

tconv_status tc_run_log_softmax(tc_kernel_ctx *ctx) {
    return run_softmax(ctx, true);
}

/* ================================================================ mean/variance normalization */

/* Blocks of `block` contiguous elements normalized on their own statistics, then scaled and
 * shifted. The affine parameter of element j of block b is
 *   index = (b % period) * per_block + j / run
 * LayerNormalization: period 1, run 1 (one value per element of the normalized shape);
 * InstanceNormalization: period C, run block (one per channel); GroupNormalization-21: period
 * G, per_block C/G, run spatial size; GroupNormalization-18: period G, run block. */
typedef struct norm_job {
    const void *x;
    void *y;
    bool is_double;
    int64_t block;
    double eps;
    const double *scale, *bias; /* bias: zeros when the input is absent */
    int64_t period, per_block, run;
    void *mean, *inv_std; /* LayerNormalization's optional statistics, one per block, or NULL */
    bool stats_double;
    bool avx2, avx512; /* tc_cpu_has_avx2(), tc_cpu_has_avx512() */
} norm_job;

/* Mean and sum of squared deviations of x[0, m) (float32), NORM_LANES double accumulators a
 * pass: independent chains, so the adds overlap instead of waiting on each other (a block of a
 * few thousand elements is latency bound with one vector of them). */
#define NORM_LANES 32

/* The lanes added pairwise (halves, vectorized), not one after the other: a chain of 32
 * dependent adds cost more than a 64-element block's whole pass. */
static inline __attribute__((always_inline)) double lanes_sum(double *v) {
    for (int w = NORM_LANES / 2; w > 0; w /= 2)
        for (int l = 0; l < w; l++)
            v[l] += v[l + w];
    return v[0];
}
static inline __attribute__((always_inline)) void stats_f32(const float *x, int64_t m, double *mean,
                                                            double *sq) {
    double s[NORM_LANES] = {0}, q[NORM_LANES] = {0};
    int64_t j = 0;
    for (; j + NORM_LANES <= m; j += NORM_LANES)
        for (int l = 0; l < NORM_LANES; l++)
            s[l] += x[j + l];
    for (; j < m; j++)
        s[0] += x[j];
    *mean = lanes_sum(s) / (double)m;
    for (j = 0; j + NORM_LANES <= m; j += NORM_LANES) {
        for (int l = 0; l < NORM_LANES; l++) {
            double d = x[j + l] - *mean;
            q[l] += d * d;
        }
    }
    for (; j < m; j++)
        q[0] += (x[j] - *mean) * (x[j] - *mean);
    *sq = lanes_sum(q);
}

/* y[j] = (x[j] - mean) * a + c over [0, m), float32: (x - mean) in double before scaling, as
 * x * a + (c - mean * a) in float would cancel when the mean is large against the deviation. */
static inline __attribute__((always_inline)) void affine_f32(const float *x, float *y, int64_t m,
                                                             double mean, double a, double c) {
    for (int64_t j = 0; j < m; j++)
        y[j] = (float)(((double)x[j] - mean) * a + c);
}

/* The float32 statistics and affine loops compiled for AVX2 (kernel_util.h). */
TC_TARGET_AVX2 static void stats_f32_avx2(const float *x, int64_t m, double *mean, double *sq) {
    stats_f32(x, m, mean, sq);
}

TC_TARGET_AVX2 static void affine_f32_avx2(const float *x, float *y, int64_t m, double mean,
                                           double a, double c) {
    affine_f32(x, y, m, mean, a, c);
}

TC_TARGET_AVX512 static void stats_f32_avx512(const float *x, int64_t m, double *mean, double *sq) {
    stats_f32(x, m, mean, sq);
}

TC_TARGET_AVX512 static void affine_f32_avx512(const float *x, float *y, int64_t m, double mean,
                                               double a, double c) {
    affine_f32(x, y, m, mean, a, c);
}

static void stats_any(const norm_job *job, int64_t first, double *mean, double *sq) {
    if (!job->is_double) {
        if (job->avx512)
            stats_f32_avx512((const float *)job->x + first, job->block, mean, sq);
        else if (job->avx2)
            stats_f32_avx2((const float *)job->x + first, job->block, mean, sq);
        else
            stats_f32((const float *)job->x + first, job->block, mean, sq);
        return;
    }
    const double *x = (const double *)job->x + first;
    double sum = 0.0;
    for (int64_t j = 0; j < job->block; j++)
        sum += x[j];
    *mean = sum / (double)job->block;
    *sq = 0.0;
    for (int64_t j = 0; j < job->block; j++)
        *sq += (x[j] - *mean) * (x[j] - *mean);
}

static void norm_task(void *arg, int64_t b, int worker) {
    (void)worker;
    const norm_job *job = arg;
    int64_t first = b * job->block;
    double mean, sq;
    stats_any(job, first, &mean, &sq);
    double inv_std = 1.0 / sqrt(sq / (double)job->block + job->eps);
    if (job->mean)
        store_f(job->mean, job->stats_double, b, mean);
    if (job->inv_std)
        store_f(job->inv_std, job->stats_double, b, inv_std);
    const double *scale = job->scale + (b % job->period) * job->per_block;
    const double *bias = job->bias + (b % job->period) * job->per_block;
    if (job->run == 1 && !job->is_double) { /* LayerNormalization: parameters per element */
        const float *x = (const float *)job->x + first;
        float *y = (float *)job->y + first;
        for (int64_t j = 0; j < job->block; j++)
            y[j] = (float)((x[j] - mean) * inv_std * scale[j] + bias[j]);
        return;
    }
    for (int64_t r = 0; r * job->run < job->block; r++) {
        double a = scale[r] * inv_std, c = bias[r];
        int64_t begin = first + r * job->run, end = begin + job->run;
        if (job->is_double) {
            const double *x = job->x;
            double *y = job->y;
            for (int64_t j = begin; j < end; j++)
                y[j] = (x[j] - mean) * a + c;
        } else if (job->avx512) {
            affine_f32_avx512((const float *)job->x + begin, (float *)job->y + begin, end - begin,
                              mean, a, c);
        } else if (job->avx2) {
            affine_f32_avx2((const float *)job->x + begin, (float *)job->y + begin, end - begin,
                            mean, a, c);
        } else {
            affine_f32((const float *)job->x + begin, (float *)job->y + begin, end - begin, mean, a,
                       c);
        }
    }
}

/* Scale (input index 1) and bias (2, may be absent) as doubles in scratch: `count` values
 * each, in buf (released by the caller). */
static tconv_status read_affine(tc_kernel_ctx *ctx, int64_t count, const char *what,
                                tc_rt_tensor *buf, const double **scale, const double **bias) {
    const tc_rt_tensor *s, *b = tc_kernel_input(ctx, 2);
    tconv_status st = tc_kernel_require_input(ctx, 1, &s);
    for (size_t i = 1; st == TCONV_OK && i <= 2; i++)
        st = tc_kernel_check_dtype(ctx, i, FLOAT_DTYPES);
    if (st != TCONV_OK)
        return st;
    if (s->n_elements != count || (b && b->n_elements != count))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "scale and bias must have %lld elements (%s), not %lld and %lld",
                            (long long)count, what, (long long)s->n_elements,
                            (long long)(b ? b->n_elements : count));
    if (count == 0) { /* X is empty too: no data to offset, nothing to normalize */
        memset(buf, 0, sizeof *buf);
        *scale = *bias = NULL;
        return TCONV_OK;
    }
    st = tc_kernel_scratch(ctx, 2 * (size_t)count * sizeof(double), buf);
    if (st != TCONV_OK)
        return st;
    double *values = buf->data;
    for (int64_t i = 0; i < count; i++) {
        values[i] = tc_rt_get_f64(s, i);
        values[count + i] = b ? tc_rt_get_f64(b, i) : 0.0;
    }
    *scale = values;
    *bias = values + count;
    return TCONV_OK;
}

static void run_norm_job(tc_kernel_ctx *ctx, norm_job *job, int64_t n_blocks) {
    /* statistics, then the normalized write: two streamed passes (parallel.h) */
    int threads = threads_for(ctx, n_blocks * job->block, 2.0 * TC_PARALLEL_COST_STREAM);
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, n_blocks), n_blocks, norm_task, job);
}

/* Allocates Y like X, runs job over n_blocks blocks of X (job's layout fields set) and gives
 * back the parameter scratch. */
static tconv_status run_norm_output(tc_kernel_ctx *ctx, const tc_rt_tensor *x, norm_job *job,
                                    int64_t n_blocks, tc_rt_tensor *params) {
    tc_rt_tensor *y;
    tconv_status st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (st == TCONV_OK && y->n_elements > 0) {
        job->x = x->data;
        job->y = y->data;
        job->is_double = x->dtype == TCONV_DTYPE_DOUBLE;
        job->avx2 = tc_cpu_has_avx2();
        job->avx512 = tc_cpu_has_avx512();
        run_norm_job(ctx, job, n_blocks);
    }
    tc_kernel_scratch_release(ctx, params);
    return st;
}

static tconv_status read_epsilon(tc_kernel_ctx *ctx, double *eps) {
    float value;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "epsilon", &value, ctx->err);
    *eps = value;
    return st;
}

/* Only float (1) and double (11) statistics; the computation itself is in double anyway. */
static tconv_status read_stash_type(tc_kernel_ctx *ctx, bool *stash_double) {
    int64_t stash;
    tconv_status st = tc_node_attr_int(ctx->node, "stash_type", 1, &stash, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (stash != TCONV_DTYPE_FLOAT && stash != TCONV_DTYPE_DOUBLE) {
        char text[24];
        snprintf(text, sizeof text, "%lld", (long long)stash);
        return tc_kernel_unsupported_attr(ctx, "stash_type", text);
    }
    *stash_double = stash == TCONV_DTYPE_DOUBLE;
    return TCONV_OK;
}

/* X [N, C, ...]: input 0 of an instance or group normalization, with N and C. */
static tconv_status read_nc_input(tc_kernel_ctx *ctx, const tc_rt_tensor **x, int64_t *spatial) {
    tconv_status st = tc_kernel_require_input(ctx, 0, x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, FLOAT_DTYPES);
    if (st != TCONV_OK)
        return st;
    if ((*x)->rank < 2)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "input 0 must have rank >= 2 ([N, C, ...]), not %d", (*x)->rank);
    *spatial = 1;
    for (int i = 2; i < (*x)->rank; i++)
        *spatial *= (*x)->dims[i];
    return TCONV_OK;
}

tconv_status tc_run_instance_normalization(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t spatial = 0;
    norm_job job = {0};
    tconv_status st = read_nc_input(ctx, &x, &spatial);
    if (st == TCONV_OK)
        st = read_epsilon(ctx, &job.eps);
    if (st != TCONV_OK)
        return st;
    int64_t channels = x->dims[1];
    tc_rt_tensor params;
    st = read_affine(ctx, channels, "one per channel", &params, &job.scale, &job.bias);
    if (st != TCONV_OK)
        return st;
    job.block = spatial;
    job.period = channels;
    job.per_block = 1;
    job.run = spatial;
    return run_norm_output(ctx, x, &job, x->dims[0] * channels, &params);
}

tconv_status tc_run_group_normalization(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t spatial = 0, groups = 0;
    bool stash_double = false;
    norm_job job = {0};
    tconv_status st = read_nc_input(ctx, &x, &spatial);
    if (st == TCONV_OK)
        st = read_epsilon(ctx, &job.eps);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "num_groups", 0, &groups, ctx->err);
    if (st == TCONV_OK)
        st = read_stash_type(ctx, &stash_double);
    if (st != TCONV_OK)
        return st;
    int64_t channels = x->dims[1];
    if (groups <= 0 || channels % groups != 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "num_groups %lld must be positive and divide the %lld channels",
                            (long long)groups, (long long)channels);
    bool per_channel = ctx->opset >= 21;
    tc_rt_tensor params;
    st =
        read_affine(ctx, per_channel ? channels : groups,
                    per_channel ? "one per channel from opset 21" : "one per group before opset 21",
                    &params, &job.scale, &job.bias);
    if (st != TCONV_OK)
        return st;
    job.block = channels / groups * spatial;
    job.period = groups;
    job.per_block = per_channel ? channels / groups : 1;
    job.run = per_channel ? spatial : job.block;
    return run_norm_output(ctx, x, &job, x->dims[0] * groups, &params);
}

/* Scale and bias broadcast to X's dims from axis on: the same element count as that shape, or a
 * single value (any other broadcast is refused by read_affine's count check). */
tconv_status tc_run_layer_normalization(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *scale;
    int64_t axis_attr;
    int axis;
    bool stash_double = false;
    norm_job job = {0};
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, FLOAT_DTYPES);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 1, &scale);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", -1, &axis_attr, ctx->err);
    if (st == TCONV_OK)
        st = read_epsilon(ctx, &job.eps);
    if (st == TCONV_OK)
        st = read_stash_type(ctx, &stash_double);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", axis_attr, x->rank, &axis);
    if (st != TCONV_OK)
        return st;
    int64_t outer = 1, block = 1, stat_dims[TC_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        stat_dims[i] = i < axis ? x->dims[i] : 1;
        if (i < axis)
            outer *= x->dims[i];
        else
            block *= x->dims[i];
    }
    bool scalar = scale->n_elements == 1 && block != 1;
    tc_rt_tensor params, *y, *stats[2] = {NULL, NULL};
    st = read_affine(ctx, scalar ? 1 : block, "the normalized shape's, or one", &params, &job.scale,
                     &job.bias);
    if (st != TCONV_OK)
        return st;
    st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    tconv_dtype stat_dtype = stash_double ? TCONV_DTYPE_DOUBLE : TCONV_DTYPE_FLOAT;
    for (size_t i = 1; st == TCONV_OK && i < ctx->n_outputs && i <= 2; i++)
        st = tc_kernel_alloc_output(ctx, i, stat_dtype, x->rank, stat_dims, &stats[i - 1]);
    if (st == TCONV_OK && y->n_elements > 0) {
        job.x = x->data;
        job.y = y->data;
        job.is_double = x->dtype == TCONV_DTYPE_DOUBLE;
        job.block = block;
        job.period = 1;
        job.run = scalar ? block : 1;
        job.mean = stats[0] ? stats[0]->data : NULL;
        job.inv_std = stats[1] ? stats[1]->data : NULL;
        job.stats_double = stash_double;
        run_norm_job(ctx, &job, outer);
    }
    tc_kernel_scratch_release(ctx, &params);
    return st;
}

/* ================================================================ LRN */

typedef struct lrn_job {
    const void *x;
    void *y;
    bool is_double;
    int64_t channels, spatial, before, after;
    double alpha_over_size, beta, bias;
} lrn_job;

/* One task: channel c of image n (task = n * C + c). The window over channels is
 * [c - floor((size-1)/2), c + ceil((size-1)/2)], clipped to the tensor. */
static void lrn_task(void *arg, int64_t task, int worker) {
    (void)worker;
    const lrn_job *job = arg;
    bool dbl = job->is_double;
    int64_t n = task / job->channels, c = task % job->channels;
    int64_t lo = c - job->before < 0 ? 0 : c - job->before;
    int64_t hi = c + job->after >= job->channels ? job->channels - 1 : c + job->after;
    int64_t image = n * job->channels * job->spatial, at = task * job->spatial;
    for (int64_t i = 0; i < job->spatial; i++) {
        double sq = 0.0;
        for (int64_t k = lo; k <= hi; k++) {
            double v = load_f(job->x, dbl, image + k * job->spatial + i);
            sq += v * v;
        }
        double v = load_f(job->x, dbl, at + i);
        store_f(job->y, dbl, at + i, v / pow(job->bias + job->alpha_over_size * sq, job->beta));
    }
}

tconv_status tc_run_lrn(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t spatial = 0, size = 0;
    float alpha, beta, bias;
    tconv_status st = read_nc_input(ctx, &x, &spatial);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "size", 0, &size, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "alpha", &alpha, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "beta", &beta, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "bias", &bias, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (size <= 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "size must be positive, not %lld",
                            (long long)size);
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    lrn_job job = {x->data,        y->data,  x->dtype == TCONV_DTYPE_DOUBLE, x->dims[1], spatial,
                   (size - 1) / 2, size / 2, (double)alpha / (double)size,   beta,       bias};
    int64_t tasks = x->dims[0] * x->dims[1];
    int threads = threads_for(ctx, x->n_elements, 2.0 * (double)size + 20.0);
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, tasks), tasks, lrn_task, &job);
    return TCONV_OK;
}

/* LpNormalization: x / ||x||_p along the axis (p 1 or 2), norms in double; where the norm is 0
 * the result is 0, as ONNX's reference. */
tconv_status tc_run_lp_normalization(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t axis_attr, p;
    int axis = 0;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", -1, &axis_attr, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int_or_default(ctx->node, "p", &p, ctx->err);
    if (st == TCONV_OK && p != 1 && p != 2)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "p = %lld: only 1 and 2 are defined",
                          (long long)p);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", axis_attr, x->rank, &axis);
    tc_rt_tensor *y;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (st != TCONV_OK)
        return st;
    int64_t outer = 1, len = x->dims[axis], inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        inner *= x->dims[i];
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t k = 0; k < inner; k++) {
            int64_t base = o * len * inner + k;
            double norm = 0.0;
            for (int64_t j = 0; j < len; j++) {
                double v = tc_rt_get_f64(x, base + j * inner);
                norm += p == 1 ? fabs(v) : v * v;
            }
            norm = p == 1 ? norm : sqrt(norm);
            for (int64_t j = 0; j < len; j++) {
                double v = norm == 0.0 ? 0.0 : tc_rt_get_f64(x, base + j * inner) / norm;
                tc_store_f64(y->dtype, y->data, base + j * inner, v);
            }
        }
    }
    return TCONV_OK;
}
