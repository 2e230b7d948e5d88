/* Reductions: the Reduce* family (axes as an attribute before ReduceSum-13 and the others' 18,
 * as input 1 from then on; keepdims, noop_with_empty_axes, negative axes), ArgMax and ArgMin.
 *
 * A reduction visits, for each output element, the input elements that share its kept
 * coordinates. Adjacent input dims of the same role (kept or reduced) that are contiguous are
 * merged first, so reducing the trailing axes of a row-major tensor is one long unit-stride run.
 * Floating sums accumulate in double with Neumaier's compensation (a long float32 sum stays
 * exact to the last float bit); ReduceLogSumExp subtracts the maximum before exponentiating.
 * Output elements are split into chunks over the kernel's thread pool when the input is big. */
#include <math.h>
#include <string.h>

#include "runtime/kernels/kernel_util.h"

typedef enum reduce_kind {
    REDUCE_SUM,
    REDUCE_MEAN,
    REDUCE_MAX,
    REDUCE_MIN,
    REDUCE_PROD,
    REDUCE_L1,
    REDUCE_L2,
    REDUCE_LOG_SUM,
    REDUCE_LOG_SUM_EXP,
    REDUCE_SUM_SQUARE,
    REDUCE_SUM_EXP /* internal: second pass of LogSumExp, sum of exp(x - shift) */
} reduce_kind;

typedef struct reduce_op {
    tc_op_kind op;
    reduce_kind kind;
    bool integer; /* also defined for int32/int64 */
} reduce_op;

static const reduce_op reduce_ops[] = {
    {TC_KIND_ReduceSum, REDUCE_SUM, true},
    {TC_KIND_ReduceMean, REDUCE_MEAN, false},
    {TC_KIND_ReduceMax, REDUCE_MAX, true},
    {TC_KIND_ReduceMin, REDUCE_MIN, true},
    {TC_KIND_ReduceProd, REDUCE_PROD, true},
    {TC_KIND_ReduceL1, REDUCE_L1, false},
    {TC_KIND_ReduceL2, REDUCE_L2, false},
    {TC_KIND_ReduceLogSum, REDUCE_LOG_SUM, false},
    {TC_KIND_ReduceLogSumExp, REDUCE_LOG_SUM_EXP, false},
    {TC_KIND_ReduceSumSquare, REDUCE_SUM_SQUARE, false},
};

/* Input dims split by role, merged where contiguous: the output walks the kept dims in order,
 * each output element the reduced ones (the last reduced dim is the inner run). */
typedef struct reduce_plan {
    int n_keep, n_red;
    int64_t keep_dims[TC_MAX_RANK], keep_strides[TC_MAX_RANK];
    int64_t red_dims[TC_MAX_RANK], red_strides[TC_MAX_RANK];
    int64_t n_out, n_red_elems;
} reduce_plan;

static void plan_add(int64_t *dims, int64_t *strides, int *n, int64_t dim, int64_t stride) {
    if (*n > 0 && strides[*n - 1] == dim * stride) { /* contiguous with the previous dim */
        dims[*n - 1] *= dim;
        strides[*n - 1] = stride;
        return;
    }
    dims[*n] = dim;
    strides[*n] = stride;
    (*n)++;
}

static void reduce_plan_init(reduce_plan *p, int rank, const int64_t *dims, const bool *reduced) {
    int64_t strides[TC_MAX_RANK];
    tc_shape_strides(rank, dims, strides);
    memset(p, 0, sizeof *p);
    p->n_out = p->n_red_elems = 1;
    for (int i = 0; i < rank; i++) {
        if (reduced[i])
            p->n_red_elems *= dims[i];
        else
            p->n_out *= dims[i];
        if (dims[i] == 1)
            continue; /* visits nothing new */
        if (reduced[i])
            plan_add(p->red_dims, p->red_strides, &p->n_red, dims[i], strides[i]);
        else
            plan_add(p->keep_dims, p->keep_strides, &p->n_keep, dims[i], strides[i]);
    }
}

/* ---------------------------------------------------------------- accumulation */

typedef struct reduce_acc {
    double sum, comp; /* Neumaier: the true sum is sum + comp */
    double prod, best;
    double shift; /* REDUCE_SUM_EXP */
    int64_t isum, iprod, ibest;
} reduce_acc;

