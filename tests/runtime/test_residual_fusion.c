/* Residual fusion in the executor (src/runtime/session/session_fuse.c): a Conv whose float32
 * result (after a folded BatchNormalization) only an Add reads, the Add's other input of the same
 * static declared shape and computed before the Conv, adds it in its own epilogue, then the
 * activation after the Add if one follows; the Add's and the activation's steps only move the
 * result. Each case runs the graph fused and as written (an unfused session, as proofs run) and
 * requires the same bits; the kernel-call counts show which ran fused. The shapes reach every
 * Conv path (X read in place or the padded planes, im2col, few positions, direct 1x1, grouped,
 * depthwise), with the detected instruction sets and without (the portable paths), at 1 and 3
 * threads; the cases that must not fuse are checked the same way, and a run whose residual
 * breaks the declared shapes is refused with a message. */
#include <math.h>

#include "rt_test_util.h"
#include "runtime/compute/cpu_features.h"

#define C_IN 4
#define H 7
#define W_ 9

typedef struct res_spec {
    int64_t c_out, k, stride, pad, group;
    bool bias;
    bool batchnorm;       /* a BatchNormalization between the Conv and the Add (folded) */
    bool conv_second;     /* Add(skip, conv) instead of Add(conv, skip) */
    bool relu;            /* a Relu after the Add */
    bool skip_after_conv; /* the skip value computed by a node after the Conv */
    bool skip_broadcast;  /* the skip is [1, c_out, 1, 1]: a broadcasting Add */
    bool conv_read_twice; /* a second node reads the Conv's result */
    bool undeclared;      /* the Conv's result has no declared type */
    bool lie;             /* the skip's declared shape is the Conv's, its actual one [1,c,1,1] */
    int threads;
} res_spec;

static void fill(float *v, int64_t n, int mul, int mod, float scale) {
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((i * mul) % mod) * scale - 0.5f * (float)mod * scale;
}

static int64_t out_size(const res_spec *c, int64_t in) {
    return (in + 2 * c->pad - c->k) / c->stride + 1;
}

static void declare(tconv_value *v, int rank, const int64_t *dims) {
    tc_dim d[4];
    memset(d, 0, sizeof d);
    for (int i = 0; i < rank; i++) {
        d[i].kind = TCONV_DIM_STATIC;
        d[i].value = dims[i];
    }
    tc_error err;
    assert_int_equal(tc_value_set_tensor_type(v, TCONV_DTYPE_FLOAT, rank, d, &err), TCONV_OK);
}

/* x -> Conv [-> BatchNormalization] -> "r"; Add(r, skip) -> "s" [-> Relu -> "y"]. The skip is a
 * graph input ("skip", the Conv's output shape, or [1, c_out, 1, 1]), or Neg of it computed
 * after the Conv. */
