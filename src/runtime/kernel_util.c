/* Kernel helpers: input checks with messages, parameter tensors, axes, dtype conversions. */
#include "runtime/kernel_util.h"
#include "runtime/gemm.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#endif

#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

const char *tc_kernel_input_name(const tc_kernel_ctx *ctx, size_t index) {
    const tconv_node *node = ctx->node;
    if (!node) /* a prepared kernel's run: the executor's copy of the names */
        return ctx->input_names && index < ctx->n_inputs && ctx->input_names[index]
                   ? ctx->input_names[index]
                   : "";
    if (index >= node->n_inputs || !node->inputs[index] || !node->inputs[index]->name)
        return "";
    return node->inputs[index]->name;
}

/* Asked per row block by the fused activations: the answer is kept (threads racing to fill it
 * all store the same value). */
static bool cached_probe(bool (*probe)(void), atomic_int *cache) {
    int known = atomic_load_explicit(cache, memory_order_relaxed);
    if (known < 0) {
        known = probe();
        atomic_store_explicit(cache, known, memory_order_relaxed);
    }
    return known != 0;
}

static bool probe_avx2(void) {
    return tc_gemm_isa_available(TCONV_GEMM_ISA_AVX2);
}

static bool probe_avx512(void) {
    return tc_gemm_isa_available(TCONV_GEMM_ISA_AVX512);
}

/* AVX2 (checked with the OS's support for the YMM state) and the F16C bit of CPUID leaf 1:
 * clang's __builtin_cpu_supports knows no "f16c". */
static bool probe_f16c(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    unsigned eax, ebx, ecx, edx;
    return probe_avx2() && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
#else
    return false;
#endif
}

bool tc_cpu_has_avx2(void) {
    static atomic_int cache = -1;
    return cached_probe(probe_avx2, &cache);
}

bool tc_cpu_has_avx512(void) {
    static atomic_int cache = -1;
    return cached_probe(probe_avx512, &cache);
}

bool tc_cpu_has_f16c(void) {
    static atomic_int cache = -1;
    return cached_probe(probe_f16c, &cache);
}

static const char *op_name(const tc_kernel_ctx *ctx) {
    if (ctx->op_type)
        return ctx->op_type;
    return ctx->node && ctx->node->op_type ? ctx->node->op_type : "?";
}

tconv_status tc_kernel_require_input(const tc_kernel_ctx *ctx, size_t index,
                                     const tc_rt_tensor **out) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, index);
    if (!t)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s: required input %zu is missing",
                            op_name(ctx), index);
    *out = t;
    return TCONV_OK;
}

static void format_dtype_mask(uint32_t mask, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d <= TCONV_DTYPE_MAX && d < 32; d++) {
        if (!(mask & TCONV_DTYPE_BIT(d)))
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", tconv_dtype_name(d));
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
}

tconv_status tc_kernel_check_dtype(const tc_kernel_ctx *ctx, size_t index, uint32_t mask) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, index);
    if (!t)
        return TCONV_OK;
    if (t->dtype > 0 && t->dtype < 32 && (mask & TCONV_DTYPE_BIT(t->dtype)))
        return TCONV_OK;
    char supported[256];
    format_dtype_mask(mask, supported, sizeof supported);
    return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                        "unsupported dtype %s for input %zu ('%s') of %s (supported: %s)",
                        tconv_dtype_name(t->dtype), index, tc_kernel_input_name(ctx, index),
                        op_name(ctx), supported);
}

tconv_status tc_kernel_check_output_dtype(const tc_kernel_ctx *ctx, int dtype, uint32_t mask) {
    if (dtype > 0 && dtype < 32 && (mask & TCONV_DTYPE_BIT(dtype)))
        return TCONV_OK;
    char supported[256];
    format_dtype_mask(mask, supported, sizeof supported);
    return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                        "unsupported output dtype %s (%d) for %s (supported: %s)",
                        tconv_dtype_name(dtype), dtype, op_name(ctx), supported);
}

tconv_status tc_kernel_unsupported_attr(const tc_kernel_ctx *ctx, const char *attr,
                                        const char *value) {
    return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                        "unsupported %s = '%s' for %s at opset %lld", attr, value, op_name(ctx),
                        (long long)ctx->opset);
}

