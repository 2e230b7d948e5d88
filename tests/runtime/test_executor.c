/* The executor: buffer lifetimes (a value is freed after its last use, uses by subgraphs
 * included), If with outer-scope values, topological order, error messages (unsupported op,
 * unsupported dtype, bad inputs, kernel errors prefixed with the node), random inputs,
 * comparison and the memory limit. */
#include "rt_test_util.h"

#include <math.h>
#include <stdio.h>

#define N_ELEMS 65536 /* 256 KiB of float per tensor */

static tc_rt_tensor filled(int rank, const int64_t *dims, float start, float step) {
    tc_rt_tensor t = rtt_tensor(TCONV_DTYPE_FLOAT, rank, dims, NULL);
    for (int64_t i = 0; i < t.n_elements; i++)
        ((float *)t.data)[i] = start + step * (float)i;
    return t;
}

static tconv_status run_with_stats(tconv_model *m, const tc_rt_tensor *in, size_t n_in,
                                   tc_rt_tensor *out, tc_session_stats *stats, tc_error *err) {
    tc_session *s = NULL;
    tconv_status st = tc_session_create(m, NULL, &s, err);
    if (st != TCONV_OK)
        return st;
    st = tc_session_run(s, in, n_in, out, err);
    tc_session_get_stats(s, stats);
    tc_session_free(s);
    return st;
}

/* ---------------------------------------------------------------- lifetimes */

static void test_chain_frees_after_last_use(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {N_ELEMS};
    tconv_value *prev = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    char names[8][16];
    for (int i = 0; i < 8; i++) {
        snprintf(names[i], sizeof names[i], "r%d", i);
        const char *outs[] = {names[i]};
        rtt_node(g, "Relu", names[i], &prev, 1, outs, 1);
        prev = rtt_value(g, names[i]);
    }
    rtt_output(g, "r7");
    tc_rt_tensor x = filled(1, d, -1.0f, 2.0f / N_ELEMS), y;
    tc_session_stats stats;
    tc_error err;
    assert_int_equal(run_with_stats(m, &x, 1, &y, &stats, &err), TCONV_OK);
    size_t bytes = N_ELEMS * sizeof(float);
    /* never more than the input and the output of one step alive */
    assert_true(stats.peak_live_bytes <= 2 * bytes);
    assert_int_equal(stats.n_allocations, 8);
    assert_int_equal(stats.n_kernel_calls, 8);
    assert_int_equal(stats.live_bytes, 0);
    assert_true(((float *)y.data)[0] == 0.0f);
    assert_true(((float *)y.data)[N_ELEMS - 1] > 0.99f);
    tc_rt_tensor_release(&x);
    tc_rt_tensor_release(&y);
    tconv_model_free(m);
}

