/* ConvTranspose and Conv over float32, built on the packed GEMM.
 *
 * Both ops relate a "coarse" grid and a "fine" grid through kernel taps: fine = coarse * stride
 * + tap * dilation - pad_begin. For ConvTranspose the coarse grid is X and the fine grid is Y;
 * for Conv the coarse grid is Y and the fine grid is X. So one index mapping serves:
 *
 *   ConvTranspose: col = W_g^T x X_g (GEMM), then col2im adds each column into Y (skipping
 *                  fine positions outside [0, out): pads crop directly, and positions past the
 *                  full output F just keep the bias they were initialised with).
 *   Conv:          im2col gathers X into col (zeros outside the input), then Y_g = W_g x col.
 *
 * The coarse positions are processed in column blocks so that col stays in cache, and the work
 * is split over (batch, group, output-channel chunk) for ConvTranspose and (batch, group, column
 * block) for Conv: tasks write disjoint parts of Y, so no locking is needed. */
#include <stdlib.h>
#include <string.h>

#include "ir/conv_transpose_geometry.h"
#include "runtime/gemm.h"
#include "runtime/kernel.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"
#include "runtime/spatial_attrs.h"

/* Floats of im2col/col2im scratch per column block (about 256 KiB: L2-resident). */
#define COL_BLOCK_TARGET_FLOATS (64 * 1024)
/* Column blocks are multiples of this (of every GEMM micro-tile width: 32 and 48). */
#define COL_BLOCK_GRANULE 96
/* Conv streams all of the packed W_g once per column block, so its blocks must be wide enough
 * to amortise that. */
#define CONV_MIN_BLOCK_COLS 288
/* With threads, Conv aims at this many tasks a thread (dynamic scheduling evens them out) and
 * narrows its column blocks down to this width for them. */
#define CONV_TASKS_PER_THREAD 4
#define CONV_MIN_PARALLEL_COLS 64

/* ---------------------------------------------------------------- index mapping */

typedef struct lattice {
    int rank;
    int64_t coarse[TCONV_MAX_SPATIAL];
    int64_t fine[TCONV_MAX_SPATIAL];
    int64_t kernel[TCONV_MAX_SPATIAL];
    int64_t strides[TCONV_MAX_SPATIAL];
    int64_t dilations[TCONV_MAX_SPATIAL];
    int64_t pad_begin[TCONV_MAX_SPATIAL];
    /* Fine positions that take values: [window_lo, window_hi) per axis, within [0, fine) (the
     * whole grid unless a fused Slice/Pad narrows it; lattice_finish sets the default). */
    int64_t window_lo[TCONV_MAX_SPATIAL], window_hi[TCONV_MAX_SPATIAL];
    bool windowed;
    int64_t coarse_size, fine_size, kernel_size; /* products over the axes */
} lattice;

