/* The elementwise math kernels (kernels_math.c) beyond what the golden data in tests/golden/ops
 * proves: tensors large enough to be split across threads (pieces start mid-row of a broadcast,
 * so the iterator's seek is exercised) agree with one thread and with a scalar reference, and
 * inputs the kernels refuse are refused with a message. */
#include "kernel_harness.h"

#include <math.h>

/* Runs the harness's kernel with 1 and with 3 threads; returns the 3-thread output's data (a
 * copy, to free) after checking that both are byte for byte equal. */
static void *run_both_ways(kernel_harness *h, size_t *nbytes) {
    h->n_threads = 1;
    kh_run_ok(h);
    *nbytes = h->outputs[0].nbytes;
    void *single = malloc(*nbytes);
    assert_non_null(single);
    memcpy(single, h->outputs[0].data, *nbytes);
    h->n_threads = 3;
    kh_run_ok(h);
    assert_int_equal(h->outputs[0].nbytes, *nbytes);
    assert_memory_equal(h->outputs[0].data, single, *nbytes);
    return single;
}

/* Pow of X (301, 997) by Y (997): 300k libm calls, enough for threads; 997 is prime, so no piece
 * boundary falls on a row boundary. */
static void test_pow_broadcast_threads(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "Pow", 1);
    int64_t xd[2] = {301, 997}, yd[1] = {997};
    tc_rt_tensor *x = kh_input(&h, 2, xd, NULL);
    tc_rt_tensor *y = kh_input(&h, 1, yd, NULL);
    uint64_t seed = 11;
    kh_fill_random(x->data, x->n_elements, &seed);
    kh_fill_random(y->data, y->n_elements, &seed);
    float *xv = x->data, *yv = y->data;
    for (int64_t i = 0; i < x->n_elements; i++)
        xv[i] = fabsf(xv[i]) * 4.0f; /* positive bases: real powers */
    size_t nbytes;
    float *got = run_both_ways(&h, &nbytes);
    assert_int_equal(nbytes, sizeof(float) * 301 * 997);
    for (int64_t r = 0; r < 301; r++)
        for (int64_t c = 0; c < 997; c++)
            assert_true(got[r * 997 + c] == powf(xv[r * 997 + c], yv[c]));
    free(got);
    kh_free(&h);
}

/* Where(condition (2048, 1), X (2048, 1031), Y (1031)): 2.1M cheap elements, enough for
 * threads, three operands with different strides. */
static void test_where_broadcast_threads(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "Where", 1);
    int64_t cd[2] = {2048, 1}, xd[2] = {2048, 1031}, yd[1] = {1031};
    tc_rt_tensor *cond = kh_input_typed(&h, TCONV_DTYPE_BOOL, 2, cd, NULL);
    tc_rt_tensor *x = kh_input(&h, 2, xd, NULL);
    tc_rt_tensor *y = kh_input(&h, 1, yd, NULL);
    uint64_t seed = 5;
    kh_fill_random(x->data, x->n_elements, &seed);
    kh_fill_random(y->data, y->n_elements, &seed);
    uint8_t *cv = cond->data;
    for (int64_t i = 0; i < 2048; i++)
        cv[i] = (uint8_t)(kh_rng_next(&seed) & 1);
    size_t nbytes;
    float *got = run_both_ways(&h, &nbytes);
    const float *xv = x->data, *yv = y->data;
    for (int64_t r = 0; r < 2048; r++)
        for (int64_t c = 0; c < 1031; c++)
            assert_true(got[r * 1031 + c] == (cv[r] ? xv[r * 1031 + c] : yv[c]));
    free(got);
    kh_free(&h);
}

/* Exp over 300k elements (one contiguous row split across threads) against expf. */
static void test_exp_threads(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "Exp", 1);
    int64_t d[1] = {300007};
    tc_rt_tensor *x = kh_input(&h, 1, d, NULL);
    uint64_t seed = 3;
    kh_fill_random(x->data, x->n_elements, &seed);
    size_t nbytes;
    float *got = run_both_ways(&h, &nbytes);
    const float *xv = x->data;
    for (int64_t i = 0; i < d[0]; i++)
        assert_true(got[i] == expf(xv[i]));
    free(got);
    kh_free(&h);
}

/* Runs the kernel and expects `status` with `needle` in the message. */
static void expect_refused(kernel_harness *h, tconv_status status, const char *needle) {
    assert_int_equal(kh_run(h), status);
    if (!strstr(h->err.message, needle)) {
        print_error("message '%s' lacks '%s'\n", h->err.message, needle);
        fail();
    }
    kh_free(h);
}

