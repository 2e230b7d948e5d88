/* Constant folding in the plan (src/runtime/session/session_constfold.c): steps whose inputs are
 * all constants, and Shapes of statically shaped values, run once when the session is planned. Each
 * case runs the graph folded and as written (options.unfused, what a proof runs) and requires
 * the same results; the kernel-call counts show what was folded. */
#include "rt_test_util.h"

#include <stdio.h>

typedef struct run_result {
    tconv_status status;
    tc_rt_tensor out[3];
    uint64_t kernel_calls;
    size_t constant_bytes; /* after planning */
    char message[sizeof(((tc_error *)0)->message)];
} run_result;

static tc_session *create(tconv_model *m, bool unfused, size_t *constant_bytes) {
    tc_session_options options;
    tc_session_options_init(&options);
    options.unfused = unfused;
    tc_session *s = NULL;
    tc_error err;
    tconv_status st = tc_session_create(m, &options, &s, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    *constant_bytes = stats.constant_bytes;
    return s;
}

static run_result run_on(tc_session *s, const tc_rt_tensor *in) {
    run_result r;
    memset(&r, 0, sizeof r);
    tc_error err;
    r.status = tc_session_run(s, in, 1, r.out, &err);
    if (r.status != TCONV_OK)
        snprintf(r.message, sizeof r.message, "%s", err.message);
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    r.kernel_calls = stats.n_kernel_calls;
    return r;
}

static run_result run_model(tconv_model *m, bool unfused, const tc_rt_tensor *in) {
    size_t constant_bytes;
    tc_session *s = create(m, unfused, &constant_bytes);
    run_result r = run_on(s, in);
    r.constant_bytes = constant_bytes;
    tc_session_free(s);
    return r;
}

static void release(run_result *r, size_t n) {
    for (size_t i = 0; i < n; i++)
        tc_rt_tensor_release(&r->out[i]);
}

static void assert_same_floats(const tc_rt_tensor *got, const tc_rt_tensor *want) {
    rtt_assert_dims(got, want->rank, want->dims);
    rtt_assert_floats(got, want->data, (size_t)want->n_elements);
}

static tc_rt_tensor ramp_input(int rank, const int64_t *dims) {
    tc_rt_tensor t = rtt_tensor(TCONV_DTYPE_FLOAT, rank, dims, NULL);
    float *d = t.data;
    for (int64_t i = 0; i < t.n_elements; i++)
        d[i] = (float)((i * 5) % 7) / 4.0f - 0.75f;
    return t;
}

/* x[2,3]: s = Shape(x); z = ConstantOfShape(s); o = Add(z, b); y = Mul(x, o); w = Sub(x, o);
 * outputs y, w and o (a folded value read by two steps and leaving as a graph output). */
static tconv_model *static_shape_model(void) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t x_dims[2] = {2, 3}, b_dims[1] = {3};
    float b[3] = {0.5f, -2.0f, 3.0f};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 2, x_dims);
    tconv_value *bv = rtt_init(g, "b", TCONV_DTYPE_FLOAT, 1, b_dims, b, sizeof b);
    rtt_node(g, "Shape", "shape", &x, 1, (const char *[]){"s"}, 1);
    rtt_node(g, "ConstantOfShape", "zeros", (tconv_value *[]){rtt_value(g, "s")}, 1,
             (const char *[]){"z"}, 1);
    rtt_node(g, "Add", "bias", (tconv_value *[]){rtt_value(g, "z"), bv}, 2, (const char *[]){"o"},
             1);
    rtt_node(g, "Mul", "scale", (tconv_value *[]){x, rtt_value(g, "o")}, 2, (const char *[]){"y"},
             1);
    rtt_node(g, "Sub", "shift", (tconv_value *[]){x, rtt_value(g, "o")}, 2, (const char *[]){"w"},
             1);
    rtt_output(g, "y");
    rtt_output(g, "w");
    rtt_output(g, "o");
    return m;
}

