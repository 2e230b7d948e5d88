#include "runtime/compute/gemm.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/compute/cpu_features.h"
#include "runtime/compute/parallel.h"
#include "runtime/compute/vec4.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TC_GEMM_X86 1
#include <immintrin.h>
#else
#define TC_GEMM_X86 0
#endif

/* The largest micro-tile of any kernel (edge tiles go through a buffer this big). */
#define MAX_MR 12
#define MAX_NR 48
/* Packed panels start on a cache line. */
#define PACK_ALIGN_FLOATS 16

typedef void (*micro_fn)(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                         float alpha, float beta);
/* The same tile with B row p read at rows[p] + col, its first `cols` (1..nr) columns and first
 * `n_rows` (1..mr) rows only: the others are neither computed, read nor stored (NULL where a
 * kernel has no such form). With masks (tc_sgemm_op.b_masks from the k-block's first row), B's
 * lanes outside a row's mask read as zero and are not loaded. */
typedef void (*micro_rows_fn)(int64_t kc, const float *pa, const float *const *rows,
                              const uint16_t *const *masks, int64_t col, int cols, int n_rows,
                              float *c, int64_t ldc, float alpha, float beta);

/* A partial row panel (1 .. mr-1 rows) of packed B's full panel pb0, and of the next full panel
 * pb1 too unless NULL (its columns follow in C): only those rows computed, each element summed
 * in the order of the full tile (the same bits). NULL where a kernel has none. */
typedef void (*micro_tail_fn)(int64_t kc, const float *pa, const float *pb0, const float *pb1,
                              int n_rows, float *c, int64_t ldc, float alpha, float beta);

/* A micro-kernel and the blocking that suits it: mc x kc of A stays in L2, kc x nr of B in L1,
 * kc x nc of B in L3. */
typedef struct micro_kernel {
    tc_gemm_isa isa;
    int mr, nr;
    int64_t mc, kc, nc;
    micro_fn fn;
    micro_rows_fn rows_fn;
    micro_tail_fn tail_fn;
    /* B read in place (rows_fn) for at most in_place_panels row panels of at most in_place_cols
     * columns (0: any), packed otherwise (reads_b_in_place) */
    int64_t in_place_panels, in_place_cols;
    int64_t lanes; /* floats a vector: a B read in place computes a partial panel in these */
    /* row panels read in place when B's rows are spread (b_rows_spread); 0: spreading them is
     * not worth a copy (AVX-512 reads 2-3 lines a row a step, and was not measured with it) */
    int64_t spread_panels;
    /* A product of at most this many rows reads B in place two column panels at a time
     * (rows_fn with 2 * nr columns: rows_step), so that its few rows still have enough
     * accumulators for the FMA latency; 0: one panel at a time. */
    int pair_panel_rows;
} micro_kernel;

/* ---------------------------------------------------------------- micro-kernels */

/* Every micro-kernel computes AB = sum_p pa[p*MR + r] * pb[p*NR + c] for a full MR x NR tile and
 * stores C = alpha*AB + beta*C (C not read when beta == 0). */

#if TC_HAVE_VECTOR_EXT

static void micro_portable_4x8(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                               float alpha, float beta) {
    tc_v4f acc[4][2] = {{{0}}};
    for (int64_t p = 0; p < kc; p++) {
        tc_v4f b0 = tc_v4f_load(pb), b1 = tc_v4f_load(pb + 4);
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            acc[r][0] += pa[r] * b0;
            acc[r][1] += pa[r] * b1;
        }
        pa += 4;
        pb += 8;
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        float *cr = c + r * ldc;
        if (beta == 0.0f) {
            tc_v4f_store(cr, alpha * acc[r][0]);
            tc_v4f_store(cr + 4, alpha * acc[r][1]);
        } else {
            tc_v4f_store(cr, alpha * acc[r][0] + beta * tc_v4f_load(cr));
            tc_v4f_store(cr + 4, alpha * acc[r][1] + beta * tc_v4f_load(cr + 4));
        }
    }
}
#else
static void micro_portable_4x8(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                               float alpha, float beta) {
    float acc[4][8] = {{0}};
    for (int64_t p = 0; p < kc; p++) {
        for (int r = 0; r < 4; r++)
            for (int j = 0; j < 8; j++)
                acc[r][j] += pa[r] * pb[j];
        pa += 4;
        pb += 8;
    }
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 8; j++)
            c[r * ldc + j] = alpha * acc[r][j] + (beta == 0.0f ? 0.0f : beta * c[r * ldc + j]);
}
#endif

#if TC_GEMM_X86
/* The x86 kernels read B either packed (pb, nr floats a step) or, when rows is set, straight
 * from the row pointers of a b_rows product (rows[p] + col): with few row panels to share it, a
 * packed B panel costs more to build than it saves. Each body is inlined into one function per
 * form, so the packed loop has no test in it. */
#define B_STEP(rows, col, pb, p, nr) ((rows) ? (rows)[p] + (col) : (pb) + (p) * (nr))

/* AVX2 (6x16, 16 of the 16 ymm registers): both forms, as the AVX-512 kernels below. Without
 * the row form an AVX2 CPU had none of the paths that read B in place (the masked Conv, the
 * ConvTranspose phase form, the few-positions GEMM reading W as it lies): on a Zen 3 core DCGAN
 * took 1.9 ms against onnxruntime's 1.1, 29% of it in pack_b's copy of the weights. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
avx2_6x16(int64_t kc, const float *pa, const float *pb, const float *const *rows, int64_t col,
          float *c, int64_t ldc, float alpha, float beta) {
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_ps();
#pragma GCC unroll 2
    for (int64_t p = 0; p < kc; p++) {
        const float *b = B_STEP(rows, col, pb, p, 16);
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
        for (int r = 0; r < 6; r++) {
            __m256 a = _mm256_broadcast_ss(pa + r);
            acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
        }
        pa += 6;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
        float *cr = c + r * ldc;
        if (beta == 0.0f) {
            _mm256_storeu_ps(cr, _mm256_mul_ps(va, acc[r][0]));
            _mm256_storeu_ps(cr + 8, _mm256_mul_ps(va, acc[r][1]));
        } else {
            _mm256_storeu_ps(
                cr, _mm256_fmadd_ps(va, acc[r][0], _mm256_mul_ps(vb, _mm256_loadu_ps(cr))));
            _mm256_storeu_ps(
                cr + 8, _mm256_fmadd_ps(va, acc[r][1], _mm256_mul_ps(vb, _mm256_loadu_ps(cr + 8))));
        }
    }
}

/* The lanes of an 8-float vector whose bits are set in `bits`, as the all-ones lanes that
 * _mm256_maskload_ps reads (a masked-off lane reads 0 and does not fault). */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256i avx2_lanes(unsigned bits) {
    const __m256i select = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)bits), select), select);
}

/* One step of an AVX2 tile: acc[r][v] += pa[r] * bv[v] for mr rows and nv 8-float vectors. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
avx2_step(int mr, int nv, const float *pa, const __m256 *bv, __m256 (*acc)[4]) {
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        __m256 a = _mm256_broadcast_ss(pa + r);
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            acc[r][v] = _mm256_fmadd_ps(a, bv[v], acc[r][v]);
    }
}

/* C = alpha * acc + beta * C for mr rows of nv 8-column vectors, the last one's lanes `last`
 * (bits): the row form's store, which both of its kernels share, so that an element has the
 * same bits whichever computes it. A partial last vector is stored through a buffer: a masked
 * store is microcoded on AMD's cores. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
avx2_rows_store(int mr, int nv, __m256 (*acc)[4], float *c, int64_t ldc, float alpha, float beta,
                unsigned last) {
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    __m256i tail = avx2_lanes(last);
    int tail_cols = __builtin_popcount(last);
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        float *cr = c + r * ldc;
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            bool partial = v == nv - 1 && last != 0xFF;
            __m256 y = _mm256_mul_ps(va, acc[r][v]);
            if (beta != 0.0f)
                y = _mm256_fmadd_ps(vb,
                                    partial ? _mm256_maskload_ps(cr + 8 * v, tail)
                                            : _mm256_loadu_ps(cr + 8 * v),
                                    y);
            if (!partial) {
                _mm256_storeu_ps(cr + 8 * v, y);
            } else {
                _Alignas(32) float part[8];
                _mm256_store_ps(part, y);
                for (int j = 0; j < tail_cols; j++)
                    cr[8 * v + j] = part[j];
            }
        }
    }
}

/* avx512_rows_part for AVX2: mr rows of a 6-row A panel, nv 8-column vectors (up to 4: two
 * panels, for 1 row: rows_step), the last one's lanes `last` (bits); masks read from a lane-mask
 * word a 16-column block (col a multiple of 16, as nr = 16 makes every panel's). */
