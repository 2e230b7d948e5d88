/* Operands, scratch and kept packed weights of the convolution kernels (conv_common.h). */
#include "runtime/kernels/conv_common.h"

#include <string.h>

#include "ir/check.h"
#include "ir/conv_transpose_geometry.h"
#include "runtime/kernels/conv_lattice.h"
#include "runtime/kernels/kernel_util.h"

void tc_conv_scratch_release(tc_kernel_ctx *ctx, tc_conv_scratch *s) {
    tc_kernel_scratch_release(ctx, &s->memory);
}

tconv_status tc_conv_scratch_reserve(tc_kernel_ctx *ctx, tc_conv_scratch *s, int n_workers,
                                     int64_t col_floats, tc_gemm_isa isa, int64_t m, int64_t n,
                                     int64_t k) {
    size_t gemm_floats = tc_gemm_workspace_floats(isa, m, n, k);
    /* each worker's piece on a cache line: its col block may hold pointers and offsets */
    size_t per_worker = ((size_t)col_floats + gemm_floats + 15) / 16 * 16;
    size_t head = ((size_t)n_workers * sizeof(tc_conv_worker_scratch) + 63) / 64 * 64;
    tconv_status st =
        tc_kernel_scratch(ctx, head + (size_t)n_workers * per_worker * sizeof(float), &s->memory);
    if (st != TCONV_OK)
        return st;
    s->workers = s->memory.data;
    for (int i = 0; i < n_workers; i++) {
        tc_conv_worker_scratch *w = &s->workers[i];
        float *base = (float *)(void *)((char *)s->memory.data + head) + (size_t)i * per_worker;
        w->col = col_floats > 0 ? base : NULL;
        tc_gemm_workspace_init(&w->gemm, isa);
        tc_gemm_workspace_lend(&w->gemm, base + col_floats, gemm_floats);
    }
    return TCONV_OK;
}

tconv_status tc_conv_packed_weights(tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                                    size_t bytes, float **out, bool *fresh, tc_rt_tensor *scratch) {
    memset(scratch, 0, sizeof *scratch);
    *fresh = true;
    if (tc_kernel_input_is_constant(ctx, 1)) {
        *out = tc_kernel_cache_find(ctx, key, bytes);
        if (*out) {
            *fresh = false;
            return TCONV_OK;
        }
        void *data;
        tconv_status st = tc_kernel_cache_store(ctx, key, bytes, &data);
        *out = data;
        return st;
    }
    tconv_status st = tc_kernel_scratch(ctx, bytes, scratch);
    *out = scratch->data;
    return st;
}

/* Bytes of one lattice's tap tables (shifts, masks, summary), a multiple of 8. */
static size_t tap_mask_bytes(const tc_lattice *lat) {
    int64_t taps = lat->kernel_size, words = (lat->coarse_size + 15) / 16;
    return (size_t)taps * sizeof(int64_t) +
           (size_t)tc_round_up_i64(taps * words * (int64_t)sizeof(uint16_t) + words, 8);
}

/* A lattice's geometry as values (what its tables are made from); returns how many. */
#define LATTICE_GEOMETRY_VALUES (1 + 6 * TC_MAX_SPATIAL)
static size_t lattice_geometry(const tc_lattice *lat, int64_t *v) {
    size_t n = 0;
    v[n++] = lat->rank;
    const int64_t *axes[] = {lat->coarse,  lat->fine,      lat->kernel,
                             lat->strides, lat->dilations, lat->pad_begin};
    for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++)
        for (int i = 0; i < lat->rank; i++)
            v[n++] = axes[a][i];
    return n;
}

tconv_status tc_conv_lattice_table(tc_kernel_ctx *ctx, int64_t kind, const tc_lattice *const *lats,
                                   int n, size_t nbytes, void **data, bool *fresh,
                                   tc_rt_tensor *scratch) {
    TC_ASSERT(n >= 1 && n <= TC_CONV_TABLE_LATTICES);
    memset(scratch, 0, sizeof *scratch);
    int64_t made_for[2 + TC_CONV_TABLE_LATTICES * LATTICE_GEOMETRY_VALUES];
    size_t values = 0;
    made_for[values++] = kind;
    made_for[values++] = n;
    for (int k = 0; k < n; k++)
        values += lattice_geometry(lats[k], made_for + values);
    tconv_status st = TCONV_OK;
    *data = NULL;
    *fresh = true;
    if (nbytes <= TC_CONV_TABLE_KEEP_MAX_BYTES)
        st = tc_kernel_shape_table(ctx, made_for, values, nbytes, data, fresh);
    if (st == TCONV_OK && !*data) { /* outside a session, or too large to keep */
        st = tc_kernel_scratch(ctx, nbytes, scratch);
        *data = scratch->data;
    }
    return st;
}