static void test_fan_out_keeps_value_until_last_reader(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {N_ELEMS};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    const char *a[] = {"a"}, *b[] = {"b"}, *c[] = {"c"}, *y[] = {"y"};
    rtt_node(g, "Relu", "A", &x, 1, a, 1);
    tconv_value *va = rtt_value(g, "a");
    rtt_node(g, "Sigmoid", "B", &va, 1, b, 1);
    rtt_node(g, "Tanh", "C", &va, 1, c, 1);
    tconv_value *bc[] = {rtt_value(g, "b"), rtt_value(g, "c")};
    rtt_node(g, "Add", "D", bc, 2, y, 1);
    rtt_output(g, "y");
    tc_rt_tensor in = filled(1, d, -2.0f, 4.0f / N_ELEMS), out;
    tc_session_stats stats;
    tc_error err;
    assert_int_equal(run_with_stats(m, &in, 1, &out, &stats, &err), TCONV_OK);
    size_t bytes = N_ELEMS * sizeof(float);
    assert_true(stats.peak_live_bytes == 3 * bytes); /* a, b, c during C; b, c, y during D */
    for (int64_t i = 0; i < N_ELEMS; i += 997) {
        float v = ((float *)in.data)[i], r = v < 0 ? 0 : v;
        float e = 1.0f / (1.0f + expf(-r)) + tanhf(r);
        assert_true(fabsf(((float *)out.data)[i] - e) < 1e-6f);
    }
    tc_rt_tensor_release(&in);
    tc_rt_tensor_release(&out);
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- If and captured values */

static tconv_graph *add_branch(tconv_node *node, const char *attr) {
    tconv_graph *sub = NULL;
    tc_error err;
    assert_int_equal(tc_graph_create(node->graph->model, node->graph, &sub, &err), TCONV_OK);
    sub->owner = node;
    sub->name = attr;
    tc_attr a = {.name = attr, .type = TCONV_ATTR_GRAPH, .g = sub};
    assert_int_equal(tc_node_add_attr(node, &a, &err), TCONV_OK);
    return sub;
}

/* main: a = Relu(x); y = If(cond) then {Add(a, a)} else {If(cond2) then {Sigmoid(a)} else {a}}.
 * `a` has no reader in the main graph: only the branches read it, so it must stay alive until
 * the If has run. The nested If reads `a` two scopes up and returns it directly. */
static tconv_model *build_if_model(void) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t d[] = {4};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    tconv_value *cond = rtt_input(g, "cond", TCONV_DTYPE_BOOL, 0, NULL);
    tconv_value *cond2 = rtt_input(g, "cond2", TCONV_DTYPE_BOOL, 0, NULL);
    const char *a[] = {"a"}, *y[] = {"y"};
    rtt_node(g, "Relu", "relu", &x, 1, a, 1);
    tconv_node *node_if = rtt_node(g, "If", "the_if", &cond, 1, y, 1);
    rtt_output(g, "y");

    tconv_value *va = rtt_value(g, "a");
    tconv_graph *then_g = add_branch(node_if, "then_branch");
    tconv_value *aa[] = {va, va};
    const char *t[] = {"then_out"};
    rtt_node(then_g, "Add", "then_add", aa, 2, t, 1);
    rtt_output(then_g, "then_out");

    tconv_graph *else_g = add_branch(node_if, "else_branch");
    const char *e[] = {"else_out"};
    tconv_node *inner_if = rtt_node(else_g, "If", "inner_if", &cond2, 1, e, 1);
    rtt_output(else_g, "else_out");
    tconv_graph *in_then = add_branch(inner_if, "then_branch");
    const char *it[] = {"inner_then_out"};
    rtt_node(in_then, "Sigmoid", "inner_sig", &va, 1, it, 1);
    rtt_output(in_then, "inner_then_out");
    tconv_graph *in_else = add_branch(inner_if, "else_branch");
    tc_error err;
    /* an outer value returned directly */
    assert_int_equal(tc_graph_add_output(in_else, va, NULL, &err), TCONV_OK);
    return m;
}

static void run_if_case(bool c1, bool c2, const float *expected) {
    tconv_model *m = build_if_model();
    int64_t d[] = {4};
    float xv[] = {-1, 0.5f, 2, -3};
    uint8_t b1 = c1, b2 = c2;
    tc_rt_tensor in[3] = {rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, xv),
                          rtt_tensor(TCONV_DTYPE_BOOL, 0, NULL, &b1),
                          rtt_tensor(TCONV_DTYPE_BOOL, 0, NULL, &b2)};
    tc_rt_tensor out;
    tc_session_stats stats;
    tc_error err;
    tconv_status st = run_with_stats(m, in, 3, &out, &stats, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    assert_int_equal(stats.live_bytes, 0);
    for (int i = 0; i < 4; i++)
        assert_true(fabsf(((float *)out.data)[i] - expected[i]) < 1e-6f);
    tc_rt_tensor_release(&out);
    for (int i = 0; i < 3; i++)
        tc_rt_tensor_release(&in[i]);
    tconv_model_free(m);
}

static void test_if_reads_outer_values(void **state) {
    (void)state;
    float then_e[] = {0, 1, 4, 0};
    run_if_case(true, false, then_e);
    float sig[4];
    float relu[] = {0, 0.5f, 2, 0};
    for (int i = 0; i < 4; i++)
        sig[i] = 1.0f / (1.0f + expf(-relu[i]));
    run_if_case(false, true, sig);
    run_if_case(false, false, relu);
}

