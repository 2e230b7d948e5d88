/* Activation fusion in the executor (src/runtime/session/session_fuse.c): a Conv, ConvTranspose or
 * BatchNormalization whose float32 result only an activation reads (an op ops.def marks ACT(fn,
 * cost): HardSigmoid and Elu were made fusable by that column and their tc_act_ function alone)
 * applies that activation itself, and the activation's step just moves the result. Each case runs
 * the graph fused and as written (an unfused session, as proofs run) and requires the same bits;
 * the kernel-call counts show which ran fused. The shapes reach every Conv path (wide, im2col, few
 * positions, direct 1x1, depthwise) and the ConvTranspose with a fused crop; the cases that must
 * not fuse (a second reader, a graph output, a bound that is not a constant, a proof session,
 * float64) are checked the same way. */
#include <math.h>

#include "rt_test_util.h"
#include "runtime/kernels/kernel_util.h"

#define C_IN 4
#define H 7
#define W_ 9
#define N_X (C_IN * H * W_)

typedef enum act_form {
    RELU,
    LEAKY,
    CLIP6,
    CLIP13,
    CLIP13_MAX_ONLY,
    CLIP13_INPUT,
    SIGMOID,
    TANH,
    HARD_SIGMOID,          /* alpha, beta set */
    HARD_SIGMOID_DEFAULTS, /* alpha, beta from the op table's attribute defaults */
    ELU,                   /* alpha set */
    ELU_DEFAULT,
    N_ACT_FORMS
} act_form;

/* The op of each form. */
static const char *const ACT_OPS[N_ACT_FORMS] = {"Relu",        "LeakyRelu",   "Clip",    "Clip",
                                                 "Clip",        "Clip",        "Sigmoid", "Tanh",
                                                 "HardSigmoid", "HardSigmoid", "Elu",     "Elu"};

typedef struct conv_spec {
    bool transpose;   /* ConvTranspose k3 s2 -> Slice -> Pad -> Add, else Conv */
    int64_t ct_k;     /* ... its kernel when not 3 (4: the sub-pixel form, 4 input channels) */
    bool small_x;     /* X 2x3 (ConvTranspose: the few-positions path) */
    int threads;      /* 0: 1 */
    bool batchnorm;   /* a BatchNormalization of X instead (no Conv to fold it into) */
    bool zero_var;    /* ... with var + epsilon = 0 in one channel (its formula path) */
    int64_t c_out, k; /* Conv: output channels, square kernel */
    int64_t stride, pad, group;
    bool bias;
    act_form act;
    bool expose;        /* the Conv's output is a graph output too */
    bool second_reader; /* another node reads the Conv's output */
    tconv_dtype dtype;
    float x_scale; /* X's values' step (fill); 0: 0.25 */
} conv_spec;

static void fill(float *v, int n, int mul, int mod, float scale) {
    for (int i = 0; i < n; i++)
        v[i] = (float)((i * mul) % mod) * scale - 0.5f * (float)mod * scale;
}

/* values (n <= 512) in the spec's dtype: float, double, float16 or bfloat16, in `room`; returns
 * its bytes. */
static size_t in_dtype(const conv_spec *c, const float *values, int n, void *room) {
    for (int i = 0; i < n; i++) {
        if (c->dtype == TCONV_DTYPE_DOUBLE)
            ((double *)room)[i] = values[i];
        else if (c->dtype == TCONV_DTYPE_FLOAT16)
            ((uint16_t *)room)[i] = tc_float_to_half(values[i]);
        else if (c->dtype == TCONV_DTYPE_BFLOAT16)
            ((uint16_t *)room)[i] = tc_float_to_bfloat16(values[i]);
        else
            ((float *)room)[i] = values[i];
    }
    return (size_t)n * tc_rt_dtype_size(c->dtype);
}

static tconv_value *typed_init(tconv_graph *g, const conv_spec *c, const char *name, int rank,
                               const int64_t *dims, const float *values, int n) {
    double room[512];
    size_t bytes = in_dtype(c, values, n, room);
    return rtt_init(g, name, c->dtype, rank, dims, room, bytes);
}

static void set_ints(tconv_node *n, const char *name, int64_t a, int64_t b) {
    tc_error err;
    assert_int_equal(tc_node_set_attr_ints(n, name, (int64_t[]){a, b}, 2, &err), TCONV_OK);
}

/* X -> BatchNormalization -> "r": scale, B, mean and var per channel (var positive, or
 * -epsilon in channel 1). */
