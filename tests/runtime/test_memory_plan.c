/* The runtime's memory limit: a graph whose planned memory (declared shapes over the buffer
 * lifetimes, plus initializer copies) exceeds the limit is refused before anything is
 * allocated, at session creation for static shapes and at the start of a run once the inputs
 * fix the symbolic dims. */
#include "rt_test_util.h"

#define MIB ((int64_t)1 << 20)

static void set_shape(tconv_value *v, int rank, const int64_t *dims) {
    tc_dim d[TC_MAX_RANK];
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
    /* 4 MiB a value; the input x is held throughout, a and b overlap at r1: 12 MiB */
    const int64_t dims[] = {1024, 1024};
    tconv_model *m = relu_chain(dims);
    tc_session_options o;
    tc_session_options_init(&o);
    assert_true(o.max_memory_bytes >= (size_t)(16 * 1024) * MIB || o.max_memory_bytes == SIZE_MAX);
    o.max_memory_bytes = 6 * MIB;
    tc_session *s = (tc_session *)1;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_ERR_LIMIT);
    assert_null(s);
    rtt_assert_contains(err.message, "planned memory of 12582912 bytes");
    rtt_assert_contains(err.message, "4194304 of graph inputs");
    rtt_assert_contains(err.message, "peak at node 'r1'");
    rtt_assert_contains(err.message, "exceeds the memory limit of 6291456 bytes");
    o.max_memory_bytes = 12 * MIB;
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
    rtt_assert_contains(err.message, "planned memory of 12582912 bytes");
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

/* Graph inputs are held for the whole run: a 4 GiB input declared by a 110-byte model is
 * refused at creation, before anyone makes the input (issue 16, item 1). */
static void test_graph_inputs_count_at_creation(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    const int64_t xd[] = {1, 1, 32768, 32768};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, xd);
    const char *y[] = {"y"};
    rtt_node(g, "GlobalAveragePool", "gap", &x, 1, y, 1);
    rtt_output(g, "y");
    tc_session_options o;
    tc_session_options_init(&o);
    o.max_memory_bytes = 64 * MIB;
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_ERR_LIMIT);
    assert_null(s);
    rtt_assert_contains(err.message, "4294967296 of graph inputs");
    tconv_model_free(m);
}

/* Symbolic input dims bound by the caller are checked before random inputs are made. */
static void test_bound_inputs_checked_before_they_are_made(void **state) {
    (void)state;
    const int64_t dims[] = {-1, 1024}; /* d0 x 1024 */
    tconv_model *m = relu_chain(dims);
    tc_session_options o;
    tc_session_options_init(&o);
    o.max_memory_bytes = 64 * MIB;
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    tc_dim_binding big = {"d0", 32768}, small = {"d0", 16}; /* 128 MiB a value; 48 KiB */
    assert_int_equal(tc_session_check_inputs(s, &big, 1, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "134217728 of graph inputs");
    assert_int_equal(tc_session_check_inputs(s, &small, 1, &err), TCONV_OK);
    assert_int_equal(tc_session_check_input_bytes(s, 65 * MIB, "x", &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "input 'x'");
    assert_int_equal(tc_session_check_input_bytes(s, 63 * MIB, "x", &err), TCONV_OK);
    tc_session_free(s);
    tconv_model_free(m);
}

/* An input of unknown shape counts once it is given: with 3 MiB given and a 4 MiB limit, the
 * 3 MiB result no longer fits beside it. */
static void test_given_inputs_count_while_running(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    tconv_value *x = rtt_value(g, "x"); /* no declared type */
    tc_error err;
    assert_int_equal(tc_graph_add_input(g, x, NULL, &err), TCONV_OK);
    const char *y[] = {"y"};
    rtt_node(g, "Relu", "r", &x, 1, y, 1);
    rtt_output(g, "y");
    tc_session_options o;
    tc_session_options_init(&o);
    o.max_memory_bytes = 4 * MIB;
    tc_session *s = NULL;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    const int64_t d[] = {3 * 256, 1024};
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 2, d, NULL), out;
    assert_int_equal(tc_session_run(s, &in, 1, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "node 'r'");
    rtt_assert_contains(err.message, "memory limit");
    tc_session_free(s);
    o.max_memory_bytes = 6 * MIB;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_run(s, &in, 1, &out, &err), TCONV_OK);
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&in);
    tc_session_free(s);
    tconv_model_free(m);
}

/* Resize's double-precision work buffers are kernel scratch within the limit (issue 16, item
 * 8): X 256x256 scaled by 8 is a 16 MiB result but 2 x 32 MiB of buffers (the channels are
 * resized too: the axis-by-axis path, not the plane path, which needs no such buffers). */
