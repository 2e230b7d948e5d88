/* The reduction and normalization kernels beyond what the golden data shows: the same bits on 1
 * and 4 threads, sums that a float accumulator would get wrong, NaN and integer wrap-around, and
 * the errors (duplicate or out-of-range axes, group counts, per-group vs per-channel scale by
 * opset, stash_type, empty ArgMax axis). */
#include <math.h>

#include "kernel_harness.h"

static void expect_error(kernel_harness *h, tconv_status want, const char *needle) {
    tconv_status st = kh_run(h);
    if (st != want || !strstr(h->err.message, needle))
        fail_msg("status %d, message \"%s\"; wanted %d with \"%s\"", st, h->err.message, want,
                 needle);
}

/* Runs the prepared node on 1 and on 4 threads: the outputs must be identical bit for bit
 * (tasks split outputs, never one sum). */
static void expect_same_threaded(kernel_harness *h) {
    h->n_threads = 1;
    kh_run_ok(h);
    tc_rt_tensor single = h->outputs[0];
    memset(&h->outputs[0], 0, sizeof h->outputs[0]);
    h->n_threads = 4;
    kh_run_ok(h);
    assert_int_equal(single.nbytes, h->outputs[0].nbytes);
    assert_memory_equal(single.data, h->outputs[0].data, single.nbytes);
    tc_rt_tensor_release(&single);
}

static float *random_input(kernel_harness *h, int rank, const int64_t *dims, uint64_t seed) {
    tc_rt_tensor *t = kh_input(h, rank, dims, NULL);
    kh_fill_random(t->data, t->n_elements, &seed);
    return t->data;
}

static void test_reduce_threaded(void **state) {
    (void)state;
    static const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceLogSumExp", "ReduceMax"};
    static const int64_t axes_sets[][2] = {{1, 3}, {0, 2}, {-1, -1}};
    int64_t dims[4] = {4, 40, 96, 160}; /* 2.4M elements: enough work for threads */
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        for (size_t a = 0; a < 3; a++) {
            kernel_harness h;
            kh_init(&h, ops[o], 1);
            h.opset = 11; /* axes attribute for all four */
            random_input(&h, 4, dims, 7);
            kh_attr_ints(&h, "axes", axes_sets[a][0] == axes_sets[a][1] ? 1 : 2, axes_sets[a]);
            expect_same_threaded(&h);
            kh_free(&h);
        }
    }
    for (int axis = 1; axis <= 3; axis += 2) {
        kernel_harness h;
        kh_init(&h, axis == 1 ? "ArgMax" : "ArgMin", 1);
        h.opset = 13;
        random_input(&h, 4, dims, 8);
        kh_attr_int(&h, "axis", axis);
        expect_same_threaded(&h);
        kh_free(&h);
    }
}

static void test_normalizations_threaded(void **state) {
    (void)state;
    int64_t dims[4] = {2, 8, 96, 192}; /* LayerNormalization: 8 flops an element, above 2e6 */
    static const int64_t g_dims[1] = {8};
    const char *ops[] = {"Softmax",
                         "LogSoftmax",
                         "LayerNormalization",
                         "GroupNormalization",
                         "InstanceNormalization",
                         "LRN"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        kernel_harness h;
        kh_init(&h, ops[o], 1);
        h.opset = 21;
        random_input(&h, 4, dims, 11);
        if (strcmp(ops[o], "LayerNormalization") == 0) {
            kh_attr_int(&h, "axis", 2);
            random_input(&h, 2, dims + 2, 12);
        } else if (strcmp(ops[o], "LRN") == 0) {
            kh_attr_int(&h, "size", 3);
        } else if (strstr(ops[o], "Softmax")) {
            kh_attr_int(&h, "axis", 1); /* strided rows */
        } else {
            random_input(&h, 1, g_dims, 13);
            random_input(&h, 1, g_dims, 14);
            if (ops[o][0] == 'G')
                kh_attr_int(&h, "num_groups", 2);
        }
        expect_same_threaded(&h);
        kh_free(&h);
    }
}

/* 1 followed by 2^20 values of 2^-24: in float, 1 + 2^-24 rounds back to 1 every time. */
static void test_long_sum_accumulates_in_double(void **state) {
    (void)state;
    const int64_t n = (int64_t)1 << 20;
    int64_t dims[1] = {n + 1};
    kernel_harness h;
    kh_init(&h, "ReduceSum", 1);
    h.opset = 13;
    tc_rt_tensor *x = kh_input(&h, 1, dims, NULL);
    float *v = x->data;
    v[0] = 1.0f;
    for (int64_t i = 1; i <= n; i++)
        v[i] = ldexpf(1.0f, -24);
    kh_attr_int(&h, "keepdims", 0);
    kh_run_ok(&h);
    assert_int_equal(h.outputs[0].rank, 0);
    assert_true(((float *)h.outputs[0].data)[0] == 1.0625f); /* 1 + 2^20 * 2^-24, exact */
    kh_free(&h);
}