static inline void acc_add(reduce_acc *a, double v) {
    double t = a->sum + v;
    if (fabs(a->sum) >= fabs(v))
        a->comp += (a->sum - t) + v;
    else
        a->comp += (v - t) + a->sum;
    a->sum = t;
}

/* Max and min propagate NaN, as numpy does. */
static inline double take_max(double best, double v) {
    return (v > best || isnan(v)) ? v : best;
}
static inline double take_min(double best, double v) {
    return (v < best || isnan(v)) ? v : best;
}

#define DEFINE_FLOAT_RUN(T, suffix)                                                                \
    static void run_##suffix(reduce_acc *a, reduce_kind kind, const T *p, int64_t n, int64_t s) {  \
        switch (kind) {                                                                            \
        case REDUCE_MAX:                                                                           \
            for (int64_t i = 0; i < n; i++)                                                        \
                a->best = take_max(a->best, (double)p[i * s]);                                     \
            break;                                                                                 \
        case REDUCE_MIN:                                                                           \
            for (int64_t i = 0; i < n; i++)                                                        \
                a->best = take_min(a->best, (double)p[i * s]);                                     \
            break;                                                                                 \
        case REDUCE_PROD:                                                                          \
            for (int64_t i = 0; i < n; i++)                                                        \
                a->prod *= (double)p[i * s];                                                       \
            break;                                                                                 \
        case REDUCE_L1:                                                                            \
            for (int64_t i = 0; i < n; i++)                                                        \
                acc_add(a, fabs((double)p[i * s]));                                                \
            break;                                                                                 \
        case REDUCE_L2:                                                                            \
        case REDUCE_SUM_SQUARE:                                                                    \
            for (int64_t i = 0; i < n; i++)                                                        \
                acc_add(a, (double)p[i * s] * (double)p[i * s]);                                   \
            break;                                                                                 \
        case REDUCE_SUM_EXP:                                                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                acc_add(a, exp((double)p[i * s] - a->shift));                                      \
            break;                                                                                 \
        default: /* SUM, MEAN, LOG_SUM */                                                          \
            for (int64_t i = 0; i < n; i++)                                                        \
                acc_add(a, (double)p[i * s]);                                                      \
            break;                                                                                 \
        }                                                                                          \
    }

DEFINE_FLOAT_RUN(float, f32)
DEFINE_FLOAT_RUN(double, f64)

/* Integer sums and products wrap modulo 2^64 (computed unsigned: no undefined overflow), then
 * narrow to the element type, as numpy's do. */
#define DEFINE_INT_RUN(T, suffix)                                                                  \
    static void run_##suffix(reduce_acc *a, reduce_kind kind, const T *p, int64_t n, int64_t s) {  \
        for (int64_t i = 0; i < n; i++) {                                                          \
            int64_t v = (int64_t)p[i * s];                                                         \
            if (kind == REDUCE_MAX)                                                                \
                a->ibest = v > a->ibest ? v : a->ibest;                                            \
            else if (kind == REDUCE_MIN)                                                           \
                a->ibest = v < a->ibest ? v : a->ibest;                                            \
            else if (kind == REDUCE_PROD)                                                          \
                a->iprod = (int64_t)((uint64_t)a->iprod * (uint64_t)v);                            \
            else                                                                                   \
                a->isum = (int64_t)((uint64_t)a->isum + (uint64_t)v);                              \
        }                                                                                          \
    }

DEFINE_INT_RUN(int32_t, i32)
DEFINE_INT_RUN(int64_t, i64)

static void run_any(reduce_acc *a, reduce_kind kind, tconv_dtype dtype, const void *base,
                    int64_t offset, int64_t n, int64_t s) {
    switch (dtype) {
    case TCONV_DTYPE_DOUBLE:
        run_f64(a, kind, (const double *)base + offset, n, s);
        break;
    case TCONV_DTYPE_INT32:
        run_i32(a, kind, (const int32_t *)base + offset, n, s);
        break;
    case TCONV_DTYPE_INT64:
        run_i64(a, kind, (const int64_t *)base + offset, n, s);
        break;
    default:
        run_f32(a, kind, (const float *)base + offset, n, s);
        break;
    }
}

