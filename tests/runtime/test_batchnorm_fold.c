/* BatchNormalization folding in the executor (src/runtime/session/session_fold.c): a Conv or
 * ConvTranspose followed by an inference BatchNormalization with constant parameters runs as
 * one kernel call with folded weights and bias. Each case builds one graph and runs it in a
 * proof session (unfused: the graph as written, op by op) and in a normal one, and requires the
 * results to agree within float rounding; the kernel-call counts show which ran folded. The
 * cases that must not fold (a second reader of the convolution's output, a graph output, a
 * parameter that is not a constant) must give the same number of calls both ways. */
#include "rt_test_util.h"

#include <math.h>

#include "runtime/kernels/kernel_util.h"

#define C_IN 4
#define C_OUT 6
#define SIDE 4 /* X's spatial size on every axis */
#define K 3    /* kernel size on every axis */

typedef struct fold_spec {
    bool transpose;
    int spatial; /* 1 to 3 */
    int64_t group;
    bool bias;
    bool expose;        /* the convolution's output is a graph output too */
    bool second_reader; /* a Relu reads the convolution's output too */
    bool mean_input;    /* the BatchNormalization's mean is a graph input */
    bool slice;         /* ConvTranspose -> Slice (crop) -> BatchNormalization */
    bool pad_add;       /* ... -> Pad -> Add (bias) -> BatchNormalization, no B */
    bool x_computed;    /* X comes from a node (Relu), its dtype undeclared */
    bool x_double;      /* X comes from a Cast to double: not W's type, an invalid graph */
    bool relu_after;    /* the BatchNormalization's result goes through a Relu */
    tconv_dtype dtype;  /* FLOAT or FLOAT16 */
} fold_spec;

static float value_at(int i, int mul, int mod, float scale, float shift) {
    return (float)((i * mul) % mod) * scale + shift;
}

/* A constant of n values in the spec's dtype. */
static tconv_value *init_values(tconv_graph *g, const char *name, tconv_dtype dtype, int rank,
                                const int64_t *dims, const float *v, size_t n) {
    if (dtype == TCONV_DTYPE_FLOAT)
        return rtt_init(g, name, dtype, rank, dims, v, n * sizeof *v);
    uint16_t h[4096];
    assert_true(n <= 4096);
    for (size_t i = 0; i < n; i++)
        h[i] = tc_float_to_half(v[i]);
    return rtt_init(g, name, dtype, rank, dims, h, n * sizeof *h);
}

static void x_dims(const fold_spec *c, int64_t *dims) {
    dims[0] = 2;
    dims[1] = C_IN;
    for (int i = 0; i < c->spatial; i++)
        dims[2 + i] = SIDE + i;
}