__attribute__((target("avx2,fma"), always_inline)) static inline void
avx2_rows_part(int mr, int nv, int64_t kc, const float *pa, const float *const *rows,
               const uint16_t *const *masks, int64_t col, unsigned last, float *c, int64_t ldc,
               float alpha, float beta) {
    __m256 acc[6][4];
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            acc[r][v] = _mm256_setzero_ps();
    const uint16_t *held = NULL;
    __m256i lanes[4];
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++)
        lanes[v] = avx2_lanes(v == nv - 1 ? last : 0xFF);
    bool masked_last = last != 0xFF;
    for (int64_t p = 0; p < kc; p++) {
        const float *b = rows[p] + col;
        if (masks && masks[p] != held) {
            held = masks[p];
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++)
                lanes[v] = avx2_lanes((held[(col >> 4) + (v >> 1)] >> (8 * (v & 1))) &
                                      (v == nv - 1 ? last : 0xFF));
        }
        __m256 bv[4];
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            bv[v] = masks || (v == nv - 1 && masked_last) ? _mm256_maskload_ps(b + 8 * v, lanes[v])
                                                          : _mm256_loadu_ps(b + 8 * v);
        avx2_step(mr, nv, pa, bv, acc);
        pa += 6;
    }
    avx2_rows_store(mr, nv, acc, c, ldc, alpha, beta, last);
}

/* 1-3 rows of two whole panels (32 columns) with every lane on: avx2_rows_part without its lane
 * masks, with which at 3 rows GCC had too few registers for the 12 accumulators (it spilled
 * some on every step, and CycleGAN's 8 -> 3 7x7 Conv ran 1.5x slower than in single panels).
 * avx2_rows_part with this loop order spilled at 1 masked row instead (1.5x slower), so the
 * two stay apart; they share avx2_rows_store. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
avx2_rows_pair(int mr, int64_t kc, const float *pa, const float *const *rows, int64_t col, float *c,
               int64_t ldc, float alpha, float beta) {
    __m256 acc[3][4];
#pragma GCC unroll 3
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++)
            acc[r][v] = _mm256_setzero_ps();
    for (int64_t p = 0; p < kc; p++) {
        const float *b = rows[p] + col;
        /* a B vector at a time: 12 accumulators, 3 broadcasts and 1 B vector are the 16
         * registers (avx2_rows_part's order, all 4 B vectors first, spilled) */
        __m256 a[3];
#pragma GCC unroll 3
        for (int r = 0; r < mr; r++)
            a[r] = _mm256_broadcast_ss(pa + r);
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
            __m256 bv = _mm256_loadu_ps(b + 8 * v);
#pragma GCC unroll 3
            for (int r = 0; r < mr; r++)
                acc[r][v] = _mm256_fmadd_ps(a[r], bv, acc[r][v]);
        }
        pa += 6;
    }
    avx2_rows_store(mr, 4, acc, c, ldc, alpha, beta, 0xFF);
}

/* Two vectors under lane masks need more than 6 rows' 12 accumulators, 2 B vectors and the
 * broadcast leave of the 16 registers: GCC spilled an accumulator, whose store and reload then
 * bound every step (half of the kernel's samples in DCGAN fell on that store), so more than 3
 * such rows go as two halves that each load B again. */
#define AVX2_ROWS_CASE(ROWS, MASKS)                                                                \
    case ROWS:                                                                                     \
        if (nv == 1) {                                                                             \
            avx2_rows_part(ROWS, 1, kc, pa, rows, MASKS, col, last, c, ldc, alpha, beta);          \
        } else if (ROWS > 3 && (MASKS || last != 0xFF)) {                                          \
            avx2_rows_part(3, 2, kc, pa, rows, MASKS, col, last, c, ldc, alpha, beta);             \
            avx2_rows_part(ROWS - 3, 2, kc, pa + 3, rows, MASKS, col, last, c + 3 * ldc, ldc,      \
                           alpha, beta);                                                           \
        } else {                                                                                   \
            avx2_rows_part(ROWS, 2, kc, pa, rows, MASKS, col, last, c, ldc, alpha, beta);          \
        }                                                                                          \
        break;
#define AVX2_ROWS_1_TO_6(MASKS)                                                                    \
    AVX2_ROWS_CASE(1, MASKS)                                                                       \
    AVX2_ROWS_CASE(2, MASKS)                                                                       \
    AVX2_ROWS_CASE(3, MASKS)                                                                       \
    AVX2_ROWS_CASE(4, MASKS)                                                                       \
    AVX2_ROWS_CASE(5, MASKS)                                                                       \
    default:                                                                                       \
        AVX2_ROWS_CASE(6, MASKS)

__attribute__((target("avx2,fma"))) static void micro_avx2_6x16(int64_t kc, const float *pa,
                                                                const float *pb, float *c,
                                                                int64_t ldc, float alpha,
                                                                float beta) {
    avx2_6x16(kc, pa, pb, NULL, 0, c, ldc, alpha, beta);
}

/* rows_avx2_6x16's two panels of 1-3 rows (rows_step), in a function of their own: inlined
 * into its switch, they moved the other cases' loops, and a Conv of 8 output channels, which
 * never pairs, ran 4-9% slower (U-Net's 16 -> 8, 3x3 on 64x96). */
__attribute__((target("avx2,fma"), noinline)) static void
rows_avx2_pair(int64_t kc, const float *pa, const float *const *rows, const uint16_t *const *masks,
               int64_t col, int cols, int n_rows, float *c, int64_t ldc, float alpha, float beta) {
    int nv = (cols + 7) / 8;
    unsigned last = 0xFFu >> (8 * nv - cols);
    if (!masks && cols == 32) {
        if (n_rows == 1)
            avx2_rows_pair(1, kc, pa, rows, col, c, ldc, alpha, beta);
        else if (n_rows == 2)
            avx2_rows_pair(2, kc, pa, rows, col, c, ldc, alpha, beta);
        else
            avx2_rows_pair(3, kc, pa, rows, col, c, ldc, alpha, beta);
    } else {
        /* masked or partial: rows_step pairs these for 1 row only, and more go a row at a time */
        for (int r = 0; r < n_rows; r++) {
            if (nv == 4)
                avx2_rows_part(1, 4, kc, pa + r, rows, masks, col, last, c + r * ldc, ldc, alpha,
                               beta);
            else
                avx2_rows_part(1, 3, kc, pa + r, rows, masks, col, last, c + r * ldc, ldc, alpha,
                               beta);
        }
    }
}

__attribute__((target("avx2,fma"))) static void
rows_avx2_6x16(int64_t kc, const float *pa, const float *const *rows, const uint16_t *const *masks,
               int64_t col, int cols, int n_rows, float *c, int64_t ldc, float alpha, float beta) {
    if (cols > 16) {
        rows_avx2_pair(kc, pa, rows, masks, col, cols, n_rows, c, ldc, alpha, beta);
        return;
    }
    if (!masks && cols == 16 && n_rows == 6) {
        avx2_6x16(kc, pa, NULL, rows, col, c, ldc, alpha, beta);
        return;
    }
    int nv = (cols + 7) / 8;
    unsigned last = 0xFFu >> (8 * nv - cols);
    if (masks) {
        switch (n_rows) { AVX2_ROWS_1_TO_6(masks) }
    } else {
        switch (n_rows) { AVX2_ROWS_1_TO_6(NULL) }
    }
}