static void test_refusals(void **state) {
    (void)state;
    kernel_harness h;
    int64_t d2[1] = {2}, d3[1] = {3}, d23[2] = {2, 3};

    kh_init(&h, "Mod", 1); /* integer division by zero */
    kh_input_typed(&h, TCONV_DTYPE_INT32, 1, d2, (const int32_t[]){5, 6});
    kh_input_typed(&h, TCONV_DTYPE_INT32, 1, d2, (const int32_t[]){2, 0});
    expect_refused(&h, TCONV_ERR_INVALID, "Mod by zero");

    kh_init(&h, "Mod", 1); /* the spec requires fmod=1 for floats */
    kh_input(&h, 1, d2, NULL);
    kh_input(&h, 1, d2, (const float[]){1, 1});
    expect_refused(&h, TCONV_ERR_INVALID, "needs fmod=1");

    kh_init(&h, "Pow", 1);
    kh_input_typed(&h, TCONV_DTYPE_INT64, 1, d2, (const int64_t[]){2, 3});
    kh_input_typed(&h, TCONV_DTYPE_INT64, 1, d2, (const int64_t[]){1, -1});
    expect_refused(&h, TCONV_ERR_INVALID, "negative exponent");

    kh_init(&h, "Pow", 1);
    kh_input_typed(&h, TCONV_DTYPE_INT64, 1, d2, NULL);
    kh_input(&h, 1, d2, NULL);
    expect_refused(&h, TCONV_ERR_UNSUPPORTED, "integer base");

    kh_init(&h, "PRelu", 1); /* the slope must not grow X */
    kh_input(&h, 1, d3, NULL);
    kh_input(&h, 2, d23, NULL);
    expect_refused(&h, TCONV_ERR_INVALID, "does not broadcast to X");

    kh_init(&h, "Gelu", 1);
    h.opset = 20;
    kh_attr_string(&h, "approximate", "erf");
    kh_input(&h, 1, d2, NULL);
    expect_refused(&h, TCONV_ERR_UNSUPPORTED, "approximate");

    kh_init(&h, "Where", 1);
    kh_input(&h, 1, d2, NULL); /* a float condition */
    kh_input(&h, 1, d2, NULL);
    kh_input(&h, 1, d2, NULL);
    expect_refused(&h, TCONV_ERR_UNSUPPORTED, "unsupported dtype float");

    kh_init(&h, "Less", 1);
    kh_input(&h, 1, d2, NULL);
    kh_input_typed(&h, TCONV_DTYPE_DOUBLE, 1, d2, NULL);
    expect_refused(&h, TCONV_ERR_INVALID, "different dtypes");

    kh_init(&h, "Sum", 1); /* (2) and (3) do not broadcast */
    kh_input(&h, 1, d2, NULL);
    kh_input(&h, 1, d2, NULL);
    kh_input(&h, 1, d3, NULL);
    expect_refused(&h, TCONV_ERR_INVALID, "broadcast");

    kh_init(&h, "Sqrt", 1); /* no integer Sqrt */
    kh_input_typed(&h, TCONV_DTYPE_INT32, 1, d2, NULL);
    expect_refused(&h, TCONV_ERR_UNSUPPORTED, "unsupported dtype int32");
}

/* Max of four inputs, each broadcasting differently, NaN propagating. */
static void test_max_of_four(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "Max", 1);
    int64_t a[2] = {2, 1}, b[1] = {3}, c[2] = {1, 3};
    kh_input(&h, 2, a, (const float[]){1.0f, -5.0f});
    kh_input(&h, 1, b, (const float[]){0.0f, NAN, -1.0f});
    kh_input(&h, 2, c, (const float[]){-2.0f, 0.5f, 4.0f});
    kh_input(&h, 0, NULL, (const float[]){-3.0f}); /* a scalar */
    kh_run_ok(&h);
    int64_t want_dims[2] = {2, 3};
    kh_expect_shape(&h.outputs[0], 2, want_dims);
    const float *y = h.outputs[0].data;
    assert_true(y[0] == 1.0f && isnan(y[1]) && y[2] == 4.0f);
    assert_true(y[3] == 0.0f && isnan(y[4]) && y[5] == 4.0f);
    kh_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pow_broadcast_threads),
        cmocka_unit_test(test_where_broadcast_threads),
        cmocka_unit_test(test_exp_threads),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_max_of_four),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