static void test_folded_equals_unfused(void **state) {
    (void)state;
    tconv_model *m = static_shape_model();
    int64_t dims[2] = {2, 3};
    tc_rt_tensor in = ramp_input(2, dims);
    run_result folded = run_model(m, false, &in), plain = run_model(m, true, &in);
    assert_int_equal(plain.status, TCONV_OK);
    assert_int_equal(folded.status, TCONV_OK);
    assert_int_equal(plain.kernel_calls, 5);
    assert_int_equal(folded.kernel_calls, 2); /* Shape, ConstantOfShape and Add folded */
    assert_true(folded.constant_bytes > plain.constant_bytes);
    for (int i = 0; i < 3; i++)
        assert_same_floats(&folded.out[i], &plain.out[i]);
    /* and the numbers themselves: o = b broadcast over the rows */
    const float *o = folded.out[2].data;
    assert_true(o[0] == 0.5f && o[4] == -2.0f && o[5] == 3.0f);
    /* a second run of the same session gives the same (the constants stay) */
    size_t constant_bytes;
    tc_session *s = create(m, false, &constant_bytes);
    for (int k = 0; k < 2; k++) {
        run_result again = run_on(s, &in);
        assert_int_equal(again.status, TCONV_OK);
        for (int i = 0; i < 3; i++)
            assert_same_floats(&again.out[i], &plain.out[i]);
        release(&again, 3);
    }
    tc_session_free(s);
    release(&folded, 3);
    release(&plain, 3);
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

/* x[N,3] (N symbolic): y = x + (ConstantOfShape(Shape(x)) + 1). Shape(x) is not static, so
 * nothing that depends on it may be folded; two runs with different N both give x + 1. */
static void test_dynamic_shape_not_folded(void **state) {
    (void)state;
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t x_dims[2] = {-1, 3}, one_dims[1] = {1};
    float one = 1.0f;
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 2, x_dims);
    tconv_value *ov = rtt_init(g, "one", TCONV_DTYPE_FLOAT, 1, one_dims, &one, sizeof one);
    rtt_node(g, "Shape", "shape", &x, 1, (const char *[]){"s"}, 1);
    rtt_node(g, "ConstantOfShape", "zeros", (tconv_value *[]){rtt_value(g, "s")}, 1,
             (const char *[]){"z"}, 1);
    rtt_node(g, "Add", "ones", (tconv_value *[]){rtt_value(g, "z"), ov}, 2, (const char *[]){"o"},
             1);
    rtt_node(g, "Add", "y", (tconv_value *[]){x, rtt_value(g, "o")}, 2, (const char *[]){"y"}, 1);
    rtt_output(g, "y");
    size_t constant_bytes;
    tc_session *s = create(m, false, &constant_bytes);
    for (int64_t n = 2; n <= 5; n += 3) {
        int64_t dims[2] = {n, 3};
        tc_rt_tensor in = ramp_input(2, dims);
        run_result r = run_on(s, &in);
        assert_int_equal(r.status, TCONV_OK);
        assert_int_equal(r.kernel_calls, 4);
        rtt_assert_dims(&r.out[0], 2, dims);
        const float *x_data = in.data, *y = r.out[0].data;
        for (int64_t i = 0; i < in.n_elements; i++)
            assert_true(y[i] == x_data[i] + 1.0f);
        release(&r, 1);
        tc_rt_tensor_release(&in);
    }
    tc_session_free(s);
    tconv_model_free(m);
}

/* x[2,3]: t = Relu(x) declared [t_rows,3]; y = Expand(b, Shape(t)) + t. The Shape of an
 * intermediate is folded from its declared shape and stays as a guard that checks it. */
static tconv_model *guard_model(int64_t t_rows) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t x_dims[2] = {2, 3}, b_dims[1] = {3};
    float b[3] = {1.0f, 2.0f, 4.0f};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 2, x_dims);
    tconv_value *bv = rtt_init(g, "b", TCONV_DTYPE_FLOAT, 1, b_dims, b, sizeof b);
    rtt_node(g, "Relu", "relu", &x, 1, (const char *[]){"t"}, 1);
    tc_dim d[2] = {{.kind = TCONV_DIM_STATIC, .value = t_rows},
                   {.kind = TCONV_DIM_STATIC, .value = 3}};
    tc_error err;
    assert_int_equal(tc_value_set_tensor_type(rtt_value(g, "t"), TCONV_DTYPE_FLOAT, 2, d, &err),
                     TCONV_OK);
    rtt_node(g, "Shape", "shape_of_t", (tconv_value *[]){rtt_value(g, "t")}, 1,
             (const char *[]){"s"}, 1);
    rtt_node(g, "Expand", "expand", (tconv_value *[]){bv, rtt_value(g, "s")}, 2,
             (const char *[]){"e"}, 1);
    rtt_node(g, "Add", "sum", (tconv_value *[]){rtt_value(g, "e"), rtt_value(g, "t")}, 2,
             (const char *[]){"y"}, 1);
    rtt_output(g, "y");
    return m;
}

