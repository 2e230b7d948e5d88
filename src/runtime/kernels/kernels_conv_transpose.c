/* ConvTranspose over float32 (float64: kernels_f64.c), built on the packed GEMM. Where the output
 * is s times X (the usual upsampling layer), the phase form: one masked GEMM per output phase that
 * reads X in place and stores its phase of Y once (below). Otherwise col = W_g^T x X_g,
 * then col2im adds each column into Y (conv_lattice.h), skipping fine positions outside [0, out):
 * pads crop directly, and positions past the full output just keep the bias they were initialised
 * with. A Slice/Pad/Add chain the executor fused in narrows that window. The work is split over
 * (batch, group, output-channel chunk): tasks write disjoint planes of Y, so no locking is
 * needed. The pad arithmetic is tc_conv_transpose_resolve's, the same as the legalization's
 * check of itself: never a call into a pass. */
#include <stdlib.h>
#include <string.h>

#include "ir/conv_transpose_geometry.h"
#include "runtime/kernels/conv_common.h"
#include "runtime/kernels/conv_lattice.h"
#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels_f64.h"

typedef struct conv_transpose_job {
    /* coarse: X spatial, fine: Y spatial; sub-pixel: coarse the super-pixel grid, kernel =
     * strides (one tap per phase) */
    tc_lattice lat;
    /* Sub-pixel form (subpixel_plan): the im2col of X for the phases' stride-1 correlation */
    bool subpixel;
    tc_lattice taps;
    int64_t taps_rows;                               /* cin_g * taps.kernel_size: the GEMM's k */
    int64_t w_kernel[TC_MAX_SPATIAL], w_kernel_size; /* W's taps (lat.kernel before) */
    int64_t batch, c_in, c_out, group, cin_g, cout_g;
    int64_t chunk_channels, n_chunks, block_cols;
    int64_t n_blocks; /* sub-pixel: column blocks per (batch, group) */
    bool covers;      /* sub-pixel: the blocks set every Y position (no fill first) */
    tc_gemm_isa isa;  /* the GEMM kernel, for the chunk's rows and block's columns */
    bool direct;      /* 1x1 identity mapping: the GEMM writes Y */
    const float *x, *w, *bias;
    float *y;
    /* fused by the executor: applied by each task to the planes it finished (not sub-pixel,
     * whose blocks end scattered over the planes: there the run applies it after) */
    const tc_kernel_activation *act;
    float *packed_w;     /* W_g^T of every (group, chunk), packed once for the whole batch;
                          * few positions: W_g's chunk as the GEMM's packed B, or NULL */
    size_t packed_chunk; /* floats per (group, chunk) slot of packed_w */
    tc_conv_scratch scratch;
} conv_transpose_job;

/* The W_g^T rows of one (group, chunk) as the GEMM's op(A): cc*K x cin_g; sub-pixel: the
 * rearranged weights' rows (subpixel_weights), cc*P x taps_rows. */
static tc_sgemm_op chunk_op(const conv_transpose_job *job, int64_t g, int64_t c0, int64_t cc) {
    int64_t k = job->lat.kernel_size;
    if (job->subpixel) {
        tc_sgemm_op op = {.m = cc * k,
                          .k = job->taps_rows,
                          .alpha = 1.0f,
                          .a = job->w + (g * job->cout_g + c0) * k * job->taps_rows,
                          .lda = job->taps_rows};
        return op;
    }
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
    if (job->act) /* the chunk's planes are done, and in this core's cache */
        tc_kernel_activation_apply(job->act, y, y, cc * lat->fine_size);
}

/* Sub-pixel form: one (batch, group, column block of the super-pixel grid, output-channel
 * chunk); the chunk varies fastest. The blocks write disjoint Y positions, whose planes were
 * filled first (fill_plane_task) unless the blocks cover them. */
static void subpixel_task(void *vjob, int64_t task, int worker) {
    conv_transpose_job *job = vjob;
    const tc_lattice *lat = &job->lat;
    int64_t n_blocks = job->n_blocks, chunk = task % job->n_chunks, rest = task / job->n_chunks;
    int64_t p0 = rest % n_blocks * job->block_cols;
    int64_t g = rest / n_blocks % job->group, n = rest / (n_blocks * job->group);
    int64_t c0 = chunk * job->chunk_channels, cc = chunk_channels_at(job, chunk);
    tc_conv_worker_scratch *ws = &job->scratch.workers[worker];
    tc_sgemm_op op = chunk_op(job, g, c0, cc);
    op.n = tc_min_i64(job->block_cols, lat->coarse_size - p0);
    /* the block's X taps after its col rows */
    float *taps = ws->col + op.m * job->block_cols;
    const float *x = job->x + (n * job->c_in + g * job->cin_g) * job->taps.fine_size;
    tc_im2col_block(&job->taps, x, job->cin_g, p0, op.n, taps);
    op.b = taps;
    op.ldb = op.n;
    op.c = ws->col;
    op.ldc = op.n;
    tc_sgemm_run_packed(
        &ws->gemm, job->packed_w + (size_t)(g * job->n_chunks + chunk) * job->packed_chunk, &op);
    int64_t first_channel = g * job->cout_g + c0;
    float *y = job->y + (n * job->c_out + first_channel) * lat->fine_size;
    if (job->covers)
        tc_col2im_block_store(lat, ws->col, cc, p0, op.n,
                              job->bias ? job->bias + first_channel : NULL, y);
    else
        tc_col2im_block(lat, ws->col, cc, p0, op.n, y);
}

/* Task: one Y plane (batch item, channel) set to its bias or 0. */
static void fill_plane_task(void *vjob, int64_t plane, int worker) {
    (void)worker;
    conv_transpose_job *job = vjob;
    tc_floats_fill(job->y + plane * job->lat.fine_size, job->lat.fine_size,
                   job->bias ? job->bias[plane % job->c_out] : 0.0f);
}

/* Few coarse positions (a generator's first layers: a 1x1 input from the latent vector, then
 * 4x4): per batch item the GEMM would have 1 to 16 columns, a fraction of one vector, and would
 * stream all of W once per item. Instead the whole batch is one GEMM with the roles swapped,
 * col^T = X_g^T x W_g ((batch x positions) x cc*K): W_g as it lies is B (cin_g rows of cout_g*K,
 * read in place through row pointers), X_g^T is gathered into the GEMM's packed A for every
 * batch item at once, and each item's rows, transposed, are its col block for col2im. Task: one
 * (group, chunk) for the whole batch. */
