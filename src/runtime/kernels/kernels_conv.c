/* Conv over float32 (float64: kernels_f64.c), built on the packed GEMM: Y_g = W_g x col, where
 * col's rows are the input seen through each kernel tap (conv_lattice.h). Mostly col is never
 * built: the GEMM packs it straight from stride phase planes of the padded input (the "wide" path
 * below). Otherwise im2col gathers it block by block; depthwise Conv runs directly. The work is
 * split over (batch, group, column block, output-channel chunk): tasks write disjoint parts of Y.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/window_geometry.h"
#include "runtime/kernels/conv_common.h"
#include "runtime/kernels/conv_lattice.h"
#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels_f64.h"

/* Conv streams all of the packed W_g once per column block, so its blocks must be wide enough
 * to amortise that. */
#define CONV_MIN_BLOCK_COLS 288
/* Phase planes smaller than this (floats, all channels) are built by the calling thread: a copy
 * that short costs less than handing it to the pool. */
#define CONV_MIN_PARALLEL_PLANE_FLOATS (1 << 15)
/* The wide path's largest stride on the last axis (its phase planes are built a source line at
 * a time, every phase of that axis at once); larger strides take im2col. */
#define CONV_WIDE_MAX_STRIDE 8

typedef struct conv_attrs {
    int rank;
    int64_t group;
    tc_window_attrs win; /* kernel_shape 0 when absent: W gives the kernel */
} conv_attrs;

/* tc_rank_attr_reader: group and the window, for `rank` spatial axes. */
static tconv_status read_conv_attrs(const tconv_node *node, int rank, void *out, tc_error *err) {
    conv_attrs *a = out;
    memset(a, 0, sizeof *a);
    a->rank = rank;
    tconv_status st;
    if ((st = tc_node_attr_int_or_default(node, "group", &a->group, err)) ||
        (st = tc_window_read_attrs(node, rank, 0, 0, &a->win, err)))
        return st;
    if (a->group < 1)
        return tc_error_set(err, TCONV_ERR_INVALID, "attribute 'group' must be >= 1");
    return TCONV_OK;
}

/* One Conv axis of the lattice: output size and begin pad from the shared window geometry. */
static tconv_status conv_axis(tc_kernel_ctx *ctx, const conv_attrs *a, int i, int64_t x, int64_t k,
                              tc_lattice *lat) {
    tc_window_axis axis;
    tconv_status st = tc_window_resolve_axis(&a->win, i, x, k, &axis, ctx->err);
    if (st != TCONV_OK)
        return st;
    lat->coarse[i] = axis.out;
    lat->fine[i] = x;
    lat->kernel[i] = k;
    lat->strides[i] = a->win.strides[i];
    lat->dilations[i] = a->win.dilations[i];
    lat->pad_begin[i] = axis.pad_begin;
    return TCONV_OK;
}

static tconv_status conv_geometry(tc_kernel_ctx *ctx, const tc_conv_operands *ops,
                                  const conv_attrs *a, tc_lattice *lat) {
    const int64_t *xd = ops->x->dims, *wd = ops->w->dims;
    if (xd[1] % a->group != 0 || wd[1] * a->group != xd[1])
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "X has %lld channels but W.shape[1] * group is %lld * %lld",
                            (long long)xd[1], (long long)wd[1], (long long)a->group);
    if (wd[0] % a->group != 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "group %lld does not divide the %lld output channels (W.shape[0])",
                            (long long)a->group, (long long)wd[0]);
    lat->rank = a->rank;
    for (int i = 0; i < a->rank; i++) {
        int64_t k = wd[2 + i];
        if (a->win.has_kernel_shape && a->win.kernel_shape[i] != k)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "kernel_shape[%d] = %lld but W has %lld on that axis", i,
                                (long long)a->win.kernel_shape[i], (long long)k);
        if (k < 1 || xd[2 + i] < 1)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "spatial axis %d is empty (X %lld, W %lld)", i,
                                (long long)xd[2 + i], (long long)k);
        tconv_status st = conv_axis(ctx, a, i, xd[2 + i], k, lat);
        if (st != TCONV_OK)
            return st;
    }
    if (!tc_lattice_finish(lat))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "Conv sizes overflow");
    return TCONV_OK;
}

/* Taps that read only padding for every output (ERFNet's dilation-16 3x1 on an 8-high plane,
 * DeepLab's atrous rates on small maps: both outer taps) multiply zeros. The Conv equals one
 * with W cut to the live taps, [lo, lo + kernel) per axis, and the begin pad less lo * dilation:
 * the GEMM's depth shrinks by the dead taps' share. */
typedef struct tap_trim {
    bool any;
    int64_t lo[TC_MAX_SPATIAL];
    int64_t full[TC_MAX_SPATIAL]; /* W's kernel */
    int64_t key; /* tells the packed W of a cut from the uncut one's (0) and from other cuts */
} tap_trim;

/* Whether tap t of axis i reads X for some output position. */
static bool tap_reads_x(const tc_lattice *lat, int i, int64_t t) {
    int64_t q = t * lat->dilations[i] - lat->pad_begin[i], s = lat->strides[i];
    int64_t o = q >= 0 ? 0 : tc_ceil_div(-q, s);
    return o < lat->coarse[i] && o * s + q < lat->fine[i];
}

/* Cuts lat's kernel to its live taps; trim->any when a tap went. The begin pad stays >= 0 (the
 * padded planes start at X's first line): a first live tap past the pad keeps a dead one. */
static void conv_drop_dead_taps(tc_lattice *lat, tap_trim *trim) {
    memset(trim, 0, sizeof *trim);
    int64_t hi[TC_MAX_SPATIAL], key = 0;
    /* uncut (lo 0, full the kernel) unless the key's digits hold it: at most 3 axes of at most
     * 1023 taps (a longer kernel would not fit in memory anyway); decided before any axis is
     * cut, so that a long last axis cannot leave an earlier one's cut half applied */
    bool fits = lat->rank <= 3;
    for (int i = 0; i < lat->rank; i++) {
        trim->full[i] = lat->kernel[i];
        fits = fits && lat->kernel[i] <= 1023;
    }
    if (!fits)
        return;
    for (int i = 0; i < lat->rank; i++) {
        int64_t k = lat->kernel[i], lo = 0;
        hi[i] = k;
        while (lo < hi[i] && !tap_reads_x(lat, i, lo))
            lo++;
        while (hi[i] > lo && !tap_reads_x(lat, i, hi[i] - 1))
            hi[i]--;
        if (lo == hi[i]) /* no tap reads X: Y is the bias; keep W whole (no empty GEMM depth) */
            lo = 0, hi[i] = k;
        while (lo > 0 && lo * lat->dilations[i] > lat->pad_begin[i])
            lo--;
        trim->lo[i] = lo;
        key = (key * 1024 + lo) * 1024 + (hi[i] - lo);
        trim->any = trim->any || hi[i] - lo < k;
    }
    if (!trim->any)
        return;
    trim->key = key;
    for (int i = 0; i < lat->rank; i++) {
        lat->pad_begin[i] -= trim->lo[i] * lat->dilations[i];
        lat->kernel[i] = hi[i] - trim->lo[i];
    }
    tc_lattice_finish(lat); /* a smaller kernel_size: cannot overflow */
}

typedef struct conv_job {
    tc_lattice lat; /* coarse: Y spatial, fine: X spatial */
    int64_t batch, c_in, c_out, group, cin_g, cout_g;
    int64_t block_cols, n_blocks;
    int64_t chunk_rows, n_chunks; /* output channels of a group, split for threads */
    tc_gemm_isa isa;              /* the GEMM kernel, for the channels and a block's columns */
    bool direct;                  /* 1x1 identity mapping: the GEMM reads X */
    const float *x, *w, *bias;
    tap_trim trim; /* w's taps when the lattice's kernel is cut (conv_drop_dead_taps) */
    float *y;
    const tc_kernel_activation *act; /* fused by the executor: applied to each finished block */
    const float *residual; /* fused by the executor: Y's shape, added before act (ctx->residual) */
    float *packed_w;       /* W of every (group, row chunk), packed once for all column blocks */
    size_t packed_chunk_floats;
    tc_conv_scratch scratch;
    int64_t columns; /* GEMM columns of one (batch, group): output positions, or wide ones */
    /* Stride-1 Conv without im2col (conv_run_wide): the zero-padded input, each tap's offset
     * in a padded plane, and every worker's B row pointers. */
    bool wide;
    /* X read flat (conv_run_masked): each tap's flat shift and its lane masks */
    bool masked;
    bool flat_phases; /* read from phase planes (stride above 1), not X */
    bool skewed;      /* stride 1: read from a copy of X, its planes an odd number of lines apart */
    /* each tap's flat shift, its lane masks (kernel_size x mask_words), and per mask word
     * whether it is all ones for every tap */
    tc_conv_tap_masks taps;
    int64_t mask_words;
    const uint16_t **b_masks;       /* depth mask pointers per worker */
    int64_t padded[TC_MAX_SPATIAL]; /* phase plane dims: out + (kernel - 1) * dilation / stride */
    int64_t padded_size;            /* floats of one phase plane */
    int64_t n_phases;               /* product of the strides */
    int64_t channel_floats;         /* n_phases * padded_size: one input channel's planes */
    /* Builds the phase planes of input planes [p0, p1) into dst (NULL: the path reads X
     * itself); conv_plane_bytes sets the rest. */
    void (*build_planes)(const struct conv_job *job, float *dst, int64_t p0, int64_t p1);
    bool private_planes;       /* each worker builds them for itself, ... */
    int64_t plane_copy_floats; /* ... this far apart in padded_x */
    int64_t planes_per_task;   /* input planes a shared phase plane task builds */
    const float *padded_x;
    const int64_t *tap_offsets;
    const float **b_rows; /* depth pointers per worker */
    /* the narrow path's W^T chunks: packed for the GEMM (tc_sgemm_pack_b), this many floats
     * each, where the GEMM would pack them on every run; 0: as plain depth x width matrices,
     * read by row pointers */
    int64_t narrow_packed_floats;
    int64_t *rows_unit; /* per worker: the (batch, group) its b_rows (and b_masks) are for */
} conv_job;

