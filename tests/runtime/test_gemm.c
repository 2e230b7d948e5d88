/* The packed sgemm against a naive triple loop: every micro-kernel this CPU has, every
 * transpose combination, odd sizes, 1xN and Nx1, sizes that are not multiples of the blocks,
 * padded leading dimensions, alpha/beta, and the threaded entry point. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/compute/gemm.h"
#include "kernel_harness.h"

typedef struct matrices {
    float *a, *b, *c, *want;
    int64_t lda, ldb, ldc;
} matrices;

static void naive_sgemm(const tc_sgemm_op *op, float *c) {
    for (int64_t i = 0; i < op->m; i++) {
        for (int64_t j = 0; j < op->n; j++) {
            double sum = 0.0;
            for (int64_t p = 0; p < op->k; p++) {
                float a = op->trans_a ? op->a[p * op->lda + i] : op->a[i * op->lda + p];
                float b = op->trans_b ? op->b[j * op->ldb + p] : op->b[p * op->ldb + j];
                sum += (double)a * (double)b;
            }
            float *cij = &c[i * op->ldc + j];
            *cij = (float)(op->alpha * sum + (op->beta == 0.0f ? 0.0 : op->beta * *cij));
        }
    }
}

/* Allocates A, B, C for op's sizes with `pad` extra elements per row, fills them, and points op
 * at them. C is filled with NaN when beta == 0 (it must not be read). */
static matrices make_matrices(tc_sgemm_op *op, int64_t pad, uint64_t *rng) {
    matrices mx;
    int64_t a_rows = op->trans_a ? op->k : op->m, a_cols = op->trans_a ? op->m : op->k;
    int64_t b_rows = op->trans_b ? op->n : op->k, b_cols = op->trans_b ? op->k : op->n;
    mx.lda = a_cols + pad;
    mx.ldb = b_cols + pad;
    mx.ldc = op->n + pad;
    size_t a_n = (size_t)(a_rows * mx.lda) + 1, b_n = (size_t)(b_rows * mx.ldb) + 1;
    size_t c_n = (size_t)(op->m * mx.ldc) + 1;
    mx.a = malloc(a_n * sizeof(float));
    mx.b = malloc(b_n * sizeof(float));
    mx.c = malloc(c_n * sizeof(float));
    mx.want = malloc(c_n * sizeof(float));
    assert_non_null(mx.a);
    assert_non_null(mx.b);
    assert_non_null(mx.c);
    assert_non_null(mx.want);
    kh_fill_random(mx.a, (int64_t)a_n, rng);
    kh_fill_random(mx.b, (int64_t)b_n, rng);
    kh_fill_random(mx.c, (int64_t)c_n, rng);
    if (op->beta == 0.0f)
        for (size_t i = 0; i < c_n; i++)
            mx.c[i] = NAN;
    memcpy(mx.want, mx.c, c_n * sizeof(float));
    op->a = mx.a;
    op->lda = mx.lda;
    op->b = mx.b;
    op->ldb = mx.ldb;
    op->c = mx.c;
    op->ldc = mx.ldc;
    return mx;
}

static void free_matrices(matrices *mx) {
    free(mx->a);
    free(mx->b);
    free(mx->c);
    free(mx->want);
}

/* C within tolerance of the reference; the padding columns of C untouched. */
static void expect_result(const tc_sgemm_op *op, const matrices *mx, const char *what) {
    for (int64_t i = 0; i < op->m; i++) {
        for (int64_t j = 0; j < mx->ldc; j++) {
            float got = mx->c[i * mx->ldc + j], want = mx->want[i * mx->ldc + j];
            bool ok = j >= op->n ? (memcmp(&got, &want, sizeof got) == 0)
                                 : fabsf(got - want) <=
                                       1e-4f * (1.0f + fabsf(want)) + 1e-5f * (float)op->k;
            if (!ok) {
                print_error("%s: m=%lld n=%lld k=%lld ta=%d tb=%d alpha=%g beta=%g: C[%lld,%lld] "
                            "= %.7g, want %.7g\n",
                            what, (long long)op->m, (long long)op->n, (long long)op->k, op->trans_a,
                            op->trans_b, op->alpha, op->beta, (long long)i, (long long)j, got,
                            want);
                fail();
            }
        }
    }
}

