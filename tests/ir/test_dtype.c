/* The dtype traits table (ir/dtype.h): every row consistent (size, bits, kind, field, range,
 * accessors), and every element reader/writer round-trips, with the edge values of each format:
 * NaN, infinities, subnormals, saturation, and the sign extension of the sub-byte integers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"

static bool is_integer_kind(tc_dtype_kind k) {
    return k == TC_DTYPE_KIND_SIGNED || k == TC_DTYPE_KIND_UNSIGNED || k == TC_DTYPE_KIND_BOOL;
}

static void test_rows_consistent(void **state) {
    (void)state;
    int stored = 0;
    for (int d = 0; d <= TC_DTYPE_MAX; d++) {
        const tc_dtype_traits *t = tc_dtype_traits_of(d);
        assert_non_null(t->name);
        assert_string_equal(tconv_dtype_name(d), t->name);
        assert_int_equal(tc_dtype_bits(d), t->bits);
        assert_true(tc_dtype_is_known(d) == (d != TCONV_DTYPE_UNDEFINED));
        assert_true(tc_dtype_is_subbyte(d) == t->subbyte);
        assert_true(tc_dtype_is_minifloat(d) == t->minifloat);
        if (d != TCONV_DTYPE_UNDEFINED)
            assert_int_not_equal(t->kind, TC_DTYPE_KIND_NONE);
        if (t->subbyte)
            assert_true(t->bits > 0 && t->bits < 8 && t->size == 1);
        if (t->minifloat)
            assert_true(t->kind == TC_DTYPE_KIND_FLOAT && t->size == 1);
        if (t->size > 0) { /* stored by the runtime: readable and writable as double */
            stored++;
            assert_true(t->kind == TC_DTYPE_KIND_FLOAT || is_integer_kind(t->kind));
            assert_true(t->subbyte || t->size * 8 == (size_t)t->bits);
            assert_non_null(t->get_f64);
            assert_non_null(t->set_f64);
        } else {
            assert_null(t->get_f64);
            assert_true(t->kind == TC_DTYPE_KIND_COMPLEX || t->kind == TC_DTYPE_KIND_STRING ||
                        t->kind == TC_DTYPE_KIND_NONE);
        }
        /* bit patterns exactly for the integer kinds */
        assert_true((t->get_bits != NULL) == (t->size > 0 && is_integer_kind(t->kind)));
        assert_true((t->set_bits != NULL) == (t->get_bits != NULL));
        if (t->kind == TC_DTYPE_KIND_SIGNED) {
            assert_true(t->min == -ldexp(1.0, t->bits - 1));
            assert_true(t->max == ldexp(1.0, t->bits - 1) - 1.0 ||
                        t->bits == 64); /* 2^63 - 1 is no double */
        }
        if (t->kind == TC_DTYPE_KIND_UNSIGNED) {
            assert_true(t->min == 0.0);
            assert_true(t->max == ldexp(1.0, t->bits) - 1.0 || t->bits == 64);
        }
        /* the typed TensorProto field: wide types in their own, the rest in int32_data */
        tc_proto_field want = TC_PROTO_FIELD_INT32;
        if (d == TCONV_DTYPE_UNDEFINED)
            want = TC_PROTO_FIELD_NONE;
        else if (d == TCONV_DTYPE_FLOAT || d == TCONV_DTYPE_COMPLEX64)
            want = TC_PROTO_FIELD_FLOAT;
        else if (d == TCONV_DTYPE_DOUBLE || d == TCONV_DTYPE_COMPLEX128)
            want = TC_PROTO_FIELD_DOUBLE;
        else if (d == TCONV_DTYPE_INT64)
            want = TC_PROTO_FIELD_INT64;
        else if (d == TCONV_DTYPE_UINT32 || d == TCONV_DTYPE_UINT64)
            want = TC_PROTO_FIELD_UINT64;
        else if (d == TCONV_DTYPE_STRING)
            want = TC_PROTO_FIELD_STRING;
        assert_int_equal(t->field, want);
    }
    assert_int_equal(stored, 23); /* all but undefined, string and the complex types */
    /* numbers outside the enum read as the undefined row */
    assert_ptr_equal(tc_dtype_traits_of(-1), tc_dtype_traits_of(TCONV_DTYPE_UNDEFINED));
    assert_ptr_equal(tc_dtype_traits_of(TC_DTYPE_MAX + 1),
                     tc_dtype_traits_of(TCONV_DTYPE_UNDEFINED));
    size_t bytes = 0;
    assert_true(tc_dtype_storage_bytes(TCONV_DTYPE_INT4, 3, &bytes) && bytes == 2);
    assert_true(tc_dtype_storage_bytes(TCONV_DTYPE_UINT2, 5, &bytes) && bytes == 2);
    assert_false(tc_dtype_storage_bytes(TCONV_DTYPE_STRING, 1, &bytes));
}

/* set_f64 then get_f64 through one element of dtype. */
static double round_trip(tconv_dtype d, double v) {
    const tc_dtype_traits *t = tc_dtype_traits_of(d);
    uint64_t element = 0;
    t->set_f64(&element, 0, v);
    return t->get_f64(&element, 0);
}