static void test_if_error_names_both_nodes(void **state) {
    (void)state;
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t d[] = {2};
    tconv_value *cond = rtt_input(g, "cond", TCONV_DTYPE_BOOL, 0, NULL);
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    const char *y[] = {"y"};
    tconv_node *n = rtt_node(g, "If", "outer", &cond, 1, y, 1);
    rtt_output(g, "y");
    tconv_graph *t = add_branch(n, "then_branch");
    int64_t shape[] = {3};
    tconv_value *r_in[] = {x, rtt_init_i64(t, "bad_shape", 1, shape)};
    const char *r[] = {"r"};
    rtt_node(t, "Reshape", "bad_reshape", r_in, 2, r, 1);
    rtt_output(t, "r");
    tconv_graph *e = add_branch(n, "else_branch");
    assert_int_equal(tc_graph_add_output(e, x, NULL, NULL), TCONV_OK);
    uint8_t yes = 1;
    tc_rt_tensor in[2] = {rtt_tensor(TCONV_DTYPE_BOOL, 0, NULL, &yes),
                          rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, NULL)};
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(rtt_run(m, in, 2, &out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "node 'outer' (#0, If) [ai.onnx If-13]: in subgraph "
                                     "'then_branch': node 'bad_reshape' (#0, Reshape)");
    rtt_assert_contains(err.message, "cannot reshape [2]");
    tc_rt_tensor_release(&in[0]);
    tc_rt_tensor_release(&in[1]);
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- order */

static void test_out_of_order_nodes_and_cycles(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {3};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    tconv_value *va = rtt_value(g, "a");
    const char *y[] = {"y"}, *a[] = {"a"};
    rtt_node(g, "Sigmoid", "second", &va, 1, y, 1); /* listed before its producer */
    rtt_node(g, "Relu", "first", &x, 1, a, 1);
    rtt_output(g, "y");
    float xv[] = {-1, 0, 1};
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, xv), out;
    tc_error err;
    assert_int_equal(rtt_run(m, &in, 1, &out, &err), TCONV_OK);
    float e[] = {0.5f, 0.5f, 1.0f / (1.0f + expf(-1.0f))};
    rtt_assert_floats(&out, e, 3);
    tc_rt_tensor_release(&out);
    tconv_model_free(m);

    m = rtt_model(14);
    g = m->graph;
    tconv_value *p = rtt_value(g, "p"), *q = rtt_value(g, "q");
    const char *po[] = {"p"}, *qo[] = {"q"};
    rtt_node(g, "Relu", "loop_a", &q, 1, po, 1);
    rtt_node(g, "Relu", "loop_b", &p, 1, qo, 1);
    rtt_output(g, "q");
    tc_session *s = NULL;
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "cycle");
    rtt_assert_contains(err.message, "loop_a");
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

/* a = Relu(x); b = Reshape(a, bad); c = Reshape(x, bad): b and c both fail. A FIFO ready
 * queue would run c (ready from the start) before b; the executor keeps the graph's order, so
 * b fails first. */