static void check_one(tc_gemm_isa isa, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                      float alpha, float beta, int64_t pad, uint64_t *rng) {
    tc_sgemm_op op = {
        .trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta};
    matrices mx = make_matrices(&op, pad, rng);
    naive_sgemm(&op, mx.want);
    tc_gemm_workspace ws;
    tc_gemm_workspace_init(&ws, isa);
    assert_int_equal(ws.isa, isa);
    tc_error err;
    assert_int_equal(tc_gemm_workspace_reserve(&ws, m, n, k, &err), TCONV_OK);
    tc_sgemm_run(&ws, &op);
    tc_gemm_workspace_release(&ws);
    expect_result(&op, &mx, tc_gemm_isa_name(isa));
    free_matrices(&mx);
}

static const tc_gemm_isa ALL_ISAS[] = {TCONV_GEMM_ISA_PORTABLE, TCONV_GEMM_ISA_AVX2,
                                       TCONV_GEMM_ISA_AVX512, TCONV_GEMM_ISA_AVX512_8X48};

static void test_edge_shapes_all_isas(void **state) {
    (void)state;
    static const int64_t sizes[] = {1, 2, 3, 5, 7, 11, 13, 16, 17, 31, 33, 47, 64, 65};
    size_t n_sizes = sizeof sizes / sizeof sizes[0];
    uint64_t rng = 1;
    for (size_t isa = 0; isa < sizeof ALL_ISAS / sizeof ALL_ISAS[0]; isa++) {
        if (!tc_gemm_isa_available(ALL_ISAS[isa]))
            continue;
        for (size_t im = 0; im < n_sizes; im += 2)
            for (size_t in = 1; in < n_sizes; in += 2)
                for (int t = 0; t < 4; t++)
                    check_one(ALL_ISAS[isa], sizes[im], sizes[in], sizes[(im + in + t) % n_sizes],
                              t & 1, t & 2, 1.0f, 0.0f, t, &rng);
    }
}

static void test_vectors_all_isas(void **state) {
    (void)state;
    uint64_t rng = 2;
    for (size_t isa = 0; isa < sizeof ALL_ISAS / sizeof ALL_ISAS[0]; isa++) {
        if (!tc_gemm_isa_available(ALL_ISAS[isa]))
            continue;
        for (int t = 0; t < 4; t++) {
            check_one(ALL_ISAS[isa], 1, 301, 77, t & 1, t & 2, 1.0f, 0.0f, 0, &rng); /* 1xN */
            check_one(ALL_ISAS[isa], 301, 1, 77, t & 1, t & 2, 1.0f, 0.0f, 1, &rng); /* Nx1 */
            check_one(ALL_ISAS[isa], 1, 1, 500, t & 1, t & 2, 1.0f, 0.5f, 0, &rng);
            check_one(ALL_ISAS[isa], 37, 41, 1, t & 1, t & 2, 1.0f, 1.0f, 2, &rng);
        }
    }
}

/* Larger than every block size (mc 144, kc 256, nc 2048) in some dimension, with alpha/beta. */
static void test_beyond_blocks_all_isas(void **state) {
    (void)state;
    uint64_t rng = 3;
    for (size_t isa = 0; isa < sizeof ALL_ISAS / sizeof ALL_ISAS[0]; isa++) {
        if (!tc_gemm_isa_available(ALL_ISAS[isa]))
            continue;
        check_one(ALL_ISAS[isa], 151, 67, 521, false, false, 0.5f, 0.25f, 3, &rng);
        check_one(ALL_ISAS[isa], 29, 2083, 19, true, false, -1.5f, 1.0f, 0, &rng);
        check_one(ALL_ISAS[isa], 293, 45, 260, true, true, 1.0f, 0.0f, 1, &rng);
        check_one(ALL_ISAS[isa], 13, 301, 300, false, true, 2.0f, -1.0f, 0, &rng);
    }
}

