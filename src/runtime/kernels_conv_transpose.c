/* ConvTranspose over float32 (float64: kernels_f64.c), built on the packed GEMM: col = W_g^T x X_g,
 * then col2im adds each column into Y (conv_lattice.h), skipping fine positions outside [0, out):
 * pads crop directly, and positions past the full output just keep the bias they were initialised
 * with. A Slice/Pad/Add chain the executor fused in narrows that window. The work is split over
 * (batch, group, output-channel chunk): tasks write disjoint planes of Y, so no locking is
 * needed. The pad arithmetic is tc_conv_transpose_resolve's, the same as the legalization's
 * check of itself: never a call into a pass. */
#include <stdlib.h>
#include <string.h>

#include "ir/conv_transpose_geometry.h"
#include "runtime/conv_common.h"
#include "runtime/conv_lattice.h"
#include "runtime/gemm.h"
#include "runtime/kernel.h"
#include "runtime/kernel_util.h"
#include "runtime/kernels_f64.h"
#include "runtime/parallel.h"

typedef struct conv_transpose_job {
    tc_lattice lat; /* coarse: X spatial, fine: Y spatial */
    int64_t batch, c_in, c_out, group, cin_g, cout_g;
    int64_t chunk_channels, n_chunks, block_cols;
    tc_gemm_isa isa; /* the GEMM kernel, for the chunk's rows and block's columns */
    bool direct;     /* 1x1 identity mapping: the GEMM writes Y */
    const float *x, *w, *bias;
    float *y;
    float *packed_w;     /* W_g^T of every (group, chunk), packed once for the whole batch */
    size_t packed_chunk; /* floats per (group, chunk) slot of packed_w */
    tc_conv_scratch scratch;
} conv_transpose_job;

/* The W_g^T rows of one (group, chunk) as the GEMM's op(A): cc*K x cin_g. */
static tc_sgemm_op chunk_op(const conv_transpose_job *job, int64_t g, int64_t c0, int64_t cc) {
    int64_t k = job->lat.kernel_size;
    tc_sgemm_op op = {
        .trans_a = true,
        .m = cc * k,
        .k = job->cin_g,
        .alpha = 1.0f,
        .a = job->w + g * job->cin_g * job->cout_g * k + c0 * k,
        .lda = job->cout_g * k,
    };
    return op;
}

static int64_t chunk_channels_at(const conv_transpose_job *job, int64_t chunk) {
    return tc_min_i64(job->chunk_channels, job->cout_g - chunk * job->chunk_channels);
}

/* Packs the weights of one (group, chunk): task = g * n_chunks + chunk. */
static void conv_transpose_pack_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    conv_transpose_job *job = vjob;
    int64_t chunk = task % job->n_chunks, g = task / job->n_chunks;
    tc_sgemm_op op = chunk_op(job, g, chunk * job->chunk_channels, chunk_channels_at(job, chunk));
    tc_sgemm_pack_a(job->isa, op.trans_a, op.m, op.k, op.a, op.lda,
                    job->packed_w + (size_t)task * job->packed_chunk);
}

static void fill_bias_planes(const conv_transpose_job *job, float *y, int64_t first_channel,
                             int64_t cc) {
    for (int64_t c = 0; c < cc; c++)
        tc_floats_fill(y + c * job->lat.fine_size, job->lat.fine_size,
                       job->bias ? job->bias[first_channel + c] : 0.0f);
}