static int64_t conv_chunk_rows_at(const conv_job *job, int64_t chunk) {
    return tc_min_i64(job->chunk_rows, job->cout_g - chunk * job->chunk_rows);
}

/* A (batch, group, column block) of a Conv: one im2col block and its products. */
typedef struct conv_unit {
    int64_t n, g, q0, cols;
} conv_unit;

static conv_unit conv_unit_at(const conv_job *job, int64_t index) {
    conv_unit u;
    int64_t block = index % job->n_blocks;
    u.g = (index / job->n_blocks) % job->group;
    u.n = index / (job->n_blocks * job->group);
    u.q0 = block * job->block_cols;
    u.cols = tc_min_i64(job->block_cols, job->columns - u.q0);
    return u;
}

static const float *conv_unit_x(const conv_job *job, const conv_unit *u) {
    return job->x + (u->n * job->c_in + u->g * job->cin_g) * job->lat.fine_size;
}

/* dst[j] = (src[j] + b) + r[j], or src[j] + r[j] without a bias (adding 0 would turn -0 into
 * +0): the Conv's result with its bias, then the fused residual Add's sum, rounded as the two
 * nodes round them. dst may be src. */
static inline __attribute__((always_inline)) void residual_sum_body(float *dst, const float *src,
                                                                    const float *bias, float b,
                                                                    const float *r, int64_t n) {
    if (bias) {
        for (int64_t j = 0; j < n; j++)
            dst[j] = (src[j] + b) + r[j];
    } else {
        for (int64_t j = 0; j < n; j++)
            dst[j] = src[j] + r[j];
    }
}

/* One copy per instruction set: the baseline's 4 floats a step were half of an AVX2 CPU's
 * epilogue (audio_upsampler's 1-D Convs: 8% of its samples in the bias loop). */
TC_ISA_DISPATCH(static, residual_sum, residual_sum_body,
                (float *dst, const float *src, const float *bias, float b, const float *r,
                 int64_t n),
                (dst, src, bias, b, r, n))

/* y[i] = src[i] + b (y may be src) */
static inline __attribute__((always_inline)) void copy_plus_body(float *y, const float *src,
                                                                 int64_t count, float b) {
    for (int64_t i = 0; i < count; i++)
        y[i] = src[i] + b;
}

TC_ISA_DISPATCH(static, copy_plus, copy_plus_body,
                (float *y, const float *src, int64_t count, float b), (y, src, count, b))

/* n values of Y at dst: src (which may be dst) + the bias b, + the fused residual (at the same
 * place in it as dst in Y), then the fused activation, while they are in cache (each sum rounded
 * to float first, as the Add nodes and the activation round them). The one epilogue of the
 * paths that write Y from a block. */
static void epilogue_span(const conv_job *job, float *dst, const float *src, float b, int64_t n) {
    if (job->residual) {
        residual_sum(dst, src, job->bias, b, job->residual + (dst - job->y), n);
        if (job->act)
            tc_kernel_activation_apply(job->act, dst, dst, n);
    } else if (job->act) {
        tc_kernel_activation_apply_plus(job->act, dst, src, b, n);
    } else {
        copy_plus(dst, src, n, b);
    }
}

/* Output rows [row0, row0 + rows) of Y at y, `cols` values each, `ld` apart, in place. */
static void conv_rows_epilogue(const conv_job *job, float *y, int64_t rows, int64_t cols,
                               int64_t ld, int64_t row0) {
    for (int64_t c = 0; c < rows && (job->bias || job->act || job->residual); c++)
        epilogue_span(job, y + c * ld, y + c * ld, job->bias ? job->bias[row0 + c] : 0.0f, cols);
}

/* Y_g[chunk rows, block] = W_g[chunk rows, :] x B + bias, then the fused activation: B as op
 * gives it (its m, k, c and ldc are set here). */
static void conv_unit_gemm(const conv_job *job, tc_gemm_workspace *gemm, const conv_unit *u,
                           int64_t chunk, tc_sgemm_op *op) {
    const tc_lattice *lat = &job->lat;
    int64_t row0 = u->g * job->cout_g + chunk * job->chunk_rows;
    float *y = job->y + (u->n * job->c_out + row0) * lat->coarse_size + u->q0;
    op->m = conv_chunk_rows_at(job, chunk);
    op->n = u->cols;
    op->k = job->cin_g * lat->kernel_size;
    op->alpha = 1.0f;
    op->c = y;
    op->ldc = lat->coarse_size;
    const float *packed =
        job->packed_w + (size_t)(u->g * job->n_chunks + chunk) * job->packed_chunk_floats;
    tc_sgemm_run_packed(gemm, packed, op);
    conv_rows_epilogue(job, y, op->m, u->cols, lat->coarse_size, row0);
}

/* B is the unit's im2col block col, or X for a direct 1x1 Conv. */
static void conv_unit_rows(const conv_job *job, tc_gemm_workspace *gemm, const conv_unit *u,
                           int64_t chunk, const float *col) {
    tc_sgemm_op op = {.b = job->direct ? conv_unit_x(job, u) + u->q0 : col,
                      .ldb = job->direct ? job->lat.fine_size : u->cols};
    conv_unit_gemm(job, gemm, u, chunk, &op);
}

/* One unit, all row chunks, in one worker (the path for many units). */
static void conv_unit_task(void *vjob, int64_t task, int worker) {
    conv_job *job = vjob;
    conv_unit u = conv_unit_at(job, task);
    tc_conv_worker_scratch *ws = &job->scratch.workers[worker];
    if (!job->direct)
        tc_im2col_block(&job->lat, conv_unit_x(job, &u), job->cin_g, u.q0, u.cols, ws->col);
    for (int64_t chunk = 0; chunk < job->n_chunks; chunk++)
        conv_unit_rows(job, &ws->gemm, &u, chunk, ws->col);
}

/* Few units: each is run by all workers, first its im2col by input channels into a shared
 * block, then its row chunks (no worker repeats the im2col, which dominates at small spatial
 * sizes). */
typedef struct conv_shared_unit {
    conv_job *job;
    conv_unit unit;
    float *col;
    int64_t channels_per_task;
} conv_shared_unit;

static void conv_shared_im2col_task(void *vshared, int64_t task, int worker) {
    (void)worker;
    const conv_shared_unit *s = vshared;
    const conv_job *job = s->job;
    int64_t c0 = task * s->channels_per_task;
    int64_t count = tc_min_i64(s->channels_per_task, job->cin_g - c0);
    tc_im2col_block(&job->lat, conv_unit_x(job, &s->unit) + c0 * job->lat.fine_size, count,
                    s->unit.q0, s->unit.cols, s->col + c0 * job->lat.kernel_size * s->unit.cols);
}

static void conv_shared_rows_task(void *vshared, int64_t task, int worker) {
    const conv_shared_unit *s = vshared;
    conv_unit_rows(s->job, &s->job->scratch.workers[worker].gemm, &s->unit, task, s->col);
}

static tconv_status conv_run_shared_units(tc_kernel_ctx *ctx, conv_job *job, int threads) {
    tc_rt_tensor col;
    size_t col_floats =
        job->direct ? 0 : (size_t)(job->cin_g * job->lat.kernel_size * job->block_cols);
    tconv_status st = tc_kernel_scratch(ctx, col_floats * sizeof(float), &col);
    if (st != TCONV_OK)
        return st;
    int64_t tasks = tc_min_i64(job->cin_g, (int64_t)threads * TC_CONV_TASKS_PER_THREAD);
    conv_shared_unit s = {
        .job = job, .col = col.data, .channels_per_task = (job->cin_g + tasks - 1) / tasks};
    int64_t im2col_tasks = (job->cin_g + s.channels_per_task - 1) / s.channels_per_task;
    for (int64_t i = 0; i < job->batch * job->group * job->n_blocks; i++) {
        s.unit = conv_unit_at(job, i);
        if (!job->direct)
            tc_parallel_for(ctx->pool, tc_parallel_workers(threads, im2col_tasks), im2col_tasks,
                            conv_shared_im2col_task, &s);
        tc_parallel_for(ctx->pool, tc_parallel_workers(threads, job->n_chunks), job->n_chunks,
                        conv_shared_rows_task, &s);
    }
    tc_kernel_scratch_release(ctx, &col);
    return TCONV_OK;
}

/* W as the GEMM reads it: cut to the live taps (conv_drop_dead_taps) and, when tap_major, with
 * its depth ordered by tap (column t * cin_g + c: tc_lattice_masked_rows' order, where a run of
 * cin_g rows shares one mask); job->w itself when neither applies. */
static tconv_status gemm_weights(tc_kernel_ctx *ctx, const conv_job *job, bool tap_major,
                                 tc_rt_tensor *scratch, const float **w) {
    memset(scratch, 0, sizeof *scratch);
    *w = job->w;
    if (!job->trim.any && !tap_major)
        return TCONV_OK;
    const tc_lattice *lat = &job->lat;
    int64_t taps = lat->kernel_size, depth = job->cin_g * taps, full = 1;
    for (int i = 0; i < lat->rank; i++)
        full *= job->trim.full[i];
    tconv_status st = tc_kernel_scratch(ctx, (size_t)(job->c_out * depth) * sizeof(float), scratch);
    if (st != TCONV_OK)
        return st;
    float *out = scratch->data;
    int64_t tap[TC_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < taps; t++, tc_lattice_next_tap(lat, tap)) {
        int64_t from = 0;
        for (int i = 0; i < lat->rank; i++)
            from = from * job->trim.full[i] + job->trim.lo[i] + tap[i];
        for (int64_t co = 0; co < job->c_out; co++) {
            for (int64_t c = 0; c < job->cin_g; c++) {
                int64_t column = tap_major ? t * job->cin_g + c : c * taps + t;
                out[co * depth + column] = job->w[(co * job->cin_g + c) * full + from];
            }
        }
    }
    *w = out;
    return TCONV_OK;
}

