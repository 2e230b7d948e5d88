/* QuantizeLinear and DequantizeLinear, every version (10 to 25): per-tensor, per-axis and
 * blocked scales (block_size, opset 21+), y_zero_point / x_zero_point, saturate (float8
 * targets), output_dtype and precision; quantized types int8, uint8, int16, uint16, int4, uint4,
 * int2, uint2, the four float8 types and float4e2m1 (one byte an element, ir/minifloat.c), scales
 * float, float16, bfloat16, int32 (QuantizeLinear) and float8e8m0 (DequantizeLinear).
 *
 * The arithmetic is ONNX's reference implementation's (onnx/reference/ops/op_quantize_linear.py,
 * op_dequantize_linear.py), which makes the node tests' expected data, in numpy's types:
 *   QuantizeLinear: q = x / y_scale in the precision attribute's type, else in the type numpy
 *     gives x / y_scale (the common float type; float64 where int32 is involved), rounded to
 *     nearest even; integer targets add the zero point and saturate to the type's range,
 *     float8 targets convert q (+ a nonzero zero point) once, saturating by `saturate`,
 *     float4e2m1 converts q + zero point (always saturating). A NaN q quantizes to the zero
 *     point (integer targets).
 *   DequantizeLinear: y = (float32(x) - x_zero_point) * x_scale in float32 (float64 for int32 x
 *     with a zero point), then rounded to output_dtype / x_scale's type. A float x (float8,
 *     float4e2m1) ignores its zero point, as the reference does.
 * Each rounding is computed from the exact double value (products of two float32 values are exact
 * in double; a quotient rounded to double then to float/float16 rounds as once: double has more
 * than 2p + 2 bits for those p), so results match numpy's bit for bit.
 * Both ops are listed as half-native (ir/ops.c): they read and write float16/bfloat16 themselves,
 * since a float32 detour would change where the 16-bit roundings happen. */
#include "runtime/kernels/kernel_util.h"

#include <math.h>
#include <string.h>

#define DTYPES_QUANT_INT                                                                           \
    (TC_DTYPE_BIT(TCONV_DTYPE_INT8) | TC_DTYPE_BIT(TCONV_DTYPE_UINT8) |                            \
     TC_DTYPE_BIT(TCONV_DTYPE_INT16) | TC_DTYPE_BIT(TCONV_DTYPE_UINT16) |                          \
     TC_DTYPE_BIT(TCONV_DTYPE_INT4) | TC_DTYPE_BIT(TCONV_DTYPE_UINT4) |                            \
     TC_DTYPE_BIT(TCONV_DTYPE_INT2) | TC_DTYPE_BIT(TCONV_DTYPE_UINT2))
#define DTYPES_QUANT_FLOAT                                                                         \
    (TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E4M3FN) | TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E4M3FNUZ) |           \
     TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E5M2) | TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E5M2FNUZ) |             \
     TC_DTYPE_BIT(TCONV_DTYPE_FLOAT4E2M1))
#define DTYPES_QUANTIZED (DTYPES_QUANT_INT | DTYPES_QUANT_FLOAT)
#define DTYPES_REAL                                                                                \
    (TC_DTYPE_BIT(TCONV_DTYPE_FLOAT) | TC_DTYPE_BIT(TCONV_DTYPE_FLOAT16) |                         \
     TC_DTYPE_BIT(TCONV_DTYPE_BFLOAT16))
#define DTYPE_IS(mask, d) (((mask)&TC_DTYPE_BIT(d)) != 0)

/* ---------------------------------------------------------------- scale layout */

/* x seen as [outer, axis_len, inner]; element (o, j, k) takes scale / zero point element
 * o * so + (j / block) * sj + k * sk. */
typedef struct quant_layout {
    int64_t outer, axis_len, inner;
    int64_t block, so, sj, sk;
} quant_layout;

static void split_at_axis(const tc_rt_tensor *x, int axis, quant_layout *l) {
    l->outer = 1;
    l->inner = 1;
    for (int i = 0; i < axis; i++)
        l->outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        l->inner *= x->dims[i];
    l->axis_len = x->dims[axis];
}