static tconv_status check_vector(const tc_kernel_ctx *ctx, size_t index, const tc_rt_tensor *t,
                                 size_t cap) {
    if (t->rank > 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "input %zu ('%s') must be 1-D, has rank %d", index,
                            tc_kernel_input_name(ctx, index), t->rank);
    if ((uint64_t)t->n_elements > (uint64_t)cap)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "input %zu ('%s') has %lld elements, at most %zu are supported", index,
                            tc_kernel_input_name(ctx, index), (long long)t->n_elements, cap);
    return TCONV_OK;
}

tconv_status tc_kernel_read_ints(const tc_kernel_ctx *ctx, size_t index, int64_t *values,
                                 size_t cap, size_t *count) {
    const tc_rt_tensor *t;
    tconv_status st = tc_kernel_require_input(ctx, index, &t);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, index, TCONV_DTYPES_INDEX);
    if (st == TCONV_OK)
        st = check_vector(ctx, index, t, cap);
    if (st != TCONV_OK)
        return st;
    for (int64_t i = 0; i < t->n_elements; i++)
        values[i] = tc_rt_get_i64(t, i);
    *count = (size_t)t->n_elements;
    return TCONV_OK;
}

tconv_status tc_kernel_read_floats(const tc_kernel_ctx *ctx, size_t index, double *values,
                                   size_t cap, size_t *count) {
    const tc_rt_tensor *t;
    tconv_status st = tc_kernel_require_input(ctx, index, &t);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, index, TCONV_DTYPES_FLOAT);
    if (st == TCONV_OK)
        st = check_vector(ctx, index, t, cap);
    if (st != TCONV_OK)
        return st;
    for (int64_t i = 0; i < t->n_elements; i++)
        values[i] = tc_rt_get_f64(t, i);
    *count = (size_t)t->n_elements;
    return TCONV_OK;
}

tconv_status tc_kernel_normalize_axis(const tc_kernel_ctx *ctx, const char *what, int64_t axis,
                                      int rank, int *out) {
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s %lld is out of range for rank %d",
                            what, (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return TCONV_OK;
}

tconv_status tc_kernel_normalize_index(const tc_kernel_ctx *ctx, int64_t k, int64_t dim,
                                       int64_t *out) {
    if (k < -dim || k >= dim)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "index %lld is out of range for an axis of size %lld", (long long)k,
                            (long long)dim);
    *out = k < 0 ? k + dim : k;
    return TCONV_OK;
}

double tc_rt_get_f64(const tc_rt_tensor *t, int64_t i) {
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case TCONV_DTYPE_FLOAT:
        return ((const float *)t->data)[i];
    case TCONV_DTYPE_DOUBLE:
        return ((const double *)t->data)[i];
    case TCONV_DTYPE_FLOAT16:
        return tc_half_to_float(((const uint16_t *)t->data)[i]);
    case TCONV_DTYPE_BFLOAT16:
        return tc_bfloat16_to_float(((const uint16_t *)t->data)[i]);
    case TCONV_DTYPE_INT8:
        return ((const int8_t *)t->data)[i];
    case TCONV_DTYPE_UINT8:
        return p[i];
    case TCONV_DTYPE_BOOL:
        return p[i] != 0;
    case TCONV_DTYPE_INT16:
        return ((const int16_t *)t->data)[i];
    case TCONV_DTYPE_UINT16:
        return ((const uint16_t *)t->data)[i];
    case TCONV_DTYPE_INT32:
        return ((const int32_t *)t->data)[i];
    case TCONV_DTYPE_UINT32:
        return ((const uint32_t *)t->data)[i];
    case TCONV_DTYPE_INT64:
        return (double)((const int64_t *)t->data)[i];
    case TCONV_DTYPE_UINT64:
        return (double)((const uint64_t *)t->data)[i];
    case TCONV_DTYPE_INT4: /* stored sign-extended, a byte an element */
    case TCONV_DTYPE_INT2:
        return ((const int8_t *)t->data)[i];
    case TCONV_DTYPE_UINT4:
    case TCONV_DTYPE_UINT2:
        return p[i];
    default:
        return tc_dtype_is_minifloat(t->dtype) ? tc_minifloat_to_double(t->dtype, p[i]) : 0.0;
    }
}

