/* The dtype traits table (dtype.h), the accessors behind it, the 16-bit float conversions, and
 * the overflow-checked size arithmetic of shapes. */
#include "ir/ir.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------- 16-bit floats */

/* Scalar conversions between float and the 16-bit float types (IEEE half, bfloat16), each
 * rounding once to nearest even; in this file so that the table's readers inline them. The
 * runtime's bulk float16 conversions (half_convert.c) give the same bits. */

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

/* ---------------------------------------------------------------- element accessors */

/* A float truncated and saturated to [lo, hi] as a 64-bit two's complement pattern (NaN is 0):
 * how Cast and every generic store turn a float into an integer. */
static uint64_t saturated_bits(double v, double lo, double hi) {
    if (isnan(v))
        return 0;
    v = trunc(v < lo ? lo : (v > hi ? hi : v));
    if (v >= 9223372036854775808.0)
        return (uint64_t)v;
    return (uint64_t)(int64_t)(v >= -9223372036854775808.0 ? v : -9223372036854775808.0);
}

/* Native integers: get/set through their C type; a float stores truncated and saturated. */
#define TC_INT_ACCESSORS(tag, ctype, extend, lo, hi)                                               \
    static double get_f64_##tag(const void *data, int64_t i) {                                     \
        return (double)((const ctype *)data)[i];                                                   \
    }                                                                                              \
    static uint64_t get_bits_##tag(const void *data, int64_t i) {                                  \
        return (uint64_t)(extend)((const ctype *)data)[i];                                         \
    }                                                                                              \
    static void set_bits_##tag(void *data, int64_t i, uint64_t bits) {                             \
        ((ctype *)data)[i] = (ctype)bits;                                                          \
    }                                                                                              \
    static void set_f64_##tag(void *data, int64_t i, double v) {                                   \
        set_bits_##tag(data, i, saturated_bits(v, lo, hi));                                        \
    }

TC_INT_ACCESSORS(i8, int8_t, int64_t, -128.0, 127.0)
TC_INT_ACCESSORS(u8, uint8_t, uint64_t, 0.0, 255.0)
TC_INT_ACCESSORS(i16, int16_t, int64_t, -32768.0, 32767.0)
TC_INT_ACCESSORS(u16, uint16_t, uint64_t, 0.0, 65535.0)
TC_INT_ACCESSORS(i32, int32_t, int64_t, -2147483648.0, 2147483647.0)
TC_INT_ACCESSORS(u32, uint32_t, uint64_t, 0.0, 4294967295.0)
/* the largest doubles below 2^63 and 2^64: the bounds themselves are not representable */
TC_INT_ACCESSORS(i64, int64_t, int64_t, -9223372036854775808.0, 9223372036854774784.0)
TC_INT_ACCESSORS(u64, uint64_t, uint64_t, 0.0, 18446744073709549568.0)

/* Sub-byte integers: a byte an element, int4/int2 sign-extended. A pattern keeps its low bits
 * (floats are truncated first, not saturated), as ml_dtypes converts. */
static uint8_t wrap_subbyte(unsigned width, bool is_signed, uint64_t bits) {
    unsigned mask = (1u << width) - 1u, v = (unsigned)bits & mask;
    if (is_signed && (v >> (width - 1)))
        v |= ~mask;
    return (uint8_t)v;
}

#define TC_SUBBYTE_ACCESSORS(tag, width, is_signed)                                                \
    static void set_bits_##tag(void *data, int64_t i, uint64_t bits) {                             \
        ((uint8_t *)data)[i] = wrap_subbyte(width, is_signed, bits);                               \
    }                                                                                              \
    static void set_f64_##tag(void *data, int64_t i, double v) {                                   \
        set_bits_##tag(data, i, saturated_bits(v, -9223372036854775808.0, 9223372036854774784.0)); \
    }

TC_SUBBYTE_ACCESSORS(i4, 4, true)
TC_SUBBYTE_ACCESSORS(u4, 4, false)
TC_SUBBYTE_ACCESSORS(i2, 2, true)
TC_SUBBYTE_ACCESSORS(u2, 2, false)

static double get_f64_bool(const void *data, int64_t i) {
    return ((const uint8_t *)data)[i] != 0;
}
static uint64_t get_bits_bool(const void *data, int64_t i) {
    return ((const uint8_t *)data)[i] != 0;
}
static void set_bits_bool(void *data, int64_t i, uint64_t bits) {
    ((uint8_t *)data)[i] = bits != 0;
}
static void set_f64_bool(void *data, int64_t i, double v) {
    ((uint8_t *)data)[i] = v != 0.0; /* NaN is true, as C's (bool)NaN */
}