/* Blocked: the scale is x's shape but for `axis`, whose S entries each cover block_size
 * elements (the last block may be short): S * block_size >= D > (S - 1) * block_size. */
static tconv_status blocked_layout(tc_kernel_ctx *ctx, const tc_rt_tensor *x,
                                   const tc_rt_tensor *scale, int axis, int64_t block_size,
                                   quant_layout *l) {
    char xs[256], ss[256];
    bool ok = scale->rank == x->rank;
    for (int i = 0; ok && i < x->rank; i++)
        ok = i == axis || scale->dims[i] == x->dims[i];
    if (ok) {
        int64_t s = scale->dims[axis], d = x->dims[axis];
        ok = s > 0 && s <= d && (s - 1) * block_size < d && s * block_size >= d;
    }
    if (!ok)
        return tc_error_set(
            ctx->err, TCONV_ERR_INVALID,
            "blocked quantization: scale %s does not fit x %s with axis %d and block_size %lld",
            tc_shape_format(scale->rank, scale->dims, ss, sizeof ss),
            tc_shape_format(x->rank, x->dims, xs, sizeof xs), axis, (long long)block_size);
    split_at_axis(x, axis, l);
    l->block = block_size;
    l->sk = 1;
    l->sj = l->inner;
    l->so = scale->dims[axis] * l->inner;
    return TCONV_OK;
}

static tconv_status layout_for(tc_kernel_ctx *ctx, const tc_rt_tensor *x, const tc_rt_tensor *scale,
                               const tc_rt_tensor *zero_point, quant_layout *l) {
    char ss[256], zs[256];
    if (zero_point && !tc_rt_same_shape(zero_point, scale) &&
        !(zero_point->n_elements == 1 && scale->n_elements == 1)) /* [1] with a scalar */
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "the zero point's shape %s differs from the scale's %s",
                            tc_shape_format(zero_point->rank, zero_point->dims, zs, sizeof zs),
                            tc_shape_format(scale->rank, scale->dims, ss, sizeof ss));
    int64_t axis_attr, block_size;
    tconv_status st = tc_node_attr_int(ctx->node, "axis", 1, &axis_attr, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "block_size", 0, &block_size, ctx->err);
    if (st != TCONV_OK)
        return st;
    memset(l, 0, sizeof *l);
    l->block = 1;
    if (scale->n_elements == 1) { /* per tensor, whatever the scale's rank (as the reference) */
        l->outer = x->n_elements;
        l->axis_len = 1;
        l->inner = 1;
        return TCONV_OK;
    }
    if (block_size < 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "block_size %lld is negative",
                            (long long)block_size);
    int axis;
    st = tc_kernel_normalize_axis(ctx, "axis", axis_attr, x->rank, &axis);
    if (st != TCONV_OK)
        return st;
    if (block_size > 0)
        return blocked_layout(ctx, x, scale, axis, block_size, l);
    if (scale->rank != 1 || scale->dims[0] != x->dims[axis])
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "per-axis scale %s must be 1-D with x's dim %d (%lld)",
                            tc_shape_format(scale->rank, scale->dims, ss, sizeof ss), axis,
                            (long long)x->dims[axis]);
    split_at_axis(x, axis, l);
    l->sj = 1;
    return TCONV_OK;
}

/* The scale / zero point element of row r's first element (r = o * axis_len + j). */
static int64_t row_scale_base(const quant_layout *l, int64_t r) {
    return (r / l->axis_len) * l->so + ((r % l->axis_len) / l->block) * l->sj;
}

/* ---------------------------------------------------------------- rounding and storing */

/* v rounded to nearest even in `precision` (float, float16, bfloat16; double and UNDEFINED:
 * v itself), through the dtype table's writer and reader. */
static double round_to(tconv_dtype precision, double v) {
    const tc_dtype_traits *traits = tc_dtype_traits_of(precision);
    if (traits->kind != TC_DTYPE_KIND_FLOAT || traits->minifloat || traits->size == 8)
        return v;
    uint64_t element;
    traits->set_f64(&element, 0, v);
    return traits->get_f64(&element, 0);
}