static tconv_model *fold_model(const fold_spec *c) {
    tconv_model *m = rtt_model(14);
    tconv_graph *g = m->graph;
    int rank = c->spatial + 2;
    int64_t xd[5], wd[5], cd[1] = {C_OUT};
    x_dims(c, xd);
    wd[0] = c->transpose ? C_IN : C_OUT;
    wd[1] = c->transpose ? C_OUT / c->group : C_IN / c->group;
    size_t n_w = (size_t)(wd[0] * wd[1]);
    for (int i = 0; i < c->spatial; i++) {
        wd[2 + i] = K;
        n_w *= K;
    }
    float w[2048], b[C_OUT], prm[4][C_OUT];
    for (size_t i = 0; i < n_w; i++)
        w[i] = value_at((int)i, 7, 13, 0.125f, -0.75f);
    for (int i = 0; i < C_OUT; i++) {
        b[i] = value_at(i, 3, 5, 0.25f, -0.5f);
        prm[0][i] = value_at(i, 5, 7, 0.375f, 0.5f);   /* scale */
        prm[1][i] = value_at(i, 2, 5, 0.3f, -0.6f);    /* B */
        prm[2][i] = value_at(i, 4, 7, 0.2f, -0.4f);    /* mean */
        prm[3][i] = value_at(i, 3, 7, 0.25f, 0.0625f); /* var */
    }
    tconv_value *x = rtt_input(g, "x", c->dtype, rank, xd);
    if (c->x_computed)
        rtt_node(g, "Relu", "pre", (tconv_value *[]){x}, 1, (const char *[]){"x_relu"}, 1);
    if (c->x_computed)
        x = rtt_value(g, "x_relu");
    if (c->x_double) {
        tconv_node *cast =
            rtt_node(g, "Cast", "to_double", (tconv_value *[]){x}, 1, (const char *[]){"x64"}, 1);
        tc_error cast_err;
        assert_int_equal(tc_node_set_attr_int(cast, "to", TCONV_DTYPE_DOUBLE, &cast_err), TCONV_OK);
        x = rtt_value(g, "x64");
    }
    tconv_value *conv_in[3] = {x, init_values(g, "w", c->dtype, rank, wd, w, n_w),
                               c->bias ? init_values(g, "b", c->dtype, 1, cd, b, C_OUT) : NULL};
    tconv_node *conv = rtt_node(g, c->transpose ? "ConvTranspose" : "Conv", "conv", conv_in,
                                c->bias ? 3 : 2, (const char *[]){"t"}, 1);
    tc_error err;
    int64_t strides[3] = {2, 2, 2};
    assert_int_equal(tc_node_set_attr_ints(conv, "strides", strides, (size_t)c->spatial, &err),
                     TCONV_OK);
    assert_int_equal(tc_node_set_attr_int(conv, "group", c->group, &err), TCONV_OK);
    const char *current = "t";
    if (c->slice) {
        int64_t starts[3] = {1, 1, 1}, ends[3] = {-1, -1, -2}, axes[3] = {2, 3, 4};
        size_t n = (size_t)c->spatial;
        tconv_value *in[4] = {rtt_value(g, current), rtt_init_i64(g, "starts", n, starts),
                              rtt_init_i64(g, "ends", n, ends), rtt_init_i64(g, "axes", n, axes)};
        rtt_node(g, "Slice", "crop", in, 4, (const char *[]){"u"}, 1);
        current = "u";
    }
    if (c->pad_add) {
        int64_t pads[10] = {0};
        pads[rank - 1] = 1;     /* last axis, begin */
        pads[2 * rank - 1] = 2; /* last axis, end */
        pads[rank + 2] = 1;     /* first spatial axis, end */
        int64_t bd[4] = {C_OUT, 1, 1, 1};
        tconv_value *pin[2] = {rtt_value(g, current),
                               rtt_init_i64(g, "pads", 2 * (size_t)rank, pads)};
        rtt_node(g, "Pad", "extend", pin, 2, (const char *[]){"v"}, 1);
        tconv_value *ain[2] = {rtt_value(g, "v"),
                               rtt_init(g, "bias", TCONV_DTYPE_FLOAT, rank - 1, bd, b, sizeof b)};
        rtt_node(g, "Add", "add_bias", ain, 2, (const char *[]){"w_out"}, 1);
        current = "w_out";
    }
    static const char *const names[4] = {"scale", "beta", "mean", "var"};
    tconv_value *bn_in[5] = {rtt_value(g, current)};
    for (int k = 0; k < 4; k++) {
        bn_in[k + 1] = k == 2 && c->mean_input
                           ? rtt_input(g, names[k], c->dtype, 1, cd)
                           : init_values(g, names[k], c->dtype, 1, cd, prm[k], C_OUT);
    }
    tconv_node *bn = rtt_node(g, "BatchNormalization", "bn", bn_in, 5,
                              (const char *[]){c->relu_after ? "bn_out" : "y"}, 1);
    assert_int_equal(tc_node_set_attr_float(bn, "epsilon", 1e-3f, &err), TCONV_OK);
    if (c->relu_after)
        rtt_node(g, "Relu", "act", (tconv_value *[]){rtt_value(g, "bn_out")}, 1,
                 (const char *[]){"y"}, 1);
    rtt_output(g, "y");
    if (c->expose)
        rtt_output(g, "t");
    if (c->second_reader) {
        rtt_node(g, "Relu", "relu", (tconv_value *[]){rtt_value(g, "t")}, 1, (const char *[]){"r"},
                 1);
        rtt_output(g, "r");
    }
    return m;
}