/* Floor and ceiling division by a positive b (inlined: they run per column run). */
static inline int64_t floor_div_pos(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static inline int64_t ceil_div_i64(int64_t a, int64_t b) {
    return -floor_div_pos(-a, b);
}

static int64_t max_i64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

static int64_t min_i64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* A run of coarse positions along the last axis: `length` columns starting at column `col` of
 * the block, at last-axis index u0 of the line whose other coordinates are `outer`. */
typedef struct coarse_run {
    int64_t col;
    int64_t length;
    int64_t u0;
    int64_t outer[TCONV_MAX_SPATIAL];
} coarse_run;

/* Splits the block [p0, p0 + n) of flattened coarse positions into runs along the last axis and
 * calls fn for each. */
typedef void (*run_fn)(void *ctx, const coarse_run *run);

static void for_each_run(const lattice *lat, int64_t p0, int64_t n, run_fn fn, void *ctx) {
    int last = lat->rank - 1;
    int64_t line_len = lat->coarse[last];
    coarse_run run;
    for (int64_t p = p0; p < p0 + n; p += run.length) {
        int64_t line = p / line_len;
        run.u0 = p % line_len;
        run.length = min_i64(line_len - run.u0, p0 + n - p);
        run.col = p - p0;
        for (int i = last - 1; i >= 0; i--) {
            run.outer[i] = line % lat->coarse[i];
            line /= lat->coarse[i];
        }
        fn(ctx, &run);
    }
}

/* Maps a run through kernel tap `tap`: the run's columns [lo, hi) land on fine positions
 * fine_start + (j - lo) * stride_last (within one fine plane). Returns false when none does. */
static bool map_run(const lattice *lat, const coarse_run *run, const int64_t *tap, int64_t *lo,
                    int64_t *hi, int64_t *fine_start) {
    int last = lat->rank - 1;
    int64_t offset = 0;
    for (int i = 0; i < last; i++) {
        int64_t v =
            run->outer[i] * lat->strides[i] + tap[i] * lat->dilations[i] - lat->pad_begin[i];
        if (v < lat->window_lo[i] || v >= lat->window_hi[i])
            return false;
        offset = offset * lat->fine[i] + v;
    }
    int64_t s = lat->strides[last];
    int64_t base = tap[last] * lat->dilations[last] - lat->pad_begin[last];
    /* u range with lo <= u*s + base < hi (no division for the common stride 1) */
    int64_t w_lo = lat->window_lo[last], w_hi = lat->window_hi[last];
    int64_t first = s == 1 ? w_lo - base : ceil_div_i64(w_lo - base, s);
    int64_t end = s == 1 ? w_hi - base : floor_div_pos(w_hi - 1 - base, s) + 1;
    int64_t u_lo = max_i64(run->u0, first);
    int64_t u_hi = min_i64(run->u0 + run->length, end);
    if (u_lo >= u_hi)
        return false;
    *lo = u_lo - run->u0;
    *hi = u_hi - run->u0;
    *fine_start = offset * lat->fine[last] + u_lo * s + base;
    return true;
}

/* Advances a kernel tap odometer (row-major, last axis fastest). */
static void next_tap(const lattice *lat, int64_t *tap) {
    for (int i = lat->rank - 1; i >= 0; i--) {
        if (++tap[i] < lat->kernel[i])
            return;
        tap[i] = 0;
    }
}

/* ---------------------------------------------------------------- col2im and im2col */

/* col rows are (plane, tap) pairs, plane-major; `cols` columns per row. */
typedef struct col_block {
    const lattice *lat;
    float *col;
    int64_t cols;
    int64_t planes;
    float *fine; /* col2im: Y planes (written); im2col: X planes (read) */
} col_block;

/* ---- vector helpers (GCC/Clang vector extensions; plain loops elsewhere). At -O2 GCC only
 * vectorizes loops whose trip count it knows, so the hot loops are written with vectors. */
#if defined(__GNUC__)
#define HAVE_VECTOR_EXT 1
typedef float v4f __attribute__((vector_size(16)));
typedef int v4i __attribute__((vector_size(16)));

static inline v4f load_v4(const float *p) {
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store_v4(float *p, v4f v) {
    memcpy(p, &v, sizeof v);
}

#if defined(__clang__)
#define INTERLEAVE_LO(a, b) __builtin_shufflevector(a, b, 0, 4, 1, 5)
#define INTERLEAVE_HI(a, b) __builtin_shufflevector(a, b, 2, 6, 3, 7)
#define EVEN_LANES(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6)
#define ODD_LANES(a, b) __builtin_shufflevector(a, b, 1, 3, 5, 7)
#else
#define INTERLEAVE_LO(a, b) __builtin_shuffle(a, b, (v4i){0, 4, 1, 5})
#define INTERLEAVE_HI(a, b) __builtin_shuffle(a, b, (v4i){2, 6, 3, 7})
#define EVEN_LANES(a, b) __builtin_shuffle(a, b, (v4i){0, 2, 4, 6})
#define ODD_LANES(a, b) __builtin_shuffle(a, b, (v4i){1, 3, 5, 7})
#endif
#else
#define HAVE_VECTOR_EXT 0
#endif

static void fill_floats(float *dst, int64_t count, float value) {
    int64_t i = 0;
    if (value == 0.0f) {
        memset(dst, 0, (size_t)count * sizeof(float));
        return;
    }
#if HAVE_VECTOR_EXT
    v4f v = {value, value, value, value};
    for (; i + 4 <= count; i += 4)
        store_v4(dst + i, v);
#endif
    for (; i < count; i++)
        dst[i] = value;
}

/* dst[i * stride] += src[i] */
static void accumulate_strided(float *restrict dst, const float *restrict src, int64_t count,
                               int64_t stride) {
    int64_t i = 0;
    if (stride != 1) {
        for (; i < count; i++)
            dst[i * stride] += src[i];
        return;
    }
#if HAVE_VECTOR_EXT
    for (; i + 4 <= count; i += 4)
        store_v4(dst + i, load_v4(dst + i) + load_v4(src + i));
#endif
    for (; i < count; i++)
        dst[i] += src[i];
}

/* dst[2j] += a[j], dst[2j + 1] += b[j] */
static void accumulate_interleaved(float *restrict dst, const float *restrict a,
                                   const float *restrict b, int64_t count) {
    int64_t j = 0;
#if HAVE_VECTOR_EXT
    for (; j + 4 <= count; j += 4) {
        v4f va = load_v4(a + j), vb = load_v4(b + j);
        store_v4(dst + 2 * j, load_v4(dst + 2 * j) + INTERLEAVE_LO(va, vb));
        store_v4(dst + 2 * j + 4, load_v4(dst + 2 * j + 4) + INTERLEAVE_HI(va, vb));
    }
#endif
    for (; j < count; j++) {
        dst[2 * j] += a[j];
        dst[2 * j + 1] += b[j];
    }
}

/* A run of col rows for one tap mapped onto the fine planes: columns [lo, hi) go to fine
 * positions start, start + stride, ... of every plane. */
typedef struct mapped_tap {
    bool valid;
    int64_t lo, hi, start;
} mapped_tap;

static void accumulate_row_part(float *plane, const float *row, const mapped_tap *m, int64_t from,
                                int64_t to, int64_t stride) {
    if (to > from)
        accumulate_strided(plane + m->start + (from - m->lo) * stride, row + from, to - from,
                           stride);
}

/* Stride 2, dilation 1: taps k and k+1 fill alternate positions of the same fine span, so
 * their rows are interleaved and added with vectors where both are valid. */
static void accumulate_tap_pair(float *plane, const float *row_a, const mapped_tap *a,
                                const float *row_b, const mapped_tap *b) {
    int64_t lo = a->lo > b->lo ? a->lo : b->lo, hi = a->hi < b->hi ? a->hi : b->hi;
    if (!a->valid || !b->valid || lo >= hi) {
        if (a->valid)
            accumulate_row_part(plane, row_a, a, a->lo, a->hi, 2);
        if (b->valid)
            accumulate_row_part(plane, row_b, b, b->lo, b->hi, 2);
        return;
    }
    accumulate_interleaved(plane + a->start + (lo - a->lo) * 2, row_a + lo, row_b + lo, hi - lo);
    accumulate_row_part(plane, row_a, a, a->lo, lo, 2);
    accumulate_row_part(plane, row_a, a, hi, a->hi, 2);
    accumulate_row_part(plane, row_b, b, b->lo, lo, 2);
    accumulate_row_part(plane, row_b, b, hi, b->hi, 2);
}

static void map_tap(const lattice *lat, const coarse_run *run, const int64_t *tap, mapped_tap *m) {
    m->valid = map_run(lat, run, tap, &m->lo, &m->hi, &m->start);
}

/* Adds the col rows of one tap (or a stride-2 pair of taps) into every plane. */
static void col2im_taps(const col_block *b, const coarse_run *run, int64_t t,
                        const mapped_tap *first, const mapped_tap *second) {
    const lattice *lat = b->lat;
    int64_t stride = lat->strides[lat->rank - 1];
    if (!first->valid && (!second || !second->valid))
        return;
    for (int64_t c = 0; c < b->planes; c++) {
        float *plane = b->fine + c * lat->fine_size;
        const float *row = b->col + (c * lat->kernel_size + t) * b->cols + run->col;
        if (second)
            accumulate_tap_pair(plane, row, first, row + b->cols, second);
        else
            accumulate_row_part(plane, row, first, first->lo, first->hi, stride);
    }
}

static void col2im_run(void *ctx, const coarse_run *run) {
    const col_block *b = ctx;
    const lattice *lat = b->lat;
    int last = lat->rank - 1;
    bool pairs = lat->strides[last] == 2 && lat->dilations[last] == 1;
    int64_t tap[TCONV_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < lat->kernel_size; t++, next_tap(lat, tap)) {
        mapped_tap first, second;
        map_tap(lat, run, tap, &first);
        if (pairs && tap[last] + 1 < lat->kernel[last]) {
            next_tap(lat, tap);
            map_tap(lat, run, tap, &second);
            col2im_taps(b, run, t++, &first, &second);
        } else {
            col2im_taps(b, run, t, &first, NULL);
        }
    }
}

/* Adds every column of the block [p0, p0 + cols) into the fine planes. */
static void col2im_block(const lattice *lat, const float *col, int64_t planes, int64_t p0,
                         int64_t cols, float *fine) {
    col_block b = {lat, (float *)col, cols, planes, fine};
    for_each_run(lat, p0, cols, col2im_run, &b);
}

/* Below this many floats, copies and fills are inline loops: at small spatial sizes im2col is
 * thousands of copies of a few floats, where a libc call costs more than the copy. */
#define SHORT_RUN_FLOATS 32

static inline void copy_floats(float *restrict dst, const float *restrict src, int64_t count) {
    if (count >= SHORT_RUN_FLOATS) {
        memcpy(dst, src, (size_t)count * sizeof(float));
        return;
    }
    int64_t i = 0;
#if HAVE_VECTOR_EXT
    for (; i + 4 <= count; i += 4)
        store_v4(dst + i, load_v4(src + i));
#endif
    for (; i < count; i++)
        dst[i] = src[i];
}

/* dst[i] = src[i * stride] */
static void gather_strided(float *restrict dst, const float *restrict src, int64_t count,
                           int64_t stride) {
    if (stride == 1) {
        copy_floats(dst, src, count);
    } else {
        for (int64_t i = 0; i < count; i++)
            dst[i] = src[i * stride];
    }
}

/* a[j] = src[2j], b[j] = src[2j + 1] */
static void gather_deinterleaved(float *restrict a, float *restrict b, const float *restrict src,
                                 int64_t count) {
    int64_t j = 0;
#if HAVE_VECTOR_EXT
    for (; j + 4 <= count; j += 4) {
        v4f lo = load_v4(src + 2 * j), hi = load_v4(src + 2 * j + 4);
        store_v4(a + j, EVEN_LANES(lo, hi));
        store_v4(b + j, ODD_LANES(lo, hi));
    }
#endif
    for (; j < count; j++) {
        a[j] = src[2 * j];
        b[j] = src[2 * j + 1];
    }
}

static void zero_floats(float *dst, int64_t count) {
    if (count >= SHORT_RUN_FLOATS) {
        memset(dst, 0, (size_t)count * sizeof(float));
        return;
    }
    int64_t i = 0;
#if HAVE_VECTOR_EXT
    for (; i + 4 <= count; i += 4)
        store_v4(dst + i, (v4f){0, 0, 0, 0});
#endif
    for (; i < count; i++)
        dst[i] = 0.0f;
}

/* Columns [from, to) of one col row from a fine plane. */
static void gather_row_part(float *row, const float *plane, const mapped_tap *m, int64_t from,
                            int64_t to, int64_t stride) {
    if (to > from)
        gather_strided(row + from, plane + m->start + (from - m->lo) * stride, to - from, stride);
}

/* One col row of `length` columns: the mapped part gathered, the rest zero. */
static void gather_row(float *row, const float *plane, const mapped_tap *m, int64_t length,
                       int64_t stride) {
    if (!m->valid) {
        zero_floats(row, length);
        return;
    }
    zero_floats(row, m->lo);
    gather_row_part(row, plane, m, m->lo, m->hi, stride);
    zero_floats(row + m->hi, length - m->hi);
}

/* Stride 2, dilation 1: taps k and k+1 read alternate positions of the same fine span. */
static void gather_tap_pair(float *row_a, const mapped_tap *a, float *row_b, const mapped_tap *b,
                            const float *plane, int64_t length) {
    int64_t lo = a->lo > b->lo ? a->lo : b->lo, hi = a->hi < b->hi ? a->hi : b->hi;
    if (!a->valid || !b->valid || lo >= hi) {
        gather_row(row_a, plane, a, length, 2);
        gather_row(row_b, plane, b, length, 2);
        return;
    }
    gather_deinterleaved(row_a + lo, row_b + lo, plane + a->start + (lo - a->lo) * 2, hi - lo);
    zero_floats(row_a, a->lo);
    gather_row_part(row_a, plane, a, a->lo, lo, 2);
    gather_row_part(row_a, plane, a, hi, a->hi, 2);
    zero_floats(row_a + a->hi, length - a->hi);
    zero_floats(row_b, b->lo);
    gather_row_part(row_b, plane, b, b->lo, lo, 2);
    gather_row_part(row_b, plane, b, hi, b->hi, 2);
    zero_floats(row_b + b->hi, length - b->hi);
}

/* Fills the col rows of one tap (or a stride-2 pair of taps) from every plane. */
static void im2col_taps(const col_block *b, const coarse_run *run, int64_t t,
                        const mapped_tap *first, const mapped_tap *second) {
    const lattice *lat = b->lat;
    int64_t stride = lat->strides[lat->rank - 1];
    for (int64_t c = 0; c < b->planes; c++) {
        const float *plane = b->fine + c * lat->fine_size;
        float *row = b->col + (c * lat->kernel_size + t) * b->cols + run->col;
        if (second)
            gather_tap_pair(row, first, row + b->cols, second, plane, run->length);
        else
            gather_row(row, plane, first, run->length, stride);
    }
}

static void im2col_run(void *ctx, const coarse_run *run) {
    const col_block *b = ctx;
    const lattice *lat = b->lat;
    int last = lat->rank - 1;
    bool pairs = lat->strides[last] == 2 && lat->dilations[last] == 1;
    int64_t tap[TCONV_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < lat->kernel_size; t++, next_tap(lat, tap)) {
        mapped_tap first, second;
        map_tap(lat, run, tap, &first);
        if (pairs && tap[last] + 1 < lat->kernel[last]) {
            next_tap(lat, tap);
            map_tap(lat, run, tap, &second);
            im2col_taps(b, run, t++, &first, &second);
        } else {
            im2col_taps(b, run, t, &first, NULL);
        }
    }
}

/* Fills col (planes * kernel_size rows of `cols`) from the fine planes for the coarse block
 * [p0, p0 + cols). */
static void im2col_block(const lattice *lat, const float *fine, int64_t planes, int64_t p0,
                         int64_t cols, float *col) {
    col_block b = {lat, col, cols, planes, (float *)fine};
    for_each_run(lat, p0, cols, im2col_run, &b);
}

/* Whether fine == coarse position for position (1x1 kernel, stride 1, no pad, same size), so
 * that the GEMM can read or write the fine grid directly. */
static bool lattice_is_identity(const lattice *lat) {
    for (int i = 0; i < lat->rank; i++) {
        if (lat->kernel[i] != 1 || lat->strides[i] != 1 || lat->pad_begin[i] != 0 ||
            lat->coarse[i] != lat->fine[i] || lat->windowed)
            return false;
    }
    return true;
}

static bool lattice_finish(lattice *lat) {
    for (int i = 0; i < lat->rank && !lat->windowed; i++) {
        lat->window_lo[i] = 0;
        lat->window_hi[i] = lat->fine[i];
    }
    return tconv_shape_elements(lat->coarse, lat->rank, &lat->coarse_size) &&
           tconv_shape_elements(lat->fine, lat->rank, &lat->fine_size) &&
           tconv_shape_elements(lat->kernel, lat->rank, &lat->kernel_size);
}

/* Columns per block for `rows` col rows: about COL_BLOCK_TARGET_FLOATS floats, a multiple of the
 * GEMM tile, at least min_cols, at most all of them. */
static int64_t block_columns(int64_t rows, int64_t total, int64_t min_cols) {
    int64_t cols = COL_BLOCK_TARGET_FLOATS / max_i64(rows, 1);
    cols = cols / COL_BLOCK_GRANULE * COL_BLOCK_GRANULE;
    cols = max_i64(cols, max_i64(min_cols, COL_BLOCK_GRANULE));
    return min_i64(cols, max_i64(total, 1));
}

/* ---------------------------------------------------------------- per-worker scratch */

typedef struct worker_scratch {
    float *col; /* im2col / col2im block */
    tconv_gemm_workspace gemm;
} worker_scratch;

/* Every worker's buffers, in one session scratch allocation (tconv_kernel_scratch). */
typedef struct scratch_set {
    worker_scratch workers[TCONV_PARALLEL_MAX_THREADS];
    tconv_rt_tensor memory;
} scratch_set;

static void scratch_release(tconv_kernel_ctx *ctx, scratch_set *s) {
    tconv_kernel_scratch_release(ctx, &s->memory);
}

/* Per worker: col_floats of im2col/col2im scratch and GEMM buffers of kernel `isa` for
 * m x n x k. */
static tconv_status scratch_reserve(tconv_kernel_ctx *ctx, scratch_set *s, int n_workers,
                                    int64_t col_floats, tconv_gemm_isa isa, int64_t m, int64_t n,
                                    int64_t k) {
    size_t gemm_floats = tconv_gemm_workspace_floats(isa, m, n, k);
    size_t per_worker = (size_t)col_floats + gemm_floats;
    tconv_status st =
        tconv_kernel_scratch(ctx, (size_t)n_workers * per_worker * sizeof(float), &s->memory);
    if (st != TCONV_OK)
        return st;
    for (int i = 0; i < n_workers; i++) {
        worker_scratch *w = &s->workers[i];
        float *base = (float *)s->memory.data + (size_t)i * per_worker;
        w->col = col_floats > 0 ? base : NULL;
        tconv_gemm_workspace_init(&w->gemm, isa);
        tconv_gemm_workspace_lend(&w->gemm, base + col_floats, gemm_floats);
    }
    return TCONV_OK;
}

/* Memory for `bytes` of packed weights. When W (input 1) is a constant, the node's kept block
 * (kernel.h), packed on the first run only: *fresh tells whether to pack now. Otherwise session
 * scratch, always fresh; the caller releases `scratch` (a no-op when unused). */
static tconv_status packed_weights_memory(tconv_kernel_ctx *ctx, const tconv_kernel_cache_key *key,
                                          size_t bytes, float **out, bool *fresh,
                                          tconv_rt_tensor *scratch) {
    memset(scratch, 0, sizeof *scratch);
    *fresh = true;
    if (tconv_kernel_input_is_constant(ctx, 1)) {
        *out = tconv_kernel_cache_find(ctx, key, bytes);
        if (*out) {
            *fresh = false;
            return TCONV_OK;
        }
        void *data;
        tconv_status st = tconv_kernel_cache_store(ctx, key, bytes, &data);
        *out = data;
        return st;
    }
    tconv_status st = tconv_kernel_scratch(ctx, bytes, scratch);
    *out = scratch->data;
    return st;
}

/* ---------------------------------------------------------------- shared checks */

typedef struct conv_operands {
    const tconv_rt_tensor *x, *w, *b;
    int spatial_rank;
} conv_operands;

static tconv_status read_conv_operands(tconv_kernel_ctx *ctx, const char *const *known_attrs,
                                       conv_operands *ops) {
    tconv_status st;
    if ((st = tconv_kernel_check_attrs(ctx, known_attrs)) ||
        (st = tconv_kernel_require_input(ctx, 0, &ops->x)) ||
        (st = tconv_kernel_require_input(ctx, 1, &ops->w)) ||
        (st = tconv_kernel_check_dtype(ctx, 0, TCONV_DTYPES_FLOAT)) ||
        (st = tconv_kernel_check_dtype(ctx, 1, TCONV_DTYPES_FLOAT)) ||
        (st = tconv_kernel_check_dtype(ctx, 2, TCONV_DTYPES_FLOAT)))
        return st;
    ops->b = tconv_kernel_input(ctx, 2);
    if (ops->x->rank < 3 || ops->x->rank - 2 > TCONV_MAX_SPATIAL)
        return tconv_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                               "X has rank %d; 3 to %d (N, C and 1 to %d spatial axes) are "
                               "supported",
                               ops->x->rank, TCONV_MAX_SPATIAL + 2, TCONV_MAX_SPATIAL);
    if (ops->w->rank != ops->x->rank)
        return tconv_error_set(ctx->err, TCONV_ERR_INVALID, "W has rank %d but X has rank %d",
                               ops->w->rank, ops->x->rank);
    ops->spatial_rank = ops->x->rank - 2;
    return TCONV_OK;
}

static tconv_status check_bias(tconv_kernel_ctx *ctx, const tconv_rt_tensor *b, int64_t c_out) {
    if (b && (b->rank != 1 || b->dims[0] != c_out))
        return tconv_error_set(ctx->err, TCONV_ERR_INVALID,
                               "B must be 1-D with %lld elements (the output channels), has "
                               "rank %d and %lld elements",
                               (long long)c_out, b->rank, (long long)b->n_elements);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- ConvTranspose */

typedef struct conv_transpose_job {
    lattice lat; /* coarse: X spatial, fine: Y spatial */
    int64_t batch, c_in, c_out, group, cin_g, cout_g;
    int64_t chunk_channels, n_chunks, block_cols;
    tconv_gemm_isa isa; /* the GEMM kernel, for the chunk's rows and block's columns */
    bool direct;        /* 1x1 identity mapping: the GEMM writes Y */
    const float *x, *w, *bias;
    float *y;
    float *packed_w;     /* W_g^T of every (group, chunk), packed once for the whole batch */
    size_t packed_chunk; /* floats per (group, chunk) slot of packed_w */
    scratch_set scratch;
} conv_transpose_job;

/* The W_g^T rows of one (group, chunk) as the GEMM's op(A): cc*K x cin_g. */
static tconv_sgemm_op chunk_op(const conv_transpose_job *job, int64_t g, int64_t c0, int64_t cc) {
    int64_t k = job->lat.kernel_size;
    tconv_sgemm_op op = {
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
    return min_i64(job->chunk_channels, job->cout_g - chunk * job->chunk_channels);
}

/* Packs the weights of one (group, chunk): task = g * n_chunks + chunk. */
static void conv_transpose_pack_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    conv_transpose_job *job = vjob;
    int64_t chunk = task % job->n_chunks, g = task / job->n_chunks;
    tconv_sgemm_op op =
        chunk_op(job, g, chunk * job->chunk_channels, chunk_channels_at(job, chunk));
    tconv_sgemm_pack_a(job->isa, op.trans_a, op.m, op.k, op.a, op.lda,
                       job->packed_w + (size_t)task * job->packed_chunk);
}

static void fill_bias_planes(const conv_transpose_job *job, float *y, int64_t first_channel,
                             int64_t cc) {
    for (int64_t c = 0; c < cc; c++)
        fill_floats(y + c * job->lat.fine_size, job->lat.fine_size,
                    job->bias ? job->bias[first_channel + c] : 0.0f);
}

/* One (batch, group, output-channel chunk): Y planes = bias, then += col2im(W_g^T x X_g). */
static void conv_transpose_task(void *vjob, int64_t task, int worker) {
    conv_transpose_job *job = vjob;
    const lattice *lat = &job->lat;
    int64_t chunk = task % job->n_chunks;
    int64_t g = (task / job->n_chunks) % job->group;
    int64_t n = task / (job->n_chunks * job->group);
    int64_t c0 = chunk * job->chunk_channels;
    int64_t cc = chunk_channels_at(job, chunk);
    int64_t first_channel = g * job->cout_g + c0;
    float *y = job->y + (n * job->c_out + first_channel) * lat->fine_size;
    fill_bias_planes(job, y, first_channel, cc);
    worker_scratch *ws = &job->scratch.workers[worker];
    const float *packed = job->packed_w + (size_t)(g * job->n_chunks + chunk) * job->packed_chunk;
    tconv_sgemm_op op = chunk_op(job, g, c0, cc);
    op.ldb = lat->coarse_size;
    const float *x = job->x + (n * job->c_in + g * job->cin_g) * lat->coarse_size;
    for (int64_t p0 = 0; p0 < lat->coarse_size; p0 += job->block_cols) {
        op.n = min_i64(job->block_cols, lat->coarse_size - p0);
        op.b = x + p0;
        if (job->direct) {
            op.beta = 1.0f;
            op.c = y + p0;
            op.ldc = lat->fine_size;
            tconv_sgemm_run_packed(&ws->gemm, packed, &op);
        } else {
            op.beta = 0.0f;
            op.c = ws->col;
            op.ldc = op.n;
            tconv_sgemm_run_packed(&ws->gemm, packed, &op);
            col2im_block(lat, ws->col, cc, p0, op.n, y);
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
    const lattice *lat = &job->lat;
    int64_t chunk = task % job->n_chunks, g = task / job->n_chunks;
    int64_t c0 = chunk * job->chunk_channels, cc = chunk_channels_at(job, chunk);
    int64_t k = lat->kernel_size, first_channel = g * job->cout_g + c0;
    worker_scratch *ws = &job->scratch.workers[worker];
    tconv_sgemm_op op = {.m = job->batch,
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
        tconv_sgemm_run(&ws->gemm, &op);
    for (int64_t n = 0; n < job->batch; n++) {
        float *y = job->y + (n * job->c_out + first_channel) * lat->fine_size;
        fill_bias_planes(job, y, first_channel, cc);
        col2im_block(lat, ws->col + n * cc * k, cc, 0, 1, y);
    }
}

static void conv_transpose_lattice(const tconv_conv_transpose_geometry *g, lattice *lat) {
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
    job->direct = lattice_is_identity(&job->lat);
    /* a single coarse position runs the whole batch in one task per (group, chunk) */
    bool points = job->lat.coarse_size == 1 && !job->direct;
    int64_t outer = points ? job->group : job->batch * job->group;
    job->n_chunks = 1;
    if (threads > 1 && outer < 2 * threads)
        job->n_chunks = min_i64(max_i64(job->cout_g, 1), (2 * threads + outer - 1) / outer);
    job->chunk_channels = max_i64(1, (job->cout_g + job->n_chunks - 1) / job->n_chunks);
    job->n_chunks = max_i64(1, (job->cout_g + job->chunk_channels - 1) / job->chunk_channels);
    int64_t rows = job->chunk_channels * job->lat.kernel_size;
    job->block_cols = job->direct ? max_i64(job->lat.coarse_size, 1)
                                  : block_columns(rows, job->lat.coarse_size, 0);
    job->isa = points ? tconv_gemm_isa_for_shape(job->batch, rows)
                      : tconv_gemm_isa_for_shape(rows, job->block_cols);
}

static tconv_status conv_transpose_resolve(tconv_kernel_ctx *ctx, const conv_operands *ops,
                                           tconv_conv_transpose_geometry *g) {
    tconv_conv_transpose_attrs attrs;
    tconv_status st =
        tconv_conv_transpose_read_attrs(ctx->node, ops->spatial_rank, &attrs, ctx->err);
    if (st == TCONV_OK)
        st = tconv_conv_transpose_resolve(&attrs, ops->x->dims, ops->w->dims, TCONV_CONVENTION_ONNX,
                                          g, ctx->err);
    return st;
}

/* A Slice / Pad / Add chain the executor fused into this node (kernel.h): the output is the
 * Slice's window of the uncropped output (ONNX Slice normalization, step 1), extended by the
 * Pad's zeros; positions outside the window keep the fill (the fused bias, else 0). Moves the
 * begin pads, sets the output size and the lattice's window. */
static tconv_status apply_crop(tconv_kernel_ctx *ctx, tconv_conv_transpose_geometry *g,
                               int64_t *window_lo, int64_t *window_hi) {
    const tconv_kernel_crop *crop = ctx->crop;
    int64_t start[TCONV_MAX_SPATIAL] = {0}, end[TCONV_MAX_SPATIAL];
    for (int i = 0; i < g->spatial_rank; i++)
        end[i] = g->out[i];
    for (size_t k = 0; k < crop->n; k++) {
        int i = crop->axes[k] - 2;
        if (i < 0 || i >= g->spatial_rank)
            return tconv_error_set(ctx->err, TCONV_ERR_INVALID,
                                   "fused crop on axis %d of a rank-%d output", crop->axes[k],
                                   g->spatial_rank + 2);
        int64_t dim = g->out[i], a = crop->starts[k], b = crop->ends[k];
        a = a < 0 ? a + dim : a;
        b = b < 0 ? b + dim : b;
        start[i] = min_i64(max_i64(a, 0), dim);
        end[i] = max_i64(start[i], min_i64(max_i64(b, 0), dim));
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
static tconv_status conv_transpose_blocks(tconv_kernel_ctx *ctx, conv_transpose_job *job,
                                          int threads) {
    int64_t rows = job->chunk_channels * job->lat.kernel_size;
    int64_t n_slots = job->group * job->n_chunks;
    job->packed_chunk = tconv_sgemm_packed_a_floats(job->isa, rows, job->cin_g);
    tconv_kernel_cache_key key = {
        .source = job->w,
        .layout = {job->chunk_channels, job->n_chunks, job->group, job->cin_g, job->isa}};
    tconv_rt_tensor packed;
    bool fresh;
    tconv_status st =
        packed_weights_memory(ctx, &key, (size_t)n_slots * job->packed_chunk * sizeof(float),
                              &job->packed_w, &fresh, &packed);
    if (st != TCONV_OK)
        return st;
    int64_t n_tasks = job->batch * n_slots;
    int workers = tconv_parallel_workers(threads, n_tasks);
    st = scratch_reserve(ctx, &job->scratch, workers, job->direct ? 0 : rows * job->block_cols,
                         job->isa, rows, job->block_cols, job->cin_g);
    if (st == TCONV_OK) {
        if (fresh)
            tconv_parallel_for(tconv_parallel_workers(threads, n_slots), n_slots,
                               conv_transpose_pack_task, job);
        tconv_parallel_for(workers, n_tasks, conv_transpose_task, job);
        scratch_release(ctx, &job->scratch);
    }
    tconv_kernel_scratch_release(ctx, &packed);
    return st;
}

/* One coarse position: the batch-wide GEMM of conv_transpose_point_task. */
static tconv_status conv_transpose_points(tconv_kernel_ctx *ctx, conv_transpose_job *job,
                                          int threads) {
    int64_t rows = job->chunk_channels * job->lat.kernel_size;
    int64_t n_tasks = job->group * job->n_chunks;
    int workers = tconv_parallel_workers(threads, n_tasks);
    tconv_status st = scratch_reserve(ctx, &job->scratch, workers, job->batch * rows, job->isa,
                                      job->batch, rows, job->cin_g);
    if (st != TCONV_OK)
        return st;
    tconv_parallel_for(workers, n_tasks, conv_transpose_point_task, job);
    scratch_release(ctx, &job->scratch);
    return TCONV_OK;
}

static tconv_status run_conv_transpose(tconv_kernel_ctx *ctx) {
    static const char *const known[] = {"auto_pad",     "dilations",      "group",
                                        "kernel_shape", "output_padding", "output_shape",
                                        "pads",         "strides",        NULL};
    conv_operands ops = {0}; /* read_conv_operands may fail before filling it */
    tconv_conv_transpose_geometry g;
    tconv_status st = read_conv_operands(ctx, known, &ops);
    if (st == TCONV_OK)
        st = conv_transpose_resolve(ctx, &ops, &g);
    int64_t window_lo[TCONV_MAX_SPATIAL], window_hi[TCONV_MAX_SPATIAL];
    if (st == TCONV_OK && ctx->crop)
        st = apply_crop(ctx, &g, window_lo, window_hi);
    const float *bias = ops.b ? ops.b->data : NULL;
    if (st == TCONV_OK && ctx->crop && ctx->crop->bias) {
        if (ops.b || ctx->crop->bias_len != g.c_out)
            return tconv_error_set(ctx->err, TCONV_ERR_INVALID,
                                   "fused bias of %lld values for %lld channels",
                                   (long long)ctx->crop->bias_len, (long long)g.c_out);
        bias = ctx->crop->bias;
    }
    if (st == TCONV_OK)
        st = check_bias(ctx, ops.b, g.c_out);
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
    if (!lattice_finish(&job.lat))
        return tconv_error_set(ctx->err, TCONV_ERR_LIMIT, "ConvTranspose sizes overflow");
    int64_t y_dims[TCONV_MAX_RANK] = {job.batch, job.c_out};
    memcpy(y_dims + 2, g.out, (size_t)g.spatial_rank * sizeof(int64_t));
    tconv_rt_tensor *y;
    st = tconv_kernel_alloc_output(ctx, 0, TCONV_DTYPE_FLOAT, ops.x->rank, y_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    double flops = 2.0 * (double)job.batch * (double)job.c_in * (double)job.cout_g *
                   (double)job.lat.kernel_size * (double)job.lat.coarse_size;
    int threads = tconv_parallel_threads_for_work(ctx->n_threads, flops);
    conv_transpose_plan(&job, threads);
    job.x = ops.x->data;
    job.w = ops.w->data;
    job.bias = bias;
    job.y = y->data;
    if (job.lat.coarse_size == 1 && !job.direct)
        return conv_transpose_points(ctx, &job, threads);
    return conv_transpose_blocks(ctx, &job, threads);
}

/* ---------------------------------------------------------------- Conv */

typedef struct conv_attrs {
    int rank;
    int64_t group;
    tconv_auto_pad auto_pad;
    bool has_kernel_shape;
    int64_t kernel_shape[TCONV_MAX_SPATIAL];
    int64_t strides[TCONV_MAX_SPATIAL];
    int64_t dilations[TCONV_MAX_SPATIAL];
    int64_t pads[2 * TCONV_MAX_SPATIAL];
} conv_attrs;

static tconv_status read_conv_attrs(tconv_kernel_ctx *ctx, int rank, conv_attrs *a) {
    memset(a, 0, sizeof *a);
    a->rank = rank;
    size_t r = (size_t)rank;
    tconv_status st;
    if ((st = tconv_node_attr_int(ctx->node, "group", 1, &a->group, ctx->err)) ||
        (st = tconv_kernel_read_auto_pad(ctx, &a->auto_pad)) ||
        (st = tconv_kernel_read_axis_ints(ctx, "kernel_shape", r, 0, 1, a->kernel_shape,
                                          &a->has_kernel_shape)) ||
        (st = tconv_kernel_read_axis_ints(ctx, "strides", r, 1, 1, a->strides, NULL)) ||
        (st = tconv_kernel_read_axis_ints(ctx, "dilations", r, 1, 1, a->dilations, NULL)) ||
        (st = tconv_kernel_read_axis_ints(ctx, "pads", 2 * r, 0, 0, a->pads, NULL)))
        return st;
    if (a->group < 1)
        return tconv_error_set(ctx->err, TCONV_ERR_INVALID, "attribute 'group' must be >= 1");
    return TCONV_OK;
}

/* Output size and begin pad of one Conv axis (ONNX: SAME total = max(0, (ceil(x/s)-1)*s + ke - x),
 * SAME_UPPER puts the odd extra at the end). */
static tconv_status conv_axis(tconv_kernel_ctx *ctx, const conv_attrs *a, int i, int64_t x,
                              int64_t k, lattice *lat) {
    int64_t s = a->strides[i], d = a->dilations[i];
    bool explicit_pads = a->auto_pad == TCONV_AUTO_PAD_NOTSET;
    int64_t pb = explicit_pads ? a->pads[i] : 0, pe = explicit_pads ? a->pads[i + a->rank] : 0;
    int64_t ke, span, out;
    tconv_status st = tconv_kernel_window_span(ctx, i, x, k, d, pb, pe, &ke, &span);
    if (st != TCONV_OK)
        return st;
    if (a->auto_pad == TCONV_AUTO_PAD_SAME_UPPER || a->auto_pad == TCONV_AUTO_PAD_SAME_LOWER) {
        out = ceil_div_i64(x, s);
        int64_t total = max_i64(0, (out - 1) * s + ke - x);
        pb = a->auto_pad == TCONV_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
    } else {
        out = floor_div_pos(span, s) + 1; /* VALID: pads 0 */
    }
    if (out < 1)
        return tconv_error_set(ctx->err, TCONV_ERR_INVALID,
                               "output size of spatial axis %d would be %lld (input %lld, "
                               "dilated kernel %lld, stride %lld)",
                               i, (long long)out, (long long)x, (long long)ke, (long long)s);
    lat->coarse[i] = out;
    lat->fine[i] = x;
    lat->kernel[i] = k;
    lat->strides[i] = s;
    lat->dilations[i] = d;
    lat->pad_begin[i] = pb;
    return TCONV_OK;
}

static tconv_status conv_geometry(tconv_kernel_ctx *ctx, const conv_operands *ops,
                                  const conv_attrs *a, lattice *lat) {
    const int64_t *xd = ops->x->dims, *wd = ops->w->dims;
    if (xd[1] % a->group != 0 || wd[1] * a->group != xd[1])
        return tconv_error_set(ctx->err, TCONV_ERR_INVALID,
                               "X has %lld channels but W.shape[1] * group is %lld * %lld",
                               (long long)xd[1], (long long)wd[1], (long long)a->group);
    if (wd[0] % a->group != 0)
        return tconv_error_set(ctx->err, TCONV_ERR_INVALID,
                               "group %lld does not divide the %lld output channels (W.shape[0])",
                               (long long)a->group, (long long)wd[0]);
    lat->rank = a->rank;
    for (int i = 0; i < a->rank; i++) {
        int64_t k = wd[2 + i];
        if (a->has_kernel_shape && a->kernel_shape[i] != k)
            return tconv_error_set(ctx->err, TCONV_ERR_INVALID,
                                   "kernel_shape[%d] = %lld but W has %lld on that axis", i,
                                   (long long)a->kernel_shape[i], (long long)k);
        if (k < 1 || xd[2 + i] < 1)
            return tconv_error_set(ctx->err, TCONV_ERR_INVALID,
                                   "spatial axis %d is empty (X %lld, W %lld)", i,
                                   (long long)xd[2 + i], (long long)k);
        tconv_status st = conv_axis(ctx, a, i, xd[2 + i], k, lat);
        if (st != TCONV_OK)
            return st;
    }
    if (!lattice_finish(lat))
        return tconv_error_set(ctx->err, TCONV_ERR_LIMIT, "Conv sizes overflow");
    return TCONV_OK;
}

typedef struct conv_job {
    lattice lat; /* coarse: Y spatial, fine: X spatial */
    int64_t batch, c_in, c_out, group, cin_g, cout_g;
    int64_t block_cols, n_blocks;
    int64_t chunk_rows, n_chunks; /* output channels of a group, split for threads */
    tconv_gemm_isa isa;           /* the GEMM kernel, for the channels and a block's columns */
    bool direct;                  /* 1x1 identity mapping: the GEMM reads X */
    const float *x, *w, *bias;
    float *y;
    float *packed_w; /* W of every (group, row chunk), packed once for all column blocks */
    size_t packed_chunk_floats;
    scratch_set scratch;
    int64_t columns; /* GEMM columns of one (batch, group): output positions, or wide ones */
    /* Stride-1 Conv without im2col (conv_run_wide): the zero-padded input, each tap's offset
     * in a padded plane, and every worker's B row pointers. */
    bool wide;
    int64_t
        padded[TCONV_MAX_SPATIAL]; /* phase plane dims: out + (kernel - 1) * dilation / stride */
    int64_t padded_size;           /* floats of one phase plane */
    int64_t n_phases;              /* product of the strides */
    int64_t channel_floats;        /* n_phases * padded_size: one input channel's planes */
    const float *padded_x;
    const int64_t *tap_offsets;
    const float **b_rows; /* depth pointers per worker */
} conv_job;

static int64_t conv_chunk_rows_at(const conv_job *job, int64_t chunk) {
    return min_i64(job->chunk_rows, job->cout_g - chunk * job->chunk_rows);
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
    u.cols = min_i64(job->block_cols, job->columns - u.q0);
    return u;
}

static const float *conv_unit_x(const conv_job *job, const conv_unit *u) {
    return job->x + (u->n * job->c_in + u->g * job->cin_g) * job->lat.fine_size;
}

/* Y_g[chunk rows, block] = W_g[chunk rows, :] x col + bias, col being the unit's im2col block
 * (ignored for a direct 1x1 Conv, whose GEMM reads X). */
static void conv_unit_rows(const conv_job *job, tconv_gemm_workspace *gemm, const conv_unit *u,
                           int64_t chunk, const float *col) {
    const lattice *lat = &job->lat;
    int64_t row0 = u->g * job->cout_g + chunk * job->chunk_rows;
    float *y = job->y + (u->n * job->c_out + row0) * lat->coarse_size + u->q0;
    tconv_sgemm_op op = {.m = conv_chunk_rows_at(job, chunk),
                         .n = u->cols,
                         .k = job->cin_g * lat->kernel_size,
                         .alpha = 1.0f,
                         .b = job->direct ? conv_unit_x(job, u) + u->q0 : col,
                         .ldb = job->direct ? lat->fine_size : u->cols,
                         .c = y,
                         .ldc = lat->coarse_size};
    const float *packed =
        job->packed_w + (size_t)(u->g * job->n_chunks + chunk) * job->packed_chunk_floats;
    tconv_sgemm_run_packed(gemm, packed, &op);
    if (!job->bias)
        return;
    for (int64_t c = 0; c < op.m; c++) {
        float b = job->bias[row0 + c];
        float *row = y + c * lat->coarse_size;
        for (int64_t j = 0; j < u->cols; j++)
            row[j] += b;
    }
}

/* One unit, all row chunks, in one worker (the path for many units). */
static void conv_unit_task(void *vjob, int64_t task, int worker) {
    conv_job *job = vjob;
    conv_unit u = conv_unit_at(job, task);
    worker_scratch *ws = &job->scratch.workers[worker];
    if (!job->direct)
        im2col_block(&job->lat, conv_unit_x(job, &u), job->cin_g, u.q0, u.cols, ws->col);
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
    int64_t count = min_i64(s->channels_per_task, job->cin_g - c0);
    im2col_block(&job->lat, conv_unit_x(job, &s->unit) + c0 * job->lat.fine_size, count, s->unit.q0,
                 s->unit.cols, s->col + c0 * job->lat.kernel_size * s->unit.cols);
}

static void conv_shared_rows_task(void *vshared, int64_t task, int worker) {
    const conv_shared_unit *s = vshared;
    conv_unit_rows(s->job, &s->job->scratch.workers[worker].gemm, &s->unit, task, s->col);
}

static void conv_run_shared_units(conv_job *job, int threads) {
    int64_t tasks = min_i64(job->cin_g, (int64_t)threads * CONV_TASKS_PER_THREAD);
    conv_shared_unit s = {.job = job,
                          .col = job->scratch.workers[0].col,
                          .channels_per_task = (job->cin_g + tasks - 1) / tasks};
    int64_t im2col_tasks = (job->cin_g + s.channels_per_task - 1) / s.channels_per_task;
    for (int64_t i = 0; i < job->batch * job->group * job->n_blocks; i++) {
        s.unit = conv_unit_at(job, i);
        if (!job->direct)
            tconv_parallel_for(tconv_parallel_workers(threads, im2col_tasks), im2col_tasks,
                               conv_shared_im2col_task, &s);
        tconv_parallel_for(tconv_parallel_workers(threads, job->n_chunks), job->n_chunks,
                           conv_shared_rows_task, &s);
    }
}

/* W_g's row chunks (chunk_rows x cin_g*K) of every group, packed for the GEMM (kept across
 * runs when W is a constant, else in `packed`, session scratch). */
static tconv_status conv_pack_weights(tconv_kernel_ctx *ctx, conv_job *job,
                                      tconv_rt_tensor *packed) {
    int64_t depth = job->cin_g * job->lat.kernel_size;
    job->packed_chunk_floats = tconv_sgemm_packed_a_floats(job->isa, job->chunk_rows, depth);
    size_t slots = (size_t)(job->group * job->n_chunks);
    tconv_kernel_cache_key key = {
        .source = job->w, .layout = {job->chunk_rows, job->n_chunks, job->group, depth, job->isa}};
    bool fresh;
    tconv_status st =
        packed_weights_memory(ctx, &key, slots * job->packed_chunk_floats * sizeof(float),
                              &job->packed_w, &fresh, packed);
    if (st != TCONV_OK || !fresh)
        return st;
    for (int64_t g = 0; g < job->group; g++) {
        for (int64_t chunk = 0; chunk < job->n_chunks; chunk++) {
            int64_t row0 = g * job->cout_g + chunk * job->chunk_rows;
            tconv_sgemm_pack_a(job->isa, false, conv_chunk_rows_at(job, chunk), depth,
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
    int64_t size = (total + parts - 1) / max_i64(parts, 1);
    size = max_i64(granule, (size + granule - 1) / granule * granule);
    size = min_i64(size, max_i64(total, 1));
    *n = max_i64(1, (total + size - 1) / size);
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

/* Column blocks and output-channel chunks. One thread: blocks of about COL_BLOCK_TARGET_FLOATS
 * of im2col. More threads: CONV_TASKS_PER_THREAD tasks a thread when the work allows, by
 * narrower column blocks (not below CONV_MIN_PARALLEL_COLS); when there are fewer, the output
 * channels are split too, in multiples of the GEMM's row tile. Equal parts, so no worker waits
 * on a long one. */
static void conv_plan(conv_job *job, int threads) {
    int64_t depth = job->cin_g * job->lat.kernel_size, total = job->columns;
    int64_t outer = job->batch * job->group;
    int64_t cols = block_columns(depth, total, CONV_MIN_BLOCK_COLS);
    int64_t blocks = (total + cols - 1) / max_i64(cols, 1);
    int64_t want = (int64_t)threads * CONV_TASKS_PER_THREAD;
    if (threads > 1 && outer * blocks < want)
        blocks =
            max_i64(blocks, min_i64((want + outer - 1) / outer, total / CONV_MIN_PARALLEL_COLS));
    job->block_cols = split_evenly(total, blocks, COL_BLOCK_GRANULE, &job->n_blocks);
    /* Few units: split the output channels into as few chunks as make the task count a
     * multiple of the thread count (each chunk packs its B again). */
    int64_t units = outer * job->n_blocks, chunks = 1;
    if (threads > 1 && units < want)
        chunks = threads / gcd_i64(units, threads);
    job->isa = tconv_gemm_isa_for_shape(job->cout_g, job->block_cols);
    job->chunk_rows =
        split_evenly(job->cout_g, chunks, tconv_sgemm_row_tile(job->isa), &job->n_chunks);
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
    const lattice *lat = &job->lat;
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

/* Whether a Conv runs on wide columns: not a plain 1x1 (direct), and the dropped positions cost
 * at most half of the useful ones. */
static bool conv_wide_fits(const conv_job *job) {
    const lattice *lat = &job->lat;
    if (job->direct)
        return false;
    conv_job probe = *job;
    int64_t length = wide_setup(&probe);
    return length <= lat->coarse_size + lat->coarse_size / 2;
}

/* Phase plane `phase` (row-major over the strides) of one input plane: P_a[u] = x[s*u + a -
 * pad_begin] per axis, zero outside X. */
static void phase_plane(const conv_job *job, const float *src, int64_t phase, float *dst) {
    const lattice *lat = &job->lat;
    int last = lat->rank - 1;
    int64_t a[TCONV_MAX_SPATIAL];
    for (int i = last; i >= 0; i--) {
        a[i] = phase % lat->strides[i];
        phase /= lat->strides[i];
    }
    int64_t width = job->padded[last], x_width = lat->fine[last], s = lat->strides[last];
    int64_t first = a[last] - lat->pad_begin[last]; /* X position of u = 0 */
    int64_t lo = min_i64(max_i64(ceil_div_i64(-first, s), 0), width);
    int64_t hi = min_i64(max_i64(ceil_div_i64(x_width - first, s), lo), width);
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
            zero_floats(d, width);
            continue;
        }
        zero_floats(d, lo);
        if (hi > lo)
            gather_strided(d + lo, src + src_line * x_width + first + lo * s, hi - lo, s);
        zero_floats(d + hi, width - hi);
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
 * bias. */
static void wide_compact(const conv_job *job, const float *block, int64_t rows, const conv_unit *u,
                         int64_t row0) {
    const lattice *lat = &job->lat;
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
        int64_t run = min_i64(width - col, u->cols - j);
        int64_t keep = kept ? min_i64(out_width - col, run) : 0;
        for (int64_t r = 0; r < rows && keep > 0; r++)
            copy_plus(y + r * lat->coarse_size + out_line * out_width + col,
                      block + r * u->cols + j, keep, job->bias ? job->bias[row0 + r] : 0.0f);
        j += run;
    }
}

/* One (batch, group, wide column block, row chunk). */
static void conv_wide_task(void *vjob, int64_t task, int worker) {
    conv_job *job = vjob;
    const lattice *lat = &job->lat;
    int64_t chunk = task % job->n_chunks;
    conv_unit u = conv_unit_at(job, task / job->n_chunks);
    worker_scratch *ws = &job->scratch.workers[worker];
    int64_t depth = job->cin_g * lat->kernel_size;
    const float **rows = job->b_rows + (size_t)worker * (size_t)depth;
    const float *xp =
        job->padded_x + (u.n * job->c_in + u.g * job->cin_g) * job->channel_floats + u.q0;
    for (int64_t c = 0; c < job->cin_g; c++) {
        for (int64_t t = 0; t < lat->kernel_size; t++)
            rows[c * lat->kernel_size + t] = xp + c * job->channel_floats + job->tap_offsets[t];
    }
    int64_t row0 = u.g * job->cout_g + chunk * job->chunk_rows;
    tconv_sgemm_op op = {.m = conv_chunk_rows_at(job, chunk),
                         .n = u.cols,
                         .k = depth,
                         .alpha = 1.0f,
                         .b_rows = rows,
                         .c = ws->col,
                         .ldc = u.cols};
    const float *packed =
        job->packed_w + (size_t)(u.g * job->n_chunks + chunk) * job->packed_chunk_floats;
    tconv_sgemm_run_packed(&ws->gemm, packed, &op);
    wide_compact(job, ws->col, op.m, &u, row0);
}

/* Every tap's offset in an input channel's phase planes: its phase plane, then its shift. */
static void wide_tap_offsets(const conv_job *job, int64_t *offsets) {
    const lattice *lat = &job->lat;
    int64_t tap[TCONV_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < lat->kernel_size; t++, next_tap(lat, tap)) {
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
static tconv_status conv_run_wide(tconv_kernel_ctx *ctx, conv_job *job, int threads, int workers) {
    const lattice *lat = &job->lat;
    /* X itself serves only at stride 1 without pads (a strided X may have the planes' size) */
    bool padded = job->n_phases > 1 || job->padded_size != lat->fine_size;
    int64_t planes = job->batch * job->c_in;
    size_t depth = (size_t)(job->cin_g * lat->kernel_size);
    /* the offsets and pointers that follow the floats want 8-byte alignment */
    size_t x_bytes =
        padded ? ((size_t)(planes * job->channel_floats) * sizeof(float) + 63) / 64 * 64 : 0;
    size_t offset_bytes = (size_t)lat->kernel_size * sizeof(int64_t);
    size_t rows_bytes = (size_t)workers * depth * sizeof(float *);
    tconv_rt_tensor memory;
    tconv_status st = tconv_kernel_scratch(ctx, x_bytes + offset_bytes + rows_bytes, &memory);
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
        tconv_parallel_for(tconv_parallel_workers(threads, planes), planes, phase_planes_task, job);
    }
    int64_t n_tasks = job->batch * job->group * job->n_blocks * job->n_chunks;
    tconv_parallel_for(workers, n_tasks, conv_wide_task, job);
    tconv_kernel_scratch_release(ctx, &memory);
    return TCONV_OK;
}

/* im2col + GEMM over (batch, group, column block, row chunk) tasks. */
static tconv_status conv_run_gemm(tconv_kernel_ctx *ctx, conv_job *job) {
    int64_t depth = job->cin_g * job->lat.kernel_size;
    job->direct = lattice_is_identity(&job->lat);
    double flops = 2.0 * (double)job->batch * (double)job->c_out * (double)depth *
                   (double)job->lat.coarse_size;
    int threads = tconv_parallel_threads_for_work(ctx->n_threads, flops);
    job->wide = conv_wide_fits(job);
    job->columns = job->wide ? wide_setup(job) : job->lat.coarse_size;
    conv_plan(job, threads);
    int64_t n_units = job->batch * job->group * job->n_blocks;
    bool shared = !job->wide && job->n_chunks > 1;
    int workers = shared ? threads : tconv_parallel_workers(threads, n_units * job->n_chunks);
    tconv_rt_tensor packed;
    tconv_status st = conv_pack_weights(ctx, job, &packed);
    if (st != TCONV_OK)
        return st;
    /* col: the im2col block (the shared path's one lives in worker 0's), or the wide path's C
     * block */
    int64_t col_floats = job->wide     ? job->chunk_rows * job->block_cols
                         : job->direct ? 0
                                       : depth * job->block_cols;
    st = scratch_reserve(ctx, &job->scratch, workers, col_floats, job->isa, job->chunk_rows,
                         job->block_cols, depth);
    if (st == TCONV_OK) {
        if (job->wide)
            st = conv_run_wide(ctx, job, threads, workers);
        else if (shared)
            conv_run_shared_units(job, threads);
        else
            tconv_parallel_for(workers, n_units, conv_unit_task, job);
        scratch_release(ctx, &job->scratch);
    }
    tconv_kernel_scratch_release(ctx, &packed);
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
#if HAVE_VECTOR_EXT
    v4f vw = {w, w, w, w};
    for (; j + 4 <= count; j += 4)
        store_v4(y + j, load_v4(y + j) + vw * load_v4(x + j));
#endif
    for (; j < count; j++)
        y[j] += w * x[j];
}

typedef struct depthwise_plane {
    const lattice *lat;
    const float *x; /* the input plane */
    const float *w; /* kernel_size taps */
    float *y;       /* the output plane */
} depthwise_plane;

static void depthwise_run(void *ctx, const coarse_run *run) {
    const depthwise_plane *p = ctx;
    const lattice *lat = p->lat;
    int64_t stride = lat->strides[lat->rank - 1];
    int64_t tap[TCONV_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < lat->kernel_size; t++, next_tap(lat, tap)) {
        mapped_tap m;
        map_tap(lat, run, tap, &m);
        if (m.valid)
            axpy_strided(p->y + run->col + m.lo, p->x + m.start, p->w[t], m.hi - m.lo, stride);
    }
}

/* One (batch, output channel) plane. */
static void depthwise_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    const conv_job *job = vjob;
    const lattice *lat = &job->lat;
    int64_t co = task % job->c_out, n = task / job->c_out;
    float *y = job->y + task * lat->coarse_size;
    fill_floats(y, lat->coarse_size, job->bias ? job->bias[co] : 0.0f);
    depthwise_plane plane = {lat, job->x + (n * job->c_in + co / job->cout_g) * lat->fine_size,
                             job->w + co * lat->kernel_size, y};
    for_each_run(lat, 0, lat->coarse_size, depthwise_run, &plane);
}

static tconv_status conv_run_depthwise(tconv_kernel_ctx *ctx, conv_job *job) {
    double flops = 2.0 * (double)job->batch * (double)job->c_out * (double)job->lat.kernel_size *
                   (double)job->lat.coarse_size;
    int threads = tconv_parallel_threads_for_work(ctx->n_threads, flops);
    int64_t n_tasks = job->batch * job->c_out;
    tconv_parallel_for(tconv_parallel_workers(threads, n_tasks), n_tasks, depthwise_task, job);
    return TCONV_OK;
}

static tconv_status run_conv(tconv_kernel_ctx *ctx) {
    static const char *const known[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                        "pads",     "strides",   NULL};
    conv_operands ops = {0}; /* read_conv_operands may fail before filling it */
    conv_attrs attrs;
    conv_job job = {0};
    tconv_status st = read_conv_operands(ctx, known, &ops);
    if (st == TCONV_OK)
        st = read_conv_attrs(ctx, ops.spatial_rank, &attrs);
    if (st == TCONV_OK)
        st = conv_geometry(ctx, &ops, &attrs, &job.lat);
    if (st == TCONV_OK)
        st = check_bias(ctx, ops.b, ops.w->dims[0]);
    if (st != TCONV_OK)
        return st;
    job.batch = ops.x->dims[0];
    job.c_in = ops.x->dims[1];
    job.c_out = ops.w->dims[0];
    job.group = attrs.group;
    job.cin_g = job.c_in / job.group;
    job.cout_g = job.c_out / job.group;
    int64_t y_dims[TCONV_MAX_RANK] = {job.batch, job.c_out};
    memcpy(y_dims + 2, job.lat.coarse, (size_t)job.lat.rank * sizeof(int64_t));
    tconv_rt_tensor *y;
    st = tconv_kernel_alloc_output(ctx, 0, TCONV_DTYPE_FLOAT, ops.x->rank, y_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    job.x = ops.x->data;
    job.w = ops.w->data;
    job.bias = ops.b ? ops.b->data : NULL;
    job.y = y->data;
    if (job.group > 1 && job.cin_g == 1)
        return conv_run_depthwise(ctx, &job);
    return conv_run_gemm(ctx, &job);
}

const tconv_kernel_def tconv_kernels_conv[] = {
    {"", "ConvTranspose", 1, 22, run_conv_transpose},
    {"", "Conv", 1, 22, run_conv},
    {NULL, NULL, 0, 0, NULL},
};