/* W_g's row chunks (chunk_rows x cin_g*K) of every group, packed for the GEMM (kept across
 * runs when W is a constant, else in `packed`, session scratch). */
static tconv_status conv_pack_weights(tc_kernel_ctx *ctx, conv_job *job, tc_rt_tensor *packed) {
    int64_t depth = job->cin_g * job->lat.kernel_size;
    job->packed_chunk_floats = tc_sgemm_packed_a_floats(job->isa, job->chunk_rows, depth);
    size_t slots = (size_t)(job->group * job->n_chunks);
    tc_kernel_cache_key key = {.source = job->w,
                               .layout = {job->chunk_rows, job->n_chunks, job->group, depth,
                                          job->isa, job->trim.key * 2 + job->masked}};
    bool fresh;
    tconv_status st =
        tc_conv_packed_weights(ctx, &key, slots * job->packed_chunk_floats * sizeof(float),
                               &job->packed_w, &fresh, packed);
    if (st != TCONV_OK || !fresh)
        return st;
    tc_rt_tensor cut;
    const float *w;
    if ((st = gemm_weights(ctx, job, job->masked, &cut, &w)) != TCONV_OK)
        return st;
    for (int64_t g = 0; g < job->group; g++) {
        for (int64_t chunk = 0; chunk < job->n_chunks; chunk++) {
            int64_t row0 = g * job->cout_g + chunk * job->chunk_rows;
            tc_sgemm_pack_a(
                job->isa, false, conv_chunk_rows_at(job, chunk), depth, w + row0 * depth, depth,
                job->packed_w + (size_t)(g * job->n_chunks + chunk) * job->packed_chunk_floats);
        }
    }
    tc_kernel_scratch_release(ctx, &cut);
    return TCONV_OK;
}

/* Splits `total` into about `parts` parts that are multiples of `granule`; returns the part size
 * and sets *n to the number of parts. */
static int64_t split_evenly(int64_t total, int64_t parts, int64_t granule, int64_t *n) {
    int64_t size = (total + parts - 1) / tc_max_i64(parts, 1);
    size = tc_max_i64(granule, (size + granule - 1) / granule * granule);
    size = tc_min_i64(size, tc_max_i64(total, 1));
    *n = tc_max_i64(1, (total + size - 1) / size);
    return size;
}

/* Column blocks and output-channel chunks. One thread: blocks of about
 * TC_COL_BLOCK_TARGET_FLOATS of im2col. More threads: tc_conv_parallel_split, blocks no wider
 * than those. */
static void conv_plan(conv_job *job, int threads) {
    int64_t depth = job->cin_g * job->lat.kernel_size, total = job->columns, chunks = 1;
    int64_t cols = tc_conv_block_columns(depth, total, CONV_MIN_BLOCK_COLS);
    bool b_rows = job->masked || job->wide; /* B read by row pointers */
    if (threads > 1) {
        tc_conv_split s = tc_conv_parallel_split(job->cout_g, total, job->batch * job->group, cols,
                                                 b_rows, threads);
        job->isa = s.isa;
        job->block_cols = s.block_cols;
        job->n_blocks = s.n_blocks;
        chunks = s.chunks;
    } else {
        job->block_cols = split_evenly(total, (total + cols - 1) / tc_max_i64(cols, 1),
                                       TC_COL_BLOCK_GRANULE, &job->n_blocks);
        job->isa = b_rows ? tc_gemm_isa_for_rows(job->cout_g, job->block_cols)
                          : tc_gemm_isa_for_shape(job->cout_g, job->block_cols);
    }
    job->chunk_rows =
        split_evenly(job->cout_g, chunks, tc_sgemm_row_tile(job->isa), &job->n_chunks);
}

/* ---- Conv without im2col. Split the zero-padded input into phase planes, P_a[u] = xp[s*u + a]
 * per axis (stride s, phase a in [0, s); one plane, xp itself, at stride 1). Tap t reads
 * xp[s*o + t*d] = P_a[o + b] with a = t*d mod s and b = t*d div s, so the im2col row of input
 * channel c and tap t is a slice of a phase plane: P_{c,a(t)}[b(t) + j], j running over "wide"
 * positions, the plane's grid positions up to the last output (those past an output edge on any
 * axis but the first are computed and dropped). The GEMM packs B straight from the phase planes
 * through row pointers, so the im2col copy (9 times the input for 3x3, 4 times for 4x4 stride 2)
 * is gone; what remains is one rearranged copy of X and the compaction of each C block into Y. */

/* Phase plane dims and counts; returns the wide positions per plane: the last output's, plus
 * one. */
static int64_t wide_setup(conv_job *job) {
    const tc_lattice *lat = &job->lat;
    int64_t length = 1, stride = 1;
    job->n_phases = 1;
    for (int i = lat->rank - 1; i >= 0; i--) {
        job->padded[i] =
            lat->coarse[i] + (lat->kernel[i] - 1) * lat->dilations[i] / lat->strides[i];
        length += (lat->coarse[i] - 1) * stride;
        stride *= job->padded[i];
        job->n_phases *= lat->strides[i];
    }
    job->padded_size = stride;
    job->channel_floats = job->n_phases * stride;
    return length;
}

/* Whether X is read flat (conv_run_masked): at stride 1 X itself, when the output is as wide as
 * X on every axis but the first (SAME or symmetric pads), output position q's tap t reading X at
 * q + shift(t); at larger strides, stride phase planes of the output's dims, when no tap inside
 * X reads past a plane's end (a VALID stride-2 Conv that drops X's last line would). */
static bool conv_reads_flat(const tc_lattice *lat) {
    bool unit_strides = true;
    for (int i = 0; i < lat->rank; i++)
        unit_strides = unit_strides && lat->strides[i] == 1;
    if (unit_strides) {
        for (int i = 1; i < lat->rank; i++) {
            if (lat->coarse[i] != lat->fine[i])
                return false;
        }
        return true;
    }
    if (lat->strides[lat->rank - 1] > CONV_WIDE_MAX_STRIDE)
        return false;
    for (int i = 0; i < lat->rank; i++) {
        for (int64_t t = 0; t < lat->kernel[i]; t++) {
            int64_t a, b;
            tc_lattice_tap_phase(lat, i, t, &a, &b);
            if (b > 0 && (lat->fine[i] - 1 - a) / lat->strides[i] > lat->coarse[i] - 1)
                return false;
        }
    }
    return true;
}

/* Chooses the masked path (stride 1, X in place, conv_run_masked), the wide path (wide_setup's
 * fields set) or im2col, and the GEMM's columns per
 * (batch, group): wide when not a plain 1x1 (direct) and the dropped positions cost at most
 * half of the useful ones. */
static void conv_choose_columns(conv_job *job) {
    int64_t out = job->lat.coarse_size;
    int64_t length = job->direct ? 0 : wide_setup(job);
    job->masked = !job->direct && conv_reads_flat(&job->lat) && tc_gemm_has_row_form();
    job->wide = !job->direct && !job->masked && length <= out + out / 2 &&
                job->lat.strides[job->lat.rank - 1] <= CONV_WIDE_MAX_STRIDE;
    job->columns = job->wide ? length : out;
}
/* One line of phase plane a (last axis): d[u] = x[first + s*u] for u in [lo, hi), zero around
 * (first = a - pad_begin: X's position of u = 0). */
typedef struct phase_span {
    int64_t first, lo, hi;
} phase_span;

static phase_span phase_span_at(const tc_lattice *lat, int64_t width, int64_t a) {
    int last = lat->rank - 1;
    int64_t s = lat->strides[last];
    phase_span p = {.first = a - lat->pad_begin[last]};
    p.lo = tc_min_i64(tc_max_i64(tc_ceil_div(-p.first, s), 0), width);
    p.hi = tc_min_i64(tc_max_i64(tc_ceil_div(lat->fine[last] - p.first, s), p.lo), width);
    return p;
}

/* d[u] for u in [from, to) of phase span p from source line x */
static void phase_part(float *d, const float *x, const phase_span *p, int64_t s, int64_t from,
                       int64_t to) {
    if (to > from)
        tc_floats_gather(d + from, x + p->first + from * s, to - from, s);
}

/* Where phase planes go: each phase's plane of `padded` dims (padded_size floats), X placed at
 * the lattice's pad_begin. */
typedef struct plane_geom {
    const tc_lattice *lat;
    const int64_t *padded;
    int64_t padded_size, n_phases;
} plane_geom;

/* Every last-axis phase's line from one source line (NULL: outside X, all zero). Stride 2
 * splits the line once into both phases where both read X. */
static void phase_lines(const plane_geom *pg, const phase_span *spans, const float *x, float *d) {
    const tc_lattice *lat = pg->lat;
    int64_t s = lat->strides[lat->rank - 1], width = pg->padded[lat->rank - 1];
    for (int64_t a = 0; a < s && !x; a++)
        tc_floats_zero(d + a * pg->padded_size, width);
    if (!x)
        return;
    /* (lines whose phases both lie wholly inside X come as runs: phase_line_run) */
    int64_t both_lo = 0, both_hi = 0;
    if (s == 2) {
        both_lo = tc_max_i64(spans[0].lo, spans[1].lo);
        both_hi = tc_max_i64(both_lo, tc_min_i64(spans[0].hi, spans[1].hi));
        /* phase 1 starts one element after phase 0: first1 = first0 + 1 */
        if (both_hi > both_lo)
            tc_floats_deinterleave(d + both_lo, d + pg->padded_size + both_lo,
                                   x + spans[0].first + 2 * both_lo, both_hi - both_lo);
    }
    for (int64_t a = 0; a < s; a++) {
        const phase_span *p = &spans[a];
        float *line = d + a * pg->padded_size;
        int64_t mid_lo = tc_min_i64(tc_max_i64(both_lo, p->lo), p->hi);
        int64_t mid_hi = tc_max_i64(tc_min_i64(both_hi, p->hi), mid_lo);
        tc_floats_zero(line, p->lo);
        phase_part(line, x, p, s, p->lo, mid_lo);
        phase_part(line, x, p, s, mid_hi, p->hi);
        tc_floats_zero(line + p->hi, width - p->hi);
    }
}