static void acc_init(reduce_acc *a, reduce_kind kind) {
    memset(a, 0, sizeof *a);
    a->prod = 1.0;
    a->iprod = 1;
    a->best = kind == REDUCE_MIN ? INFINITY : -INFINITY;
    a->ibest = kind == REDUCE_MIN ? INT64_MAX : INT64_MIN;
}

/* ---------------------------------------------------------------- the walk */

typedef struct reduce_job {
    const reduce_plan *plan;
    reduce_kind kind;
    tconv_dtype dtype;
    const void *in;
    void *out;
    int64_t chunk; /* output elements per task */
} reduce_job;

/* Visits every reduced element of the output element whose input offset is `base`. */
static void sweep(const reduce_job *job, int64_t base, reduce_kind kind, reduce_acc *a) {
    const reduce_plan *p = job->plan;
    if (p->n_red == 0) {
        run_any(a, kind, job->dtype, job->in, base, p->n_red_elems ? 1 : 0, 1);
        return;
    }
    int last = p->n_red - 1;
    int64_t idx[TC_MAX_RANK] = {0}, offset = base;
    for (;;) {
        run_any(a, kind, job->dtype, job->in, offset, p->red_dims[last], p->red_strides[last]);
        int d = last - 1;
        for (; d >= 0; d--) { /* odometer over the outer reduced dims */
            offset += p->red_strides[d];
            if (++idx[d] < p->red_dims[d])
                break;
            offset -= idx[d] * p->red_strides[d];
            idx[d] = 0;
        }
        if (d < 0)
            return;
    }
}

static double block_finish(reduce_kind kind, double acc, int64_t n);

static double finish_float(const reduce_acc *a, reduce_kind kind, int64_t count) {
    switch (kind) {
    case REDUCE_MAX:
    case REDUCE_MIN:
        return a->best;
    case REDUCE_PROD:
        return a->prod;
    default: /* MEAN over an empty set: 0/0, NaN */
        return block_finish(kind, a->sum + a->comp, count);
    }
}

static void reduce_one(const reduce_job *job, int64_t o, int64_t base) {
    const reduce_plan *p = job->plan;
    reduce_acc a;
    acc_init(&a, job->kind);
    if (p->n_red_elems == 0) {
        /* nothing to visit: the identities acc_init set */
    } else if (job->kind == REDUCE_LOG_SUM_EXP) {
        sweep(job, base, REDUCE_MAX, &a);
        a.shift = isfinite(a.best) ? a.best : 0.0; /* +-inf and NaN pass through exp */
        sweep(job, base, REDUCE_SUM_EXP, &a);
    } else {
        sweep(job, base, job->kind, &a);
    }
    double lse = job->kind == REDUCE_LOG_SUM_EXP ? a.shift + log(a.sum + a.comp) : 0.0;
    double v = job->kind == REDUCE_LOG_SUM_EXP ? lse : finish_float(&a, job->kind, p->n_red_elems);
    int64_t iv = job->kind == REDUCE_MAX || job->kind == REDUCE_MIN ? a.ibest
                 : job->kind == REDUCE_PROD                         ? a.iprod
                                                                    : a.isum;
    const tc_dtype_traits *traits = tc_dtype_traits_of(job->dtype);
    if (traits->set_bits) /* integers wrap as in C (int32: the low 32 bits of the int64 sum) */
        traits->set_bits(job->out, o, (uint64_t)iv);
    else
        traits->set_f64(job->out, o, v);
}

static void reduce_task(void *arg, int64_t task, int worker) {
    (void)worker;
    const reduce_job *job = arg;
    const reduce_plan *p = job->plan;
    int64_t o0 = task * job->chunk, o1 = o0 + job->chunk;
    if (o1 > p->n_out)
        o1 = p->n_out;
    int64_t idx[TC_MAX_RANK] = {0}, base = 0, rest = o0;
    for (int d = p->n_keep - 1; d >= 0; d--) { /* kept coordinates of o0 */
        idx[d] = rest % p->keep_dims[d];
        rest /= p->keep_dims[d];
        base += idx[d] * p->keep_strides[d];
    }
    for (int64_t o = o0; o < o1; o++) {
        reduce_one(job, o, base);
        for (int d = p->n_keep - 1; d >= 0; d--) {
            base += p->keep_strides[d];
            if (++idx[d] < p->keep_dims[d])
                break;
            base -= idx[d] * p->keep_strides[d];
            idx[d] = 0;
        }
    }
}

