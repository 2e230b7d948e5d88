/* Reshape and its kin take their input's buffer when they are its last reader
 * (tc_kernel_forward_to_output, session.c), and copy it when anything reads it later. */
#include "rt_test_util.h"

/* x[2,3] -> Relu -> a -> Reshape([3,2]) -> b -> Neg -> y; when `keep_a`, a is also read after
 * the Reshape (Add(b_flat, a) needs it whole): then the Reshape must copy. */
static tconv_model *chain_model(bool keep_a) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t x_dims[2] = {2, 3};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 2, x_dims);
    tconv_value *shape = rtt_init_i64(g, "shape", 2, (int64_t[]){3, 2});
    tconv_value *back = rtt_init_i64(g, "back", 2, (int64_t[]){2, 3});
    rtt_node(g, "Relu", "relu", &x, 1, (const char *[]){"a"}, 1);
    rtt_node(g, "Reshape", "reshape", (tconv_value *[]){rtt_value(g, "a"), shape}, 2,
             (const char *[]){"b"}, 1);
    rtt_node(g, "Neg", "neg", (tconv_value *[]){rtt_value(g, "b")}, 1, (const char *[]){"y"}, 1);
    if (keep_a) {
        rtt_node(g, "Reshape", "back", (tconv_value *[]){rtt_value(g, "y"), back}, 2,
                 (const char *[]){"yb"}, 1);
        rtt_node(g, "Add", "sum", (tconv_value *[]){rtt_value(g, "yb"), rtt_value(g, "a")}, 2,
                 (const char *[]){"out"}, 1);
        rtt_output(g, "out");
    } else {
        rtt_output(g, "y");
    }
    return m;
}

static uint64_t run_chain(tconv_model *m, const tc_rt_tensor *x, tc_rt_tensor *out) {
    tc_session_options options;
    tc_session_options_init(&options);
    options.n_threads = 1;
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &options, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_run(s, x, 1, out, &err), TCONV_OK);
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    assert_int_equal(stats.live_bytes, 0);
    tc_session_free(s);
    return stats.n_allocations;
}

static void test_last_reader_takes_the_buffer(void **state) {
    (void)state;
    float xs[6] = {-1, 2, -3, 4, 5, -6};
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, xs);
    tconv_model *m = chain_model(false);
    tc_rt_tensor y;
    /* Relu and Neg allocate; the Reshape moves Relu's buffer */
    assert_int_equal(run_chain(m, &x, &y), 2);
    rtt_assert_dims(&y, 2, (int64_t[]){3, 2});
    rtt_assert_floats(&y, (float[]){-0.0f, -2, -0.0f, -4, -5, -0.0f}, 6);
    tc_rt_tensor_release(&y);
    tconv_model_free(m);
    tc_rt_tensor_release(&x);
}

static void test_value_read_later_is_copied(void **state) {
    (void)state;
    float xs[6] = {-1, 2, -3, 4, 5, -6};
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, xs);
    tconv_model *m = chain_model(true);
    tc_rt_tensor out;
    /* Relu, the first Reshape's copy (a is read by Add), Neg, Add; the second Reshape moves */
    assert_int_equal(run_chain(m, &x, &out), 4);
    rtt_assert_dims(&out, 2, (int64_t[]){2, 3});
    rtt_assert_floats(&out, (float[]){0, 0, 0, 0, 0, 0}, 6);
    tc_rt_tensor_release(&out);
    tconv_model_free(m);
    tc_rt_tensor_release(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_reader_takes_the_buffer),
        cmocka_unit_test(test_value_read_later_is_copied),
    };
    return cmocka_run_group_tests_name("runtime.forward_output", tests, NULL, NULL);
}