#define FEW_MAX_POSITIONS 16

static bool conv_transpose_few(const conv_transpose_job *job) {
    return !job->subpixel && !job->direct && job->lat.coarse_size <= FEW_MAX_POSITIONS;
}

/* The few-positions task's scratch, carved from `base` (NULL: only the size): C, one item's col
 * block, B's row pointers, the rows' gather offsets, and the packed A, each on a cache line.
 * Returns its floats. */
typedef struct few_scratch {
    float *c, *col, *packed;
    const float **b_rows;
    int64_t *row_offsets;
} few_scratch;

/* floats rounded up to whole cache lines */
static int64_t cache_line_floats(int64_t floats) {
    return tc_round_up_i64(floats, 16);
}

static int64_t few_layout(const conv_transpose_job *job, float *base, few_scratch *fs) {
    int64_t positions = job->lat.coarse_size, rows = job->batch * positions;
    int64_t cols = job->chunk_channels * job->lat.kernel_size;
    int64_t sizes[5] = {
        cache_line_floats(rows * cols), cache_line_floats(cols * positions),
        cache_line_floats(job->cin_g * 2), /* pointers and offsets: 2 floats each */
        cache_line_floats(rows * 2),
        cache_line_floats((int64_t)tc_sgemm_packed_a_floats(job->isa, rows, job->cin_g))};
    int64_t at[5], total = 0;
    for (int i = 0; i < 5; i++) {
        at[i] = total;
        total += sizes[i];
    }
    if (base) {
        fs->c = base + at[0];
        fs->col = base + at[1];
        fs->b_rows = (const float **)(void *)(base + at[2]);
        fs->row_offsets = (int64_t *)(void *)(base + at[3]);
        fs->packed = base + at[4];
    }
    return total;
}