tconv_status tc_conv_tap_masks_for(tc_kernel_ctx *ctx, const tc_lattice *const *lats, int n,
                                   bool phase_planes, tc_conv_tap_masks *out,
                                   tc_rt_tensor *scratch) {
    size_t bytes = 0;
    for (int k = 0; k < n; k++)
        bytes += tap_mask_bytes(lats[k]);
    void *data;
    bool fresh;
    tconv_status st = tc_conv_lattice_table(ctx, TC_CONV_TABLE_TAP_MASKS + phase_planes, lats, n,
                                            bytes, &data, &fresh, scratch);
    if (st != TCONV_OK)
        return st;
    unsigned char *at = data;
    for (int k = 0; k < n; k++) {
        int64_t taps = lats[k]->kernel_size;
        out[k].shifts = (int64_t *)(void *)at;
        out[k].masks = (uint16_t *)(void *)(at + taps * (int64_t)sizeof(int64_t));
        out[k].full = (uint8_t *)(out[k].masks + taps * ((lats[k]->coarse_size + 15) / 16));
        if (fresh)
            tc_lattice_masked_taps(lats[k], phase_planes, out[k].shifts, out[k].masks, out[k].full);
        at += tap_mask_bytes(lats[k]);
    }
    return TCONV_OK;
}

tconv_status tc_conv_read_operands(tc_kernel_ctx *ctx, tc_conv_operands *ops) {
    tconv_status st;
    if ((st = tc_kernel_require_input(ctx, 0, &ops->x)) ||
        (st = tc_kernel_require_input(ctx, 1, &ops->w)) ||
        (st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE)))
        return st;
    ops->b = tc_kernel_input(ctx, 2);
    /* W and B: X's type (float16/bfloat16 arrive widened to float, see session_half.c) */
    uint32_t same = TC_DTYPE_BIT(ops->x->dtype);
    if ((st = tc_kernel_check_dtype(ctx, 1, same)) || (st = tc_kernel_check_dtype(ctx, 2, same)))
        return st;
    if (ops->x->rank < 3 || ops->x->rank - 2 > TC_MAX_SPATIAL)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "X has rank %d; 3 to %d (N, C and 1 to %d spatial axes) are "
                            "supported",
                            ops->x->rank, TC_MAX_SPATIAL + 2, TC_MAX_SPATIAL);
    if (ops->w->rank != ops->x->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "W has rank %d but X has rank %d",
                            ops->w->rank, ops->x->rank);
    ops->spatial_rank = ops->x->rank - 2;
    return TCONV_OK;
}

tconv_status tc_conv_check_bias(tc_kernel_ctx *ctx, const tc_rt_tensor *b, int64_t c_out) {
    if (b && (b->rank != 1 || b->dims[0] != c_out))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "B must be 1-D with %lld elements (the output channels), has "
                            "rank %d and %lld elements",
                            (long long)c_out, b->rank, (long long)b->n_elements);
    return TCONV_OK;
}

/* The only spatial rank a run can meet when W is an initializer no run overrides: the run
 * checks X's rank against W's before it asks for the attributes. 0: any. */
static int fixed_spatial_rank(const tconv_node *node) {
    const tconv_value *w = node->n_inputs > 1 ? node->inputs[1] : NULL;
    if (!w || !w->initializer || w->is_graph_input)
        return 0;
    int rank = w->initializer->rank - 2;
    return rank >= 1 && rank <= TC_MAX_SPATIAL ? rank : 0;
}