static void test_random_shapes(void **state) {
    (void)state;
    uint64_t rng = 4;
    static const float alphas[] = {1.0f, 0.5f, -2.0f};
    static const float betas[] = {0.0f, 1.0f, 0.75f};
    for (int trial = 0; trial < 150; trial++) {
        int64_t m = kh_rand_range(&rng, 1, 90), n = kh_rand_range(&rng, 1, 130);
        int64_t k = kh_rand_range(&rng, 1, 300);
        tc_gemm_isa isa = ALL_ISAS[kh_rand_range(&rng, 0, 2)];
        if (!tc_gemm_isa_available(isa))
            isa = TCONV_GEMM_ISA_PORTABLE;
        check_one(isa, m, n, k, kh_rand_range(&rng, 0, 1), kh_rand_range(&rng, 0, 1),
                  alphas[trial % 3], betas[(trial / 3) % 3], kh_rand_range(&rng, 0, 3), &rng);
    }
}

/* k == 0 and alpha == 0 scale C by beta (and never read it when beta == 0). */
static void test_degenerate(void **state) {
    (void)state;
    float c[6] = {1, 2, 3, 4, 5, 6}, a[1] = {0}, b[1] = {0};
    tc_sgemm_op op = {.m = 2,
                      .n = 3,
                      .k = 0,
                      .alpha = 1.0f,
                      .a = a,
                      .lda = 1,
                      .b = b,
                      .ldb = 3,
                      .beta = 2.0f,
                      .c = c,
                      .ldc = 3};
    tc_error err;
    assert_int_equal(tc_sgemm(&op, NULL, 1, &err), TCONV_OK);
    for (int i = 0; i < 6; i++)
        assert_true(c[i] == 2.0f * (float)(i + 1));
    for (int i = 0; i < 6; i++)
        c[i] = NAN;
    op.beta = 0.0f;
    assert_int_equal(tc_sgemm(&op, NULL, 1, &err), TCONV_OK);
    for (int i = 0; i < 6; i++)
        assert_true(c[i] == 0.0f);
    op.m = 0;
    assert_int_equal(tc_sgemm(&op, NULL, 1, &err), TCONV_OK);
}

/* The threaded entry point splits rows or columns; results equal the reference. The pool starts
 * threads for the largest count asked for and keeps them for the next calls. */
static void test_threaded(void **state) {
    (void)state;
    uint64_t rng = 5;
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    static const int64_t shapes[][3] = {{300, 40, 70}, {40, 700, 90}, {257, 259, 129}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int threads = 1; threads <= 4; threads++) {
            tc_sgemm_op op = {.trans_a = s == 1,
                              .trans_b = s == 2,
                              .m = shapes[s][0],
                              .n = shapes[s][1],
                              .k = shapes[s][2],
                              .alpha = 1.0f,
                              .beta = 0.5f};
            matrices mx = make_matrices(&op, 1, &rng);
            naive_sgemm(&op, mx.want);
            tc_error err;
            assert_int_equal(tc_sgemm(&op, pool, threads, &err), TCONV_OK);
            expect_result(&op, &mx, "threaded");
            free_matrices(&mx);
        }
    }
    assert_true(tc_thread_pool_size(pool) >= 1 && tc_thread_pool_size(pool) <= 3);
    tc_thread_pool_destroy(pool);
}

/* A packed once and reused: several k blocks (kc 256) and m blocks (mc 144), both layouts. */
/* Packs op's A for isa and runs `run` (op with what the packed path must not read changed) on
 * it. */
static void run_prepacked(tc_gemm_isa isa, const tc_sgemm_op *op, const tc_sgemm_op *run) {
    tc_gemm_workspace ws;
    tc_gemm_workspace_init(&ws, isa);
    tc_error err;
    assert_int_equal(tc_gemm_workspace_reserve(&ws, op->m, op->n, op->k, &err), TCONV_OK);
    size_t n_packed = tc_sgemm_packed_a_floats(ws.isa, op->m, op->k);
    float *packed = malloc(n_packed * sizeof(float));
    assert_non_null(packed);
    tc_sgemm_pack_a(ws.isa, op->trans_a, op->m, op->k, op->a, op->lda, packed);
    tc_sgemm_run_packed(&ws, packed, run);
    free(packed);
    tc_gemm_workspace_release(&ws);
}