/* Runs the model once; returns output 0 as float (caller releases) and the kernel calls made. */
static tc_rt_tensor run_fold(const fold_spec *c, tconv_model *m, bool unfused,
                             uint64_t *kernel_calls) {
    int64_t xd[5], cd[1] = {C_OUT};
    x_dims(c, xd);
    tc_rt_tensor in[2];
    size_t n_in = c->mean_input ? 2 : 1;
    assert_int_equal(tc_rt_tensor_alloc(&in[0], c->dtype, c->spatial + 2, xd, &(tc_error){0}),
                     TCONV_OK);
    for (int64_t i = 0; i < in[0].n_elements; i++) {
        float v = value_at((int)i, 5, 11, 0.25f, -1.25f);
        if (c->dtype == TCONV_DTYPE_FLOAT)
            ((float *)in[0].data)[i] = v;
        else
            ((uint16_t *)in[0].data)[i] = tc_float_to_half(v);
    }
    if (c->mean_input) {
        assert_int_equal(tc_rt_tensor_alloc(&in[1], c->dtype, 1, cd, &(tc_error){0}), TCONV_OK);
        for (int i = 0; i < C_OUT; i++) {
            float v = value_at(i, 4, 7, 0.2f, -0.4f);
            if (c->dtype == TCONV_DTYPE_FLOAT)
                ((float *)in[1].data)[i] = v;
            else
                ((uint16_t *)in[1].data)[i] = tc_float_to_half(v);
        }
    }
    tc_session_options o;
    tc_session_options_init(&o);
    o.unfused = unfused;
    o.n_threads = 1;
    tc_rt_tensor out[3];
    memset(out, 0, sizeof out);
    *kernel_calls = rtt_run_counted(m, &o, in, n_in, out);
    for (size_t i = 0; i < n_in; i++)
        tc_rt_tensor_release(&in[i]);
    for (size_t i = 1; i < 3; i++)
        tc_rt_tensor_release(&out[i]);
    if (out[0].dtype == TCONV_DTYPE_FLOAT)
        return out[0];
    tc_rt_tensor wide;
    assert_int_equal(
        tc_rt_tensor_alloc(&wide, TCONV_DTYPE_FLOAT, out[0].rank, out[0].dims, &(tc_error){0}),
        TCONV_OK);
    for (int64_t i = 0; i < wide.n_elements; i++)
        ((float *)wide.data)[i] = tc_half_to_float(((const uint16_t *)out[0].data)[i]);
    tc_rt_tensor_release(&out[0]);
    return wide;
}

/* Runs the spec unfused and fused: equal within `tol` (relative, at least 1 absolute), and the
 * fused run made `fused_calls` kernel calls (the unfused one made `unfused_calls`). */
static void check_fold(const fold_spec *c, uint64_t unfused_calls, uint64_t fused_calls,
                       double tol) {
    tconv_model *m = fold_model(c);
    uint64_t plain_calls, calls;
    tc_rt_tensor want = run_fold(c, m, true, &plain_calls);
    tc_rt_tensor got = run_fold(c, m, false, &calls);
    assert_int_equal(plain_calls, unfused_calls);
    assert_int_equal(calls, fused_calls);
    rtt_assert_dims(&got, want.rank, want.dims);
    const float *g = got.data, *w = want.data;
    double largest = 0.0;
    for (int64_t i = 0; i < want.n_elements; i++)
        largest = fmax(largest, fabs((double)w[i]));
    assert_true(largest > 0.5); /* real numbers, not zeros */
    for (int64_t i = 0; i < want.n_elements; i++) {
        double d = fabs((double)g[i] - (double)w[i]);
        if (d > tol * fmax(1.0, fabs((double)w[i]))) {
            print_error("element %lld: folded %.9g, as written %.9g\n", (long long)i, (double)g[i],
                        (double)w[i]);
            fail();
        }
    }
    tc_rt_tensor_release(&got);
    tc_rt_tensor_release(&want);
    tconv_model_free(m);
}

#define F32_TOL 2e-6

