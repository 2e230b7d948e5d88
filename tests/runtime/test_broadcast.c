/* Numpy-style broadcasting: the shape rule, strides, the row iterator, and Add/Sub/Mul/Div and
 * Where run through a session on broadcast shapes (checked against a naive per-element loop),
 * short rows widened or not. */
#include "rt_test_util.h"

#include "runtime/compute/broadcast.h"

static void test_shape_rule(void **state) {
    (void)state;
    tc_error err;
    int64_t a[] = {2, 1, 4}, b[] = {3, 1}, out[TC_MAX_RANK];
    const int64_t *dims[] = {a, b};
    int ranks[] = {3, 2}, rank;
    assert_int_equal(tc_broadcast_shape(2, ranks, dims, &rank, out, &err), TCONV_OK);
    assert_int_equal(rank, 3);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 3);
    assert_int_equal(out[2], 4);

    int64_t c[] = {5};
    const int64_t *dims2[] = {a, c};
    int ranks2[] = {3, 1};
    assert_int_equal(tc_broadcast_shape(2, ranks2, dims2, &rank, out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "do not broadcast");
    rtt_assert_contains(err.message, "4");
    rtt_assert_contains(err.message, "5");

    /* scalars and zero-sized dims: 0 broadcasts with 1, not with 2 */
    int64_t z[] = {0, 3}, one[] = {1, 1};
    const int64_t *dims3[] = {z, one, NULL};
    int ranks3[] = {2, 2, 0};
    assert_int_equal(tc_broadcast_shape(3, ranks3, dims3, &rank, out, &err), TCONV_OK);
    assert_int_equal(rank, 2);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 3);
}

static void test_strides(void **state) {
    (void)state;
    int64_t in[] = {3, 1}, out[] = {2, 3, 4}, strides[3];
    tc_broadcast_strides(2, in, 3, out, strides);
    assert_int_equal(strides[0], 0);
    assert_int_equal(strides[1], 1);
    assert_int_equal(strides[2], 0);
}

/* Element (flat index in the broadcast output) of an operand, computed the slow way. */
static int64_t naive_offset(int64_t flat, int out_rank, const int64_t *out_dims, int rank,
                            const int64_t *dims) {
    int64_t off = 0, mul = 1;
    for (int ax = out_rank - 1; ax >= 0; ax--) {
        int64_t idx = flat % out_dims[ax];
        flat /= out_dims[ax];
        int k = ax - (out_rank - rank);
        if (k < 0)
            continue;
        if (dims[k] != 1)
            off += idx * mul;
        mul *= dims[k];
    }
    return off;
}

static void fill(float *p, int64_t n, float base) {
    for (int64_t i = 0; i < n; i++)
        p[i] = base + (float)i * 0.5f;
}

static void check_binary(const char *op, int ra, const int64_t *da, int rb, const int64_t *db) {
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    tconv_value *in[2] = {rtt_input(g, "a", TCONV_DTYPE_FLOAT, ra, da),
                          rtt_input(g, "b", TCONV_DTYPE_FLOAT, rb, db)};
    const char *outs[] = {"y"};
    rtt_node(g, op, "n0", in, 2, outs, 1);
    rtt_output(g, "y");
    tc_rt_tensor inputs[2] = {rtt_tensor(TCONV_DTYPE_FLOAT, ra, da, NULL),
                              rtt_tensor(TCONV_DTYPE_FLOAT, rb, db, NULL)};
    fill(inputs[0].data, inputs[0].n_elements, 1.0f);
    fill(inputs[1].data, inputs[1].n_elements, 2.0f);
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(rtt_run(m, inputs, 2, &out, &err), TCONV_OK);
    const float *x = inputs[0].data, *yv = inputs[1].data, *o = out.data;
    for (int64_t i = 0; i < out.n_elements; i++) {
        float a = x[naive_offset(i, out.rank, out.dims, ra, da)];
        float b = yv[naive_offset(i, out.rank, out.dims, rb, db)];
        float e = op[0] == 'A' ? a + b : op[0] == 'S' ? a - b : op[0] == 'M' ? a * b : a / b;
        assert_true(o[i] == e);
    }
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&inputs[0]);
    tc_rt_tensor_release(&inputs[1]);
    tconv_model_free(m);
}

typedef struct binary_case {
    const char *op;
    int ra;
    int64_t da[5];
    int rb;
    int64_t db[5];
} binary_case;

