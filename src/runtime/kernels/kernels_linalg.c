/* MatMul (numpy semantics) and Gemm over float32, on the packed GEMM; float64 through the
 * direct loop of kernels_f64.c. */
#include <stdlib.h>
#include <string.h>

#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels_f64.h"

/* ---------------------------------------------------------------- MatMul */

/* The operands of a MatMul viewed as stacks of matrices. */
typedef struct matmul_plan {
    int64_t m, n, k;
    int batch_rank;
    int64_t batch_dims[TC_MAX_RANK];
    int64_t a_strides[TC_MAX_RANK]; /* element stride per batch axis, 0 when broadcast */
    int64_t b_strides[TC_MAX_RANK];
    int64_t n_batch;
    int out_rank;
    int64_t out_dims[TC_MAX_RANK];
} matmul_plan;

/* Strides (in matrices of `matrix_size` elements) for reading an operand whose batch dims are
 * `dims` (rank `rank`, right-aligned) as the broadcast batch shape. */
static void batch_strides(const int64_t *dims, int rank, const matmul_plan *p, int64_t matrix_size,
                          int64_t *strides) {
    int64_t stride = matrix_size;
    for (int i = p->batch_rank - 1; i >= 0; i--) {
        int j = i - (p->batch_rank - rank);
        int64_t d = j >= 0 ? dims[j] : 1;
        strides[i] = d == 1 ? 0 : stride;
        stride *= d;
    }
}

static tconv_status matmul_batch_shape(tc_kernel_ctx *ctx, const int64_t *a_dims, int a_rank,
                                       const int64_t *b_dims, int b_rank, matmul_plan *p) {
    p->batch_rank = a_rank > b_rank ? a_rank : b_rank;
    p->n_batch = 1;
    for (int i = 0; i < p->batch_rank; i++) {
        int ia = i - (p->batch_rank - a_rank), ib = i - (p->batch_rank - b_rank);
        int64_t da = ia >= 0 ? a_dims[ia] : 1, db = ib >= 0 ? b_dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "MatMul batch axis %d: A has %lld, B has %lld (not "
                                "broadcastable)",
                                i, (long long)da, (long long)db);
        p->batch_dims[i] = da == 1 ? db : da;
        if (!tc_mul_i64(p->n_batch, p->batch_dims[i], &p->n_batch))
            return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "MatMul batch size overflows");
    }
    return TCONV_OK;
}

static tconv_status matmul_plan_make(tc_kernel_ctx *ctx, const tc_rt_tensor *a,
                                     const tc_rt_tensor *b, matmul_plan *p) {
    if (a->rank < 1 || b->rank < 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "MatMul inputs must have rank >= 1 (A %d, B %d)", a->rank, b->rank);
    bool a_vec = a->rank == 1, b_vec = b->rank == 1;
    p->m = a_vec ? 1 : a->dims[a->rank - 2];
    p->k = a->dims[a->rank - 1];
    int64_t kb = b_vec ? b->dims[0] : b->dims[b->rank - 2];
    p->n = b_vec ? 1 : b->dims[b->rank - 1];
    if (kb != p->k)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "MatMul inner dimensions differ: A has %lld, B has %lld",
                            (long long)p->k, (long long)kb);
    int a_batch = a_vec ? 0 : a->rank - 2, b_batch = b_vec ? 0 : b->rank - 2;
    tconv_status st = matmul_batch_shape(ctx, a->dims, a_batch, b->dims, b_batch, p);
    if (st != TCONV_OK)
        return st;
    batch_strides(a->dims, a_batch, p, p->m * p->k, p->a_strides);
    batch_strides(b->dims, b_batch, p, p->k * p->n, p->b_strides);
    p->out_rank = p->batch_rank;
    memcpy(p->out_dims, p->batch_dims, (size_t)p->batch_rank * sizeof(int64_t));
    if (!a_vec)
        p->out_dims[p->out_rank++] = p->m;
    if (!b_vec)
        p->out_dims[p->out_rank++] = p->n;
    return TCONV_OK;
}

