/* The runtime's memory limit: a graph whose planned memory (declared shapes over the buffer
 * lifetimes, plus initializer copies) exceeds the limit is refused before anything is
 * allocated, at session creation for static shapes and at the start of a run once the inputs
 * fix the symbolic dims. */
#include "rt_test_util.h"

#define MIB ((int64_t)1 << 20)

static void set_shape(tconv_value *v, int rank, const int64_t *dims) {
    tc_dim d[TCONV_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        memset(&d[i], 0, sizeof d[i]);
        d[i].kind = dims[i] >= 0 ? TCONV_DIM_STATIC : TCONV_DIM_SYMBOLIC;
        d[i].value = dims[i];
        d[i].param = dims[i] >= 0 ? NULL : "d0"; /* rtt_input names axis 0 "d0" */
    }
    tc_error err;
    assert_int_equal(tc_value_set_tensor_type(v, TCONV_DTYPE_FLOAT, rank, d, &err), TCONV_OK);
}

/* x -> Relu r0 -> a -> Relu r1 -> b (output); a and b declared with the given dims. */
static tconv_model *relu_chain(const int64_t *dims) {
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 2, dims);
    const char *a[] = {"a"}, *b[] = {"b"};
    rtt_node(g, "Relu", "r0", &x, 1, a, 1);
    tconv_value *va = rtt_value(g, "a");
    set_shape(va, 2, dims);
    rtt_node(g, "Relu", "r1", &va, 1, b, 1);
    set_shape(rtt_value(g, "b"), 2, dims);
    rtt_output(g, "b");
    return m;
}

static void test_static_shapes_refused_at_creation(void **state) {
    (void)state;
    const int64_t dims[] = {1024, 1024}; /* 4 MiB a value; a and b overlap at r1: 8 MiB */
    tconv_model *m = relu_chain(dims);
    tc_session_options o;
    tc_session_options_init(&o);
    assert_true(o.max_memory_bytes >= (size_t)(16 * 1024) * MIB || o.max_memory_bytes == SIZE_MAX);
    o.max_memory_bytes = 6 * MIB;
    tc_session *s = (tc_session *)1;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_ERR_LIMIT);
    assert_null(s);
    rtt_assert_contains(err.message, "planned memory of 8388608 bytes");
    rtt_assert_contains(err.message, "peak at node 'r1'");
    rtt_assert_contains(err.message, "exceeds the memory limit of 6291456 bytes");
    o.max_memory_bytes = 8 * MIB;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    tc_session_free(s);
    tconv_model_free(m);
}

static void test_symbolic_shapes_refused_before_the_run_allocates(void **state) {
    (void)state;
    const int64_t dims[] = {-1, 1024}; /* d0 x 1024 */
    tconv_model *m = relu_chain(dims);
    tc_session_options o;
    tc_session_options_init(&o);
    o.max_memory_bytes = 6 * MIB;
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    const int64_t big[] = {1024, 1024}, small[] = {2, 1024};
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 2, big, NULL), out;
    assert_int_equal(tc_session_run(s, &in, 1, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "planned memory of 8388608 bytes");
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    assert_int_equal(stats.n_allocations, 0); /* refused before the first allocation */
    assert_int_equal(stats.n_kernel_calls, 0);
    tc_rt_tensor_release(&in);
    in = rtt_tensor(TCONV_DTYPE_FLOAT, 2, small, NULL);
    assert_int_equal(tc_session_run(s, &in, 1, &out, &err), TCONV_OK);
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&in);
    tc_session_free(s);
    tconv_model_free(m);
}

static void test_overflowing_declared_shape(void **state) {
    (void)state;
    const int64_t dims[] = {INT64_MAX / 2, 4};
    tconv_model *m = relu_chain(dims);
    tc_session_options o;
    tc_session_options_init(&o);
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "planned memory overflows");
    tconv_model_free(m);
}

static void test_initializers_count(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    const int64_t d[] = {256, 1024}; /* 1 MiB */
    rtt_init(g, "w", TCONV_DTYPE_FLOAT, 2, d, NULL, (size_t)MIB);
    tconv_value *w = rtt_value(g, "w");
    const char *y[] = {"y"};
    rtt_node(g, "Relu", "r", &w, 1, y, 1);
    rtt_output(g, "y");
    tc_session_options o;
    tc_session_options_init(&o);
    o.max_memory_bytes = (size_t)MIB / 2;
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "initializer 'w' needs 262144 x 4 bytes, over the memory "
                                     "limit of 524288 bytes");
    o.max_memory_bytes = (size_t)MIB + 4096;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    tc_rt_tensor out;
    assert_int_equal(tc_session_run(s, NULL, 0, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "node 'r'");
    rtt_assert_contains(err.message, "memory limit");
    tc_session_free(s);
    tconv_model_free(m);
}

/* Conv scratch (packed weights kept for the node, GEMM buffers) counts against the limit too:
 * with a limit that just admits the planned tensors, the run fails cleanly, naming the node. */
static void test_kernel_scratch_counts(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    const int64_t xd[] = {1, 64, 32, 32}, wd[] = {64, 64, 3, 3}, yd[] = {1, 64, 30, 30};
    tconv_value *in[2] = {rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, xd), NULL};
    in[1] = rtt_init(g, "w", TCONV_DTYPE_FLOAT, 4, wd, NULL, 64 * 64 * 9 * sizeof(float));
    const char *y[] = {"y"};
    rtt_node(g, "Conv", "c", in, 2, y, 1);
    tc_dim d[4];
    for (int i = 0; i < 4; i++) {
        memset(&d[i], 0, sizeof d[i]);
        d[i].kind = TCONV_DIM_STATIC;
        d[i].value = yd[i];
    }
    tc_error err;
    assert_int_equal(tc_value_set_tensor_type(rtt_value(g, "y"), TCONV_DTYPE_FLOAT, 4, d, &err),
                     TCONV_OK);
    rtt_output(g, "y");
    tc_session_options o;
    tc_session_options_init(&o);
    tc_session *s = NULL;
    size_t admitted = 64 * 1024;
    for (;; admitted += 4096) { /* the smallest limit (to 4 KiB) the plan passes */
        o.max_memory_bytes = admitted;
        if (tc_session_create(m, &o, &s, &err) == TCONV_OK)
            break;
        assert_true(admitted < (size_t)(8 * MIB));
    }
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 4, xd, NULL), out;
    assert_int_equal(tc_session_run(s, &x, 1, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "node 'c'");
    rtt_assert_contains(err.message, "memory limit");
    tc_session_free(s);
    o.max_memory_bytes = admitted + (size_t)(4 * MIB);
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_run(s, &x, 1, &out, &err), TCONV_OK);
    rtt_assert_dims(&out, 4, yd);
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&x);
    tc_session_free(s);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_shapes_refused_at_creation),
        cmocka_unit_test(test_symbolic_shapes_refused_before_the_run_allocates),
        cmocka_unit_test(test_overflowing_declared_shape),
        cmocka_unit_test(test_initializers_count),
        cmocka_unit_test(test_kernel_scratch_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
