/* The index mapping Conv and ConvTranspose share, and the column blocks built on it.
 *
 * Both ops relate a "coarse" grid and a "fine" grid through kernel taps: fine = coarse * stride
 * + tap * dilation - pad_begin. For ConvTranspose the coarse grid is X and the fine grid is Y;
 * for Conv the coarse grid is Y and the fine grid is X. So one mapping serves col2im
 * (ConvTranspose adds each GEMM column into Y, skipping fine positions outside its window) and
 * im2col (Conv gathers X, zeros outside the input). Positions are taken in column blocks of
 * runs along the last axis, so that a block stays in cache. */
#ifndef TC_RUNTIME_CONV_LATTICE_H
#define TC_RUNTIME_CONV_LATTICE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/conv_transpose_geometry.h"
#include "runtime/compute/compute.h"

/* Floats of im2col/col2im scratch per column block (about 256 KiB: L2-resident). */
#define TC_COL_BLOCK_TARGET_FLOATS (64 * 1024)
/* Column blocks are multiples of this (of every GEMM micro-tile width: 32 and 48). */
#define TC_COL_BLOCK_GRANULE 96

typedef struct tc_lattice {
    int rank;
    int64_t coarse[TC_MAX_SPATIAL];
    int64_t fine[TC_MAX_SPATIAL];
    int64_t kernel[TC_MAX_SPATIAL];
    int64_t strides[TC_MAX_SPATIAL];
    int64_t dilations[TC_MAX_SPATIAL];
    int64_t pad_begin[TC_MAX_SPATIAL];
    /* Fine positions that take values: [window_lo, window_hi) per axis, within [0, fine) (the
     * whole grid unless a fused Slice/Pad narrows it; tc_lattice_finish sets the default). */
    int64_t window_lo[TC_MAX_SPATIAL], window_hi[TC_MAX_SPATIAL];
    bool windowed;
    int64_t coarse_size, fine_size, kernel_size; /* products over the axes */
} tc_lattice;

static inline int64_t tc_max_i64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

static inline int64_t tc_min_i64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* x rounded up to a multiple of `multiple` (> 0), for x >= 0 */
static inline int64_t tc_round_up_i64(int64_t x, int64_t multiple) {
    return (x + multiple - 1) / multiple * multiple;
}

/* A run of coarse positions along the last axis: `length` columns starting at column `col` of
 * the block, at last-axis index u0 of the line whose other coordinates are `outer`. */
typedef struct tc_coarse_run {
    int64_t col;
    int64_t length;
    int64_t u0;
    int64_t outer[TC_MAX_SPATIAL];
} tc_coarse_run;

/* Called for each run of a block (tc_lattice_for_each_run). */
typedef void (*tc_run_fn)(void *ctx, const tc_coarse_run *run);

static inline void tc_floats_fill(float *dst, int64_t count, float value) {
    int64_t i = 0;
    if (value == 0.0f) {
        memset(dst, 0, (size_t)count * sizeof(float));
        return;
    }
#if TC_HAVE_VECTOR_EXT
    tc_v4f v = {value, value, value, value};
    for (; i + 4 <= count; i += 4)
        tc_v4f_store(dst + i, v);
#endif
    for (; i < count; i++)
        dst[i] = value;
}

/* Below this many floats, copies and fills are inline loops: at small spatial sizes im2col is
 * thousands of copies of a few floats, where a libc call costs more than the copy. */
#define SHORT_RUN_FLOATS 32

static inline void tc_floats_copy(float *restrict dst, const float *restrict src, int64_t count) {
    if (count >= SHORT_RUN_FLOATS) {
        memcpy(dst, src, (size_t)count * sizeof(float));
        return;
    }
    int64_t i = 0;
#if TC_HAVE_VECTOR_EXT
    for (; i + 4 <= count; i += 4)
        tc_v4f_store(dst + i, tc_v4f_load(src + i));
#endif
    for (; i < count; i++)
        dst[i] = src[i];
}

/* dst[i] = src[i * stride] */
static inline void tc_floats_gather(float *restrict dst, const float *restrict src, int64_t count,
                                    int64_t stride) {
    if (stride == 1) {
        tc_floats_copy(dst, src, count);
    } else {
        for (int64_t i = 0; i < count; i++)
            dst[i] = src[i * stride];
    }
}

/* dst[2j] = a[j], dst[2j + 1] = b[j]: two phases of a stride-2 row joined */
void tc_floats_interleave(float *restrict dst, const float *restrict a, const float *restrict b,
                          int64_t count);

/* a[j] = src[2j], b[j] = src[2j + 1]: a stride-2 row split into its two phases */
void tc_floats_deinterleave(float *restrict a, float *restrict b, const float *restrict src,
                            int64_t count);
/* The same for `lines` lines: line i reads src + i * src_ld and writes a + i * dst_ld and
 * b + i * dst_ld (a stride-2 Conv's phase planes, split in one call instead of one a line). */