/* Element offsets of batch item `index` in A and B. */
static void batch_offsets(const matmul_plan *p, int64_t index, int64_t *a_off, int64_t *b_off) {
    *a_off = *b_off = 0;
    for (int i = p->batch_rank - 1; i >= 0; i--) {
        int64_t coord = index % p->batch_dims[i];
        index /= p->batch_dims[i];
        *a_off += coord * p->a_strides[i];
        *b_off += coord * p->b_strides[i];
    }
}

/* A is a full (not broadcast) stack and B one matrix: the stack is one tall GEMM. */
static bool matmul_is_one_gemm(const matmul_plan *p) {
    for (int i = 0; i < p->batch_rank; i++) {
        if (p->b_strides[i] != 0 || (p->a_strides[i] == 0 && p->batch_dims[i] != 1))
            return false;
    }
    return true;
}

typedef struct matmul_job {
    const matmul_plan *plan;
    const float *a, *b;
    float *y;
    tc_gemm_workspace *workspaces;
} matmul_job;

static void matmul_task(void *vjob, int64_t index, int worker) {
    const matmul_job *job = vjob;
    const matmul_plan *p = job->plan;
    int64_t a_off, b_off;
    batch_offsets(p, index, &a_off, &b_off);
    tc_sgemm_op op = {.m = p->m,
                      .n = p->n,
                      .k = p->k,
                      .alpha = 1.0f,
                      .a = job->a + a_off,
                      .lda = p->k,
                      .b = job->b + b_off,
                      .ldb = p->n,
                      .beta = 0.0f,
                      .c = job->y + index * p->m * p->n,
                      .ldc = p->n};
    tc_sgemm_run(&job->workspaces[worker], &op);
}

/* Many small products: one per task, each worker with its own packing buffers. */
static tconv_status matmul_batched(tc_kernel_ctx *ctx, const matmul_plan *p, int threads,
                                   matmul_job *job) {
    int workers = tc_parallel_workers(threads, p->n_batch);
    tc_gemm_workspace workspaces[TC_PARALLEL_MAX_THREADS];
    tconv_status st = TCONV_OK;
    for (int i = 0; i < workers; i++)
        tc_gemm_workspace_init(&workspaces[i], TCONV_GEMM_ISA_AUTO);
    for (int i = 0; i < workers && st == TCONV_OK; i++)
        st = tc_gemm_workspace_reserve(&workspaces[i], p->m, p->n, p->k, ctx->err);
    if (st == TCONV_OK) {
        job->workspaces = workspaces;
        tc_parallel_for(ctx->pool, workers, p->n_batch, matmul_task, job);
    }
    for (int i = 0; i < workers; i++)
        tc_gemm_workspace_release(&workspaces[i]);
    return st;
}

