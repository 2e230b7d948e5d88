/* MaxPool, AveragePool and GlobalAveragePool: hand-computed corners (ceil_mode output size and
 * the window that starts in the right padding, count_include_pad next to the extra ceil region,
 * auto_pad SAME with ceil_mode, Indices in both storage orders, int8), thread-count
 * independence, errors, and the ONNX conformance node tests through a session. */
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
#include "runtime/compute/cpu_features.h"
#include "testutil.h"

/* A 1-D pool over x (1x1xn). */
typedef struct pool_1d_case {
    const char *name;
    const char *op;
    int64_t n_in;
    float x[8];
    int64_t k, s, d;
    int64_t pads[2];
    const char *auto_pad;
    int64_t ceil_mode, count_include_pad;
    int64_t n_out;
    float want[8];
} pool_1d_case;

static void run_pool_1d(const pool_1d_case *c) {
    kernel_harness h;
    kh_init(&h, c->op, 1);
    h.opset = 19; /* AveragePool takes dilations from opset 19 */
    int64_t x_dims[3] = {1, 1, c->n_in};
    kh_input(&h, 3, x_dims, c->x);
    kh_attr_ints(&h, "kernel_shape", 1, &c->k);
    kh_attr_ints(&h, "strides", 1, &c->s);
    if (c->d > 1)
        kh_attr_ints(&h, "dilations", 1, &c->d);
    if (c->auto_pad)
        kh_attr_string(&h, "auto_pad", c->auto_pad);
    else
        kh_attr_ints(&h, "pads", 2, c->pads);
    kh_attr_int(&h, "ceil_mode", c->ceil_mode);
    if (strcmp(c->op, "AveragePool") == 0)
        kh_attr_int(&h, "count_include_pad", c->count_include_pad);
    tconv_status st = kh_run(&h);
    if (st != TCONV_OK)
        print_error("%s: %s\n", c->name, h.err.message);
    assert_int_equal(st, TCONV_OK);
    int64_t y_dims[3] = {1, 1, c->n_out};
    kh_expect_shape(&h.outputs[0], 3, y_dims);
    kh_expect_close(h.outputs[0].data, c->want, c->n_out, 1e-6, 1e-6);
    kh_free(&h);
}