/* The packed form's partial row panels: 6x16's tile computes all 6 rows, so a Conv of 8 output
 * channels spent a third of its FMAs on zero rows, one of 3 channels half. Here 1-3 rows take two
 * panels at once (up to 12 accumulators, 2 FMAs for each B load's 1-3), 4-5 rows one; each
 * element is still summed over p in order, as by the full tile. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
avx2_tail_part(int mr, int nv, int64_t kc, const float *pa, const float *pb0, const float *pb1,
               float *c, int64_t ldc, float alpha, float beta) {
    __m256 acc[5][4];
#pragma GCC unroll 5
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            acc[r][v] = _mm256_setzero_ps();
    for (int64_t p = 0; p < kc; p++) {
        __m256 bv[4];
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            bv[v] = _mm256_loadu_ps((v < 2 ? pb0 : pb1) + p * 16 + 8 * (v & 1));
        avx2_step(mr, nv, pa, bv, acc);
        pa += 6;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 5
    for (int r = 0; r < mr; r++) {
        float *cr = c + r * ldc;
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            if (beta == 0.0f)
                _mm256_storeu_ps(cr + 8 * v, _mm256_mul_ps(va, acc[r][v]));
            else
                _mm256_storeu_ps(
                    cr + 8 * v,
                    _mm256_fmadd_ps(va, acc[r][v], _mm256_mul_ps(vb, _mm256_loadu_ps(cr + 8 * v))));
        }
    }
}

__attribute__((target("avx2,fma"))) static void tail_avx2_6x16(int64_t kc, const float *pa,
                                                               const float *pb0, const float *pb1,
                                                               int n_rows, float *c, int64_t ldc,
                                                               float alpha, float beta) {
    if (pb1 && n_rows <= 3) {
        if (n_rows == 1)
            avx2_tail_part(1, 4, kc, pa, pb0, pb1, c, ldc, alpha, beta);
        else if (n_rows == 2)
            avx2_tail_part(2, 4, kc, pa, pb0, pb1, c, ldc, alpha, beta);
        else
            avx2_tail_part(3, 4, kc, pa, pb0, pb1, c, ldc, alpha, beta);
        return;
    }
    switch (n_rows) {
    case 1:
        avx2_tail_part(1, 2, kc, pa, pb0, NULL, c, ldc, alpha, beta);
        break;
    case 2:
        avx2_tail_part(2, 2, kc, pa, pb0, NULL, c, ldc, alpha, beta);
        break;
    case 3:
        avx2_tail_part(3, 2, kc, pa, pb0, NULL, c, ldc, alpha, beta);
        break;
    case 4:
        avx2_tail_part(4, 2, kc, pa, pb0, NULL, c, ldc, alpha, beta);
        break;
    default:
        avx2_tail_part(5, 2, kc, pa, pb0, NULL, c, ldc, alpha, beta);
        break;
    }
}

__attribute__((target("avx512f"), always_inline)) static inline void
avx512_12x32(int64_t kc, const float *pa, const float *pb, const float *const *rows, int64_t col,
             float *c, int64_t ldc, float alpha, float beta) {
    __m512 acc[12][2];
#pragma GCC unroll 12
    for (int r = 0; r < 12; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kc; p++) {
        const float *b = B_STEP(rows, col, pb, p, 32);
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
        for (int r = 0; r < 12; r++) {
            __m512 a = _mm512_set1_ps(pa[r]);
            acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
        }
        pa += 12;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int r = 0; r < 12; r++) {
        float *cr = c + r * ldc;
        if (beta == 0.0f) {
            _mm512_storeu_ps(cr, _mm512_mul_ps(va, acc[r][0]));
            _mm512_storeu_ps(cr + 16, _mm512_mul_ps(va, acc[r][1]));
        } else {
            _mm512_storeu_ps(
                cr, _mm512_fmadd_ps(va, acc[r][0], _mm512_mul_ps(vb, _mm512_loadu_ps(cr))));
            _mm512_storeu_ps(cr + 16, _mm512_fmadd_ps(va, acc[r][1],
                                                      _mm512_mul_ps(vb, _mm512_loadu_ps(cr + 16))));
        }
    }
}

/* A tile of mr rows and nv 16-column vectors (constants where it is inlined) with B read from
 * row pointers, the last vector under the mask `last`: a partial panel reads and stores only its
 * own columns (a masked load does not fault past them), where packing would zero-fill it and
 * compute the full width. */
__attribute__((target("avx512f"), always_inline)) static inline void
avx512_rows_part(int mr, int a_step, int nv, int64_t kc, const float *pa, const float *const *rows,
                 const uint16_t *const *masks, int64_t col, __mmask16 last, float *c, int64_t ldc,
                 float alpha, float beta) {
    __m512 acc[MAX_MR][3];
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++)
            acc[r][v] = _mm512_setzero_ps();
    /* the lane masks of the rows' run (rows sharing a mask pointer, as a conv's tap-major rows
     * do): loaded when the pointer changes, not every step */
    const uint16_t *held = NULL;
    __mmask16 lanes[3] = {0xFFFF, 0xFFFF, 0xFFFF};
    lanes[nv - 1] = last;
    for (int64_t p = 0; p < kc; p++) {
        const float *b = rows[p] + col;
        if (masks && masks[p] != held) {
            held = masks[p];
#pragma GCC unroll 3
            for (int v = 0; v < nv; v++)
                lanes[v] = (v == nv - 1 ? last : (__mmask16)0xFFFF) & held[(col >> 4) + v];
        }
        __m512 bv[3];
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++)
            bv[v] = masks         ? _mm512_maskz_loadu_ps(lanes[v], b + 16 * v)
                    : v == nv - 1 ? _mm512_maskz_loadu_ps(last, b + 16 * v)
                                  : _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512 a = _mm512_set1_ps(pa[r]);
#pragma GCC unroll 3
            for (int v = 0; v < nv; v++)
                acc[r][v] = _mm512_fmadd_ps(a, bv[v], acc[r][v]);
        }
        pa += a_step;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *cr = c + r * ldc;
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++) {
            __mmask16 m = v == nv - 1 ? last : (__mmask16)0xFFFF;
            __m512 y = _mm512_mul_ps(va, acc[r][v]);
            if (beta != 0.0f)
                y = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, cr + 16 * v), y);
            _mm512_mask_storeu_ps(cr + 16 * v, m, y);
        }
    }
}

/* A body's two forms: packed B (micro_avx512_SHAPE) and B by row pointers (rows_avx512_SHAPE:
 * full tiles through the body, partial or masked ones through avx512_rows_part with as few rows
 * and vectors as they need; MASKS is NULL or `masks`, so each case is compiled both ways). */
#define AVX512_ROWS_CASE(ROWS, MR, NR, MASKS)                                                      \
    case ROWS:                                                                                     \
        if (nv == 1)                                                                               \
            avx512_rows_part(ROWS, MR, 1, kc, pa, rows, MASKS, col, last, c, ldc, alpha, beta);    \
        else if (nv == 2 || NR == 32)                                                              \
            avx512_rows_part(ROWS, MR, 2, kc, pa, rows, MASKS, col, last, c, ldc, alpha, beta);    \
        else                                                                                       \
            avx512_rows_part(ROWS, MR, 3, kc, pa, rows, MASKS, col, last, c, ldc, alpha, beta);    \
        break;
#define AVX512_FORMS(SHAPE, MR, NR, ROW_CASES)                                                     \
    __attribute__((target("avx512f"))) static void micro_avx512_##SHAPE(                           \
        int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc, float alpha,          \
        float beta) {                                                                              \
        avx512_##SHAPE(kc, pa, pb, NULL, 0, c, ldc, alpha, beta);                                  \
    }                                                                                              \
    __attribute__((target("avx512f"))) static void rows_avx512_##SHAPE(                            \
        int64_t kc, const float *pa, const float *const *rows, const uint16_t *const *masks,       \
        int64_t col, int cols, int n_rows, float *c, int64_t ldc, float alpha, float beta) {       \
        if (!masks && cols == NR && n_rows == MR) {                                                \
            avx512_##SHAPE(kc, pa, NULL, rows, col, c, ldc, alpha, beta);                          \
            return;                                                                                \
        }                                                                                          \
        int nv = (cols + 15) / 16;                                                                 \
        __mmask16 last = (__mmask16)(0xFFFFu >> (16 * nv - cols));                                 \
        if (masks) {                                                                               \
            switch (n_rows) { ROW_CASES(MR, NR, masks) }                                           \
        } else {                                                                                   \
            switch (n_rows) { ROW_CASES(MR, NR, NULL) }                                            \
        }                                                                                          \
    }
