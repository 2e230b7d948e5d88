/* A vectorizable float tanh, for kernels that apply it to arrays (Tanh, the recurrent layers'
 * gates). */
#ifndef TC_RUNTIME_FAST_TANH_H
#define TC_RUNTIME_FAST_TANH_H

#include <math.h>

/* tanh as the rational function Eigen uses for float (p(x)/q(x), degrees 13 and 6, on
 * [-7.9, 7.9]; beyond, float tanh is +-1 within 3e-7): within 4e-7 relative of the exact value
 * (tanhf: 1.5e-7), branch-free so the loop vectorizes, where libm's tanhf is a scalar call that
 * dominated a DCGAN generator's last layer. NaN stays NaN; tiny inputs (and -0) pass through. */
static inline float tc_tanh_f32(float x) {
    const float limit = 7.90531110763549805f;
    float c = x > limit ? limit : (x < -limit ? -limit : x);
    float x2 = c * c;
    float p = -2.76076847742355e-16f;
    p = p * x2 + 2.00018790482477e-13f;
    p = p * x2 - 8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    float q = 1.19825839466702e-06f;
    q = q * x2 + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    float r = p * c / q;
    return fabsf(x) < 0.0004f ? x : r;
}

#endif