/* The run (MatMul has no attributes: nothing to prepare). */
static tconv_status run_matmul(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *a, *b;
    matmul_plan p;
    tconv_status st;
    if ((st = tc_kernel_require_input(ctx, 0, &a)) || (st = tc_kernel_require_input(ctx, 1, &b)) ||
        (st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE)) ||
        (st = tc_kernel_check_dtype(ctx, 1, TC_DTYPE_BIT(a->dtype))) ||
        (st = matmul_plan_make(ctx, a, b, &p)))
        return st;
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, a->dtype, p.out_rank, p.out_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    if (a->dtype == TCONV_DTYPE_DOUBLE) {
        for (int64_t i = 0; i < p.n_batch; i++) {
            int64_t a_off, b_off;
            batch_offsets(&p, i, &a_off, &b_off);
            tc_dgemm(false, false, p.m, p.n, p.k, 1.0, (const double *)a->data + a_off, p.k,
                     (const double *)b->data + b_off, p.n, false, (double *)y->data + i * p.m * p.n,
                     p.n);
        }
        return TCONV_OK;
    }
    matmul_job job = {.plan = &p, .a = a->data, .b = b->data, .y = y->data};
    double flops = 2.0 * (double)p.n_batch * (double)p.m * (double)p.n * (double)p.k;
    int threads = tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, flops);
    if (matmul_is_one_gemm(&p)) {
        tc_sgemm_op op = {.m = p.n_batch * p.m,
                          .n = p.n,
                          .k = p.k,
                          .alpha = 1.0f,
                          .a = job.a,
                          .lda = p.k,
                          .b = job.b,
                          .ldb = p.n,
                          .c = job.y,
                          .ldc = p.n};
        return tc_sgemm(&op, ctx->pool, threads, ctx->err);
    }
    if (p.n_batch >= threads)
        return matmul_batched(ctx, &p, threads, &job);
    for (int64_t i = 0; i < p.n_batch && st == TCONV_OK; i++) {
        int64_t a_off, b_off;
        batch_offsets(&p, i, &a_off, &b_off);
        tc_sgemm_op op = {.m = p.m,
                          .n = p.n,
                          .k = p.k,
                          .alpha = 1.0f,
                          .a = job.a + a_off,
                          .lda = p.k,
                          .b = job.b + b_off,
                          .ldb = p.n,
                          .c = job.y + i * p.m * p.n,
                          .ldc = p.n};
        st = tc_sgemm(&op, ctx->pool, threads, ctx->err);
    }
    return st;
}

/* ---------------------------------------------------------------- Gemm */

typedef struct gemm_attrs {
    int64_t trans_a, trans_b;
    float alpha, beta;
} gemm_attrs;

static tconv_status read_gemm_attrs(const tconv_node *node, gemm_attrs *g, tc_error *err) {
    tconv_status st;
    if ((st = tc_node_attr_int(node, "transA", 0, &g->trans_a, err)) ||
        (st = tc_node_attr_int(node, "transB", 0, &g->trans_b, err)) ||
        (st = tc_node_attr_float_or_default(node, "alpha", &g->alpha, err)) ||
        (st = tc_node_attr_float_or_default(node, "beta", &g->beta, err)))
        return st;
    return TCONV_OK;
}

/* C's rows and columns, checked to broadcast to m x n (C is scalar, [n], [1|m, 1|n] ...). */
static tconv_status gemm_c_shape(tc_kernel_ctx *ctx, const tc_rt_tensor *c, int64_t m, int64_t n,
                                 int64_t *rows, int64_t *cols) {
    *rows = c->rank >= 2 ? c->dims[c->rank - 2] : 1;
    *cols = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    if (c->rank > 2 || (*rows != 1 && *rows != m) || (*cols != 1 && *cols != n))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "Gemm: C (rank %d, last dims %lld x %lld) does not broadcast to "
                            "%lld x %lld",
                            c->rank, (long long)*rows, (long long)*cols, (long long)m,
                            (long long)n);
    return TCONV_OK;
}

/* Y = beta * C broadcast to m x n. */
static tconv_status gemm_fill_c(tc_kernel_ctx *ctx, const tc_rt_tensor *c, float beta, int64_t m,
                                int64_t n, float *y) {
    int64_t rows, cols;
    tconv_status st = gemm_c_shape(ctx, c, m, n, &rows, &cols);
    if (st != TCONV_OK)
        return st;
    const float *src = c->data;
    for (int64_t i = 0; i < m; i++) {
        const float *row = src + (rows == 1 ? 0 : i * cols);
        for (int64_t j = 0; j < n; j++)
            y[i * n + j] = beta * row[cols == 1 ? 0 : j];
    }
    return TCONV_OK;
}