static void test_ceil_mode_and_padding(void **state) {
    (void)state;
    static const pool_1d_case cases[] = {
        /* x=4 k=1 s=2 ceil: ceil(3/2)+1 = 3, but window 2 would start at 4 (past the input and
         * the left pad): dropped -> 2 outputs */
        {"ceil_drop_last", "MaxPool", 4, {1, 2, 3, 4}, 1, 2, 1, {0, 0}, NULL, 1, 0, 2, {1, 3}},
        /* x=6 k=3 s=2 pads 1,1 ceil: 4 windows starting -1,1,3,5; the last covers 5 (input),
         * 6 (right pad) and 7 (the extra ceil region, not counted) */
        {"avg_ceil_include_pad",
         "AveragePool",
         6,
         {1, 2, 3, 4, 5, 6},
         3,
         2,
         1,
         {1, 1},
         NULL,
         1,
         1,
         4,
         {1, 3, 5, 3}},
        {"avg_ceil_exclude_pad",
         "AveragePool",
         6,
         {1, 2, 3, 4, 5, 6},
         3,
         2,
         1,
         {1, 1},
         NULL,
         1,
         0,
         4,
         {1.5f, 3, 5, 6}},
        {"avg_floor_include_pad",
         "AveragePool",
         6,
         {1, 2, 3, 4, 5, 6},
         3,
         2,
         1,
         {1, 1},
         NULL,
         0,
         1,
         3,
         {1, 3, 5}},
        /* SAME with ceil_mode: out = ceil(x/s) = 3, total 1 */
        {"max_same_upper_ceil",
         "MaxPool",
         5,
         {1, 2, 3, 4, 5},
         2,
         2,
         1,
         {0},
         "SAME_UPPER",
         1,
         0,
         3,
         {2, 4, 5}},
        {"max_same_lower_ceil",
         "MaxPool",
         5,
         {1, 2, 3, 4, 5},
         2,
         2,
         1,
         {0},
         "SAME_LOWER",
         1,
         0,
         3,
         {1, 3, 5}},
        {"avg_same_upper_ceil",
         "AveragePool",
         5,
         {1, 2, 3, 4, 5},
         2,
         2,
         1,
         {0},
         "SAME_UPPER",
         1,
         0,
         3,
         {1.5f, 3.5f, 5}},
        {"avg_same_upper_include_pad",
         "AveragePool",
         5,
         {1, 2, 3, 4, 5},
         2,
         2,
         1,
         {0},
         "SAME_UPPER",
         0,
         1,
         3,
         {1.5f, 3.5f, 2.5f}},
        {"max_valid", "MaxPool", 5, {1, 5, 3, 4, 2}, 2, 2, 1, {0}, "VALID", 0, 0, 2, {5, 4}},
        /* dilation 2: taps i, i+2 */
        {"max_dilated", "MaxPool", 5, {1, 5, 3, 4, 2}, 2, 1, 2, {0, 0}, NULL, 0, 0, 3, {3, 5, 3}},
        {"avg_dilated_ceil",
         "AveragePool",
         5,
         {1, 5, 3, 4, 2},
         2,
         2,
         2,
         {0, 0},
         NULL,
         1,
         0,
         2,
         {2, 2.5f}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_pool_1d(&cases[i]);
}

static void run_indices_case(int64_t storage_order, const int64_t *want_indices) {
    kernel_harness h;
    kh_init(&h, "MaxPool", 2);
    float x[12] = {1, 2, 8, 4, 7, 6, /* channel 1 */ -1, -2, -8, -4, -7, -6};
    int64_t x_dims[4] = {1, 2, 2, 3};
    kh_input(&h, 4, x_dims, x);
    kh_attr_ints(&h, "kernel_shape", 2, (const int64_t[]){2, 2});
    kh_attr_int(&h, "storage_order", storage_order);
    kh_run_ok(&h);
    int64_t y_dims[4] = {1, 2, 1, 2};
    kh_expect_shape(&h.outputs[0], 4, y_dims);
    kh_expect_shape(&h.outputs[1], 4, y_dims);
    assert_int_equal(h.outputs[1].dtype, TCONV_DTYPE_INT64);
    float want[4] = {7, 8, -1, -2};
    kh_expect_close(h.outputs[0].data, want, 4, 0, 0);
    const int64_t *got = h.outputs[1].data;
    for (int i = 0; i < 4; i++)
        assert_int_equal(got[i], want_indices[i]);
    kh_free(&h);
}

/* Indices: plane * H*W + position, row-major (h*W + w) or column-major (h + w*H). */
static void test_max_pool_indices(void **state) {
    (void)state;
    run_indices_case(0, (const int64_t[]){4, 2, 6, 7});
    run_indices_case(1, (const int64_t[]){3, 4, 6, 8});
}

static void test_max_pool_int8(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "MaxPool", 1);
    int8_t x[6] = {-128, -5, -7, 100, -100, 3};
    int64_t x_dims[3] = {1, 1, 6};
    kh_input_typed(&h, TCONV_DTYPE_INT8, 3, x_dims, x);
    kh_attr_ints(&h, "kernel_shape", 1, (const int64_t[]){2});
    kh_attr_ints(&h, "strides", 1, (const int64_t[]){2});
    kh_run_ok(&h);
    assert_int_equal(h.outputs[0].dtype, TCONV_DTYPE_INT8);
    const int8_t *y = h.outputs[0].data;
    assert_int_equal(y[0], -5);
    assert_int_equal(y[1], 100);
    assert_int_equal(y[2], 3);
    kh_free(&h);
}

static void test_global_average_pool(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "GlobalAveragePool", 1);
    float x[8] = {1, 2, 3, 4, -1, -1, -1, 7};
    int64_t x_dims[4] = {1, 2, 2, 2};
    kh_input(&h, 4, x_dims, x);
    kh_run_ok(&h);
    int64_t y_dims[4] = {1, 2, 1, 1};
    kh_expect_shape(&h.outputs[0], 4, y_dims);
    float want[2] = {2.5f, 1.0f};
    kh_expect_close(h.outputs[0].data, want, 2, 0, 1e-6);
    kh_free(&h);
}

