/* The 8-bit and 4-bit float types of ONNX (float8e4m3fn, float8e4m3fnuz, float8e5m2,
 * float8e5m2fnuz, float8e8m0, float4e2m1) and the sub-byte integers (int4, uint4, int2, uint2).
 * The runtime stores each of their elements in one byte: the float code in the low bits, the
 * integers as int8/uint8 values; TensorProto's packed layout (two 4-bit or four 2-bit elements a
 * byte, the first in the low bits) is unpacked when a tensor enters the runtime and packed when
 * one leaves it (rt_tensor.c). The dtype table (dtype.c) reads and writes elements through here.
 *
 * Conversions follow ONNX's Cast tables (onnx/defs/doc_strings.h, "float 8"): one rounding to
 * nearest even; with saturate, values past the largest finite one (infinity included) become it,
 * without, float8e5m2 overflows to infinity and the others (which have no infinity) to NaN.
 * float4e2m1 has neither infinity nor NaN: it always saturates, and NaN becomes 0x8 (negative
 * zero), as ml_dtypes (which ONNX's reference and test data use) converts it. */
#include "ir/dtype.h"

#include <math.h>

typedef struct minifloat_format {
    int exp_bits, man_bits, bias;
    bool ieee;   /* the top exponent holds infinity and NaNs (float8e5m2) */
    bool fn;     /* only all-ones is NaN, no infinity (float8e4m3fn) */
    bool uz;     /* 0x80 is the only NaN, no negative zero, no infinity (the fnuz types) */
    double max;  /* largest finite value */
    uint8_t nan; /* the code a NaN converts to */
} minifloat_format;

static const minifloat_format E4M3FN = {4, 3, 7, false, true, false, 448.0, 0x7F};
static const minifloat_format E4M3FNUZ = {4, 3, 8, false, false, true, 240.0, 0x80};
static const minifloat_format E5M2 = {5, 2, 15, true, false, false, 57344.0, 0x7E};
static const minifloat_format E5M2FNUZ = {5, 2, 16, false, false, true, 57344.0, 0x80};
static const minifloat_format E2M1 = {2, 1, 1, false, false, false, 6.0, 0x08};

static const minifloat_format *format_of(tconv_dtype dtype) {
    switch (dtype) {
    case TCONV_DTYPE_FLOAT8E4M3FN:
        return &E4M3FN;
    case TCONV_DTYPE_FLOAT8E4M3FNUZ:
        return &E4M3FNUZ;
    case TCONV_DTYPE_FLOAT8E5M2:
        return &E5M2;
    case TCONV_DTYPE_FLOAT8E5M2FNUZ:
        return &E5M2FNUZ;
    case TCONV_DTYPE_FLOAT4E2M1:
        return &E2M1;
    default:
        return NULL;
    }
}

/* float8e8m0: an exponent only, 2^(code - 127); 0xFF is NaN. */
static double e8m0_to_double(uint8_t code) {
    return code == 0xFF ? NAN : ldexp(1.0, (int)code - 127);
}

double tc_minifloat_to_double(tconv_dtype dtype, uint8_t code) {
    const minifloat_format *f = format_of(dtype);
    if (!f)
        return dtype == TCONV_DTYPE_FLOAT8E8M0 ? e8m0_to_double(code) : 0.0;
    int width = 1 + f->exp_bits + f->man_bits;
    unsigned sign = (code >> (width - 1)) & 1u;
    unsigned exp = (code >> f->man_bits) & ((1u << f->exp_bits) - 1u);
    unsigned man = code & ((1u << f->man_bits) - 1u);
    if (f->uz && code == 0x80)
        return NAN;
    if (f->fn && (code & 0x7F) == 0x7F)
        return NAN;
    if (f->ieee && exp == (1u << f->exp_bits) - 1u)
        return man ? NAN : (sign ? -INFINITY : INFINITY);
    double v = exp == 0 ? ldexp((double)man, 1 - f->bias - f->man_bits)
                        : ldexp(1.0 + ldexp((double)man, -f->man_bits), (int)exp - f->bias);
    return sign ? -v : v;
}

/* The code of a finite value the format holds exactly (|v| <= max). */
static uint8_t encode_exact(const minifloat_format *f, bool negative, double a) {
    int width = 1 + f->exp_bits + f->man_bits;
    uint8_t sign = (uint8_t)(negative && !(f->uz && a == 0.0) ? 1u << (width - 1) : 0u);
    if (a == 0.0)
        return sign;
    int e;
    (void)frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    e -= 1;             /* a = 1.x * 2^e */
    unsigned exp, man;
    if (e < 1 - f->bias) { /* subnormal */
        exp = 0;
        man = (unsigned)ldexp(a, f->bias - 1 + f->man_bits);
    } else {
        exp = (unsigned)(e + f->bias);
        man = (unsigned)(ldexp(a, f->man_bits - e) - ldexp(1.0, f->man_bits));
    }
    return (uint8_t)(sign | (exp << f->man_bits) | man);
}

uint8_t tc_double_to_minifloat(tconv_dtype dtype, double v, bool saturate) {
    const minifloat_format *f = format_of(dtype);
    if (!f) /* float8e8m0 is never a conversion target here (kernels refuse it) */
        return 0xFF;
    int width = 1 + f->exp_bits + f->man_bits;
    uint8_t sign_bit = (uint8_t)(1u << (width - 1));
    if (isnan(v))
        return f->nan;
    bool negative = signbit(v) != 0;
    double a = fabs(v);
    bool saturating = saturate || f == &E2M1;
    if (!isinf(a)) {
        /* one rounding to nearest even at the quantum of a's binade (subnormals share the
         * smallest normal binade's quantum); a / quantum is exact in double */
        int e;
        (void)frexp(a, &e);
        e -= 1;
        if (e < 1 - f->bias)
            e = 1 - f->bias;
        double rounded = ldexp(nearbyint(ldexp(a, f->man_bits - e)), e - f->man_bits);
        if (rounded <= f->max)
            return encode_exact(f, negative, rounded);
    }
    if (saturating)
        return encode_exact(f, negative, f->max);
    if (f->ieee) /* infinity */
        return (uint8_t)((negative ? sign_bit : 0u) | 0x7Cu);
    return f->nan;
}