static tconv_model *res_model(const res_spec *c) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    tc_error err;
    int64_t x_dims[4] = {1, C_IN, H, W_};
    int64_t y_dims[4] = {1, c->c_out, out_size(c, H), out_size(c, W_)};
    int64_t skip_dims[4] = {1, c->c_out, c->skip_broadcast ? 1 : y_dims[2],
                            c->skip_broadcast ? 1 : y_dims[3]};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, x_dims);
    tconv_value *skip_in = c->lie ? rtt_input(g, "skip_in", TCONV_DTYPE_FLOAT, 4, x_dims)
                                  : rtt_input(g, "skip_in", TCONV_DTYPE_FLOAT, 4, skip_dims);
    if (c->lie) { /* before the Conv: [1, C, 1, 1], declared of the Conv's output shape */
        tconv_node *mean_node = rtt_node(g, "ReduceMean", "skip", (tconv_value *[]){skip_in}, 1,
                                         (const char *[]){"skip"}, 1);
        assert_int_equal(tc_node_set_attr_ints(mean_node, "axes", (int64_t[]){2, 3}, 2, &err),
                         TCONV_OK);
        declare(rtt_value(g, "skip"), 4, y_dims);
    }
    int64_t cin_g = C_IN / c->group, n_w = c->c_out * cin_g * c->k * c->k;
    int64_t w_dims[4] = {c->c_out, cin_g, c->k, c->k}, b_dims[1] = {c->c_out};
    float w[1024], b[32], scale[32], mean[32], var[32];
    fill(w, n_w, 5, 13, 0.03125f);
    fill(b, c->c_out, 3, 7, 0.125f);
    tconv_value *in[3] = {
        x, rtt_init(g, "w", TCONV_DTYPE_FLOAT, 4, w_dims, w, (size_t)n_w * 4),
        c->bias ? rtt_init(g, "b", TCONV_DTYPE_FLOAT, 1, b_dims, b, (size_t)c->c_out * 4) : NULL};
    const char *conv_out = c->batchnorm ? "t" : "r";
    tconv_node *conv =
        rtt_node(g, "Conv", "conv", in, c->bias ? 3 : 2, (const char *[]){conv_out}, 1);
    assert_int_equal(
        tc_node_set_attr_ints(conv, "strides", (int64_t[]){c->stride, c->stride}, 2, &err),
        TCONV_OK);
    assert_int_equal(
        tc_node_set_attr_ints(conv, "pads", (int64_t[]){c->pad, c->pad, c->pad, c->pad}, 4, &err),
        TCONV_OK);
    assert_int_equal(tc_node_set_attr_int(conv, "group", c->group, &err), TCONV_OK);
    if (c->batchnorm) {
        fill(scale, c->c_out, 3, 5, 0.25f);
        fill(mean, c->c_out, 2, 3, 0.5f);
        for (int64_t i = 0; i < c->c_out; i++)
            var[i] = 0.5f + 0.125f * (float)i;
        tconv_value *bn_in[5] = {
            rtt_value(g, "t"),
            rtt_init(g, "scale", TCONV_DTYPE_FLOAT, 1, b_dims, scale, (size_t)c->c_out * 4),
            rtt_init(g, "shift", TCONV_DTYPE_FLOAT, 1, b_dims, b, (size_t)c->c_out * 4),
            rtt_init(g, "mean", TCONV_DTYPE_FLOAT, 1, b_dims, mean, (size_t)c->c_out * 4),
            rtt_init(g, "var", TCONV_DTYPE_FLOAT, 1, b_dims, var, (size_t)c->c_out * 4)};
        rtt_node(g, "BatchNormalization", "bn", bn_in, 5, (const char *[]){"r"}, 1);
    }
    if (!c->undeclared)
        declare(rtt_value(g, "r"), 4, y_dims);
    const char *skip = c->lie ? "skip" : "skip_in";
    if (c->skip_after_conv) {
        rtt_node(g, "Neg", "skip", (tconv_value *[]){skip_in}, 1, (const char *[]){"skip"}, 1);
        declare(rtt_value(g, "skip"), 4, skip_dims);
        skip = "skip";
    }
    tconv_value *r = rtt_value(g, "r"), *s = rtt_value(g, skip);
    tconv_value *add_in[2] = {c->conv_second ? s : r, c->conv_second ? r : s};
    rtt_node(g, "Add", "add", add_in, 2, (const char *[]){"s"}, 1);
    if (c->relu) {
        rtt_node(g, "Relu", "relu", (tconv_value *[]){rtt_value(g, "s")}, 1, (const char *[]){"y"},
                 1);
        rtt_output(g, "y");
    } else {
        rtt_output(g, "s");
    }
    if (c->conv_read_twice) {
        rtt_node(g, "Neg", "other", (tconv_value *[]){rtt_value(g, "r")}, 1, (const char *[]){"z"},
                 1);
        rtt_output(g, "z");
    }
    return m;
}

static void res_inputs(const res_spec *c, tc_rt_tensor *in) {
    int64_t x_dims[4] = {1, C_IN, H, W_};
    int64_t skip_dims[4] = {1, c->c_out, c->skip_broadcast ? 1 : out_size(c, H),
                            c->skip_broadcast ? 1 : out_size(c, W_)};
    float x[C_IN * H * W_], skip[32 * H * W_];
    fill(x, C_IN * H * W_, 7, 17, 0.25f);
    fill(skip, 32 * H * W_, 11, 19, 0.0625f);
    in[0] = rtt_tensor(TCONV_DTYPE_FLOAT, 4, x_dims, x);
    in[1] = c->lie ? rtt_tensor(TCONV_DTYPE_FLOAT, 4, x_dims, skip)
                   : rtt_tensor(TCONV_DTYPE_FLOAT, 4, skip_dims, skip);
}

/* Runs the model; returns output 0 and the kernel calls made. */
static tc_rt_tensor run_res(tconv_model *m, const res_spec *c, bool unfused, uint64_t *calls) {
    tc_rt_tensor in[2], out[2];
    res_inputs(c, in);
    memset(out, 0, sizeof out);
    tc_session_options opts;
    tc_session_options_init(&opts);
    opts.n_threads = c->threads > 0 ? c->threads : 1;
    opts.unfused = unfused;
    *calls = rtt_run_counted(m, &opts, in, 2, out);
    tc_rt_tensor_release(&in[0]);
    tc_rt_tensor_release(&in[1]);
    tc_rt_tensor_release(&out[1]);
    return out[0];
}

