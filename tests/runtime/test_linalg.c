/* MatMul and Gemm kernels: numpy MatMul semantics (1-D promotion, batch broadcasting) against a
 * naive loop, Gemm attributes and C broadcasting, errors, and the ONNX conformance node tests. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "importer/importer.h"
#include "kernel_harness.h"
#include "testutil.h"

/* Offset of the matrix at broadcast batch coords `idx` in an operand with batch dims `dims`
 * (right-aligned against out_rank axes). */
static int64_t operand_offset(const int64_t *idx, int out_rank, const int64_t *dims, int rank,
                              int64_t matrix) {
    int64_t off = 0;
    for (int i = 0; i < rank; i++) {
        int64_t c = idx[out_rank - rank + i];
        off = off * dims[i] + (dims[i] == 1 ? 0 : c);
    }
    return off * matrix;
}

/* Runs MatMul on shapes a_dims x b_dims and checks against a naive product. */
static void check_matmul(int a_rank, const int64_t *a_dims, int b_rank, const int64_t *b_dims,
                         int out_rank, const int64_t *out_dims, int threads) {
    kernel_harness h;
    kh_init(&h, "MatMul", 1);
    h.n_threads = threads;
    uint64_t rng = 99;
    tc_rt_tensor *a = kh_input(&h, a_rank, a_dims, NULL);
    tc_rt_tensor *b = kh_input(&h, b_rank, b_dims, NULL);
    kh_fill_random(a->data, a->n_elements, &rng);
    kh_fill_random(b->data, b->n_elements, &rng);
    kh_run_ok(&h);
    kh_expect_shape(&h.outputs[0], out_rank, out_dims);
    int64_t m = a_rank == 1 ? 1 : a_dims[a_rank - 2], k = a_dims[a_rank - 1];
    int64_t n = b_rank == 1 ? 1 : b_dims[b_rank - 1];
    int a_batch = a_rank > 2 ? a_rank - 2 : 0, b_batch = b_rank > 2 ? b_rank - 2 : 0;
    int batch_rank = a_batch > b_batch ? a_batch : b_batch;
    int64_t n_batch = 1;
    int64_t bdims[TC_MAX_RANK];
    for (int i = 0; i < batch_rank; i++) {
        int ia = i - (batch_rank - a_batch), ib = i - (batch_rank - b_batch);
        int64_t da = ia >= 0 ? a_dims[ia] : 1, db = ib >= 0 ? b_dims[ib] : 1;
        bdims[i] = da == 1 ? db : da;
        n_batch *= bdims[i];
    }
    const float *ad = a->data, *bd = b->data, *y = h.outputs[0].data;
    for (int64_t t = 0; t < n_batch; t++) {
        int64_t idx[TC_MAX_RANK], rest = t;
        for (int i = batch_rank - 1; i >= 0; i--) {
            idx[i] = rest % bdims[i];
            rest /= bdims[i];
        }
        int64_t ao = operand_offset(idx, batch_rank, a_dims, a_batch, m * k);
        int64_t bo = operand_offset(idx, batch_rank, b_dims, b_batch, k * n);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += (double)ad[ao + i * k + p] * bd[bo + p * n + j];
                float got = y[(t * m + i) * n + j];
                if (fabs(got - s) > 1e-4 * (1 + fabs(s))) {
                    print_error("batch %lld [%lld,%lld]: got %g want %g\n", (long long)t,
                                (long long)i, (long long)j, got, s);
                    fail();
                }
            }
    }
    kh_free(&h);
}

static void test_matmul_shapes(void **state) {
    (void)state;
    check_matmul(1, (const int64_t[]){7}, 1, (const int64_t[]){7}, 0, NULL, 1);
    check_matmul(1, (const int64_t[]){5}, 3, (const int64_t[]){2, 5, 3}, 2, (const int64_t[]){2, 3},
                 1);
    check_matmul(3, (const int64_t[]){2, 4, 5}, 1, (const int64_t[]){5}, 2, (const int64_t[]){2, 4},
                 1);
    check_matmul(2, (const int64_t[]){33, 17}, 2, (const int64_t[]){17, 45}, 2,
                 (const int64_t[]){33, 45}, 2);
    /* stack x one matrix: folded into one tall GEMM */
    check_matmul(3, (const int64_t[]){4, 9, 6}, 2, (const int64_t[]){6, 11}, 3,
                 (const int64_t[]){4, 9, 11}, 2);
    /* broadcasting on both sides */
    check_matmul(4, (const int64_t[]){2, 1, 3, 4}, 3, (const int64_t[]){5, 4, 2}, 4,
                 (const int64_t[]){2, 5, 3, 2}, 1);
    check_matmul(4, (const int64_t[]){2, 1, 3, 4}, 3, (const int64_t[]){5, 4, 2}, 4,
                 (const int64_t[]){2, 5, 3, 2}, 3);
    check_matmul(3, (const int64_t[]){1, 3, 4}, 3, (const int64_t[]){6, 4, 2}, 3,
                 (const int64_t[]){6, 3, 2}, 2);
    /* empty batch */
    check_matmul(3, (const int64_t[]){0, 3, 4}, 2, (const int64_t[]){4, 2}, 3,
                 (const int64_t[]){0, 3, 2}, 1);
}