static void test_prepacked_a(void **state) {
    (void)state;
    uint64_t rng = 6;
    static const int64_t shapes[][3] = {{7, 45, 13}, {150, 37, 300}, {301, 70, 520}};
    for (size_t isa = 0; isa < sizeof ALL_ISAS / sizeof ALL_ISAS[0]; isa++) {
        if (!tc_gemm_isa_available(ALL_ISAS[isa]))
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            for (int ta = 0; ta < 2; ta++) {
                tc_sgemm_op op = {.trans_a = ta,
                                  .m = shapes[s][0],
                                  .n = shapes[s][1],
                                  .k = shapes[s][2],
                                  .alpha = 1.0f,
                                  .beta = 0.5f};
                matrices mx = make_matrices(&op, 1, &rng);
                naive_sgemm(&op, mx.want);
                tc_sgemm_op no_a = op;
                no_a.a = NULL; /* must not be read */
                run_prepacked(ALL_ISAS[isa], &op, &no_a);
                expect_result(&op, &mx, "prepacked");
                free_matrices(&mx);
            }
        }
    }
}

/* B packed once (tc_sgemm_pack_b, both layouts) and given as packed_b, A packed too: shapes
 * across several kc blocks (256), more than one nc block (2016-2048 columns), partial row and
 * column tiles (a tail of 1-5 rows, panels paired or not), beta 0 and not; b must not be read. */
static void test_prepacked_b(void **state) {
    (void)state;
    uint64_t rng = 12;
    static const int64_t shapes[][3] = {{7, 45, 13},    {8, 100, 300}, {33, 2100, 40},
                                        {151, 67, 521}, {2, 33, 9},    {29, 64, 257}};
    for (size_t isa = 0; isa < sizeof ALL_ISAS / sizeof ALL_ISAS[0]; isa++) {
        if (!tc_gemm_isa_available(ALL_ISAS[isa]))
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            for (int tb = 0; tb < 2; tb++) {
                tc_sgemm_op op = {.trans_b = tb,
                                  .m = shapes[s][0],
                                  .n = shapes[s][1],
                                  .k = shapes[s][2],
                                  .alpha = 1.0f,
                                  .beta = s % 2 ? 1.0f : 0.0f};
                matrices mx = make_matrices(&op, 2, &rng);
                naive_sgemm(&op, mx.want);
                float *packed =
                    malloc(tc_sgemm_packed_b_floats(ALL_ISAS[isa], op.k, op.n) * sizeof(float));
                assert_non_null(packed);
                tc_sgemm_pack_b(ALL_ISAS[isa], tb, op.k, op.n, op.b, op.ldb, packed);
                tc_sgemm_op by_packed = op;
                by_packed.b = NULL; /* must not be read */
                by_packed.trans_b = false;
                by_packed.packed_b = packed;
                run_prepacked(ALL_ISAS[isa], &op, &by_packed);
                expect_result(&op, &mx, tc_gemm_isa_name(ALL_ISAS[isa]));
                free(packed);
                free_matrices(&mx);
            }
        }
    }
}

/* B given as row pointers (b_rows), in reverse order of the rows stored: products with few row
 * panels read B in place (full column panels) and pack only the partial one; more rows pack it.
 * Shapes cross both, partial row and column tiles, several kc blocks, and alpha/beta, and 1-3
 * rows reading two column panels at a time (whole pairs, a partial second panel, an odd panel
 * left over). */
