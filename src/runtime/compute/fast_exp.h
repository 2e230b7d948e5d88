/* A vectorizable float e^x for x <= 0, and e^x - 1 from the same pieces, for kernels that apply
 * them to arrays (Sigmoid, Elu): libm's expf/expm1f are scalar calls that a loop cannot
 * vectorize (Elu's expm1f was 17% of an EnCodec decoder's instructions). */
#ifndef TC_RUNTIME_FAST_EXP_H
#define TC_RUNTIME_FAST_EXP_H

#include <stdint.h>
#include <string.h>

/* e^x = scale * (1 + q) for x in [-87, 0] (the caller clamps): Cephes' expf (x = n ln2 + r,
 * |r| <= ln2 / 2, q = r + r^2 P(r) with P of degree 5, scale = 2^n from the exponent bits),
 * within 2 ulp. Branch-free, so a loop over it vectorizes. */
static inline __attribute__((always_inline)) void tc_exp_parts_f32(float x, float *scale,
                                                                   float *q) {
    const float round_magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float n = (x * 1.44269504088896341f + round_magic) - round_magic;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    *q = p * r * r + r;
    int32_t bits = ((int32_t)n + 127) << 23;
    memcpy(scale, &bits, sizeof *scale);
}

/* e^x - 1 for x <= 0 as scale * q + (scale - 1): with n = 0 (|x| <= ln2 / 2) that is q itself,
 * so small inputs keep full relative precision (e^x - 1 computed as a difference would lose
 * it); scale - 1 is exact. Within 1 ulp of the exact value (0.97 measured, on every float of
 * [-100, -1e-5] and of [-1e-6, -1e-30]). Inputs that are not negative numbers (0,
 * positive, NaN) give 0: the caller selects x for them. Below -87 it gives e^-87 - 1 (-1 in
 * float). */
static inline __attribute__((always_inline)) float tc_expm1_nonpositive_f32(float x) {
    x = x < 0.0f ? x : 0.0f;
    x = x < -87.0f ? -87.0f : x;
    float scale, q;
    tc_exp_parts_f32(x, &scale, &q);
    return scale * q + (scale - 1.0f);
}

#endif
