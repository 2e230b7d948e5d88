/* QuantizeLinear / DequantizeLinear beyond ONNX's node tests (which tests/runtime/tests.cmake
 * runs as runtime.node.*): the float8/float4 conversions over every code, rounding at the range
 * ends, sub-byte packing across the runtime boundary, multi-threaded per-axis and blocked
 * layouts against a serial run, and the errors for scales that do not fit x. */
#include <math.h>

#include "kernel_harness.h"
#include "runtime/kernels/kernel_util.h"

static const tconv_dtype MINIFLOATS[] = {TCONV_DTYPE_FLOAT8E4M3FN, TCONV_DTYPE_FLOAT8E4M3FNUZ,
                                         TCONV_DTYPE_FLOAT8E5M2, TCONV_DTYPE_FLOAT8E5M2FNUZ,
                                         TCONV_DTYPE_FLOAT4E2M1};

/* Every non-NaN code decodes to a value that encodes back to the same code (negative zero of
 * the fnuz types excepted: they have none), and decoding is monotonic over positive codes. */
static void test_minifloat_round_trip(void **state) {
    (void)state;
    for (size_t f = 0; f < sizeof MINIFLOATS / sizeof MINIFLOATS[0]; f++) {
        tconv_dtype d = MINIFLOATS[f];
        int n_codes = d == TCONV_DTYPE_FLOAT4E2M1 ? 16 : 256;
        double previous = -1.0;
        for (int c = 0; c < n_codes; c++) {
            double v = tc_minifloat_to_double(d, (uint8_t)c);
            if (isnan(v) || isinf(v))
                continue;
            assert_int_equal(tc_double_to_minifloat(d, v, false), c);
            if (c < n_codes / 2) {
                assert_true(v > previous);
                previous = v;
            }
        }
    }
}

static void test_minifloat_rounding(void **state) {
    (void)state;
    const tconv_dtype e4 = TCONV_DTYPE_FLOAT8E4M3FN, e5 = TCONV_DTYPE_FLOAT8E5M2;
    assert_true(tc_minifloat_to_double(e4, 0x7E) == 448.0);
    assert_int_equal(tc_double_to_minifloat(e4, 464.0, false), 0x7E); /* tie: to even (448) */
    assert_true(isnan(tc_minifloat_to_double(e4, tc_double_to_minifloat(e4, 470.0, false))));
    assert_int_equal(tc_double_to_minifloat(e4, 1e9, true), 0x7E);
    assert_int_equal(tc_double_to_minifloat(e4, -INFINITY, true), 0xFE);
    assert_true(isinf(tc_minifloat_to_double(e5, tc_double_to_minifloat(e5, 61440.0, false))));
    assert_int_equal(tc_double_to_minifloat(e5, 61440.0, true), 0x7B);
    /* the smallest subnormal of e4m3fn is 2^-9; half of it rounds to zero (even) */
    assert_int_equal(tc_double_to_minifloat(e4, ldexp(1.0, -9), true), 0x01);
    assert_int_equal(tc_double_to_minifloat(e4, ldexp(1.0, -10), true), 0x00);
    assert_int_equal(tc_double_to_minifloat(e4, ldexp(3.0, -10), true), 0x02);
    /* float4e2m1: 3.5 ties to 4 (even), everything past 6 saturates */
    assert_int_equal(tc_double_to_minifloat(TCONV_DTYPE_FLOAT4E2M1, -3.5, false), 0x0E);
    assert_int_equal(tc_double_to_minifloat(TCONV_DTYPE_FLOAT4E2M1, 1e6, false), 0x07);
    assert_true(tc_minifloat_to_double(TCONV_DTYPE_FLOAT8E8M0, 127) == 1.0);
    assert_true(isnan(tc_minifloat_to_double(TCONV_DTYPE_FLOAT8E8M0, 0xFF)));
}

