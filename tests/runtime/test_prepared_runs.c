/* The prepared kernels (ops.def's KP: Conv, ConvTranspose, Gemm, MatMul, the pools, the
 * recurrent layers among them) read no IR when they run: their prepare read the attributes
 * once, when the session was planned. The executor watches their runs (test_hooks.h:
 * tc_test_watch_prepared_runs): every attribute read through the IR's readers is counted (ir.h:
 * tc_test_attr_watched_reads), and the run gets no node (ctx->node NULL), so any other IR access
 * would crash here. Models with the special cases (fused crop and activation,
 * BatchNormalization folded, grouped, 3-D, float16 widened, a subgraph, float64, LSTM) run twice
 * through one session each; the counts of what was watched make sure the cases were really
 * there. A planted read shows the watch can fail. */
#include <stdio.h>

#include "rt_test_util.h"
#include "runtime/compute/test_hooks.h"
#include "tconv/model.h"
#include "tconv/runtime.h"

typedef struct watched {
    int64_t attr_reads;
    tc_test_prepared_counts seen;
} watched;

static void watch_begin(void) {
    tc_test_attr_watched_reads = 0;
    memset(&tc_test_prepared_seen, 0, sizeof tc_test_prepared_seen);
    tc_test_watch_prepared_runs = 1;
}

static watched watch_end(void) {
    tc_test_watch_prepared_runs = 0;
    watched w = {tc_test_attr_watched_reads, tc_test_prepared_seen};
    return w;
}

/* models/<name> read, planned once, and run twice on seeded inputs, watched. */
static watched run_model_twice(const char *name) {
    tconv_model *m = rtt_read_models_case(name);
    tconv_runner *r = NULL;
    tconv_status st = tconv_runner_new(m, NULL, &r);
    if (st != TCONV_OK)
        print_error("%s: %s\n", name, tconv_model_last_error(m));
    assert_int_equal(st, TCONV_OK);
    assert_int_equal(tconv_runner_set_random_inputs(r, 7), TCONV_OK);
    watch_begin();
    for (int run = 0; run < 2; run++) {
        st = tconv_runner_run(r);
        if (st != TCONV_OK)
            print_error("%s: %s\n", name, tconv_runner_last_error(r));
        assert_int_equal(st, TCONV_OK);
    }
    watched w = watch_end();
    printf("%-22s %3lld prepared runs (crop %lld, activation %lld, folded %lld, widened %lld, "
           "float64 %lld): %lld attribute reads\n",
           name, (long long)w.seen.runs, (long long)w.seen.crop, (long long)w.seen.activation,
           (long long)w.seen.folded, (long long)w.seen.widened, (long long)w.seen.f64,
           (long long)w.attr_reads);
    tconv_runner_free(r);
    tconv_model_free(m);
    return w;
}

static void test_conv_transpose_fused_and_folded(void **state) {
    (void)state;
    /* 5 ConvTranspose a run: 4 with a folded BatchNormalization and a fused Relu */
    watched w = run_model_twice("dcgan_generator");
    assert_int_equal(w.attr_reads, 0);
    assert_int_equal(w.seen.runs, 2 * 5);
    assert_true(w.seen.folded >= 2 * 4 && w.seen.activation >= 2 * 4);
}

static void test_float16_widened(void **state) {
    (void)state;
    watched w = run_model_twice("dcgan_generator_fp16");
    assert_int_equal(w.attr_reads, 0);
    assert_int_equal(w.seen.runs, 2 * 5);
    assert_int_equal(w.seen.widened, 2 * 5);
    /* its four Relus fused into float16 results (TC_OPF_ROUNDING_COMMUTES); the Tanh is not */
    assert_int_equal(w.seen.activation, 2 * 4);
}

static void test_fused_crop(void **state) {
    (void)state;
    /* ConvTranspose -> Slice -> Add chains, beside 10 Conv and 5 MaxPool */
    watched w = run_model_twice("fcn_head");
    assert_int_equal(w.attr_reads, 0);
    assert_int_equal(w.seen.runs, 2 * (10 + 3 + 5));
    assert_true(w.seen.crop > 0);
}

static void test_concat(void **state) {
    (void)state;
    /* the U-Net's skip connections: Concat beside its Conv, ConvTranspose and MaxPool steps */
    watched w = run_model_twice("unet");
    assert_int_equal(w.attr_reads, 0);
    assert_int_equal(w.seen.runs, 2 * (19 + 4 + 4 + 4)); /* Conv, MaxPool, ConvTranspose, Concat */
}

