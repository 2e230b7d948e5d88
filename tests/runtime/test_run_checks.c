/* The per-run replay of the memory and work plan (session.c, bind_inputs): a run that binds no
 * symbolic dim and holds what the last passing run held skips it; anything that changes what is
 * held (another model's outputs beside the session, tc_session_yield_to) or binds dims brings it
 * back. */
#include "rt_test_util.h"

/* x[n] -> Relu -> y */
static tconv_model *relu_model(int64_t n) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, (int64_t[]){n});
    rtt_node(g, "Relu", "relu", &x, 1, (const char *[]){"y"}, 1);
    tc_dim d = {.kind = TCONV_DIM_STATIC, .value = n};
    tc_error err;
    assert_int_equal(tc_value_set_tensor_type(rtt_value(g, "y"), TCONV_DTYPE_FLOAT, 1, &d, &err),
                     TCONV_OK); /* declared, so that the plan counts it */
    rtt_output(g, "y");
    return m;
}

static tc_session *create(tconv_model *m, size_t limit) {
    tc_session_options options;
    tc_session_options_init(&options);
    options.max_memory_bytes = limit;
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &options, &s, &err), TCONV_OK);
    return s;
}

static tconv_status run(tc_session *s, int64_t n, tc_rt_tensor *out, tc_error *err) {
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 1, (int64_t[]){n}, NULL);
    tconv_status st = tc_session_run(s, &in, 1, out, err);
    tc_rt_tensor_release(&in);
    return st;
}

/* 1000 floats in and out (8000 bytes) within 18000; then another model's 3000-float output
 * held beside it: 20000 planned, refused by the replay, not skipped as the same run again. */
static void test_replay_after_held_bytes_change(void **state) {
    (void)state;
    tconv_model *small = relu_model(1000), *big = relu_model(3000);
    tc_session *s = create(small, 18000), *other = create(big, 0);
    tc_rt_tensor out, other_out;
    tc_error err;
    for (int k = 0; k < 2; k++) {
        assert_int_equal(run(s, 1000, &out, &err), TCONV_OK);
        tc_rt_tensor_release(&out);
    }
    assert_int_equal(run(other, 3000, &other_out, &err), TCONV_OK);
    tc_session_yield_to(other, &other_out, 1, s);
    assert_int_equal(run(s, 1000, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "planned memory of 20000 bytes");
    tc_rt_tensor_release(&other_out);
    tc_session_free(s);
    tc_session_free(other);
    tconv_model_free(small);
    tconv_model_free(big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_after_held_bytes_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