static void test_b_rows(void **state) {
    (void)state;
    uint64_t rng = 8;
    /* every partial row count of a tile (1 to 11 rows: a Conv's few output positions) */
    static const int64_t shapes[][3] = {
        {8, 96, 72},   {5, 61, 9},   {12, 100, 300}, {64, 49, 27}, {70, 130, 600}, {150, 33, 17},
        {200, 50, 40}, {1, 40, 20},  {2, 33, 30},    {3, 16, 5},   {4, 128, 1152}, {6, 47, 150},
        {7, 64, 10},   {9, 17, 300}, {10, 50, 33},   {11, 96, 12}, {13, 48, 7},    {16, 64, 576},
        {1, 100, 9},   {2, 64, 30},  {3, 96, 50},    {3, 47, 20},  {2, 80, 260},   {1, 31, 5}};
    for (size_t isa = 0; isa < sizeof ALL_ISAS / sizeof ALL_ISAS[0]; isa++) {
        if (!tc_gemm_isa_available(ALL_ISAS[isa]))
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            for (int scaled = 0; scaled < 2; scaled++) {
                tc_sgemm_op op = {.m = shapes[s][0],
                                  .n = shapes[s][1],
                                  .k = shapes[s][2],
                                  .alpha = scaled ? 0.5f : 1.0f,
                                  .beta = scaled ? 2.0f : 0.0f};
                matrices mx = make_matrices(&op, 3, &rng);
                /* B's rows stored bottom up, so only the pointers give their order */
                float *flipped = malloc((size_t)(op.k * op.ldb) * sizeof(float));
                const float **rows = malloc((size_t)op.k * sizeof *rows);
                assert_non_null(flipped);
                assert_non_null(rows);
                for (int64_t p = 0; p < op.k; p++) {
                    float *row = flipped + (op.k - 1 - p) * op.ldb;
                    memcpy(row, op.b + p * op.ldb, (size_t)op.n * sizeof(float));
                    rows[p] = row;
                }
                naive_sgemm(&op, mx.want);
                size_t c_bytes = (size_t)(op.m * op.ldc + 1) * sizeof(float);
                float *c_before = malloc(c_bytes);
                assert_non_null(c_before);
                memcpy(c_before, mx.c, c_bytes);
                tc_sgemm_op by_rows = op;
                by_rows.b = NULL; /* must not be read */
                by_rows.b_rows = rows;
                run_prepacked(ALL_ISAS[isa], &op, &by_rows);
                expect_result(&op, &mx, tc_gemm_isa_name(ALL_ISAS[isa]));
                /* the same rows, the product from their column 3 (b_col0): the 3 floats
                 * before each row's data are NaN */
                float *shifted = malloc((size_t)(op.k * (op.ldb + 3)) * sizeof(float));
                assert_non_null(shifted);
                for (int64_t p = 0; p < op.k; p++) {
                    float *row = shifted + p * (op.ldb + 3);
                    row[0] = row[1] = row[2] = NAN;
                    memcpy(row + 3, rows[p], (size_t)op.n * sizeof(float));
                    rows[p] = row;
                }
                by_rows.b_col0 = 3;
                memcpy(mx.c, c_before, c_bytes);
                run_prepacked(ALL_ISAS[isa], &op, &by_rows);
                expect_result(&op, &mx, "b_rows from column 3");
                free(shifted);
                free(c_before);
                free(rows);
                free(flipped);
                free_matrices(&mx);
            }
        }
    }
}

/* tc_sgemm_pack_a_taps packs exactly what tc_sgemm_pack_a packs from the gathered matrix:
 * A[i][c * taps + t] = base[c * stride + offsets[i * taps + t]], 0 for a negative offset, in any
 * order, several kc blocks (a channel's taps across a block's edge) and partial row panels,
 * whole or by ranges of row panels; the product from it matches the reference. */