static void test_nan_and_integer_wrap(void **state) {
    (void)state;
    int64_t dims[1] = {4};
    kernel_harness h;
    kh_init(&h, "ReduceMax", 1);
    h.opset = 13;
    kh_input(&h, 1, dims, (float[]){1.0f, NAN, 5.0f, 2.0f});
    kh_run_ok(&h);
    assert_true(isnan(((float *)h.outputs[0].data)[0]));
    kh_free(&h);

    kh_init(&h, "ArgMax", 1);
    h.opset = 13;
    kh_input(&h, 1, dims, (float[]){1.0f, NAN, 5.0f, NAN});
    kh_run_ok(&h);
    assert_int_equal(((int64_t *)h.outputs[0].data)[0], 1);
    kh_free(&h);

    kh_init(&h, "ReduceSum", 1);
    h.opset = 13;
    int64_t two[1] = {2};
    kh_input_typed(&h, TCONV_DTYPE_INT32, 1, two, (int32_t[]){INT32_MAX, 1});
    kh_run_ok(&h);
    assert_int_equal(h.outputs[0].dtype, TCONV_DTYPE_INT32);
    assert_int_equal(((int32_t *)h.outputs[0].data)[0], INT32_MIN); /* wraps, as numpy */
    kh_free(&h);
}

static void test_reduce_errors(void **state) {
    (void)state;
    int64_t dims[3] = {2, 3, 4};
    kernel_harness h;
    kh_init(&h, "ReduceSum", 1);
    h.opset = 11;
    kh_input(&h, 3, dims, NULL);
    kh_attr_ints(&h, "axes", 2, (int64_t[]){1, -2});
    expect_error(&h, TCONV_ERR_INVALID, "twice");
    kh_free(&h);

    kh_init(&h, "ReduceL2", 1);
    h.opset = 18;
    kh_input(&h, 3, dims, NULL);
    int64_t one[1] = {1};
    kh_input_typed(&h, TCONV_DTYPE_INT64, 1, one, (int64_t[]){3});
    expect_error(&h, TCONV_ERR_INVALID, "out of range");
    kh_free(&h);

    kh_init(&h, "ReduceMean", 1);
    h.opset = 13;
    kh_input_typed(&h, TCONV_DTYPE_INT32, 3, dims, NULL);
    expect_error(&h, TCONV_ERR_UNSUPPORTED, "int32");
    kh_free(&h);

    kh_init(&h, "ReduceMax", 1); /* the attribute form is gone at 18 */
    h.opset = 18;
    kh_input(&h, 3, dims, NULL);
    kh_attr_ints(&h, "axes", 1, (int64_t[]){0});
    expect_error(&h, TCONV_ERR_UNSUPPORTED, "axes");
    kh_free(&h);

    int64_t empty[3] = {2, 0, 4};
    kh_init(&h, "ArgMin", 1);
    h.opset = 13;
    kh_input(&h, 3, empty, NULL);
    kh_attr_int(&h, "axis", 1);
    expect_error(&h, TCONV_ERR_INVALID, "empty axis");
    kh_free(&h);
}

/* GroupNormalization-18 takes one scale per group, 21 one per channel. */
static void test_group_norm_scale_by_opset(void **state) {
    (void)state;
    int64_t dims[3] = {1, 4, 3}, groups[1] = {2}, channels[1] = {4};
    for (int opset = 18; opset <= 21; opset += 3) {
        for (int per_channel = 0; per_channel < 2; per_channel++) {
            kernel_harness h;
            kh_init(&h, "GroupNormalization", 1);
            h.opset = opset;
            random_input(&h, 3, dims, 3);
            random_input(&h, 1, per_channel ? channels : groups, 4);
            random_input(&h, 1, per_channel ? channels : groups, 5);
            kh_attr_int(&h, "num_groups", 2);
            if ((opset >= 21) == (per_channel == 1))
                kh_run_ok(&h);
            else
                expect_error(&h, TCONV_ERR_INVALID, per_channel ? "per group" : "per channel");
            kh_free(&h);
        }
    }
    kernel_harness h;
    kh_init(&h, "GroupNormalization", 1);
    h.opset = 21;
    random_input(&h, 3, dims, 3);
    random_input(&h, 1, dims + 1, 4);
    random_input(&h, 1, dims + 1, 5);
    kh_attr_int(&h, "num_groups", 3);
    expect_error(&h, TCONV_ERR_INVALID, "divide");
    kh_free(&h);
}

static void test_layer_norm_stats_and_stash(void **state) {
    (void)state;
    int64_t dims[2] = {2, 4};
    kernel_harness h;
    kh_init(&h, "LayerNormalization", 3);
    kh_input(&h, 2, dims, (float[]){1, 2, 3, 4, -1, -1, -1, -1});
    kh_input(&h, 1, dims + 1, (float[]){1, 1, 1, 1});
    kh_run_ok(&h);
    int64_t stat_dims[2] = {2, 1};
    kh_expect_shape(&h.outputs[1], 2, stat_dims);
    kh_expect_shape(&h.outputs[2], 2, stat_dims);
    const float *mean = h.outputs[1].data, *inv_std = h.outputs[2].data, *y = h.outputs[0].data;
    kh_expect_close(mean, (float[]){2.5f, -1.0f}, 2, 1e-6, 0);
    kh_expect_close(inv_std, (float[]){(float)(1.0 / sqrt(1.25 + 1e-5)), (float)(1.0 / sqrt(1e-5))},
                    2, 1e-5, 0);
    kh_expect_close(y + 4, (float[]){0, 0, 0, 0}, 4, 0, 0); /* constant row: zeros, no NaN */
    kh_attr_int(&h, "stash_type", 10);
    expect_error(&h, TCONV_ERR_UNSUPPORTED, "stash_type");
    kh_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_threaded),
        cmocka_unit_test(test_normalizations_threaded),
        cmocka_unit_test(test_long_sum_accumulates_in_double),
        cmocka_unit_test(test_nan_and_integer_wrap),
        cmocka_unit_test(test_reduce_errors),
        cmocka_unit_test(test_group_norm_scale_by_opset),
        cmocka_unit_test(test_layer_norm_stats_and_stash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