/* The same pooling on 1 and 3 threads gives identical results (planes are independent). */
static void test_threads_agree(void **state) {
    (void)state;
    static const char *const ops[] = {"MaxPool", "AveragePool"};
    uint64_t rng = 7;
    for (size_t o = 0; o < 2; o++) {
        float *first = NULL;
        int64_t n = 0;
        for (int threads = 1; threads <= 3; threads += 2) {
            kernel_harness h;
            kh_init(&h, ops[o], 1);
            h.n_threads = threads;
            int64_t x_dims[4] = {3, 5, 40, 33};
            tc_rt_tensor *x = kh_input(&h, 4, x_dims, NULL);
            uint64_t seed = rng;
            kh_fill_random(x->data, x->n_elements, &seed);
            kh_attr_ints(&h, "kernel_shape", 2, (const int64_t[]){3, 4});
            kh_attr_ints(&h, "strides", 2, (const int64_t[]){2, 3});
            kh_attr_ints(&h, "pads", 4, (const int64_t[]){1, 2, 1, 0});
            kh_attr_int(&h, "ceil_mode", 1);
            kh_run_ok(&h);
            if (!first) {
                n = h.outputs[0].n_elements;
                first = malloc((size_t)n * sizeof(float));
                assert_non_null(first);
                memcpy(first, h.outputs[0].data, (size_t)n * sizeof(float));
            } else {
                assert_int_equal(h.outputs[0].n_elements, n);
                assert_memory_equal(first, h.outputs[0].data, (size_t)n * sizeof(float));
            }
            kh_free(&h);
        }
        free(first);
    }
}

/* A value for the separable MaxPool comparison: mostly ties, signed zeros, infinities and NaNs
 * of two payloads (which NaN comes out shows the order), else random; planes with nan_percent
 * 90 have windows of NaNs only. */
static float tie_heavy_value(uint64_t *rng, int64_t nan_percent) {
    static const uint32_t nans[2] = {0x7fc00001u, 0xffc00002u};
    static const float palette[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, INFINITY, -INFINITY};
    if (kh_rand_range(rng, 0, 99) < nan_percent) {
        float v;
        memcpy(&v, &nans[kh_rng_next(rng) & 1], sizeof v);
        return v;
    }
    if (kh_rand_range(rng, 0, 1))
        return palette[kh_rng_next(rng) % (sizeof palette / sizeof palette[0])];
    return (float)kh_rand_range(rng, -3, 3) * 0.5f;
}

/* Whether some output window of an axis lies wholly in the padding. */
static bool axis_has_padding_window(int64_t in, int64_t out, int64_t k, int64_t s, int64_t pb) {
    for (int64_t o = 0; o < out; o++) {
        int64_t start = o * s - pb;
        if (start + k <= 0 || start >= in)
            return true;
    }
    return false;
}

/* One MaxPool run of x; Y (and the Indices when `with_indices`) into *y. */
static tconv_status run_max_pool_2d(const int64_t *x_dims, const float *x, const int64_t *k,
                                    const int64_t *s, const int64_t *pads, int64_t ceil_mode,
                                    bool with_indices, tc_rt_tensor *y) {
    kernel_harness h;
    kh_init(&h, "MaxPool", with_indices ? 2 : 1);
    kh_input(&h, 4, x_dims, x);
    kh_attr_ints(&h, "kernel_shape", 2, k);
    kh_attr_ints(&h, "strides", 2, s);
    kh_attr_ints(&h, "pads", 4, pads);
    kh_attr_int(&h, "ceil_mode", ceil_mode);
    tconv_status st = kh_run(&h);
    if (st == TCONV_OK) {
        *y = h.outputs[0];
        memset(&h.outputs[0], 0, sizeof h.outputs[0]);
    }
    kh_free(&h);
    return st;
}

/* 2-D float MaxPool without Indices runs separably (each row's taps folded, then the rows);
 * with Indices it scans every window's taps through an offset table. Both must give the same
 * bits on every kernel, stride, padding (windows wholly in the padding included) and ceil_mode,
 * on data full of ties, signed zeros, infinities and NaNs. */