static void test_pack_a_taps(void **state) {
    (void)state;
    uint64_t rng = 9;
    /* m, channels, taps */
    static const int64_t shapes[][3] = {
        {4, 128, 9}, {1, 7, 1}, {13, 30, 10}, {36, 58, 5}, {24, 64, 9}};
    for (size_t isa = 0; isa < sizeof ALL_ISAS / sizeof ALL_ISAS[0]; isa++) {
        if (!tc_gemm_isa_available(ALL_ISAS[isa]))
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int64_t m = shapes[s][0], channels = shapes[s][1], taps = shapes[s][2];
            int64_t k = channels * taps, n = 33, stride = 2 * m + 3;
            int64_t base_n = channels * stride + 2 * m;
            float *base = malloc((size_t)base_n * sizeof(float));
            int64_t *offsets = malloc((size_t)(m * taps) * sizeof(int64_t));
            assert_non_null(base);
            assert_non_null(offsets);
            kh_fill_random(base, base_n, &rng);
            for (int64_t i = 0; i < m * taps; i++)
                offsets[i] = kh_rand_range(&rng, 0, 4) == 0 ? -1 : kh_rand_range(&rng, 0, 2 * m);
            tc_sgemm_op op = {.m = m, .n = n, .k = k, .alpha = 1.0f};
            matrices mx = make_matrices(&op, 0, &rng);
            for (int64_t i = 0; i < m; i++) {
                for (int64_t p = 0; p < k; p++) {
                    int64_t at = offsets[i * taps + p % taps];
                    mx.a[i * op.lda + p] = at < 0 ? 0.0f : base[(p / taps) * stride + at];
                }
            }
            tc_gemm_workspace ws;
            tc_gemm_workspace_init(&ws, ALL_ISAS[isa]);
            size_t n_packed = tc_sgemm_packed_a_floats(ws.isa, m, k);
            float *want = malloc(n_packed * sizeof(float)), *got = malloc(n_packed * sizeof(float));
            assert_non_null(want);
            assert_non_null(got);
            tc_sgemm_pack_a(ws.isa, false, m, k, mx.a, op.lda, want);
            tc_sgemm_pack_a_taps(ws.isa, m, 0, m, channels, taps, base, stride, offsets, got);
            assert_memory_equal(got, want, n_packed * sizeof(float));
            /* by ranges of whole row panels (threads packing one A), the last past m: every
             * float written, none twice */
            int64_t slice = tc_sgemm_row_tile(ws.isa) * (1 + (int64_t)(s % 2));
            memset(got, 0xff, n_packed * sizeof(float));
            for (int64_t row0 = 0; row0 < m; row0 += slice)
                tc_sgemm_pack_a_taps(ws.isa, m, row0, row0 + slice, channels, taps, base, stride,
                                     offsets, got);
            assert_memory_equal(got, want, n_packed * sizeof(float));
            tc_error err;
            assert_int_equal(tc_gemm_workspace_reserve(&ws, m, n, k, &err), TCONV_OK);
            naive_sgemm(&op, mx.want);
            tc_sgemm_run_packed(&ws, got, &op);
            expect_result(&op, &mx, "gathered A");
            tc_gemm_workspace_release(&ws);
            free(want);
            free(got);
            free(base);
            free(offsets);
            free_matrices(&mx);
        }
    }
}

/* B by row pointers with lane masks (b_masks): masked-off columns hold NaN, which must read as 0
 * (not loaded), both where B is read in place (few row panels) and where it is packed (many),
 * for every ISA, partial tiles, several kc blocks and alpha/beta; with and without the per-word
 * summary (b_masks_full), and with the product starting at column 0 or 32 of the rows
 * (b_col0: the columns before it hold NaN under all-on masks and an all-on summary, so reading
 * any of them shows). A fourth variant turns every lane on but the last mask word's, so that
 * 1-3 rows read whole pairs of column panels unmasked beside a masked one. */