static double get_f64_f32(const void *data, int64_t i) {
    return ((const float *)data)[i];
}
static void set_f64_f32(void *data, int64_t i, double v) {
    ((float *)data)[i] = (float)v;
}
static double get_f64_f64(const void *data, int64_t i) {
    return ((const double *)data)[i];
}
static void set_f64_f64(void *data, int64_t i, double v) {
    ((double *)data)[i] = v;
}
static double get_f64_f16(const void *data, int64_t i) {
    return tc_half_to_float(((const uint16_t *)data)[i]);
}
static void set_f64_f16(void *data, int64_t i, double v) {
    ((uint16_t *)data)[i] = tc_double_to_half(v);
}
static double get_f64_bf16(const void *data, int64_t i) {
    return tc_bfloat16_to_float(((const uint16_t *)data)[i]);
}
static void set_f64_bf16(void *data, int64_t i, double v) {
    ((uint16_t *)data)[i] = tc_double_to_bfloat16(v);
}

/* float8/float4 codes, a byte an element; a float stores saturated (Cast's default). */
#define TC_MINIFLOAT_ACCESSORS(tag, dtype)                                                         \
    static double get_f64_##tag(const void *data, int64_t i) {                                     \
        return tc_minifloat_to_double(dtype, ((const uint8_t *)data)[i]);                          \
    }                                                                                              \
    static void set_f64_##tag(void *data, int64_t i, double v) {                                   \
        ((uint8_t *)data)[i] = tc_double_to_minifloat(dtype, v, true);                             \
    }

TC_MINIFLOAT_ACCESSORS(e4m3fn, TCONV_DTYPE_FLOAT8E4M3FN)
TC_MINIFLOAT_ACCESSORS(e4m3fnuz, TCONV_DTYPE_FLOAT8E4M3FNUZ)
TC_MINIFLOAT_ACCESSORS(e5m2, TCONV_DTYPE_FLOAT8E5M2)
TC_MINIFLOAT_ACCESSORS(e5m2fnuz, TCONV_DTYPE_FLOAT8E5M2FNUZ)
TC_MINIFLOAT_ACCESSORS(e2m1, TCONV_DTYPE_FLOAT4E2M1)
TC_MINIFLOAT_ACCESSORS(e8m0, TCONV_DTYPE_FLOAT8E8M0)

/* ---------------------------------------------------------------- the table */

#define K(kind) TC_DTYPE_KIND_##kind
#define F(field) TC_PROTO_FIELD_##field
#define FLOAT_ROW(name, bits, size, field, tag)                                                    \
    {                                                                                              \
        name, bits, size, K(FLOAT), false, false, F(field), 0.0, 0.0, get_f64_##tag,               \
            set_f64_##tag, NULL, NULL                                                              \
    }
#define INT_ROW(name, bits, kind, field, tag, lo, hi)                                              \
    {                                                                                              \
        name, bits, (bits) / 8, K(kind), false, false, F(field), lo, hi, get_f64_##tag,            \
            set_f64_##tag, get_bits_##tag, set_bits_##tag                                          \
    }
/* sub-byte integers read as int8/uint8 bytes */
#define SUBBYTE_ROW(name, bits, kind, tag, byte_tag, lo, hi)                                       \
    {                                                                                              \
        name, bits, 1, K(kind), true, false, F(INT32), lo, hi, get_f64_##byte_tag, set_f64_##tag,  \
            get_bits_##byte_tag, set_bits_##tag                                                    \
    }
#define MINIFLOAT_ROW(name, bits, tag)                                                             \
    {                                                                                              \
        name, bits, 1, K(FLOAT), (bits) < 8, true, F(INT32), 0.0, 0.0, get_f64_##tag,              \
            set_f64_##tag, NULL, NULL                                                              \
    }

