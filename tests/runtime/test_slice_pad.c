/* Slice and Pad edge cases for each opset form: attribute forms (Slice-1, Pad-2), input forms
 * (Slice-10/13, Pad-11/18/19), negative steps, clamping, INT64_MAX/INT64_MIN ends, negative
 * pads (cropping), reflect with pads larger than the axis, wrap, and the errors. */
#include "rt_test_util.h"

typedef struct one_node {
    tconv_model *model;
    tconv_node *node;
    tconv_value *inputs[6];
    size_t n_inputs;
} one_node;

/* A graph with one float input "x" of the given shape feeding node `op`. */
static void one_node_init(one_node *t, int64_t opset, const char *op, tconv_dtype dtype, int rank,
                          const int64_t *dims) {
    memset(t, 0, sizeof *t);
    t->model = rtt_model(opset);
    t->inputs[t->n_inputs++] = rtt_input(t->model->graph, "x", dtype, rank, dims);
    tc_error err;
    assert_int_equal(tc_node_create(t->model->graph, op, "", "the_node", &t->node, &err), TCONV_OK);
}

static void param_i64(one_node *t, const char *name, size_t n, const int64_t *v) {
    t->inputs[t->n_inputs++] = rtt_init_i64(t->model->graph, name, n, v);
}

static void param_absent(one_node *t) {
    t->inputs[t->n_inputs++] = NULL;
}

static tconv_status one_node_run(one_node *t, const tc_rt_tensor *x, tc_rt_tensor *out,
                                 tc_error *err) {
    tconv_graph *g = t->model->graph;
    for (size_t i = 0; i < t->n_inputs; i++)
        assert_int_equal(tc_node_add_input(t->node, t->inputs[i], err), TCONV_OK);
    assert_int_equal(tc_node_add_output(t->node, rtt_value(g, "y"), err), TCONV_OK);
    tc_graph_append_node(g, t->node);
    rtt_output(g, "y");
    tconv_status st = rtt_run(t->model, x, 1, out, err);
    tconv_model_free(t->model);
    return st;
}

static tc_rt_tensor iota(int rank, const int64_t *dims) {
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, rank, dims, NULL);
    for (int64_t i = 0; i < x.n_elements; i++)
        ((float *)x.data)[i] = (float)i;
    return x;
}

/* ---------------------------------------------------------------- Slice */