static void conv_transpose_few_task(void *vjob, int64_t task, int worker) {
    conv_transpose_job *job = vjob;
    const tc_lattice *lat = &job->lat;
    int64_t chunk = task % job->n_chunks, g = task / job->n_chunks;
    int64_t c0 = chunk * job->chunk_channels, cc = chunk_channels_at(job, chunk);
    int64_t k = lat->kernel_size, first_channel = g * job->cout_g + c0;
    int64_t positions = lat->coarse_size, rows = job->batch * positions, cols = cc * k;
    tc_conv_worker_scratch *ws = &job->scratch.workers[worker];
    few_scratch fs;
    few_layout(job, ws->col, &fs);
    float *c = fs.c, *col = fs.col;
    const float **b_rows = fs.b_rows;
    int64_t *row_offsets = fs.row_offsets;
    float *packed = fs.packed;
    for (int64_t n = 0; n < job->batch; n++)
        for (int64_t q = 0; q < positions; q++)
            row_offsets[n * positions + q] = n * job->c_in * positions + q;
    for (int64_t ci = 0; !job->packed_w && ci < job->cin_g; ci++) /* W read in place */
        b_rows[ci] = job->w + (g * job->cin_g + ci) * job->cout_g * k + c0 * k;
    /* one "tap" a row: item n's position q, channel ci at ci * positions */
    tc_sgemm_pack_a_taps(job->isa, rows, 0, rows, job->cin_g, 1,
                         job->x + g * job->cin_g * positions, positions, row_offsets, packed);
    tc_sgemm_op op = {.m = rows,
                      .n = cols,
                      .k = job->cin_g,
                      .alpha = 1.0f,
                      .b_rows = job->packed_w ? NULL : b_rows,
                      .packed_b =
                          job->packed_w ? job->packed_w + (size_t)task * job->packed_chunk : NULL,
                      .c = c,
                      .ldc = cols};
    tc_sgemm_run_packed(&ws->gemm, packed, &op);
    for (int64_t n = 0; n < job->batch; n++) {
        float *y = job->y + (n * job->c_out + first_channel) * lat->fine_size;
        const float *item = c + n * positions * cols;
        for (int64_t r = 0; r < cols; r++)
            for (int64_t q = 0; q < positions; q++)
                col[r * positions + q] = item[q * cols + r];
        fill_bias_planes(job, y, first_channel, cc);
        tc_col2im_block(lat, col, cc, 0, positions, y);
        if (job->act)
            tc_kernel_activation_apply(job->act, y, y, cc * lat->fine_size);
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

/* ---------------------------------------------------------------- sub-pixel form
 *
 * Where every stride divides its kernel (k = T*s, dilation 1), output position y = q*s + a - pad
 * (phase a in [0, s)) takes W taps a + s*m from X at q - m, m in [0, T): per phase, a stride-1
 * correlation of X with T taps. So col = A' x im2col(X, T taps, pad T - 1), where A' holds W
 * rearranged to rows (channel, phase) and columns (input channel, tap): one GEMM, and the col
 * block then adds exactly one value into each Y position (a col2im whose kernel is the stride).
 * col2im proper would add k/s values (per axis) into each, with strided read-modify-writes; at
 * strides of 4 and up that costs more than the GEMM. Same FLOPs, but over the super-pixel grid
 * (X grown by T - 1 per axis). */

/* The sub-pixel form when the last axis' stride is at least this, or (stride 2 and 3) input
 * channels per group at most SUBPIXEL_MAX_CIN: col2im's work per GEMM flop grows with the stride
 * and falls with the input channels. Measured here (thread CPU time, 1 thread): FCN's k16 s8
 * 20-25% faster, MelGAN's k16 s8 even; depthwise k4 s2 (grouped_upsampler) 30% faster; k4 s2
 * with 16 to 256 input channels (DCGAN, bench/gen_layers.py) 2-10% slower, and stride 1 (a
 * plain correlation over a grid grown by the kernel) much slower, so not those. */
#define SUBPIXEL_MIN_STRIDE 4
#define SUBPIXEL_MAX_CIN 8

static bool subpixel_fits(const conv_transpose_job *job) {
    const tc_lattice *lat = &job->lat;
    bool overlaps = false;
    if (tc_lattice_is_identity(lat) || lat->coarse_size <= 1 || lat->strides[lat->rank - 1] < 2 ||
        (lat->strides[lat->rank - 1] < SUBPIXEL_MIN_STRIDE && job->cin_g > SUBPIXEL_MAX_CIN))
        return false;
    for (int i = 0; i < lat->rank; i++) {
        if (lat->dilations[i] != 1 || lat->kernel[i] % lat->strides[i] != 0)
            return false;
        overlaps = overlaps || lat->kernel[i] > lat->strides[i];
    }
    return overlaps;
}

/* Turns lat into the phases' lattice (coarse: the super-pixel grid, one tap per phase) and sets
 * the taps' im2col lattice. False (nothing changed) when the form does not apply. */
static bool subpixel_plan(conv_transpose_job *job) {
    if (!subpixel_fits(job))
        return false;
    tc_lattice phases = job->lat, taps;
    memset(&taps, 0, sizeof taps);
    taps.rank = phases.rank;
    for (int i = 0; i < phases.rank; i++) {
        int64_t t = phases.kernel[i] / phases.strides[i];
        taps.coarse[i] = phases.coarse[i] + t - 1;
        taps.fine[i] = phases.coarse[i];
        taps.kernel[i] = t;
        taps.strides[i] = 1;
        taps.dilations[i] = 1;
        taps.pad_begin[i] = t - 1;
        phases.coarse[i] = taps.coarse[i];
        phases.kernel[i] = phases.strides[i];
    }
    int64_t taps_rows;
    if (!tc_lattice_finish(&taps) || !tc_lattice_finish(&phases) ||
        !tc_mul_i64(job->cin_g, taps.kernel_size, &taps_rows))
        return false; /* sizes past int64: the col2im form, which has none */
    job->w_kernel_size = job->lat.kernel_size;
    memcpy(job->w_kernel, job->lat.kernel, sizeof job->w_kernel);
    job->lat = phases;
    job->taps = taps;
    job->taps_rows = taps_rows;
    job->subpixel = true;
    /* The super-pixels reach Y positions [-pad, Q*s - pad) per axis, each exactly once: when
     * that holds the whole window and the window is all of Y, the blocks set every value. */
    job->covers = true;
    for (int i = 0; i < phases.rank; i++)
        job->covers = job->covers && phases.window_lo[i] == 0 &&
                      phases.window_hi[i] == phases.fine[i] && phases.pad_begin[i] >= 0 &&
                      phases.coarse[i] >=
                          tc_ceil_div(phases.fine[i] + phases.pad_begin[i], phases.strides[i]);
    return true;
}

/* A' = W rearranged: row (output channel, phase), column (input channel, im2col tap t), which
 * holds W's tap a + s*(T - 1 - t) per axis. Task: one output channel of every group. */
static void subpixel_weights_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    conv_transpose_job *job = vjob;
    const tc_lattice *lat = &job->lat;
    int64_t rank = lat->rank, phases = lat->kernel_size, t_size = job->taps.kernel_size;
    int64_t g = task / job->cout_g, co = task % job->cout_g;
    float *rows = job->packed_w + task * phases * job->taps_rows; /* the unpacked A' here */
    int64_t a[TC_MAX_SPATIAL] = {0};
    for (int64_t ph = 0; ph < phases; ph++, tc_lattice_next_tap(lat, a)) {
        float *row = rows + ph * job->taps_rows;
        int64_t t[TC_MAX_SPATIAL] = {0};
        for (int64_t ti = 0; ti < t_size; ti++, tc_lattice_next_tap(&job->taps, t)) {
            int64_t tap = 0;
            for (int i = 0; i < rank; i++)
                tap = tap * job->w_kernel[i] + a[i] +
                      lat->strides[i] * (job->taps.kernel[i] - 1 - t[i]);
            for (int64_t ci = 0; ci < job->cin_g; ci++)
                row[ci * t_size + ti] =
                    job->w[((g * job->cin_g + ci) * job->cout_g + co) * job->w_kernel_size + tap];
        }
    }
}

/* Sub-pixel: every output channel of a group in one GEMM (the taps' im2col is shared by all of
 * them), the threads split the super-pixel grid instead. A grid too small for blocks of
 * SUBPIXEL_MIN_PARALLEL_COLS columns a thread splits the output channels (each chunk builds the
 * taps' im2col again, a small copy): narrower blocks leave most of a GEMM tile empty, and
 * audio_upsampler's k16 s8 layer over 24 positions ran slower on 2 threads than on 1. */
#define SUBPIXEL_MIN_PARALLEL_COLS 64
static void subpixel_split(conv_transpose_job *job, int threads) {
    int64_t rows = job->cout_g * job->lat.kernel_size, total = job->lat.coarse_size;
    job->n_chunks = 1;
    job->chunk_channels = job->cout_g;
    job->block_cols = tc_conv_block_columns(rows + job->taps_rows, total, 0);
    int64_t outer = job->batch * job->group, want = 2 * (int64_t)threads;
    int64_t blocks = (total + job->block_cols - 1) / job->block_cols;
    if (threads > 1 && outer * blocks < want) {
        int64_t wanted_blocks = (want + outer - 1) / outer;
        int64_t cols = ((total + wanted_blocks - 1) / wanted_blocks + 15) / 16 * 16;
        if (cols >= SUBPIXEL_MIN_PARALLEL_COLS) {
            job->block_cols = tc_min_i64(job->block_cols, cols);
        } else {
            int64_t chunks =
                tc_min_i64(job->cout_g, (want + outer * blocks - 1) / (outer * blocks));
            job->chunk_channels = (job->cout_g + chunks - 1) / chunks;
            job->n_chunks = (job->cout_g + job->chunk_channels - 1) / job->chunk_channels;
        }
    }
    job->n_blocks = (total + job->block_cols - 1) / job->block_cols;
    job->isa = tc_gemm_isa_for_shape(job->chunk_channels * job->lat.kernel_size, job->block_cols);
}

static void conv_transpose_plan(conv_transpose_job *job, int threads) {
    if (job->subpixel) {
        subpixel_split(job, threads);
        return;
    }
    job->direct = tc_lattice_is_identity(&job->lat);
    /* few coarse positions run the whole batch in one task per (group, chunk) */
    bool few = conv_transpose_few(job);
    int64_t outer = few ? job->group : job->batch * job->group;
    job->n_chunks = 1;
    if (threads > 1 && outer < 2 * threads)
        job->n_chunks = tc_min_i64(tc_max_i64(job->cout_g, 1), (2 * threads + outer - 1) / outer);
    job->chunk_channels = tc_max_i64(1, (job->cout_g + job->n_chunks - 1) / job->n_chunks);
    job->n_chunks = tc_max_i64(1, (job->cout_g + job->chunk_channels - 1) / job->chunk_channels);
    int64_t rows = job->chunk_channels * job->lat.kernel_size;
    job->block_cols = job->direct ? tc_max_i64(job->lat.coarse_size, 1)
                                  : tc_conv_block_columns(rows, job->lat.coarse_size, 0);
    job->isa = few ? tc_gemm_isa_for_shape(job->batch * job->lat.coarse_size, rows)
                   : tc_gemm_isa_for_shape(rows, job->block_cols);
}

/* tc_rank_attr_reader: tc_conv_transpose_read_attrs, once per rank at prepare. */
static tconv_status read_conv_transpose_attrs(const tconv_node *node, int rank, void *out,
                                              tc_error *err) {
    return tc_conv_transpose_read_attrs(node, rank, out, err);
}

/* The geometry from the attributes prepared for X's rank (ctx->params) and the shapes. */
static tconv_status conv_transpose_resolve(tc_kernel_ctx *ctx, const tc_conv_operands *ops,
                                           tc_conv_transpose_geometry *g) {
    const void *attrs = NULL;
    tconv_status st = tc_conv_transpose_check_ranks(ops->x->rank, ops->w->rank, ctx->err);
    if (st == TCONV_OK)
        st = tc_rank_attrs_get(ctx, ctx->params, ops->spatial_rank, &attrs);
    if (st == TCONV_OK)
        st = tc_conv_transpose_resolve(attrs, ops->x->dims, ops->w->dims, ctx->convention, g,
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
    int64_t start[TC_MAX_SPATIAL] = {0}, end[TC_MAX_SPATIAL];
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
/* Packs the weights of every (group, chunk); sub-pixel: rearranges them first, in scratch. */
static tconv_status conv_transpose_pack(tc_kernel_ctx *ctx, conv_transpose_job *job, int threads) {
    int64_t n_slots = job->group * job->n_chunks;
    const float *w = job->w, *packed = job->packed_w;
    tc_rt_tensor rearranged = {0};
    if (job->subpixel) {
        int64_t channels = job->group * job->cout_g;
        size_t floats = (size_t)(channels * job->lat.kernel_size * job->taps_rows);
        tconv_status st = tc_kernel_scratch(ctx, floats * sizeof(float), &rearranged);
        if (st != TCONV_OK)
            return st;
        job->packed_w = rearranged.data;
        tc_parallel_for(ctx->pool, tc_parallel_workers(threads, channels), channels,
                        subpixel_weights_task, job);
        job->packed_w = (float *)packed;
        job->w = rearranged.data;
    }
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, n_slots), n_slots,
                    conv_transpose_pack_task, job);
    job->w = w;
    if (rearranged.data)
        tc_kernel_scratch_release(ctx, &rearranged);
    return TCONV_OK;
}

static tconv_status conv_transpose_blocks(tc_kernel_ctx *ctx, conv_transpose_job *job,
                                          int threads) {
    int64_t rows = job->chunk_channels * job->lat.kernel_size;
    int64_t gemm_k = job->subpixel ? job->taps_rows : job->cin_g;
    int64_t n_slots = job->group * job->n_chunks;
    job->packed_chunk = tc_sgemm_packed_a_floats(job->isa, rows, gemm_k);
    tc_kernel_cache_key key = {.source = job->w,
                               .layout = {job->chunk_channels, job->n_chunks, job->group,
                                          job->cin_g, job->isa, job->subpixel}};
    tc_rt_tensor packed;
    bool fresh;
    tconv_status st =
        tc_conv_packed_weights(ctx, &key, (size_t)n_slots * job->packed_chunk * sizeof(float),
                               &job->packed_w, &fresh, &packed);
    if (st != TCONV_OK)
        return st;
    int64_t n_tasks = job->batch * n_slots * (job->subpixel ? job->n_blocks : 1);
    int workers = tc_parallel_workers(threads, n_tasks);
    int64_t col_rows = job->direct ? 0 : rows + (job->subpixel ? job->taps_rows : 0);
    st = tc_conv_scratch_reserve(ctx, &job->scratch, workers, col_rows * job->block_cols, job->isa,
                                 rows, job->block_cols, gemm_k);
    if (st == TCONV_OK) {
        if (fresh)
            st = conv_transpose_pack(ctx, job, threads);
        if (st == TCONV_OK && job->subpixel) {
            int64_t planes = job->batch * job->c_out;
            if (!job->covers)
                tc_parallel_for(ctx->pool, tc_parallel_workers(threads, planes), planes,
                                fill_plane_task, job);
            tc_parallel_for(ctx->pool, workers, n_tasks, subpixel_task, job);
        } else if (st == TCONV_OK) {
            tc_parallel_for(ctx->pool, workers, n_tasks, conv_transpose_task, job);
        }
        tc_conv_scratch_release(ctx, &job->scratch);
    }
    tc_kernel_scratch_release(ctx, &packed);
    return st;
}

/* W_g's chunks as the few-positions GEMM's packed B, kept across runs, where the GEMM would pack
 * them on every run (tc_sgemm_reads_b_rows_in_place false: AVX2 beyond 1024 columns). DCGAN's
 * first layer (100 -> 128 channels, 1x1 -> 4x4) copied all 819 KB of W per run, more than L2
 * holds, and then read the copy: 95 us against onnxruntime's 56. Else packed_w stays NULL (B
 * read in place). */
static tconv_status few_packed_weights(tc_kernel_ctx *ctx, conv_transpose_job *job,
                                       tc_rt_tensor *scratch) {
    int64_t k = job->lat.kernel_size, cols = job->chunk_channels * k;
    *scratch = (tc_rt_tensor){0};
    job->packed_w = NULL;
    if (tc_sgemm_reads_b_rows_in_place(job->isa, job->batch * job->lat.coarse_size, cols))
        return TCONV_OK;
    job->packed_chunk = tc_sgemm_packed_b_floats(job->isa, job->cin_g, cols);
    int64_t n_slots = job->group * job->n_chunks;
    /* layout[5] -1: the few-positions form (conv_transpose_blocks keys 0 and 1) */
    tc_kernel_cache_key key = {
        .source = job->w,
        .layout = {job->chunk_channels, job->n_chunks, job->group, job->cin_g, job->isa, -1}};
    bool fresh;
    tconv_status st =
        tc_conv_packed_weights(ctx, &key, (size_t)n_slots * job->packed_chunk * sizeof(float),
                               &job->packed_w, &fresh, scratch);
    for (int64_t slot = 0; st == TCONV_OK && fresh && slot < n_slots; slot++) {
        int64_t g = slot / job->n_chunks, c0 = slot % job->n_chunks * job->chunk_channels;
        int64_t cc = chunk_channels_at(job, slot % job->n_chunks);
        tc_sgemm_pack_b(job->isa, false, job->cin_g, cc * k,
                        job->w + g * job->cin_g * job->cout_g * k + c0 * k, job->cout_g * k,
                        job->packed_w + (size_t)slot * job->packed_chunk);
    }
    return st;
}

/* Few coarse positions: the batch-wide GEMM of conv_transpose_few_task. */
static tconv_status conv_transpose_few_positions(tc_kernel_ctx *ctx, conv_transpose_job *job,
                                                 int threads) {
    int64_t n_tasks = job->group * job->n_chunks;
    int workers = tc_parallel_workers(threads, n_tasks);
    tc_rt_tensor packed;
    tconv_status st = few_packed_weights(ctx, job, &packed);
    if (st == TCONV_OK)
        st = tc_conv_scratch_reserve(ctx, &job->scratch, workers, few_layout(job, NULL, NULL),
                                     job->isa, job->batch * job->lat.coarse_size,
                                     job->chunk_channels * job->lat.kernel_size, job->cin_g);
    if (st == TCONV_OK) {
        tc_parallel_for(ctx->pool, workers, n_tasks, conv_transpose_few_task, job);
        tc_conv_scratch_release(ctx, &job->scratch);
    }
    tc_kernel_scratch_release(ctx, &packed);
    return st;
}

/* ---------------------------------------------------------------- phase form
 *
 * Output position j = s*q + r (phase r in [0, s) per axis) takes W taps t = c_r + s*m,
 * m in [0, M_r), from X at q + e_r - m, where c_r = (r + pad) mod s, e_r = (r + pad - c_r) / s
 * and M_r counts the taps below k. So each phase is a stride-1 Conv of X with M_r taps
 * (reversed) and begin pad M_r - 1 - e_r, over a grid of X's own size where the output is s
 * times X (DCGAN's k4 s2 p1, ERFNet's k3 s2 p1 with output_padding 1). Each runs as Conv's
 * masked GEMM does: B's rows are X's planes at each tap's flat shift, read in place, the lanes
 * outside X masked (tc_lattice_masked_taps). The C block is stored with the bias and the
 * activation to its phase's positions of Y: every Y value is written once and never read back.
 * col2im instead adds k/s values per axis into each Y position with strided
 * read-modify-writes (a third of DCGAN's ConvTranspose time); the sub-pixel form copies X
 * into an im2col over a grid grown by the kernel and pads the phases' taps to the longest. Same
 * FLOPs as col2im's GEMM, in one GEMM a phase. A kernel equal to the stride (U-Net's k2 s2) makes
 * each phase one tap, a 1x1 Conv of X: col2im then adds one value into each Y position, but
 * still writes the GEMM's whole result to its column buffer and reads it back, a third of the
 * node's time; as phases U-Net's four k2 s2 layers took 8-17% less at 1 thread and 3-57% less at
 * 2 (3-D k2 s2, 64 -> 32 channels on 16^3: 1.99 -> 1.75 ms). */
#define PHASE_MAX 16 /* phases (product of the strides) the form takes */
_Static_assert(PHASE_MAX <= TC_CONV_TABLE_LATTICES, "a tap table per phase");
/* The form needs rows for the GEMM's tiles and a grid that fills half a vector: DCGAN's 4x4 ->
 * 8x8 layer (128 -> 64 channels, batch 2) took 148 us through the few-positions GEMM, its
 * transpose and col2im, 80 us as phases (3x3 grids: 61 -> 48 us); a 2x2 grid uses 4 lanes of
 * 16 and ran 3x slower as phases. Three output channels are enough rows: DCGAN's last layer
 * (16 -> 3, k4 s2 to 64x64) took 6% less time as phases at 1 thread and 13% less at 2 (AVX2,
 * one process, both orders), the whole float16 DCGAN 6% less; one channel was not (Keras's
 * 16 -> 1 3x3 at stride 1: 11% more as one phase than through col2im). */
#define PHASE_MIN_CHANNELS 3
#define PHASE_MIN_POSITIONS 8

typedef struct phase_geom {
    tc_lattice lat;            /* the phase's Conv: stride 1 over X */
    int64_t r[TC_MAX_SPATIAL]; /* its output phase per axis */
    int64_t c[TC_MAX_SPATIAL]; /* W's first tap per axis (c_r) */
    tc_conv_tap_masks taps;    /* its flat read's tables (tc_lattice_masked_taps) */
    size_t packed_at;          /* floats into a (group, chunk) slot of the packed weights */
} phase_geom;

typedef struct phase_job {
    const conv_transpose_job *ct;
    int64_t n_phases, positions, words, depth_max; /* depth: cin_g x the phase's taps */
    phase_geom *phases;                            /* n_phases of them */
    int64_t block_cols, n_blocks, chunk_rows, n_chunks;
    tc_gemm_isa isa;
    const float *packed;
    size_t slot_floats; /* one (group, chunk): every phase's packed A */
    tc_conv_scratch scratch;
} phase_job;

/* Whether the phase form applies (see above): float32 and a GEMM with the row form (the masked
 * product: AVX2 or AVX-512), dilation 1, no window, an output s times X on every axis, kernels
 * at least the strides, at most PHASE_MAX phases, enough channels and positions; not a 1x1
 * kernel at stride 1 (one phase of one tap: the direct GEMM). */
static bool phase_fits(const conv_transpose_job *job) {
    const tc_lattice *lat = &job->lat;
    if (lat->rank > 3 || job->cout_g < PHASE_MIN_CHANNELS ||
        lat->coarse_size < PHASE_MIN_POSITIONS || !tc_gemm_has_row_form())
        return false;
    int64_t phases = 1;
    bool overlaps = false;
    for (int i = 0; i < lat->rank; i++) {
        int64_t s = lat->strides[i];
        if (lat->dilations[i] != 1 || lat->fine[i] != s * lat->coarse[i] || lat->kernel[i] < s ||
            lat->window_lo[i] != 0 || lat->window_hi[i] != lat->fine[i])
            return false;
        phases *= s;
        overlaps = overlaps || lat->kernel[i] > s;
    }
    return (overlaps || phases > 1) && phases <= PHASE_MAX;
}

/* Phase p's Conv lattice and W taps; returns its taps. */
static int64_t phase_geometry(const tc_lattice *lat, int64_t p, phase_geom *ph) {
    memset(&ph->lat, 0, sizeof ph->lat);
    ph->lat.rank = lat->rank;
    for (int i = lat->rank - 1; i >= 0; i--) {
        int64_t s = lat->strides[i], k = lat->kernel[i];
        ph->r[i] = p % s;
        p /= s;
        int64_t c = ((ph->r[i] + lat->pad_begin[i]) % s + s) % s;
        int64_t e = (ph->r[i] + lat->pad_begin[i] - c) / s, m = (k - c + s - 1) / s;
        ph->c[i] = c;
        ph->lat.coarse[i] = ph->lat.fine[i] = lat->coarse[i];
        ph->lat.kernel[i] = m;
        ph->lat.strides[i] = ph->lat.dilations[i] = 1;
        ph->lat.pad_begin[i] = m - 1 - e;
    }
    tc_lattice_finish(&ph->lat); /* sizes within X's and W's */
    return ph->lat.kernel_size;
}

/* The A of phase ph for output channels [c0, c0 + cc) of group g: row co, column u * cin_g + ci
 * (tap-major, as tc_lattice_masked_rows orders B), W's tap c + s*(M - 1 - u) per axis, into
 * rows (cc x cin_g * taps). */
static void phase_weights(const phase_job *pj, const phase_geom *ph, int64_t g, int64_t c0,
                          int64_t cc, float *rows) {
    const conv_transpose_job *job = pj->ct;
    const tc_lattice *lat = &job->lat;
    int64_t taps = ph->lat.kernel_size, depth = job->cin_g * taps;
    int64_t u[TC_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < taps; t++, tc_lattice_next_tap(&ph->lat, u)) {
        int64_t tap = 0;
        for (int i = 0; i < lat->rank; i++)
            tap =
                tap * lat->kernel[i] + ph->c[i] + lat->strides[i] * (ph->lat.kernel[i] - 1 - u[i]);
        for (int64_t co = 0; co < cc; co++)
            for (int64_t ci = 0; ci < job->cin_g; ci++)
                rows[co * depth + t * job->cin_g + ci] =
                    job->w[((g * job->cin_g + ci) * job->cout_g + c0 + co) * lat->kernel_size +
                           tap];
    }
}

/* Packs every phase's A of one (group, chunk): task = g * n_chunks + chunk; `rows` scratch of
 * chunk_rows x depth_max floats a worker. */
typedef struct phase_pack {
    phase_job *pj;
    float *packed, *rows;
} phase_pack;

static void phase_pack_task(void *vpack, int64_t task, int worker) {
    const phase_pack *pk = vpack;
    const phase_job *pj = pk->pj;
    int64_t chunk = task % pj->n_chunks, g = task / pj->n_chunks;
    int64_t c0 = chunk * pj->chunk_rows, cc = tc_min_i64(pj->chunk_rows, pj->ct->cout_g - c0);
    float *rows = pk->rows + (size_t)worker * (size_t)(pj->chunk_rows * pj->depth_max);
    for (int64_t p = 0; p < pj->n_phases; p++) {
        const phase_geom *ph = &pj->phases[p];
        int64_t depth = pj->ct->cin_g * ph->lat.kernel_size;
        phase_weights(pj, ph, g, c0, cc, rows);
        tc_sgemm_pack_a(pj->isa, false, cc, depth, rows, depth,
                        pk->packed + (size_t)task * pj->slot_floats + ph->packed_at);
    }
}

/* Y's positions of the last axis's s phases (one C block each, `block` floats apart) for a run
 * of X's grid: dst[j * s + r] = C_r[j]. The phases of the last axis share the line of Y, so
 * each is written once, whole; one phase at a time, its single stores took 8.5% of
 * keras_decoder's time and 4% of DCGAN's. */
typedef struct phase_store {
    const phase_job *pj;
    const phase_geom *ph; /* the group's first phase (last axis's phase 0) */
    const float *c;       /* its C block: cc rows of `cols`; phase r's is `block` floats on */
    int64_t cols, cc, block;
    float *y; /* the chunk's first Y plane */
} phase_store;

static void phase_store_run(void *vstore, const tc_coarse_run *run) {
    const phase_store *st = vstore;
    const tc_lattice *lat = &st->pj->ct->lat;
    int last = lat->rank - 1;
    int64_t line = 0, s = lat->strides[last];
    for (int i = 0; i < last; i++)
        line = line * lat->fine[i] + lat->strides[i] * run->outer[i] + st->ph->r[i];
    int64_t start = line * lat->fine[last] + s * run->u0;
    for (int64_t co = 0; co < st->cc; co++) {
        const float *src = st->c + co * st->cols + run->col;
        float *dst = st->y + co * lat->fine_size + start;
        if (s == 2) {
            tc_floats_interleave(dst, src, src + st->block, run->length);
            continue;
        }
        for (int64_t j = 0; j < run->length; j++)
            for (int64_t r = 0; r < s; r++)
                dst[j * s + r] = src[r * st->block + j];
    }
}

/* Phase ph's GEMM for the task's block into c, then its bias and activation. */
static void phase_block(const phase_job *pj, const phase_geom *ph, tc_gemm_workspace *gemm,
                        const float *slot, const float *x, int64_t q0, int64_t cols, int64_t cc,
                        int64_t first_channel, const float **rows, const uint16_t **masks,
                        float *c) {
    const conv_transpose_job *job = pj->ct;
    int64_t taps = ph->lat.kernel_size;
    tc_lattice_masked_rows((uintptr_t)x, pj->positions, job->cin_g, taps, ph->taps.shifts,
                           ph->taps.masks, pj->words, rows, masks);
    tc_sgemm_op op = {.m = cc,
                      .n = cols,
                      .k = job->cin_g * taps,
                      .alpha = 1.0f,
                      .b_rows = rows,
                      .b_masks = masks,
                      .b_masks_full = ph->taps.full,
                      .b_col0 = q0,
                      .c = c,
                      .ldc = cols};
    tc_sgemm_run_packed(gemm, slot + ph->packed_at, &op);
    for (int64_t co = 0; co < cc; co++) {
        float b = job->bias ? job->bias[first_channel + co] : 0.0f;
        if (job->act)
            tc_kernel_activation_apply_plus(job->act, c + co * cols, c + co * cols, b, cols);
        else if (job->bias)
            for (int64_t j = 0; j < cols; j++)
                c[co * cols + j] += b;
    }
}

/* C floats of one phase's block in a worker's scratch (it holds one a phase of the last axis). */
static int64_t phase_c_floats(const phase_job *pj) {
    return tc_round_up_i64(pj->chunk_rows * pj->block_cols, 16);
}

/* One (batch, group, chunk, column block of X's grid): for each phase of the leading axes, the
 * GEMM of each of the last axis's phases into the worker's C blocks with the bias and
 * activation, then their store into Y. */
static void phase_task(void *vjob, int64_t task, int worker) {
    phase_job *pj = vjob;
    const conv_transpose_job *job = pj->ct;
    int64_t block = task % pj->n_blocks, rest = task / pj->n_blocks;
    int64_t chunk = rest % pj->n_chunks, g = rest / pj->n_chunks % job->group;
    int64_t n = rest / (pj->n_chunks * job->group);
    int64_t q0 = block * pj->block_cols, cols = tc_min_i64(pj->block_cols, pj->positions - q0);
    int64_t c0 = chunk * pj->chunk_rows, cc = tc_min_i64(pj->chunk_rows, job->cout_g - c0);
    int64_t first_channel = g * job->cout_g + c0, s = job->lat.strides[job->lat.rank - 1];
    tc_conv_worker_scratch *ws = &pj->scratch.workers[worker];
    float *c = ws->col;
    const float **rows = (const float **)(void *)(c + s * phase_c_floats(pj));
    const uint16_t **masks = (const uint16_t **)(void *)(rows + pj->depth_max);
    const float *x = job->x + (n * job->c_in + g * job->cin_g) * pj->positions;
    const float *slot = pj->packed + (size_t)(g * pj->n_chunks + chunk) * pj->slot_floats;
    phase_store store = {pj,
                         NULL,
                         c,
                         cols,
                         cc,
                         phase_c_floats(pj),
                         job->y + (n * job->c_out + first_channel) * job->lat.fine_size};
    /* the last axis's phase varies fastest: its s phases are consecutive */
    for (int64_t p = 0; p < pj->n_phases; p += s) {
        for (int64_t r = 0; r < s; r++)
            phase_block(pj, &pj->phases[p + r], &ws->gemm, slot, x, q0, cols, cc, first_channel,
                        rows, masks, c + r * store.block);
        store.ph = &pj->phases[p];
        tc_lattice_for_each_run(&store.ph->lat, q0, cols, phase_store_run, &store);
    }
}

/* Column blocks and output-channel chunks: one thread, blocks of about
 * TC_COL_BLOCK_TARGET_FLOATS of B; more, Conv's split (tc_conv_parallel_split: B by row
 * pointers, the busiest thread's area; where each task then runs every phase). */
static void phase_plan(phase_job *pj, int threads) {
    const conv_transpose_job *job = pj->ct;
    int64_t cap = tc_conv_block_columns(pj->depth_max, pj->positions, 0), chunks = 1;
    if (threads > 1) {
        tc_conv_split s = tc_conv_parallel_split(job->cout_g, pj->positions,
                                                 job->batch * job->group, cap, true, threads);
        pj->isa = s.isa;
        pj->block_cols = s.block_cols;
        pj->n_blocks = s.n_blocks;
        chunks = s.chunks;
    } else {
        pj->block_cols = cap;
        pj->n_blocks = (pj->positions + cap - 1) / cap;
        pj->isa = tc_gemm_isa_for_rows(job->cout_g, pj->block_cols);
    }
    int64_t mr = tc_sgemm_row_tile(pj->isa);
    pj->chunk_rows =
        tc_min_i64(tc_round_up_i64((job->cout_g + chunks - 1) / chunks, mr), job->cout_g);
    pj->n_chunks = (job->cout_g + pj->chunk_rows - 1) / pj->chunk_rows;
}

/* Every phase's A, packed once for all runs when W is a constant (the key tells the phase
 * form's block, and the pads' phases that choose its taps, from the other forms'). */
static tconv_status phase_weights_packed(tc_kernel_ctx *ctx, phase_job *pj, int threads,
                                         tc_rt_tensor *packed) {
    const conv_transpose_job *job = pj->ct;
    int64_t pad_code = 0;
    for (int i = 0; i < job->lat.rank; i++)
        pad_code = pad_code * 64 + pj->phases[0].c[i];
    int64_t n_slots = job->group * pj->n_chunks;
    tc_kernel_cache_key key = {
        .source = job->w,
        .layout = {pj->chunk_rows, pj->n_chunks, job->group, job->cin_g, pj->isa, -3 - pad_code}};
    float *out;
    bool fresh;
    tconv_status st = tc_conv_packed_weights(
        ctx, &key, (size_t)n_slots * pj->slot_floats * sizeof(float), &out, &fresh, packed);
    pj->packed = out;
    if (st != TCONV_OK || !fresh)
        return st;
    int workers = tc_parallel_workers(threads, n_slots);
    tc_rt_tensor rows;
    st = tc_kernel_scratch(ctx, (size_t)(workers * pj->chunk_rows * pj->depth_max) * sizeof(float),
                           &rows);
    if (st != TCONV_OK)
        return st;
    phase_pack pk = {pj, out, rows.data};
    tc_parallel_for(ctx->pool, workers, n_slots, phase_pack_task, &pk);
    tc_kernel_scratch_release(ctx, &rows);
    return TCONV_OK;
}

/* Every phase's shifts and masks (tc_conv_tap_masks_for); `scratch` as it says. */
static tconv_status phase_masks(tc_kernel_ctx *ctx, phase_job *pj, tc_rt_tensor *scratch) {
    const tc_lattice *lats[PHASE_MAX];
    tc_conv_tap_masks taps[PHASE_MAX];
    for (int64_t p = 0; p < pj->n_phases; p++)
        lats[p] = &pj->phases[p].lat;
    tconv_status st = tc_conv_tap_masks_for(ctx, lats, (int)pj->n_phases, false, taps, scratch);
    for (int64_t p = 0; st == TCONV_OK && p < pj->n_phases; p++)
        pj->phases[p].taps = taps[p];
    return st;
}

static tconv_status conv_transpose_phases(tc_kernel_ctx *ctx, const conv_transpose_job *job,
                                          int threads) {
    /* every field of the n_phases used is set below: zeroing all PHASE_MAX with the job took
     * 11 KB of stores a step */
    phase_geom phases[PHASE_MAX];
    phase_job pj = {.ct = job, .phases = phases, .positions = job->lat.coarse_size, .n_phases = 1};
    for (int i = 0; i < job->lat.rank; i++)
        pj.n_phases *= job->lat.strides[i];
    pj.words = (pj.positions + 15) / 16;
    for (int64_t p = 0; p < pj.n_phases; p++)
        pj.depth_max =
            tc_max_i64(pj.depth_max, job->cin_g * phase_geometry(&job->lat, p, &pj.phases[p]));
    phase_plan(&pj, threads);
    for (int64_t p = 0; p < pj.n_phases; p++) {
        pj.phases[p].packed_at = pj.slot_floats;
        pj.slot_floats += tc_sgemm_packed_a_floats(pj.isa, pj.chunk_rows,
                                                   job->cin_g * pj.phases[p].lat.kernel_size);
    }
    tc_rt_tensor packed, masks;
    tconv_status st = phase_weights_packed(ctx, &pj, threads, &packed);
    if (st != TCONV_OK)
        return st;
    int64_t n_tasks = job->batch * job->group * pj.n_chunks * pj.n_blocks;
    int workers = tc_parallel_workers(threads, n_tasks);
    /* a worker's C blocks (the last axis's phases), then its B row and mask pointers (2 floats
     * a pointer) */
    int64_t col_floats =
        job->lat.strides[job->lat.rank - 1] * phase_c_floats(&pj) + 4 * pj.depth_max;
    if ((st = phase_masks(ctx, &pj, &masks)) == TCONV_OK) {
        st = tc_conv_scratch_reserve(ctx, &pj.scratch, workers, col_floats, pj.isa, pj.chunk_rows,
                                     pj.block_cols, pj.depth_max);
        if (st == TCONV_OK) {
            tc_parallel_for(ctx->pool, workers, n_tasks, phase_task, &pj);
            tc_conv_scratch_release(ctx, &pj.scratch);
        }
        tc_kernel_scratch_release(ctx, &masks);
    }
    tc_kernel_scratch_release(ctx, &packed);
    return st;
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

/* X of no channels (and W of no rows): nothing is summed, so Y is its bias, activated. Every
 * other path offsets X and W, which have no data here. */
static tconv_status conv_transpose_no_input_channels(tc_kernel_ctx *ctx, conv_transpose_job *job,
                                                     tc_rt_tensor *y, int threads) {
    int64_t planes = job->batch * job->c_out;
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, planes), planes, fill_plane_task, job);
    if (ctx->activation)
        tc_kernel_activation_apply_threads(ctx, ctx->activation, y->data, y->data, y->n_elements);
    return TCONV_OK;
}