static void test_sorted_graph_keeps_its_order(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {4}, bad[] = {3};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    tconv_value *shape = rtt_init_i64(g, "bad", 1, bad);
    const char *a[] = {"a"}, *b[] = {"b"}, *c[] = {"c"};
    rtt_node(g, "Relu", "A", &x, 1, a, 1);
    tconv_value *ab[] = {rtt_value(g, "a"), shape}, *xc[] = {x, shape};
    rtt_node(g, "Reshape", "B", ab, 2, b, 1);
    rtt_node(g, "Reshape", "C", xc, 2, c, 1);
    rtt_output(g, "b");
    rtt_output(g, "c");
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, NULL), out[2];
    tc_error err;
    assert_int_equal(rtt_run(m, &in, 1, out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "node 'B' (#1, Reshape)");
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- errors */

static void test_unsupported_op_error(void **state) {
    (void)state;
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t d[] = {2};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    const char *y[] = {"y"}, *z[] = {"z"};
    rtt_node(g, "Relu", "fine", &x, 1, y, 1);
    tconv_value *vy = rtt_value(g, "y");
    rtt_node(g, "FooBar", "mystery", &vy, 1, z, 1);
    rtt_output(g, "z");
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_ERR_UNSUPPORTED);
    assert_null(s);
    rtt_assert_contains(err.message, "node 'mystery' (#1, FooBar)");
    rtt_assert_contains(err.message, "unsupported op FooBar");
    rtt_assert_contains(err.message, "domain 'ai.onnx'");
    rtt_assert_contains(err.message, "opset 13");
    tconv_model_free(m);

    /* the op exists, but not at this opset */
    m = rtt_model(13);
    g = m->graph;
    int64_t d4[] = {1, 1, 2, 2};
    x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, d4);
    float sc[] = {1, 1, 2, 2};
    int64_t d1[] = {4};
    tconv_value *in[] = {x, rtt_init(g, "scales", TCONV_DTYPE_FLOAT, 1, d1, sc, sizeof sc)};
    rtt_node(g, "Upsample", "up", in, 2, y, 1);
    rtt_output(g, "y");
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "node 'up'");
    rtt_assert_contains(err.message, "opsets 7 to 9 only");
    tconv_model_free(m);

    /* a domain the model does not import */
    m = rtt_model(13);
    g = m->graph;
    x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    tconv_node *n = NULL;
    assert_int_equal(tc_node_create(g, "Gelu", "com.example", "custom", &n, &err), TCONV_OK);
    tc_node_add_input(n, x, &err);
    tc_node_add_output(n, rtt_value(g, "y"), &err);
    tc_graph_append_node(g, n);
    rtt_output(g, "y");
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "node 'custom'");
    rtt_assert_contains(err.message, "com.example");
    tconv_model_free(m);
}

