/* The elementwise activations, one scalar function each: tc_act_<fn>f for float, tc_act_<fn> for
 * double (libm's naming, so a kernel written over the element type calls tc_act_<fn>##F). The
 * standalone kernels (kernels_elementwise.c, kernels_math.c), the epilogues fused into Conv and
 * ConvTranspose (tc_kernel_activation_apply) and the recurrent layers' gate functions
 * (kernels_rnn.c) all call these, so an activation has one numerics wherever it runs.
 *
 * Every function takes (v, alpha, beta), its parameters or ignored, so that an activation ops.def
 * marks fusable (ACT(fn, cost) on its TC_KIND line) plugs into the epilogue by its name alone.
 * Always inlined and branch-free where the loop must vectorize. NaN stays NaN through each. */
#ifndef TC_RUNTIME_ACTIVATION_H
#define TC_RUNTIME_ACTIVATION_H

#include <math.h>

#include "runtime/compute/compute.h"

#define TC_ACT_INLINE static inline __attribute__((always_inline))

/* max(0, v), a NaN kept; -0 becomes +0, as onnxruntime's (MLAS's max against +0) and ONNX's
 * reference (np.clip on float32) give it. That makes Relu commute with rounding to
 * float16/bfloat16 bit for bit (a tiny negative rounds to -0, which Relu then makes +0, as it
 * makes the negative itself): ops.def's TC_OPF_ROUNDING_COMMUTES. */
TC_ACT_INLINE float tc_act_reluf(float v, float alpha, float beta) {
    (void)alpha, (void)beta;
    return v <= 0.0f ? 0.0f : v;
}
TC_ACT_INLINE double tc_act_relu(double v, double alpha, double beta) {
    (void)alpha, (void)beta;
    return v <= 0.0 ? 0.0 : v;
}

TC_ACT_INLINE float tc_act_leaky_reluf(float v, float alpha, float beta) {
    (void)beta;
    return v < 0.0f ? alpha * v : v;
}
TC_ACT_INLINE double tc_act_leaky_relu(double v, double alpha, double beta) {
    (void)beta;
    return v < 0.0 ? alpha * v : v;
}

/* min(max(v, lo), hi) with [lo, hi] = [alpha, beta], as numpy: with lo > hi every element
 * becomes hi. */
TC_ACT_INLINE float tc_act_clipf(float v, float alpha, float beta) {
    float t = v < alpha ? alpha : v;
    return t > beta ? beta : t;
}
TC_ACT_INLINE double tc_act_clip(double v, double alpha, double beta) {
    double t = v < alpha ? alpha : v;
    return t > beta ? beta : t;
}

/* e^x for x <= 0 (NaN not allowed), branch-free (fast_exp.h); below -87 it gives e^-87, a
 * difference under 2e-38. */
TC_ACT_INLINE float tc_act_exp_nonpositivef(float x) {
    x = x < -87.0f ? -87.0f : x;
    float scale, q;
    tc_exp_parts_f32(x, &scale, &q);
    return (q + 1.0f) * scale;
}

/* 1 / (1 + e^-v) as e / (1 + e) or 1 / (1 + e) with e = e^-|v|: no overflow, full relative
 * precision for large negative v (down to -87; e^-87 below, 0 past -104). */
TC_ACT_INLINE float tc_act_sigmoidf(float v, float alpha, float beta) {
    (void)alpha, (void)beta;
    float a = v < 0.0f ? -v : v;
    float e = tc_act_exp_nonpositivef(a == a ? -a : 0.0f);
    float s = 1.0f / (1.0f + e);
    float y = v >= 0.0f ? s : (v < -104.0f ? 0.0f : e * s); /* float's e^-104: 0 */
    return v == v ? y : v;
}
/* The same split in double, through libm's exp. */
TC_ACT_INLINE double tc_act_sigmoid(double v, double alpha, double beta) {
    (void)alpha, (void)beta;
    return v >= 0.0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v));
}

/* float: the rational tanh of fast_tanh.h (vectorizes); double: libm, exact to an ulp. */
TC_ACT_INLINE float tc_act_tanhf(float v, float alpha, float beta) {
    (void)alpha, (void)beta;
    return tc_tanh_f32(v);
}
TC_ACT_INLINE double tc_act_tanh(double v, double alpha, double beta) {
    (void)alpha, (void)beta;
    return tanh(v);
}

/* max(0, min(1, alpha v + beta)); the product and sum rounded as written (C11 contracts no
 * a*b+c into an FMA). */
TC_ACT_INLINE float tc_act_hard_sigmoidf(float v, float alpha, float beta) {
    float y = alpha * v + beta;
    y = y < 0.0f ? 0.0f : y;
    return y > 1.0f ? 1.0f : y;
}
TC_ACT_INLINE double tc_act_hard_sigmoid(double v, double alpha, double beta) {
    double y = alpha * v + beta;
    y = y < 0.0 ? 0.0 : y;
    return y > 1.0 ? 1.0 : y;
}

/* v < 0: alpha (e^v - 1), else v. float through fast_exp.h's expm1 (within 1 ulp of expm1f,
 * vectorizes), double through libm's expm1 (e^v - 1 as a difference loses small v's digits). */
TC_ACT_INLINE float tc_act_eluf(float v, float alpha, float beta) {
    (void)beta;
    return v < 0.0f ? alpha * tc_expm1_nonpositive_f32(v) : v;
}
TC_ACT_INLINE double tc_act_elu(double v, double alpha, double beta) {
    (void)beta;
    return v < 0.0 ? alpha * expm1(v) : v;
}

/* log(1 + e^v) without overflow: v + log1p(e^-v) for v > 0. */
TC_ACT_INLINE float tc_act_softplusf(float v, float alpha, float beta) {
    (void)alpha, (void)beta;
    return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
}
TC_ACT_INLINE double tc_act_softplus(double v, double alpha, double beta) {
    (void)alpha, (void)beta;
    return v > 0.0 ? v + log1p(exp(-v)) : log1p(exp(v));
}

TC_ACT_INLINE float tc_act_softsignf(float v, float alpha, float beta) {
    (void)alpha, (void)beta;
    return v / (1.0f + fabsf(v));
}
TC_ACT_INLINE double tc_act_softsign(double v, double alpha, double beta) {
    (void)alpha, (void)beta;
    return v / (1.0 + fabs(v));
}

/* v where v > alpha, else 0. */
TC_ACT_INLINE float tc_act_thresholded_reluf(float v, float alpha, float beta) {
    (void)beta;
    return v > alpha ? v : 0.0f;
}
TC_ACT_INLINE double tc_act_thresholded_relu(double v, double alpha, double beta) {
    (void)beta;
    return v > alpha ? v : 0.0;
}

#endif