/* One line of a padded plane: X's line x (NULL: none, all zero) at [lo, hi), zeros around. The
 * lines are short (8 to 64 floats in erfnet): plain loops, which the compiler vectorizes, cost
 * less than the calls and size tests of tc_floats_copy/zero. */
static inline void padded_line(float *restrict d, const float *restrict x, int64_t lo, int64_t hi,
                               int64_t width) {
    if (!x)
        lo = hi = width;
    for (int64_t j = 0; j < lo; j++)
        d[j] = 0.0f;
    for (int64_t j = lo; j < hi; j++)
        d[j] = x[j - lo];
    for (int64_t j = hi; j < width; j++)
        d[j] = 0.0f;
}

/* Stride 1: X's plane at pad_begin in a zero plane of `padded` dims (clipped to it). Without a
 * pad on the last axis (a 3x1 kernel's padding) the lines inside X are one block of X: one copy
 * between two fills (per block of the leading axes beyond the first); else line by line. */
static void padded_plane_of(const tc_lattice *lat, const int64_t *padded, int64_t padded_size,
                            const float *src, float *dst) {
    int last = lat->rank - 1;
    int64_t width = padded[last], x_width = lat->fine[last];
    int64_t lo = tc_min_i64(lat->pad_begin[last], width);
    int64_t hi = tc_min_i64(lo + x_width, width), lines = padded_size / width;
    bool whole_lines = lo == 0 && hi == width;
    int64_t u[TC_MAX_SPATIAL] = {0}, run_src = -1, run_dst = 0, run_lines = 0;
    for (int64_t line = 0; line < lines; line++) {
        int64_t src_line = 0;
        bool inside = true;
        for (int i = 0; i < last && inside; i++) {
            int64_t v = u[i] - lat->pad_begin[i];
            inside = v >= 0 && v < lat->fine[i];
            src_line = src_line * lat->fine[i] + v;
        }
        for (int i = last - 1; i >= 0 && ++u[i] == padded[i]; i--)
            u[i] = 0;
        if (!whole_lines) {
            padded_line(dst + line * width, inside ? src + src_line * x_width : NULL, lo, hi,
                        width);
            continue;
        }
        src_line = inside ? src_line : -1;
        /* extend the pending run (copies: consecutive X lines; fills: zero lines) or flush it */
        if (run_lines > 0 &&
            (run_src < 0 ? src_line < 0 : src_line >= 0 && src_line == run_src + run_lines)) {
            run_lines++;
            continue;
        }
        if (run_lines > 0) {
            float *d = dst + run_dst * width;
            if (run_src < 0)
                tc_floats_zero(d, run_lines * width);
            else
                tc_floats_copy(d, src + run_src * x_width, run_lines * width);
        }
        run_src = src_line;
        run_dst = line;
        run_lines = 1;
    }
    if (run_lines > 0 && run_src < 0)
        tc_floats_zero(dst + run_dst * width, run_lines * width);
    else if (run_lines > 0)
        tc_floats_copy(dst + run_dst * width, src + run_src * x_width, run_lines * width);
}

/* Lines [first, first + count) of a phase plane (plane: its last-axis phase 0) from X's lines
 * src_line, src_line + step, ... (x: X's plane): each split into the last axis's phases. At
 * stride 2 with both phases wholly inside X, one call splits them all (a line is 8 to 64 floats
 * in erfnet; a call a line cost more than the split itself). */
static void phase_line_run(const plane_geom *pg, const phase_span *spans, bool one_split,
                           const float *x, float *plane, int64_t first, int64_t src_line,
                           int64_t step, int64_t count) {
    const tc_lattice *lat = pg->lat;
    int64_t width = pg->padded[lat->rank - 1], x_width = lat->fine[lat->rank - 1];
    if (count > 0 && one_split) {
        tc_floats_deinterleave_lines(plane + first * width, plane + pg->padded_size + first * width,
                                     width, x + src_line * x_width + spans[0].first, step * x_width,
                                     width, count);
        return;
    }
    for (int64_t l = 0; l < count; l++)
        phase_lines(pg, spans, x + (src_line + l * step) * x_width, plane + (first + l) * width);
}

/* The phase planes of input planes [p0, p1) (X's plane p at src + p * fine_size, its planes at
 * dst + p * n_phases * padded_size): for each phase of the leading axes, each plane's lines row by
 * row of the innermost leading axis, where the lines that read X are one interval (the others,
 * in the padding, are zeros), worked out once for all the planes. Line by line and plane by
 * plane, the bookkeeping took as long as the copy: erfnet's 32-channel 16x16 stride-2 Conv spent
 * 3.5 us of its 15 on its phase planes. */
static void phase_planes_of(const plane_geom *pg, const float *src, float *dst, int64_t p0,
                            int64_t p1) {
    const tc_lattice *lat = pg->lat;
    int last = lat->rank - 1;
    int64_t s = lat->strides[last], width = pg->padded[last];
    int64_t src_plane = lat->fine_size, dst_plane = pg->n_phases * pg->padded_size;
    if (pg->n_phases == 1) {
        for (int64_t p = p0; p < p1; p++)
            padded_plane_of(lat, pg->padded, pg->padded_size, src + p * src_plane,
                            dst + p * dst_plane);
        return;
    }
    phase_span spans[CONV_WIDE_MAX_STRIDE];
    for (int64_t a = 0; a < s; a++)
        spans[a] = phase_span_at(lat, width, a);
    bool one_split = s == 2 && spans[0].lo == 0 && spans[1].lo == 0 && spans[0].hi == width &&
                     spans[1].hi == width;
    if (last == 0) { /* 1-D: one line a plane */
        for (int64_t p = p0; p < p1; p++)
            phase_line_run(pg, spans, one_split, src + p * src_plane, dst + p * dst_plane, 0, 0, 1,
                           1);
        return;
    }
    int inner = last - 1; /* the leading axis whose lines form a row */
    int64_t rows = pg->padded[inner], lines = pg->padded_size / width;
    for (int64_t lead = 0; lead < pg->n_phases / s; lead++) {
        int64_t a[TC_MAX_SPATIAL] = {0}, rem = lead;
        for (int i = last - 1; i >= 0; i--) {
            a[i] = rem % lat->strides[i];
            rem /= lat->strides[i];
        }
        /* rows u of the inner axis read X's line u * stride + a - pad: inside for u in [lo, hi) */
        int64_t first = a[inner] - lat->pad_begin[inner], step = lat->strides[inner];
        int64_t lo = tc_min_i64(tc_max_i64(tc_ceil_div(-first, step), 0), rows);
        int64_t hi = tc_min_i64(tc_max_i64(tc_ceil_div(lat->fine[inner] - first, step), lo), rows);
        for (int64_t p = p0; p < p1; p++) {
            const float *x = src + p * src_plane;
            float *plane = dst + p * dst_plane + lead * s * pg->padded_size;
            int64_t u[TC_MAX_SPATIAL] = {0}; /* the outer leading axes' position */
            for (int64_t line = 0; line < lines; line += rows) {
                int64_t outer_line = 0;
                bool inside = true;
                for (int i = 0; i < inner; i++) {
                    int64_t v = u[i] * lat->strides[i] + a[i] - lat->pad_begin[i];
                    inside = inside && v >= 0 && v < lat->fine[i];
                    outer_line = outer_line * lat->fine[i] + v;
                }
                for (int i = inner - 1; i >= 0 && ++u[i] == pg->padded[i]; i--)
                    u[i] = 0;
                int64_t in_lo = inside ? lo : rows, in_hi = inside ? hi : rows;
                for (int64_t r = 0; r < in_lo; r++)
                    phase_lines(pg, spans, NULL, plane + (line + r) * width);
                for (int64_t r = in_hi; r < rows; r++)
                    phase_lines(pg, spans, NULL, plane + (line + r) * width);
                phase_line_run(pg, spans, one_split, x, plane, line + in_lo,
                               outer_line * lat->fine[inner] + in_lo * step + first, step,
                               in_hi - in_lo);
            }
        }
    }
}

/* The wide path's planes (build_planes): X's planes at pad_begin in zero planes of `padded`
 * dims, split into their stride phases. */
static void wide_phase_planes(const conv_job *job, float *dst, int64_t p0, int64_t p1) {
    plane_geom pg = {&job->lat, job->padded, job->padded_size, job->n_phases};
    phase_planes_of(&pg, job->x, dst, p0, p1);
}

/* Bytes of scratch for the phase planes of a run on `workers` workers (0 without
 * build_planes); decides private_planes. Small planes that several workers read are built by
 * each worker for itself: built once by the caller, they moved to the other cores as the GEMM
 * read them, and back as the next run rebuilt them. erfnet's 32-channel 16x16 stride-2 Conv at
 * 2 threads spent 5.3 us on its 8192 floats of planes (1.4 at 1 thread) and took longer than at
 * 1 thread (14.2 us, 13.3 at 1; with a copy a worker 11.1). */