/* Gemm with A (2x3) = 1..6, B (3x2) = 1..6 -> AB = [[22, 28], [49, 64]]. */
static void run_gemm(int64_t trans_a, int64_t trans_b, float alpha, float beta, int c_rank,
                     const int64_t *c_dims, const float *c, const float *want) {
    kernel_harness h;
    kh_init(&h, "Gemm", 1);
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 2, 3, 4, 5, 6};
    float at[6] = {1, 4, 2, 5, 3, 6}, bt[6] = {1, 3, 5, 2, 4, 6};
    kh_input(&h, 2, trans_a ? (const int64_t[]){3, 2} : (const int64_t[]){2, 3}, trans_a ? at : a);
    kh_input(&h, 2, trans_b ? (const int64_t[]){2, 3} : (const int64_t[]){3, 2}, trans_b ? bt : b);
    if (c)
        kh_input(&h, c_rank, c_dims, c);
    kh_attr_int(&h, "transA", trans_a);
    kh_attr_int(&h, "transB", trans_b);
    kh_attr_float(&h, "alpha", alpha);
    kh_attr_float(&h, "beta", beta);
    kh_run_ok(&h);
    kh_expect_shape(&h.outputs[0], 2, (const int64_t[]){2, 2});
    kh_expect_close(h.outputs[0].data, want, 4, 1e-6, 1e-6);
    kh_free(&h);
}

static void test_gemm_attributes_and_c(void **state) {
    (void)state;
    run_gemm(0, 0, 1, 1, 0, NULL, NULL, (const float[]){22, 28, 49, 64});
    run_gemm(1, 0, 1, 1, 0, NULL, NULL, (const float[]){22, 28, 49, 64});
    run_gemm(0, 1, 1, 1, 0, NULL, NULL, (const float[]){22, 28, 49, 64});
    run_gemm(1, 1, 0.5f, 1, 0, NULL, NULL, (const float[]){11, 14, 24.5f, 32});
    /* scalar C, [N] C, [M,1] C, full C, beta */
    run_gemm(0, 0, 1, 2, 0, NULL, (const float[]){1}, (const float[]){24, 30, 51, 66});
    run_gemm(0, 0, 1, 1, 1, (const int64_t[]){2}, (const float[]){1, -1},
             (const float[]){23, 27, 50, 63});
    run_gemm(0, 0, 1, 1, 2, (const int64_t[]){2, 1}, (const float[]){1, -1},
             (const float[]){23, 29, 48, 63});
    run_gemm(0, 0, 2, -1, 2, (const int64_t[]){2, 2}, (const float[]){1, 2, 3, 4},
             (const float[]){43, 54, 95, 124});
    /* beta 0 ignores C */
    run_gemm(0, 0, 1, 0, 2, (const int64_t[]){2, 2}, (const float[]){1, 2, 3, 4},
             (const float[]){22, 28, 49, 64});
}

static void test_errors(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "MatMul", 1);
    kh_input(&h, 2, (const int64_t[]){2, 3}, NULL);
    kh_input(&h, 2, (const int64_t[]){4, 2}, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    kh_init(&h, "MatMul", 1);
    kh_input(&h, 3, (const int64_t[]){2, 2, 3}, NULL);
    kh_input(&h, 3, (const int64_t[]){3, 3, 2}, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    kh_init(&h, "Gemm", 1);
    kh_input(&h, 2, (const int64_t[]){2, 3}, NULL);
    kh_input(&h, 2, (const int64_t[]){3, 2}, NULL);
    kh_input(&h, 1, (const int64_t[]){3}, NULL); /* C does not broadcast to 2x2 */
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    kh_init(&h, "Gemm", 1);
    kh_input_typed(&h, TCONV_DTYPE_INT64, 2, (const int64_t[]){2, 3}, NULL);
    kh_input(&h, 2, (const int64_t[]){3, 2}, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(h.err.message, "int64"));
    kh_free(&h);
}

/* Runs every ONNX node test whose name starts with prefix, with the tolerances of ONNX's own
 * backend test runner (rtol 1e-3, atol 1e-7: some expected values are written rounded). */
static void run_node_tests(const char *prefix) {
    size_t count;
    assert_int_equal(tc_test_run_node_tests(prefix, 1e-3, 1e-7, &count), 0);
    assert_true(count > 0);
}

static void test_onnx_conformance(void **state) {
    (void)state;
    run_node_tests("test_gemm");
    run_node_tests("test_matmul_");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_shapes),
        cmocka_unit_test(test_gemm_attributes_and_c),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_onnx_conformance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