/* ---------------------------------------------------------------- float32 fast path */

/* The common float32 case: the reduced axes form one block, X viewed as [outer, n, inner].
 * inner == 1 reduces contiguous rows; otherwise each task sweeps up to BLOCK_COLS columns of
 * the inner rows at once (unit stride, vectorizable), accumulating in double. */
#define BLOCK_COLS 256

typedef struct block_job {
    reduce_kind kind;
    const float *x;
    float *y;
    int64_t outer, n, inner;
    int64_t rows_per_task; /* inner == 1 */
    int64_t col_tasks;     /* inner > 1: column chunks per outer index */
} block_job;

/* sum of p[i], |p[i]| or p[i]^2 in double, 8 independent lanes (one loop per form, so that
 * each vectorizes). */
#define ROW_SUM_LOOP(EXPR)                                                                         \
    do {                                                                                           \
        for (; i + 8 <= n; i += 8)                                                                 \
            for (int l = 0; l < 8; l++) {                                                          \
                double v = p[i + l];                                                               \
                s[l] += (EXPR);                                                                    \
            }                                                                                      \
        for (; i < n; i++) {                                                                       \
            double v = p[i];                                                                       \
            s[0] += (EXPR);                                                                        \
        }                                                                                          \
    } while (0)

static double row_sum(const float *p, int64_t n, reduce_kind kind) {
    double s[8] = {0};
    int64_t i = 0;
    if (kind == REDUCE_L1)
        ROW_SUM_LOOP(fabs(v));
    else if (kind == REDUCE_L2 || kind == REDUCE_SUM_SQUARE)
        ROW_SUM_LOOP(v * v);
    else
        ROW_SUM_LOOP(v);
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static float row_best(const float *p, int64_t n, bool is_max) {
    float best = is_max ? -INFINITY : INFINITY;
    for (int64_t i = 0; i < n; i++) {
        float v = p[i];
        bool take = is_max ? v > best : v < best;
        best = (take || v != v) ? v : best;
    }
    return best;
}

/* The output value from a finished accumulation: sum (or product, or extremum) of n values. */
static double block_finish(reduce_kind kind, double acc, int64_t n) {
    switch (kind) {
    case REDUCE_MEAN:
        return acc / (double)n;
    case REDUCE_L2:
        return sqrt(acc);
    case REDUCE_LOG_SUM:
        return log(acc);
    default:
        return acc;
    }
}

static float row_reduce(const float *p, int64_t n, reduce_kind kind) {
    switch (kind) {
    case REDUCE_MAX:
    case REDUCE_MIN:
        return row_best(p, n, kind == REDUCE_MAX);
    case REDUCE_PROD: {
        double prod = 1.0;
        for (int64_t i = 0; i < n; i++)
            prod *= p[i];
        return (float)prod;
    }
    case REDUCE_LOG_SUM_EXP: {
        float max = row_best(p, n, true), shift = isfinite(max) ? max : 0.0f;
        double s[4] = {0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 4 <= n; i += 4)
            for (int l = 0; l < 4; l++)
                s[l] += expf(p[i + l] - shift);
        for (; i < n; i++)
            s[0] += expf(p[i] - shift);
        return (float)(shift + log((s[0] + s[1]) + (s[2] + s[3])));
    }
    default:
        return (float)block_finish(kind, row_sum(p, n, kind), n);
    }
}

/* Columns [0, cols) of x[o, :, j0 + ...] (rows `inner` apart) into y. */
static void columns_reduce(const block_job *job, const float *x, float *y, int64_t cols) {
    double acc[BLOCK_COLS];
    float best[BLOCK_COLS];
    reduce_kind kind = job->kind;
    int64_t n = job->n, inner = job->inner;
    if (kind == REDUCE_MAX || kind == REDUCE_MIN || kind == REDUCE_LOG_SUM_EXP) {
        bool is_max = kind != REDUCE_MIN;
        for (int64_t j = 0; j < cols; j++)
            best[j] = is_max ? -INFINITY : INFINITY;
        for (int64_t r = 0; r < n; r++) {
            const float *row = x + r * inner;
            for (int64_t j = 0; j < cols; j++) {
                float v = row[j];
                bool take = is_max ? v > best[j] : v < best[j];
                best[j] = (take || v != v) ? v : best[j];
            }
        }
        if (kind != REDUCE_LOG_SUM_EXP) {
            memcpy(y, best, (size_t)cols * sizeof *y);
            return;
        }
        for (int64_t j = 0; j < cols; j++)
            best[j] = isfinite(best[j]) ? best[j] : 0.0f; /* the shift */
    }
    double init = kind == REDUCE_PROD ? 1.0 : 0.0;
    for (int64_t j = 0; j < cols; j++)
        acc[j] = init;
    for (int64_t r = 0; r < n; r++) {
        const float *row = x + r * inner;
        switch (kind) {
        case REDUCE_PROD:
            for (int64_t j = 0; j < cols; j++)
                acc[j] *= row[j];
            break;
        case REDUCE_L1:
            for (int64_t j = 0; j < cols; j++)
                acc[j] += fabs((double)row[j]);
            break;
        case REDUCE_L2:
        case REDUCE_SUM_SQUARE:
            for (int64_t j = 0; j < cols; j++)
                acc[j] += (double)row[j] * (double)row[j];
            break;
        case REDUCE_LOG_SUM_EXP:
            for (int64_t j = 0; j < cols; j++)
                acc[j] += expf(row[j] - best[j]);
            break;
        default:
            for (int64_t j = 0; j < cols; j++)
                acc[j] += row[j];
            break;
        }
    }
    for (int64_t j = 0; j < cols; j++)
        y[j] = (float)(kind == REDUCE_LOG_SUM_EXP ? best[j] + log(acc[j])
                                                  : block_finish(kind, acc[j], n));
}

static void block_task(void *arg, int64_t task, int worker) {
    (void)worker;
    const block_job *job = arg;
    if (job->inner == 1) {
        int64_t o1 = (task + 1) * job->rows_per_task;
        for (int64_t o = task * job->rows_per_task; o < o1 && o < job->outer; o++)
            job->y[o] = row_reduce(job->x + o * job->n, job->n, job->kind);
        return;
    }
    int64_t o = task / job->col_tasks, j0 = task % job->col_tasks * BLOCK_COLS;
    int64_t cols = job->inner - j0 < BLOCK_COLS ? job->inner - j0 : BLOCK_COLS;
    columns_reduce(job, job->x + o * job->n * job->inner + j0, job->y + o * job->inner + j0, cols);
}

/* Whether the reduced dims (of size > 1) are one contiguous block; sets the [outer, n, inner]
 * view when they are. */
static bool single_block(int rank, const int64_t *dims, const bool *reduced, int64_t *outer,
                         int64_t *n, int64_t *inner) {
    int first = -1, last = -1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 1)
            continue;
        if (reduced[i]) {
            if (last >= 0 && last != i - 1)
                for (int k = last + 1; k < i; k++)
                    if (dims[k] != 1)
                        return false;
            first = first < 0 ? i : first;
            last = i;
        }
    }
    if (first < 0)
        return false;
    *outer = *n = *inner = 1;
    for (int i = 0; i < rank; i++)
        *(i < first ? outer : i <= last ? n : inner) *= dims[i];
    return true;
}