/* float -> int64 without undefined behaviour: NaN is 0, out-of-range values saturate. */
static int64_t saturate_f64_to_i64(double v) {
    if (isnan(v))
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

int64_t tc_rt_get_i64(const tc_rt_tensor *t, int64_t i) {
    switch (t->dtype) {
    case TCONV_DTYPE_INT64:
        return ((const int64_t *)t->data)[i];
    case TCONV_DTYPE_INT32:
        return ((const int32_t *)t->data)[i];
    case TCONV_DTYPE_UINT64: {
        uint64_t v = ((const uint64_t *)t->data)[i];
        return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    case TCONV_DTYPE_FLOAT:
    case TCONV_DTYPE_DOUBLE:
    case TCONV_DTYPE_FLOAT16:
    case TCONV_DTYPE_BFLOAT16:
        return saturate_f64_to_i64(tc_rt_get_f64(t, i));
    default:
        if (tc_dtype_is_minifloat(t->dtype))
            return saturate_f64_to_i64(tc_rt_get_f64(t, i));
        return (int64_t)tc_rt_get_f64(t, i);
    }
}

tconv_status tc_kernel_copy_to_output(tc_kernel_ctx *ctx, size_t index, const tc_rt_tensor *src,
                                      int rank, const int64_t *dims) {
    tc_rt_tensor *out;
    tconv_status st = tc_kernel_alloc_output(ctx, index, src->dtype, rank, dims, &out);
    if (st != TCONV_OK)
        return st;
    if (out->n_elements != src->n_elements)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "output has %lld elements, input has %lld",
                            (long long)out->n_elements, (long long)src->n_elements);
    if (src->nbytes)
        memcpy(out->data, src->data, src->nbytes);
    return TCONV_OK;
}

void tc_shape_strides(int rank, const int64_t *dims, int64_t *strides) {
    /* Unsigned: a zero-sized tensor may have other dims whose product overflows; its strides
     * are never used then, and the arithmetic must not be undefined. */
    uint64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = (int64_t)s;
        s *= (uint64_t)dims[i];
    }
}

const char *tc_shape_format(int rank, const int64_t *dims, char *buf, size_t size) {
    size_t used = 0;
    int n = snprintf(buf, size, "[");
    used = n > 0 ? (size_t)n : 0;
    for (int i = 0; i < rank && used < size; i++) {
        n = snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)dims[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

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

tconv_status tc_rank_attrs_read(const tc_kernel_prepare_ctx *pc, tc_rank_attr_reader read,
                                size_t size, int only, tc_rank_attrs *out) {
    memset(out, 0, sizeof *out);
    void *attrs = malloc(size); /* kept only where the read succeeds */
    if (!attrs)
        return tc_error_nomem(pc->err, "a kernel's parameters");
    tconv_status st = TCONV_OK;
    for (int r = 1; r <= TCONV_MAX_SPATIAL && st == TCONV_OK; r++) {
        if (only > 0 && r != only)
            continue;
        tc_error err;
        tc_error_clear(&err);
        memset(attrs, 0, size);
        out->status[r] = read(pc->node, r, attrs, &err);
        if (out->status[r] == TCONV_OK)
            out->attrs[r] = tc_arena_memdup(pc->arena, attrs, size);
        else
            out->message[r] = tc_arena_strdup(pc->arena, err.message);
        if (!out->attrs[r] && !out->message[r])
            st = tc_error_nomem(pc->err, "a kernel's parameters");
    }
    free(attrs);
    return st;
}

tconv_status tc_rank_attrs_get(const tc_kernel_ctx *ctx, const tc_rank_attrs *r, int spatial_rank,
                               const void **out) {
    if (spatial_rank < 1 || spatial_rank > TCONV_MAX_SPATIAL)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "%d spatial axes: 1 to %d are supported", spatial_rank,
                            TCONV_MAX_SPATIAL);
    if (r->message[spatial_rank])
        return tc_error_set(ctx->err, r->status[spatial_rank], "%s", r->message[spatial_rank]);
    if (!r->attrs[spatial_rank]) /* prepare read one rank only: the operands' checks broke */
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "%d spatial axes, which the node's constant W excludes", spatial_rank);
    *out = r->attrs[spatial_rank];
    return TCONV_OK;
}