#define AVX512_ROWS_1_TO_7(MR, NR, MASKS)                                                          \
    AVX512_ROWS_CASE(1, MR, NR, MASKS)                                                             \
    AVX512_ROWS_CASE(2, MR, NR, MASKS)                                                             \
    AVX512_ROWS_CASE(3, MR, NR, MASKS)                                                             \
    AVX512_ROWS_CASE(4, MR, NR, MASKS)                                                             \
    AVX512_ROWS_CASE(5, MR, NR, MASKS)                                                             \
    AVX512_ROWS_CASE(6, MR, NR, MASKS)                                                             \
    AVX512_ROWS_CASE(7, MR, NR, MASKS)
#define AVX512_ROWS_1_TO_8(MR, NR, MASKS)                                                          \
    AVX512_ROWS_1_TO_7(MR, NR, MASKS)                                                              \
    default:                                                                                       \
        AVX512_ROWS_CASE(8, MR, NR, MASKS)
#define AVX512_ROWS_1_TO_12(MR, NR, MASKS)                                                         \
    AVX512_ROWS_1_TO_7(MR, NR, MASKS)                                                              \
    AVX512_ROWS_CASE(8, MR, NR, MASKS)                                                             \
    AVX512_ROWS_CASE(9, MR, NR, MASKS)                                                             \
    AVX512_ROWS_CASE(10, MR, NR, MASKS)                                                            \
    AVX512_ROWS_CASE(11, MR, NR, MASKS)                                                            \
    default:                                                                                       \
        AVX512_ROWS_CASE(12, MR, NR, MASKS)
AVX512_FORMS(12x32, 12, 32, AVX512_ROWS_1_TO_12)

/* 8 rows: a Conv with 8, 16, 32 or 64 output channels fills every row of its tiles (12-row tiles
 * leave a third of the rows empty at 8 and 16). Same FMAs per step as 12x32, fewer loads. */
__attribute__((target("avx512f"), always_inline)) static inline void
avx512_8x48(int64_t kc, const float *pa, const float *pb, const float *const *rows, int64_t col,
            float *c, int64_t ldc, float alpha, float beta) {
    __m512 acc[8][3];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++)
        acc[r][0] = acc[r][1] = acc[r][2] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kc; p++) {
        const float *b = B_STEP(rows, col, pb, p, 48);
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
        __m512 b2 = _mm512_loadu_ps(b + 32);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {
            __m512 a = _mm512_set1_ps(pa[r]);
            acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(a, b2, acc[r][2]);
        }
        pa += 8;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        float *cr = c + r * ldc;
#pragma GCC unroll 3
        for (int j = 0; j < 3; j++) {
            __m512 v = _mm512_mul_ps(va, acc[r][j]);
            if (beta != 0.0f)
                v = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16 * j), v);
            _mm512_storeu_ps(cr + 16 * j, v);
        }
    }
}

AVX512_FORMS(8x48, 8, 48, AVX512_ROWS_1_TO_8)
#endif

static const micro_kernel KERNELS[] = {
    /* isa, mr, nr, mc, kc, nc, fn, rows_fn, tail_fn, in_place_panels, in_place_cols, lanes,
     * spread_panels, pair_panel_rows */
    {TCONV_GEMM_ISA_PORTABLE, 4, 8, 128, 256, 2048, micro_portable_4x8, NULL, NULL, 0, 0, 4, 0, 0},
#if TC_GEMM_X86
    {TCONV_GEMM_ISA_AVX2, 6, 16, 144, 256, 2048, micro_avx2_6x16, rows_avx2_6x16, tail_avx2_6x16, 2,
     1024, 8, 2, 3},
    {TCONV_GEMM_ISA_AVX512, 12, 32, 144, 256, 2048, micro_avx512_12x32, rows_avx512_12x32, NULL, 64,
     0, 16, 0, 0},
    {TCONV_GEMM_ISA_AVX512_8X48, 8, 48, 144, 256, 2016, micro_avx512_8x48, rows_avx512_8x48, NULL,
     64, 0, 16, 0, 0},
#endif
};

/* ---------------------------------------------------------------- ISA selection */

static bool cpu_supports(tc_gemm_isa isa) {
    switch (isa) {
    case TCONV_GEMM_ISA_AVX2:
        return tc_cpu_has_avx2();
    case TCONV_GEMM_ISA_AVX512:
    case TCONV_GEMM_ISA_AVX512_8X48:
        return tc_cpu_has_avx512();
    case TCONV_GEMM_ISA_AUTO:
    case TCONV_GEMM_ISA_PORTABLE:
        return true;
    }
    return false;
}

static const micro_kernel *kernel_for(tc_gemm_isa isa) {
    for (size_t i = 0; i < sizeof KERNELS / sizeof KERNELS[0]; i++) {
        if (KERNELS[i].isa == isa)
            return &KERNELS[i];
    }
    return &KERNELS[0];
}

static tc_gemm_isa best_isa(void) {
    static const tc_gemm_isa preference[] = {TCONV_GEMM_ISA_AVX512, TCONV_GEMM_ISA_AVX2};
    for (size_t i = 0; i < sizeof preference / sizeof preference[0]; i++) {
        if (tc_gemm_isa_available(preference[i]))
            return preference[i];
    }
    return TCONV_GEMM_ISA_PORTABLE;
}

bool tc_gemm_isa_available(tc_gemm_isa isa) {
    if (isa == TCONV_GEMM_ISA_AUTO || isa == TCONV_GEMM_ISA_PORTABLE)
        return true;
    return kernel_for(isa)->isa == isa && cpu_supports(isa);
}

bool tc_gemm_has_row_form(void) {
    return kernel_for(best_isa())->rows_fn != NULL;
}

static tc_gemm_isa resolve_isa(tc_gemm_isa isa) {
    return (isa == TCONV_GEMM_ISA_AUTO || !tc_gemm_isa_available(isa)) ? best_isa() : isa;
}

static int64_t round_up(int64_t x, int64_t multiple) {
    return (x + multiple - 1) / multiple * multiple;
}

int tc_gemm_isa_shapes(tc_gemm_isa shapes[2]) {
    shapes[0] = best_isa();
    if (shapes[0] != TCONV_GEMM_ISA_AVX512 || !tc_gemm_isa_available(TCONV_GEMM_ISA_AVX512_8X48))
        return 1;
    shapes[1] = shapes[0];
    shapes[0] = TCONV_GEMM_ISA_AVX512_8X48; /* first: it wins ties */
    return 2;
}

static bool reads_rows_in_place(const micro_kernel *mk, int64_t m);

/* The tile shape whose padded product is smallest: a B read in place by row pointers computes
 * its last panel a 16-column vector at a time (avx512_rows_part), a packed one at full width. */
static tc_gemm_isa isa_for_shape(int64_t m, int64_t n, bool b_rows) {
    tc_gemm_isa shapes[2];
    int n_shapes = tc_gemm_isa_shapes(shapes), best = 0;
    int64_t best_area = 0;
    for (int i = 0; i < n_shapes; i++) {
        const micro_kernel *k = kernel_for(shapes[i]);
        int64_t n_step = b_rows && reads_rows_in_place(k, m) && k->lanes < k->nr ? k->lanes : k->nr;
        int64_t area = round_up(m, k->mr) * round_up(n, n_step);
        if (i == 0 || area < best_area) {
            best = i;
            best_area = area;
        }
    }
    return shapes[best];
}

tc_gemm_isa tc_gemm_isa_for_shape(int64_t m, int64_t n) {
    return isa_for_shape(m, n, false);
}

tc_gemm_isa tc_gemm_isa_for_rows(int64_t m, int64_t n) {
    return isa_for_shape(m, n, true);
}

const char *tc_gemm_isa_name(tc_gemm_isa isa) {
    switch (isa) {
    case TCONV_GEMM_ISA_AUTO:
        return "auto";
    case TCONV_GEMM_ISA_PORTABLE:
        return "portable";
    case TCONV_GEMM_ISA_AVX2:
        return "avx2";
    case TCONV_GEMM_ISA_AVX512:
        return "avx512";
    case TCONV_GEMM_ISA_AVX512_8X48:
        return "avx512-8x48";
    }
    return "?";
}

/* ---------------------------------------------------------------- workspace */

static int64_t min_i64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