static void run_block(tc_kernel_ctx *ctx, reduce_kind kind, const tc_rt_tensor *x, float *y,
                      int64_t outer, int64_t n, int64_t inner) {
    block_job job = {kind, x->data, y, outer, n, inner, 1, 1};
    int64_t n_tasks;
    if (inner == 1) {
        job.rows_per_task = n >= 4096 ? 1 : 4096 / n;
        n_tasks = (outer + job.rows_per_task - 1) / job.rows_per_task;
    } else {
        job.col_tasks = (inner + BLOCK_COLS - 1) / BLOCK_COLS;
        n_tasks = outer * job.col_tasks;
    }
    double flops = (double)x->n_elements * (kind == REDUCE_LOG_SUM_EXP ? 20.0 : 1.0);
    int threads = tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, flops);
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, n_tasks), n_tasks, block_task, &job);
}

/* ---------------------------------------------------------------- Reduce* */

static const reduce_op *find_reduce_op(tc_op_kind kind) {
    for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++)
        if (reduce_ops[i].op == kind)
            return &reduce_ops[i];
    return NULL;
}

/* Which input dims are reduced: the axes attribute (older versions) or input 1; none given
 * means all, or none with noop_with_empty_axes. */
static tconv_status read_reduced_axes(tc_kernel_ctx *ctx, int rank, bool *reduced) {
    int64_t noop, axes[TC_MAX_RANK];
    size_t count = 0;
    bool present;
    const int64_t *attr_axes;
    size_t attr_count;
    tconv_status st = tc_node_attr_int(ctx->node, "noop_with_empty_axes", 0, &noop, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_ints(ctx->node, "axes", &present, &attr_axes, &attr_count, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (present) {
        if (attr_count > TC_MAX_RANK)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "axes lists %zu axes for rank %d",
                                attr_count, rank);
        memcpy(axes, attr_axes, attr_count * sizeof *axes);
        count = attr_count;
    } else if (tc_kernel_input(ctx, 1)) {
        st = tc_kernel_read_ints(ctx, 1, axes, TC_MAX_RANK, &count);
        if (st != TCONV_OK)
            return st;
    }
    for (int i = 0; i < rank; i++)
        reduced[i] = count == 0 && !noop;
    for (size_t k = 0; k < count; k++) {
        int axis;
        st = tc_kernel_normalize_axis(ctx, "axes", axes[k], rank, &axis);
        if (st != TCONV_OK)
            return st;
        if (reduced[axis])
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "axes names axis %d twice", axis);
        reduced[axis] = true;
    }
    return TCONV_OK;
}