/* Fused (when `fuses`: the Add and the Relu do not run) and unfused, same bits. */
static void check(const res_spec *c, bool fuses) {
    tconv_model *m = res_model(c);
    uint64_t fused_calls, plain_calls;
    tc_rt_tensor got = run_res(m, c, false, &fused_calls);
    tc_rt_tensor want = run_res(m, c, true, &plain_calls);
    uint64_t nodes = 2 + c->batchnorm + c->relu + c->skip_after_conv + c->conv_read_twice;
    assert_int_equal(plain_calls, nodes);
    /* a folded BatchNormalization only moves the result, fused or not */
    uint64_t moved = c->batchnorm + (fuses ? 1 + c->relu : 0);
    assert_int_equal(fused_calls, nodes - moved);
    rtt_assert_dims(&got, want.rank, want.dims);
    assert_int_equal(got.nbytes, want.nbytes);
    /* the residual and the Relu add no rounding of their own; a folded BatchNormalization rounds
     * differently from the node (test_batchnorm_fold.c) */
    if (c->batchnorm) {
        for (int64_t i = 0; i < got.n_elements; i++)
            assert_true(fabsf(((const float *)got.data)[i] - ((const float *)want.data)[i]) <=
                        1e-5f * (1.0f + fabsf(((const float *)want.data)[i])));
    } else {
        assert_memory_equal(got.data, want.data, want.nbytes);
    }
    const float *v = got.data; /* not all one value (a Relu of all negatives would be) */
    bool varied = false;
    for (int64_t i = 1; i < got.n_elements; i++)
        varied = varied || v[i] != v[0];
    assert_true(varied);
    tc_rt_tensor_release(&got);
    tc_rt_tensor_release(&want);
    tconv_model_free(m);
}

static res_spec spec(int64_t c_out, int64_t k, int64_t stride, int64_t pad, int64_t group) {
    res_spec c = {
        .c_out = c_out, .k = k, .stride = stride, .pad = pad, .group = group, .bias = true};
    return c;
}

/* Every Conv path, each with and without bias, BatchNormalization, Relu, either Add order, at 1
 * and 3 threads, with the detected instruction sets and with none. */
static void test_fused_paths(void **state) {
    (void)state;
    const res_spec paths[] = {
        spec(4, 3, 1, 1, 1),  /* same shape as X: X in place (AVX-512) or padded planes */
        spec(6, 3, 2, 0, 1),  /* stride 2 */
        spec(20, 3, 2, 1, 1), /* few positions: 20 channels on 4x5 */
        spec(12, 1, 1, 0, 1), /* direct 1x1 */
        spec(6, 3, 1, 1, 2),  /* grouped */
        spec(8, 3, 1, 1, 4),  /* depthwise, channel multiplier 2 */
    };
    for (int portable = 0; portable <= 1; portable++) {
        if (portable)
            tc_cpu_features_override(0);
        for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
            for (int form = 0; form < 16; form++) {
                res_spec c = paths[p];
                c.bias = form & 1;
                c.batchnorm = form & 2;
                c.relu = form & 4;
                c.conv_second = form & 8;
                c.threads = form % 3 == 0 ? 3 : 1;
                check(&c, true);
            }
        }
        tc_cpu_features_restore();
    }
}

/* Not fused: the skip computed after the Conv, a broadcasting skip, a second reader of the
 * Conv's result, a result of no declared shape. */
static void test_not_fused(void **state) {
    (void)state;
    res_spec after = spec(4, 3, 1, 1, 1);
    after.skip_after_conv = true;
    after.relu = true;
    check(&after, false);
    res_spec broadcast = spec(6, 3, 2, 0, 1);
    broadcast.skip_broadcast = true;
    check(&broadcast, false);
    res_spec twice = spec(4, 3, 1, 1, 1);
    twice.conv_read_twice = true;
    check(&twice, false);
    res_spec undeclared = spec(4, 3, 1, 1, 1);
    undeclared.undeclared = true;
    check(&undeclared, false);
}

/* A skip declared of the Conv's output shape that comes out [1, C, 1, 1]: the plan fused the Add
 * on the declared shapes, and the Conv refuses the run, naming both shapes, rather than write a
 * wrong sum; as written (unfused), the Add broadcasts. */
static void test_declared_shape_broken(void **state) {
    (void)state;
    res_spec c = spec(4, 3, 1, 1, 1);
    c.lie = true;
    tconv_model *m = res_model(&c);
    tc_rt_tensor in[2], out[2];
    res_inputs(&c, in);
    memset(out, 0, sizeof out);
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_run(s, in, 2, out, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "conv");
    rtt_assert_contains(err.message, "[1,4,1,1]");
    rtt_assert_contains(err.message, "[1,4,7,9]");
    tc_session_free(s);
    uint64_t calls;
    tc_rt_tensor unfused = run_res(m, &c, true, &calls);
    rtt_assert_dims(&unfused, 4, (int64_t[]){1, 4, 7, 9});
    tc_rt_tensor_release(&unfused);
    tc_rt_tensor_release(&in[0]);
    tc_rt_tensor_release(&in[1]);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_paths),
        cmocka_unit_test(test_not_fused),
        cmocka_unit_test(test_declared_shape_broken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