static void test_unsupported_dtype_names_node(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {2};
    tconv_value *in[] = {rtt_input(g, "a", TCONV_DTYPE_BOOL, 1, d),
                         rtt_input(g, "b", TCONV_DTYPE_BOOL, 1, d)};
    const char *y[] = {"y"};
    rtt_node(g, "Add", "bool_add", in, 2, y, 1);
    rtt_output(g, "y");
    tc_rt_tensor inputs[2] = {rtt_tensor(TCONV_DTYPE_BOOL, 1, d, NULL),
                              rtt_tensor(TCONV_DTYPE_BOOL, 1, d, NULL)};
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(rtt_run(m, inputs, 2, &out, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "node 'bool_add' (#0, Add) [ai.onnx Add-14]");
    rtt_assert_contains(err.message, "unsupported dtype bool for input 0 ('a')");
    rtt_assert_contains(err.message, "supported: float, uint8");
    tc_rt_tensor_release(&inputs[0]);
    tc_rt_tensor_release(&inputs[1]);
    tconv_model_free(m);

    m = rtt_model(14);
    g = m->graph;
    tconv_value *h = rtt_input(g, "h", TCONV_DTYPE_FLOAT16, 1, d);
    rtt_node(g, "Sigmoid", "half_sigmoid", &h, 1, y, 1);
    rtt_output(g, "y");
    tc_rt_tensor hin = rtt_tensor(TCONV_DTYPE_FLOAT16, 1, d, NULL);
    assert_int_equal(rtt_run(m, &hin, 1, &out, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "node 'half_sigmoid'");
    rtt_assert_contains(err.message, "unsupported dtype float16");
    tc_rt_tensor_release(&hin);
    tconv_model_free(m);
}

static void test_unknown_attribute_is_unsupported(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {2};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    const char *y[] = {"y"};
    tconv_node *n = rtt_node(g, "Relu", "odd_relu", &x, 1, y, 1);
    tc_error err;
    tc_node_set_attr_int(n, "cap", 6, &err);
    rtt_output(g, "y");
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, NULL), out;
    assert_int_equal(rtt_run(m, &in, 1, &out, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "node 'odd_relu'");
    rtt_assert_contains(err.message, "unsupported attribute 'cap'");
    tc_rt_tensor_release(&in);
    tconv_model_free(m);

    /* an attribute of the wrong type: the node is named once */
    m = rtt_model(16);
    g = m->graph;
    x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    n = rtt_node(g, "LeakyRelu", "leaky", &x, 1, y, 1);
    tc_node_set_attr_int(n, "alpha", 1, &err);
    rtt_output(g, "y");
    in = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, NULL);
    assert_int_equal(rtt_run(m, &in, 1, &out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "node 'leaky' (#0, LeakyRelu) [ai.onnx LeakyRelu-16]: "
                                     "attribute 'alpha': expected FLOAT, got INT");
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

static void test_input_checks_name_the_input(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {-1, 3};
    tconv_value *x = rtt_input(g, "image", TCONV_DTYPE_FLOAT, 2, d);
    tconv_value *x2 = rtt_input(g, "other", TCONV_DTYPE_FLOAT, 2, d);
    tconv_value *xs[] = {x, x2};
    const char *y[] = {"y"};
    rtt_node(g, "Add", "add", xs, 2, y, 1);
    rtt_output(g, "y");
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_input_count(s), 2);
    int64_t good[] = {2, 3}, wrong[] = {2, 4}, other_n[] = {5, 3};
    tc_rt_tensor in[2] = {rtt_tensor(TCONV_DTYPE_FLOAT, 2, wrong, NULL),
                          rtt_tensor(TCONV_DTYPE_FLOAT, 2, good, NULL)};
    tc_rt_tensor out;
    assert_int_equal(tc_session_run(s, in, 2, &out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "input 'image': dim 1 is 4, the graph declares 3");
    tc_rt_tensor_release(&in[0]);
    in[0] = rtt_tensor(TCONV_DTYPE_INT32, 2, good, NULL);
    assert_int_equal(tc_session_run(s, in, 2, &out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "input 'image': dtype int32 given");
    tc_rt_tensor_release(&in[0]);
    /* the symbolic dim d0 must agree between inputs */
    in[0] = rtt_tensor(TCONV_DTYPE_FLOAT, 2, other_n, NULL);
    assert_int_equal(tc_session_run(s, in, 2, &out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "'d0'");
    assert_int_equal(tc_session_run(s, in, 1, &out, &err), TCONV_ERR_USAGE);
    rtt_assert_contains(err.message, "1 inputs given, the graph needs 2");
    tc_rt_tensor_release(&in[0]);
    tc_rt_tensor_release(&in[1]);
    tc_session_free(s);
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- data helpers */

static void test_random_inputs(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    int64_t d[] = {-1, 4};
    tconv_value *x = rtt_input(m->graph, "image", TCONV_DTYPE_FLOAT, 2, d);
    tc_rt_tensor a, b;
    tc_error err;
    assert_int_equal(tc_session_random_input(x, 7, NULL, 0, &a, &err), TCONV_ERR_USAGE);
    rtt_assert_contains(err.message, "input 'image': dim 0 ('d0') is dynamic");
    tc_dim_binding bind = {"d0", 3};
    assert_int_equal(tc_session_random_input(x, 7, &bind, 1, &a, &err), TCONV_OK);
    assert_int_equal(tc_session_random_input(x, 7, &bind, 1, &b, &err), TCONV_OK);
    int64_t e[] = {3, 4};
    rtt_assert_dims(&a, 2, e);
    assert_memory_equal(a.data, b.data, a.nbytes);
    for (int64_t i = 0; i < a.n_elements; i++)
        assert_true(fabsf(((float *)a.data)[i]) <= 1.0f);
    tc_rt_tensor_release(&b);
    assert_int_equal(tc_session_random_input(x, 8, &bind, 1, &b, &err), TCONV_OK);
    assert_true(memcmp(a.data, b.data, a.nbytes) != 0);
    tc_rt_tensor_release(&a);
    tc_rt_tensor_release(&b);
    tconv_model_free(m);
}

static void test_compare(void **state) {
    (void)state;
    int64_t d[] = {4};
    float av[] = {1.0f, NAN, INFINITY, 100.0f}, ev[] = {1.00001f, NAN, INFINITY, 100.01f};
    tc_rt_tensor a = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, av);
    tc_rt_tensor e = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, ev);
    double abs_err, rel_err;
    tc_error err;
    assert_int_equal(tc_rt_tensor_compare(&a, &e, 1e-4, 1e-5, &abs_err, &rel_err, &err), TCONV_OK);
    assert_true(abs_err > 0.009 && abs_err < 0.011);
    assert_int_equal(tc_rt_tensor_compare(&a, &e, 1e-6, 1e-6, &abs_err, &rel_err, &err),
                     TCONV_ERR_MISMATCH);
    rtt_assert_contains(err.message, "2 of 4 elements differ");
    rtt_assert_contains(err.message, "first at [0]");
    int64_t d2[] = {2, 2};
    tc_rt_tensor f = rtt_tensor(TCONV_DTYPE_FLOAT, 2, d2, ev);
    assert_int_equal(tc_rt_tensor_compare(&a, &f, 1e-4, 1e-5, &abs_err, &rel_err, &err),
                     TCONV_ERR_MISMATCH);
    rtt_assert_contains(err.message, "shape [4], expected [2,2]");
    tc_rt_tensor_release(&a);
    tc_rt_tensor_release(&e);
    tc_rt_tensor_release(&f);
}

static void test_memory_limit(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {N_ELEMS};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    const char *a[] = {"a"}, *b[] = {"b"};
    rtt_node(g, "Relu", "r0", &x, 1, a, 1);
    tconv_value *va = rtt_value(g, "a");
    rtt_node(g, "Relu", "r1", &va, 1, b, 1);
    rtt_output(g, "b");
    tc_session_options o;
    tc_session_options_init(&o);
    o.max_memory_bytes = N_ELEMS * sizeof(float) + 16;
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, NULL), out;
    assert_int_equal(tc_session_run(s, &in, 1, &out, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "node 'r1'");
    rtt_assert_contains(err.message, "memory limit");
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    assert_int_equal(stats.live_bytes, 0);
    tc_session_free(s);
    o.max_memory_bytes = 2 * N_ELEMS * sizeof(float);
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_run(s, &in, 1, &out, &err), TCONV_OK);
    tc_rt_tensor_release(&out);
    tc_session_free(s);
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

static void test_outputs_that_are_inputs_or_constants(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {2};
    float c[] = {5, 6};
    rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, d);
    rtt_init(g, "c", TCONV_DTYPE_FLOAT, 1, d, c, sizeof c);
    rtt_output(g, "x");
    rtt_output(g, "c");
    rtt_output(g, "x");
    float xv[] = {1, 2};
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, xv), out[3];
    tc_error err;
    assert_int_equal(rtt_run(m, &in, 1, out, &err), TCONV_OK);
    rtt_assert_floats(&out[0], xv, 2);
    rtt_assert_floats(&out[1], c, 2);
    rtt_assert_floats(&out[2], xv, 2);
    assert_true(out[0].data != in.data && out[0].data != out[2].data);
    for (int i = 0; i < 3; i++)
        tc_rt_tensor_release(&out[i]);
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_frees_after_last_use),
        cmocka_unit_test(test_fan_out_keeps_value_until_last_reader),
        cmocka_unit_test(test_if_reads_outer_values),
        cmocka_unit_test(test_if_error_names_both_nodes),
        cmocka_unit_test(test_out_of_order_nodes_and_cycles),
        cmocka_unit_test(test_sorted_graph_keeps_its_order),
        cmocka_unit_test(test_unsupported_op_error),
        cmocka_unit_test(test_unsupported_dtype_names_node),
        cmocka_unit_test(test_unknown_attribute_is_unsupported),
        cmocka_unit_test(test_input_checks_name_the_input),
        cmocka_unit_test(test_random_inputs),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_outputs_that_are_inputs_or_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