/* One (batch, group, output-channel chunk): Y planes = bias, then += col2im(W_g^T x X_g). */
static void conv_transpose_task(void *vjob, int64_t task, int worker) {
    conv_transpose_job *job = vjob;
    const tc_lattice *lat = &job->lat;
    int64_t chunk = task % job->n_chunks;
    int64_t g = (task / job->n_chunks) % job->group;
    int64_t n = task / (job->n_chunks * job->group);
    int64_t c0 = chunk * job->chunk_channels;
    int64_t cc = chunk_channels_at(job, chunk);
    int64_t first_channel = g * job->cout_g + c0;
    float *y = job->y + (n * job->c_out + first_channel) * lat->fine_size;
    fill_bias_planes(job, y, first_channel, cc);
    tc_conv_worker_scratch *ws = &job->scratch.workers[worker];
    const float *packed = job->packed_w + (size_t)(g * job->n_chunks + chunk) * job->packed_chunk;
    tc_sgemm_op op = chunk_op(job, g, c0, cc);
    op.ldb = lat->coarse_size;
    const float *x = job->x + (n * job->c_in + g * job->cin_g) * lat->coarse_size;
    for (int64_t p0 = 0; p0 < lat->coarse_size; p0 += job->block_cols) {
        op.n = tc_min_i64(job->block_cols, lat->coarse_size - p0);
        op.b = x + p0;
        if (job->direct) {
            op.beta = 1.0f;
            op.c = y + p0;
            op.ldc = lat->fine_size;
            tc_sgemm_run_packed(&ws->gemm, packed, &op);
        } else {
            op.beta = 0.0f;
            op.c = ws->col;
            op.ldc = op.n;
            tc_sgemm_run_packed(&ws->gemm, packed, &op);
            tc_col2im_block(lat, ws->col, cc, p0, op.n, y);
        }
    }
}

/* A single coarse position (a 1x1 input, e.g. a generator's first layer from its latent
 * vector): per batch item the GEMM would have one column. Instead the whole batch is one GEMM
 * with the roles swapped, col^T = X_g^T x W_g (batch x cc*K), each row of which is that item's
 * col block. Task: one (group, chunk) for every batch item. */
/* Up to this batch, a 1x1 input's product runs as row updates: the GEMM would pad the batch to a
 * whole tile of rows (8 or 12) and repack the weights, its B, on every run. */
#define POINT_AXPY_MAX_BATCH 4

/* c[n, :] = sum over input channels ci of x[n, ci] * W[ci, chunk columns] (row-major c). */
static void point_rows(const conv_transpose_job *job, int64_t g, int64_t c0, int64_t cols,
                       float *c) {
    int64_t k = job->lat.kernel_size;
    for (int64_t n = 0; n < job->batch; n++) {
        float *restrict row = c + n * cols;
        memset(row, 0, (size_t)cols * sizeof(float));
        const float *x = job->x + n * job->c_in + g * job->cin_g;
        for (int64_t ci = 0; ci < job->cin_g; ci++) {
            const float *restrict w = job->w + (g * job->cin_g + ci) * job->cout_g * k + c0 * k;
            float xv = x[ci];
            for (int64_t j = 0; j < cols; j++)
                row[j] += xv * w[j];
        }
    }
}

static void conv_transpose_point_task(void *vjob, int64_t task, int worker) {
    conv_transpose_job *job = vjob;
    const tc_lattice *lat = &job->lat;
    int64_t chunk = task % job->n_chunks, g = task / job->n_chunks;
    int64_t c0 = chunk * job->chunk_channels, cc = chunk_channels_at(job, chunk);
    int64_t k = lat->kernel_size, first_channel = g * job->cout_g + c0;
    tc_conv_worker_scratch *ws = &job->scratch.workers[worker];
    tc_sgemm_op op = {.m = job->batch,
                      .n = cc * k,
                      .k = job->cin_g,
                      .alpha = 1.0f,
                      .a = job->x + g * job->cin_g,
                      .lda = job->c_in,
                      .b = job->w + g * job->cin_g * job->cout_g * k + c0 * k,
                      .ldb = job->cout_g * k,
                      .c = ws->col,
                      .ldc = cc * k};
    if (job->batch <= POINT_AXPY_MAX_BATCH)
        point_rows(job, g, c0, cc * k, ws->col);
    else
        tc_sgemm_run(&ws->gemm, &op);
    for (int64_t n = 0; n < job->batch; n++) {
        float *y = job->y + (n * job->c_out + first_channel) * lat->fine_size;
        fill_bias_planes(job, y, first_channel, cc);
        tc_col2im_block(lat, ws->col + n * cc * k, cc, 0, 1, y);
    }
}