/* The run: ctx->params is the tc_rank_attrs of tc_prepare_conv_transpose; no IR. */
static tconv_status run_conv_transpose(tc_kernel_ctx *ctx) {
    tc_conv_operands ops = {0}; /* tc_conv_read_operands may fail before filling it */
    tc_conv_transpose_geometry g;
    tconv_status st = tc_conv_read_operands(ctx, &ops);
    if (st == TCONV_OK)
        st = conv_transpose_resolve(ctx, &ops, &g);
    int64_t window_lo[TC_MAX_SPATIAL], window_hi[TC_MAX_SPATIAL];
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
    int64_t y_dims[TC_MAX_RANK] = {job.batch, job.c_out};
    memcpy(y_dims + 2, g.out, (size_t)g.spatial_rank * sizeof(int64_t));
    tc_rt_tensor *y;
    /* every path fills each Y plane (bias or 0) before adding into it */
    st = tc_kernel_alloc_output_uninit(ctx, 0, ops.x->dtype, ops.x->rank, y_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    if (ops.x->dtype == TCONV_DTYPE_DOUBLE && ctx->activation) /* fused only into float32 */
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "a fused activation needs a float32 output, X is float64");
    if (ops.x->dtype == TCONV_DTYPE_DOUBLE)
        return conv_transpose_f64(ctx, &job, &ops, y);
    double work = tc_conv_gemm_work(job.batch * job.group, job.cout_g * job.lat.kernel_size,
                                    job.cin_g, job.lat.coarse_size);
    int threads = tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, work);
    job.x = ops.x->data;
    job.w = ops.w->data;
    job.bias = bias;
    job.y = y->data;
    if (job.cin_g == 0) /* before planning GEMMs it does not run */
        return conv_transpose_no_input_channels(ctx, &job, y, threads);
    bool use_phases = phase_fits(&job);
    if (!use_phases) {
        subpixel_plan(&job);
        conv_transpose_plan(&job, threads);
    }
    /* activation fusion (session_fuse.c): on the final output, crop and bias included */
    job.act = job.subpixel ? NULL : ctx->activation;
    if (use_phases)
        return conv_transpose_phases(ctx, &job, threads);
    st = conv_transpose_few(&job) ? conv_transpose_few_positions(ctx, &job, threads)
                                  : conv_transpose_blocks(ctx, &job, threads);
    if (st == TCONV_OK && ctx->activation && job.subpixel)
        tc_kernel_activation_apply_threads(ctx, ctx->activation, y->data, y->data, y->n_elements);
    return st;
}

static bool conv_transpose_work(const void *params, const tc_work_shapes *w, uint64_t *out) {
    (void)params;
    return tc_work_conv_transpose(NULL, w, out);
}

tconv_status tc_prepare_conv_transpose(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    tconv_status st =
        tc_conv_prepare(pc, read_conv_transpose_attrs, sizeof(tc_conv_transpose_attrs),
                        run_conv_transpose, conv_transpose_work, out);
    out->epilogues = TC_EPILOGUE_CROP | TC_EPILOGUE_ACTIVATION | TC_EPILOGUE_FOLDED_BN;
    return st;
}