static size_t conv_plane_bytes(conv_job *job, int workers) {
    int64_t floats = job->batch * job->c_in * job->channel_floats;
    job->private_planes =
        job->build_planes && workers > 1 && floats < CONV_MIN_PARALLEL_PLANE_FLOATS;
    size_t copy = job->build_planes ? ((size_t)floats * sizeof(float) + 63) / 64 * 64 : 0;
    job->plane_copy_floats = (int64_t)(copy / sizeof(float));
    return copy * (size_t)(job->private_planes ? workers : 1);
}

/* The phase planes `worker` reads: the shared ones, or its own copy. */
static const float *conv_worker_planes(const conv_job *job, int worker) {
    return job->padded_x + (job->private_planes ? worker * job->plane_copy_floats : 0);
}

/* Builds the worker's own planes on its first task of the run, before its row pointers, which
 * point into them (rows_unit is -1 until then). */
static void conv_planes_ready(const conv_job *job, int worker) {
    if (job->private_planes && job->rows_unit[worker] < 0)
        job->build_planes(job, (float *)conv_worker_planes(job, worker), 0, job->batch * job->c_in);
}

/* A range of the shared planes (conv_run_plane_tasks). */
static void shared_planes_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    const conv_job *job = vjob;
    int64_t p0 = task * job->planes_per_task;
    int64_t p1 = tc_min_i64(p0 + job->planes_per_task, job->batch * job->c_in);
    job->build_planes(job, (float *)job->padded_x, p0, p1);
}

/* Moves the kept positions of a C block (rows x cols wide positions from q0) into Y, adding the
 * bias, then applying the fused activation while they are in cache. */
static void wide_compact(const conv_job *job, const float *block, int64_t rows, const conv_unit *u,
                         int64_t row0) {
    const tc_lattice *lat = &job->lat;
    int last = lat->rank - 1;
    int64_t width = job->padded[last], out_width = lat->coarse[last];
    float *y = job->y + (u->n * job->c_out + row0) * lat->coarse_size;
    for (int64_t j = 0; j < u->cols;) {
        int64_t w = u->q0 + j, col = w % width, rem = w / width, out_line = 0, scale = 1;
        bool kept = true;
        for (int i = last - 1; i >= 0; i--) {
            int64_t c = rem % job->padded[i];
            rem /= job->padded[i];
            kept = kept && c < lat->coarse[i];
            out_line += c * scale;
            scale *= lat->coarse[i];
        }
        int64_t run = tc_min_i64(width - col, u->cols - j);
        int64_t keep = kept ? tc_min_i64(out_width - col, run) : 0;
        for (int64_t r = 0; r < rows && keep > 0; r++) {
            float *dst = y + r * lat->coarse_size + out_line * out_width + col;
            const float *src = block + r * u->cols + j;
            epilogue_span(job, dst, src, job->bias ? job->bias[row0 + r] : 0.0f, keep);
        }
        j += run;
    }
}

/* Whether the worker's B row pointers are for another (batch, group) than unit u's; marks them
 * as u's. They do not depend on the column block (the GEMM adds its first column:
 * tc_sgemm_op.b_col0), so a worker builds them once a (batch, group) it works on, not once a
 * task: depth pointers a task cost 6% of erfnet's time at 2 threads. */
static bool rows_stale(conv_job *job, const conv_unit *u, int worker) {
    int64_t key = u->n * job->group + u->g;
    if (job->rows_unit[worker] == key)
        return false;
    job->rows_unit[worker] = key;
    return true;
}

/* One (batch, group, wide column block, row chunk). */
static void conv_wide_task(void *vjob, int64_t task, int worker) {
    conv_job *job = vjob;
    const tc_lattice *lat = &job->lat;
    int64_t chunk = task % job->n_chunks;
    conv_unit u = conv_unit_at(job, task / job->n_chunks);
    tc_conv_worker_scratch *ws = &job->scratch.workers[worker];
    int64_t depth = job->cin_g * lat->kernel_size;
    const float **rows = job->b_rows + (size_t)worker * (size_t)depth;
    conv_planes_ready(job, worker);
    if (rows_stale(job, &u, worker)) {
        const float *xp = conv_worker_planes(job, worker) +
                          (u.n * job->c_in + u.g * job->cin_g) * job->channel_floats;
        for (int64_t c = 0; c < job->cin_g; c++) {
            for (int64_t t = 0; t < lat->kernel_size; t++)
                rows[c * lat->kernel_size + t] = xp + c * job->channel_floats + job->tap_offsets[t];
        }
    }
    int64_t row0 = u.g * job->cout_g + chunk * job->chunk_rows;
    tc_sgemm_op op = {.m = conv_chunk_rows_at(job, chunk),
                      .n = u.cols,
                      .k = depth,
                      .alpha = 1.0f,
                      .b_rows = rows,
                      .b_col0 = u.q0,
                      .c = ws->col,
                      .ldc = u.cols};
    const float *packed =
        job->packed_w + (size_t)(u.g * job->n_chunks + chunk) * job->packed_chunk_floats;
    tc_sgemm_run_packed(&ws->gemm, packed, &op);
    wide_compact(job, ws->col, op.m, &u, row0);
}

/* Every tap's offset in an input channel's phase planes: its phase plane, then its shift. */
static void wide_tap_offsets(const conv_job *job, int64_t *offsets) {
    const tc_lattice *lat = &job->lat;
    int64_t tap[TC_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < lat->kernel_size; t++, tc_lattice_next_tap(lat, tap)) {
        int64_t phase = 0, shift = 0;
        for (int i = 0; i < lat->rank; i++) {
            int64_t q = tap[i] * lat->dilations[i];
            phase = phase * lat->strides[i] + q % lat->strides[i];
            shift = shift * job->padded[i] + q / lat->strides[i];
        }
        offsets[t] = phase * job->padded_size + shift;
    }
}

/* Builds every input plane's shared phase planes (when the path has them and they are not
 * private: split over threads only when they are big enough to pay for it), then runs the
 * (batch, group, column block, row chunk) tasks. */
static void conv_run_plane_tasks(tc_kernel_ctx *ctx, conv_job *job, int threads, int workers,
                                 tc_parallel_fn task) {
    int64_t planes = job->batch * job->c_in;
    for (int i = 0; i < workers; i++) /* no worker's row pointers are built yet (rows_stale) */
        job->rows_unit[i] = -1;
    if (job->build_planes && !job->private_planes) {
        /* ranges of planes, so that the per-phase arithmetic is done once a range: one range
         * in one thread, or TC_CONV_TASKS_PER_THREAD a thread */
        int plane_threads =
            planes * job->channel_floats >= CONV_MIN_PARALLEL_PLANE_FLOATS ? threads : 1;
        int64_t ranges = plane_threads > 1 ? (int64_t)plane_threads * TC_CONV_TASKS_PER_THREAD : 1;
        job->planes_per_task = (planes + ranges - 1) / ranges;
        int64_t n_ranges = (planes + job->planes_per_task - 1) / job->planes_per_task;
        tc_parallel_for(ctx->pool, tc_parallel_workers(plane_threads, n_ranges), n_ranges,
                        shared_planes_task, job);
    }
    int64_t n_tasks = job->batch * job->group * job->n_blocks * job->n_chunks;
    tc_parallel_for(ctx->pool, workers, n_tasks, task, job);
}

/* The phase planes (X itself at stride 1 without pads), the tap offsets and the row pointers,
 * in one scratch piece; then the tasks. */
static tconv_status conv_run_wide(tc_kernel_ctx *ctx, conv_job *job, int threads, int workers) {
    const tc_lattice *lat = &job->lat;
    /* X itself serves only at stride 1 without pads (a strided X may have the planes' size) */
    bool padded = job->n_phases > 1 || job->padded_size != lat->fine_size;
    size_t depth = (size_t)(job->cin_g * lat->kernel_size);
    /* the offsets and pointers that follow the floats want 8-byte alignment */
    job->build_planes = padded ? wide_phase_planes : NULL;
    size_t x_bytes = conv_plane_bytes(job, workers);
    size_t offset_bytes = (size_t)lat->kernel_size * sizeof(int64_t);
    size_t rows_bytes = (size_t)workers * depth * sizeof(float *);
    size_t key_bytes = (size_t)workers * sizeof(int64_t);
    tc_rt_tensor memory;
    tconv_status st =
        tc_kernel_scratch(ctx, x_bytes + offset_bytes + rows_bytes + key_bytes, &memory);
    if (st != TCONV_OK)
        return st;
    unsigned char *base = memory.data;
    int64_t *offsets = (int64_t *)(void *)(base + x_bytes);
    job->b_rows = (const float **)(void *)(base + x_bytes + offset_bytes);
    job->rows_unit = (int64_t *)(void *)(base + x_bytes + offset_bytes + rows_bytes);
    job->tap_offsets = offsets;
    wide_tap_offsets(job, offsets);
    job->padded_x = job->x;
    if (padded)
        job->padded_x = (const float *)(void *)base;
    conv_run_plane_tasks(ctx, job, threads, workers, conv_wide_task);
    tc_kernel_scratch_release(ctx, &memory);
    return TCONV_OK;
}

/* ---- Few output positions (a deep layer's 2x2 to 6x6 plane). In Y_g = W_g x col the positions
 * are the GEMM's columns, its vector lanes: 4 positions fill a quarter of one 16-float vector,
 * and every FMA does a quarter of its work. Swapped, Y_g^T = col^T x W_g^T puts the positions on
 * the micro-tile's rows (broadcasts) and the output channels on its lanes, which a deep layer
 * has many of. W_g^T (depth x cout_g) is kept across runs like the packed W and read in place by
 * row pointers. col^T is never built: the GEMM's A panels are gathered straight from X
 * (tc_sgemm_pack_a_taps) through each (position, tap)'s offset, the taps in the padding as 0. */