tconv_status tc_conv_prepare(const tc_kernel_prepare_ctx *pc, tc_rank_attr_reader read, size_t size,
                             tc_kernel_fn run, tc_kernel_work_fn work,
                             tc_kernel_prepared *prepared) {
    tc_rank_attrs *attrs = tc_kernel_params_alloc(pc, sizeof *attrs);
    if (!attrs)
        return TCONV_ERR_NOMEM;
    *prepared = (tc_kernel_prepared){.run = run, .params = attrs, .work = work};
    return tc_rank_attrs_read(pc, read, size, fixed_spatial_rank(pc->node), attrs);
}

double tc_conv_gemm_work(int64_t units, int64_t rows, int64_t depth, int64_t columns) {
    return 2.0 * (double)units * (double)tc_round_up_i64(rows, 8) * (double)(depth + 8) *
           (double)columns;
}

/* ---------------------------------------------------------------- the split over threads */

static int64_t gcd_i64(int64_t a, int64_t b) {
    while (b != 0) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* What streaming a task's B costs beside its multiply-adds, in rows of A: each task reads its
 * block's B whatever its rows, so a row chunk reads it again (from the core that wrote it, half
 * of the time). Without it, erfnet's 16-channel Convs over 1024 columns split into two 8-row
 * chunks (1.08x on 2 threads in the model; two column blocks: 1.4x) and its 32->32 stride-2
 * Conv over 64 columns and 288 rows of B into two 16-row chunks (15.6-18.8 us; two blocks of
 * 32: 11.5-13.8). */
#define SPLIT_B_ROWS 8

/* The columns a block steps by: a B read by row pointers computes a partial panel a 16-column
 * vector at a time, a packed one whole tiles. */
static int64_t split_step(tc_gemm_isa isa, bool b_rows) {
    return b_rows ? 16 : tc_sgemm_col_tile(isa);
}

/* The busiest thread's cost when `outer` units are split into blocks of `width_steps` steps
 * (the last block shorter) and `chunks` row chunks, tasks dealt evenly: its columns (to the
 * step) times its rows (padded to the kernel's row tile) and B's stream. */
static tc_conv_split split_cost(tc_gemm_isa isa, bool b_rows, int64_t rows, int64_t total,
                                int64_t outer, int64_t width_steps, int64_t chunks, int threads) {
    int64_t mr = tc_sgemm_row_tile(isa), step = split_step(isa, b_rows);
    tc_conv_split s = {.isa = isa, .chunks = chunks};
    s.block_cols = tc_min_i64(width_steps * step, total);
    s.n_blocks = (total + s.block_cols - 1) / s.block_cols;
    int64_t chunk_rows = tc_round_up_i64((rows + chunks - 1) / chunks, mr);
    int64_t tasks = outer * s.n_blocks * chunks, per_thread = (tasks + threads - 1) / threads;
    s.area = per_thread * tc_round_up_i64(s.block_cols, step) * (chunk_rows + SPLIT_B_ROWS);
    return s;
}

tc_conv_split tc_conv_parallel_split(int64_t rows, int64_t columns, int64_t outer, int64_t cap,
                                     bool b_rows, int threads) {
    int64_t total = tc_max_i64(columns, 1);
    int64_t want = (int64_t)threads * TC_CONV_TASKS_PER_THREAD;
    int64_t min_blocks = (total + cap - 1) / tc_max_i64(cap, 1);
    tc_gemm_isa shapes[2];
    int n_shapes = tc_gemm_isa_shapes(shapes);
    tc_conv_split best = {.area = -1};
    for (int i = 0; i < n_shapes; i++) {
        int64_t step = split_step(shapes[i], b_rows), steps = (total + step - 1) / step;
        int64_t min_steps = tc_max_i64(1, TC_CONV_MIN_PARALLEL_COLS / step);
        int64_t max_blocks = tc_min_i64((want + outer - 1) / outer, steps / min_steps);
        for (int64_t blocks = min_blocks; blocks <= tc_max_i64(min_blocks, max_blocks); blocks++) {
            int64_t width_steps = (steps + blocks - 1) / blocks;
            int64_t units = outer * ((steps + width_steps - 1) / width_steps);
            int64_t chunks = units < threads ? threads / gcd_i64(units, threads) : 1;
            tc_conv_split s =
                split_cost(shapes[i], b_rows, rows, total, outer, width_steps, chunks, threads);
            if (best.area < 0 || s.area < best.area ||
                (s.area == best.area && s.chunks < best.chunks))
                best = s;
        }
    }
    return best;
}