static void test_slice_1_attributes(void **state) {
    (void)state;
    int64_t d[] = {3, 4};
    tc_rt_tensor x = iota(2, d), y;
    tc_error err;
    one_node t;
    one_node_init(&t, 9, "Slice", TCONV_DTYPE_FLOAT, 2, d);
    int64_t starts[] = {0, 1}, ends[] = {2, 3};
    tc_node_set_attr_ints(t.node, "starts", starts, 2, &err);
    tc_node_set_attr_ints(t.node, "ends", ends, 2, &err);
    assert_int_equal(one_node_run(&t, &x, &y, &err), TCONV_OK);
    float e1[] = {1, 2, 5, 6};
    rtt_assert_floats(&y, e1, 4);
    tc_rt_tensor_release(&y);

    /* axes given, negative start, end past the axis (clamped) */
    one_node_init(&t, 1, "Slice", TCONV_DTYPE_FLOAT, 2, d);
    int64_t axes[] = {1}, s2[] = {-3}, e2[] = {INT64_MAX};
    tc_node_set_attr_ints(t.node, "axes", axes, 1, &err);
    tc_node_set_attr_ints(t.node, "starts", s2, 1, &err);
    tc_node_set_attr_ints(t.node, "ends", e2, 1, &err);
    assert_int_equal(one_node_run(&t, &x, &y, &err), TCONV_OK);
    int64_t yd[] = {3, 3};
    rtt_assert_dims(&y, 2, yd);
    float e3[] = {1, 2, 3, 5, 6, 7, 9, 10, 11};
    rtt_assert_floats(&y, e3, 9);
    tc_rt_tensor_release(&y);

    /* Slice-1 ignores inputs and needs its attributes */
    one_node_init(&t, 9, "Slice", TCONV_DTYPE_FLOAT, 2, d);
    assert_int_equal(one_node_run(&t, &x, &y, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "Slice-1 needs the attributes");
    tc_rt_tensor_release(&x);
}

static void slice_13(const int64_t *starts, const int64_t *ends, const int64_t *axes,
                     const int64_t *steps, size_t n, int rank, const int64_t *dims, tc_rt_tensor *y,
                     tconv_status expect, tc_error *err) {
    tc_rt_tensor x = iota(rank, dims);
    one_node t;
    one_node_init(&t, 13, "Slice", TCONV_DTYPE_FLOAT, rank, dims);
    param_i64(&t, "starts", n, starts);
    param_i64(&t, "ends", n, ends);
    if (axes)
        param_i64(&t, "axes", n, axes);
    else if (steps)
        param_absent(&t);
    if (steps)
        param_i64(&t, "steps", n, steps);
    assert_int_equal(one_node_run(&t, &x, y, err), expect);
    tc_rt_tensor_release(&x);
}

static void test_slice_negative_steps(void **state) {
    (void)state;
    int64_t d[] = {10};
    tc_rt_tensor y;
    tc_error err;
    float rev[] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    int64_t s1[] = {-1}, e1[] = {INT64_MIN}, st1[] = {-1};
    slice_13(s1, e1, NULL, st1, 1, 1, d, &y, TCONV_OK, &err);
    rtt_assert_floats(&y, rev, 10);
    tc_rt_tensor_release(&y);

    int64_t s2[] = {8}, e2[] = {1}, st2[] = {-3};
    slice_13(s2, e2, NULL, st2, 1, 1, d, &y, TCONV_OK, &err);
    float e2v[] = {8, 5, 2};
    rtt_assert_floats(&y, e2v, 3);
    tc_rt_tensor_release(&y);

    /* start past the end clamps to dim-1, end before the start clamps to -1 */
    int64_t s3[] = {20}, e3[] = {-20}, st3[] = {-1};
    slice_13(s3, e3, NULL, st3, 1, 1, d, &y, TCONV_OK, &err);
    rtt_assert_floats(&y, rev, 10);
    tc_rt_tensor_release(&y);

    /* huge negative step takes one element */
    int64_t s4[] = {5}, e4[] = {INT64_MIN}, st4[] = {INT64_MIN};
    slice_13(s4, e4, NULL, st4, 1, 1, d, &y, TCONV_OK, &err);
    float e4v[] = {5};
    rtt_assert_floats(&y, e4v, 1);
    tc_rt_tensor_release(&y);
}

static void test_slice_clamping_and_empty(void **state) {
    (void)state;
    int64_t d[] = {2, 5};
    tc_rt_tensor y;
    tc_error err;
    int64_t s1[] = {1}, e1[] = {1000}, a1[] = {-1}, st1[] = {2};
    slice_13(s1, e1, a1, st1, 1, 2, d, &y, TCONV_OK, &err);
    int64_t yd1[] = {2, 2};
    rtt_assert_dims(&y, 2, yd1);
    float ev1[] = {1, 3, 6, 8};
    rtt_assert_floats(&y, ev1, 4);
    tc_rt_tensor_release(&y);

    /* start out of bounds: empty axis */
    int64_t s2[] = {7}, e2[] = {INT64_MAX}, a2[] = {1};
    slice_13(s2, e2, a2, NULL, 1, 2, d, &y, TCONV_OK, &err);
    int64_t yd2[] = {2, 0};
    rtt_assert_dims(&y, 2, yd2);
    assert_int_equal(y.n_elements, 0);
    tc_rt_tensor_release(&y);

    /* start after end with a positive step: empty */
    int64_t s3[] = {3}, e3[] = {1};
    slice_13(s3, e3, a2, NULL, 1, 2, d, &y, TCONV_OK, &err);
    assert_int_equal(y.n_elements, 0);
    tc_rt_tensor_release(&y);
}

static void test_slice_errors(void **state) {
    (void)state;
    int64_t d[] = {2, 5};
    tc_rt_tensor y;
    tc_error err;
    int64_t s[] = {0}, e[] = {1}, a[] = {1}, zero[] = {0};
    slice_13(s, e, a, zero, 1, 2, d, &y, TCONV_ERR_INVALID, &err);
    rtt_assert_contains(err.message, "step 0 is 0");
    rtt_assert_contains(err.message, "node 'the_node'");

    int64_t s2[] = {0, 0}, e2[] = {1, 1}, a2[] = {1, -1};
    slice_13(s2, e2, a2, NULL, 2, 2, d, &y, TCONV_ERR_INVALID, &err);
    rtt_assert_contains(err.message, "repeats");

    int64_t a3[] = {2};
    slice_13(s, e, a3, NULL, 1, 2, d, &y, TCONV_ERR_INVALID, &err);
    rtt_assert_contains(err.message, "out of range");
}

/* ---------------------------------------------------------------- Pad */

static void pad_run(int64_t opset, const char *mode, const int64_t *pads, size_t n_pads,
                    const int64_t *axes, size_t n_axes, const float *data, int64_t n,
                    tc_rt_tensor *y, tconv_status expect, tc_error *err) {
    int64_t d[] = {n};
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 1, d, data);
    one_node t;
    one_node_init(&t, opset, "Pad", TCONV_DTYPE_FLOAT, 1, d);
    if (mode)
        tc_node_set_attr_string(t.node, "mode", mode, err);
    if (opset < 11) {
        tc_node_set_attr_ints(t.node, "pads", pads, n_pads, err);
    } else {
        param_i64(&t, "pads", n_pads, pads);
        if (axes) {
            param_absent(&t);
            param_i64(&t, "axes", n_axes, axes);
        }
    }
    assert_int_equal(one_node_run(&t, &x, y, err), expect);
    tc_rt_tensor_release(&x);
}