/* int4 with an odd count: unpacked (sign-extended) on the way in, packed on the way out. */
static void test_subbyte_packing(void **state) {
    (void)state;
    tc_error err;
    tconv_model *m = NULL;
    assert_int_equal(tc_model_create(&m, &err), TCONV_OK);
    const int8_t values[5] = {-8, 7, -1, 0, 3};
    tc_rt_tensor t;
    int64_t dims[1] = {5};
    assert_int_equal(tc_rt_tensor_alloc(&t, TCONV_DTYPE_INT4, 1, dims, &err), TCONV_OK);
    memcpy(t.data, values, 5);
    tconv_tensor *ir = NULL;
    assert_int_equal(tc_rt_tensor_to_ir(&t, m, "t", &ir, &err), TCONV_OK);
    const void *packed;
    size_t nbytes;
    assert_int_equal(tc_tensor_data(ir, &packed, &nbytes, &err), TCONV_OK);
    assert_int_equal(nbytes, 3);
    const uint8_t want[3] = {0x78, 0x0F, 0x03};
    assert_memory_equal(packed, want, 3);
    tc_rt_tensor back;
    assert_int_equal(tc_rt_tensor_from_ir(ir, &back, &err), TCONV_OK);
    assert_memory_equal(back.data, values, 5);
    tc_rt_tensor_release(&back);
    tc_rt_tensor_release(&t);
    tconv_model_free(m);
}

/* x [3, 40, 5] quantized along axis 1 with blocks of 7 (6 scale rows, the last block short),
 * on 4 threads: each element against the formula with its own scale and zero point. */
static void test_blocked_threads(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "QuantizeLinear", 1);
    h.opset = 21;
    h.n_threads = 4;
    kh_attr_int(&h, "axis", 1);
    kh_attr_int(&h, "block_size", 7);
    const int64_t xd[3] = {3, 40, 5}, sd[3] = {3, 6, 5};
    float x[600], scale[90];
    int8_t zp[90];
    uint64_t rng = 7;
    kh_fill_random(x, 600, &rng);
    for (int i = 0; i < 90; i++) {
        scale[i] = 0.01f * (float)(1 + i % 5);
        zp[i] = (int8_t)(i % 9 - 4);
    }
    kh_input(&h, 3, xd, x);
    kh_input(&h, 3, sd, scale);
    kh_input_typed(&h, TCONV_DTYPE_INT8, 3, sd, zp);
    kh_run_ok(&h);
    assert_int_equal(h.outputs[0].dtype, TCONV_DTYPE_INT8);
    const int8_t *y = h.outputs[0].data;
    for (int o = 0; o < 3; o++) {
        for (int j = 0; j < 40; j++) {
            for (int k = 0; k < 5; k++) {
                int s = (o * 6 + j / 7) * 5 + k, i = (o * 40 + j) * 5 + k;
                float v = nearbyintf(x[i] / scale[s]) + (float)zp[s];
                v = v < -128.0f ? -128.0f : (v > 127.0f ? 127.0f : v);
                assert_int_equal(y[i], (int)v);
            }
        }
    }
    kh_free(&h);
}

/* A scale that fits neither per-axis nor blocked quantization is an error naming both shapes;
 * so is a zero point of another shape. */
static void test_bad_scales(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "DequantizeLinear", 1);
    h.opset = 21;
    const int64_t xd[2] = {4, 6}, per_axis_wrong[1] = {5}, blocked_wrong[2] = {4, 2};
    kh_input_typed(&h, TCONV_DTYPE_UINT8, 2, xd, NULL);
    kh_input(&h, 1, per_axis_wrong, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "per-axis scale [5]"));
    kh_free(&h);

    kh_init(&h, "DequantizeLinear", 1);
    h.opset = 21;
    kh_attr_int(&h, "block_size", 2); /* 6 / 2 = 3 blocks, not 2 */
    kh_input_typed(&h, TCONV_DTYPE_UINT8, 2, xd, NULL);
    kh_input(&h, 2, blocked_wrong, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "blocked quantization"));
    kh_free(&h);

    kh_init(&h, "QuantizeLinear", 1);
    h.opset = 13;
    const int64_t scale_d[1] = {6}, zp_d[1] = {4};
    kh_input(&h, 2, xd, NULL);
    kh_input(&h, 1, scale_d, NULL);
    kh_input_typed(&h, TCONV_DTYPE_UINT8, 1, zp_d, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "zero point's shape"));
    kh_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minifloat_round_trip), cmocka_unit_test(test_minifloat_rounding),
        cmocka_unit_test(test_subbyte_packing),      cmocka_unit_test(test_blocked_threads),
        cmocka_unit_test(test_bad_scales),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