static void test_grouped_and_3d(void **state) {
    (void)state;
    watched grouped = run_model_twice("grouped_upsampler");
    assert_int_equal(grouped.attr_reads, 0);
    assert_int_equal(grouped.seen.runs, 2 * 5);
    watched volume = run_model_twice("decoder3d");
    assert_int_equal(volume.attr_reads, 0);
    assert_int_equal(volume.seen.runs, 2 * 4);
}

static void test_gemm_matmul_and_subgraph(void **state) {
    (void)state;
    watched style = run_model_twice("stylegan2_generator"); /* Gemm, Conv, ConvTranspose */
    assert_int_equal(style.attr_reads, 0);
    assert_true(style.seen.runs >= 2 * (8 + 3));
    /* MatMul and two LSTMs beside Conv, ConvTranspose */
    watched demucs = run_model_twice("demucs_small");
    assert_int_equal(demucs.attr_reads, 0);
    assert_true(demucs.seen.runs >= 2 * (6 + 2 + 1 + 2));
    watched branch = run_model_twice("if_branch"); /* a Conv, and an If's subgraph */
    assert_int_equal(branch.attr_reads, 0);
    assert_true(branch.seen.runs >= 2);
}

/* float64 Conv (grouped) -> ConvTranspose (pads, output_padding) -> Gemm (transA, alpha, beta
 * with C) -> MatMul, and a float32 Gemm (transB), through tc_session directly. */
