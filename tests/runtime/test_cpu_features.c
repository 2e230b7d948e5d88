/* The one CPU-feature probe (runtime/cpu_features.h): the same answer every time, and its test
 * override, which forces the portable paths everywhere (the GEMM's ISA choice, the F16C
 * conversions, the AVX2/AVX-512 copies of the kernels), gives the results of the wide paths:
 * the same bits where the paths are exact, within float rounding where the sums run in another
 * order. */
#include <math.h>

#include "kernel_harness.h"
#include "runtime/compute/cpu_features.h"
#include "runtime/compute/gemm.h"
#include "runtime/kernels/kernel_util.h"

static void test_probe_is_stable(void **state) {
    (void)state;
    unsigned first = tc_cpu_features();
    for (int i = 0; i < 100; i++)
        assert_int_equal(tc_cpu_features(), first);
    assert_true(tc_cpu_has_avx2() == ((first & TC_CPU_AVX2) != 0));
    assert_true(tc_cpu_has_avx512() == ((first & TC_CPU_AVX512F) != 0));
    assert_true(tc_cpu_has_f16c() == ((first & TC_CPU_F16C) != 0));
    /* the GEMM asks the same probe */
    if (tc_gemm_isa_available(TCONV_GEMM_ISA_AVX2))
        assert_true(tc_cpu_has_avx2());
    if (tc_gemm_isa_available(TCONV_GEMM_ISA_AVX512))
        assert_true(tc_cpu_has_avx512());
}

static void test_override_forces_portable(void **state) {
    (void)state;
    unsigned detected = tc_cpu_features();
    tc_cpu_features_override(0);
    assert_int_equal(tc_cpu_features(), 0);
    assert_false(tc_cpu_has_avx2());
    assert_false(tc_cpu_has_avx512());
    assert_false(tc_cpu_has_f16c());
    assert_false(tc_gemm_isa_available(TCONV_GEMM_ISA_AVX2));
    assert_false(tc_gemm_isa_available(TCONV_GEMM_ISA_AVX512));
    assert_int_equal(tc_gemm_isa_for_shape(64, 64), TCONV_GEMM_ISA_PORTABLE);
    tc_cpu_features_override(TC_CPU_AVX2); /* a mask: never more than the CPU has */
    assert_int_equal(tc_cpu_features(), detected & TC_CPU_AVX2);
    tc_cpu_features_restore();
    assert_int_equal(tc_cpu_features(), detected);
}

/* Every float16 code and a spread of floats (NaN, infinities, subnormals among them). */
static void test_half_bulk_same_bits(void **state) {
    (void)state;
    enum { N = 65536 };
    static uint16_t codes[N], narrow_wide[N], narrow_portable[N];
    static float widened_wide[N], widened_portable[N], floats[N];
    for (uint32_t i = 0; i < N; i++) {
        codes[i] = (uint16_t)i;
        uint32_t bits = i * 65537u; /* every exponent, sign and many mantissas */
        memcpy(&floats[i], &bits, sizeof bits);
    }
    tc_half_to_float_n(codes, widened_wide, N);
    tc_float_to_half_n(floats, narrow_wide, N);
    tc_cpu_features_override(0);
    tc_half_to_float_n(codes, widened_portable, N);
    tc_float_to_half_n(floats, narrow_portable, N);
    tc_cpu_features_restore();
    assert_memory_equal(widened_wide, widened_portable, sizeof widened_wide);
    assert_memory_equal(narrow_wide, narrow_portable, sizeof narrow_wide);
}

/* Runs a Conv (GEMM + fused paths) and a LayerNormalization (AVX2/AVX-512 copies) once with
 * the detected features and once with none; the outputs agree to float rounding. */