static void test_conv_2d(void **state) {
    (void)state;
    for (int bias = 0; bias < 2; bias++) {
        fold_spec c = {.spatial = 2, .group = 1, .bias = bias, .dtype = TCONV_DTYPE_FLOAT};
        check_fold(&c, 2, 1, F32_TOL);
    }
}

/* The Relu after a folded BatchNormalization fuses into the convolution too (session_fuse.c
 * follows the folded step's forwarding): one kernel call instead of three. */
static void test_relu_after_fold(void **state) {
    (void)state;
    for (int transpose = 0; transpose < 2; transpose++) {
        fold_spec c = {.transpose = transpose,
                       .spatial = 2,
                       .group = 1,
                       .bias = true,
                       .relu_after = true,
                       .dtype = TCONV_DTYPE_FLOAT};
        check_fold(&c, 3, 1, F32_TOL);
    }
}

static void test_conv_transpose_2d(void **state) {
    (void)state;
    for (int bias = 0; bias < 2; bias++) {
        fold_spec c = {
            .transpose = true, .spatial = 2, .group = 1, .bias = bias, .dtype = TCONV_DTYPE_FLOAT};
        check_fold(&c, 2, 1, F32_TOL);
    }
}

/* groups > 1: ConvTranspose's output channel is (row / rows per group) * cols + col. */
static void test_groups(void **state) {
    (void)state;
    for (int transpose = 0; transpose < 2; transpose++) {
        for (int bias = 0; bias < 2; bias++) {
            fold_spec c = {.transpose = transpose,
                           .spatial = 2,
                           .group = 2,
                           .bias = bias,
                           .dtype = TCONV_DTYPE_FLOAT};
            check_fold(&c, 2, 1, F32_TOL);
        }
    }
}

/* X of no declared dtype (computed by a node before the convolution, as exporters leave it),
 * float and float16. */
static void test_x_computed(void **state) {
    (void)state;
    for (int half = 0; half < 2; half++) {
        fold_spec c = {.transpose = true,
                       .spatial = 2,
                       .group = 2,
                       .bias = true,
                       .x_computed = true,
                       .dtype = half ? TCONV_DTYPE_FLOAT16 : TCONV_DTYPE_FLOAT};
        check_fold(&c, 3, 2, half ? 4e-3 : F32_TOL);
    }
}

/* X of another type than W (an invalid graph whose X type no declaration shows): refused
 * with a message naming both types and the status the graph as written gets. */
static void test_x_type_mismatch(void **state) {
    (void)state;
    fold_spec c = {.spatial = 2, .group = 1, .x_double = true, .dtype = TCONV_DTYPE_FLOAT};
    tconv_model *m = fold_model(&c);
    int64_t xd[4];
    x_dims(&c, xd);
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 4, xd, NULL), y;
    for (int unfused = 0; unfused < 2; unfused++) {
        tc_session_options o;
        tc_session_options_init(&o);
        o.unfused = unfused;
        tc_session *s = NULL;
        tc_error err;
        assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
        tconv_status st = tc_session_run(s, &x, 1, &y, &err);
        assert_int_equal(st, TCONV_ERR_UNSUPPORTED); /* the kernel's status for a dtype */
        if (!unfused)
            rtt_assert_contains(err.message, "X is double but W is float");
        tc_session_free(s);
    }
    tc_rt_tensor_release(&x);
    tconv_model_free(m);
}

static void test_1d_and_3d(void **state) {
    (void)state;
    for (int transpose = 0; transpose < 2; transpose++) {
        for (int spatial = 1; spatial <= 3; spatial += 2) {
            fold_spec c = {.transpose = transpose,
                           .spatial = spatial,
                           .group = 2,
                           .bias = spatial == 3,
                           .dtype = TCONV_DTYPE_FLOAT};
            check_fold(&c, 2, 1, F32_TOL);
        }
    }
}

/* With a crop fused into the ConvTranspose: a Slice alone (B stays an input), and a Slice, a
 * Pad past the computed output and an Add of a bias (the folded bias goes into the crop, and
 * the padded positions come out as BatchNormalization of the bias). */
