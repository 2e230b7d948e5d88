/* Scalar conversions between float and the 16-bit float types (IEEE half, bfloat16), each
 * rounding once to nearest even. The dtype table (dtype.c) reads and writes elements through
 * them; the runtime's bulk float16 conversions (half_convert.c) give the same bits. */
#include "ir/dtype.h"

#include <math.h>
#include <string.h>

float tc_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {
        /* subnormal half: normalize */
        int e = -1;
        do {
            e++;
            mant <<= 1;
        } while (!(mant & 0x400u));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t tc_float_to_half(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t exp = (bits >> 23) & 0xffu;
    uint32_t mant = bits & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10)
            return sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half_mant = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half_mant & 1u)))
            half_mant++;
        return (uint16_t)(sign | half_mant);
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
        half++; /* may carry into the exponent: still correct, up to infinity */
    return (uint16_t)(sign | half);
}

uint16_t tc_double_to_half(double d) {
    return tc_float_to_half(tc_double_to_float_odd(d));
}

float tc_bfloat16_to_float(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t tc_float_to_bfloat16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((bits >> 16) | 0x40u); /* NaN stays NaN (quiet), sign kept */
    /* round to nearest even on the 16 dropped bits; a carry into the exponent is correct, up to
     * infinity, and subnormals round the same way */
    uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)((bits + rounding) >> 16);
}

uint16_t tc_double_to_bfloat16(double d) {
    return tc_float_to_bfloat16(tc_double_to_float_odd(d));
}

float tc_double_to_float_odd(double d) {
    float f = (float)d;
    if (isnan(d) || isinf(f) || (double)f == d)
        return f;
    /* inexact: truncate toward zero, then set the last bit (round to odd) so that the later
     * rounding to 16 bits sees the sticky bit and does not round twice */
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (fabs((double)f) > fabs(d))
        bits--;
    bits |= 1u;
    memcpy(&f, &bits, sizeof f);
    return f;
}
