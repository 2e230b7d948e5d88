/* float16 and bfloat16 at runtime: the conversions (round to nearest even, NaN, infinity,
 * subnormals), the executor's widening around float kernels (session_half.c), Cast between
 * every float type, and the op table's list of ops that take 16-bit floats natively. */
#include "rt_test_util.h"

#include <math.h>
#include <stdlib.h>

#include "ir/ops.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/compute/tensor_copy.h"

static void test_half_conversions(void **state) {
    (void)state;
    assert_int_equal(tc_float_to_half(1.0f), 0x3c00);
    assert_int_equal(tc_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(tc_float_to_half(65520.0f), 0x7c00); /* halfway to 2^16: rounds to inf */
    assert_int_equal(tc_float_to_half(-1e9f), 0xfc00);
    assert_true((tc_float_to_half(NAN) & 0x7fff) > 0x7c00);
    assert_int_equal(tc_float_to_half(0x1p-24f), 0x0001);        /* smallest subnormal */
    assert_int_equal(tc_float_to_half(0x1p-25f), 0x0000);        /* tie: to even (0) */
    assert_int_equal(tc_float_to_half(0x3p-25f), 0x0002);        /* tie: to even (2) */
    assert_int_equal(tc_float_to_half(1.0f + 0x1p-11f), 0x3c00); /* tie: to even */
    assert_int_equal(tc_float_to_half(1.0f + 0x3p-11f), 0x3c02);
    assert_true(tc_half_to_float(0x0001) == 0x1p-24f);
    assert_true(isinf(tc_half_to_float(0x7c00)));
    assert_true(isnan(tc_half_to_float(0x7e00)));
    /* double -> half in one rounding: just above the tie, double -> float would land on the
     * tie (1 + 2^-11) and round to even, down */
    assert_int_equal(tc_double_to_half(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
    assert_int_equal(tc_float_to_half((float)(1.0 + 0x1p-11 + 0x1p-40)), 0x3c00);
}

/* The bulk conversions (F16C where the CPU has it) give the scalar functions' bits: every half,
 * and floats across the whole range (a stride through all bit patterns plus the rounding
 * boundaries, subnormals, infinities and NaNs with payloads), at every offset of the groups of
 * eight the vector code uses. */
static void test_bulk_half_conversions(void **state) {
    (void)state;
    enum { N_HALF = 65536, N_FLOAT = 65536 + 64 };
    uint16_t *h = malloc(N_HALF * sizeof *h), *narrow = malloc(N_FLOAT * sizeof *narrow);
    float *wide = malloc(N_HALF * sizeof *wide), *f = malloc(N_FLOAT * sizeof *f);
    assert_non_null(h);
    assert_non_null(narrow);
    assert_non_null(wide);
    assert_non_null(f);
    for (uint32_t i = 0; i < N_HALF; i++)
        h[i] = (uint16_t)i;
    tc_half_to_float_n(h, wide, N_HALF);
    for (uint32_t i = 0; i < N_HALF; i++) {
        float want = tc_half_to_float(h[i]);
        assert_memory_equal(&wide[i], &want, sizeof want);
    }
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffc12345u,
        0x7fbfffffu, 0x477fe000u, 0x477fefffu, 0x477ff000u, 0x38800000u, 0x387fffffu, 0x33800000u,
        0x33000000u, 0x33000001u, 0x00000001u, 0x3f801000u, 0x3f803000u, 0x3f800fffu};
    size_t n_special = sizeof special / sizeof special[0];
    for (uint32_t i = 0; i < N_FLOAT; i++) {
        uint32_t bits = i < n_special ? special[i] : i * 65521u + (i >> 3);
        memcpy(&f[i], &bits, sizeof bits);
    }
    for (int offset = 0; offset < 8; offset++) {
        tc_float_to_half_n(f + offset, narrow, N_FLOAT - offset);
        for (int i = 0; i < N_FLOAT - offset; i++)
            assert_int_equal(narrow[i], tc_float_to_half(f[i + offset]));
    }
    free(h);
    free(narrow);
    free(wide);
    free(f);
}

/* x -> Conv(w, b) -> y with float16 or float constants holding the same values. */
static tconv_model *conv_model(tconv_dtype dtype, const float *w, const float *b) {
    tconv_model *m = rtt_model(13);
    int64_t xd[4] = {1, 4, 6, 6}, wd[4] = {8, 4, 3, 3}, bd[1] = {8};
    uint16_t wh[288], bh[8];
    for (int i = 0; i < 288; i++)
        wh[i] = tc_float_to_half(w[i]);
    for (int i = 0; i < 8; i++)
        bh[i] = tc_float_to_half(b[i]);
    bool half = dtype == TCONV_DTYPE_FLOAT16;
    tconv_value *in[3] = {
        rtt_input(m->graph, "x", dtype, 4, xd),
        rtt_init(m->graph, "w", dtype, 4, wd, half ? (const void *)wh : (const void *)w,
                 half ? sizeof wh : 288 * sizeof(float)),
        rtt_init(m->graph, "b", dtype, 1, bd, half ? (const void *)bh : (const void *)b,
                 half ? sizeof bh : 8 * sizeof(float))};
    rtt_node(m->graph, "Conv", "conv", in, 3, (const char *[]){"y"}, 1);
    rtt_output(m->graph, "y");
    return m;
}

/* A float16 model's constant inputs are widened once, when the session is made (counted as
 * constant bytes), not on every run: each run widens only x, the kernel sees W as a constant
 * and keeps its packing (constant bytes grow at the first run only), and the result has the
 * bits of the float32 computation on the widened values, rounded to float16. */
static void test_float16_constants_widened_once(void **state) {
    (void)state;
    float w[288], b[8], x[144];
    uint16_t xh[144];
    for (int i = 0; i < 288; i++)
        w[i] = tc_half_to_float(tc_float_to_half((float)((i * 37) % 101) / 64.0f - 0.8f));
    for (int i = 0; i < 8; i++)
        b[i] = tc_half_to_float(tc_float_to_half((float)i / 3.0f - 1.0f));
    for (int i = 0; i < 144; i++) {
        xh[i] = tc_float_to_half((float)((i * 13) % 29) / 7.0f - 2.0f);
        x[i] = tc_half_to_float(xh[i]);
    }
    int64_t xd[4] = {1, 4, 6, 6};
    tconv_model *wide = conv_model(TCONV_DTYPE_FLOAT, w, b);
    tc_rt_tensor xf = rtt_tensor(TCONV_DTYPE_FLOAT, 4, xd, x), want;
    tc_error err;
    assert_int_equal(rtt_run(wide, &xf, 1, &want, &err), TCONV_OK);

    tconv_model *m = conv_model(TCONV_DTYPE_FLOAT16, w, b);
    tc_session *s = NULL;
    assert_int_equal(tc_session_create(m, NULL, &s, &err), TCONV_OK);
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    size_t made = stats.constant_bytes, widened = (288 + 8) * sizeof(float);
    assert_int_equal(made, (288 + 8) * sizeof(uint16_t) + widened);
    tc_rt_tensor xin = rtt_tensor(TCONV_DTYPE_FLOAT16, 4, xd, xh), y;
    size_t after_first = 0;
    for (int run = 1; run <= 2; run++) {
        assert_int_equal(tc_session_run(s, &xin, 1, &y, &err), TCONV_OK);
        assert_int_equal(y.dtype, TCONV_DTYPE_FLOAT16);
        assert_int_equal(y.n_elements, want.n_elements);
        for (int64_t i = 0; i < y.n_elements; i++)
            assert_int_equal(((const uint16_t *)y.data)[i],
                             tc_float_to_half(((const float *)want.data)[i]));
        tc_rt_tensor_release(&y);
        tc_session_get_stats(s, &stats);
        assert_int_equal(stats.n_half_widenings, (uint64_t)run); /* x only */
        if (run == 1)
            after_first = stats.constant_bytes;
        assert_true(after_first > made); /* the packed weights, kept */
        assert_int_equal(stats.constant_bytes, after_first);
    }
    tc_session_free(s);
    tc_rt_tensor_release(&xin);
    tc_rt_tensor_release(&xf);
    tc_rt_tensor_release(&want);
    tconv_model_free(m);
    tconv_model_free(wide);
}

/* x -> op(x, constants...) -> y, the constants' values given as floats (float16 or float). */
static tconv_model *const_op_model(const char *op, tconv_dtype dtype, int x_rank,
                                   const int64_t *x_dims, size_t n_consts, const int *c_rank,
                                   const int64_t c_dims[][2], const float *const *values) {
    tconv_model *m = rtt_model(13);
    tconv_value *in[5] = {rtt_input(m->graph, "x", dtype, x_rank, x_dims)};
    static const char *const names[] = {"c1", "c2", "c3", "c4"};
    for (size_t k = 0; k < n_consts; k++) {
        size_t n = 1;
        for (int i = 0; i < c_rank[k]; i++)
            n *= (size_t)c_dims[k][i];
        uint16_t h[64];
        float f[64]; /* the float16 values, widened */
        for (size_t i = 0; i < n; i++) {
            h[i] = tc_float_to_half(values[k][i]);
            f[i] = tc_half_to_float(h[i]);
        }
        bool half = dtype == TCONV_DTYPE_FLOAT16;
        in[k + 1] = rtt_init(m->graph, names[k], dtype, c_rank[k], c_dims[k],
                             half ? (const void *)h : (const void *)f,
                             n * (half ? sizeof(uint16_t) : sizeof(float)));
    }
    rtt_node(m->graph, op, "n", in, n_consts + 1, (const char *[]){"y"}, 1);
    rtt_output(m->graph, "y");
    return m;
}

/* Gemm and (in a proof session, not folded) BatchNormalization: their float16 constants are
 * widened once too, and the result keeps the bits of the float32 computation, rounded. */
static void check_const_op(const char *op, int x_rank, const int64_t *x_dims, size_t n_consts,
                           const int *c_rank, const int64_t c_dims[][2],
                           const float *const *values) {
    tconv_model *wide =
        const_op_model(op, TCONV_DTYPE_FLOAT, x_rank, x_dims, n_consts, c_rank, c_dims, values);
    tconv_model *m =
        const_op_model(op, TCONV_DTYPE_FLOAT16, x_rank, x_dims, n_consts, c_rank, c_dims, values);
    tc_rt_tensor xf = rtt_tensor(TCONV_DTYPE_FLOAT, x_rank, x_dims, NULL);
    tc_rt_tensor xh = rtt_tensor(TCONV_DTYPE_FLOAT16, x_rank, x_dims, NULL), want, y;
    for (int64_t i = 0; i < xf.n_elements; i++) {
        ((uint16_t *)xh.data)[i] = tc_float_to_half((float)((i * 7) % 13) / 3.0f - 2.0f);
        ((float *)xf.data)[i] = tc_half_to_float(((uint16_t *)xh.data)[i]);
    }
    tc_error err;
    assert_int_equal(rtt_run(wide, &xf, 1, &want, &err), TCONV_OK);
    tc_session_options o;
    tc_session_options_init(&o);
    o.unfused = true;
    tc_session *s = NULL;
    assert_int_equal(tc_session_create(m, &o, &s, &err), TCONV_OK);
    for (int run = 1; run <= 2; run++) {
        assert_int_equal(tc_session_run(s, &xh, 1, &y, &err), TCONV_OK);
        assert_int_equal(y.n_elements, want.n_elements);
        for (int64_t i = 0; i < y.n_elements; i++)
            assert_int_equal(((const uint16_t *)y.data)[i],
                             tc_float_to_half(((const float *)want.data)[i]));
        tc_rt_tensor_release(&y);
        tc_session_stats stats;
        tc_session_get_stats(s, &stats);
        assert_int_equal(stats.n_half_widenings, (uint64_t)run);
    }
    tc_session_free(s);
    tc_rt_tensor_release(&xf);
    tc_rt_tensor_release(&xh);
    tc_rt_tensor_release(&want);
    tconv_model_free(m);
    tconv_model_free(wide);
}

static void test_float16_gemm_batchnorm_constants(void **state) {
    (void)state;
    float b[12], c[4], prm[4][3];
    for (int i = 0; i < 12; i++)
        b[i] = (float)((i * 5) % 7) / 4.0f - 0.6f;
    for (int i = 0; i < 4; i++)
        c[i] = (float)i / 8.0f - 0.2f;
    for (int i = 0; i < 3; i++) {
        prm[0][i] = 1.5f - (float)i / 4.0f;
        prm[1][i] = (float)i / 3.0f;
        prm[2][i] = 0.25f * (float)i - 0.1f;
        prm[3][i] = 0.5f + (float)i;
    }
    int64_t x_gemm[2] = {2, 3};
    int gemm_rank[2] = {2, 1};
    const int64_t gemm_dims[2][2] = {{3, 4}, {4, 0}};
    check_const_op("Gemm", 2, x_gemm, 2, gemm_rank, gemm_dims, (const float *const[]){b, c});
    int64_t x_bn[3] = {2, 3, 5};
    int bn_rank[4] = {1, 1, 1, 1};
    const int64_t bn_dims[4][2] = {{3, 0}, {3, 0}, {3, 0}, {3, 0}};
    check_const_op("BatchNormalization", 3, x_bn, 4, bn_rank, bn_dims,
                   (const float *const[]){prm[0], prm[1], prm[2], prm[3]});
}

static void test_bfloat16_conversions(void **state) {
    (void)state;
    assert_int_equal(tc_float_to_bfloat16(1.0f), 0x3f80);
    assert_int_equal(tc_float_to_bfloat16(1.0f + 0x1p-8f), 0x3f80); /* tie: to even */
    assert_int_equal(tc_float_to_bfloat16(1.0f + 0x3p-8f), 0x3f82);
    assert_int_equal(tc_float_to_bfloat16(3.4e38f), 0x7f80); /* rounds past the largest: inf */
    assert_true((tc_float_to_bfloat16(NAN) & 0x7fff) > 0x7f80);
    assert_true((tc_float_to_bfloat16(-NAN) & 0x7fff) > 0x7f80);
    assert_int_equal(tc_float_to_bfloat16(0x1p-133f), 0x0001); /* subnormal */
    assert_true(tc_bfloat16_to_float(0x3f80) == 1.0f);
    assert_int_equal(tc_double_to_bfloat16(1.0 + 0x1p-8 + 0x1p-40), 0x3f81);
}

/* y = op(a, b) on 16-bit float tensors of the given bits. */
static void run_binary(const char *op, tconv_dtype dtype, const uint16_t *a, const uint16_t *b,
                       size_t n, uint16_t *y) {
    tconv_model *m = rtt_model(14);
    int64_t d[] = {(int64_t)n};
    tconv_value *in[] = {rtt_input(m->graph, "a", dtype, 1, d),
                         rtt_input(m->graph, "b", dtype, 1, d)};
    const char *out_names[] = {"y"};
    rtt_node(m->graph, op, "n", in, 2, out_names, 1);
    rtt_output(m->graph, "y");
    tc_rt_tensor inputs[2] = {rtt_tensor(dtype, 1, d, a), rtt_tensor(dtype, 1, d, b)};
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(rtt_run(m, inputs, 2, &out, &err), TCONV_OK);
    assert_int_equal(out.dtype, dtype);
    assert_int_equal(out.n_elements, (int64_t)n);
    memcpy(y, out.data, n * sizeof *y);
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&inputs[0]);
    tc_rt_tensor_release(&inputs[1]);
    tconv_model_free(m);
}

static void test_float16_kernels_round_on_store(void **state) {
    (void)state;
    /* (1+2^-10)^2 = 1 + 2^-9 + 2^-20: rounds to 1 + 2^-9; 60000+60000 overflows to inf;
     * 3*2^-24 * 0.5 is a subnormal tie, to even; NaN stays NaN. */
    const uint16_t a[] = {0x3c01, 0x7b53, 0x0003, 0x7e00};
    const uint16_t b[] = {0x3c01, 0x3c00, 0x3800, 0x3c00};
    uint16_t y[4];
    run_binary("Mul", TCONV_DTYPE_FLOAT16, a, b, 4, y);
    assert_int_equal(y[0], 0x3c02);
    assert_int_equal(y[1], 0x7b53);
    assert_int_equal(y[2], 0x0002);
    assert_true((y[3] & 0x7fff) > 0x7c00);
    run_binary("Add", TCONV_DTYPE_FLOAT16, a, a, 4, y);
    assert_int_equal(y[1], 0x7c00);
}

static void test_bfloat16_kernels_round_on_store(void **state) {
    (void)state;
    /* 1.0078125 (0x3f81) squared = 1.01568604: between 0x3f82 (1.015625) and 0x3f83, nearer
     * 0x3f82; 3 / 7 = 0.428571: 0x3edb */
    const uint16_t a[] = {0x3f81, 0x4040};
    const uint16_t b[] = {0x3f81, 0x40e0};
    uint16_t y[2];
    run_binary("Mul", TCONV_DTYPE_BFLOAT16, a, b, 2, y);
    assert_int_equal(y[0], 0x3f82);
    run_binary("Div", TCONV_DTYPE_BFLOAT16, a, b, 2, y);
    assert_int_equal(y[1], tc_float_to_bfloat16(3.0f / 7.0f));
    assert_int_equal(y[1], 0x3edb);
}

/* Cast between every float type: double -> float16 rounds once. */
static void test_cast_between_float_types(void **state) {
    (void)state;
    int64_t d[] = {3};
    const double values[] = {1.0 + 0x1p-11 + 0x1p-40, -2.5, 1e300};
    tc_rt_tensor src = rtt_tensor(TCONV_DTYPE_DOUBLE, 1, d, values);
    tc_rt_tensor half = rtt_tensor(TCONV_DTYPE_FLOAT16, 1, d, NULL);
    tc_rt_tensor bf = rtt_tensor(TCONV_DTYPE_BFLOAT16, 1, d, NULL);
    tc_rt_tensor back = rtt_tensor(TCONV_DTYPE_DOUBLE, 1, d, NULL);
    tc_convert_elements(&src, &half);
    const uint16_t *h = half.data;
    assert_int_equal(h[0], 0x3c01);
    assert_int_equal(h[1], 0xc100);
    assert_int_equal(h[2], 0x7c00);
    tc_convert_elements(&half, &bf); /* float16 -> bfloat16 */
    const uint16_t *b = bf.data;
    assert_int_equal(b[0], 0x3f80); /* 1 + 2^-10 is a tie in bfloat16: to even */
    assert_int_equal(b[1], 0xc020);
    assert_int_equal(b[2], 0x7f80);
    tc_convert_elements(&bf, &back);
    const double *r = back.data;
    assert_true(r[0] == 1.0 && r[1] == -2.5 && isinf(r[2]));
    tc_rt_tensor_release(&src);
    tc_rt_tensor_release(&half);
    tc_rt_tensor_release(&bf);
    tc_rt_tensor_release(&back);
}

/* CastLike takes the second input's type: double -> float16 in one rounding, and back. */
static void test_cast_like(void **state) {
    (void)state;
    tconv_model *m = rtt_model(15);
    int64_t d[] = {2}, one[] = {1};
    tconv_value *in[] = {rtt_input(m->graph, "x", TCONV_DTYPE_DOUBLE, 1, d),
                         rtt_input(m->graph, "like", TCONV_DTYPE_FLOAT16, 1, one)};
    const char *out_names[] = {"y"};
    rtt_node(m->graph, "CastLike", "n", in, 2, out_names, 1);
    rtt_output(m->graph, "y");
    const double x[] = {1.0 + 0x1p-11 + 0x1p-40, -65536.0};
    const uint16_t like_bits[] = {0x3c00};
    tc_rt_tensor inputs[2] = {rtt_tensor(TCONV_DTYPE_DOUBLE, 1, d, x),
                              rtt_tensor(TCONV_DTYPE_FLOAT16, 1, one, like_bits)};
    tc_rt_tensor out;
    tc_error err;
    assert_int_equal(rtt_run(m, inputs, 2, &out, &err), TCONV_OK);
    assert_int_equal(out.dtype, TCONV_DTYPE_FLOAT16);
    const uint16_t *y = out.data;
    assert_int_equal(y[0], 0x3c01);
    assert_int_equal(y[1], 0xfc00); /* -65536 overflows float16: -inf */
    tc_rt_tensor_release(&out);
    tc_rt_tensor_release(&inputs[0]);
    tc_rt_tensor_release(&inputs[1]);
    tconv_model_free(m);
}

/* Relu takes float16/bfloat16 natively (TC_OPF_HALF_NATIVE): on every one of the 65536 bit
 * patterns it gives the bits of widening, Relu in float and rounding back (what every other op
 * gets from session_half.c), NaNs and -0 included (which becomes +0: activation.h). */
static void test_relu_half_native(void **state) {
    (void)state;
    assert_true(tc_op_half_native(tc_op_find("", "Relu", 14)));
    for (int bf16 = 0; bf16 < 2; bf16++) {
        tconv_dtype dtype = bf16 ? TCONV_DTYPE_BFLOAT16 : TCONV_DTYPE_FLOAT16;
        tconv_model *m = rtt_model(14);
        int64_t d[1] = {65536};
        tconv_value *in[] = {rtt_input(m->graph, "x", dtype, 1, d)};
        const char *out_names[] = {"y"};
        rtt_node(m->graph, "Relu", "relu", in, 1, out_names, 1);
        rtt_output(m->graph, "y");
        uint16_t *bits = malloc(65536 * sizeof *bits);
        assert_non_null(bits);
        for (int i = 0; i < 65536; i++)
            bits[i] = (uint16_t)i;
        tc_rt_tensor input = rtt_tensor(dtype, 1, d, bits), out;
        tc_error err;
        assert_int_equal(rtt_run(m, &input, 1, &out, &err), TCONV_OK);
        assert_int_equal(out.dtype, dtype);
        const uint16_t *y = out.data;
        for (int i = 0; i < 65536; i++) {
            float v = bf16 ? tc_bfloat16_to_float((uint16_t)i) : tc_half_to_float((uint16_t)i);
            v = v <= 0.0f ? 0.0f : v; /* -0 becomes +0, as onnxruntime gives it */
            uint16_t want = bf16 ? tc_float_to_bfloat16(v) : tc_float_to_half(v);
            if (y[i] != want) {
                print_error("%s 0x%04x: relu gave 0x%04x, the float round trip 0x%04x\n",
                            bf16 ? "bfloat16" : "float16", i, y[i], want);
                fail();
            }
        }
        tc_rt_tensor_release(&out);
        tc_rt_tensor_release(&input);
        free(bits);
        tconv_model_free(m);
    }
}

/* The native ops: ops.def's TC_OPF_HALF_NATIVE column, each an op with a kernel at some opset;
 * data-movement ops in, computing ops out. */
static void test_half_native_list(void **state) {
    (void)state;
    size_t n = 0;
    for (int k = 1; k < TC_KIND_COUNT; k++) {
        if (!tc_kind_has((tc_op_kind)k, TC_OPF_HALF_NATIVE))
            continue;
        n++;
        int first, last;
        if (!tc_op_kernel_span("", tc_kinds[k].name, &first, &last)) {
            print_error("%s is half-native but has no kernel\n", tc_kinds[k].name);
            fail();
        }
    }
    assert_true(n > 10);
    assert_true(tc_op_half_native(tc_op_find("", "Reshape", 14)));
    assert_true(tc_op_half_native(tc_op_find("", "Cast", 13)));
    assert_true(tc_op_half_native(tc_op_find("", "Relu", 14)));
    assert_false(tc_op_half_native(tc_op_find("", "ConvTranspose", 13)));
    assert_false(tc_op_half_native(tc_op_find("", "Add", 14)));
    assert_false(tc_op_half_native(TC_OP_NONE));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_conversions),
        cmocka_unit_test(test_bulk_half_conversions),
        cmocka_unit_test(test_float16_constants_widened_once),
        cmocka_unit_test(test_float16_gemm_batchnorm_constants),
        cmocka_unit_test(test_bfloat16_conversions),
        cmocka_unit_test(test_float16_kernels_round_on_store),
        cmocka_unit_test(test_bfloat16_kernels_round_on_store),
        cmocka_unit_test(test_cast_between_float_types),
        cmocka_unit_test(test_cast_like),
        cmocka_unit_test(test_relu_half_native),
        cmocka_unit_test(test_half_native_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