static int64_t pack_a_floats(const micro_kernel *mk, int64_t m, int64_t k) {
    return min_i64(mk->mc, round_up(m, mk->mr)) * min_i64(mk->kc, k);
}

static int64_t pack_b_floats(const micro_kernel *mk, int64_t n, int64_t k) {
    return min_i64(mk->kc, k) * min_i64(mk->nc, round_up(n, mk->nr));
}

void tc_gemm_workspace_init(tc_gemm_workspace *ws, tc_gemm_isa isa) {
    ws->isa = resolve_isa(isa);
    ws->buffer = NULL;
    ws->capacity = 0;
    ws->lent = false;
}

size_t tc_gemm_workspace_floats(tc_gemm_isa isa, int64_t m, int64_t n, int64_t k) {
    if (m <= 0 || n <= 0 || k <= 0)
        return 0;
    const micro_kernel *mk = kernel_for(resolve_isa(isa));
    return (size_t)(pack_a_floats(mk, m, k) + pack_b_floats(mk, n, k)) + 2 * PACK_ALIGN_FLOATS;
}

tconv_status tc_gemm_workspace_reserve(tc_gemm_workspace *ws, int64_t m, int64_t n, int64_t k,
                                       tc_error *err) {
    size_t need = tc_gemm_workspace_floats(ws->isa, m, n, k);
    if (need <= ws->capacity)
        return TCONV_OK;
    float *buffer = malloc(need * sizeof(float));
    if (!buffer)
        return tc_error_nomem(err, "GEMM packing buffers");
    tc_gemm_workspace_release(ws);
    ws->buffer = buffer;
    ws->capacity = need;
    return TCONV_OK;
}

void tc_gemm_workspace_lend(tc_gemm_workspace *ws, float *buffer, size_t capacity) {
    tc_gemm_workspace_release(ws);
    ws->buffer = buffer;
    ws->capacity = capacity;
    ws->lent = true;
}

void tc_gemm_workspace_release(tc_gemm_workspace *ws) {
    if (!ws->lent)
        free(ws->buffer);
    ws->buffer = NULL;
    ws->capacity = 0;
    ws->lent = false;
}

static float *align_floats(float *p) {
    uintptr_t bytes = PACK_ALIGN_FLOATS * sizeof(float);
    uintptr_t u = ((uintptr_t)p + bytes - 1) / bytes * bytes;
    return p + (u - (uintptr_t)p) / sizeof(float);
}

/* ---------------------------------------------------------------- packing */

/* op(A)[i0 .. i0+mc) x [p0 .. p0+kc) into mr-row panels: dst[panel][p][r], zero-padded. */
static void pack_a(const tc_sgemm_op *op, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int mr,
                   float *dst) {
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int rows = (int)min_i64(mr, mc - ir);
        if (op->trans_a) {
            for (int64_t p = 0; p < kc; p++) {
                const float *src = op->a + (p0 + p) * op->lda + i0 + ir;
                float *d = dst + p * mr;
                for (int r = 0; r < rows; r++)
                    d[r] = src[r];
                for (int r = rows; r < mr; r++)
                    d[r] = 0.0f;
            }
        } else {
            for (int r = 0; r < rows; r++) {
                const float *src = op->a + (i0 + ir + r) * op->lda + p0;
                for (int64_t p = 0; p < kc; p++)
                    dst[p * mr + r] = src[p];
            }
            for (int64_t p = 0; p < kc; p++)
                for (int r = rows; r < mr; r++)
                    dst[p * mr + r] = 0.0f;
        }
        dst += (int64_t)mr * kc;
    }
}

/* d[c] = src[c] where column j + c of the product is in `mask` (bit (j+c) % 16 of mask[(j+c) /
 * 16]), else 0; src is not read there. */
static void masked_copy(float *restrict d, const float *src, const uint16_t *mask, int64_t j,
                        int cols) {
    for (int c = 0; c < cols; c++) {
        int64_t q = j + c;
        d[c] = (mask[q >> 4] >> (q & 15)) & 1 ? src[c] : 0.0f;
    }
}

#if TC_GEMM_X86
/* masked_copy's row of a panel, zero-padded to nr, 16 lanes a step (j a multiple of 16, as a
 * product's column blocks are): the bit-at-a-time copy took a tenth of the time of LinkNet's
 * 256- and 512-channel 3x3 Convs when their B was packed. */
__attribute__((target("avx512f"))) static void masked_row_avx512(float *restrict d,
                                                                 const float *src,
                                                                 const uint16_t *mask, int64_t j,
                                                                 int cols, int nr) {
    for (int c = 0; c < nr; c += 16) {
        int valid = cols - c < 0 ? 0 : cols - c > 16 ? 16 : cols - c;
        __mmask16 m = (__mmask16)(valid ? mask[(j + c) >> 4] & (0xFFFFu >> (16 - valid)) : 0);
        _mm512_storeu_ps(d + c, _mm512_maskz_loadu_ps(m, src + c));
    }
}

/* masked_row_avx512's AVX2 copy for a panel of nv 8-column vectors: the row's floats from src
 * (column j of the product, a multiple of 8), those of its first `cols` whose lane is on in
 * `mask` (NULL: all), zeros elsewhere, with no load outside them. A memcpy a row, a libc call of
 * 32 or 64 bytes each, took most of the packing. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
pack_row_avx2(float *restrict d, const float *src, const uint16_t *mask, int64_t j, int cols,
              int nv) {
    for (int v = 0; v < nv; v++) {
        int64_t q = j + 8 * v;
        int valid = cols - 8 * v < 0 ? 0 : cols - 8 * v > 8 ? 8 : cols - 8 * v;
        unsigned bits = (0xFFu >> (8 - valid)) & (mask ? (unsigned)mask[q >> 4] >> (q & 8) : 0xFFu);
        __m256 x = bits == 0xFFu ? _mm256_loadu_ps(src + 8 * v)
                                 : _mm256_maskload_ps(src + 8 * v, avx2_lanes(bits));
        _mm256_storeu_ps(d + 8 * v, x);
    }
}

/* pack_b for 8- and 16-column panels on AVX2 (the portable and AVX2 kernels' widths), a row of B at
 * a time: a panel at a time read B's rows 32 or 64 bytes each, kc lines at once that a conv's
 * power-of-two row strides put in the same L1 sets, and each missed. */
__attribute__((target("avx2,fma"))) static void pack_b_rows_avx2(const tc_sgemm_op *op, int64_t p0,
                                                                 int64_t kc, int64_t j0, int64_t nc,
                                                                 int nr, float *dst) {
    int64_t full = nr == 16 && (op->b_col0 + j0) % 16 == 0 ? nc / 16 * 16 : 0;
    for (int64_t p = 0; p < kc; p++) {
        const float *src =
            op->b_rows ? op->b_rows[p0 + p] + op->b_col0 + j0 : op->b + (p0 + p) * op->ldb + j0;
        const uint16_t *mask = op->b_masks ? op->b_masks[p0 + p] : NULL;
        float *d = dst + p * nr;
        int64_t jr = 0;
        /* whole 16-column panels on mask-word boundaries: one word a panel, most all on */
        for (; jr < full; jr += 16, d += 16 * kc) {
            unsigned word = mask ? mask[(op->b_col0 + j0 + jr) >> 4] : 0xFFFFu;
            if (word == 0xFFFFu) {
                _mm256_storeu_ps(d, _mm256_loadu_ps(src + jr));
                _mm256_storeu_ps(d + 8, _mm256_loadu_ps(src + jr + 8));
            } else {
                _mm256_storeu_ps(d, _mm256_maskload_ps(src + jr, avx2_lanes(word & 0xFF)));
                _mm256_storeu_ps(d + 8, _mm256_maskload_ps(src + jr + 8, avx2_lanes(word >> 8)));
            }
        }
        for (; jr < nc; jr += nr, d += nr * kc) {
            int cols = (int)min_i64(nr, nc - jr);
            if (nr == 16)
                pack_row_avx2(d, src + jr, mask, op->b_col0 + j0 + jr, cols, 2);
            else
                pack_row_avx2(d, src + jr, mask, op->b_col0 + j0 + jr, cols, 1);
        }
    }
}
#endif