static void conv_transpose_lattice(const tc_conv_transpose_geometry *g, tc_lattice *lat) {
    lat->rank = g->spatial_rank;
    for (int i = 0; i < g->spatial_rank; i++) {
        lat->coarse[i] = g->in[i];
        lat->fine[i] = g->out[i];
        lat->kernel[i] = g->kernel[i];
        lat->strides[i] = g->strides[i];
        lat->dilations[i] = g->dilations[i];
        lat->pad_begin[i] = g->pad_begin[i];
    }
}

/* Splits output channels into chunks when batch x group alone gives the threads too little. */
static void conv_transpose_plan(conv_transpose_job *job, int threads) {
    job->direct = tc_lattice_is_identity(&job->lat);
    /* a single coarse position runs the whole batch in one task per (group, chunk) */
    bool points = job->lat.coarse_size == 1 && !job->direct;
    int64_t outer = points ? job->group : job->batch * job->group;
    job->n_chunks = 1;
    if (threads > 1 && outer < 2 * threads)
        job->n_chunks = tc_min_i64(tc_max_i64(job->cout_g, 1), (2 * threads + outer - 1) / outer);
    job->chunk_channels = tc_max_i64(1, (job->cout_g + job->n_chunks - 1) / job->n_chunks);
    job->n_chunks = tc_max_i64(1, (job->cout_g + job->chunk_channels - 1) / job->chunk_channels);
    int64_t rows = job->chunk_channels * job->lat.kernel_size;
    job->block_cols = job->direct ? tc_max_i64(job->lat.coarse_size, 1)
                                  : tc_conv_block_columns(rows, job->lat.coarse_size, 0);
    job->isa = points ? tc_gemm_isa_for_shape(job->batch, rows)
                      : tc_gemm_isa_for_shape(rows, job->block_cols);
}

static tconv_status conv_transpose_resolve(tc_kernel_ctx *ctx, const tc_conv_operands *ops,
                                           tc_conv_transpose_geometry *g) {
    tc_conv_transpose_attrs attrs;
    tconv_status st = tc_conv_transpose_check_ranks(ops->x->rank, ops->w->rank, ctx->err);
    if (st == TCONV_OK)
        st = tc_conv_transpose_read_attrs(ctx->node, ops->spatial_rank, &attrs, ctx->err);
    if (st == TCONV_OK)
        st = tc_conv_transpose_resolve(&attrs, ops->x->dims, ops->w->dims, ctx->convention, g,
                                       ctx->err);
    return st;
}

/* A Slice / Pad / Add chain the executor fused into this node (kernel.h): the output is the
 * Slice's window of the uncropped output (ONNX Slice normalization, step 1), extended by the
 * Pad's zeros; positions outside the window keep the fill (the fused bias, else 0). Moves the
 * begin pads, sets the output size and the lattice's window. */
static tconv_status apply_crop(tc_kernel_ctx *ctx, tc_conv_transpose_geometry *g,
                               int64_t *window_lo, int64_t *window_hi) {
    const tc_kernel_crop *crop = ctx->crop;
    int64_t start[TCONV_MAX_SPATIAL] = {0}, end[TCONV_MAX_SPATIAL];
    for (int i = 0; i < g->spatial_rank; i++)
        end[i] = g->out[i];
    for (size_t k = 0; k < crop->n; k++) {
        int i = crop->axes[k] - 2;
        if (i < 0 || i >= g->spatial_rank)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "fused crop on axis %d of a rank-%d output", crop->axes[k],
                                g->spatial_rank + 2);
        int64_t dim = g->out[i], a = crop->starts[k], b = crop->ends[k];
        a = a < 0 ? a + dim : a;
        b = b < 0 ? b + dim : b;
        start[i] = tc_min_i64(tc_max_i64(a, 0), dim);
        end[i] = tc_max_i64(start[i], tc_min_i64(tc_max_i64(b, 0), dim));
    }
    for (int i = 0; i < g->spatial_rank; i++) {
        int64_t before = crop->extend_begin[i + 2], after = crop->extend_end[i + 2];
        g->pad_begin[i] += start[i] - before;
        g->out[i] = end[i] - start[i] + before + after;
        window_lo[i] = before;
        window_hi[i] = before + end[i] - start[i];
    }
    return TCONV_OK;
}

