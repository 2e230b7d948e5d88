/* The coarse/fine index mapping of Conv and ConvTranspose, col2im and im2col
 * (conv_lattice.h). */
#include "runtime/kernels/conv_lattice.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel_util.h"

void tc_lattice_for_each_run(const tc_lattice *lat, int64_t p0, int64_t n, tc_run_fn fn,
                             void *ctx) {
    int last = lat->rank - 1;
    int64_t line_len = lat->coarse[last];
    tc_coarse_run run;
    for (int64_t p = p0; p < p0 + n; p += run.length) {
        int64_t line = p / line_len;
        run.u0 = p % line_len;
        run.length = tc_min_i64(line_len - run.u0, p0 + n - p);
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
static bool map_run(const tc_lattice *lat, const tc_coarse_run *run, const int64_t *tap,
                    int64_t *lo, int64_t *hi, int64_t *fine_start) {
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
    int64_t first = s == 1 ? w_lo - base : tc_ceil_div(w_lo - base, s);
    int64_t end = s == 1 ? w_hi - base : tc_floor_div(w_hi - 1 - base, s) + 1;
    int64_t u_lo = tc_max_i64(run->u0, first);
    int64_t u_hi = tc_min_i64(run->u0 + run->length, end);
    if (u_lo >= u_hi)
        return false;
    *lo = u_lo - run->u0;
    *hi = u_hi - run->u0;
    *fine_start = offset * lat->fine[last] + u_lo * s + base;
    return true;
}

/* Advances a kernel tap odometer (row-major, last axis fastest). */
void tc_lattice_next_tap(const tc_lattice *lat, int64_t *tap) {
    for (int i = lat->rank - 1; i >= 0; i--) {
        if (++tap[i] < lat->kernel[i])
            return;
        tap[i] = 0;
    }
}

/* ---------------------------------------------------------------- col2im and im2col */

/* col rows are (plane, tap) pairs, plane-major; `cols` columns per row. */
typedef struct col_block {
    const tc_lattice *lat;
    float *col;
    int64_t cols;
    int64_t planes;
    float *fine;       /* col2im: Y planes (written); im2col: X planes (read) */
    bool store;        /* col2im: write col + bias instead of adding col (taps never overlap) */
    const float *bias; /* with store: per plane, or NULL */
} col_block;

/* How col2im puts a value into a fine position: += v, or (store) = v + bias. */
typedef struct put_op {
    bool store;
    float bias;
} put_op;

#if TC_HAVE_VECTOR_EXT
#if defined(__clang__)
#define INTERLEAVE_LO(a, b) __builtin_shufflevector(a, b, 0, 4, 1, 5)
#define INTERLEAVE_HI(a, b) __builtin_shufflevector(a, b, 2, 6, 3, 7)
#define EVEN_LANES(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6)
#define ODD_LANES(a, b) __builtin_shufflevector(a, b, 1, 3, 5, 7)
#else
#define INTERLEAVE_LO(a, b) __builtin_shuffle(a, b, (tc_v4i){0, 4, 1, 5})
#define INTERLEAVE_HI(a, b) __builtin_shuffle(a, b, (tc_v4i){2, 6, 3, 7})
#define EVEN_LANES(a, b) __builtin_shuffle(a, b, (tc_v4i){0, 2, 4, 6})
#define ODD_LANES(a, b) __builtin_shuffle(a, b, (tc_v4i){1, 3, 5, 7})
#endif
#endif

/* dst[i * stride] = src[i] + bias */
static void store_strided(float *restrict dst, const float *restrict src, int64_t count,
                          int64_t stride, float bias) {
    int64_t i = 0;
    if (stride != 1) {
        for (; i < count; i++)
            dst[i * stride] = src[i] + bias;
        return;
    }
#if TC_HAVE_VECTOR_EXT
    tc_v4f vbias = {bias, bias, bias, bias};
    for (; i + 4 <= count; i += 4)
        tc_v4f_store(dst + i, tc_v4f_load(src + i) + vbias);
#endif
    for (; i < count; i++)
        dst[i] = src[i] + bias;
}

/* dst[i * stride] += src[i], or the store */
static void accumulate_strided(float *restrict dst, const float *restrict src, int64_t count,
                               int64_t stride, put_op op) {
    int64_t i = 0;
    if (op.store) {
        store_strided(dst, src, count, stride, op.bias);
        return;
    }
#if TC_HAVE_VECTOR_EXT
    /* Stride 2 (a kernel tap without a pair: the last of an odd kernel): the vectors of dst
     * get src interleaved with -0, which leaves the odd positions as they are, -0 and NaN
     * included (x + -0 == x), where one scalar read-modify-write an element was a quarter of
     * keras_decoder's ConvTransposes */
    if (stride == 2) {
        tc_v4f minus_zero = {-0.0f, -0.0f, -0.0f, -0.0f};
        /* i + 4 < count: the vectors' last odd position, dst[2i + 7], lies inside the span; the
         * loop below does the last 1 to 4 */
        for (; i + 4 < count; i += 4) {
            tc_v4f v = tc_v4f_load(src + i);
            tc_v4f_store(dst + 2 * i, tc_v4f_load(dst + 2 * i) + INTERLEAVE_LO(v, minus_zero));
            tc_v4f_store(dst + 2 * i + 4,
                         tc_v4f_load(dst + 2 * i + 4) + INTERLEAVE_HI(v, minus_zero));
        }
    }
#endif
    if (stride != 1) {
        for (; i < count; i++)
            dst[i * stride] += src[i];
        return;
    }
#if TC_HAVE_VECTOR_EXT
    for (; i + 4 <= count; i += 4)
        tc_v4f_store(dst + i, tc_v4f_load(dst + i) + tc_v4f_load(src + i));
#endif
    for (; i < count; i++)
        dst[i] += src[i];
}

/* dst[2j] += a[j], dst[2j + 1] += b[j], or the store */
static void accumulate_interleaved(float *restrict dst, const float *restrict a,
                                   const float *restrict b, int64_t count, put_op op) {
    int64_t j = 0;
#if TC_HAVE_VECTOR_EXT
    if (op.store) {
        tc_v4f bias = {op.bias, op.bias, op.bias, op.bias};
        for (; j + 4 <= count; j += 4) {
            tc_v4f va = tc_v4f_load(a + j), vb = tc_v4f_load(b + j);
            tc_v4f_store(dst + 2 * j, INTERLEAVE_LO(va, vb) + bias);
            tc_v4f_store(dst + 2 * j + 4, INTERLEAVE_HI(va, vb) + bias);
        }
    } else {
        for (; j + 4 <= count; j += 4) {
            tc_v4f va = tc_v4f_load(a + j), vb = tc_v4f_load(b + j);
            tc_v4f_store(dst + 2 * j, tc_v4f_load(dst + 2 * j) + INTERLEAVE_LO(va, vb));
            tc_v4f_store(dst + 2 * j + 4, tc_v4f_load(dst + 2 * j + 4) + INTERLEAVE_HI(va, vb));
        }
    }
#endif
    for (; j < count; j++) {
        dst[2 * j] = op.store ? a[j] + op.bias : dst[2 * j] + a[j];
        dst[2 * j + 1] = op.store ? b[j] + op.bias : dst[2 * j + 1] + b[j];
    }
}

static void accumulate_row_part(float *plane, const float *row, const tc_mapped_tap *m,
                                int64_t from, int64_t to, int64_t stride, put_op op) {
    if (to > from)
        accumulate_strided(plane + m->start + (from - m->lo) * stride, row + from, to - from,
                           stride, op);
}

/* Stride 2, dilation 1: taps k and k+1 fill alternate positions of the same fine span, so
 * their rows are interleaved and added with vectors where both are valid. */
static void accumulate_tap_pair(float *plane, const float *row_a, const tc_mapped_tap *a,
                                const float *row_b, const tc_mapped_tap *b, put_op op) {
    int64_t lo = a->lo > b->lo ? a->lo : b->lo, hi = a->hi < b->hi ? a->hi : b->hi;
    if (!a->valid || !b->valid || lo >= hi) {
        if (a->valid)
            accumulate_row_part(plane, row_a, a, a->lo, a->hi, 2, op);
        if (b->valid)
            accumulate_row_part(plane, row_b, b, b->lo, b->hi, 2, op);
        return;
    }
    accumulate_interleaved(plane + a->start + (lo - a->lo) * 2, row_a + lo, row_b + lo, hi - lo,
                           op);
    accumulate_row_part(plane, row_a, a, a->lo, lo, 2, op);
    accumulate_row_part(plane, row_a, a, hi, a->hi, 2, op);
    accumulate_row_part(plane, row_b, b, b->lo, lo, 2, op);
    accumulate_row_part(plane, row_b, b, hi, b->hi, 2, op);
}

void tc_lattice_map_tap(const tc_lattice *lat, const tc_coarse_run *run, const int64_t *tap,
                        tc_mapped_tap *m) {
    m->valid = map_run(lat, run, tap, &m->lo, &m->hi, &m->start);
}

/* Adds the col rows of one tap (or a stride-2 pair of taps) into every plane. */
static void col2im_taps(const col_block *b, const tc_coarse_run *run, int64_t t,
                        const tc_mapped_tap *first, const tc_mapped_tap *second) {
    const tc_lattice *lat = b->lat;
    int64_t stride = lat->strides[lat->rank - 1];
    if (!first->valid && (!second || !second->valid))
        return;
    for (int64_t c = 0; c < b->planes; c++) {
        float *plane = b->fine + c * lat->fine_size;
        const float *row = b->col + (c * lat->kernel_size + t) * b->cols + run->col;
        put_op op = {b->store, b->bias ? b->bias[c] : 0.0f};
        if (second)
            accumulate_tap_pair(plane, row, first, row + b->cols, second, op);
        else
            accumulate_row_part(plane, row, first, first->lo, first->hi, stride, op);
    }
}

/* What col2im or im2col does for one tap, or a stride-2 pair of taps (second non-NULL). */
typedef void (*taps_fn)(const col_block *b, const tc_coarse_run *run, int64_t t,
                        const tc_mapped_tap *first, const tc_mapped_tap *second);

/* Calls fn for every tap of a run; at stride 2 and dilation 1 along the last axis, for pairs of
 * neighbouring taps, which read or write alternate positions of the same fine span. */
static void for_each_tap(const col_block *b, const tc_coarse_run *run, taps_fn fn) {
    const tc_lattice *lat = b->lat;
    int last = lat->rank - 1;
    bool pairs = lat->strides[last] == 2 && lat->dilations[last] == 1;
    int64_t tap[TC_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < lat->kernel_size; t++, tc_lattice_next_tap(lat, tap)) {
        tc_mapped_tap first, second;
        tc_lattice_map_tap(lat, run, tap, &first);
        if (pairs && tap[last] + 1 < lat->kernel[last]) {
            tc_lattice_next_tap(lat, tap);
            tc_lattice_map_tap(lat, run, tap, &second);
            fn(b, run, t++, &first, &second);
        } else {
            fn(b, run, t, &first, NULL);
        }
    }
}

static void col2im_run(void *ctx, const tc_coarse_run *run) {
    for_each_tap(ctx, run, col2im_taps);
}

/* Adds every column of the block [p0, p0 + cols) into the fine planes. */
void tc_col2im_block(const tc_lattice *lat, const float *col, int64_t planes, int64_t p0,
                     int64_t cols, float *fine) {
    col_block b = {lat, (float *)col, cols, planes, fine, false, NULL};
    tc_lattice_for_each_run(lat, p0, cols, col2im_run, &b);
}

void tc_col2im_block_store(const tc_lattice *lat, const float *col, int64_t planes, int64_t p0,
                           int64_t cols, const float *bias, float *fine) {
    col_block b = {lat, (float *)col, cols, planes, fine, true, bias};
    tc_lattice_for_each_run(lat, p0, cols, col2im_run, &b);
}

static inline __attribute__((always_inline)) void interleave_body(float *restrict dst,
                                                                  const float *restrict a,
                                                                  const float *restrict b,
                                                                  int64_t count) {
    for (int64_t j = 0; j < count; j++) {
        dst[2 * j] = a[j];
        dst[2 * j + 1] = b[j];
    }
}

/* The AVX-512 copy: the compiler turns the plain loop into two permutes per 16 pairs. */
TC_TARGET_AVX512 static void interleave_avx512(float *restrict dst, const float *restrict a,
                                               const float *restrict b, int64_t count) {
    interleave_body(dst, a, b, count);
}

void tc_floats_interleave(float *restrict dst, const float *restrict a, const float *restrict b,
                          int64_t count) {
    if (count >= 16 && tc_cpu_has_avx512())
        interleave_avx512(dst, a, b, count);
    else
        interleave_body(dst, a, b, count);
}

/* The portable split: 4 floats a step where the vector extensions exist. */
static void deinterleave_portable(float *restrict a, float *restrict b, int64_t dst_ld,
                                  const float *restrict src, int64_t src_ld, int64_t count,
                                  int64_t lines) {
    for (int64_t line = 0; line < lines; line++, a += dst_ld, b += dst_ld, src += src_ld) {
        int64_t j = 0;
#if TC_HAVE_VECTOR_EXT
        for (; j + 4 <= count; j += 4) {
            tc_v4f lo = tc_v4f_load(src + 2 * j), hi = tc_v4f_load(src + 2 * j + 4);
            tc_v4f_store(a + j, EVEN_LANES(lo, hi));
            tc_v4f_store(b + j, ODD_LANES(lo, hi));
        }
#endif
        for (; j < count; j++) {
            a[j] = src[2 * j];
            b[j] = src[2 * j + 1];
        }
    }
}

/* The AVX-512 copy: the compiler turns the plain loop into two permutes per 32 source floats,
 * four times the portable copy's width. */
TC_TARGET_AVX512 static void deinterleave_avx512(float *restrict a, float *restrict b,
                                                 int64_t dst_ld, const float *restrict src,
                                                 int64_t src_ld, int64_t count, int64_t lines) {
    for (int64_t line = 0; line < lines; line++, a += dst_ld, b += dst_ld, src += src_ld) {
        for (int64_t j = 0; j < count; j++) {
            a[j] = src[2 * j];
            b[j] = src[2 * j + 1];
        }
    }
}

void tc_floats_deinterleave_lines(float *restrict a, float *restrict b, int64_t dst_ld,
                                  const float *restrict src, int64_t src_ld, int64_t count,
                                  int64_t lines) {
    if (count >= 16 && tc_cpu_has_avx512())
        deinterleave_avx512(a, b, dst_ld, src, src_ld, count, lines);
    else
        deinterleave_portable(a, b, dst_ld, src, src_ld, count, lines);
}

void tc_floats_deinterleave(float *restrict a, float *restrict b, const float *restrict src,
                            int64_t count) {
    tc_floats_deinterleave_lines(a, b, 0, src, 0, count, 1);
}

/* Columns [from, to) of one col row from a fine plane. */
static void gather_row_part(float *row, const float *plane, const tc_mapped_tap *m, int64_t from,
                            int64_t to, int64_t stride) {
    if (to > from)
        tc_floats_gather(row + from, plane + m->start + (from - m->lo) * stride, to - from, stride);
}

/* One col row of `length` columns: the mapped part gathered, the rest zero. */
static void gather_row(float *row, const float *plane, const tc_mapped_tap *m, int64_t length,
                       int64_t stride) {
    if (!m->valid) {
        tc_floats_zero(row, length);
        return;
    }
    tc_floats_zero(row, m->lo);
    gather_row_part(row, plane, m, m->lo, m->hi, stride);
    tc_floats_zero(row + m->hi, length - m->hi);
}

/* Stride 2, dilation 1: taps k and k+1 read alternate positions of the same fine span. */
static void gather_tap_pair(float *row_a, const tc_mapped_tap *a, float *row_b,
                            const tc_mapped_tap *b, const float *plane, int64_t length) {
    int64_t lo = a->lo > b->lo ? a->lo : b->lo, hi = a->hi < b->hi ? a->hi : b->hi;
    if (!a->valid || !b->valid || lo >= hi) {
        gather_row(row_a, plane, a, length, 2);
        gather_row(row_b, plane, b, length, 2);
        return;
    }
    tc_floats_deinterleave(row_a + lo, row_b + lo, plane + a->start + (lo - a->lo) * 2, hi - lo);
    tc_floats_zero(row_a, a->lo);
    gather_row_part(row_a, plane, a, a->lo, lo, 2);
    gather_row_part(row_a, plane, a, hi, a->hi, 2);
    tc_floats_zero(row_a + a->hi, length - a->hi);
    tc_floats_zero(row_b, b->lo);
    gather_row_part(row_b, plane, b, b->lo, lo, 2);
    gather_row_part(row_b, plane, b, hi, b->hi, 2);
    tc_floats_zero(row_b + b->hi, length - b->hi);
}

/* Fills the col rows of one tap (or a stride-2 pair of taps) from every plane. */
static void im2col_taps(const col_block *b, const tc_coarse_run *run, int64_t t,
                        const tc_mapped_tap *first, const tc_mapped_tap *second) {
    const tc_lattice *lat = b->lat;
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

static void im2col_run(void *ctx, const tc_coarse_run *run) {
    for_each_tap(ctx, run, im2col_taps);
}

/* Fills col (planes * kernel_size rows of `cols`) from the fine planes for the coarse block
 * [p0, p0 + cols). */
void tc_im2col_block(const tc_lattice *lat, const float *fine, int64_t planes, int64_t p0,
                     int64_t cols, float *col) {
    col_block b = {lat, col, cols, planes, (float *)fine, false, NULL};
    tc_lattice_for_each_run(lat, p0, cols, im2col_run, &b);
}

/* Whether fine == coarse position for position (1x1 kernel, stride 1, no pad, same size), so
 * that the GEMM can read or write the fine grid directly. */
bool tc_lattice_is_identity(const tc_lattice *lat) {
    for (int i = 0; i < lat->rank; i++) {
        if (lat->kernel[i] != 1 || lat->strides[i] != 1 || lat->pad_begin[i] != 0 ||
            lat->coarse[i] != lat->fine[i] || lat->windowed)
            return false;
    }
    return true;
}

bool tc_lattice_finish(tc_lattice *lat) {
    for (int i = 0; i < lat->rank && !lat->windowed; i++) {
        lat->window_lo[i] = 0;
        lat->window_hi[i] = lat->fine[i];
    }
    return tc_shape_elements(lat->coarse, lat->rank, &lat->coarse_size) &&
           tc_shape_elements(lat->fine, lat->rank, &lat->fine_size) &&
           tc_shape_elements(lat->kernel, lat->rank, &lat->kernel_size);
}

/* Columns per block for `rows` col rows: about TC_COL_BLOCK_TARGET_FLOATS floats, a multiple of
 * the GEMM tile, at least min_cols, at most all of them. */
int64_t tc_conv_block_columns(int64_t rows, int64_t total, int64_t min_cols) {
    int64_t cols = TC_COL_BLOCK_TARGET_FLOATS / tc_max_i64(rows, 1);
    cols = cols / TC_COL_BLOCK_GRANULE * TC_COL_BLOCK_GRANULE;
    cols = tc_max_i64(cols, tc_max_i64(min_cols, TC_COL_BLOCK_GRANULE));
    return tc_min_i64(cols, tc_max_i64(total, 1));
}

/* ---------------------------------------------------------------- the masked flat read */

void tc_lattice_tap_phase(const tc_lattice *lat, int i, int64_t t, int64_t *a, int64_t *b) {
    int64_t q = t * lat->dilations[i] - lat->pad_begin[i], s = lat->strides[i];
    if (s == 1) { /* no division for the common case */
        *a = 0;
        *b = q;
        return;
    }
    *a = ((q % s) + s) % s;
    *b = (q - *a) / s;
}

/* bits [from, to) of the mask words set */
static void mask_set_bits(uint16_t *m, int64_t from, int64_t to) {
    int64_t q = from;
    if (q < to && (q & 15) != 0) { /* the first word's part */
        int64_t bit = q & 15, n = tc_min_i64(16 - bit, to - q);
        m[q >> 4] |= (uint16_t)(((1u << n) - 1u) << bit);
        q += n;
    }
    for (; q + 16 <= to; q += 16) /* whole words */
        m[q >> 4] = 0xFFFF;
    if (q < to)
        m[q >> 4] |= (uint16_t)((1u << (to - q)) - 1u);
}

/* A tap's mask over the output positions: the box [lo, hi) of output coordinates whose read
 * stays inside X; only the lines inside the box are visited. */
static void masked_tap(const tc_lattice *lat, const int64_t *lo, const int64_t *hi, uint16_t *m,
                       int64_t words) {
    int last = lat->rank - 1;
    int64_t width = lat->coarse[last];
    memset(m, 0, (size_t)words * sizeof *m);
    for (int i = 0; i <= last; i++) {
        if (hi[i] <= lo[i])
            return;
    }
    /* the box spans whole lines of a 2-D grid: one run of bits (a 3x3 Conv's middle column) */
    if (last == 1 && lo[1] == 0 && hi[1] == width) {
        mask_set_bits(m, lo[0] * width, hi[0] * width);
        return;
    }
    int64_t o[TC_MAX_SPATIAL];
    memcpy(o, lo, (size_t)last * sizeof o[0]);
    for (;;) {
        int64_t line = 0;
        for (int i = 0; i < last; i++)
            line = line * lat->coarse[i] + o[i];
        mask_set_bits(m, line * width + lo[last], line * width + hi[last]);
        int i = last - 1;
        for (; i >= 0 && ++o[i] == hi[i]; i--)
            o[i] = lo[i];
        if (i < 0)
            return;
    }
}

void tc_lattice_masked_taps(const tc_lattice *lat, bool phase_planes, int64_t *shifts,
                            uint16_t *masks, uint8_t *full) {
    int64_t words = (lat->coarse_size + 15) / 16;
    int64_t tap[TC_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < lat->kernel_size; t++, tc_lattice_next_tap(lat, tap)) {
        int64_t phase = 0, shift = 0, lo[TC_MAX_SPATIAL], hi[TC_MAX_SPATIAL];
        for (int i = 0; i < lat->rank; i++) {
            int64_t a, b, s = lat->strides[i];
            tc_lattice_tap_phase(lat, i, tap[i], &a, &b);
            phase = phase * s + a;
            /* at stride 1 the plane is X, as wide as the output on every axis but the first */
            shift = shift * (phase_planes ? lat->coarse[i] : lat->fine[i]) + b;
            int64_t end = s == 1 ? lat->fine[i] - b : tc_ceil_div(lat->fine[i] - a, s) - b;
            lo[i] = tc_min_i64(tc_max_i64(-b, 0), lat->coarse[i]);
            hi[i] = tc_max_i64(tc_min_i64(end, lat->coarse[i]), lo[i]);
        }
        shifts[t] = phase * lat->coarse_size + shift;
        masked_tap(lat, lo, hi, masks + t * words, words);
    }
    /* a word is full where every tap's mask is: the taps' words ANDed, tap by tap (in order of
     * memory) */
    for (int64_t w = 0; w < words; w++)
        full[w] = 1;
    for (int64_t t = 0; t < lat->kernel_size; t++)
        for (int64_t w = 0; w < words; w++)
            full[w] &= masks[t * words + w] == 0xFFFF;
}

void tc_lattice_masked_rows(uintptr_t base, int64_t plane, int64_t channels, int64_t taps,
                            const int64_t *shifts, const uint16_t *masks, int64_t words,
                            const float **rows, const uint16_t **row_masks) {
    for (int64_t t = 0; t < taps; t++) {
        for (int64_t c = 0; c < channels; c++) {
            int64_t at = c * plane + shifts[t];
            rows[t * channels + c] = (const float *)(base + (uintptr_t)at * sizeof(float));
            row_masks[t * channels + c] = masks + t * words;
        }
    }
}