static const char *add_batchnorm(tconv_graph *g, const conv_spec *c, tconv_value *x) {
    float scale[C_IN], shift[C_IN], mean[C_IN], var[C_IN];
    fill(scale, C_IN, 3, 5, 0.5f);
    fill(shift, C_IN, 2, 7, 0.25f);
    fill(mean, C_IN, 5, 9, 0.125f);
    for (int i = 0; i < C_IN; i++)
        var[i] = 0.25f + 0.5f * (float)i;
    if (c->zero_var)
        var[1] = -1e-5f; /* plus the default epsilon: 0, scale / 0 */
    int64_t dims[1] = {C_IN};
    tconv_value *in[5] = {x, typed_init(g, c, "scale", 1, dims, scale, C_IN),
                          typed_init(g, c, "shift", 1, dims, shift, C_IN),
                          typed_init(g, c, "mean", 1, dims, mean, C_IN),
                          typed_init(g, c, "var", 1, dims, var, C_IN)};
    rtt_node(g, "BatchNormalization", "bn", in, 5, (const char *[]){"r"}, 1);
    return "r";
}

/* X -> Conv(T) or ConvTranspose -> Slice -> Pad -> Add chain, or BatchNormalization ->
 * activation -> "y". */
static const char *add_producer(tconv_graph *g, const conv_spec *c, tconv_value *x) {
    float w[1024], b[32];
    fill(b, 16, 3, 7, 0.125f);
    tc_error err;
    if (c->batchnorm)
        return add_batchnorm(g, c, x);
    if (c->transpose) {
        int64_t k = c->ct_k ? c->ct_k : 3;
        int64_t w_dims[4] = {C_IN, 3, k, k}, b_dims[3] = {3, 1, 1};
        fill(w, (int)(C_IN * 3 * k * k), 7, 11, 0.0625f);
        tconv_value *wv = typed_init(g, c, "w", 4, w_dims, w, (int)(C_IN * 3 * k * k));
        tconv_node *ct = rtt_node(g, "ConvTranspose", "ct", (tconv_value *[]){x, wv}, 2,
                                  (const char *[]){"t"}, 1);
        set_ints(ct, "strides", 2, 2);
        tconv_value *s_in[4] = {rtt_value(g, "t"), rtt_init_i64(g, "starts", 2, (int64_t[]){1, 2}),
                                rtt_init_i64(g, "ends", 2, (int64_t[]){-1, -2}),
                                rtt_init_i64(g, "axes", 2, (int64_t[]){2, 3})};
        rtt_node(g, "Slice", "crop", s_in, 4, (const char *[]){"u"}, 1);
        tconv_value *p_in[2] = {rtt_value(g, "u"),
                                rtt_init_i64(g, "pads", 8, (int64_t[]){0, 0, 1, 0, 0, 0, 2, 3})};
        rtt_node(g, "Pad", "extend", p_in, 2, (const char *[]){"v"}, 1);
        tconv_value *a_in[2] = {rtt_value(g, "v"), typed_init(g, c, "b", 3, b_dims, b, 3)};
        rtt_node(g, "Add", "bias", a_in, 2, (const char *[]){"r"}, 1);
        return "r";
    }
    int64_t cin_g = C_IN / c->group, n_w = c->c_out * cin_g * c->k * c->k;
    int64_t w_dims[4] = {c->c_out, cin_g, c->k, c->k}, b_dims[1] = {c->c_out};
    fill(w, (int)n_w, 5, 13, 0.03125f);
    tconv_value *in[3] = {x, typed_init(g, c, "w", 4, w_dims, w, (int)n_w),
                          c->bias ? typed_init(g, c, "b", 1, b_dims, b, (int)c->c_out) : NULL};
    tconv_node *conv = rtt_node(g, "Conv", "conv", in, c->bias ? 3 : 2, (const char *[]){"r"}, 1);
    set_ints(conv, "strides", c->stride, c->stride);
    assert_int_equal(
        tc_node_set_attr_ints(conv, "pads", (int64_t[]){c->pad, c->pad, c->pad, c->pad}, 4, &err),
        TCONV_OK);
    assert_int_equal(tc_node_set_attr_int(conv, "group", c->group, &err), TCONV_OK);
    return "r";
}