static void test_exact_values_round_trip(void **state) {
    (void)state;
    static const double values[] = {0.0, 1.0, -1.0, 2.0, 0.5, -1.5, 3.0};
    for (int d = 0; d <= TC_DTYPE_MAX; d++) {
        const tc_dtype_traits *t = tc_dtype_traits_of(d);
        if (!t->size || d == TCONV_DTYPE_FLOAT8E8M0)
            continue;
        for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
            double v = values[i];
            if (is_integer_kind(t->kind) && (v != trunc(v) || v < t->min || v > t->max))
                continue;
            assert_true(round_trip(d, v) == v);
        }
        if (is_integer_kind(t->kind)) { /* the ends of the range, and NaN as 0 */
            assert_true(round_trip(d, t->min) == t->min);
            assert_true(round_trip(d, t->max) == t->max);
            assert_true(round_trip(d, NAN) == 0.0 || t->kind == TC_DTYPE_KIND_BOOL);
        }
    }
}

static void test_integers_saturate_and_truncate(void **state) {
    (void)state;
    assert_true(round_trip(TCONV_DTYPE_UINT8, -5.0) == 0.0);
    assert_true(round_trip(TCONV_DTYPE_UINT8, 300.7) == 255.0);
    assert_true(round_trip(TCONV_DTYPE_INT8, -128.9) == -128.0);
    assert_true(round_trip(TCONV_DTYPE_INT16, 1e300) == 32767.0);
    assert_true(round_trip(TCONV_DTYPE_INT32, -INFINITY) == -2147483648.0);
    assert_true(round_trip(TCONV_DTYPE_INT64, 2.5) == 2.0);
    assert_true(round_trip(TCONV_DTYPE_INT64, -2.5) == -2.0);
    assert_true(round_trip(TCONV_DTYPE_BOOL, 0.25) == 1.0);
    assert_true(round_trip(TCONV_DTYPE_BOOL, NAN) == 1.0); /* as C's (bool)NaN */
    /* patterns: sign-extended for signed types, zero-extended for unsigned ones */
    const tc_dtype_traits *i32 = tc_dtype_traits_of(TCONV_DTYPE_INT32);
    const tc_dtype_traits *u32 = tc_dtype_traits_of(TCONV_DTYPE_UINT32);
    int32_t si = -1;
    uint32_t ui = UINT32_MAX;
    assert_true(i32->get_bits(&si, 0) == UINT64_MAX);
    assert_true(u32->get_bits(&ui, 0) == UINT32_MAX);
    const tc_dtype_traits *u64 = tc_dtype_traits_of(TCONV_DTYPE_UINT64);
    uint64_t big = 0;
    u64->set_f64(&big, 0, 1e30);
    assert_true(big == 18446744073709549568u); /* the largest double below 2^64 */
}

static void test_subbyte_sign_extension(void **state) {
    (void)state;
    const tc_dtype_traits *i4 = tc_dtype_traits_of(TCONV_DTYPE_INT4);
    const tc_dtype_traits *u4 = tc_dtype_traits_of(TCONV_DTYPE_UINT4);
    const tc_dtype_traits *i2 = tc_dtype_traits_of(TCONV_DTYPE_INT2);
    int8_t b[4] = {0};
    for (int v = -8; v <= 7; v++) { /* every int4 value, stored sign-extended in its byte */
        i4->set_bits(b, 0, (uint64_t)(int64_t)v);
        assert_int_equal(b[0], v);
        assert_true(i4->get_f64(b, 0) == v);
        assert_true(i4->get_bits(b, 0) == (uint64_t)(int64_t)v);
    }
    i4->set_bits(b, 1, 0xF); /* the low nibble 1111 is -1 */
    assert_int_equal(b[1], -1);
    i4->set_f64(b, 2, 8.0); /* a float keeps the integer's low bits (ml_dtypes): 8 is -8 */
    assert_int_equal(b[2], -8);
    i4->set_f64(b, 3, 7.9);
    assert_int_equal(b[3], 7);
    uint8_t u[2];
    u4->set_bits(u, 0, 17);
    assert_int_equal(u[0], 1);
    u4->set_f64(u, 1, 15.0);
    assert_int_equal(u[1], 15);
    i2->set_bits(b, 0, 3);
    assert_int_equal(b[0], -1);
    i2->set_bits(b, 1, 1);
    assert_int_equal(b[1], 1);
}

/* Every code of a 16-bit float type: its value stores back as the same code (NaN stays NaN). */
static void check_all_16_bit_codes(tconv_dtype d) {
    const tc_dtype_traits *t = tc_dtype_traits_of(d);
    for (uint32_t code = 0; code <= 0xFFFF; code++) {
        uint16_t in = (uint16_t)code, out = 0;
        double v = t->get_f64(&in, 0);
        t->set_f64(&out, 0, v);
        if (isnan(v))
            assert_true(isnan(t->get_f64(&out, 0)));
        else
            assert_int_equal(out, in);
    }
}