static void test_shape_of_intermediate_guarded(void **state) {
    (void)state;
    int64_t dims[2] = {2, 3};
    tc_rt_tensor in = ramp_input(2, dims);
    tconv_model *m = guard_model(2);
    run_result folded = run_model(m, false, &in), plain = run_model(m, true, &in);
    assert_int_equal(folded.status, TCONV_OK);
    assert_int_equal(plain.status, TCONV_OK);
    assert_int_equal(plain.kernel_calls, 4);
    assert_int_equal(folded.kernel_calls, 3); /* Relu, the Shape guard, Add: Expand folded */
    assert_same_floats(&folded.out[0], &plain.out[0]);
    release(&folded, 1);
    release(&plain, 1);
    tconv_model_free(m);
    /* a declared shape that does not hold: an error naming the Shape node, not a wrong result */
    m = guard_model(4);
    folded = run_model(m, false, &in);
    assert_int_equal(folded.status, TCONV_ERR_INVALID);
    rtt_assert_contains(folded.message, "shape_of_t");
    rtt_assert_contains(folded.message, "[2,3]");
    tconv_model_free(m);
    tc_rt_tensor_release(&in);
}

/* A node of constant inputs whose kernel fails (Reshape of 6 values to 4) is not folded: the
 * session plans, and the run reports the node exactly as the unfolded run does. */
static void test_failing_node_reports_node(void **state) {
    (void)state;
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t x_dims[1] = {4}, c_dims[1] = {6};
    float c[6] = {1, 2, 3, 4, 5, 6};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, x_dims);
    tconv_value *cv = rtt_init(g, "c", TCONV_DTYPE_FLOAT, 1, c_dims, c, sizeof c);
    tconv_value *shape = rtt_init_i64(g, "shape", 1, (int64_t[]){4});
    rtt_node(g, "Reshape", "bad_reshape", (tconv_value *[]){cv, shape}, 2, (const char *[]){"r"},
             1);
    rtt_node(g, "Add", "sum", (tconv_value *[]){x, rtt_value(g, "r")}, 2, (const char *[]){"y"}, 1);
    rtt_output(g, "y");
    tc_rt_tensor in = ramp_input(1, x_dims);
    run_result folded = run_model(m, false, &in), plain = run_model(m, true, &in);
    assert_int_not_equal(folded.status, TCONV_OK);
    assert_int_equal(folded.status, plain.status);
    rtt_assert_contains(folded.message, "bad_reshape");
    assert_string_equal(folded.message, plain.message);
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

/* ConstantOfShape of 32 GiB: not made when the session is planned (its constant bytes stay
 * small); the run meets the memory limit as it would unfolded. A 16 MiB one, within the limit
 * but past the folding bound, is not folded either and runs as written. */
static void test_huge_constant_not_materialised(void **state) {
    (void)state;
    int64_t sizes[2][2] = {{(int64_t)1 << 17, (int64_t)1 << 16}, {(int64_t)1 << 12, 1 << 10}};
    for (int k = 0; k < 2; k++) {
        tconv_model *m = rtt_model(13);
        tconv_graph *g = m->graph;
        int64_t x_dims[1] = {1};
        tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 1, x_dims);
        tconv_value *shape = rtt_init_i64(g, "shape", 2, sizes[k]);
        rtt_node(g, "ConstantOfShape", "huge", &shape, 1, (const char *[]){"z"}, 1);
        rtt_node(g, "Add", "sum", (tconv_value *[]){x, rtt_value(g, "z")}, 2, (const char *[]){"y"},
                 1);
        rtt_output(g, "y");
        tc_rt_tensor in = ramp_input(1, x_dims);
        run_result r = run_model(m, false, &in);
        assert_true(r.constant_bytes < 4096);
        if (k == 0) {
            assert_int_equal(r.status, TCONV_ERR_LIMIT);
            rtt_assert_contains(r.message, "huge");
        } else {
            assert_int_equal(r.status, TCONV_OK);
            assert_int_equal(r.kernel_calls, 2);
            rtt_assert_dims(&r.out[0], 2, sizes[k]);
            release(&r, 1);
        }
        tc_rt_tensor_release(&in);
        tconv_model_free(m);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folded_equals_unfused),
        cmocka_unit_test(test_dynamic_shape_not_folded),
        cmocka_unit_test(test_shape_of_intermediate_guarded),
        cmocka_unit_test(test_failing_node_reports_node),
        cmocka_unit_test(test_huge_constant_not_materialised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