static void add_activation(tconv_graph *g, const conv_spec *c, tconv_value *r) {
    tc_error err;
    tconv_value *in[3] = {r, NULL, NULL};
    size_t n_in = 1;
    float lo = -0.25f, hi = 0.5f;
    if (c->act == CLIP13 || c->act == CLIP13_MAX_ONLY) {
        in[1] =
            c->act == CLIP13 ? rtt_init(g, "lo", TCONV_DTYPE_FLOAT, 0, NULL, &lo, sizeof lo) : NULL;
        in[2] = rtt_init(g, "hi", TCONV_DTYPE_FLOAT, 0, NULL, &hi, sizeof hi);
        n_in = 3;
    } else if (c->act == CLIP13_INPUT) {
        in[1] = rtt_input(g, "lo", TCONV_DTYPE_FLOAT, 0, NULL);
        n_in = 2;
    }
    tconv_node *a = rtt_node(g, ACT_OPS[c->act], "act", in, n_in, (const char *[]){"y"}, 1);
    if (c->act == LEAKY)
        assert_int_equal(tc_node_set_attr_float(a, "alpha", 0.2f, &err), TCONV_OK);
    if (c->act == HARD_SIGMOID) {
        assert_int_equal(tc_node_set_attr_float(a, "alpha", 0.3f, &err), TCONV_OK);
        assert_int_equal(tc_node_set_attr_float(a, "beta", 0.4f, &err), TCONV_OK);
    }
    if (c->act == ELU)
        assert_int_equal(tc_node_set_attr_float(a, "alpha", 0.7f, &err), TCONV_OK);
    if (c->act == CLIP6) {
        assert_int_equal(tc_node_set_attr_float(a, "min", lo, &err), TCONV_OK);
        assert_int_equal(tc_node_set_attr_float(a, "max", hi, &err), TCONV_OK);
    }
}

/* X's dims: 1 x C_IN x H x W_, or 1 x C_IN x 2 x 3 */
static void x_dims_of(const conv_spec *c, int64_t *dims) {
    dims[0] = 1;
    dims[1] = C_IN;
    dims[2] = c->small_x ? 2 : H;
    dims[3] = c->small_x ? 3 : W_;
}

static tconv_model *conv_model(const conv_spec *c) {
    tconv_model *m = rtt_model(c->act == CLIP6 ? 10 : 13);
    tconv_graph *g = m->graph;
    int64_t x_dims[4];
    x_dims_of(c, x_dims);
    tconv_value *x = rtt_input(g, "x", c->dtype, 4, x_dims);
    const char *r = add_producer(g, c, x);
    add_activation(g, c, rtt_value(g, r));
    rtt_output(g, "y");
    if (c->expose)
        rtt_output(g, r);
    if (c->second_reader) {
        rtt_node(g, "Neg", "other", (tconv_value *[]){rtt_value(g, r)}, 1, (const char *[]){"z"},
                 1);
        rtt_output(g, "z");
    }
    return m;
}

/* Runs the model (x, and the Clip bound input where there is one); returns output 0 and the
 * kernel calls made. */
static tc_rt_tensor run_model(tconv_model *m, const conv_spec *c, bool unfused, uint64_t *calls) {
    int64_t x_dims[4];
    x_dims_of(c, x_dims);
    float x[N_X];
    double room[N_X];
    fill(x, N_X, 7, 17, c->x_scale != 0.0f ? c->x_scale : 0.25f);
    in_dtype(c, x, N_X, room);
    float lo = -0.375f;
    tc_rt_tensor in[2] = {rtt_tensor(c->dtype, 4, x_dims, room),
                          rtt_tensor(TCONV_DTYPE_FLOAT, 0, NULL, &lo)};
    tc_rt_tensor out[3];
    memset(out, 0, sizeof out);
    tc_session_options opts;
    tc_session_options_init(&opts);
    opts.n_threads = c->threads ? c->threads : 1;
    opts.unfused = unfused;
    *calls = rtt_run_counted(m, &opts, in, c->act == CLIP13_INPUT ? 2 : 1, out);
    tc_rt_tensor_release(&in[0]);
    tc_rt_tensor_release(&in[1]);
    tc_rt_tensor_release(&out[1]);
    tc_rt_tensor_release(&out[2]);
    return out[0];
}