/* float64 Gemm: beta * C broadcast as gemm_fill_c does, then the direct product. */
static tconv_status gemm_f64(tc_kernel_ctx *ctx, const gemm_attrs *g, const tc_rt_tensor *a,
                             const tc_rt_tensor *b, const tc_rt_tensor *c, tc_rt_tensor *y) {
    int64_t m = y->dims[0], n = y->dims[1], k = g->trans_a ? a->dims[0] : a->dims[1];
    double *out = y->data;
    if (c) {
        int64_t rows, cols;
        tconv_status st = gemm_c_shape(ctx, c, m, n, &rows, &cols);
        if (st != TCONV_OK)
            return st;
        const double *src = c->data;
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++)
                out[i * n + j] =
                    (double)g->beta * src[(rows == 1 ? 0 : i * cols) + (cols == 1 ? 0 : j)];
        }
    }
    tc_dgemm(g->trans_a != 0, g->trans_b != 0, m, n, k, (double)g->alpha, a->data, a->dims[1],
             b->data, b->dims[1], c != NULL, out, n);
    return TCONV_OK;
}

/* The run: ctx->params is the gemm_attrs of tc_prepare_gemm; no IR. */
static tconv_status run_gemm(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *a, *b, *c;
    gemm_attrs g = *(const gemm_attrs *)ctx->params;
    tconv_status st;
    if ((st = tc_kernel_require_input(ctx, 0, &a)) || (st = tc_kernel_require_input(ctx, 1, &b)) ||
        (st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE)) ||
        (st = tc_kernel_check_dtype(ctx, 1, TC_DTYPE_BIT(a->dtype))) ||
        (st = tc_kernel_check_dtype(ctx, 2, TC_DTYPE_BIT(a->dtype))))
        return st;
    c = tc_kernel_input(ctx, 2);
    if (a->rank != 2 || b->rank != 2)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "Gemm: A and B must be 2-D (have rank %d and %d)", a->rank, b->rank);
    int64_t m = g.trans_a ? a->dims[1] : a->dims[0], k = g.trans_a ? a->dims[0] : a->dims[1];
    int64_t kb = g.trans_b ? b->dims[1] : b->dims[0], n = g.trans_b ? b->dims[0] : b->dims[1];
    if (k != kb)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "Gemm inner dimensions differ: op(A) has %lld, op(B) has %lld",
                            (long long)k, (long long)kb);
    int64_t dims[2] = {m, n};
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, a->dtype, 2, dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    bool add_c = c && g.beta != 0.0f;
    if (a->dtype == TCONV_DTYPE_DOUBLE)
        return gemm_f64(ctx, &g, a, b, add_c ? c : NULL, y);
    if (add_c && (st = gemm_fill_c(ctx, c, g.beta, m, n, y->data)) != TCONV_OK)
        return st;
    tc_sgemm_op op = {.trans_a = g.trans_a != 0,
                      .trans_b = g.trans_b != 0,
                      .m = m,
                      .n = n,
                      .k = k,
                      .alpha = g.alpha,
                      .a = a->data,
                      .lda = a->dims[1],
                      .b = b->data,
                      .ldb = b->dims[1],
                      .beta = add_c ? 1.0f : 0.0f,
                      .c = y->data,
                      .ldc = n};
    return tc_sgemm(&op, ctx->pool, ctx->n_threads, ctx->err);
}

static bool gemm_work(const void *params, const tc_work_shapes *w, uint64_t *out) {
    return tc_work_gemm_trans(((const gemm_attrs *)params)->trans_a != 0, w, out);
}

tconv_status tc_prepare_gemm(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    gemm_attrs *g = tc_kernel_params_alloc(pc, sizeof *g);
    if (!g)
        return TCONV_ERR_NOMEM;
    *out = (tc_kernel_prepared){.run = run_gemm, .params = g, .work = gemm_work};
    return read_gemm_attrs(pc->node, g, pc->err);
}

static bool matmul_work(const void *params, const tc_work_shapes *w, uint64_t *out) {
    (void)params;
    return tc_work_matmul(NULL, w, out);
}

tconv_status tc_prepare_matmul(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    (void)pc;
    *out = (tc_kernel_prepared){.run = run_matmul, .work = matmul_work};
    return TCONV_OK;
}