/* The general case: weights packed once per (group, chunk), then (batch, group, chunk) tasks. */
static tconv_status conv_transpose_blocks(tc_kernel_ctx *ctx, conv_transpose_job *job,
                                          int threads) {
    int64_t rows = job->chunk_channels * job->lat.kernel_size;
    int64_t n_slots = job->group * job->n_chunks;
    job->packed_chunk = tc_sgemm_packed_a_floats(job->isa, rows, job->cin_g);
    tc_kernel_cache_key key = {
        .source = job->w,
        .layout = {job->chunk_channels, job->n_chunks, job->group, job->cin_g, job->isa}};
    tc_rt_tensor packed;
    bool fresh;
    tconv_status st =
        tc_conv_packed_weights(ctx, &key, (size_t)n_slots * job->packed_chunk * sizeof(float),
                               &job->packed_w, &fresh, &packed);
    if (st != TCONV_OK)
        return st;
    int64_t n_tasks = job->batch * n_slots;
    int workers = tc_parallel_workers(threads, n_tasks);
    st = tc_conv_scratch_reserve(ctx, &job->scratch, workers,
                                 job->direct ? 0 : rows * job->block_cols, job->isa, rows,
                                 job->block_cols, job->cin_g);
    if (st == TCONV_OK) {
        if (fresh)
            tc_parallel_for(ctx->pool, tc_parallel_workers(threads, n_slots), n_slots,
                            conv_transpose_pack_task, job);
        tc_parallel_for(ctx->pool, workers, n_tasks, conv_transpose_task, job);
        tc_conv_scratch_release(ctx, &job->scratch);
    }
    tc_kernel_scratch_release(ctx, &packed);
    return st;
}

/* One coarse position: the batch-wide GEMM of conv_transpose_point_task. */
static tconv_status conv_transpose_points(tc_kernel_ctx *ctx, conv_transpose_job *job,
                                          int threads) {
    int64_t rows = job->chunk_channels * job->lat.kernel_size;
    int64_t n_tasks = job->group * job->n_chunks;
    int workers = tc_parallel_workers(threads, n_tasks);
    tconv_status st = tc_conv_scratch_reserve(ctx, &job->scratch, workers, job->batch * rows,
                                              job->isa, job->batch, rows, job->cin_g);
    if (st != TCONV_OK)
        return st;
    tc_parallel_for(ctx->pool, workers, n_tasks, conv_transpose_point_task, job);
    tc_conv_scratch_release(ctx, &job->scratch);
    return TCONV_OK;
}

/* float64: the direct loop of kernels_f64.c over the same lattice; a fused bias (float32, the
 * executor's) is widened first. */
static tconv_status conv_transpose_f64(tc_kernel_ctx *ctx, const conv_transpose_job *job,
                                       const tc_conv_operands *ops, tc_rt_tensor *y) {
    const double *bias = ops->b ? ops->b->data : NULL;
    tc_rt_tensor fused = {0}, map;
    tconv_status st = TCONV_OK;
    if (ctx->crop && ctx->crop->bias) {
        if ((st = tc_kernel_scratch(ctx, (size_t)job->c_out * sizeof(double), &fused)) != TCONV_OK)
            return tc_error_prefix(ctx->err, st, "the fused bias: ");
        double *widened = fused.data;
        for (int64_t c = 0; c < job->c_out; c++)
            widened[c] = ctx->crop->bias[c];
        bias = widened;
    }
    if ((st = tc_f64_index_map(ctx, &job->lat, &map)) == TCONV_OK) {
        tc_conv_transpose_f64(&job->lat, map.data, job->batch, job->c_in, job->c_out, job->group,
                              ops->x->data, ops->w->data, bias, y->data);
        tc_kernel_scratch_release(ctx, &map);
    }
    if (fused.data)
        tc_kernel_scratch_release(ctx, &fused);
    return st;
}