static void test_resize_buffers_count(void **state) {
    (void)state;
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    const int64_t xd[] = {1, 2, 256, 256}, yd[] = {1, 1, 2048, 2048}, sd[] = {4};
    const float scales[] = {1, 0.5f, 8, 8};
    tconv_value *in[3] = {rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, xd), NULL, NULL};
    in[2] = rtt_init(g, "scales", TCONV_DTYPE_FLOAT, 1, sd, scales, sizeof scales);
    const char *y[] = {"y"};
    rtt_node(g, "Resize", "resize", in, 3, y, 1);
    rtt_output(g, "y");
    tc_session_options o;
    tc_session_options_init(&o);
    o.max_memory_bytes = 20 * MIB; /* x and y fit */
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 4, xd, NULL), out;
    assert_int_equal(tc_session_run(s, &x, 1, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "node 'resize'");
    rtt_assert_contains(err.message, "resize buffers");
    tc_session_free(s);
    o.max_memory_bytes = 100 * MIB;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_run(s, &x, 1, &out, &err), TCONV_OK);
    rtt_assert_dims(&out, 4, yd);
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&x);
    tc_session_free(s);
    tconv_model_free(m);
}

/* A refused scratch request leaves the session usable: the next, smaller run gets its buffers
 * (the scratch high-water mark does not keep the refused size). */
static void test_refused_scratch_does_not_stick(void **state) {
    (void)state;
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    const int64_t sd[] = {4};
    const float scales[] = {1, 0.5f, 8, 8}; /* the channels too: the axis-by-axis path */
    tconv_value *x = rtt_value(g, "x");     /* shape given by each run */
    tc_error err;
    assert_int_equal(tc_graph_add_input(g, x, NULL, &err), TCONV_OK);
    tconv_value *in[3] = {x, NULL, NULL};
    in[2] = rtt_init(g, "scales", TCONV_DTYPE_FLOAT, 1, sd, scales, sizeof scales);
    const char *y[] = {"y"};
    rtt_node(g, "Resize", "resize", in, 3, y, 1);
    rtt_output(g, "y");
    tc_session_options o;
    tc_session_options_init(&o);
    o.max_memory_bytes = 20 * MIB;
    tc_session *s = NULL;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    const int64_t big[] = {1, 2, 256, 256}, small[] = {1, 2, 16, 16}, yd[] = {1, 1, 128, 128};
    tc_rt_tensor x1 = rtt_tensor(TCONV_DTYPE_FLOAT, 4, big, NULL), out;
    assert_int_equal(tc_session_run(s, &x1, 1, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "resize buffers");
    tc_rt_tensor x2 = rtt_tensor(TCONV_DTYPE_FLOAT, 4, small, NULL);
    assert_int_equal(tc_session_run(s, &x2, 1, &out, &err), TCONV_OK);
    rtt_assert_dims(&out, 4, yd);
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&x1);
    tc_rt_tensor_release(&x2);
    tc_session_free(s);
    tconv_model_free(m);
}

/* The work limit (issue 16, item 6): ConvTranspose of two [1,1,1000,1000] graph inputs plans
 * 1e12 multiply-adds and is refused at creation by default; with shapes not declared, the node
 * is refused when it allocates its output, before it computes. */
static void test_work_limit(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    const int64_t d[] = {1, 1, 1000, 1000};
    tconv_value *in[2] = {rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, d),
                          rtt_input(g, "w", TCONV_DTYPE_FLOAT, 4, d)};
    const char *y[] = {"y"};
    rtt_node(g, "ConvTranspose", "ct", in, 2, y, 1);
    rtt_output(g, "y");
    tc_session_options o;
    tc_session_options_init(&o);
    assert_true(o.max_work == TC_DEFAULT_MAX_WORK);
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "planned work of 1000000000000");
    rtt_assert_contains(err.message, "node 'ct'");
    tconv_model_free(m);

    m = rtt_model(14); /* the same node with small inputs of undeclared shape */
    g = m->graph;
    tconv_value *x = rtt_value(g, "x"), *w = rtt_value(g, "w");
    assert_int_equal(tc_graph_add_input(g, x, NULL, &err), TCONV_OK);
    assert_int_equal(tc_graph_add_input(g, w, NULL, &err), TCONV_OK);
    tconv_value *xw[2] = {x, w};
    rtt_node(g, "ConvTranspose", "ct", xw, 2, y, 1);
    rtt_output(g, "y");
    o.max_work = 99;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    const int64_t xd[] = {1, 1, 10, 10}, wd[] = {1, 1, 3, 3};
    tc_rt_tensor inputs[2] = {rtt_tensor(TCONV_DTYPE_FLOAT, 4, xd, NULL),
                              rtt_tensor(TCONV_DTYPE_FLOAT, 4, wd, NULL)},
                 out;
    assert_int_equal(tc_session_run(s, inputs, 2, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "work of 900");
    rtt_assert_contains(err.message, "work limit of 99");
    tc_session_free(s);
    o.max_work = 900; /* 100 input elements x 9 taps */
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_run(s, inputs, 2, &out, &err), TCONV_OK);
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    assert_int_equal(stats.work, 900);
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&inputs[0]);
    tc_rt_tensor_release(&inputs[1]);
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
        cmocka_unit_test(test_graph_inputs_count_at_creation),
        cmocka_unit_test(test_bound_inputs_checked_before_they_are_made),
        cmocka_unit_test(test_given_inputs_count_while_running),
        cmocka_unit_test(test_resize_buffers_count),
        cmocka_unit_test(test_work_limit),
        cmocka_unit_test(test_refused_scratch_does_not_stick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