static void test_pad_2_attributes(void **state) {
    (void)state;
    int64_t d[] = {2, 3};
    tc_rt_tensor x = iota(2, d), y;
    tc_error err;
    one_node t;
    one_node_init(&t, 2, "Pad", TCONV_DTYPE_FLOAT, 2, d);
    int64_t pads[] = {0, 1, 0, 2};
    tc_node_set_attr_ints(t.node, "pads", pads, 4, &err);
    tc_node_set_attr_float(t.node, "value", 9.0f, &err);
    assert_int_equal(one_node_run(&t, &x, &y, &err), TCONV_OK);
    int64_t yd[] = {2, 6};
    rtt_assert_dims(&y, 2, yd);
    float e[] = {9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9, 9};
    rtt_assert_floats(&y, e, 12);
    tc_rt_tensor_release(&y);
    tc_rt_tensor_release(&x);

    float v[] = {1, 2, 3};
    int64_t p2[] = {2, 2};
    pad_run(2, "reflect", p2, 2, NULL, 0, v, 3, &y, TCONV_OK, &err);
    float e2[] = {3, 2, 1, 2, 3, 2, 1};
    rtt_assert_floats(&y, e2, 7);
    tc_rt_tensor_release(&y);

    pad_run(2, "edge", p2, 2, NULL, 0, v, 3, &y, TCONV_OK, &err);
    float e3[] = {1, 1, 1, 2, 3, 3, 3};
    rtt_assert_floats(&y, e3, 7);
    tc_rt_tensor_release(&y);
}

static void test_pad_modes_11_plus(void **state) {
    (void)state;
    float v[] = {1, 2, 3};
    tc_rt_tensor y;
    tc_error err;
    /* reflect with a pad longer than the axis: numpy's repeated reflection */
    int64_t p1[] = {5, 0};
    pad_run(11, "reflect", p1, 2, NULL, 0, v, 3, &y, TCONV_OK, &err);
    float e1[] = {2, 1, 2, 3, 2, 1, 2, 3};
    rtt_assert_floats(&y, e1, 8);
    tc_rt_tensor_release(&y);

    int64_t p2[] = {2, 4};
    pad_run(19, "wrap", p2, 2, NULL, 0, v, 3, &y, TCONV_OK, &err);
    float e2[] = {2, 3, 1, 2, 3, 1, 2, 3, 1};
    rtt_assert_floats(&y, e2, 9);
    tc_rt_tensor_release(&y);

    /* wrap exists from Pad-19 on */
    pad_run(18, "wrap", p2, 2, NULL, 0, v, 3, &y, TCONV_ERR_UNSUPPORTED, &err);
    rtt_assert_contains(err.message, "mode = 'wrap'");

    pad_run(13, "bogus", p2, 2, NULL, 0, v, 3, &y, TCONV_ERR_UNSUPPORTED, &err);
    rtt_assert_contains(err.message, "bogus");

    /* Pad-18 axes input, negative axis */
    int64_t p3[] = {1, 1}, axes[] = {-1};
    pad_run(18, NULL, p3, 2, axes, 1, v, 3, &y, TCONV_OK, &err);
    float e3[] = {0, 1, 2, 3, 0};
    rtt_assert_floats(&y, e3, 5);
    tc_rt_tensor_release(&y);

    /* axes input before Pad-18 is an error, not silently ignored */
    pad_run(13, NULL, p3, 2, axes, 1, v, 3, &y, TCONV_ERR_INVALID, &err);
    rtt_assert_contains(err.message, "Pad-18");
}