static void run_conv(float *out, const float *x, const float *w, const float *b) {
    kernel_harness h;
    kh_init(&h, "Conv", 1);
    kh_input(&h, 4, (const int64_t[]){1, 8, 12, 12}, x);
    kh_input(&h, 4, (const int64_t[]){16, 8, 3, 3}, w);
    kh_input(&h, 1, (const int64_t[]){16}, b);
    kh_attr_ints(&h, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    kh_run_ok(&h);
    memcpy(out, h.outputs[0].data, h.outputs[0].nbytes);
    kh_free(&h);
}

static void run_layer_norm(float *out, const float *x, const float *scale, const float *bias) {
    kernel_harness h;
    kh_init(&h, "LayerNormalization", 1);
    kh_input(&h, 2, (const int64_t[]){4, 96}, x);
    kh_input(&h, 1, (const int64_t[]){96}, scale);
    kh_input(&h, 1, (const int64_t[]){96}, bias);
    kh_attr_int(&h, "axis", -1);
    kh_run_ok(&h);
    memcpy(out, h.outputs[0].data, h.outputs[0].nbytes);
    kh_free(&h);
}

typedef void (*three_input_run)(float *out, const float *a, const float *b, const float *c);

/* Runs `run` on random inputs of n_a, n_b, n_c floats with the detected features and with none;
 * the n_out outputs agree to float rounding. */
static void expect_agreement(three_input_run run, int64_t n_a, int64_t n_b, int64_t n_c,
                             int64_t n_out) {
    float *in = malloc(sizeof(float) * (size_t)(n_a + n_b + n_c));
    float *wide = malloc(sizeof(float) * (size_t)n_out);
    float *portable = malloc(sizeof(float) * (size_t)n_out);
    assert_true(in && wide && portable);
    uint64_t rng = 7;
    kh_fill_random(in, n_a + n_b + n_c, &rng);
    run(wide, in, in + n_a, in + n_a + n_b);
    tc_cpu_features_override(0);
    run(portable, in, in + n_a, in + n_a + n_b);
    tc_cpu_features_restore();
    kh_expect_close(portable, wide, n_out, 1e-5, 1e-5);
    free(in);
    free(wide);
    free(portable);
}

static void test_kernels_agree_without_features(void **state) {
    (void)state;
    expect_agreement(run_conv, 8 * 12 * 12, 16 * 8 * 9, 16, 16 * 12 * 12);
    expect_agreement(run_layer_norm, 4 * 96, 96, 96, 4 * 96);
}

/* Every fusable activation (the Conv epilogues' and the standalone kernels' entry points), on
 * floats of every exponent, sign and many mantissas (NaNs, infinities and subnormals among them)
 * and a sweep of ordinary values, in place and not, with and without a bias: the AVX-512, AVX2
 * and baseline copies give the same bits (C11 mode contracts no a*b+c into an FMA). */
enum { ACT_VALUES = 65536 + 4096 };

/* The activations under the detected features masked by `features` (~0u: all of them). */
static void activations_under(unsigned features, float *out) {
    static float x[ACT_VALUES];
    for (uint32_t i = 0; i < 65536; i++) {
        uint32_t bits = i * 65537u;
        memcpy(&x[i], &bits, sizeof bits);
    }
    for (int i = 0; i < 4096; i++)
        x[65536 + i] = -30.0f + 60.0f * (float)i / 4095.0f;
    tc_cpu_features_override(features);
    for (int kind = 1; kind < TC_ACTIVATION_COUNT; kind++) { /* 0: none */
        tc_kernel_activation act = {.kind = (tc_activation_kind)kind, .alpha = 0.2f, .beta = 0.6f};
        float *o = out + (size_t)kind * 3 * ACT_VALUES;
        tc_kernel_activation_apply(&act, o, x, ACT_VALUES);
        memcpy(o + ACT_VALUES, x, sizeof x);
        tc_kernel_activation_apply(&act, o + ACT_VALUES, o + ACT_VALUES, ACT_VALUES);
        tc_kernel_activation_apply_plus(&act, o + 2 * ACT_VALUES, x, 0.375f, ACT_VALUES);
    }
    tc_cpu_features_restore();
}

static void test_activations_same_bits(void **state) {
    (void)state;
    size_t n = (size_t)TC_ACTIVATION_COUNT * 3 * ACT_VALUES;
    float *detected = malloc(n * sizeof(float)), *other = malloc(n * sizeof(float));
    assert_true(detected && other);
    activations_under(~0u, detected);
    static const unsigned legs[] = {TC_CPU_AVX2 | TC_CPU_F16C, 0};
    for (size_t l = 0; l < sizeof legs / sizeof legs[0]; l++) {
        activations_under(legs[l], other);
        for (int kind = 1; kind < TC_ACTIVATION_COUNT; kind++)
            assert_memory_equal(detected + (size_t)kind * 3 * ACT_VALUES,
                                other + (size_t)kind * 3 * ACT_VALUES,
                                3 * ACT_VALUES * sizeof(float));
    }
    free(detected);
    free(other);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_is_stable),
        cmocka_unit_test(test_override_forces_portable),
        cmocka_unit_test(test_half_bulk_same_bits),
        cmocka_unit_test(test_kernels_agree_without_features),
        cmocka_unit_test(test_activations_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