tconv_status tc_run_conv_transpose(tc_kernel_ctx *ctx) {
    tc_conv_operands ops = {0}; /* tc_conv_read_operands may fail before filling it */
    tc_conv_transpose_geometry g;
    tconv_status st = tc_conv_read_operands(ctx, &ops);
    if (st == TCONV_OK)
        st = conv_transpose_resolve(ctx, &ops, &g);
    int64_t window_lo[TCONV_MAX_SPATIAL], window_hi[TCONV_MAX_SPATIAL];
    if (st == TCONV_OK && ctx->crop)
        st = apply_crop(ctx, &g, window_lo, window_hi);
    const float *bias = ops.b ? ops.b->data : NULL;
    if (st == TCONV_OK && ctx->crop && ctx->crop->bias) {
        if (ops.b || ctx->crop->bias_len != g.c_out)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "fused bias of %lld values for %lld channels",
                                (long long)ctx->crop->bias_len, (long long)g.c_out);
        bias = ctx->crop->bias;
    }
    if (st == TCONV_OK && ops.b) /* the import checks B with the same function */
        st = tc_conv_transpose_check_bias(ops.b->rank, ops.b->dims, g.c_out, ctx->err);
    if (st != TCONV_OK)
        return st;
    conv_transpose_job job = {.batch = ops.x->dims[0],
                              .c_in = g.c_in,
                              .c_out = g.c_out,
                              .group = g.group,
                              .cin_g = g.c_in / g.group,
                              .cout_g = ops.w->dims[1]};
    conv_transpose_lattice(&g, &job.lat);
    if (ctx->crop) {
        job.lat.windowed = true;
        memcpy(job.lat.window_lo, window_lo, sizeof window_lo);
        memcpy(job.lat.window_hi, window_hi, sizeof window_hi);
    }
    if (!tc_lattice_finish(&job.lat))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "ConvTranspose sizes overflow");
    int64_t y_dims[TCONV_MAX_RANK] = {job.batch, job.c_out};
    memcpy(y_dims + 2, g.out, (size_t)g.spatial_rank * sizeof(int64_t));
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, ops.x->dtype, ops.x->rank, y_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    if (ops.x->dtype == TCONV_DTYPE_DOUBLE && ctx->activation) /* fused only into float32 */
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "a fused activation needs a float32 output, X is float64");
    if (ops.x->dtype == TCONV_DTYPE_DOUBLE)
        return conv_transpose_f64(ctx, &job, &ops, y);
    double flops = 2.0 * (double)job.batch * (double)job.c_in * (double)job.cout_g *
                   (double)job.lat.kernel_size * (double)job.lat.coarse_size;
    int threads = tc_parallel_threads_for_work(ctx->n_threads, flops);
    conv_transpose_plan(&job, threads);
    job.x = ops.x->data;
    job.w = ops.w->data;
    job.bias = bias;
    job.y = y->data;
    st = job.lat.coarse_size == 1 && !job.direct ? conv_transpose_points(ctx, &job, threads)
                                                 : conv_transpose_blocks(ctx, &job, threads);
    /* activation fusion (session_fuse.c, helper p2): the final output, crop and bias included */
    if (st == TCONV_OK && ctx->activation)
        tc_kernel_activation_apply(ctx->activation, y->data, y->data, y->n_elements);
    return st;
}