static void compare_max_pool_paths(void) {
    uint64_t rng = 2024;
    int compared = 0, padding_windows = 0, nan_heavy_cases = 0;
    for (int c = 0; c < 600; c++) {
        int64_t x_dims[4] = {kh_rand_range(&rng, 1, 2), kh_rand_range(&rng, 1, 3),
                             kh_rand_range(&rng, 1, 12), kh_rand_range(&rng, 1, 40)};
        int64_t k[2], s[2], pads[4];
        for (int i = 0; i < 2; i++) {
            k[i] = kh_rand_range(&rng, 1, 4);
            s[i] = kh_rand_range(&rng, 1, 4);
            pads[i] = kh_rand_range(&rng, 0, c % 5 == 0 ? 5 : 2);
            pads[i + 2] = kh_rand_range(&rng, 0, c % 5 == 0 ? 5 : 2);
        }
        for (int i = 0; i < 4 && c % 8 < 2; i++) { /* U-Net's 2x2 and LinkNet's 3x3 pools */
            k[i % 2] = c % 8 == 0 ? 2 : 3;
            s[i % 2] = 2;
            pads[i] = c % 8 == 0 ? 0 : 1;
        }
        int64_t ceil_mode = kh_rand_range(&rng, 0, 1);
        int64_t nan_percent = c % 3 == 0 ? 90 : 10;
        int64_t n = x_dims[0] * x_dims[1] * x_dims[2] * x_dims[3];
        float *x = malloc((size_t)n * sizeof(float));
        assert_non_null(x);
        for (int64_t i = 0; i < n; i++)
            x[i] = tie_heavy_value(&rng, nan_percent);
        tc_rt_tensor fast, generic;
        tconv_status st = run_max_pool_2d(x_dims, x, k, s, pads, ceil_mode, false, &fast);
        assert_int_equal(run_max_pool_2d(x_dims, x, k, s, pads, ceil_mode, true, &generic), st);
        if (st == TCONV_OK) {
            assert_int_equal(fast.n_elements, generic.n_elements);
            if (memcmp(fast.data, generic.data, (size_t)fast.nbytes) != 0) {
                print_error(
                    "case %d: x %lldx%lld, k %lldx%lld, s %lld,%lld, pads %lld,%lld,%lld,%lld, "
                    "ceil_mode %lld\n",
                    c, (long long)x_dims[2], (long long)x_dims[3], (long long)k[0], (long long)k[1],
                    (long long)s[0], (long long)s[1], (long long)pads[0], (long long)pads[1],
                    (long long)pads[2], (long long)pads[3], (long long)ceil_mode);
                fail();
            }
            compared++;
            nan_heavy_cases += nan_percent == 90;
            for (int i = 0; i < 2; i++)
                padding_windows +=
                    axis_has_padding_window(x_dims[2 + i], fast.dims[2 + i], k[i], s[i], pads[i]);
            tc_rt_tensor_release(&fast);
            tc_rt_tensor_release(&generic);
        }
        free(x);
    }
    /* the comparison saw enough of each kind of case to mean something */
    assert_true(compared > 400);
    assert_true(padding_windows > 20);
    assert_true(nan_heavy_cases > 100);
}

/* Both copies of the separable path: AVX2 (where the CPU has it) and the baseline one. */
static void test_max_pool_separable_matches_generic(void **state) {
    (void)state;
    compare_max_pool_paths();
    tc_cpu_features_override(0);
    compare_max_pool_paths();
    tc_cpu_features_restore();
}

static void test_errors(void **state) {
    (void)state;
    kernel_harness h;
    int64_t x_dims[4] = {1, 1, 4, 4};
    kh_init(&h, "MaxPool", 1); /* kernel_shape is required */
    kh_input(&h, 4, x_dims, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "kernel_shape"));
    kh_free(&h);
    kh_init(&h, "AveragePool", 1); /* integer input */
    kh_input_typed(&h, TCONV_DTYPE_INT32, 4, x_dims, NULL);
    kh_attr_ints(&h, "kernel_shape", 2, (const int64_t[]){2, 2});
    assert_int_equal(kh_run(&h), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(h.err.message, "int32"));
    kh_free(&h);
    kh_init(&h, "MaxPool", 1); /* window larger than the input */
    kh_input(&h, 4, x_dims, NULL);
    kh_attr_ints(&h, "kernel_shape", 2, (const int64_t[]){5, 2});
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    kh_init(&h, "AveragePool", 1); /* untrusted attributes that overflow int64 */
    h.opset = 19;
    kh_input(&h, 4, x_dims, NULL);
    kh_attr_ints(&h, "kernel_shape", 2, (const int64_t[]){3, 2});
    kh_attr_ints(&h, "dilations", 2, (const int64_t[]){INT64_MAX / 2, 1});
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "overflow"));
    kh_free(&h);
}

/* Runs every ONNX node test whose name starts with prefix, with the tolerances of ONNX's own
 * backend test runner (rtol 1e-3, atol 1e-7: some expected values are written rounded). */
static void run_node_tests(const char *prefix) {
    size_t count;
    assert_int_equal(tc_test_run_node_tests(prefix, 1e-3, 1e-7, &count), 0);
    assert_true(count > 0);
}

static void test_onnx_conformance_max_pool(void **state) {
    (void)state;
    run_node_tests("test_maxpool");
}

static void test_onnx_conformance_average_pool(void **state) {
    (void)state;
    run_node_tests("test_averagepool");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ceil_mode_and_padding),
        cmocka_unit_test(test_max_pool_indices),
        cmocka_unit_test(test_max_pool_int8),
        cmocka_unit_test(test_global_average_pool),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_max_pool_separable_matches_generic),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_onnx_conformance_max_pool),
        cmocka_unit_test(test_onnx_conformance_average_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