void tc_floats_deinterleave_lines(float *restrict a, float *restrict b, int64_t dst_ld,
                                  const float *restrict src, int64_t src_ld, int64_t count,
                                  int64_t lines);

static inline void tc_floats_zero(float *dst, int64_t count) {
    if (count >= SHORT_RUN_FLOATS) {
        memset(dst, 0, (size_t)count * sizeof(float));
        return;
    }
    int64_t i = 0;
#if TC_HAVE_VECTOR_EXT
    for (; i + 4 <= count; i += 4)
        tc_v4f_store(dst + i, (tc_v4f){0, 0, 0, 0});
#endif
    for (; i < count; i++)
        dst[i] = 0.0f;
}

/* A run of col rows for one tap mapped onto the fine planes: columns [lo, hi) go to fine
 * positions start, start + stride, ... of every plane. */
typedef struct tc_mapped_tap {
    bool valid;
    int64_t lo, hi, start;
} tc_mapped_tap;

/* Splits the block [p0, p0 + n) of flattened coarse positions into runs along the last axis and
 * calls fn for each. */
void tc_lattice_for_each_run(const tc_lattice *lat, int64_t p0, int64_t n, tc_run_fn fn, void *ctx);
/* Advances a kernel tap odometer (row-major, last axis fastest). */
void tc_lattice_next_tap(const tc_lattice *lat, int64_t *tap);
/* Maps a run through kernel tap `tap` onto the fine planes. */
void tc_lattice_map_tap(const tc_lattice *lat, const tc_coarse_run *run, const int64_t *tap,
                        tc_mapped_tap *m);
/* Adds every column of the block [p0, p0 + cols) of col (planes * kernel_size rows) into the
 * fine planes. */
void tc_col2im_block(const tc_lattice *lat, const float *col, int64_t planes, int64_t p0,
                     int64_t cols, float *fine);
/* The same, but each fine position a column reaches is set to its value plus bias[plane] (NULL:
 * plus 0), not added to: for a lattice whose taps never reach a position twice (kernel at most
 * the stride, dilation 1), so that the planes need no fill first. */
void tc_col2im_block_store(const tc_lattice *lat, const float *col, int64_t planes, int64_t p0,
                           int64_t cols, const float *bias, float *fine);
/* Fills col (planes * kernel_size rows of `cols`) from the fine planes for the coarse block
 * [p0, p0 + cols). */
void tc_im2col_block(const tc_lattice *lat, const float *fine, int64_t planes, int64_t p0,
                     int64_t cols, float *col);
/* Whether fine == coarse position for position (1x1 kernel, stride 1, no pad, same size), so
 * that the GEMM can read or write the fine grid directly. */
bool tc_lattice_is_identity(const tc_lattice *lat);
/* Sets the default window and the sizes; false when a size overflows. */
bool tc_lattice_finish(tc_lattice *lat);
/* Tap t's offset t*d - pad_begin on axis i as stride phase a in [0, s) and shift b:
 * t*d - pad_begin = s*b + a, so output position o reads phase plane a at o + b. */
void tc_lattice_tap_phase(const tc_lattice *lat, int i, int64_t t, int64_t *a, int64_t *b);
/* The masked flat read of a Conv lattice (Conv's masked path, ConvTranspose's phase form): each
 * tap's flat shift in an input channel's plane(s) and its lane masks over the output positions
 * (ceil(coarse_size / 16) words a tap: the positions whose read stays inside X), and for each
 * word whether it is all ones in every tap (`full`). Without phase_planes the plane is X
 * itself, read at stride 1 (as wide as the output on every axis but the first); with them, X's
 * stride phase planes at the output's dims, tap t reading phase a(t) at q + b(t). */
void tc_lattice_masked_taps(const tc_lattice *lat, bool phase_planes, int64_t *shifts,
                            uint16_t *masks, uint8_t *full);
/* The masked GEMM's B (tc_sgemm_op.b_rows, b_masks) for `channels` input planes, `plane` floats
 * apart from `base`: row t * channels + c is plane c at tap t's shift, with tap t's masks (`words`
 * a tap). Tap-major, so each run of `channels` rows shares one mask pointer and the micro-kernel
 * loads a panel's masks once a run, not every step (A's depth must be in the same order).
 * base is an address, not a pointer: a shift before the plane is only read through masked-off
 * lanes. */
void tc_lattice_masked_rows(uintptr_t base, int64_t plane, int64_t channels, int64_t taps,
                            const int64_t *shifts, const uint16_t *masks, int64_t words,
                            const float **rows, const uint16_t **row_masks);
/* Columns per block for `rows` col rows: about TC_COL_BLOCK_TARGET_FLOATS floats, a multiple
 * of the GEMM tile, at least min_cols, at most all of them. */
int64_t tc_conv_block_columns(int64_t rows, int64_t total, int64_t min_cols);

#endif