tconv_status tc_run_reduce(tc_kernel_ctx *ctx) {
    const reduce_op *op = find_reduce_op(ctx->node->kind);
    const tc_rt_tensor *x;
    int64_t keep_dims;
    bool reduced[TC_MAX_RANK];
    if (!op)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "no reduction named %s",
                            ctx->node->op_type);
    uint32_t dtypes = TC_DTYPES_FLOAT | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE);
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, op->integer ? dtypes | TC_DTYPES_INDEX : dtypes);
    if (st == TCONV_OK)
        st = tc_node_attr_int_or_default(ctx->node, "keepdims", &keep_dims, ctx->err);
    if (st == TCONV_OK)
        st = read_reduced_axes(ctx, x->rank, reduced);
    if (st != TCONV_OK)
        return st;
    int64_t out_dims[TC_MAX_RANK];
    int out_rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!reduced[i])
            out_dims[out_rank++] = x->dims[i];
        else if (keep_dims)
            out_dims[out_rank++] = 1;
    }
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, x->dtype, out_rank, out_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    int64_t outer, n, inner;
    if (x->dtype == TCONV_DTYPE_FLOAT && x->n_elements > 0 &&
        single_block(x->rank, x->dims, reduced, &outer, &n, &inner)) {
        run_block(ctx, op->kind, x, y->data, outer, n, inner);
        return TCONV_OK;
    }
    reduce_plan plan;
    reduce_plan_init(&plan, x->rank, x->dims, reduced);
    reduce_job job = {&plan, op->kind, x->dtype, x->data, y->data, plan.n_out};
    int threads = tc_parallel_threads_for_work(ctx->pool, ctx->n_threads,
                                               (double)x->n_elements * TC_PARALLEL_COST_STREAM);
    int64_t n_tasks = 1;
    if (threads > 1 && plan.n_out > 1) {
        job.chunk = (plan.n_out + 4 * threads - 1) / (4 * threads);
        n_tasks = (plan.n_out + job.chunk - 1) / job.chunk;
    }
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, n_tasks), n_tasks, reduce_task, &job);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- ArgMax, ArgMin */

typedef struct arg_job {
    const tc_rt_tensor *x;
    int64_t *out;
    int64_t n, inner;
    bool is_max, last, floating;
} arg_job;

/* Whether v replaces best: strictly better, or equal with select_last_index; the first NaN
 * wins over numbers (numpy's argmax/argmin). */