/* Stores an integer value already in the type's range (traits min..max). */
static void store_int(tconv_dtype d, void *data, int64_t i, double v) {
    tc_dtype_traits_of(d)->set_bits(data, i, (uint64_t)(int64_t)v);
}

/* A real output element (float, float16 or bfloat16) from its exact value. */
static void store_real(tconv_dtype d, void *data, int64_t i, double v) {
    tc_dtype_traits_of(d)->set_f64(data, i, v);
}

/* ---------------------------------------------------------------- QuantizeLinear */

typedef struct quantize_job {
    const tc_rt_tensor *x, *scale, *zero_point;
    tc_rt_tensor *y;
    quant_layout l;
    tconv_dtype precision; /* UNDEFINED: the promoted type of x and scale */
    tconv_dtype promoted;
    bool saturate;
    double lo, hi; /* integer targets */
} quantize_job;

/* The type numpy computes x / y_scale in. */
static tconv_dtype promoted_division(tconv_dtype x, tconv_dtype scale) {
    if (x == TCONV_DTYPE_INT32 || scale == TCONV_DTYPE_INT32)
        return TCONV_DTYPE_DOUBLE;
    if (scale == TCONV_DTYPE_FLOAT8E8M0 || scale == x)
        return x;
    return TCONV_DTYPE_FLOAT;
}

static double quotient(const quantize_job *j, int64_t i, int64_t s) {
    double x = tc_rt_get_f64(j->x, i), scale = tc_rt_get_f64(j->scale, s);
    if (j->precision == TCONV_DTYPE_UNDEFINED)
        return round_to(j->promoted, x / scale);
    return round_to(j->precision, round_to(j->precision, x) / round_to(j->precision, scale));
}

static void quantize_element(const quantize_job *j, int64_t i, int64_t s) {
    tconv_dtype out = j->y->dtype;
    double q = quotient(j, i, s);
    double zp = j->zero_point ? tc_rt_get_f64(j->zero_point, s) : 0.0;
    if (DTYPE_IS(DTYPES_QUANT_INT, out)) {
        double v = isnan(q) ? zp : nearbyint(q) + zp;
        store_int(out, j->y->data, i, v < j->lo ? j->lo : (v > j->hi ? j->hi : v));
    } else if (out == TCONV_DTYPE_FLOAT4E2M1) {
        tconv_dtype p = j->precision ? j->precision : j->promoted;
        ((uint8_t *)j->y->data)[i] = tc_double_to_minifloat(out, round_to(p, q + zp), true);
    } else {
        ((uint8_t *)j->y->data)[i] =
            tc_double_to_minifloat(out, zp != 0.0 ? q + zp : q, j->saturate);
    }
}

/* The common case, float x and scale to int8/uint8: float division as numpy's. */
static void quantize_rows_f32_u8(const quantize_job *j, int64_t begin, int64_t end) {
    const quant_layout *l = &j->l;
    const float *x = j->x->data, *scale = j->scale->data;
    const uint8_t *zp = j->zero_point ? j->zero_point->data : NULL;
    bool is_signed = j->y->dtype == TCONV_DTYPE_INT8;
    for (int64_t r = begin; r < end; r++) {
        int64_t sbase = row_scale_base(l, r);
        const float *xr = x + r * l->inner;
        for (int64_t k = 0; k < l->inner; k++) {
            int64_t s = sbase + k * l->sk;
            float q = xr[k] / scale[s];
            float z = !zp ? 0.0f : is_signed ? (float)(int8_t)zp[s] : (float)zp[s];
            float v = isnan(q) ? z : nearbyintf(q) + z;
            v = v < (float)j->lo ? (float)j->lo : (v > (float)j->hi ? (float)j->hi : v);
            if (is_signed)
                ((int8_t *)j->y->data)[r * l->inner + k] = (int8_t)v;
            else
                ((uint8_t *)j->y->data)[r * l->inner + k] = (uint8_t)v;
        }
    }
}