static void test_b_masks(void **state) {
    (void)state;
    uint64_t rng = 10;
    static const int64_t shapes[][3] = {{12, 64, 27},  {5, 61, 9},   {64, 100, 300}, {200, 50, 40},
                                        {300, 33, 17}, {1, 16, 300}, {37, 130, 200}, {1, 61, 40},
                                        {1, 96, 270},  {2, 64, 50},  {3, 100, 30},   {3, 47, 9}};
    enum { SKIP = 32, SKIP_WORDS = SKIP / 16 };
    for (size_t isa = 0; isa < sizeof ALL_ISAS / sizeof ALL_ISAS[0]; isa++) {
        if (!tc_gemm_isa_available(ALL_ISAS[isa]))
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            for (int variant = 0; variant < 4; variant++) {
                bool summary = variant >= 1, mostly_on = variant == 3;
                int64_t skip = variant == 2 ? SKIP : 0, skip_words = skip / 16;
                tc_sgemm_op op = {.m = shapes[s][0],
                                  .n = shapes[s][1],
                                  .k = shapes[s][2],
                                  .alpha = s % 2 ? 0.5f : 1.0f,
                                  .beta = s % 2 ? 2.0f : 0.0f};
                matrices mx = make_matrices(&op, 0, &rng);
                int64_t words = (op.n + 15) / 16, row_words = words + skip_words;
                int64_t row_floats = op.ldb + skip;
                uint16_t *masks = malloc((size_t)(op.k * row_words) * sizeof(uint16_t));
                uint8_t *full = malloc((size_t)row_words);
                const float **rows = malloc((size_t)op.k * sizeof *rows);
                const uint16_t **mask_rows = malloc((size_t)op.k * sizeof *mask_rows);
                float *poisoned = malloc((size_t)(op.k * row_floats) * sizeof(float));
                assert_true(masks && full && rows && mask_rows && poisoned);
                for (int64_t w = 0; w < row_words; w++)
                    full[w] = 1;
                for (int64_t p = 0; p < op.k; p++) {
                    uint16_t *mrow = masks + p * row_words;
                    float *row = poisoned + p * row_floats;
                    for (int64_t w = 0; w < skip_words; w++)
                        mrow[w] = 0xFFFF;
                    for (int64_t j = 0; j < skip; j++)
                        row[j] = NAN;
                    for (int64_t w = 0; w < words; w++)
                        mrow[skip_words + w] = mostly_on && w < words - 1
                                                   ? 0xFFFF
                                                   : (uint16_t)kh_rand_range(&rng, 0, 0xFFFF);
                    if (p % 5 == 0 || op.k < 20)
                        mrow[skip_words] = 0xFFFF; /* whole vectors too, some in every row */
                    for (int64_t w = 0; w < words; w++)
                        full[skip_words + w] &= mrow[skip_words + w] == 0xFFFF;
                    for (int64_t j = 0; j < op.n; j++) {
                        bool on = (mrow[skip_words + j / 16] >> (j % 16)) & 1;
                        row[skip + j] = on ? mx.b[p * op.ldb + j] : NAN;
                        mx.b[p * op.ldb + j] = on ? mx.b[p * op.ldb + j] : 0.0f;
                    }
                    rows[p] = row;
                    mask_rows[p] = mrow;
                }
                naive_sgemm(&op, mx.want);
                tc_sgemm_op masked = op;
                masked.b = NULL;
                masked.b_rows = rows;
                masked.b_masks = mask_rows;
                masked.b_masks_full = summary ? full : NULL;
                masked.b_col0 = skip;
                run_prepacked(ALL_ISAS[isa], &op, &masked);
                expect_result(&op, &mx, tc_gemm_isa_name(ALL_ISAS[isa]));
                free(masks);
                free(full);
                free(rows);
                free(mask_rows);
                free(poisoned);
                free_matrices(&mx);
            }
        }
    }
}

static void test_isa_names(void **state) {
    (void)state;
    assert_string_equal(tc_gemm_isa_name(TCONV_GEMM_ISA_AVX2), "avx2");
    assert_true(tc_gemm_isa_available(TCONV_GEMM_ISA_PORTABLE));
    tc_gemm_workspace ws;
    tc_gemm_workspace_init(&ws, TCONV_GEMM_ISA_AUTO);
    assert_int_not_equal(ws.isa, TCONV_GEMM_ISA_AUTO);
    tc_gemm_workspace_release(&ws);
}

/* The tile shape follows the padding: 8 rows fill 8x48 tiles (12x32 would leave a third of each
 * empty), 16 columns fill half a 32-wide tile but a third of a 48-wide one. */
static void test_isa_for_shape(void **state) {
    (void)state;
    tc_gemm_isa wide = tc_gemm_isa_for_shape(8, 4096);
    tc_gemm_isa tall = tc_gemm_isa_for_shape(1024, 16);
    assert_true(tc_gemm_isa_available(wide));
    assert_true(tc_gemm_isa_available(tall));
    if (tc_gemm_isa_available(TCONV_GEMM_ISA_AVX512)) {
        assert_int_equal(wide, TCONV_GEMM_ISA_AVX512_8X48);
        assert_int_equal(tall, TCONV_GEMM_ISA_AVX512);
        assert_string_equal(tc_gemm_isa_name(wide), "avx512-8x48");
    } else {
        assert_int_equal(wide, tall);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_shapes_all_isas),
        cmocka_unit_test(test_isa_for_shape),
        cmocka_unit_test(test_prepacked_b),
        cmocka_unit_test(test_vectors_all_isas),
        cmocka_unit_test(test_beyond_blocks_all_isas),
        cmocka_unit_test(test_random_shapes),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_threaded),
        cmocka_unit_test(test_prepacked_a),
        cmocka_unit_test(test_b_rows),
        cmocka_unit_test(test_pack_a_taps),
        cmocka_unit_test(test_b_masks),
        cmocka_unit_test(test_isa_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
