/* Kernels that take an unzeroed output (tc_kernel_alloc_output_uninit) must write every element:
 * a session's later runs reuse the buffers of its earlier ones, so an element left unwritten
 * would show an earlier tensor's value. Each graph runs with such outputs poisoned (NaN bytes,
 * test_hooks.h) and must give exactly what it gives unpoisoned; and a second run of a session
 * (reused buffers) must equal a fresh session's. */
#include "rt_test_util.h"
#include "runtime/compute/test_hooks.h"

#define N_X                                                                                        \
    (2 * 3 * 20 * 16) /* X 2x3x20x16: every tensor after it over the buffer cache's 64 KiB */

static void fill(float *x, int64_t n, int seed) {
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(((i + 1) * (seed * 7 + 3)) % 13) / 6.0f - 1.0f;
}

/* X -> ConvTranspose (k8 s4 pads 2: the sub-pixel form, storing every Y value; `partial`: pads
 * 1 and output_padding 3, a last row and column the super-pixels do not reach) -> Relu,
 * LeakyRelu, Sigmoid, Tanh, Clip, Abs, Add, Concat -> "y". */
static tconv_model *reuse_model(bool partial) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t x_dims[4] = {2, 3, 20, 16}, w_dims[4] = {3, 2, 8, 8}, b_dims[1] = {2};
    static float w[3 * 2 * 8 * 8];
    float b[2] = {0.25f, -0.5f};
    fill(w, 3 * 2 * 8 * 8, 5);
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, x_dims);
    tconv_value *in[3] = {x, rtt_init(g, "w", TCONV_DTYPE_FLOAT, 4, w_dims, w, sizeof w),
                          rtt_init(g, "b", TCONV_DTYPE_FLOAT, 1, b_dims, b, sizeof b)};
    tconv_node *ct = rtt_node(g, "ConvTranspose", "ct", in, 3, (const char *[]){"t"}, 1);
    tc_error err;
    int64_t pads[4] = {2, 2, 2, 2}, ones[4] = {1, 1, 1, 1};
    assert_int_equal(tc_node_set_attr_ints(ct, "strides", (int64_t[]){4, 4}, 2, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(ct, "pads", partial ? ones : pads, 4, &err), TCONV_OK);
    if (partial)
        assert_int_equal(tc_node_set_attr_ints(ct, "output_padding", (int64_t[]){3, 3}, 2, &err),
                         TCONV_OK);
    static const char *const unary[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "Abs"};
    static const char *const names[] = {"u0", "u1", "u2", "u3", "u4", "u5"};
    for (int i = 0; i < 6; i++)
        rtt_node(g, unary[i], unary[i], (tconv_value *[]){rtt_value(g, i ? names[i - 1] : "t")}, 1,
                 &names[i], 1);
    rtt_node(g, "Add", "add", (tconv_value *[]){rtt_value(g, "u5"), rtt_value(g, "t")}, 2,
             (const char *[]){"s"}, 1);
    tconv_node *cat =
        rtt_node(g, "Concat", "cat", (tconv_value *[]){rtt_value(g, "s"), rtt_value(g, "u1")}, 2,
                 (const char *[]){"y"}, 1);
    assert_int_equal(tc_node_set_attr_int(cat, "axis", 1, &err), TCONV_OK);
    rtt_output(g, "y");
    return m;
}

static void check_reuse(bool partial) {
    tconv_model *m = reuse_model(partial);
    int64_t x_dims0[4] = {2, 3, 20, 16};
    static float c[N_X];
    fill(c, N_X, 3);
    tc_rt_tensor in_c = rtt_tensor(TCONV_DTYPE_FLOAT, 4, x_dims0, c);
    tc_rt_tensor clean = {0}, poisoned = {0};
    tc_error err0;
    assert_int_equal(rtt_run(m, &in_c, 1, &clean, &err0), TCONV_OK);
    tc_test_poison_uninit = 1;
    tconv_status poisoned_st = rtt_run(m, &in_c, 1, &poisoned, &err0);
    tc_test_poison_uninit = 0;
    assert_int_equal(poisoned_st, TCONV_OK);
    assert_memory_equal(clean.data, poisoned.data, clean.nbytes);
    tc_rt_tensor_release(&clean);
    tc_rt_tensor_release(&poisoned);
    tc_rt_tensor_release(&in_c);
    int64_t x_dims[4] = {2, 3, 20, 16};
    static float a[N_X], b[N_X];
    fill(a, N_X, 1);
    fill(b, N_X, 2);
    tc_rt_tensor in_a = rtt_tensor(TCONV_DTYPE_FLOAT, 4, x_dims, a);
    tc_rt_tensor in_b = rtt_tensor(TCONV_DTYPE_FLOAT, 4, x_dims, b);
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_OK);
    tc_rt_tensor first = {0}, second = {0}, fresh = {0};
    assert_int_equal(tc_session_run(s, &in_a, 1, &first, &err), TCONV_OK);
    tc_rt_tensor_release(&first);
    assert_int_equal(tc_session_run(s, &in_b, 1, &second, &err), TCONV_OK);
    tc_session_free(s);
    assert_int_equal(rtt_run(m, &in_b, 1, &fresh, &err), TCONV_OK);
    rtt_assert_dims(&second, fresh.rank, fresh.dims);
    assert_memory_equal(second.data, fresh.data, fresh.nbytes);
    tc_rt_tensor_release(&second);
    tc_rt_tensor_release(&fresh);
    tc_rt_tensor_release(&in_a);
    tc_rt_tensor_release(&in_b);
    tconv_model_free(m);
}

static void test_second_run_equals_fresh(void **state) {
    (void)state;
    check_reuse(false);
}

static void test_second_run_equals_fresh_partial_cover(void **state) {
    (void)state;
    check_reuse(true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_run_equals_fresh),
        cmocka_unit_test(test_second_run_equals_fresh_partial_cover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