/* Output positions up to which the swapped product is used: at most three 16-float vectors
 * (the other orientation's tiles are 32 or 48 columns wide), and with at least one vector of
 * output channels per group. Up to CONV_NARROW_GATHER_MAX_POSITIONS it also replaces im2col
 * (where the wide path would drop too many columns: a 1x3 kernel dilated 4 on an 8-wide
 * plane), its A gathered without an im2col block (erfnet's 1x3 d4 on 8x8: 31 -> 25 us). */
#define CONV_NARROW_MAX_POSITIONS 36
#define CONV_NARROW_GATHER_MAX_POSITIONS 128
#define CONV_NARROW_MIN_CHANNELS 16

/* After conv_choose_columns. */
static bool conv_wants_narrow(const conv_job *job) {
    int64_t positions = job->lat.coarse_size;
    bool instead_of_im2col =
        !job->wide && !job->masked && !job->direct && positions <= CONV_NARROW_GATHER_MAX_POSITIONS;
    return job->cout_g >= CONV_NARROW_MIN_CHANNELS &&
           (positions <= CONV_NARROW_MAX_POSITIONS || instead_of_im2col);
}

/* W_g^T of every group, group after group, each in column chunks of chunk_rows output channels:
 * chunk j is depth rows of its width, contiguous, so that a task streams its weights in order
 * (W^T rows of all the channels, read a chunk at a time, stride a whole row: fcn_head's fc6,
 * 884 KB of weights that are not in cache, took 137 us that way). */
static const float *narrow_chunk_weights(const conv_job *job, int64_t g, int64_t chunk) {
    int64_t depth = job->cin_g * job->lat.kernel_size;
    if (job->narrow_packed_floats)
        return job->packed_w + (g * job->n_chunks + chunk) * job->narrow_packed_floats;
    return job->packed_w + g * depth * job->cout_g + depth * chunk * job->chunk_rows;
}

/* Floats of every group's W^T chunks in the layout narrow_chunk_weights reads. */
static int64_t narrow_weight_floats(const conv_job *job) {
    int64_t depth = job->cin_g * job->lat.kernel_size;
    if (job->narrow_packed_floats)
        return job->group * job->n_chunks * job->narrow_packed_floats;
    return job->group * depth * job->cout_g;
}

static tconv_status narrow_weights(tc_kernel_ctx *ctx, conv_job *job, tc_rt_tensor *scratch) {
    int64_t depth = job->cin_g * job->lat.kernel_size;
    /* layout[5] < 0 tells this block from the packed W of the same node: -1 plain, -2 - isa
     * packed for that isa's GEMM */
    tc_kernel_cache_key key = {.source = job->w,
                               .layout = {job->cout_g, job->group, depth, job->chunk_rows,
                                          job->trim.key,
                                          job->narrow_packed_floats ? -2 - (int64_t)job->isa : -1}};
    bool fresh;
    float *wt;
    tconv_status st = tc_conv_packed_weights(
        ctx, &key, (size_t)narrow_weight_floats(job) * sizeof(float), &wt, &fresh, scratch);
    job->packed_w = wt;
    if (st != TCONV_OK || !fresh)
        return st;
    tc_rt_tensor cut;
    const float *live;
    if ((st = gemm_weights(ctx, job, false, &cut, &live)) != TCONV_OK)
        return st;
    for (int64_t g = 0; g < job->group; g++) {
        for (int64_t chunk = 0; chunk < job->n_chunks; chunk++) {
            const float *w = live + (g * job->cout_g + chunk * job->chunk_rows) * depth;
            float *t = (float *)narrow_chunk_weights(job, g, chunk);
            int64_t width = conv_chunk_rows_at(job, chunk);
            if (job->narrow_packed_floats) {
                tc_sgemm_pack_b(job->isa, true, depth, width, w, depth, t);
                continue;
            }
            for (int64_t c = 0; c < width; c++)
                for (int64_t p = 0; p < depth; p++)
                    t[p * width + c] = w[c * depth + p];
        }
    }
    tc_kernel_scratch_release(ctx, &cut);
    return TCONV_OK;
}

/* The narrow path's gather: each (output position, tap)'s offset in an input plane, -1 where
 * the tap falls in the padding (its A entry is 0), and every (batch, group)'s packed A. */
typedef struct narrow_plan {
    int64_t *tap_offsets; /* coarse_size x kernel_size */
    float *packed;        /* every (batch, group)'s packed A */
    size_t packed_floats; /* per (batch, group) */
} narrow_plan;

static void narrow_offsets(const tc_lattice *lat, narrow_plan *np) {
    int64_t o[TC_MAX_SPATIAL] = {0};
    for (int64_t q = 0; q < lat->coarse_size; q++) {
        int64_t tap[TC_MAX_SPATIAL] = {0};
        for (int64_t t = 0; t < lat->kernel_size; t++, tc_lattice_next_tap(lat, tap)) {
            int64_t at = 0;
            bool inside = true;
            for (int i = 0; i < lat->rank; i++) {
                int64_t v = o[i] * lat->strides[i] + tap[i] * lat->dilations[i] - lat->pad_begin[i];
                inside = inside && v >= 0 && v < lat->fine[i];
                at = at * lat->fine[i] + v;
            }
            np->tap_offsets[q * lat->kernel_size + t] = inside ? at : -1;
        }
        for (int i = lat->rank - 1; i >= 0 && ++o[i] == lat->coarse[i]; i--)
            o[i] = 0;
    }
}

typedef struct narrow_pack_job {
    conv_job *job;
    narrow_plan *np;
    int64_t slices;     /* of each (batch, group)'s rows */
    int64_t slice_rows; /* a multiple of the row tile */
} narrow_pack_job;

/* One (batch, group)'s rows of one slice: its packed A gathered straight from X. */
static void narrow_pack_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    const narrow_pack_job *pj = vjob;
    const conv_job *job = pj->job;
    const tc_lattice *lat = &job->lat;
    int64_t unit = task / pj->slices, row0 = task % pj->slices * pj->slice_rows;
    tc_sgemm_pack_a_taps(job->isa, lat->coarse_size, row0, row0 + pj->slice_rows, job->cin_g,
                         lat->kernel_size, job->x + unit * job->cin_g * lat->fine_size,
                         lat->fine_size, pj->np->tap_offsets,
                         pj->np->packed + (size_t)unit * pj->np->packed_floats);
}

/* The gather split over the threads (a deep layer has one (batch, group) and a few row panels:
 * U-Net's 128-channel 3x3 Conv on 4x6 gathers 27648 floats, which one thread took 14 us of the
 * node's 95 for) by ranges of whole row panels, when there are fewer units than threads. */
static void narrow_pack(tc_kernel_ctx *ctx, conv_job *job, narrow_plan *np, int threads) {
    int64_t units = job->batch * job->group, tile = tc_sgemm_row_tile(job->isa);
    int64_t panels = (job->lat.coarse_size + tile - 1) / tile;
    narrow_pack_job pj = {job, np, 1, panels * tile};
    if (units < threads) {
        pj.slices = tc_min_i64(panels, (threads + units - 1) / units);
        pj.slice_rows = (panels + pj.slices - 1) / pj.slices * tile;
        pj.slices = (panels * tile + pj.slice_rows - 1) / pj.slice_rows;
    }
    int64_t tasks = units * pj.slices;
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, tasks), tasks, narrow_pack_task, &pj);
}

typedef struct narrow_run_job {
    conv_job *job;
    const narrow_plan *np;
} narrow_run_job;

/* One (batch, group, output-channel chunk): C = col^T x W_g^T[:, chunk] into the worker's
 * block, then C^T into Y's rows and the bias and fused activation over them. */
static void narrow_task(void *vrun, int64_t task, int worker) {
    const narrow_run_job *rj = vrun;
    conv_job *job = rj->job;
    int64_t positions = job->lat.coarse_size, depth = job->cin_g * job->lat.kernel_size;
    int64_t chunk = task % job->n_chunks, unit = task / job->n_chunks;
    int64_t g = unit % job->group, c0 = chunk * job->chunk_rows;
    int64_t cols = conv_chunk_rows_at(job, chunk);
    tc_conv_worker_scratch *ws = &job->scratch.workers[worker];
    const float **rows = job->b_rows + (size_t)worker * (size_t)depth;
    const float *wt = narrow_chunk_weights(job, g, chunk);
    tc_sgemm_op op = {
        .m = positions, .n = cols, .k = depth, .alpha = 1.0f, .c = ws->col, .ldc = cols};
    if (job->narrow_packed_floats) {
        op.packed_b = wt;
    } else {
        for (int64_t p = 0; p < depth; p++)
            rows[p] = wt + p * cols;
        op.b_rows = rows;
    }
    tc_sgemm_run_packed(&ws->gemm, rj->np->packed + (size_t)unit * rj->np->packed_floats, &op);
    int64_t row0 = g * job->cout_g + c0;
    float *y = job->y + ((unit / job->group) * job->c_out + row0) * positions;
    for (int64_t c = 0; c < cols; c++)
        for (int64_t i = 0; i < positions; i++)
            y[c * positions + i] = ws->col[i * cols + c];
    conv_rows_epilogue(job, y, cols, positions, positions, row0);
}

/* Scratch: the packed A of every (batch, group) and every worker's B row pointers, in one
 * piece; the tap offsets kept with the node (tc_conv_lattice_table: they depend on the shapes
 * alone, and took 1% of LinkNet's time at 2 threads made every run in the calling thread). */