/* op(B)[p0 .. p0+kc) x [j0 .. j0+nc) into nr-column panels: dst[panel][p][c], zero-padded. */
static void pack_b(const tc_sgemm_op *op, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr,
                   float *dst) {
#if TC_GEMM_X86
    bool vector_masks = op->b_masks && nr % 16 == 0 && cpu_supports(TCONV_GEMM_ISA_AVX512);
    if ((nr == 8 || nr == 16) && !op->trans_b && (op->b_col0 + j0) % 8 == 0 &&
        cpu_supports(TCONV_GEMM_ISA_AVX2)) {
        pack_b_rows_avx2(op, p0, kc, j0, nc, nr, dst);
        return;
    }
#endif
    for (int64_t jr = 0; jr < nc; jr += nr) {
        int cols = (int)min_i64(nr, nc - jr);
        if (!op->trans_b) {
            for (int64_t p = 0; p < kc; p++) {
                const float *src = op->b_rows ? op->b_rows[p0 + p] + op->b_col0 + j0 + jr
                                              : op->b + (p0 + p) * op->ldb + j0 + jr;
                float *d = dst + p * nr;
#if TC_GEMM_X86
                if (vector_masks && (op->b_col0 + j0 + jr) % 16 == 0) {
                    masked_row_avx512(d, src, op->b_masks[p0 + p], op->b_col0 + j0 + jr, cols, nr);
                    continue;
                }
#endif
                if (op->b_masks)
                    masked_copy(d, src, op->b_masks[p0 + p], op->b_col0 + j0 + jr, cols);
                else
                    memcpy(d, src, (size_t)cols * sizeof(float));
                for (int c = cols; c < nr; c++)
                    d[c] = 0.0f;
            }
        } else {
            for (int c = 0; c < cols; c++) {
                const float *src = op->b + (j0 + jr + c) * op->ldb + p0;
                for (int64_t p = 0; p < kc; p++)
                    dst[p * nr + c] = src[p];
            }
            for (int64_t p = 0; p < kc; p++)
                for (int c = cols; c < nr; c++)
                    dst[p * nr + c] = 0.0f;
        }
        dst += (int64_t)nr * kc;
    }
}

/* ---------------------------------------------------------------- driver */

/* C = alpha*tile + beta*C for the valid rows x cols corner of an edge tile. */
static void merge_tile(const float *tile, int tile_ld, int rows, int cols, float *c, int64_t ldc,
                       float alpha, float beta) {
    for (int r = 0; r < rows; r++) {
        float *cr = c + r * ldc;
        const float *tr = tile + r * tile_ld;
        for (int j = 0; j < cols; j++)
            cr[j] = alpha * tr[j] + (beta == 0.0f ? 0.0f : beta * cr[j]);
    }
}

/* Whether every mask word of columns [col, col + cols) is all ones in rows [0, kc): from the
 * product's per-word summary when it has one (tc_sgemm_op.b_masks_full), else by reading them. */
static bool lanes_all_on(const uint16_t *const *masks, const uint8_t *full, int64_t kc, int64_t col,
                         int cols) {
    int64_t first = col >> 4, last = (col + cols + 15) >> 4;
    for (int64_t w = first; full && w < last; w++) {
        if (!full[w])
            return false;
    }
    for (int64_t p = 0; !full && p < kc; p++) {
        for (int64_t w = first; w < last; w++) {
            if (masks[p][w] != 0xFFFF)
                return false;
        }
    }
    return true;
}

/* One packed mc x kc block of A times a kc x nc block of B into C. B is packed in pb, or, when
 * rows is set, read from rows[p] + col0 + j (pb unused). */
/* A packed full-width panel's partial row panel (macro_kernel) through the kernel's tail form:
 * up to half a tile's rows pair each even panel with the next when that one is full too, which
 * the odd panel then skips. */
static void tail_panel(const micro_kernel *mk, int64_t kc, const float *a_panel,
                       const float *b_panel, int rows_here, int64_t jr, int64_t nc, float *c_tile,
                       int64_t ldc, float alpha, float beta) {
    bool pairs = rows_here <= mk->mr / 2;
    if (pairs && (jr / mk->nr) % 2 == 1)
        return; /* done with the panel before it */
    const float *next = pairs && jr + 2 * mk->nr <= nc ? b_panel + mk->nr * kc : NULL;
    mk->tail_fn(kc, a_panel, b_panel, next, rows_here, c_tile, ldc, alpha, beta);
}

/* The masks a row-form tile of columns [col, col + cols) reads: NULL where every lane is on
 * (inside a large plane), for the unmasked kernels. */
static const uint16_t *const *tile_masks(const uint16_t *const *masks, const uint8_t *masks_full,
                                         int64_t kc, int64_t col, int cols) {
    return masks && !lanes_all_on(masks, masks_full, kc, col, cols) ? masks : NULL;
}

/* The columns from jr that the next row-form tiles take (one panel, or two for few rows:
 * micro_kernel.pair_panel_rows) and their masks (NULL: every lane on, inside a large plane, for
 * the unmasked kernels). A lane mask a vector takes registers that more rows' accumulators need
 * (at 2 rows the masked pair was no faster, at 3 GCC spilled), so only 1 row pairs masked or
 * partial panels, 2-3 rows whole ones with every lane on. The sums are the same either way:
 * each element's products are added in k order. */
static int64_t rows_step(const micro_kernel *mk, int64_t mc, int64_t nc, int64_t kc, int64_t jr,
                         const uint16_t *const *masks, const uint8_t *masks_full, int64_t col0,
                         int *cols, const uint16_t *const **panel_masks) {
    if (mc <= mk->pair_panel_rows && jr + mk->nr < nc) {
        *cols = (int)min_i64(2 * mk->nr, nc - jr);
        *panel_masks = tile_masks(masks, masks_full, kc, col0 + jr, *cols);
        if (mc == 1 || (!*panel_masks && *cols == 2 * mk->nr))
            return 2 * mk->nr;
    }
    *cols = (int)min_i64(mk->nr, nc - jr);
    *panel_masks = tile_masks(masks, masks_full, kc, col0 + jr, *cols);
    return mk->nr;
}

static void macro_kernel(const micro_kernel *mk, int64_t mc, int64_t nc, int64_t kc,
                         const float *pa, const float *pb, const float *const *rows,
                         const uint16_t *const *masks, const uint8_t *masks_full, int64_t col0,
                         float *c, int64_t ldc, float alpha, float beta) {
    _Alignas(64) float tile[MAX_MR * MAX_NR];
    for (int64_t jr = 0, step = mk->nr; jr < nc; jr += step) {
        int cols = (int)min_i64(mk->nr, nc - jr);
        const uint16_t *const *panel_masks = NULL;
        if (rows)
            step = rows_step(mk, mc, nc, kc, jr, masks, masks_full, col0, &cols, &panel_masks);
        const float *b_panel = pb + jr * kc;
        for (int64_t ir = 0; ir < mc; ir += mk->mr) {
            int rows_here = (int)min_i64(mk->mr, mc - ir);
            const float *a_panel = pa + ir * kc;
            float *c_tile = c + ir * ldc + jr;
            /* the row-pointer form computes and stores only its rows and columns: a partial
             * tile goes straight to C */
            if (rows) {
                mk->rows_fn(kc, a_panel, rows, panel_masks, col0 + jr, cols, rows_here, c_tile, ldc,
                            alpha, beta);
                continue;
            }
            if (rows_here < mk->mr && cols == mk->nr && mk->tail_fn) {
                tail_panel(mk, kc, a_panel, b_panel, rows_here, jr, nc, c_tile, ldc, alpha, beta);
                continue;
            }
            bool full = rows_here == mk->mr && cols == mk->nr;
            float *out = full ? c_tile : tile;
            int64_t out_ld = full ? ldc : mk->nr;
            float out_alpha = full ? alpha : 1.0f, out_beta = full ? beta : 0.0f;
            mk->fn(kc, a_panel, b_panel, out, out_ld, out_alpha, out_beta);
            if (!full)
                merge_tile(tile, mk->nr, rows_here, cols, c_tile, ldc, alpha, beta);
        }
    }
}