static bool arg_better_f(const arg_job *job, double v, double best) {
    if (isnan(best))
        return job->last && isnan(v);
    if (isnan(v))
        return true;
    if (v == best)
        return job->last;
    return job->is_max ? v > best : v < best;
}

static bool arg_better_i(const arg_job *job, int64_t v, int64_t best) {
    if (v == best)
        return job->last;
    return job->is_max ? v > best : v < best;
}

/* float32: BLOCK_COLS columns of the inner rows at a time, unit stride. */
static void arg_columns_f32(const arg_job *job, const float *x, int64_t *out, int64_t cols) {
    float best[BLOCK_COLS];
    for (int64_t j = 0; j < cols; j++) {
        best[j] = x[j];
        out[j] = 0;
    }
    for (int64_t k = 1; k < job->n; k++) {
        const float *row = x + k * job->inner;
        for (int64_t j = 0; j < cols; j++) {
            if (arg_better_f(job, row[j], best[j])) {
                best[j] = row[j];
                out[j] = k;
            }
        }
    }
}

static void arg_task_f32(void *arg, int64_t task, int worker) {
    (void)worker;
    const arg_job *job = arg;
    int64_t col_tasks = (job->inner + BLOCK_COLS - 1) / BLOCK_COLS;
    int64_t o = task / col_tasks, j0 = task % col_tasks * BLOCK_COLS;
    int64_t cols = job->inner - j0 < BLOCK_COLS ? job->inner - j0 : BLOCK_COLS;
    arg_columns_f32(job, (const float *)job->x->data + o * job->n * job->inner + j0,
                    job->out + o * job->inner + j0, cols);
}

static void arg_task(void *arg, int64_t o, int worker) {
    (void)worker;
    const arg_job *job = arg;
    for (int64_t i = 0; i < job->inner; i++) {
        int64_t first = o * job->n * job->inner + i, pick = 0;
        if (job->floating) {
            double best = tc_rt_get_f64(job->x, first);
            for (int64_t k = 1; k < job->n; k++) {
                double v = tc_rt_get_f64(job->x, first + k * job->inner);
                if (arg_better_f(job, v, best)) {
                    best = v;
                    pick = k;
                }
            }
        } else {
            int64_t best = tc_rt_get_i64(job->x, first);
            for (int64_t k = 1; k < job->n; k++) {
                int64_t v = tc_rt_get_i64(job->x, first + k * job->inner);
                if (arg_better_i(job, v, best)) {
                    best = v;
                    pick = k;
                }
            }
        }
        job->out[o * job->inner + i] = pick;
    }
}

tconv_status tc_run_arg_reduce(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t axis_attr, keep_dims, last;
    int axis;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_NUMERIC | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE));
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", 0, &axis_attr, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int_or_default(ctx->node, "keepdims", &keep_dims, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "select_last_index", 0, &last, ctx->err);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", axis_attr, x->rank, &axis);
    if (st != TCONV_OK)
        return st;
    if (x->dims[axis] == 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s over an empty axis %d",
                            ctx->node->op_type, axis);
    int64_t out_dims[TC_MAX_RANK], outer = 1, inner = 1;
    int out_rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != axis)
            out_dims[out_rank++] = x->dims[i];
        else if (keep_dims)
            out_dims[out_rank++] = 1;
        if (i < axis)
            outer *= x->dims[i];
        else if (i > axis)
            inner *= x->dims[i];
    }
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, TCONV_DTYPE_INT64, out_rank, out_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    bool floating = x->dtype == TCONV_DTYPE_FLOAT || x->dtype == TCONV_DTYPE_DOUBLE;
    arg_job job = {x,    y->data, x->dims[axis], inner, ctx->node->kind == TC_KIND_ArgMax,
                   last, floating};
    int threads = tc_parallel_threads_for_work(ctx->pool, ctx->n_threads,
                                               (double)x->n_elements * TC_PARALLEL_COST_STREAM);
    if (x->dtype == TCONV_DTYPE_FLOAT) {
        int64_t n_tasks = outer * ((inner + BLOCK_COLS - 1) / BLOCK_COLS);
        tc_parallel_for(ctx->pool, tc_parallel_workers(threads, n_tasks), n_tasks, arg_task_f32,
                        &job);
        return TCONV_OK;
    }
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, outer), outer, arg_task, &job);
    return TCONV_OK;
}