static tconv_status narrow_scratch(tc_kernel_ctx *ctx, conv_job *job, int workers, narrow_plan *np,
                                   tc_rt_tensor *offsets, tc_rt_tensor *memory) {
    int64_t units = job->batch * job->group, depth = job->cin_g * job->lat.kernel_size;
    const tc_lattice *lat = &job->lat;
    void *table;
    bool fresh;
    tconv_status st = tc_conv_lattice_table(
        ctx, TC_CONV_TABLE_NARROW, &lat, 1,
        (size_t)(lat->coarse_size * lat->kernel_size) * sizeof(int64_t), &table, &fresh, offsets);
    if (st != TCONV_OK)
        return st;
    np->tap_offsets = table;
    if (fresh)
        narrow_offsets(lat, np);
    np->packed_floats =
        tc_round_up_i64((int64_t)tc_sgemm_packed_a_floats(job->isa, lat->coarse_size, depth), 16);
    size_t packed_bytes = (size_t)units * np->packed_floats * sizeof(float);
    st = tc_kernel_scratch(ctx, packed_bytes + (size_t)workers * (size_t)depth * sizeof(float *),
                           memory);
    if (st != TCONV_OK) {
        tc_kernel_scratch_release(ctx, offsets);
        return st;
    }
    np->packed = memory->data;
    job->b_rows = (const float **)(void *)((unsigned char *)memory->data + packed_bytes);
    return TCONV_OK;
}

static tconv_status conv_run_narrow(tc_kernel_ctx *ctx, conv_job *job, int threads) {
    int64_t positions = job->lat.coarse_size, depth = job->cin_g * job->lat.kernel_size;
    int64_t units = job->batch * job->group;
    /* output channels in chunks of the micro-tile's width (the weights' layout: one stream a
     * task), narrower (multiples of 16) when threads want more tasks than that gives */
    job->isa = tc_gemm_isa_for_shape(positions, job->cout_g);
    int64_t tile = tc_sgemm_col_tile(job->isa);
    int64_t want = threads > 1 ? (int64_t)threads * TC_CONV_TASKS_PER_THREAD : 1;
    int64_t chunks = tc_max_i64((job->cout_g + tile - 1) / tile,
                                tc_min_i64((want + units - 1) / units, job->cout_g / 16));
    job->chunk_rows = split_evenly(job->cout_g, chunks, 16, &job->n_chunks);
    /* W^T packed once where the GEMM would pack it every run (AVX2 beyond 2 row panels: U-Net's
     * 128-channel 3x3 Convs on 4x6, 24 x 128 products over 590 KB of W^T, copied it per run),
     * and where chunks are whole column panels, which the packed form reads as they lie: read
     * in place, a task first pointed at every row of its chunk (1152 pointers for a 128-channel
     * 3x3 Conv, half of LinkNet's narrow tasks' own time on 2x2 and 4x4 planes) */
    bool in_place = tc_sgemm_reads_b_rows_in_place(job->isa, positions, job->chunk_rows);
    bool whole_panels = job->chunk_rows % tile == 0;
    job->narrow_packed_floats =
        in_place && !whole_panels
            ? 0
            : (int64_t)tc_sgemm_packed_b_floats(job->isa, depth, job->chunk_rows);
    int64_t n_tasks = units * job->n_chunks;
    int workers = tc_parallel_workers(threads, n_tasks);
    narrow_plan np = {0};
    tc_rt_tensor wt, offsets, memory;
    tconv_status st = narrow_weights(ctx, job, &wt);
    if (st == TCONV_OK)
        st = narrow_scratch(ctx, job, workers, &np, &offsets, &memory);
    if (st != TCONV_OK) {
        tc_kernel_scratch_release(ctx, &wt);
        return st;
    }
    st = tc_conv_scratch_reserve(ctx, &job->scratch, workers, positions * job->chunk_rows, job->isa,
                                 positions, job->chunk_rows, depth);
    if (st == TCONV_OK) {
        narrow_pack(ctx, job, &np, threads);
        narrow_run_job rj = {job, &np};
        tc_parallel_for(ctx->pool, workers, n_tasks, narrow_task, &rj);
        tc_conv_scratch_release(ctx, &job->scratch);
    }
    tc_kernel_scratch_release(ctx, &memory);
    tc_kernel_scratch_release(ctx, &offsets);
    tc_kernel_scratch_release(ctx, &wt);
    return st;
}

/* ---- X read flat, masked: Y_g = W_g x B where B's row (c, t) is input plane c read from tap t's
 * flat shift, the lanes whose (position, tap) falls outside X masked off (tc_sgemm_op.b_masks:
 * not loaded, read as 0). At stride 1 the plane is X itself (output position q reads X at
 * q + shift(t)); at larger strides it is X's stride phase planes at the output's dims, tap t
 * reading phase a(t) at q + b(t). No padding, no dropped columns (the wide path computes W + 2
 * pad columns per output line: a quarter more for a 1x3 kernel on an 8-wide plane), no
 * compaction: C is Y. */

/* The phase planes of input planes [p0, p1) into dst (as conv_run_masked lays them out). At a
 * stride above 1: every input plane's phase planes at the output's dims, X at offset 0 (what
 * falls outside X is masked, so the planes need no padding). */
static void masked_phase_planes(const conv_job *job, float *dst, int64_t p0, int64_t p1) {
    tc_lattice unpadded = job->lat;
    memset(unpadded.pad_begin, 0, sizeof unpadded.pad_begin);
    plane_geom pg = {&unpadded, job->lat.coarse, job->lat.coarse_size, job->n_phases};
    phase_planes_of(&pg, job->x, dst, p0, p1);
}

/* Stride 1, X copied plane by plane (build_planes) an odd number of cache lines apart: X's
 * planes, a power-of-two number of lines apart in a CNN, put every channel's B rows in the same
 * L1 sets, where a kernel that reads B in place evicts what it reads again
 * (tc_sgemm_op.b_rows_spread). A copy of X costs a load and a store a float against the
 * 9 x m FMAs a 3x3 Conv of m output channels does with it; packing B copied it 9 times. */
static int64_t skewed_plane_floats(int64_t plane) {
    int64_t lines = (plane + 15) / 16;
    return (lines | 1) * 16;
}

static void skewed_planes(const conv_job *job, float *dst, int64_t p0, int64_t p1) {
    int64_t plane = job->lat.fine_size;
    for (int64_t p = p0; p < p1; p++)
        memcpy(dst + p * job->channel_floats, job->x + p * plane, (size_t)plane * sizeof(float));
}

/* Whether the masked path reads a skewed copy of X: stride 1, and a GEMM that gains from it
 * (tc_sgemm_spread_rows_pay: AVX2, up to 2 row panels, i.e. 12 output channels a chunk). */
static bool masked_wants_skew(const conv_job *job) {
    return !job->flat_phases && tc_sgemm_spread_rows_pay(job->isa, job->chunk_rows);
}

/* The first input plane of unit u as `worker` reads it: X's, or its phase planes' (or X's
 * skewed copy). */
static uintptr_t masked_unit_base(const conv_job *job, const conv_unit *u, int worker) {
    if (!job->flat_phases && !job->skewed)
        return (uintptr_t)conv_unit_x(job, u);
    return (uintptr_t)(conv_worker_planes(job, worker) +
                       (u->n * job->c_in + u->g * job->cin_g) * job->channel_floats);
}

/* One (batch, group, column block, row chunk): B's rows and masks pointed at, then the GEMM into
 * Y and the epilogue. Column blocks start at multiples of 16 (TC_COL_BLOCK_GRANULE), so a
 * block's masks are whole words. */
static void conv_masked_task(void *vjob, int64_t task, int worker) {
    conv_job *job = vjob;
    const tc_lattice *lat = &job->lat;
    int64_t chunk = task % job->n_chunks, depth = job->cin_g * lat->kernel_size;
    conv_unit u = conv_unit_at(job, task / job->n_chunks);
    tc_conv_worker_scratch *ws = &job->scratch.workers[worker];
    const float **rows = job->b_rows + (size_t)worker * (size_t)depth;
    const uint16_t **masks = job->b_masks + (size_t)worker * (size_t)depth;
    int64_t plane = job->flat_phases || job->skewed ? job->channel_floats : lat->fine_size;
    conv_planes_ready(job, worker);
    if (rows_stale(job, &u, worker))
        tc_lattice_masked_rows(masked_unit_base(job, &u, worker), plane, job->cin_g,
                               lat->kernel_size, job->taps.shifts, job->taps.masks, job->mask_words,
                               rows, masks);
    tc_sgemm_op op = {.b_rows = rows,
                      .b_masks = masks,
                      .b_masks_full = job->taps.full,
                      .b_col0 = u.q0,
                      .b_rows_spread = job->skewed};
    conv_unit_gemm(job, &ws->gemm, &u, chunk, &op);
}

static tconv_status conv_run_masked(tc_kernel_ctx *ctx, conv_job *job, int threads, int workers) {
    const tc_lattice *lat = &job->lat;
    size_t depth = (size_t)(job->cin_g * lat->kernel_size);
    job->n_phases = 1;
    for (int i = 0; i < lat->rank; i++)
        job->n_phases *= lat->strides[i];
    job->flat_phases = job->n_phases > 1;
    job->skewed = masked_wants_skew(job);
    job->channel_floats =
        job->skewed ? skewed_plane_floats(lat->fine_size) : job->n_phases * lat->coarse_size;
    job->mask_words = (lat->coarse_size + 15) / 16;
    job->build_planes = job->flat_phases ? masked_phase_planes : job->skewed ? skewed_planes : NULL;
    tc_rt_tensor taps_scratch, memory;
    tconv_status st =
        tc_conv_tap_masks_for(ctx, &lat, 1, job->flat_phases, &job->taps, &taps_scratch);
    if (st != TCONV_OK)
        return st;
    size_t plane_bytes = conv_plane_bytes(job, workers);
    size_t pointer_bytes = (size_t)workers * depth * (sizeof(float *) + sizeof(uint16_t *));
    size_t key_bytes = (size_t)workers * sizeof(int64_t);
    st = tc_kernel_scratch(ctx, plane_bytes + pointer_bytes + key_bytes, &memory);
    if (st == TCONV_OK) {
        unsigned char *base = memory.data;
        job->padded_x = (const float *)(void *)base;
        job->b_rows = (const float **)(void *)(base + plane_bytes);
        job->b_masks = (const uint16_t **)(void *)(job->b_rows + (size_t)workers * depth);
        job->rows_unit = (int64_t *)(void *)(base + plane_bytes + pointer_bytes);
        conv_run_plane_tasks(ctx, job, threads, workers, conv_masked_task);
        tc_kernel_scratch_release(ctx, &memory);
    }
    tc_kernel_scratch_release(ctx, &taps_scratch);
    return st;
}

