/* Single-precision GEMM for the kernels: C = alpha * op(A) * op(B) + beta * C, row-major.
 *
 * A packed, cache-blocked implementation in the style of BLIS/GotoBLAS: panels of op(B) (KC x NC)
 * and op(A) (MC x KC) are copied into contiguous buffers, and a register-blocked micro-kernel
 * computes MR x NR tiles of C. The micro-kernel is chosen at run time, by CPU and by problem shape
 * (tc_gemm_isa_for_shape): AVX-512 in 12x32 or 8x48 tiles, AVX2+FMA (6x16) or a portable one
 * (4x8, GCC vector extensions where available). B may also be given as row pointers (b_rows), so
 * that a stride-1 convolution needs no im2col copy. With few rows of A (at most 16 row panels), the
 * AVX-512 kernels read an untransposed B where it lies instead of packing it. */
#ifndef TC_RUNTIME_GEMM_H
#define TC_RUNTIME_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/error.h"
#include "runtime/compute/parallel.h"

typedef enum tc_gemm_isa {
    TCONV_GEMM_ISA_AUTO = 0, /* the best one this CPU supports */
    TCONV_GEMM_ISA_PORTABLE,
    TCONV_GEMM_ISA_AVX2,        /* AVX2 + FMA */
    TCONV_GEMM_ISA_AVX512,      /* AVX-512F, 12x32 tiles */
    TCONV_GEMM_ISA_AVX512_8X48, /* AVX-512F, 8x48 tiles: no empty rows at 8, 16, 32, 64 rows */
} tc_gemm_isa;

/* Whether this build and CPU can run the micro-kernel (AUTO is always available). */
bool tc_gemm_isa_available(tc_gemm_isa isa);
/* Whether AUTO's kernel has the row form (B by row pointers under lane masks, read in place or
 * packed a vector at a time): the paths built on such products (the masked Conv, the
 * ConvTranspose phase form) are taken only then; the portable kernel would pack their masked B
 * a lane at a time, for more than they save. AVX2 and AVX-512 have it. */
bool tc_gemm_has_row_form(void);
/* "auto", "portable", "avx2", "avx512", "avx512-8x48". */
const char *tc_gemm_isa_name(tc_gemm_isa isa);
/* The kernel for products of m rows by about n columns: AUTO's instruction set, in the tile shape
 * that pads m x n least (ties: 8x48, which loads less per FMA). A packed A, the workspace and the
 * product must all use the kernel chosen. */
tc_gemm_isa tc_gemm_isa_for_shape(int64_t m, int64_t n);
/* The same for a B given by row pointers (tc_sgemm_op.b_rows). */
tc_gemm_isa tc_gemm_isa_for_rows(int64_t m, int64_t n);
/* The kernels tc_gemm_isa_for_shape chooses among (AUTO's instruction set in each tile shape it
 * has), the one it prefers on a tie first; returns how many (1 or 2). */
int tc_gemm_isa_shapes(tc_gemm_isa shapes[2]);

/* One GEMM: op(A) is m x k, op(B) is k x n, C is m x n. op(X) is X or its transpose. Leading
 * dimensions are the row strides (in elements) of the matrices as stored. With beta == 0, C is
 * not read (it may hold garbage). When b_rows is set (trans_b false), row p of B is the n floats
 * at b_rows[p], wherever they are (b and ldb unused): a stride-1 convolution reads its input
 * this way instead of copying it into an im2col matrix. */
typedef struct tc_sgemm_op {
    bool trans_a, trans_b;
    int64_t m, n, k;
    float alpha;
    const float *a;
    int64_t lda;
    const float *b;
    int64_t ldb;
    const float *const *b_rows;
    float beta;
    float *c;
    int64_t ldc;
    /* With b_rows: B's lanes by masks, one 16-bit mask per 16 columns of the product: column j of
     * row p is read only if bit j % 16 of b_masks[p][j / 16] is set, else it is 0 (so b_rows[p]
     * + j may lie outside any object there). A convolution at stride 1 reads its input in place
     * this way, the taps that fall in the padding masked off. NULL: every column read. */
    const uint16_t *const *b_masks;
    /* Optional with b_masks: b_masks_full[j / 16] nonzero when that word is all ones in every row
     * (the unmasked kernels then run those columns without reading the masks). */
    const uint8_t *b_masks_full;
    /* With b_rows: the product's column j is column b_col0 + j of every row (and of its mask and
     * summary), so one set of row pointers serves every column block of a plane; a multiple of
     * 16 with b_masks. */
    int64_t b_col0;
    /* Instead of b (untransposed) or b_rows: B packed once by tc_sgemm_pack_b for the isa of the
     * workspace that runs it, with op->k and op->n its sizes (a Conv's W^T, kept across runs). */
    const float *packed_b;
    /* With b_rows: the rows lie in different L1 sets (planes a caller copied apart by an odd
     * number of cache lines), so more row panels read them in place
     * (tc_sgemm_spread_rows_pay). */
    bool b_rows_spread;
} tc_sgemm_op;

