/* The dtype traits table: what every element type is, in one place (ggml's type_traits).
 *
 * One row per tconv_dtype (the ONNX TensorProto.DataType numbers, so the row's index is also its
 * proto value): its name, its storage bits in a TensorProto (packed for the sub-byte types), the
 * bytes an element takes in the runtime (a byte for the sub-byte types; 0 where the runtime
 * stores none), its kind, the typed TensorProto field that holds it, and the per-element
 * readers and writers every generic loop goes through (Cast, constant folding, data-set files,
 * parameters read by kernels). Code asks the table instead of switching over dtypes; a switch
 * over dtypes stays only where the cases run different algorithms (a kernel per dtype).
 *
 * The scalar float16/bfloat16/float8/float4 converters live here too (dtype.c,
 * minifloat.c); the runtime's bulk float16 paths (half_convert.c, F16C) give their bits. */
#ifndef TC_IR_DTYPE_H
#define TC_IR_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tconv/types.h"

/* tconv_dtype (ONNX TensorProto.DataType, same numbers) is public: tconv/types.h. */
#define TC_DTYPE_MAX 26

typedef enum tc_dtype_kind {
    TC_DTYPE_KIND_NONE = 0, /* undefined */
    TC_DTYPE_KIND_FLOAT,    /* float, double, float16, bfloat16, float8, float4 */
    TC_DTYPE_KIND_SIGNED,   /* int2 .. int64 */
    TC_DTYPE_KIND_UNSIGNED, /* uint2 .. uint64 */
    TC_DTYPE_KIND_BOOL,
    TC_DTYPE_KIND_COMPLEX,
    TC_DTYPE_KIND_STRING
} tc_dtype_kind;

/* The TensorProto typed field that holds a dtype's values when raw_data is absent. */
typedef enum tc_proto_field {
    TC_PROTO_FIELD_NONE = 0,
    TC_PROTO_FIELD_FLOAT,
    TC_PROTO_FIELD_INT32, /* every type of 16 bits or fewer, bool, int32 */
    TC_PROTO_FIELD_STRING,
    TC_PROTO_FIELD_INT64,
    TC_PROTO_FIELD_DOUBLE,
    TC_PROTO_FIELD_UINT64
} tc_proto_field;

typedef struct tc_dtype_traits {
    const char *name; /* "float", "int64", ... */
    int bits;         /* TensorProto bits an element (4 for int4); 0: string/undefined */
    size_t size;      /* runtime bytes an element (1 for sub-byte); 0: not stored */
    tc_dtype_kind kind;
    bool subbyte;         /* packed in a TensorProto (int4, uint4, int2, uint2, float4e2m1) */
    bool minifloat;       /* a float8/float4 code, a byte an element (minifloat.c) */
    tc_proto_field field; /* typed TensorProto field */
    double min, max;      /* integers and bool: the values the type holds */
    /* Runtime element i of data as a double (integers past 2^53 round). NULL where size is 0. */
    double (*get_f64)(const void *data, int64_t i);
    /* Stores v as element i: floats round once to nearest even (float8 saturate; float16 and
     * bfloat16 from double in one rounding), integers truncate and saturate (NaN is 0), bool
     * is v != 0. */
    void (*set_f64)(void *data, int64_t i, double v);
    /* Integers and bool: element i as a 64-bit two's complement pattern (sign- or
     * zero-extended), and the low bits of a pattern stored (int4/int2 sign-extended into
     * their byte). NULL for other kinds. */
    uint64_t (*get_bits)(const void *data, int64_t i);
    void (*set_bits)(void *data, int64_t i, uint64_t bits);
} tc_dtype_traits;

/* The rows, indexed by tconv_dtype; read them through tc_dtype_traits_of. */
extern const tc_dtype_traits tc_dtype_traits_table[TC_DTYPE_MAX + 1];

/* The row of dtype; the "undefined" row (no size, no accessors) for numbers outside the enum.
 * Inline: element loops look it up per element. */
static inline const tc_dtype_traits *tc_dtype_traits_of(int dtype) {
    return &tc_dtype_traits_table[(dtype >= 0 && dtype <= TC_DTYPE_MAX) ? dtype
                                                                        : TCONV_DTYPE_UNDEFINED];
}

/* "float", "int64", ...; "undefined" for unknown numbers. */
const char *tconv_dtype_name(int dtype);
/* Storage size of one element in bits (4 for int4, 2 for int2, 0 for string/undefined). */
int tc_dtype_bits(int dtype);
bool tc_dtype_is_known(int dtype);
/* Bytes that n elements take in raw_data (sub-byte types are packed); false on overflow. */
bool tc_dtype_storage_bytes(int dtype, int64_t n_elements, size_t *out_bytes);
/* The float8/float4 types (float8e8m0 included) and the sub-byte types (int4, uint4, int2,
 * uint2, float4e2m1), which TensorProto packs and the runtime stores a byte an element. */
bool tc_dtype_is_minifloat(tconv_dtype dtype);
bool tc_dtype_is_subbyte(tconv_dtype dtype);
/* The table's 16-bit floats (float16, bfloat16): the runtime computes them in float32 (widened
 * exactly, results rounded back). */
bool tc_dtype_is_half(tconv_dtype dtype);

/* IEEE half <-> float conversions (round to nearest even). */
float tc_half_to_float(uint16_t h);
uint16_t tc_float_to_half(float f);
/* bfloat16 <-> float (round to nearest even; NaN stays NaN, overflow goes to infinity). */
float tc_bfloat16_to_float(uint16_t b);
uint16_t tc_float_to_bfloat16(float f);
/* double -> 16-bit floats with one rounding (not double -> float -> half, which can round
 * twice): through tc_double_to_float_odd, float rounded to odd when inexact. */
uint16_t tc_double_to_half(double d);
uint16_t tc_double_to_bfloat16(double d);
float tc_double_to_float_odd(double d);

/* The value of a float8/float4 code (NaN and infinities as the format has them). */
double tc_minifloat_to_double(tconv_dtype dtype, uint8_t code);
/* v rounded once to nearest even into a float8/float4 type (not float8e8m0). saturate: values
 * past the largest finite one, infinities included, become it; else float8e5m2 overflows to
 * infinity and the other float8 types to NaN. float4e2m1 always saturates. */
uint8_t tc_double_to_minifloat(tconv_dtype dtype, double v, bool saturate);

#endif