static void test_float16_bfloat16_edges(void **state) {
    (void)state;
    check_all_16_bit_codes(TCONV_DTYPE_FLOAT16);
    check_all_16_bit_codes(TCONV_DTYPE_BFLOAT16);
    for (int k = 0; k < 2; k++) {
        tconv_dtype d = k ? TCONV_DTYPE_BFLOAT16 : TCONV_DTYPE_FLOAT16;
        assert_true(isnan(round_trip(d, NAN)));
        assert_true(round_trip(d, INFINITY) == INFINITY);
        assert_true(round_trip(d, -INFINITY) == -INFINITY);
        assert_true(signbit(round_trip(d, -0.0)));
    }
    /* the smallest subnormals, and half of them rounding to even (zero) */
    assert_true(round_trip(TCONV_DTYPE_FLOAT16, ldexp(1.0, -24)) == ldexp(1.0, -24));
    assert_true(round_trip(TCONV_DTYPE_FLOAT16, ldexp(1.0, -25)) == 0.0);
    assert_true(round_trip(TCONV_DTYPE_FLOAT16, 65520.0) == INFINITY); /* past the max, ties up */
    assert_true(round_trip(TCONV_DTYPE_BFLOAT16, ldexp(1.0, -133)) == ldexp(1.0, -133));
    /* double -> float16 in one rounding: 1 + 2^-11 + 2^-40 is above the tie, so it rounds up
     * (through float it would first become the tie 1 + 2^-11 and round to even, down) */
    assert_true(round_trip(TCONV_DTYPE_FLOAT16, 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40)) ==
                1.0 + ldexp(1.0, -10));
}

typedef struct minifloat_case {
    tconv_dtype dtype;
    double max, min_subnormal;
    bool has_inf, has_nan;
} minifloat_case;

static void test_minifloat_edges(void **state) {
    (void)state;
    static const minifloat_case cases[] = {
        {TCONV_DTYPE_FLOAT8E4M3FN, 448.0, 0x1p-9, false, true},
        {TCONV_DTYPE_FLOAT8E4M3FNUZ, 240.0, 0x1p-10, false, true},
        {TCONV_DTYPE_FLOAT8E5M2, 57344.0, 0x1p-16, true, true},
        {TCONV_DTYPE_FLOAT8E5M2FNUZ, 57344.0, 0x1p-17, false, true},
        {TCONV_DTYPE_FLOAT4E2M1, 6.0, 0.5, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const minifloat_case *c = &cases[i];
        const tc_dtype_traits *t = tc_dtype_traits_of(c->dtype);
        /* every code's value stores back as that code */
        unsigned codes = t->bits == 4 ? 16u : 256u;
        for (unsigned code = 0; code < codes; code++) {
            uint8_t in = (uint8_t)code, out = 0;
            double v = t->get_f64(&in, 0);
            t->set_f64(&out, 0, v);
            if (isnan(v))
                assert_true(isnan(t->get_f64(&out, 0)));
            else if (isinf(v)) /* the writer saturates: infinity stores as the largest value */
                assert_true(t->get_f64(&out, 0) == copysign(c->max, v));
            else
                assert_int_equal(out, in);
        }
        assert_true(round_trip(c->dtype, c->max) == c->max);
        assert_true(round_trip(c->dtype, -c->max) == -c->max);
        assert_true(round_trip(c->dtype, c->min_subnormal) == c->min_subnormal);
        assert_true(round_trip(c->dtype, c->min_subnormal / 4) == 0.0);
        /* the table's writer saturates (Cast's default): infinity becomes the largest value */
        assert_true(round_trip(c->dtype, INFINITY) == c->max);
        assert_true(round_trip(c->dtype, 1e9) == c->max);
        if (c->has_nan)
            assert_true(isnan(round_trip(c->dtype, NAN)));
        else /* float4e2m1: NaN is 0x8, negative zero (ml_dtypes) */
            assert_true(round_trip(c->dtype, NAN) == 0.0 && signbit(round_trip(c->dtype, NAN)));
        /* without saturation, float8e5m2 overflows to infinity, the others to NaN */
        if (c->dtype != TCONV_DTYPE_FLOAT4E2M1) {
            uint8_t code = tc_double_to_minifloat(c->dtype, INFINITY, false);
            double v = tc_minifloat_to_double(c->dtype, code);
            assert_true(c->has_inf ? v == INFINITY : isnan(v));
        }
    }
    /* float8e8m0: a power of two, 0xFF is NaN */
    const tc_dtype_traits *e8m0 = tc_dtype_traits_of(TCONV_DTYPE_FLOAT8E8M0);
    uint8_t codes[3] = {127, 0, 0xFF};
    assert_true(e8m0->get_f64(codes, 0) == 1.0);
    assert_true(e8m0->get_f64(codes, 1) == 0x1p-127);
    assert_true(isnan(e8m0->get_f64(codes, 2)));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_consistent),
        cmocka_unit_test(test_exact_values_round_trip),
        cmocka_unit_test(test_integers_saturate_and_truncate),
        cmocka_unit_test(test_subbyte_sign_extension),
        cmocka_unit_test(test_float16_bfloat16_edges),
        cmocka_unit_test(test_minifloat_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