static void quantize_rows(void *p, int64_t begin, int64_t end) {
    const quantize_job *j = p;
    const quant_layout *l = &j->l;
    if (j->x->dtype == TCONV_DTYPE_FLOAT && j->scale->dtype == TCONV_DTYPE_FLOAT &&
        (j->precision == TCONV_DTYPE_UNDEFINED || j->precision == TCONV_DTYPE_FLOAT) &&
        (j->y->dtype == TCONV_DTYPE_UINT8 || j->y->dtype == TCONV_DTYPE_INT8)) {
        quantize_rows_f32_u8(j, begin, end);
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        int64_t sbase = row_scale_base(l, r);
        for (int64_t k = 0; k < l->inner; k++)
            quantize_element(j, r * l->inner + k, sbase + k * l->sk);
    }
}

/* y's type: y_zero_point's, else output_dtype's, else uint8 (they must agree). */
static tconv_status quantize_output_dtype(tc_kernel_ctx *ctx, const tc_rt_tensor *zero_point,
                                          tconv_dtype *out) {
    int64_t output_dtype;
    tconv_status st = tc_node_attr_int(ctx->node, "output_dtype", 0, &output_dtype, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (zero_point && output_dtype && output_dtype != (int64_t)zero_point->dtype)
        return tc_error_set(
            ctx->err, TCONV_ERR_INVALID, "output_dtype %s does not match y_zero_point's %s",
            tconv_dtype_name((int)output_dtype), tconv_dtype_name(zero_point->dtype));
    *out = zero_point ? zero_point->dtype
                      : (output_dtype ? (tconv_dtype)output_dtype : TCONV_DTYPE_UINT8);
    return tc_kernel_check_output_dtype(ctx, (int)*out, DTYPES_QUANTIZED);
}

static tconv_status quantize_precision(tc_kernel_ctx *ctx, tconv_dtype *out) {
    int64_t precision;
    tconv_status st = tc_node_attr_int(ctx->node, "precision", 0, &precision, ctx->err);
    if (st != TCONV_OK)
        return st;
    *out = (tconv_dtype)precision;
    if (precision == 0)
        return TCONV_OK;
    return tc_kernel_check_output_dtype(ctx, (int)precision,
                                        DTYPES_REAL | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE));
}

tconv_status tc_run_quantize_linear(tc_kernel_ctx *ctx) {
    quantize_job j;
    memset(&j, 0, sizeof j);
    int64_t saturate = 1;
    tconv_dtype out = TCONV_DTYPE_UNDEFINED;
    tconv_status st = tc_kernel_require_input(ctx, 0, &j.x);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 1, &j.scale);
    j.zero_point = tc_kernel_input(ctx, 2);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, DTYPES_REAL | TC_DTYPE_BIT(TCONV_DTYPE_INT32));
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 1,
                                   DTYPES_REAL | TC_DTYPE_BIT(TCONV_DTYPE_INT32) |
                                       TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E8M0));
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 2, DTYPES_QUANTIZED);
    if (st == TCONV_OK)
        st = quantize_output_dtype(ctx, j.zero_point, &out);
    if (st == TCONV_OK)
        st = quantize_precision(ctx, &j.precision);
    if (st == TCONV_OK)
        st = tc_node_attr_int_or_default(ctx->node, "saturate", &saturate, ctx->err);
    if (st == TCONV_OK)
        st = layout_for(ctx, j.x, j.scale, j.zero_point, &j.l);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output_uninit(ctx, 0, out, j.x->rank, j.x->dims, &j.y);
    if (st != TCONV_OK)
        return st;
    j.saturate = saturate != 0;
    j.promoted = promoted_division(j.x->dtype, j.scale->dtype);
    if (DTYPE_IS(DTYPES_QUANT_INT, out))
        j.lo = tc_dtype_traits_of(out)->min, j.hi = tc_dtype_traits_of(out)->max;
    if (j.y->n_elements == 0) /* rows of no elements: no data pointer to offset */
        return TCONV_OK;
    tc_parallel_ranges(ctx->pool, ctx->n_threads, j.l.outer * j.l.axis_len,
                       (double)j.l.inner * TC_PARALLEL_COST_STREAM, 1, 1, quantize_rows, &j);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- DequantizeLinear */