/* im2col + GEMM over (batch, group, column block, row chunk) tasks. */
static tconv_status conv_run_gemm(tc_kernel_ctx *ctx, conv_job *job) {
    conv_drop_dead_taps(&job->lat, &job->trim);
    int64_t depth = job->cin_g * job->lat.kernel_size;
    job->direct = tc_lattice_is_identity(&job->lat);
    conv_choose_columns(job);
    double work =
        tc_conv_gemm_work(job->batch * job->group, job->cout_g, depth, job->lat.coarse_size);
    int threads = tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, work);
    if (conv_wants_narrow(job))
        return conv_run_narrow(ctx, job, threads);
    conv_plan(job, threads);
    int64_t n_units = job->batch * job->group * job->n_blocks;
    bool shared = !job->wide && !job->masked && job->n_chunks > 1;
    int workers = shared ? threads : tc_parallel_workers(threads, n_units * job->n_chunks);
    tc_rt_tensor packed;
    tconv_status st = conv_pack_weights(ctx, job, &packed);
    if (st != TCONV_OK)
        return st;
    /* col per worker: the wide path's C block, or an im2col block (the shared path has one
     * block for all workers, conv_run_shared_units) */
    int64_t col_floats = job->wide                              ? job->chunk_rows * job->block_cols
                         : job->direct || shared || job->masked ? 0
                                                                : depth * job->block_cols;
    st = tc_conv_scratch_reserve(ctx, &job->scratch, workers, col_floats, job->isa, job->chunk_rows,
                                 job->block_cols, depth);
    if (st == TCONV_OK) {
        if (job->masked)
            st = conv_run_masked(ctx, job, threads, workers);
        else if (job->wide)
            st = conv_run_wide(ctx, job, threads, workers);
        else if (shared)
            st = conv_run_shared_units(ctx, job, threads);
        else
            tc_parallel_for(ctx->pool, workers, n_units, conv_unit_task, job);
        tc_conv_scratch_release(ctx, &job->scratch);
    }
    tc_kernel_scratch_release(ctx, &packed);
    return st;
}

/* ---- depthwise (one input channel per group): direct, y += w_tap * shifted x per tap */

/* y[j] += w * x[j * stride] */
static void axpy_strided(float *restrict y, const float *restrict x, float w, int64_t count,
                         int64_t stride) {
    int64_t j = 0;
    if (stride != 1) {
        for (; j < count; j++)
            y[j] += w * x[j * stride];
        return;
    }
#if TC_HAVE_VECTOR_EXT
    tc_v4f vw = {w, w, w, w};
    for (; j + 4 <= count; j += 4)
        tc_v4f_store(y + j, tc_v4f_load(y + j) + vw * tc_v4f_load(x + j));
#endif
    for (; j < count; j++)
        y[j] += w * x[j];
}

typedef struct depthwise_plane {
    const tc_lattice *lat;
    const float *x; /* the input plane */
    const float *w; /* kernel_size taps */
    float *y;       /* the output plane */
} depthwise_plane;

static void depthwise_run(void *ctx, const tc_coarse_run *run) {
    const depthwise_plane *p = ctx;
    const tc_lattice *lat = p->lat;
    int64_t stride = lat->strides[lat->rank - 1];
    int64_t tap[TC_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < lat->kernel_size; t++, tc_lattice_next_tap(lat, tap)) {
        tc_mapped_tap m;
        tc_lattice_map_tap(lat, run, tap, &m);
        if (m.valid)
            axpy_strided(p->y + run->col + m.lo, p->x + m.start, p->w[t], m.hi - m.lo, stride);
    }
}

/* One (batch, output channel) plane. */
static void depthwise_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    const conv_job *job = vjob;
    const tc_lattice *lat = &job->lat;
    int64_t co = task % job->c_out, n = task / job->c_out;
    float *y = job->y + task * lat->coarse_size;
    tc_floats_fill(y, lat->coarse_size, job->bias ? job->bias[co] : 0.0f);
    if (job->cin_g > 0) { /* else X and W have no data to offset: Y is the bias */
        depthwise_plane plane = {lat, job->x + (n * job->c_in + co / job->cout_g) * lat->fine_size,
                                 job->w + co * lat->kernel_size, y};
        tc_lattice_for_each_run(lat, 0, lat->coarse_size, depthwise_run, &plane);
    }
    if (job->residual) /* the bias is in y already */
        residual_sum(y, y, NULL, 0.0f, job->residual + task * lat->coarse_size, lat->coarse_size);
    if (job->act)
        tc_kernel_activation_apply(job->act, y, y, lat->coarse_size);
}

static tconv_status conv_run_depthwise(tc_kernel_ctx *ctx, conv_job *job) {
    double flops = 2.0 * (double)job->batch * (double)job->c_out * (double)job->lat.kernel_size *
                   (double)job->lat.coarse_size;
    int threads = tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, flops);
    int64_t n_tasks = job->batch * job->c_out;
    tc_parallel_for(ctx->pool, tc_parallel_workers(threads, n_tasks), n_tasks, depthwise_task, job);
    return TCONV_OK;
}

/* The fused residual Add's other input is not float32 of Y's shape: the model's declared
 * shapes or types, from which the plan fused it, do not hold for this run. */
static tconv_status residual_mismatch(tc_kernel_ctx *ctx, const tc_rt_tensor *y) {
    char have[96], want[96];
    return tc_error_set(
        ctx->err, TCONV_ERR_INVALID,
        "the Add after this Conv adds a %s tensor of shape %s to its output of shape %s: the "
        "model declared both as one float32 shape",
        tconv_dtype_name(ctx->residual->dtype),
        tc_shape_format(ctx->residual->rank, ctx->residual->dims, have, sizeof have),
        tc_shape_format(y->rank, y->dims, want, sizeof want));
}

/* The run: ctx->params is the tc_rank_attrs of tc_prepare_conv; no IR. */
static tconv_status run_conv(tc_kernel_ctx *ctx) {
    tc_conv_operands ops = {0}; /* tc_conv_read_operands may fail before filling it */
    const void *read = NULL;
    conv_job job = {0};
    tconv_status st = tc_conv_read_operands(ctx, &ops);
    if (st == TCONV_OK)
        st = tc_rank_attrs_get(ctx, ctx->params, ops.spatial_rank, &read);
    const conv_attrs *a = read;
    if (st == TCONV_OK)
        st = conv_geometry(ctx, &ops, a, &job.lat);
    if (st == TCONV_OK)
        st = tc_conv_check_bias(ctx, ops.b, ops.w->dims[0]);
    if (st != TCONV_OK)
        return st;
    job.batch = ops.x->dims[0];
    job.c_in = ops.x->dims[1];
    job.c_out = ops.w->dims[0];
    job.group = a->group;
    job.cin_g = job.c_in / job.group;
    job.cout_g = job.c_out / job.group;
    int64_t y_dims[TC_MAX_RANK] = {job.batch, job.c_out};
    memcpy(y_dims + 2, job.lat.coarse, (size_t)job.lat.rank * sizeof(int64_t));
    tc_rt_tensor *y;
    /* float32: every path writes all of Y (the GEMM all of C, the wide path every kept position,
     * depthwise fills first); the float64 loop accumulates into zeros */
    st = ops.x->dtype == TCONV_DTYPE_FLOAT
             ? tc_kernel_alloc_output_uninit(ctx, 0, ops.x->dtype, ops.x->rank, y_dims, &y)
             : tc_kernel_alloc_output(ctx, 0, ops.x->dtype, ops.x->rank, y_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    if (ctx->residual &&
        (ctx->residual->dtype != TCONV_DTYPE_FLOAT || !tc_rt_same_shape(ctx->residual, y)))
        return residual_mismatch(ctx, y);
    if (ops.x->dtype == TCONV_DTYPE_DOUBLE) {
        if (ctx->activation) /* the plan fuses only into outputs declared float32 */
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "a fused activation needs a float32 output, X is float64");
        tc_rt_tensor map;
        if ((st = tc_f64_index_map(ctx, &job.lat, &map)) != TCONV_OK)
            return st;
        tc_conv_f64(&job.lat, map.data, job.batch, job.c_in, job.c_out, job.group, ops.x->data,
                    ops.w->data, ops.b ? ops.b->data : NULL, y->data);
        tc_kernel_scratch_release(ctx, &map);
        return TCONV_OK;
    }
    job.x = ops.x->data;
    job.w = ops.w->data;
    job.bias = ops.b ? ops.b->data : NULL;
    job.y = y->data;
    job.act = ctx->activation;
    job.residual = ctx->residual ? ctx->residual->data : NULL;
    /* no input channels: nothing is summed, and the depthwise planes are bias-filled first */
    if ((job.group > 1 && job.cin_g == 1) || job.cin_g == 0)
        return conv_run_depthwise(ctx, &job);
    return conv_run_gemm(ctx, &job);
}

static bool conv_work(const void *params, const tc_work_shapes *w, uint64_t *out) {
    (void)params;
    return tc_work_conv(NULL, w, out);
}

tconv_status tc_prepare_conv(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    tconv_status st =
        tc_conv_prepare(pc, read_conv_attrs, sizeof(conv_attrs), run_conv, conv_work, out);
    out->epilogues = TC_EPILOGUE_ACTIVATION | TC_EPILOGUE_FOLDED_BN | TC_EPILOGUE_RESIDUAL;
    return st;
}