const tc_dtype_traits tc_dtype_traits_table[TC_DTYPE_MAX + 1] = {
    [TCONV_DTYPE_UNDEFINED] = {"undefined", 0, 0, K(NONE), false, false, F(NONE), 0.0, 0.0, NULL,
                               NULL, NULL, NULL},
    [TCONV_DTYPE_FLOAT] = FLOAT_ROW("float", 32, 4, FLOAT, f32),
    [TCONV_DTYPE_UINT8] = INT_ROW("uint8", 8, UNSIGNED, INT32, u8, 0.0, 255.0),
    [TCONV_DTYPE_INT8] = INT_ROW("int8", 8, SIGNED, INT32, i8, -128.0, 127.0),
    [TCONV_DTYPE_UINT16] = INT_ROW("uint16", 16, UNSIGNED, INT32, u16, 0.0, 65535.0),
    [TCONV_DTYPE_INT16] = INT_ROW("int16", 16, SIGNED, INT32, i16, -32768.0, 32767.0),
    [TCONV_DTYPE_INT32] = INT_ROW("int32", 32, SIGNED, INT32, i32, -2147483648.0, 2147483647.0),
    [TCONV_DTYPE_INT64] =
        INT_ROW("int64", 64, SIGNED, INT64, i64, -9223372036854775808.0, 9223372036854774784.0),
    [TCONV_DTYPE_STRING] = {"string", 0, 0, K(STRING), false, false, F(STRING), 0.0, 0.0, NULL,
                            NULL, NULL, NULL},
    [TCONV_DTYPE_BOOL] = {"bool", 8, 1, K(BOOL), false, false, F(INT32), 0.0, 1.0, get_f64_bool,
                          set_f64_bool, get_bits_bool, set_bits_bool},
    [TCONV_DTYPE_FLOAT16] = FLOAT_ROW("float16", 16, 2, INT32, f16),
    [TCONV_DTYPE_DOUBLE] = FLOAT_ROW("double", 64, 8, DOUBLE, f64),
    [TCONV_DTYPE_UINT32] = INT_ROW("uint32", 32, UNSIGNED, UINT64, u32, 0.0, 4294967295.0),
    [TCONV_DTYPE_UINT64] =
        INT_ROW("uint64", 64, UNSIGNED, UINT64, u64, 0.0, 18446744073709549568.0),
    /* complex: no runtime storage (size 0); float pairs in the float/double fields */
    [TCONV_DTYPE_COMPLEX64] = {"complex64", 64, 0, K(COMPLEX), false, false, F(FLOAT), 0.0, 0.0,
                               NULL, NULL, NULL, NULL},
    [TCONV_DTYPE_COMPLEX128] = {"complex128", 128, 0, K(COMPLEX), false, false, F(DOUBLE), 0.0, 0.0,
                                NULL, NULL, NULL, NULL},
    [TCONV_DTYPE_BFLOAT16] = FLOAT_ROW("bfloat16", 16, 2, INT32, bf16),
    [TCONV_DTYPE_FLOAT8E4M3FN] = MINIFLOAT_ROW("float8e4m3fn", 8, e4m3fn),
    [TCONV_DTYPE_FLOAT8E4M3FNUZ] = MINIFLOAT_ROW("float8e4m3fnuz", 8, e4m3fnuz),
    [TCONV_DTYPE_FLOAT8E5M2] = MINIFLOAT_ROW("float8e5m2", 8, e5m2),
    [TCONV_DTYPE_FLOAT8E5M2FNUZ] = MINIFLOAT_ROW("float8e5m2fnuz", 8, e5m2fnuz),
    [TCONV_DTYPE_UINT4] = SUBBYTE_ROW("uint4", 4, UNSIGNED, u4, u8, 0.0, 15.0),
    [TCONV_DTYPE_INT4] = SUBBYTE_ROW("int4", 4, SIGNED, i4, i8, -8.0, 7.0),
    [TCONV_DTYPE_FLOAT4E2M1] = MINIFLOAT_ROW("float4e2m1", 4, e2m1),
    [TCONV_DTYPE_FLOAT8E8M0] = MINIFLOAT_ROW("float8e8m0", 8, e8m0),
    [TCONV_DTYPE_UINT2] = SUBBYTE_ROW("uint2", 2, UNSIGNED, u2, u8, 0.0, 3.0),
    [TCONV_DTYPE_INT2] = SUBBYTE_ROW("int2", 2, SIGNED, i2, i8, -2.0, 1.0),
};

bool tc_dtype_is_known(int dtype) {
    return dtype > TCONV_DTYPE_UNDEFINED && dtype <= TC_DTYPE_MAX;
}

const char *tconv_dtype_name(int dtype) {
    return tc_dtype_traits_of(dtype)->name;
}

int tc_dtype_bits(int dtype) {
    return tc_dtype_traits_of(dtype)->bits;
}

bool tc_dtype_is_half(tconv_dtype dtype) {
    const tc_dtype_traits *t = tc_dtype_traits_of(dtype);
    return t->kind == TC_DTYPE_KIND_FLOAT && t->bits == 16;
}

bool tc_dtype_is_minifloat(tconv_dtype dtype) {
    return tc_dtype_traits_of(dtype)->minifloat;
}

bool tc_dtype_is_subbyte(tconv_dtype dtype) {
    return tc_dtype_traits_of(dtype)->subbyte;
}

bool tc_range_count_i64(int64_t start, int64_t limit, int64_t delta, int64_t *out) {
    if (delta == 0)
        return false;
    /* in uint64: limit - start + delta - 1 overflows int64 */
    uint64_t span = 0, step = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;
    if (delta > 0 && limit > start)
        span = (uint64_t)limit - (uint64_t)start;
    else if (delta < 0 && limit < start)
        span = (uint64_t)start - (uint64_t)limit;
    uint64_t count = span ? (span - 1) / step + 1 : 0;
    if (count > (uint64_t)INT64_MAX)
        return false;
    *out = (int64_t)count;
    return true;
}

bool tc_split_sizes_cut(const int64_t *sizes, size_t n, int64_t dim) {
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (sizes[i] < 0 || !tc_add_i64(sum, sizes[i], &sum))
            return false;
    }
    return dim < 0 || sum == dim;
}

bool tc_dtype_storage_bytes(int dtype, int64_t n_elements, size_t *out_bytes) {
    int bits = tc_dtype_bits(dtype);
    int64_t total_bits;
    if (bits == 0 || n_elements < 0 || !tc_mul_i64(n_elements, bits, &total_bits))
        return false;
    uint64_t bytes = ((uint64_t)total_bits + 7u) / 8u;
    if (bytes > SIZE_MAX)
        return false;
    *out_bytes = (size_t)bytes;
    return true;
}