static tconv_model *f64_model(void) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    tc_error err;
    static double w1[4 * 1 * 3 * 3], w2[4 * 2 * 3 * 3], c[6 * 6], b[6 * 6];
    static float wf[5 * 6];
    for (int i = 0; i < 36; i++)
        w1[i % (4 * 9)] = (double)((i * 5) % 7) / 7.0 - 0.5;
    for (int i = 0; i < 4 * 2 * 9; i++)
        w2[i] = (double)((i * 3) % 11) / 11.0 - 0.5;
    for (int i = 0; i < 36; i++) {
        c[i] = (double)(i % 5) / 5.0;
        b[i] = (double)((i * 7) % 9) / 9.0 - 0.5;
    }
    for (int i = 0; i < 30; i++)
        wf[i] = (float)((i * 3) % 7) / 7.0f - 0.5f;
    int64_t x_dims[4] = {1, 4, 6, 6}, w1_dims[4] = {4, 1, 3, 3}, w2_dims[4] = {4, 2, 3, 3};
    int64_t m_dims[2] = {6, 6}, wf_dims[2] = {5, 6}, xf_dims[2] = {3, 6};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_DOUBLE, 4, x_dims);
    tconv_node *conv = rtt_node(
        g, "Conv", "conv",
        (tconv_value *[]){x, rtt_init(g, "w1", TCONV_DTYPE_DOUBLE, 4, w1_dims, w1, sizeof w1)}, 2,
        (const char *[]){"y1"}, 1);
    assert_int_equal(tc_node_set_attr_int(conv, "group", 4, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(conv, "pads", (int64_t[]){1, 1, 1, 1}, 4, &err),
                     TCONV_OK);
    tconv_node *ct =
        rtt_node(g, "ConvTranspose", "ct",
                 (tconv_value *[]){rtt_value(g, "y1"), rtt_init(g, "w2", TCONV_DTYPE_DOUBLE, 4,
                                                                w2_dims, w2, sizeof w2)},
                 2, (const char *[]){"y2"}, 1);
    assert_int_equal(tc_node_set_attr_ints(ct, "strides", (int64_t[]){2, 2}, 2, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(ct, "pads", (int64_t[]){4, 4, 4, 4}, 4, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(ct, "output_padding", (int64_t[]){1, 1}, 2, &err),
                     TCONV_OK);
    /* y2: 1 x 2 x 6 x 6 (2*(6-1) + 3 - 8 + 1); its first plane as the Gemm's A */
    rtt_node(
        g, "Reshape", "flat",
        (tconv_value *[]){rtt_value(g, "y2"), rtt_init_i64(g, "shape", 3, (int64_t[]){2, 6, 6})}, 2,
        (const char *[]){"planes"}, 1);
    tconv_node *gather = rtt_node(
        g, "Gather", "first",
        (tconv_value *[]){rtt_value(g, "planes"), rtt_init_i64(g, "zero", 1, (int64_t[]){0})}, 2,
        (const char *[]){"a3"}, 1);
    (void)gather;
    rtt_node(g, "Squeeze", "sq",
             (tconv_value *[]){rtt_value(g, "a3"), rtt_init_i64(g, "axes0", 1, (int64_t[]){0})}, 2,
             (const char *[]){"a"}, 1);
    tconv_node *gemm =
        rtt_node(g, "Gemm", "gemm",
                 (tconv_value *[]){rtt_value(g, "a"),
                                   rtt_init(g, "b", TCONV_DTYPE_DOUBLE, 2, m_dims, b, sizeof b),
                                   rtt_init(g, "c", TCONV_DTYPE_DOUBLE, 2, m_dims, c, sizeof c)},
                 3, (const char *[]){"g"}, 1);
    assert_int_equal(tc_node_set_attr_int(gemm, "transA", 1, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_float(gemm, "alpha", 0.5f, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_float(gemm, "beta", 2.0f, &err), TCONV_OK);
    rtt_node(g, "MatMul", "mm", (tconv_value *[]){rtt_value(g, "g"), rtt_value(g, "b")}, 2,
             (const char *[]){"y"}, 1);
    rtt_output(g, "y");
    tconv_value *xf = rtt_input(g, "xf", TCONV_DTYPE_FLOAT, 2, xf_dims);
    tconv_node *gemm_f = rtt_node(
        g, "Gemm", "gemm_f",
        (tconv_value *[]){xf, rtt_init(g, "wf", TCONV_DTYPE_FLOAT, 2, wf_dims, wf, sizeof wf)}, 2,
        (const char *[]){"yf"}, 1);
    assert_int_equal(tc_node_set_attr_int(gemm_f, "transB", 1, &err), TCONV_OK);
    rtt_output(g, "yf");
    return m;
}

static void test_float64_and_gemm_attributes(void **state) {
    (void)state;
    tconv_model *m = f64_model();
    int64_t x_dims[4] = {1, 4, 6, 6}, xf_dims[2] = {3, 6};
    tc_rt_tensor in[2] = {rtt_tensor(TCONV_DTYPE_DOUBLE, 4, x_dims, NULL),
                          rtt_tensor(TCONV_DTYPE_FLOAT, 2, xf_dims, NULL)};
    double *x = in[0].data;
    for (int i = 0; i < 144; i++)
        x[i] = (double)((i * 13) % 17) / 17.0 - 0.5;
    float *xf = in[1].data;
    for (int i = 0; i < 18; i++)
        xf[i] = (float)(i % 4) - 1.5f;
    tc_session *s = NULL;
    tc_error err;
    tconv_status st = tc_session_create(m, NULL, &s, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    tc_rt_tensor out[2][2];
    memset(out, 0, sizeof out);
    watch_begin();
    for (int run = 0; run < 2; run++) {
        st = tc_session_run(s, in, 2, out[run], &err);
        if (st != TCONV_OK)
            print_error("%s\n", err.message);
        assert_int_equal(st, TCONV_OK);
    }
    watched w = watch_end();
    printf("float64 graph: %lld prepared runs (float64 %lld): %lld attribute reads\n",
           (long long)w.seen.runs, (long long)w.seen.f64, (long long)w.attr_reads);
    assert_int_equal(w.attr_reads, 0);
    assert_int_equal(w.seen.runs, 2 * 5);
    assert_int_equal(w.seen.f64, 2 * 4);
    /* the two runs agree, and the float32 Gemm is X * W^T */
    for (int k = 0; k < 2; k++)
        assert_memory_equal(out[0][k].data, out[1][k].data, out[0][k].nbytes);
    rtt_assert_dims(&out[0][1], 2, (int64_t[]){3, 5});
    const float *yf = out[0][1].data;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 5; j++) {
            float want = 0.0f;
            for (int k = 0; k < 6; k++)
                want += xf[i * 6 + k] * ((float)(((j * 6 + k) * 3) % 7) / 7.0f - 0.5f);
            assert_float_equal(yf[i * 5 + j], want, 1e-5);
        }
    }
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 2; k++)
            tc_rt_tensor_release(&out[r][k]);
    }
    tc_session_free(s);
    tc_rt_tensor_release(&in[0]);
    tc_rt_tensor_release(&in[1]);
    tconv_model_free(m);
}

/* Every pool: MaxPool with Indices (ceil_mode, strides), AveragePool (pads, count_include_pad),
 * LpPool (p 3), GlobalMaxPool, GlobalLpPool (p 1), GlobalAveragePool, each reading X. */
static void test_pools(void **state) {
    (void)state;
    tconv_model *m = rtt_model(18);
    tconv_graph *g = m->graph;
    tc_error err;
    int64_t x_dims[4] = {1, 2, 5, 5};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, x_dims);
    static const char *const ops[] = {"MaxPool",       "AveragePool",  "LpPool",
                                      "GlobalMaxPool", "GlobalLpPool", "GlobalAveragePool"};
    static const char *const outs[] = {"y0", "y1", "y2", "y3", "y4", "y5"};
    tconv_node *n[6];
    for (int i = 0; i < 6; i++) {
        const char *names[2] = {outs[i], "indices"};
        n[i] = rtt_node(g, ops[i], ops[i], (tconv_value *[]){x}, 1, names, i == 0 ? 2 : 1);
        rtt_output(g, outs[i]);
    }
    rtt_output(g, "indices");
    for (int i = 0; i < 3; i++)
        assert_int_equal(tc_node_set_attr_ints(n[i], "kernel_shape", (int64_t[]){3, 2}, 2, &err),
                         TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(n[0], "strides", (int64_t[]){2, 2}, 2, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_int(n[0], "ceil_mode", 1, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(n[1], "pads", (int64_t[]){1, 0, 1, 1}, 4, &err),
                     TCONV_OK);
    assert_int_equal(tc_node_set_attr_int(n[1], "count_include_pad", 1, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_int(n[2], "p", 3, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_int(n[4], "p", 1, &err), TCONV_OK);
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 4, x_dims, NULL);
    float *xs = in.data;
    for (int i = 0; i < 50; i++)
        xs[i] = (float)((i * 7) % 11) - 5.0f;
    tc_session *s = NULL;
    tconv_status st = tc_session_create(m, NULL, &s, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    tc_rt_tensor out[2][7];
    memset(out, 0, sizeof out);
    watch_begin();
    for (int run = 0; run < 2; run++)
        assert_int_equal(tc_session_run(s, &in, 1, out[run], &err), TCONV_OK);
    watched w = watch_end();
    assert_int_equal(w.attr_reads, 0);
    assert_int_equal(w.seen.runs, 2 * 6);
    /* the two runs agree; GlobalLpPool with p 1 is the sum of |x| per plane */
    for (int k = 0; k < 7; k++)
        assert_memory_equal(out[0][k].data, out[1][k].data, out[0][k].nbytes);
    rtt_assert_dims(&out[0][0], 4, (int64_t[]){1, 2, 2, 3});
    rtt_assert_dims(&out[0][6], 4, (int64_t[]){1, 2, 2, 3});
    for (int c = 0; c < 2; c++) {
        float sum = 0.0f;
        for (int i = 0; i < 25; i++)
            sum += xs[c * 25 + i] < 0 ? -xs[c * 25 + i] : xs[c * 25 + i];
        assert_float_equal(((const float *)out[0][4].data)[c], sum, 1e-4);
    }
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 7; k++)
            tc_rt_tensor_release(&out[r][k]);
    }
    tc_session_free(s);
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

/* A prepare that refuses its node (group 0) does not refuse the plan: the node fails when it
 * runs, with its kernel's message, as when it read its attributes on every run. */
static void test_a_refused_prepare_fails_at_run(void **state) {
    (void)state;
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    tc_error err;
    static float w[2 * 2 * 3 * 3];
    int64_t x_dims[4] = {1, 2, 4, 4}, w_dims[4] = {2, 2, 3, 3};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, x_dims);
    tconv_node *conv =
        rtt_node(g, "Conv", "conv",
                 (tconv_value *[]){x, rtt_init(g, "w", TCONV_DTYPE_FLOAT, 4, w_dims, w, sizeof w)},
                 2, (const char *[]){"y"}, 1);
    assert_int_equal(tc_node_set_attr_int(conv, "group", 0, &err), TCONV_OK);
    rtt_output(g, "y");
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 4, x_dims, NULL), out = {0};
    tc_session *s = NULL;
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_OK);
    assert_int_equal(tc_session_run(s, &in, 1, &out, &err), TCONV_ERR_INVALID);
    assert_non_null(strstr(err.message, "conv"));
    assert_non_null(strstr(err.message, "attribute 'group' must be >= 1"));
    tc_session_free(s);
    tc_rt_tensor_release(&in);
    tconv_model_free(m);
}

/* A read inside a watched run is counted: one planted per prepared run. */
static void test_a_planted_read_is_caught(void **state) {
    (void)state;
    tc_test_plant_attr_read = 1;
    watched w = run_model_twice("dcgan_generator");
    tc_test_plant_attr_read = 0;
    assert_int_equal(w.seen.runs, 2 * 5);
    assert_int_equal(w.attr_reads, w.seen.runs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_transpose_fused_and_folded),
        cmocka_unit_test(test_float16_widened),
        cmocka_unit_test(test_fused_crop),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_grouped_and_3d),
        cmocka_unit_test(test_gemm_matmul_and_subgraph),
        cmocka_unit_test(test_float64_and_gemm_attributes),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_a_refused_prepare_fails_at_run),
        cmocka_unit_test(test_a_planted_read_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
