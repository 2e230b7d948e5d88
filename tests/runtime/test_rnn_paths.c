/* The recurrent kernels' float32 paths (src/runtime/kernels/kernels_rnn.c) against each other in a
 * session: weights as initializers (R, and for short runs W, transposed once and kept in the
 * node cache across runs) and as graph inputs (transposed into scratch every run) must give
 * the same bits, run after run; a batch past the matrix-vector bound (the packed GEMM) and a
 * run too long for the transposed W (the threaded projection) must agree within float
 * rounding, as must the projection three rows at a time (rows of X past a multiple of three
 * included) with the packed GEMM's. */
#include "rt_test_util.h"

#include <math.h>

/* 4 gates x 8 units: 32 gate rows, which the input projection computes three rows of X at a
 * time (rnn_matmat_any); the ONNX node tests' hidden sizes (3-5) take the row-at-a-time path */
#define HID 8
#define IN 3
#define MAX_T 40
#define MAX_N 6

typedef struct lstm_case {
    int64_t t, n;
    bool bidirectional;
} lstm_case;

static float value(int64_t i, int salt) {
    return (float)(((i * 7 + salt * 13) % 17) - 8) / 16.0f;
}

static void fill(float *v, int64_t n, int salt) {
    for (int64_t i = 0; i < n; i++)
        v[i] = value(i, salt);
}

/* v[a, b, k] (dims [na, nb, nk]) from the coordinates, so that batch row b holds the same
 * values whatever the batch size. */
static void fill_by_row(float *v, int64_t na, int64_t nb, int64_t nk, int salt) {
    for (int64_t a = 0; a < na; a++)
        for (int64_t b = 0; b < nb; b++)
            for (int64_t k = 0; k < nk; k++)
                v[(a * nb + b) * nk + k] = value(a * 100 + b * 10 + k, salt);
}

/* Y, Y_h, Y_c of LSTM(X, W, R, B, _, initial_h): W, R and B initializers, or (`as_inputs`)
 * graph inputs fed the same values. */
static tconv_model *lstm_model(const lstm_case *c, bool as_inputs) {
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d = c->bidirectional ? 2 : 1;
    int64_t x_dims[3] = {c->t, c->n, IN}, w_dims[3] = {d, 4 * HID, IN},
            r_dims[3] = {d, 4 * HID, HID};
    int64_t b_dims[2] = {d, 8 * HID}, h_dims[3] = {d, c->n, HID};
    static float w[2 * 4 * HID * IN], r[2 * 4 * HID * HID], b[2 * 8 * HID], h0[2 * MAX_N * HID];
    fill(w, d * 4 * HID * IN, 1);
    fill(r, d * 4 * HID * HID, 2);
    fill(b, d * 8 * HID, 3);
    fill_by_row(h0, d, c->n, HID, 4);
    tconv_value *in[6];
    in[0] = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 3, x_dims);
    if (as_inputs) {
        in[1] = rtt_input(g, "w", TCONV_DTYPE_FLOAT, 3, w_dims);
        in[2] = rtt_input(g, "r", TCONV_DTYPE_FLOAT, 3, r_dims);
        in[3] = rtt_input(g, "b", TCONV_DTYPE_FLOAT, 2, b_dims);
    } else {
        in[1] = rtt_init(g, "w", TCONV_DTYPE_FLOAT, 3, w_dims, w, sizeof(float) * 4 * HID * IN * d);
        in[2] =
            rtt_init(g, "r", TCONV_DTYPE_FLOAT, 3, r_dims, r, sizeof(float) * 4 * HID * HID * d);
        in[3] = rtt_init(g, "b", TCONV_DTYPE_FLOAT, 2, b_dims, b, sizeof(float) * 8 * HID * d);
    }
    in[4] = NULL;
    in[5] = rtt_init(g, "h0", TCONV_DTYPE_FLOAT, 3, h_dims, h0, sizeof(float) * d * c->n * HID);
    tconv_node *node = rtt_node(g, "LSTM", "lstm", in, 6, (const char *[]){"y", "y_h", "y_c"}, 3);
    tc_error err;
    assert_int_equal(tc_node_set_attr_int(node, "hidden_size", HID, &err), TCONV_OK);
    if (c->bidirectional)
        assert_int_equal(tc_node_set_attr_string(node, "direction", "bidirectional", &err),
                         TCONV_OK);
    rtt_output(g, "y");
    rtt_output(g, "y_h");
    rtt_output(g, "y_c");
    return m;
}

