/* RNN/GRU/LSTM and Loop/Scan kernels called directly: hand-computed results and the errors a
 * model can provoke. The numeric coverage is in tests/golden/ops (ONNX node tests, torch exports,
 * reference cases; ops.* tests). */
#include "kernel_harness.h"

#include <math.h>

/* One-element RNN, two steps, Relu: y1 = relu(0.5 * 1 + 0.1 + 0.2) = 0.8,
 * y2 = relu(0.5 * 2 + 0.25 * 0.8 + 0.3) = 1.5. */
static void rnn_tiny(kernel_harness *h, tconv_dtype dtype) {
    kh_init(h, "RNN", 2);
    h->opset = 14;
    kh_attr_int(h, "hidden_size", 1);
    tc_attr acts = {.name = "activations", .type = TCONV_ATTR_STRINGS, .n = 1};
    static tc_bytes relu = {(const uint8_t *)"Relu", 4}; /* the attribute keeps a pointer */
    acts.strings = &relu;
    assert_int_equal(tc_node_add_attr(h->node, &acts, &h->err), TCONV_OK);
    double x[2] = {1, 2}, w[1] = {0.5}, r[1] = {0.25}, b[2] = {0.1, 0.2};
    float xf[2] = {1, 2}, wf[1] = {0.5f}, rf[1] = {0.25f}, bf[2] = {0.1f, 0.2f};
    bool dbl = dtype == TCONV_DTYPE_DOUBLE;
    kh_input_typed(h, dtype, 3, (int64_t[]){2, 1, 1}, dbl ? (void *)x : (void *)xf);
    kh_input_typed(h, dtype, 3, (int64_t[]){1, 1, 1}, dbl ? (void *)w : (void *)wf);
    kh_input_typed(h, dtype, 3, (int64_t[]){1, 1, 1}, dbl ? (void *)r : (void *)rf);
    kh_input_typed(h, dtype, 2, (int64_t[]){1, 2}, dbl ? (void *)b : (void *)bf);
}

static void test_rnn_relu_by_hand(void **state) {
    (void)state;
    kernel_harness h;
    rnn_tiny(&h, TCONV_DTYPE_FLOAT);
    kh_run_ok(&h);
    kh_expect_shape(&h.outputs[0], 4, (int64_t[]){2, 1, 1, 1});
    kh_expect_shape(&h.outputs[1], 3, (int64_t[]){1, 1, 1});
    kh_expect_close(h.outputs[0].data, (float[]){0.8f, 1.5f}, 2, 1e-6, 1e-6);
    kh_expect_close(h.outputs[1].data, (float[]){1.5f}, 1, 1e-6, 1e-6);
    kh_free(&h);
}

static void test_rnn_float64_by_hand(void **state) {
    (void)state;
    kernel_harness h;
    rnn_tiny(&h, TCONV_DTYPE_DOUBLE);
    kh_run_ok(&h);
    assert_int_equal(h.outputs[0].dtype, TCONV_DTYPE_DOUBLE);
    const double *y = h.outputs[0].data;
    assert_true(fabs(y[0] - 0.8) < 1e-15 && fabs(y[1] - 1.5) < 1e-15);
    kh_free(&h);
}

static void test_rnn_unknown_activation_is_unsupported(void **state) {
    (void)state;
    kernel_harness h;
    rnn_tiny(&h, TCONV_DTYPE_FLOAT);
    tc_node_remove_attr(h.node, "activations");
    tc_attr acts = {.name = "activations", .type = TCONV_ATTR_STRINGS, .n = 1};
    tc_bytes gelu = {(const uint8_t *)"Gelu", 4};
    acts.strings = &gelu;
    assert_int_equal(tc_node_add_attr(h.node, &acts, &h.err), TCONV_OK);
    assert_int_equal(kh_run(&h), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(h.err.message, "Gelu"));
    kh_free(&h);
}

static void test_rnn_bad_direction_and_shapes(void **state) {
    (void)state;
    kernel_harness h;
    rnn_tiny(&h, TCONV_DTYPE_FLOAT);
    kh_attr_string(&h, "direction", "sideways");
    assert_int_equal(kh_run(&h), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(h.err.message, "sideways"));
    /* bidirectional needs W with 2 directions */
    kh_attr_string(&h, "direction", "bidirectional");
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "W has shape"));
    kh_free(&h);
}

static void test_rnn_sequence_lens_past_the_end(void **state) {
    (void)state;
    kernel_harness h;
    rnn_tiny(&h, TCONV_DTYPE_FLOAT);
    kh_input_typed(&h, TCONV_DTYPE_INT32, 1, (int64_t[]){1}, (int32_t[]){3});
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "sequence_lens"));
    kh_free(&h);
}

static void test_rnn_mixed_dtypes(void **state) {
    (void)state;
    kernel_harness h;
    rnn_tiny(&h, TCONV_DTYPE_FLOAT);
    tc_rt_tensor_release(&h.inputs[3]);
    h.n_inputs = 3;
    kh_input_typed(&h, TCONV_DTYPE_DOUBLE, 2, (int64_t[]){1, 2}, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "dtype"));
    kh_free(&h);
}

/* GRU: z = sigmoid(0) = 0.5, r = 0.5, h~ = tanh(x) with zero weights except W_h = 1:
 * h1 = 0.5 * tanh(1) (initial h 0). */
static void test_gru_by_hand(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "GRU", 2);
    h.opset = 14;
    kh_input(&h, 3, (int64_t[]){1, 1, 1}, (float[]){1});
    kh_input(&h, 3, (int64_t[]){1, 3, 1}, (float[]){0, 0, 1});
    kh_input(&h, 3, (int64_t[]){1, 3, 1}, (float[]){0, 0, 0});
    kh_run_ok(&h);
    float want = (float)(0.5 * tanh(1.0));
    kh_expect_close(h.outputs[1].data, &want, 1, 1e-6, 1e-7);
    kh_free(&h);
}

static void test_loop_and_scan_need_a_session(void **state) {
    (void)state;
    const char *ops[2] = {"Loop", "Scan"};
    for (int i = 0; i < 2; i++) {
        kernel_harness h;
        kh_init(&h, ops[i], 1);
        h.opset = 16;
        tconv_graph *body;
        assert_int_equal(tc_graph_create(h.model, h.model->graph, &body, &h.err), TCONV_OK);
        tc_attr a = {.name = "body", .type = TCONV_ATTR_GRAPH, .g = body};
        assert_int_equal(tc_node_add_attr(h.node, &a, &h.err), TCONV_OK);
        if (i == 1)
            kh_attr_int(&h, "num_scan_inputs", 1);
        kh_input(&h, 1, (int64_t[]){2}, (float[]){1, 2});
        assert_int_equal(kh_run(&h), TCONV_ERR_USAGE);
        kh_free(&h);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rnn_relu_by_hand),
        cmocka_unit_test(test_rnn_float64_by_hand),
        cmocka_unit_test(test_rnn_unknown_activation_is_unsupported),
        cmocka_unit_test(test_rnn_bad_direction_and_shapes),
        cmocka_unit_test(test_rnn_sequence_lens_past_the_end),
        cmocka_unit_test(test_rnn_mixed_dtypes),
        cmocka_unit_test(test_gru_by_hand),
        cmocka_unit_test(test_loop_and_scan_need_a_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