static void test_binary_broadcasts(void **state) {
    (void)state;
    static const binary_case cases[] = {
        {"Add", 3, {2, 3, 4}, 1, {4}},
        {"Sub", 1, {4}, 3, {2, 3, 4}},
        {"Mul", 3, {2, 1, 4}, 2, {3, 1}}, /* rows of 4 stay 4: the widened copy is let go */
        {"Div", 3, {2, 3, 4}, 0, {1}},
        {"Add", 4, {1, 3, 1, 4}, 4, {2, 1, 1, 4}},
        {"Mul", 1, {1}, 3, {2, 3, 4}},
        {"Add", 3, {2, 3, 4}, 3, {2, 3, 4}},
        /* rows shorter than 16 widened (elementwise_walk.c widen_rows): StyleGAN2's modulation
         * (rows of 9 -> 54), an operand constant along rows of 5 (-> the whole 30), a scalar
         * (rows of 12 stay 12) */
        {"Mul", 5, {1, 4, 6, 3, 3}, 5, {2, 1, 6, 1, 1}},
        {"Div", 5, {2, 1, 6, 1, 1}, 5, {1, 4, 6, 3, 3}},
        {"Add", 3, {2, 3, 1}, 3, {2, 3, 5}},
        {"Sub", 3, {2, 3, 5}, 3, {2, 3, 1}},
        {"Add", 0, {1}, 2, {3, 4}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_binary(cases[i].op, cases[i].ra, cases[i].da, cases[i].rb, cases[i].db);
}

/* Where's three operands, two of them constant along rows of 5 (both widened: rows of 15), as
 * int64: against a naive loop. */
static void test_where_short_rows(void **state) {
    (void)state;
    tconv_model *m = rtt_model(16);
    tconv_graph *g = m->graph;
    int64_t dc[] = {2, 1, 3, 1}, dx[] = {1, 4, 3, 5}, dy[] = {2, 4, 3, 1};
    tconv_value *in[3] = {rtt_input(g, "c", TCONV_DTYPE_BOOL, 4, dc),
                          rtt_input(g, "x", TCONV_DTYPE_INT64, 4, dx),
                          rtt_input(g, "y", TCONV_DTYPE_INT64, 4, dy)};
    const char *outs[] = {"out"};
    rtt_node(g, "Where", "where", in, 3, outs, 1);
    rtt_output(g, "out");
    tc_rt_tensor inputs[3] = {rtt_tensor(TCONV_DTYPE_BOOL, 4, dc, NULL),
                              rtt_tensor(TCONV_DTYPE_INT64, 4, dx, NULL),
                              rtt_tensor(TCONV_DTYPE_INT64, 4, dy, NULL)};
    uint8_t *c = inputs[0].data;
    int64_t *x = inputs[1].data, *y = inputs[2].data;
    for (int64_t i = 0; i < inputs[0].n_elements; i++)
        c[i] = (uint8_t)(i % 2);
    for (int64_t i = 0; i < inputs[1].n_elements; i++)
        x[i] = 1000 + i;
    for (int64_t i = 0; i < inputs[2].n_elements; i++)
        y[i] = -1 - i;
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(rtt_run(m, inputs, 3, &out, &err), TCONV_OK);
    assert_int_equal(out.n_elements, 2 * 4 * 3 * 5);
    const int64_t *o = out.data;
    for (int64_t i = 0; i < out.n_elements; i++) {
        bool pick = c[naive_offset(i, out.rank, out.dims, 4, dc)] != 0;
        int64_t want = pick ? x[naive_offset(i, out.rank, out.dims, 4, dx)]
                            : y[naive_offset(i, out.rank, out.dims, 4, dy)];
        assert_true(o[i] == want);
    }
    tc_rt_tensor_release(&out);
    for (int i = 0; i < 3; i++)
        tc_rt_tensor_release(&inputs[i]);
    tconv_model_free(m);
}

static void test_incompatible_shapes_error(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t da[] = {2, 3}, db[] = {4};
    tconv_value *in[2] = {rtt_input(g, "a", TCONV_DTYPE_FLOAT, 2, da),
                          rtt_input(g, "b", TCONV_DTYPE_FLOAT, 1, db)};
    const char *outs[] = {"y"};
    rtt_node(g, "Add", "adder", in, 2, outs, 1);
    rtt_output(g, "y");
    tc_rt_tensor inputs[2] = {rtt_tensor(TCONV_DTYPE_FLOAT, 2, da, NULL),
                              rtt_tensor(TCONV_DTYPE_FLOAT, 1, db, NULL)};
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(rtt_run(m, inputs, 2, &out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "node 'adder'");
    rtt_assert_contains(err.message, "Add-14");
    rtt_assert_contains(err.message, "do not broadcast");
    tc_rt_tensor_release(&inputs[0]);
    tc_rt_tensor_release(&inputs[1]);
    tconv_model_free(m);
}

static tconv_status run_int_div(tconv_dtype dtype, const void *a, const void *b, int64_t n,
                                tc_rt_tensor *out, tc_error *err) {
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {n};
    tconv_value *in[2] = {rtt_input(g, "a", dtype, 1, d), rtt_input(g, "b", dtype, 1, d)};
    const char *outs[] = {"y"};
    rtt_node(g, "Div", "div", in, 2, outs, 1);
    rtt_output(g, "y");
    tc_rt_tensor inputs[2] = {rtt_tensor(dtype, 1, d, a), rtt_tensor(dtype, 1, d, b)};
    tconv_status st = rtt_run(m, inputs, 2, out, err);
    tc_rt_tensor_release(&inputs[0]);
    tc_rt_tensor_release(&inputs[1]);
    tconv_model_free(m);
    return st;
}

static void test_integer_division(void **state) {
    (void)state;
    int32_t a[] = {7, -7, 7, -7, INT32_MIN}, b[] = {2, 2, -2, -2, -1};
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(run_int_div(TCONV_DTYPE_INT32, a, b, 5, &out, &err), TCONV_OK);
    const int32_t *y = out.data;
    assert_int_equal(y[0], 3);
    assert_int_equal(y[1], -3); /* truncation toward zero */
    assert_int_equal(y[2], -3);
    assert_int_equal(y[3], 3);
    assert_int_equal(y[4], INT32_MIN); /* wraps like numpy, no UB */
    tc_rt_tensor_release(&out);

    int64_t c[] = {1, 2}, z[] = {1, 0};
    assert_int_equal(run_int_div(TCONV_DTYPE_INT64, c, z, 2, &out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "division by zero");
}

static void test_integer_add_wraps(void **state) {
    (void)state;
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int64_t d[] = {2};
    tconv_value *in[2] = {rtt_input(g, "a", TCONV_DTYPE_INT64, 1, d),
                          rtt_input(g, "b", TCONV_DTYPE_INT64, 1, d)};
    const char *outs[] = {"y"};
    rtt_node(g, "Add", "add", in, 2, outs, 1);
    rtt_output(g, "y");
    int64_t a[] = {INT64_MAX, 5}, b[] = {1, -7};
    tc_rt_tensor inputs[2] = {rtt_tensor(TCONV_DTYPE_INT64, 1, d, a),
                              rtt_tensor(TCONV_DTYPE_INT64, 1, d, b)};
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(rtt_run(m, inputs, 2, &out, &err), TCONV_OK);
    assert_true(((int64_t *)out.data)[0] == INT64_MIN);
    assert_true(((int64_t *)out.data)[1] == -2);
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&inputs[0]);
    tc_rt_tensor_release(&inputs[1]);
    tconv_model_free(m);
}

static void test_iterator_merges_axes(void **state) {
    (void)state;
    int64_t da[] = {2, 3, 4}, db[] = {3, 4};
    tc_rt_tensor a = rtt_tensor(TCONV_DTYPE_FLOAT, 3, da, NULL);
    tc_rt_tensor b = rtt_tensor(TCONV_DTYPE_FLOAT, 2, db, NULL);
    const tc_rt_tensor *ops[] = {&a, &b};
    tc_bcast bc;
    tc_error err;
    assert_int_equal(tc_bcast_init(&bc, 2, ops, &err), TCONV_OK);
    /* (2, 12): b repeats whole rows of 12 */
    assert_int_equal(bc.rank, 2);
    assert_int_equal(bc.row_length, 12);
    assert_int_equal(bc.n_rows, 2);
    assert_int_equal(bc.inner_stride[0], 1);
    assert_int_equal(bc.inner_stride[1], 1);
    tc_bcast_cursor c;
    tc_bcast_cursor_init(&bc, &c);
    tc_bcast_cursor_next(&bc, &c);
    assert_int_equal(c.offsets[0], 12);
    assert_int_equal(c.offsets[1], 0);
    tc_rt_tensor_release(&a);
    tc_rt_tensor_release(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_rule),
        cmocka_unit_test(test_strides),
        cmocka_unit_test(test_binary_broadcasts),
        cmocka_unit_test(test_where_short_rows),
        cmocka_unit_test(test_incompatible_shapes_error),
        cmocka_unit_test(test_integer_division),
        cmocka_unit_test(test_integer_add_wraps),
        cmocka_unit_test(test_iterator_merges_axes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