/* Whether a product reads B (untransposed; row pointers or a matrix) in place: the kernel has the
 * form, m has at most in_place_panels row panels (each rereads its B from the scattered rows)
 * and n at most in_place_cols columns (0: any); with rows spread over the L1 sets
 * (b_rows_spread), up to spread_panels panels.
 * - AVX-512 pays up to 64 panels, i.e. 512 rows of 8x48: LinkNet's 3x3 Convs of 256 channels
 *   @16x16 and 512 @8x8 ran 2.6 ms in place against 3.1 packed (the packed copy, and the 12x32
 *   tiles that the packed form's full-width last panel chose).
 * - AVX2 reads 64 bytes of a row a step: a conv's B rows, planes of power-of-two size apart,
 *   then fall in the same few L1 sets, and on a Zen 3 core packing them a row at a time
 *   (pack_b_rows_avx2) won from 2 panels at 4096 columns (576 deep: 42 against 28 GFLOP/s at 24
 *   rows, 54 against 27 at 66) and from 1 panel beyond 1024 columns (20 against 10 at 6 rows),
 *   while 1 or 2 panels of up to 1024 columns ran faster in place (6 x 512: 43 against 26).
 *   Rows an odd number of lines apart (144 deep) ran in place at 70-71 GFLOP/s against 53-57
 *   packed at 12 rows (1024 or 4096 columns); a Conv of 8 output channels reading such a copy
 *   of X in place took 260-333 us against 508-547 (16 -> 8 channels, 3x3 on 64x96), but at 16
 *   channels (3 panels) the copy did not pay (ERFNet's 16-channel 3x1 Convs: 35 -> 53 us):
 *   spread_panels 2.
 * A plain matrix B (ConvTranspose's X, a 1x1 Conv's input) is read in place only under fewer
 * panels: its rows lie a whole plane apart, and a 2-thread ConvTranspose chunk of 11 panels
 * (workload A) ran 17% slower reading it in place than packed on AVX-512. */
#define DIRECT_B_MATRIX_MAX_PANELS 4
/* The deepest kc block of any kernel: a matrix B read in place gets its row pointers on the
 * stack. */
#define MAX_KC 256

static bool reads_panels_in_place(const micro_kernel *mk, int64_t m, int64_t n,
                                  int64_t max_panels) {
    return mk->rows_fn && mk->kc <= MAX_KC && (mk->in_place_cols == 0 || n <= mk->in_place_cols) &&
           round_up(m, mk->mr) / mk->mr <= min_i64(max_panels, mk->in_place_panels);
}

/* n unknown (a tile shape's choice): as for a narrow B */
static bool reads_rows_in_place(const micro_kernel *mk, int64_t m) {
    return reads_panels_in_place(mk, m, 0, mk->in_place_panels);
}

/* Rows spread over the L1 sets: up to spread_panels row panels, any n. */
static bool reads_spread_rows_in_place(const micro_kernel *mk, int64_t m) {
    return mk->rows_fn && mk->kc <= MAX_KC && mk->spread_panels > 0 &&
           round_up(m, mk->mr) / mk->mr <= mk->spread_panels;
}

static bool reads_b_in_place(const micro_kernel *mk, const tc_sgemm_op *op) {
    if (op->trans_b)
        return false;
    if (op->b_rows && op->b_rows_spread && reads_spread_rows_in_place(mk, op->m))
        return true;
    return reads_panels_in_place(mk, op->m, op->n,
                                 op->b_rows ? mk->in_place_panels : DIRECT_B_MATRIX_MAX_PANELS);
}

/* The rows of B's k-block from p0 (kc of them) as pointers: b_rows itself, or `room` filled. */
static const float *const *b_block_rows(const tc_sgemm_op *op, int64_t p0, int64_t kc,
                                        const float **room) {
    if (op->b_rows)
        return op->b_rows + p0;
    for (int64_t p = 0; p < kc; p++)
        room[p] = op->b + (p0 + p) * op->ldb;
    return room;
}

/* C = beta*C, for k == 0 or alpha == 0 (C not read when beta == 0). */
static void scale_c(const tc_sgemm_op *op) {
    for (int64_t i = 0; i < op->m; i++) {
        float *cr = op->c + i * op->ldc;
        for (int64_t j = 0; j < op->n; j++)
            cr[j] = op->beta == 0.0f ? 0.0f : op->beta * cr[j];
    }
}

/* The packed layout of a whole op(A): per kc-block of k, all of m in mr-row panels (rows padded
 * to a multiple of mr), so the panel of rows [ic, ...) of k-block pc starts at
 * pc * round_up(m, mr) + ic * kc. pack_a writes exactly that for one (pc, ic) block. */
static const float *packed_block(const micro_kernel *mk, const float *packed, int64_t m, int64_t pc,
                                 int64_t ic, int64_t kc) {
    return packed + pc * round_up(m, mk->mr) + ic * kc;
}

/* The packed layout of a whole B (tc_sgemm_pack_b): per nc-block of n, per kc-block of k, the
 * block as pack_b writes it (nr-column panels, the last zero-padded); every nc-block but the
 * last is nc wide, a multiple of nr, so block (jc, pc) starts at jc * k + pc * round_up(nc, nr),
 * nc its own width. */
static int64_t packed_b_block(const micro_kernel *mk, int64_t k, int64_t jc, int64_t pc,
                              int64_t nc) {
    return jc * k + pc * round_up(nc, mk->nr);
}

static void sgemm_blocked(tc_gemm_workspace *ws, const float *packed_a, const tc_sgemm_op *op) {
    if (op->m <= 0 || op->n <= 0)
        return;
    if (op->k <= 0 || op->alpha == 0.0f) {
        scale_c(op);
        return;
    }
    const micro_kernel *mk = kernel_for(ws->isa);
    float *pa = align_floats(ws->buffer);
    float *pb = align_floats(pa + pack_a_floats(mk, op->m, op->k));
    bool in_place = !op->packed_b && reads_b_in_place(mk, op);
    const float *row_room[MAX_KC];
    for (int64_t jc = 0; jc < op->n; jc += mk->nc) {
        int64_t nc = min_i64(mk->nc, op->n - jc);
        for (int64_t pc = 0; pc < op->k; pc += mk->kc) {
            int64_t kc = min_i64(mk->kc, op->k - pc);
            float beta = pc == 0 ? op->beta : 1.0f;
            const float *const *rows = NULL;
            const float *b_block = pb;
            if (op->packed_b)
                b_block = op->packed_b + packed_b_block(mk, op->k, jc, pc, nc);
            else if (in_place)
                rows = b_block_rows(op, pc, kc, row_room);
            else
                pack_b(op, pc, kc, jc, nc, mk->nr, pb);
            for (int64_t ic = 0; ic < op->m; ic += mk->mc) {
                int64_t mc = min_i64(mk->mc, op->m - ic);
                const float *a_block = pa;
                if (packed_a)
                    a_block = packed_block(mk, packed_a, op->m, pc, ic, kc);
                else
                    pack_a(op, ic, mc, pc, kc, mk->mr, pa);
                macro_kernel(mk, mc, nc, kc, a_block, b_block, rows,
                             rows && op->b_masks ? op->b_masks + pc : NULL, op->b_masks_full,
                             op->b_rows ? op->b_col0 + jc : jc, op->c + ic * op->ldc + jc, op->ldc,
                             op->alpha, beta);
            }
        }
    }
}

void tc_sgemm_run(tc_gemm_workspace *ws, const tc_sgemm_op *op) {
    sgemm_blocked(ws, NULL, op);
}

void tc_sgemm_run_packed(tc_gemm_workspace *ws, const float *packed_a, const tc_sgemm_op *op) {
    sgemm_blocked(ws, packed_a, op);
}

size_t tc_sgemm_packed_a_floats(tc_gemm_isa isa, int64_t m, int64_t k) {
    const micro_kernel *mk = kernel_for(resolve_isa(isa));
    return m > 0 && k > 0 ? (size_t)(round_up(m, mk->mr) * k) : 1;
}

int64_t tc_sgemm_col_tile(tc_gemm_isa isa) {
    return kernel_for(resolve_isa(isa))->nr;
}

int64_t tc_sgemm_row_tile(tc_gemm_isa isa) {
    return kernel_for(resolve_isa(isa))->mr;
}