/* Runs the model `runs` times in one session; returns the last run's outputs. */
static void run_lstm(const lstm_case *c, bool as_inputs, int runs, tc_rt_tensor out[3]) {
    tconv_model *m = lstm_model(c, as_inputs);
    int64_t d = c->bidirectional ? 2 : 1;
    int64_t x_dims[3] = {c->t, c->n, IN}, w_dims[3] = {d, 4 * HID, IN},
            r_dims[3] = {d, 4 * HID, HID}, b_dims[2] = {d, 8 * HID};
    tc_rt_tensor in[4];
    in[0] = rtt_tensor(TCONV_DTYPE_FLOAT, 3, x_dims, NULL);
    fill_by_row(in[0].data, c->t, c->n, IN, 5);
    in[1] = rtt_tensor(TCONV_DTYPE_FLOAT, 3, w_dims, NULL);
    fill(in[1].data, in[1].n_elements, 1);
    in[2] = rtt_tensor(TCONV_DTYPE_FLOAT, 3, r_dims, NULL);
    fill(in[2].data, in[2].n_elements, 2);
    in[3] = rtt_tensor(TCONV_DTYPE_FLOAT, 2, b_dims, NULL);
    fill(in[3].data, in[3].n_elements, 3);
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_OK);
    tc_rt_tensor first[3];
    for (int k = 0; k < runs; k++) {
        if (k >= 2) /* the previous run's outputs */
            for (int i = 0; i < 3; i++)
                tc_rt_tensor_release(&out[i]);
        tconv_status st = tc_session_run(s, in, as_inputs ? 4 : 1, k == 0 ? first : out, &err);
        if (st != TCONV_OK)
            print_error("%s\n", err.message);
        assert_int_equal(st, TCONV_OK);
    }
    if (runs > 1) { /* the kept weights give what the first run computed */
        for (int i = 0; i < 3; i++) {
            rtt_assert_floats(&out[i], first[i].data, (size_t)first[i].n_elements);
            tc_rt_tensor_release(&first[i]);
        }
    } else {
        memcpy(out, first, sizeof first);
    }
    tc_session_free(s);
    for (int i = 0; i < 4; i++)
        tc_rt_tensor_release(&in[i]);
    tconv_model_free(m);
}

static void release3(tc_rt_tensor t[3]) {
    for (int i = 0; i < 3; i++)
        tc_rt_tensor_release(&t[i]);
}

static void check_same_bits(const lstm_case *c) {
    tc_rt_tensor kept[3], fresh[3];
    run_lstm(c, false, 3, kept);
    run_lstm(c, true, 1, fresh);
    for (int i = 0; i < 3; i++)
        rtt_assert_floats(&kept[i], fresh[i].data, (size_t)fresh[i].n_elements);
    release3(kept);
    release3(fresh);
}

/* Short runs, small batches: transposed R and W, kept or made per run. */
static void test_kept_weights_equal_fresh(void **state) {
    (void)state;
    const lstm_case cases[] = {{3, 2, false}, {4, 1, true}, {MAX_T, 1, true}, {MAX_T, 2, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_same_bits(&cases[i]);
}

/* A batch of 4 (matrix-vector products) against the same rows in a batch of 6 (the packed
 * GEMM): batch rows are independent, so Y's first 4 rows agree within rounding (the paths sum
 * in different orders); and the GEMM path's kept weights equal its fresh ones. */
static void test_matvec_agrees_with_gemm(void **state) {
    (void)state;
    for (int bidir = 0; bidir < 2; bidir++) {
        lstm_case small = {5, 4, bidir}, wide = {5, MAX_N, bidir};
        int64_t d = bidir ? 2 : 1;
        tc_rt_tensor a[3], b[3];
        run_lstm(&small, false, 1, a);
        run_lstm(&wide, false, 1, b);
        const float *ya = a[0].data, *yb = b[0].data;
        for (int64_t t = 0; t < 5; t++)
            for (int64_t dd = 0; dd < d; dd++)
                for (int64_t r = 0; r < 4; r++)
                    for (int64_t j = 0; j < HID; j++) {
                        float got = ya[((t * d + dd) * 4 + r) * HID + j];
                        float want = yb[((t * d + dd) * MAX_N + r) * HID + j];
                        if (fabsf(got - want) > 1e-5f) {
                            print_error("Y[%lld, %lld, %lld, %lld]: %.9g vs %.9g\n", (long long)t,
                                        (long long)dd, (long long)r, (long long)j, (double)got,
                                        (double)want);
                            fail();
                        }
                    }
        release3(a);
        release3(b);
        check_same_bits(&wide);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_weights_equal_fresh),
        cmocka_unit_test(test_matvec_agrees_with_gemm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