static void test_after_fused_crop(void **state) {
    (void)state;
    for (int bias = 0; bias < 2; bias++) {
        fold_spec c = {.transpose = true,
                       .spatial = 2,
                       .group = 2,
                       .bias = bias,
                       .slice = true,
                       .dtype = TCONV_DTYPE_FLOAT};
        check_fold(&c, 3, 1, F32_TOL);
    }
    fold_spec c = {.transpose = true,
                   .spatial = 2,
                   .group = 1,
                   .slice = true,
                   .pad_add = true,
                   .dtype = TCONV_DTYPE_FLOAT};
    check_fold(&c, 5, 1, F32_TOL);
    c.slice = false;
    check_fold(&c, 4, 1, F32_TOL);
}

/* float16: folded in float32 and rounded once, within a float16 rounding or two of the graph
 * as written (which rounds after the convolution and after the BatchNormalization). */
static void test_float16(void **state) {
    (void)state;
    for (int transpose = 0; transpose < 2; transpose++) {
        fold_spec c = {.transpose = transpose,
                       .spatial = 2,
                       .group = 2,
                       .bias = true,
                       .dtype = TCONV_DTYPE_FLOAT16};
        check_fold(&c, 2, 1, 4e-3);
    }
}

/* Not folded: the convolution's output read by another node or is a graph output, a
 * parameter that is a graph input. */
static void test_not_folded(void **state) {
    (void)state;
    fold_spec c = {
        .transpose = true, .spatial = 2, .group = 1, .bias = true, .dtype = TCONV_DTYPE_FLOAT};
    c.expose = true;
    check_fold(&c, 2, 2, 0.0);
    c.expose = false;
    c.second_reader = true;
    check_fold(&c, 3, 3, 0.0);
    c.second_reader = false;
    c.mean_input = true;
    check_fold(&c, 2, 2, 0.0);
    c.transpose = false;
    check_fold(&c, 2, 2, 0.0);
}

/* Folded weights are constants of the plan: counted in the session's constant bytes, and the
 * kernel keeps their packing across runs (the constant bytes grow once, at the first run). */
static void test_folded_constants(void **state) {
    (void)state;
    fold_spec c = {
        .transpose = true, .spatial = 2, .group = 1, .bias = true, .dtype = TCONV_DTYPE_FLOAT};
    tconv_model *m = fold_model(&c);
    tc_session *plain = NULL, *folded = NULL;
    tc_session_options o;
    tc_session_options_init(&o);
    o.unfused = true;
    tc_error err;
    assert_int_equal(tc_session_create(m, &o, &plain, &err), TCONV_OK);
    assert_int_equal(tc_session_create(m, NULL, &folded, &err), TCONV_OK);
    tc_session_stats a, b;
    tc_session_get_stats(plain, &a);
    tc_session_get_stats(folded, &b);
    size_t w_bytes = (size_t)C_IN * C_OUT * K * K * sizeof(float), b_bytes = C_OUT * sizeof(float);
    assert_int_equal(b.constant_bytes, a.constant_bytes + w_bytes + b_bytes);
    int64_t xd[4];
    x_dims(&c, xd);
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 4, xd, NULL), y;
    size_t before = b.constant_bytes;
    for (int run = 0; run < 2; run++) {
        assert_int_equal(tc_session_run(folded, &x, 1, &y, &err), TCONV_OK);
        tc_rt_tensor_release(&y);
        tc_session_get_stats(folded, &b);
        if (run == 0)
            before = b.constant_bytes;
        assert_true(b.constant_bytes > a.constant_bytes + w_bytes + b_bytes);
        assert_int_equal(b.constant_bytes, before);
    }
    tc_rt_tensor_release(&x);
    tc_session_free(plain);
    tc_session_free(folded);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_2d),           cmocka_unit_test(test_relu_after_fold),
        cmocka_unit_test(test_conv_transpose_2d), cmocka_unit_test(test_groups),
        cmocka_unit_test(test_1d_and_3d),         cmocka_unit_test(test_x_computed),
        cmocka_unit_test(test_x_type_mismatch),   cmocka_unit_test(test_after_fused_crop),
        cmocka_unit_test(test_float16),           cmocka_unit_test(test_not_folded),
        cmocka_unit_test(test_folded_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