void tc_sgemm_pack_a(tc_gemm_isa isa, bool trans_a, int64_t m, int64_t k, const float *a,
                     int64_t lda, float *packed) {
    const micro_kernel *mk = kernel_for(resolve_isa(isa));
    tc_sgemm_op op = {.trans_a = trans_a, .m = m, .k = k, .a = a, .lda = lda};
    for (int64_t pc = 0; pc < k; pc += mk->kc) {
        int64_t kc = min_i64(mk->kc, k - pc);
        pack_a(&op, 0, m, pc, kc, mk->mr, packed + pc * round_up(m, mk->mr));
    }
}

size_t tc_sgemm_packed_b_floats(tc_gemm_isa isa, int64_t k, int64_t n) {
    const micro_kernel *mk = kernel_for(resolve_isa(isa));
    return k > 0 && n > 0 ? (size_t)(k * round_up(n, mk->nr)) : 1;
}

void tc_sgemm_pack_b(tc_gemm_isa isa, bool trans_b, int64_t k, int64_t n, const float *b,
                     int64_t ldb, float *packed) {
    const micro_kernel *mk = kernel_for(resolve_isa(isa));
    tc_sgemm_op op = {.trans_b = trans_b, .k = k, .n = n, .b = b, .ldb = ldb};
    for (int64_t jc = 0; jc < n; jc += mk->nc) {
        int64_t nc = min_i64(mk->nc, n - jc);
        for (int64_t pc = 0; pc < k; pc += mk->kc)
            pack_b(&op, pc, min_i64(mk->kc, k - pc), jc, nc, mk->nr,
                   packed + packed_b_block(mk, k, jc, pc, nc));
    }
}

bool tc_sgemm_reads_b_rows_in_place(tc_gemm_isa isa, int64_t m, int64_t n) {
    const micro_kernel *mk = kernel_for(resolve_isa(isa));
    return reads_panels_in_place(mk, m, n, mk->in_place_panels);
}

bool tc_sgemm_spread_rows_pay(tc_gemm_isa isa, int64_t m) {
    return reads_spread_rows_in_place(kernel_for(resolve_isa(isa)), m);
}

/* What a panel's rows read for one tap, channel by channel: row r reads from[r][c * step[r]], a
 * tap in the padding reading the one zero (step 0), as do the rows past m. */
typedef struct tap_rows {
    const float *from[MAX_MR];
    int64_t step[MAX_MR];
} tap_rows;

static const float zero_float = 0.0f;

static void tap_rows_at(tap_rows *tr, int mr, int rows, const int64_t *panel, int64_t taps,
                        int64_t t, const float *base, int64_t channel_stride) {
    for (int r = 0; r < mr; r++) {
        int64_t at = r < rows ? panel[r * taps + t] : -1;
        tr->from[r] = at >= 0 ? base + at : &zero_float;
        tr->step[r] = at >= 0 ? channel_stride : 0;
    }
}

static inline __attribute__((always_inline)) void
copy_tap_rows_mr(const tap_rows *tr, int mr, int64_t c0, int64_t c1, float *d, int64_t d_step) {
    for (int64_t c = c0; c < c1; c++, d += d_step) {
        for (int r = 0; r < mr; r++)
            d[r] = tr->from[r][c * tr->step[r]];
    }
}

/* Channels [c0, c1) of one tap into d, d_step floats apart; the common row tiles inlined as
 * constants (the loop over rows unrolled: 7.2 -> 5.5 us for 64 channels, 3x3 on 4x6, AVX2). */
static void copy_tap_rows(const tap_rows *tr, int mr, int64_t c0, int64_t c1, float *d,
                          int64_t d_step) {
    if (mr == 6) /* AVX2 */
        copy_tap_rows_mr(tr, 6, c0, c1, d, d_step);
    else if (mr == 12) /* AVX-512's 12x32 tile */
        copy_tap_rows_mr(tr, 12, c0, c1, d, d_step);
    else
        copy_tap_rows_mr(tr, mr, c0, c1, d, d_step);
}

/* One panel's block of kc (channel, tap) steps from pc, tap by tap: a tap's offsets are the same
 * in every channel, so each is looked up once a panel and block, and the copy has no branch (a
 * step at a time with a test per element took 2 ns an element: 58 us, half of U-Net's 128-channel
 * 3x3 Conv on 4x6). */
static void pack_a_taps_panel(int mr, int rows, int64_t pc, int64_t kc, int64_t taps,
                              const int64_t *panel, const float *base, int64_t channel_stride,
                              float *dst) {
    for (int64_t t = 0; t < taps; t++) {
        /* the channels whose step (c * taps + t) falls in [pc, pc + kc) */
        int64_t c0 = pc > t ? (pc - t + taps - 1) / taps : 0;
        int64_t c1 = (pc + kc - t + taps - 1) / taps;
        if (c1 <= c0)
            continue;
        tap_rows tr;
        tap_rows_at(&tr, mr, rows, panel, taps, t, base, channel_stride);
        copy_tap_rows(&tr, mr, c0, c1, dst + (c0 * taps + t - pc) * mr, taps * mr);
    }
}

void tc_sgemm_pack_a_taps(tc_gemm_isa isa, int64_t m, int64_t row0, int64_t row1, int64_t channels,
                          int64_t taps, const float *base, int64_t channel_stride,
                          const int64_t *tap_offsets, float *packed) {
    const micro_kernel *mk = kernel_for(resolve_isa(isa));
    int64_t k = channels * taps;
    row1 = min_i64(row1, m);
    for (int64_t pc = 0; pc < k; pc += mk->kc) {
        int64_t kc = min_i64(mk->kc, k - pc);
        float *dst = packed + pc * round_up(m, mk->mr) + row0 * kc;
        for (int64_t ir = row0; ir < row1; ir += mk->mr, dst += mk->mr * kc)
            pack_a_taps_panel(mk->mr, (int)min_i64(mk->mr, m - ir), pc, kc, taps,
                              tap_offsets + ir * taps, base, channel_stride, dst);
    }
}

/* ---------------------------------------------------------------- threaded convenience */

typedef struct sgemm_split {
    const tc_sgemm_op *op;
    tc_gemm_workspace *workspaces;
    bool by_columns;
    int64_t chunk;
} sgemm_split;

static void sgemm_chunk_task(void *ctx, int64_t task, int worker) {
    const sgemm_split *s = ctx;
    tc_sgemm_op sub = *s->op;
    int64_t start = task * s->chunk;
    if (s->by_columns) {
        sub.n = min_i64(s->chunk, sub.n - start);
        sub.b += sub.trans_b ? start * sub.ldb : start;
        sub.c += start;
    } else {
        sub.m = min_i64(s->chunk, sub.m - start);
        sub.a += sub.trans_a ? start : start * sub.lda;
        sub.c += start * sub.ldc;
    }
    tc_sgemm_run(&s->workspaces[worker], &sub);
}

tconv_status tc_sgemm(const tc_sgemm_op *op, tc_thread_pool *pool, int n_threads, tc_error *err) {
    double flops = 2.0 * (double)op->m * (double)op->n * (double)op->k;
    int threads = tc_parallel_threads_for_work(pool, n_threads, flops);
    /* row pointers for B cannot be offset by a column split */
    sgemm_split split = {.op = op, .by_columns = op->n >= op->m && !op->b_rows};
    int64_t extent = split.by_columns ? op->n : op->m;
    int64_t granule = split.by_columns ? MAX_NR : MAX_MR;
    split.chunk = round_up((extent + threads - 1) / (threads > 0 ? threads : 1), granule);
    if (split.chunk < 1)
        split.chunk = 1;
    int64_t n_tasks = (extent + split.chunk - 1) / split.chunk;
    int workers = tc_parallel_workers(threads, n_tasks);
    tc_gemm_workspace workspaces[TC_PARALLEL_MAX_THREADS];
    tconv_status st = TCONV_OK;
    for (int i = 0; i < workers; i++)
        tc_gemm_workspace_init(&workspaces[i], TCONV_GEMM_ISA_AUTO);
    for (int i = 0; i < workers && st == TCONV_OK; i++)
        st = tc_gemm_workspace_reserve(&workspaces[i], split.by_columns ? op->m : split.chunk,
                                       split.by_columns ? split.chunk : op->n, op->k, err);
    if (st == TCONV_OK) {
        split.workspaces = workspaces;
        tc_parallel_for(pool, workers, n_tasks, sgemm_chunk_task, &split);
    }
    for (int i = 0; i < workers; i++)
        tc_gemm_workspace_release(&workspaces[i]);
    return st;
}