/* Fused (when `fuses`: one kernel call less than as written) and unfused, same bits. */
static void check(const conv_spec *c, bool fuses) {
    tconv_model *m = conv_model(c);
    uint64_t fused_calls, plain_calls;
    tc_rt_tensor got = run_model(m, c, false, &fused_calls);
    tc_rt_tensor want = run_model(m, c, true, &plain_calls);
    /* as written: every node runs (a proof session fuses nothing); fused: the crop chain's
     * three steps and the activation's only move results */
    uint64_t nodes = (c->transpose ? 5 : 2) + (c->second_reader ? 1 : 0);
    /* a float32 BatchNormalization after a Conv would fold: this one reads X */
    assert_int_equal(plain_calls, nodes);
    assert_int_equal(fused_calls, nodes - (c->transpose ? 3 : 0) - (fuses ? 1 : 0));
    rtt_assert_dims(&got, want.rank, want.dims);
    assert_int_equal(got.nbytes, want.nbytes);
    assert_memory_equal(got.data, want.data, want.nbytes);
    if (c->dtype == TCONV_DTYPE_FLOAT) { /* the activation did something: not all one value */
        const float *v = got.data;
        bool varied = false;
        for (int64_t i = 1; i < got.n_elements; i++)
            varied = varied || v[i] != v[0];
        assert_true(varied);
    }
    tc_rt_tensor_release(&got);
    tc_rt_tensor_release(&want);
    tconv_model_free(m);
}

static conv_spec spec(int64_t c_out, int64_t k, int64_t stride, int64_t pad, int64_t group,
                      act_form act) {
    conv_spec c = {.c_out = c_out,
                   .k = k,
                   .stride = stride,
                   .pad = pad,
                   .group = group,
                   .bias = true,
                   .act = act,
                   .dtype = TCONV_DTYPE_FLOAT};
    return c;
}

/* Every activation on the wide path (3x3, pads 1), the im2col path (stride 2) and the few
 * positions path (20 output channels on a 4x5 output: positions as the GEMM's rows). */
static void test_each_activation(void **state) {
    (void)state;
    for (int a = RELU; a < N_ACT_FORMS; a++) {
        if (a == CLIP13_INPUT)
            continue;
        conv_spec wide = spec(8, 3, 1, 1, 1, (act_form)a);
        check(&wide, true);
        conv_spec strided = spec(6, 3, 2, 0, 1, (act_form)a);
        strided.bias = false;
        check(&strided, true);
        conv_spec few_positions = spec(20, 3, 2, 1, 1, (act_form)a);
        check(&few_positions, true);
    }
}

/* The direct 1x1 path, a grouped Conv and a depthwise one. */
static void test_conv_paths(void **state) {
    (void)state;
    conv_spec direct = spec(12, 1, 1, 0, 1, LEAKY);
    check(&direct, true);
    conv_spec grouped = spec(6, 3, 1, 1, 2, CLIP13);
    check(&grouped, true);
    conv_spec depthwise = spec(8, 3, 1, 1, 4, RELU);
    check(&depthwise, true);
}

/* ConvTranspose with its crop chain fused: crop, the Pad's zeros and the Add's bias, then the
 * activation (1 kernel call instead of 5). */
static void test_conv_transpose_after_crop(void **state) {
    (void)state;
    conv_spec relu = {.transpose = true, .act = RELU, .dtype = TCONV_DTYPE_FLOAT};
    check(&relu, true);
    conv_spec sigmoid = relu;
    sigmoid.act = SIGMOID;
    check(&sigmoid, true);
    conv_spec elu = relu;
    elu.act = ELU;
    check(&elu, true);
    /* each task applies it to the planes it finished: at 3 threads (output-channel chunks),
     * on the few-positions path; the sub-pixel form (k4, 4 input channels) after its blocks */
    for (int threads = 1; threads <= 3; threads += 2) {
        conv_spec chunked = relu;
        chunked.act = LEAKY;
        chunked.threads = threads;
        check(&chunked, true);
        conv_spec few = chunked;
        few.small_x = true;
        check(&few, true);
        conv_spec subpixel = chunked;
        subpixel.ct_k = 4;
        subpixel.act = TANH;
        check(&subpixel, true);
        subpixel.small_x = true;
        check(&subpixel, true);
    }
}

/* A BatchNormalization that no Conv precedes (ERFNet's downsampler: after a Concat) takes the
 * activation itself: every activation, the formula path of a zero variance, and not float64,
 * float16, a second reader or an exposed result. */
static void test_batchnorm_producer(void **state) {
    (void)state;
    for (int a = RELU; a < N_ACT_FORMS; a++) {
        if (a == CLIP13_INPUT)
            continue;
        conv_spec bn = {.batchnorm = true, .act = (act_form)a, .dtype = TCONV_DTYPE_FLOAT};
        check(&bn, true);
        bn.zero_var = true;
        check(&bn, true);
    }
    conv_spec kept = {.batchnorm = true, .act = RELU, .dtype = TCONV_DTYPE_DOUBLE};
    check(&kept, false);
    kept.dtype = TCONV_DTYPE_FLOAT16;
    kept.act = LEAKY; /* (a float16 Relu fuses: test_half_relu) */
    check(&kept, false);
    kept.act = RELU;
    kept.dtype = TCONV_DTYPE_FLOAT;
    kept.second_reader = true;
    check(&kept, false);
    kept.second_reader = false;
    kept.expose = true;
    check(&kept, false);
}

