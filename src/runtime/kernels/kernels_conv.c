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
/* With threads, Conv aims at this many tasks a thread (dynamic scheduling evens them out) and
 * narrows its column blocks down to this width for them. */
#define CONV_TASKS_PER_THREAD 4
#define CONV_MIN_PARALLEL_COLS 64
/* Phase planes smaller than this (floats, all channels) are built by the calling thread: a copy
 * that short costs less than handing it to the pool. */
#define CONV_MIN_PARALLEL_PLANE_FLOATS (1 << 15)

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

typedef struct conv_job {
    tc_lattice lat; /* coarse: Y spatial, fine: X spatial */
    int64_t batch, c_in, c_out, group, cin_g, cout_g;
    int64_t block_cols, n_blocks;
    int64_t chunk_rows, n_chunks; /* output channels of a group, split for threads */
    tc_gemm_isa isa;              /* the GEMM kernel, for the channels and a block's columns */
    bool direct;                  /* 1x1 identity mapping: the GEMM reads X */
    const float *x, *w, *bias;
    float *y;
    const tc_kernel_activation *act; /* fused by the executor: applied to each finished block */
    float *packed_w; /* W of every (group, row chunk), packed once for all column blocks */
    size_t packed_chunk_floats;
    tc_conv_scratch scratch;
    int64_t columns; /* GEMM columns of one (batch, group): output positions, or wide ones */
    /* Stride-1 Conv without im2col (conv_run_wide): the zero-padded input, each tap's offset
     * in a padded plane, and every worker's B row pointers. */
    bool wide;
    int64_t padded[TC_MAX_SPATIAL]; /* phase plane dims: out + (kernel - 1) * dilation / stride */
    int64_t padded_size;            /* floats of one phase plane */
    int64_t n_phases;               /* product of the strides */
    int64_t channel_floats;         /* n_phases * padded_size: one input channel's planes */
    const float *padded_x;
    const int64_t *tap_offsets;
    const float **b_rows; /* depth pointers per worker */
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

/* Y_g[chunk rows, block] = W_g[chunk rows, :] x col + bias, col being the unit's im2col block
 * (ignored for a direct 1x1 Conv, whose GEMM reads X). */
static void conv_unit_rows(const conv_job *job, tc_gemm_workspace *gemm, const conv_unit *u,
                           int64_t chunk, const float *col) {
    const tc_lattice *lat = &job->lat;
    int64_t row0 = u->g * job->cout_g + chunk * job->chunk_rows;
    float *y = job->y + (u->n * job->c_out + row0) * lat->coarse_size + u->q0;
    tc_sgemm_op op = {.m = conv_chunk_rows_at(job, chunk),
                      .n = u->cols,
                      .k = job->cin_g * lat->kernel_size,
                      .alpha = 1.0f,
                      .b = job->direct ? conv_unit_x(job, u) + u->q0 : col,
                      .ldb = job->direct ? lat->fine_size : u->cols,
                      .c = y,
                      .ldc = lat->coarse_size};
    const float *packed =
        job->packed_w + (size_t)(u->g * job->n_chunks + chunk) * job->packed_chunk_floats;
    tc_sgemm_run_packed(gemm, packed, &op);
    for (int64_t c = 0; c < op.m && (job->bias || job->act); c++) {
        float *row = y + c * lat->coarse_size;
        if (job->bias) {
            float b = job->bias[row0 + c];
            for (int64_t j = 0; j < u->cols; j++)
                row[j] += b;
        }
        if (job->act)
            tc_kernel_activation_apply(job->act, row, row, u->cols);
    }
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
    int64_t tasks = tc_min_i64(job->cin_g, (int64_t)threads * CONV_TASKS_PER_THREAD);
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

/* W_g's row chunks (chunk_rows x cin_g*K) of every group, packed for the GEMM (kept across
 * runs when W is a constant, else in `packed`, session scratch). */
static tconv_status conv_pack_weights(tc_kernel_ctx *ctx, conv_job *job, tc_rt_tensor *packed) {
    int64_t depth = job->cin_g * job->lat.kernel_size;
    job->packed_chunk_floats = tc_sgemm_packed_a_floats(job->isa, job->chunk_rows, depth);
    size_t slots = (size_t)(job->group * job->n_chunks);
    tc_kernel_cache_key key = {
        .source = job->w, .layout = {job->chunk_rows, job->n_chunks, job->group, depth, job->isa}};
    bool fresh;
    tconv_status st =
        tc_conv_packed_weights(ctx, &key, slots * job->packed_chunk_floats * sizeof(float),
                               &job->packed_w, &fresh, packed);
    if (st != TCONV_OK || !fresh)
        return st;
    for (int64_t g = 0; g < job->group; g++) {
        for (int64_t chunk = 0; chunk < job->n_chunks; chunk++) {
            int64_t row0 = g * job->cout_g + chunk * job->chunk_rows;
            tc_sgemm_pack_a(job->isa, false, conv_chunk_rows_at(job, chunk), depth,
                            job->w + row0 * depth, depth,
                            job->packed_w +
                                (size_t)(g * job->n_chunks + chunk) * job->packed_chunk_floats);
        }
    }
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

static int64_t gcd_i64(int64_t a, int64_t b) {
    while (b != 0) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Column blocks and output-channel chunks. One thread: blocks of about
 * TC_COL_BLOCK_TARGET_FLOATS of im2col. More threads: CONV_TASKS_PER_THREAD tasks a thread when
 * the work allows, by narrower column blocks (not below CONV_MIN_PARALLEL_COLS); when there are
 * fewer, the output channels are split too, in multiples of the GEMM's row tile. Equal parts, so no
 * worker waits on a long one. */
static void conv_plan(conv_job *job, int threads) {
    int64_t depth = job->cin_g * job->lat.kernel_size, total = job->columns;
    int64_t outer = job->batch * job->group;
    int64_t cols = tc_conv_block_columns(depth, total, CONV_MIN_BLOCK_COLS);
    int64_t blocks = (total + cols - 1) / tc_max_i64(cols, 1);
    int64_t want = (int64_t)threads * CONV_TASKS_PER_THREAD;
    if (threads > 1 && outer * blocks < want)
        blocks = tc_max_i64(blocks,
                            tc_min_i64((want + outer - 1) / outer, total / CONV_MIN_PARALLEL_COLS));
    job->block_cols = split_evenly(total, blocks, TC_COL_BLOCK_GRANULE, &job->n_blocks);
    /* Few units: split the output channels into as few chunks as make the task count a
     * multiple of the thread count (each chunk packs its B again). */
    int64_t units = outer * job->n_blocks, chunks = 1;
    if (threads > 1 && units < want)
        chunks = threads / gcd_i64(units, threads);
    job->isa = tc_gemm_isa_for_shape(job->cout_g, job->block_cols);
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

/* Chooses the wide path (wide_setup's fields set) or im2col, and the GEMM's columns per
 * (batch, group): wide when not a plain 1x1 (direct) and the dropped positions cost at most
 * half of the useful ones. */
static void conv_choose_columns(conv_job *job) {
    int64_t out = job->lat.coarse_size;
    int64_t length = job->direct ? 0 : wide_setup(job);
    job->wide = !job->direct && length <= out + out / 2;
    job->columns = job->wide ? length : out;
}

/* Phase plane `phase` (row-major over the strides) of one input plane: P_a[u] = x[s*u + a -
 * pad_begin] per axis, zero outside X. */
static void phase_plane(const conv_job *job, const float *src, int64_t phase, float *dst) {
    const tc_lattice *lat = &job->lat;
    int last = lat->rank - 1;
    int64_t a[TC_MAX_SPATIAL];
    for (int i = last; i >= 0; i--) {
        a[i] = phase % lat->strides[i];
        phase /= lat->strides[i];
    }
    int64_t width = job->padded[last], x_width = lat->fine[last], s = lat->strides[last];
    int64_t first = a[last] - lat->pad_begin[last]; /* X position of u = 0 */
    int64_t lo = tc_min_i64(tc_max_i64(tc_ceil_div(-first, s), 0), width);
    int64_t hi = tc_min_i64(tc_max_i64(tc_ceil_div(x_width - first, s), lo), width);
    for (int64_t line = 0; line < job->padded_size / width; line++) {
        float *d = dst + line * width;
        int64_t rem = line, src_line = 0, scale = 1;
        bool inside = true;
        for (int i = last - 1; i >= 0; i--) {
            int64_t v = (rem % job->padded[i]) * lat->strides[i] + a[i] - lat->pad_begin[i];
            rem /= job->padded[i];
            inside = inside && v >= 0 && v < lat->fine[i];
            src_line += v * scale;
            scale *= lat->fine[i];
        }
        if (!inside) {
            tc_floats_zero(d, width);
            continue;
        }
        tc_floats_zero(d, lo);
        if (hi > lo)
            tc_floats_gather(d + lo, src + src_line * x_width + first + lo * s, hi - lo, s);
        tc_floats_zero(d + hi, width - hi);
    }
}

static void phase_planes_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    conv_job *job = vjob;
    float *dst = (float *)job->padded_x + task * job->channel_floats;
    for (int64_t phase = 0; phase < job->n_phases; phase++)
        phase_plane(job, job->x + task * job->lat.fine_size, phase, dst + phase * job->padded_size);
}

/* y[i] = src[i] + b */
static void copy_plus(float *restrict y, const float *restrict src, int64_t count, float b) {
    for (int64_t i = 0; i < count; i++)
        y[i] = src[i] + b;
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
            float b = job->bias ? job->bias[row0 + r] : 0.0f;
            if (job->act)
                tc_kernel_activation_apply_plus(job->act, dst, src, b, keep);
            else
                copy_plus(dst, src, keep, b);
        }
        j += run;
    }
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
    const float *xp =
        job->padded_x + (u.n * job->c_in + u.g * job->cin_g) * job->channel_floats + u.q0;
    for (int64_t c = 0; c < job->cin_g; c++) {
        for (int64_t t = 0; t < lat->kernel_size; t++)
            rows[c * lat->kernel_size + t] = xp + c * job->channel_floats + job->tap_offsets[t];
    }
    int64_t row0 = u.g * job->cout_g + chunk * job->chunk_rows;
    tc_sgemm_op op = {.m = conv_chunk_rows_at(job, chunk),
                      .n = u.cols,
                      .k = depth,
                      .alpha = 1.0f,
                      .b_rows = rows,
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

/* The phase planes (X itself at stride 1 without pads), the tap offsets and the row pointers,
 * in one scratch piece; then the tasks. */
static tconv_status conv_run_wide(tc_kernel_ctx *ctx, conv_job *job, int threads, int workers) {
    const tc_lattice *lat = &job->lat;
    /* X itself serves only at stride 1 without pads (a strided X may have the planes' size) */
    bool padded = job->n_phases > 1 || job->padded_size != lat->fine_size;
    int64_t planes = job->batch * job->c_in;
    size_t depth = (size_t)(job->cin_g * lat->kernel_size);
    /* the offsets and pointers that follow the floats want 8-byte alignment */
    size_t x_bytes =
        padded ? ((size_t)(planes * job->channel_floats) * sizeof(float) + 63) / 64 * 64 : 0;
    size_t offset_bytes = (size_t)lat->kernel_size * sizeof(int64_t);
    size_t rows_bytes = (size_t)workers * depth * sizeof(float *);
    tc_rt_tensor memory;
    tconv_status st = tc_kernel_scratch(ctx, x_bytes + offset_bytes + rows_bytes, &memory);
    if (st != TCONV_OK)
        return st;
    unsigned char *base = memory.data;
    int64_t *offsets = (int64_t *)(void *)(base + x_bytes);
    job->b_rows = (const float **)(void *)(base + x_bytes + offset_bytes);
    job->tap_offsets = offsets;
    wide_tap_offsets(job, offsets);
    job->padded_x = job->x;
    if (padded) {
        job->padded_x = (const float *)(void *)base;
        int plane_threads =
            planes * job->channel_floats >= CONV_MIN_PARALLEL_PLANE_FLOATS ? threads : 1;
        tc_parallel_for(ctx->pool, tc_parallel_workers(plane_threads, planes), planes,
                        phase_planes_task, job);
    }
    int64_t n_tasks = job->batch * job->group * job->n_blocks * job->n_chunks;
    tc_parallel_for(ctx->pool, workers, n_tasks, conv_wide_task, job);
    tc_kernel_scratch_release(ctx, &memory);
    return TCONV_OK;
}

/* im2col + GEMM over (batch, group, column block, row chunk) tasks. */
static tconv_status conv_run_gemm(tc_kernel_ctx *ctx, conv_job *job) {
    int64_t depth = job->cin_g * job->lat.kernel_size;
    job->direct = tc_lattice_is_identity(&job->lat);
    double flops = 2.0 * (double)job->batch * (double)job->c_out * (double)depth *
                   (double)job->lat.coarse_size;
    int threads = tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, flops);
    conv_choose_columns(job);
    conv_plan(job, threads);
    int64_t n_units = job->batch * job->group * job->n_blocks;
    bool shared = !job->wide && job->n_chunks > 1;
    int workers = shared ? threads : tc_parallel_workers(threads, n_units * job->n_chunks);
    tc_rt_tensor packed;
    tconv_status st = conv_pack_weights(ctx, job, &packed);
    if (st != TCONV_OK)
        return st;
    /* col per worker: the wide path's C block, or an im2col block (the shared path has one
     * block for all workers, conv_run_shared_units) */
    int64_t col_floats = job->wide               ? job->chunk_rows * job->block_cols
                         : job->direct || shared ? 0
                                                 : depth * job->block_cols;
    st = tc_conv_scratch_reserve(ctx, &job->scratch, workers, col_floats, job->isa, job->chunk_rows,
                                 job->block_cols, depth);
    if (st == TCONV_OK) {
        if (job->wide)
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
    depthwise_plane plane = {lat, job->x + (n * job->c_in + co / job->cout_g) * lat->fine_size,
                             job->w + co * lat->kernel_size, y};
    tc_lattice_for_each_run(lat, 0, lat->coarse_size, depthwise_run, &plane);
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
    if (job.group > 1 && job.cin_g == 1)
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
    out->epilogues = TC_EPILOGUE_ACTIVATION | TC_EPILOGUE_FOLDED_BN;
    return st;
}