typedef struct dequantize_job {
    const tc_rt_tensor *x, *scale, *zero_point; /* zero_point NULL for float x */
    tc_rt_tensor *y;
    quant_layout l;
    bool wide; /* int32 x with a zero point: numpy computes in float64 */
} dequantize_job;

static void dequantize_rows_u8_f32(const dequantize_job *j, int64_t begin, int64_t end) {
    const quant_layout *l = &j->l;
    const float *scale = j->scale->data;
    const uint8_t *x = j->x->data, *zp = j->zero_point ? j->zero_point->data : NULL;
    bool is_signed = j->x->dtype == TCONV_DTYPE_INT8;
    float *y = j->y->data;
    for (int64_t r = begin; r < end; r++) {
        int64_t sbase = row_scale_base(l, r);
        const uint8_t *xr = x + r * l->inner;
        float *yr = y + r * l->inner;
        for (int64_t k = 0; k < l->inner; k++) {
            int64_t s = sbase + k * l->sk;
            int xv = is_signed ? (int)(int8_t)xr[k] : (int)xr[k];
            int zv = !zp ? 0 : is_signed ? (int)(int8_t)zp[s] : (int)zp[s];
            yr[k] = (float)(xv - zv) * scale[s];
        }
    }
}

static void dequantize_rows(void *p, int64_t begin, int64_t end) {
    const dequantize_job *j = p;
    const quant_layout *l = &j->l;
    if ((j->x->dtype == TCONV_DTYPE_UINT8 || j->x->dtype == TCONV_DTYPE_INT8) &&
        j->scale->dtype == TCONV_DTYPE_FLOAT && j->y->dtype == TCONV_DTYPE_FLOAT) {
        dequantize_rows_u8_f32(j, begin, end);
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        int64_t sbase = row_scale_base(l, r);
        for (int64_t k = 0; k < l->inner; k++) {
            int64_t i = r * l->inner + k, s = sbase + k * l->sk;
            double x = (float)tc_rt_get_f64(j->x, i); /* x.astype(float32) */
            double dx = j->zero_point ? x - tc_rt_get_f64(j->zero_point, s) : x;
            double y = dx * tc_rt_get_f64(j->scale, s);
            store_real(j->y->dtype, j->y->data, i, j->wide ? y : (float)y);
        }
    }
}

tconv_status tc_run_dequantize_linear(tc_kernel_ctx *ctx) {
    dequantize_job j;
    memset(&j, 0, sizeof j);
    int64_t output_dtype = 0;
    tconv_status st = tc_kernel_require_input(ctx, 0, &j.x);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 1, &j.scale);
    j.zero_point = tc_kernel_input(ctx, 2);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, DTYPES_QUANTIZED | TC_DTYPE_BIT(TCONV_DTYPE_INT32));
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 1, DTYPES_REAL | TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E8M0));
    if (st == TCONV_OK && j.zero_point && j.zero_point->dtype != j.x->dtype)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "x_zero_point is %s but x is %s",
                          tconv_dtype_name(j.zero_point->dtype), tconv_dtype_name(j.x->dtype));
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "output_dtype", 0, &output_dtype, ctx->err);
    tconv_dtype out = output_dtype ? (tconv_dtype)output_dtype : j.scale->dtype;
    if (st == TCONV_OK)
        st = tc_kernel_check_output_dtype(ctx, (int)out, DTYPES_REAL);
    if (st == TCONV_OK)
        st = layout_for(ctx, j.x, j.scale, j.zero_point, &j.l);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output_uninit(ctx, 0, out, j.x->rank, j.x->dims, &j.y);
    if (st != TCONV_OK)
        return st;
    if (tc_dtype_is_minifloat(j.x->dtype))
        j.zero_point = NULL;
    j.wide = j.x->dtype == TCONV_DTYPE_INT32 && j.zero_point;
    if (j.y->n_elements == 0) /* rows of no elements: no data pointer to offset */
        return TCONV_OK;
    tc_parallel_ranges(ctx->pool, ctx->n_threads, j.l.outer * j.l.axis_len,
                       (double)j.l.inner * TC_PARALLEL_COST_STREAM, 1, 1, dequantize_rows, &j);
    return TCONV_OK;
}