/* Relu commutes with rounding to float16 and bfloat16 (ops.def: TC_OPF_ROUNDING_COMMUTES), so
 * it fuses into a producer whose 16-bit result the executor rounds after the kernel, where the
 * graph as written rounds before the Relu: the same bits either way, on the Conv paths and a
 * BatchNormalization, for X of ordinary values, of values so small that many results round to
 * -0 (which Relu makes +0 in both orders), and so large that results overflow to infinity and
 * NaN. LeakyRelu, which does not commute, is not fused (test_not_fused). */
static void test_half_relu(void **state) {
    (void)state;
    static const float scales[3] = {0.25f, 1e-7f, 8000.0f};
    static const tconv_dtype types[2] = {TCONV_DTYPE_FLOAT16, TCONV_DTYPE_BFLOAT16};
    for (int t = 0; t < 2; t++) {
        for (int s = 0; s < 3; s++) {
            conv_spec cases[4] = {spec(8, 3, 1, 1, 1, RELU), spec(6, 3, 2, 0, 1, RELU),
                                  spec(20, 3, 2, 1, 1, RELU), spec(8, 3, 1, 1, 4, RELU)};
            for (int k = 0; k < 4; k++) {
                cases[k].dtype = types[t];
                cases[k].x_scale = scales[s];
                cases[k].bias = s != 1; /* (a bias would hide the tiny values) */
                cases[k].threads = 1 + k % 2;
                check(&cases[k], true);
            }
            conv_spec bn = {.batchnorm = true, .act = RELU, .dtype = types[t]};
            bn.x_scale = scales[s];
            check(&bn, true);
        }
    }
}

/* Every activation the op table makes fusable (ACT(fn, cost) in ops.def) is one of the forms
 * above, so a row made fusable is proved fused == unfused here; the others are not fused. */
static void test_every_table_activation_is_checked(void **state) {
    (void)state;
    int fusable = 0;
    for (int k = 1; k < TC_KIND_COUNT; k++) {
        bool tested = false;
        for (int a = 0; a < N_ACT_FORMS; a++)
            tested = tested || strcmp(ACT_OPS[a], tc_kinds[k].name) == 0;
        if (tc_kinds[k].activation == TC_ACTIVATION_NONE) {
            assert_false(tested);
            continue;
        }
        fusable++;
        if (!tested)
            fail_msg("%s is fusable in ops.def but has no form here", tc_kinds[k].name);
    }
    assert_int_equal(fusable, TC_ACTIVATION_COUNT - 1);
}

/* Not fused: the Conv's output also a graph output, read by a second node, a Clip bound that is
 * a graph input; float64 (the epilogue is float32 only); float16 (computed in float32 and rounded
 * after the Conv, then again after the activation: fusing would skip the first rounding). */
static void test_not_fused(void **state) {
    (void)state;
    static const struct {
        act_form act;
        bool expose, second_reader;
        tconv_dtype dtype;
    } cases[] = {{RELU, true, false, TCONV_DTYPE_FLOAT},
                 {TANH, false, true, TCONV_DTYPE_FLOAT},
                 {CLIP13_INPUT, false, false, TCONV_DTYPE_FLOAT},
                 {RELU, false, false, TCONV_DTYPE_DOUBLE},
                 {LEAKY, false, false, TCONV_DTYPE_FLOAT16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conv_spec c = spec(8, 3, 1, 1, 1, cases[i].act);
        c.expose = cases[i].expose;
        c.second_reader = cases[i].second_reader;
        c.dtype = cases[i].dtype;
        check(&c, false);
    }
    conv_spec ct_exposed = {
        .transpose = true, .act = RELU, .expose = true, .dtype = TCONV_DTYPE_FLOAT};
    check(&ct_exposed, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_activation),
        cmocka_unit_test(test_conv_paths),
        cmocka_unit_test(test_conv_transpose_after_crop),
        cmocka_unit_test(test_batchnorm_producer),
        cmocka_unit_test(test_half_relu),
        cmocka_unit_test(test_not_fused),
        cmocka_unit_test(test_every_table_activation_is_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