static void test_pad_negative_pads_crop(void **state) {
    (void)state;
    float v[] = {1, 2, 3, 4, 5};
    tc_rt_tensor y;
    tc_error err;
    int64_t p[] = {-1, 2};
    pad_run(11, "constant", p, 2, NULL, 0, v, 5, &y, TCONV_OK, &err);
    float e1[] = {2, 3, 4, 5, 0, 0};
    rtt_assert_floats(&y, e1, 6);
    tc_rt_tensor_release(&y);

    pad_run(11, "edge", p, 2, NULL, 0, v, 5, &y, TCONV_OK, &err);
    float e2[] = {2, 3, 4, 5, 5, 5};
    rtt_assert_floats(&y, e2, 6);
    tc_rt_tensor_release(&y);

    pad_run(11, "reflect", p, 2, NULL, 0, v, 5, &y, TCONV_OK, &err);
    float e3[] = {2, 3, 4, 5, 4, 3};
    rtt_assert_floats(&y, e3, 6);
    tc_rt_tensor_release(&y);

    int64_t crop[] = {-2, -2};
    pad_run(2, NULL, crop, 2, NULL, 0, v, 5, &y, TCONV_OK, &err);
    float e4[] = {3};
    rtt_assert_floats(&y, e4, 1);
    tc_rt_tensor_release(&y);

    int64_t too_much[] = {-3, -3};
    pad_run(11, NULL, too_much, 2, NULL, 0, v, 5, &y, TCONV_ERR_INVALID, &err);
    rtt_assert_contains(err.message, "negative");

    int64_t bad_len[] = {1, 1, 1};
    pad_run(11, NULL, bad_len, 3, NULL, 0, v, 5, &y, TCONV_ERR_INVALID, &err);
    rtt_assert_contains(err.message, "pads has 3 values");
}

static void test_pad_int32_constant_value(void **state) {
    (void)state;
    int64_t d[] = {2};
    int32_t data[] = {7, 8};
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_INT32, 1, d, data), y;
    tc_error err;
    one_node t;
    one_node_init(&t, 25, "Pad", TCONV_DTYPE_INT32, 1, d);
    int64_t pads[] = {1, 1};
    param_i64(&t, "pads", 2, pads);
    int32_t cv = -5;
    t.inputs[t.n_inputs++] = rtt_init(t.model->graph, "cv", TCONV_DTYPE_INT32, 0, NULL, &cv, 4);
    assert_int_equal(one_node_run(&t, &x, &y, &err), TCONV_OK);
    assert_int_equal(y.dtype, TCONV_DTYPE_INT32);
    const int32_t *o = y.data;
    assert_int_equal(o[0], -5);
    assert_int_equal(o[1], 7);
    assert_int_equal(o[2], 8);
    assert_int_equal(o[3], -5);
    tc_rt_tensor_release(&y);
    tc_rt_tensor_release(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_1_attributes),
        cmocka_unit_test(test_slice_negative_steps),
        cmocka_unit_test(test_slice_clamping_and_empty),
        cmocka_unit_test(test_slice_errors),
        cmocka_unit_test(test_pad_2_attributes),
        cmocka_unit_test(test_pad_modes_11_plus),
        cmocka_unit_test(test_pad_negative_pads_crop),
        cmocka_unit_test(test_pad_int32_constant_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