/* Packing buffers, reusable across calls (one per thread). */
typedef struct tc_gemm_workspace {
    tc_gemm_isa isa; /* resolved at init: never AUTO */
    float *buffer;
    size_t capacity; /* floats */
    bool lent;       /* buffer belongs to the caller (tc_gemm_workspace_lend) */
} tc_gemm_workspace;

/* isa must be available (AUTO picks the best). */
void tc_gemm_workspace_init(tc_gemm_workspace *ws, tc_gemm_isa isa);
/* Makes the workspace large enough for problems up to m x n x k. */
tconv_status tc_gemm_workspace_reserve(tc_gemm_workspace *ws, int64_t m, int64_t n, int64_t k,
                                       tc_error *err);
void tc_gemm_workspace_release(tc_gemm_workspace *ws);
/* Floats a workspace of `isa` needs for problems up to m x n x k. */
size_t tc_gemm_workspace_floats(tc_gemm_isa isa, int64_t m, int64_t n, int64_t k);
/* Gives an initialized, empty workspace `capacity` floats that the caller owns and frees after
 * the workspace's last use (release then forgets them instead of freeing them). */
void tc_gemm_workspace_lend(tc_gemm_workspace *ws, float *buffer, size_t capacity);

/* Runs op in the calling thread with ws's buffers, which must have been reserved for at least
 * op's sizes. Cannot fail. */
void tc_sgemm_run(tc_gemm_workspace *ws, const tc_sgemm_op *op);

/* Pre-packed A, for many products with the same op(A) (a weight matrix against many column
 * blocks): pack once with tc_sgemm_pack_a (into tc_sgemm_packed_a_floats floats, for the
 * isa of the workspace that will run it), then call tc_sgemm_run_packed, which ignores op->a,
 * op->lda and op->trans_a. op->m and op->k must be the sizes it was packed with. */
size_t tc_sgemm_packed_a_floats(tc_gemm_isa isa, int64_t m, int64_t k);
/* The smallest row count of isa's micro-tiles: splitting A's rows in multiples of it wastes no
 * tile rows. */
int64_t tc_sgemm_row_tile(tc_gemm_isa isa);
/* The column count of isa's micro-tiles (a B panel's width). */
int64_t tc_sgemm_col_tile(tc_gemm_isa isa);
void tc_sgemm_pack_a(tc_gemm_isa isa, bool trans_a, int64_t m, int64_t k, const float *a,
                     int64_t lda, float *packed);
void tc_sgemm_run_packed(tc_gemm_workspace *ws, const float *packed_a, const tc_sgemm_op *op);
/* Pre-packed B (tc_sgemm_op.packed_b): op(B), k x n, of b (row stride ldb; trans_b: b is n x k)
 * in isa's panels, into tc_sgemm_packed_b_floats floats; worth it where the product would pack
 * B on every call (tc_sgemm_reads_b_rows_in_place false) and B does not change between calls. */
size_t tc_sgemm_packed_b_floats(tc_gemm_isa isa, int64_t k, int64_t n);
void tc_sgemm_pack_b(tc_gemm_isa isa, bool trans_b, int64_t k, int64_t n, const float *b,
                     int64_t ldb, float *packed);
/* Whether isa's kernel reads an m x n product's B given by row pointers in place. */
bool tc_sgemm_reads_b_rows_in_place(tc_gemm_isa isa, int64_t m, int64_t n);
/* Whether a product of m rows gains from B's rows spread over the L1 sets
 * (tc_sgemm_op.b_rows_spread): isa's kernel then reads them in place, at any n (AVX2, up to 2
 * row panels; AVX-512 reads in place without it). */
bool tc_sgemm_spread_rows_pay(tc_gemm_isa isa, int64_t m);
/* Packs rows [row0, row1) of the m x (channels * taps) matrix A[i][c * taps + t] =
 * base[c * channel_stride + tap_offsets[i * taps + t]], 0 where that offset is negative, into
 * their places in the whole A packed the way tc_sgemm_pack_a does: a convolution's im2col matrix
 * (output positions x (channel, tap)) read straight from its input, the taps that fall outside it
 * as zeros, without building it (taps = 1: a plain gather of rows). row0 is a multiple of
 * tc_sgemm_row_tile(isa), and so is row1 unless it is m or more (rows 0 .. m: all of A), so that
 * several threads can each pack their rows of one A. */
void tc_sgemm_pack_a_taps(tc_gemm_isa isa, int64_t m, int64_t row0, int64_t row1, int64_t channels,
                          int64_t taps, const float *base, int64_t channel_stride,
                          const int64_t *tap_offsets, float *packed);

/* Convenience: allocates its own buffers and splits the work over up to n_threads threads of
 * `pool` (NULL or 1: the calling thread only). Fails only when memory runs out. */
tconv_status tc_sgemm(const tc_sgemm_op *op, tc_thread_pool *pool, int n_threads, tc_error *err);

#endif
