/* Elementwise math (Add, Sub, Mul, Div, Abs ... Cos, Erf, Pow, Mod), activations (Selu, Softplus,
 * Softsign, HardSwish, Mish, Gelu, PRelu; Elu and HardSigmoid are kernels_elementwise.c's),
 * variadic Min/Max/Sum/Mean, comparisons, logic and Where. float and double share one body per op
 * (macros over the element type and libm's suffix); int32/int64 where the spec and exports use
 * them; bool for logic and comparison outputs. Every op walks its operands with the broadcast
 * iterator (broadcast.h) over element ranges, so large tensors split across the kernel's thread
 * pool whatever their shapes. Integer arithmetic wraps like numpy (through the unsigned type, no
 * undefined behaviour); integer division truncates toward zero, and a zero divisor is an error. */
#include "runtime/kernels/activation.h"
#include "runtime/compute/compute.h"
#include "runtime/kernels/elementwise_walk.h"
#include "runtime/kernels/kernel_util.h"

#include <math.h>
#include <string.h>

#define DTYPES_DOUBLE TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE)
#define DTYPES_REAL (TC_DTYPES_FLOAT | DTYPES_DOUBLE)
#define DTYPES_SIGNED (DTYPES_REAL | TC_DTYPES_INDEX)
#define DTYPES_BOOL TC_DTYPE_BIT(TCONV_DTYPE_BOOL)
/* Every integer type: Add, Sub, Mul, Div, Mod, Min, Max and the comparisons take them all. */
#define DTYPES_SMALL_SIGNED (TC_DTYPE_BIT(TCONV_DTYPE_INT8) | TC_DTYPE_BIT(TCONV_DTYPE_INT16))
#define DTYPES_UNSIGNED                                                                            \
    (TC_DTYPE_BIT(TCONV_DTYPE_UINT8) | TC_DTYPE_BIT(TCONV_DTYPE_UINT16) |                          \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT32) | TC_DTYPE_BIT(TCONV_DTYPE_UINT64))
#define DTYPES_ALL_NUMERIC (DTYPES_SIGNED | DTYPES_SMALL_SIGNED | DTYPES_UNSIGNED)

/* ---------------------------------------------------------------- the parallel element walk */

typedef enum unary_op {
    U_ABS,
    U_NEG,
    U_SQRT,
    U_EXP,
    U_LOG,
    U_RECIPROCAL,
    U_FLOOR,
    U_CEIL,
    U_ROUND,
    U_SIGN,
    U_ERF,
    U_SIN,
    U_COS,
    U_SELU,
    U_SOFTPLUS,
    U_SOFTSIGN,
    U_HARD_SWISH,
    U_MISH,
    U_GELU,
    U_GELU_TANH,
    U_NOT,
    U_TAN,
    U_ASIN,
    U_ACOS,
    U_ATAN,
    U_SINH,
    U_COSH,
    U_ASINH,
    U_ACOSH,
    U_ATANH,
    U_CELU,             /* alpha */
    U_THRESHOLDED_RELU, /* alpha */
    U_SHRINK            /* alpha = lambd, beta = bias */
} unary_op;

typedef enum binary_op {
    B_POW,
    B_FMOD, /* C fmod / truncated remainder: the result has the dividend's sign */
    B_IMOD, /* integer floor remainder: the result has the divisor's sign (Python's %) */
    B_MIN,
    B_MAX,
    B_SUM, /* also Add */
    B_SUB,
    B_MUL,
    B_DIV,
    B_PRELU, /* x, slope */
    B_EQ,
    B_LT,
    B_GT,
    B_LE,
    B_GE,
    B_AND,
    B_OR,
    B_XOR,
    B_WHERE
} binary_op;

typedef tc_ew_job ew_job; /* the one elementwise driver: elementwise_walk.h */

/* ---------------------------------------------------------------- unary kernels */

#define UNARY_LOOP(T, EXPR)                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                              \
        const T x = in[i];                                                                         \
        out[i] = (EXPR);                                                                           \
    }

/* The float and double bodies; F is libm's suffix (f, or nothing for double). NaN propagates
 * through every op (comparisons are written so that a NaN input falls through to an
 * arithmetic expression of it). */
#define DEFINE_UNARY_REAL(name, T, F)                                                              \
    static void name(const ew_job *jb, const T *restrict in, T *restrict out, int64_t n) {         \
        const T alpha = (T)jb->alpha, beta = (T)jb->beta;                                          \
        switch ((unary_op)jb->op) {                                                                \
        case U_ABS:                                                                                \
            UNARY_LOOP(T, fabs##F(x))                                                              \
            break;                                                                                 \
        case U_NEG:                                                                                \
            UNARY_LOOP(T, -x)                                                                      \
            break;                                                                                 \
        case U_SQRT:                                                                               \
            UNARY_LOOP(T, sqrt##F(x))                                                              \
            break;                                                                                 \
        case U_EXP:                                                                                \
            UNARY_LOOP(T, exp##F(x))                                                               \
            break;                                                                                 \
        case U_LOG:                                                                                \
            UNARY_LOOP(T, log##F(x))                                                               \
            break;                                                                                 \
        case U_RECIPROCAL:                                                                         \
            UNARY_LOOP(T, (T)1 / x)                                                                \
            break;                                                                                 \
        case U_FLOOR:                                                                              \
            UNARY_LOOP(T, floor##F(x))                                                             \
            break;                                                                                 \
        case U_CEIL:                                                                               \
            UNARY_LOOP(T, ceil##F(x))                                                              \
            break;                                                                                 \
        case U_ROUND: /* halves to even: rint in the default rounding mode */                      \
            UNARY_LOOP(T, rint##F(x))                                                              \
            break;                                                                                 \
        case U_SIGN:                                                                               \
            UNARY_LOOP(T, x > 0 ? (T)1 : (x < 0 ? (T)-1 : x))                                      \
            break;                                                                                 \
        case U_ERF:                                                                                \
            UNARY_LOOP(T, erf##F(x))                                                               \
            break;                                                                                 \
        case U_SIN:                                                                                \
            UNARY_LOOP(T, sin##F(x))                                                               \
            break;                                                                                 \
        case U_COS:                                                                                \
            UNARY_LOOP(T, cos##F(x))                                                               \
            break;                                                                                 \
        case U_SELU: /* alpha, beta = gamma */                                                     \
            UNARY_LOOP(T, x > 0 ? beta * x : beta * alpha * expm1##F(x))                           \
            break;                                                                                 \
        case U_SOFTPLUS: /* log(1 + exp(x)) without overflow */                                    \
            UNARY_LOOP(T, tc_act_softplus##F(x, alpha, beta))                                      \
            break;                                                                                 \
        case U_SOFTSIGN:                                                                           \
            UNARY_LOOP(T, tc_act_softsign##F(x, alpha, beta))                                      \
            break;                                                                                 \
        case U_HARD_SWISH: /* x max(0, min(1, x / 6 + 1 / 2)) */                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T v = in[i] / (T)6 + (T)0.5;                                                       \
                v = v < 0 ? (T)0 : v;                                                              \
                out[i] = in[i] * (v > 1 ? (T)1 : v);                                               \
            }                                                                                      \
            break;                                                                                 \
        case U_MISH: /* x tanh(softplus(x)) = x n / (n + 2), n = e^x (e^x + 2): one exp; past */   \
                     /* 20 the factor is 1 in double too (and n would overflow float at 44) */     \
            for (int64_t i = 0; i < n; i++) {                                                      \
                const T x = in[i], e = exp##F(x), m = e * (e + (T)2);                              \
                out[i] = x > (T)20 ? x : x * m / (m + (T)2);                                       \
            }                                                                                      \
            break;                                                                                 \
        case U_GELU:                                                                               \
            UNARY_LOOP(T, (T)0.5 * x * ((T)1 + erf##F(x * (T)0.70710678118654752440)))             \
            break;                                                                                 \
        case U_GELU_TANH: /* 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + */       \
                          /* 0.044715 x^3): one exp, no cancellation where tanh(u) is near -1 */   \
            UNARY_LOOP(T, x / ((T)1 + exp##F((T)-1.59576912160573071176 *                          \
                                             (x + (T)0.044715 * x * x * x))))                      \
            break;                                                                                 \
        case U_NOT:                                                                                \
            break;                                                                                 \
        case U_TAN:                                                                                \
            UNARY_LOOP(T, tan##F(x))                                                               \
            break;                                                                                 \
        case U_ASIN:                                                                               \
            UNARY_LOOP(T, asin##F(x))                                                              \
            break;                                                                                 \
        case U_ACOS:                                                                               \
            UNARY_LOOP(T, acos##F(x))                                                              \
            break;                                                                                 \
        case U_ATAN:                                                                               \
            UNARY_LOOP(T, atan##F(x))                                                              \
            break;                                                                                 \
        case U_SINH:                                                                               \
            UNARY_LOOP(T, sinh##F(x))                                                              \
            break;                                                                                 \
        case U_COSH:                                                                               \
            UNARY_LOOP(T, cosh##F(x))                                                              \
            break;                                                                                 \
        case U_ASINH:                                                                              \
            UNARY_LOOP(T, asinh##F(x))                                                             \
            break;                                                                                 \
        case U_ACOSH:                                                                              \
            UNARY_LOOP(T, acosh##F(x))                                                             \
            break;                                                                                 \
        case U_ATANH:                                                                              \
            UNARY_LOOP(T, atanh##F(x))                                                             \
            break;                                                                                 \
        case U_CELU: /* max(0, x) + min(0, alpha (exp(x / alpha) - 1)) */                          \
            UNARY_LOOP(T, x > 0 ? x : alpha * expm1##F(x / alpha))                                 \
            break;                                                                                 \
        case U_THRESHOLDED_RELU:                                                                   \
            UNARY_LOOP(T, tc_act_thresholded_relu##F(x, alpha, beta))                              \
            break;                                                                                 \
        case U_SHRINK:                                                                             \
            UNARY_LOOP(T, x < -alpha ? x + beta : (x > alpha ? x - beta : (T)0))                   \
            break;                                                                                 \
        }                                                                                          \
    }
DEFINE_UNARY_REAL(unary_f32, float, f)
DEFINE_UNARY_REAL(unary_f64, double, )

/* Abs, Neg and Sign of integers (the only unary ops the spec gives integer types here). */
#define DEFINE_UNARY_INT(name, T, UT)                                                              \
    static void name(const ew_job *jb, const T *restrict in, T *restrict out, int64_t n) {         \
        switch ((unary_op)jb->op) {                                                                \
        case U_ABS:                                                                                \
            UNARY_LOOP(T, (T)(x < 0 ? (UT)0 - (UT)x : (UT)x))                                      \
            break;                                                                                 \
        case U_NEG:                                                                                \
            UNARY_LOOP(T, (T)((UT)0 - (UT)x))                                                      \
            break;                                                                                 \
        case U_SIGN:                                                                               \
            UNARY_LOOP(T, (T)((x > 0) - (x < 0)))                                                  \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
DEFINE_UNARY_INT(unary_i32, int32_t, uint32_t)
DEFINE_UNARY_INT(unary_i64, int64_t, uint64_t)

static void not_bool(const uint8_t *restrict in, uint8_t *restrict out, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        out[i] = in[i] == 0;
}

/* Operands (dst, a) have one shape: one row, offsets 0. */
static void span_unary(const ew_job *jb, const tc_bcast_cursor *c, int64_t j0, int64_t j1) {
    int64_t at = c->offsets[1] + j0, n = j1 - j0;
    switch (jb->dtype) {
    case TCONV_DTYPE_FLOAT:
        unary_f32(jb, (const float *)jb->a + at, (float *)jb->dst + at, n);
        break;
    case TCONV_DTYPE_DOUBLE:
        unary_f64(jb, (const double *)jb->a + at, (double *)jb->dst + at, n);
        break;
    case TCONV_DTYPE_INT32:
        unary_i32(jb, (const int32_t *)jb->a + at, (int32_t *)jb->dst + at, n);
        break;
    case TCONV_DTYPE_INT64:
        unary_i64(jb, (const int64_t *)jb->a + at, (int64_t *)jb->dst + at, n);
        break;
    default: /* bool: Not */
        not_bool((const uint8_t *)jb->a + at, (uint8_t *)jb->dst + at, n);
        break;
    }
}

static tconv_status run_unary_with(tc_kernel_ctx *ctx, unary_op op, uint32_t dtypes, double alpha,
                                   double beta, double cost) {
    const tc_rt_tensor *x = NULL;
    tc_rt_tensor *y = NULL;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, dtypes);
    if (st == TCONV_OK) /* tc_ew_apply writes every element */
        st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (st != TCONV_OK)
        return st;
    const tc_rt_tensor *operands[2] = {y, x};
    ew_job jb = {.span = span_unary,
                 .op = (int)op,
                 .dtype = x->dtype,
                 .a = x->data,
                 .dst = y->data,
                 .alpha = alpha,
                 .beta = beta};
    return tc_ew_apply(ctx, 2, operands, &jb, cost);
}

static tconv_status run_unary(tc_kernel_ctx *ctx, unary_op op, uint32_t dtypes, double cost) {
    return run_unary_with(ctx, op, dtypes, 0.0, 0.0, cost);
}

/* Cheap ops (a compare or an add) and libm calls: work per element (parallel.h). */
#define COST_CHEAP TC_PARALLEL_COST_STREAM
#define COST_LIBM TC_PARALLEL_COST_LIBM

tconv_status tc_run_abs(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ABS, DTYPES_SIGNED, COST_CHEAP);
}
tconv_status tc_run_neg(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_NEG, DTYPES_SIGNED, COST_CHEAP);
}
tconv_status tc_run_sign(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_SIGN, DTYPES_SIGNED, COST_CHEAP);
}
tconv_status tc_run_sqrt(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_SQRT, DTYPES_REAL, COST_CHEAP);
}
tconv_status tc_run_exp(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_EXP, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_log(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_LOG, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_reciprocal(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_RECIPROCAL, DTYPES_REAL, COST_CHEAP);
}
tconv_status tc_run_floor(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_FLOOR, DTYPES_REAL, COST_CHEAP);
}
tconv_status tc_run_ceil(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_CEIL, DTYPES_REAL, COST_CHEAP);
}
tconv_status tc_run_round(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ROUND, DTYPES_REAL, COST_CHEAP);
}
tconv_status tc_run_erf(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ERF, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_sin(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_SIN, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_cos(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_COS, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_tan(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_TAN, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_asin(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ASIN, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_acos(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ACOS, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_atan(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ATAN, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_sinh(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_SINH, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_cosh(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_COSH, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_asinh(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ASINH, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_acosh(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ACOSH, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_atanh(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_ATANH, DTYPES_REAL, COST_LIBM);
}

tconv_status tc_run_celu(tc_kernel_ctx *ctx) {
    float alpha;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "alpha", &alpha, ctx->err);
    return st != TCONV_OK ? st : run_unary_with(ctx, U_CELU, DTYPES_REAL, alpha, 0.0, COST_LIBM);
}

tconv_status tc_run_thresholded_relu(tc_kernel_ctx *ctx) {
    float alpha;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "alpha", &alpha, ctx->err);
    return st != TCONV_OK
               ? st
               : run_unary_with(ctx, U_THRESHOLDED_RELU, DTYPES_REAL, alpha, 0.0, COST_CHEAP);
}

/* Shrink of float types (the integer types Shrink also allows are refused). */
tconv_status tc_run_shrink(tc_kernel_ctx *ctx) {
    float lambd, bias;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "lambd", &lambd, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "bias", &bias, ctx->err);
    return st != TCONV_OK ? st
                          : run_unary_with(ctx, U_SHRINK, DTYPES_REAL, lambd, bias, COST_CHEAP);
}

/* IsNaN / IsInf: bool of the same shape (IsInf-10: detect_negative, detect_positive). */
static tconv_status run_float_class(tc_kernel_ctx *ctx, bool nan, bool neg, bool pos) {
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, DTYPES_REAL);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output_uninit(ctx, 0, TCONV_DTYPE_BOOL, x->rank, x->dims, &y);
    if (st != TCONV_OK)
        return st;
    uint8_t *out = y->data;
    for (int64_t i = 0; i < x->n_elements; i++) {
        double v = tc_rt_get_f64(x, i);
        out[i] = (uint8_t)(nan ? isnan(v) != 0 : (isinf(v) && (v > 0 ? pos : neg)));
    }
    return TCONV_OK;
}

tconv_status tc_run_isnan(tc_kernel_ctx *ctx) {
    return run_float_class(ctx, true, false, false);
}

tconv_status tc_run_isinf(tc_kernel_ctx *ctx) {
    int64_t neg, pos;
    tconv_status st = tc_node_attr_int(ctx->node, "detect_negative", 1, &neg, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "detect_positive", 1, &pos, ctx->err);
    return st != TCONV_OK ? st : run_float_class(ctx, false, neg != 0, pos != 0);
}

tconv_status tc_run_softplus(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_SOFTPLUS, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_softsign(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_SOFTSIGN, DTYPES_REAL, COST_CHEAP);
}
tconv_status tc_run_mish(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_MISH, DTYPES_REAL, COST_LIBM);
}
tconv_status tc_run_not(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_NOT, DTYPES_BOOL, COST_CHEAP);
}

tconv_status tc_run_selu(tc_kernel_ctx *ctx) {
    float alpha, gamma;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "alpha", &alpha, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "gamma", &gamma, ctx->err);
    return st != TCONV_OK ? st : run_unary_with(ctx, U_SELU, DTYPES_REAL, alpha, gamma, COST_LIBM);
}

tconv_status tc_run_hard_swish(tc_kernel_ctx *ctx) {
    return run_unary(ctx, U_HARD_SWISH, DTYPES_REAL, COST_CHEAP);
}

tconv_status tc_run_gelu(tc_kernel_ctx *ctx) {
    const char *approximate;
    tconv_status st = tc_node_attr_string(ctx->node, "approximate", "none", &approximate, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (strcmp(approximate, "none") == 0)
        return run_unary(ctx, U_GELU, DTYPES_REAL, COST_LIBM);
    if (strcmp(approximate, "tanh") == 0)
        return run_unary(ctx, U_GELU_TANH, DTYPES_REAL, COST_LIBM);
    return tc_kernel_unsupported_attr(ctx, "approximate", approximate);
}

/* ---------------------------------------------------------------- binary kernels */

/* d[j] = EXPR over columns [j0, j1) of a row, x read from a and y from b at their inner strides
 * (0 or 1); each stride pair has its own loop so that the common ones vectorize. */
#define SPAN2(TD, TA, TB, EXPR)                                                                    \
    do {                                                                                           \
        TD *d = (TD *)jb->dst + c->offsets[0];                                                     \
        const TA *pa = (const TA *)jb->a + c->offsets[1];                                          \
        const TB *pb = (const TB *)jb->b + c->offsets[2];                                          \
        if (sa && sb) {                                                                            \
            for (int64_t j = j0; j < j1; j++) {                                                    \
                const TA x = pa[j];                                                                \
                const TB y = pb[j];                                                                \
                d[j] = (EXPR);                                                                     \
            }                                                                                      \
        } else if (sa) {                                                                           \
            const TB y = pb[0];                                                                    \
            for (int64_t j = j0; j < j1; j++) {                                                    \
                const TA x = pa[j];                                                                \
                d[j] = (EXPR);                                                                     \
            }                                                                                      \
        } else if (sb) {                                                                           \
            const TA x = pa[0];                                                                    \
            for (int64_t j = j0; j < j1; j++) {                                                    \
                const TB y = pb[j];                                                                \
                d[j] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            const TA x = pa[0];                                                                    \
            const TB y = pb[0];                                                                    \
            const TD v = (EXPR);                                                                   \
            for (int64_t j = j0; j < j1; j++)                                                      \
                d[j] = v;                                                                          \
        }                                                                                          \
    } while (0)

/* Min and Max propagate NaN (as numpy's minimum and maximum). */
#define DEFINE_ARITH_REAL(name, T, F)                                                              \
    static void name(const ew_job *jb, const tc_bcast_cursor *c, int64_t sa, int64_t sb,           \
                     int64_t j0, int64_t j1) {                                                     \
        switch ((binary_op)jb->op) {                                                               \
        case B_POW:                                                                                \
            SPAN2(T, T, T, pow##F(x, y));                                                          \
            break;                                                                                 \
        case B_FMOD:                                                                               \
            SPAN2(T, T, T, fmod##F(x, y));                                                         \
            break;                                                                                 \
        case B_MIN:                                                                                \
            SPAN2(T, T, T, (x < y || x != x) ? x : y);                                             \
            break;                                                                                 \
        case B_MAX:                                                                                \
            SPAN2(T, T, T, (x > y || x != x) ? x : y);                                             \
            break;                                                                                 \
        case B_SUM:                                                                                \
            SPAN2(T, T, T, x + y);                                                                 \
            break;                                                                                 \
        case B_SUB:                                                                                \
            SPAN2(T, T, T, x - y);                                                                 \
            break;                                                                                 \
        case B_MUL:                                                                                \
            SPAN2(T, T, T, x *y);                                                                  \
            break;                                                                                 \
        case B_DIV:                                                                                \
            SPAN2(T, T, T, x / y);                                                                 \
            break;                                                                                 \
        case B_PRELU:                                                                              \
            SPAN2(T, T, T, x < 0 ? y * x : x);                                                     \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
DEFINE_ARITH_REAL(arith_f32, float, f)
DEFINE_ARITH_REAL(arith_f64, double, )

/* x^y for y >= 0 by squaring, wrapping like numpy's integer power. */
#define DEFINE_IPOW(name, T, UT)                                                                   \
    static T name(T x, T y) {                                                                      \
        UT r = 1, base = (UT)x;                                                                    \
        for (UT e = (UT)y; e; e >>= 1) {                                                           \
            if (e & 1)                                                                             \
                r *= base;                                                                         \
            base *= base;                                                                          \
        }                                                                                          \
        return (T)r;                                                                               \
    }
DEFINE_IPOW(ipow_i8, int8_t, uint32_t)
DEFINE_IPOW(ipow_i16, int16_t, uint32_t)
DEFINE_IPOW(ipow_i32, int32_t, uint32_t)
DEFINE_IPOW(ipow_i64, int64_t, uint64_t)

/* Min, Max and the wrapping Sum/Sub/Mul of any integer type (through UT, at least unsigned int,
 * so that no product overflows a promoted int). */
#define INT_WRAPPING_CASES(T, UT)                                                                  \
    case B_MIN:                                                                                    \
        SPAN2(T, T, T, x < y ? x : y);                                                             \
        break;                                                                                     \
    case B_MAX:                                                                                    \
        SPAN2(T, T, T, x > y ? x : y);                                                             \
        break;                                                                                     \
    case B_SUM:                                                                                    \
        SPAN2(T, T, T, (T)((UT)x + (UT)y));                                                        \
        break;                                                                                     \
    case B_SUB:                                                                                    \
        SPAN2(T, T, T, (T)((UT)x - (UT)y));                                                        \
        break;                                                                                     \
    case B_MUL:                                                                                    \
        SPAN2(T, T, T, (T)((UT)x * (UT)y));                                                        \
        break;

/* Zero divisors and negative exponents are refused before this runs (see check_int_operand);
 * y == -1 has its own branch because INT_MIN % -1 overflows in C. */
#define DEFINE_ARITH_INT(name, T, UT, IPOW)                                                        \
    static void name(const ew_job *jb, const tc_bcast_cursor *c, int64_t sa, int64_t sb,           \
                     int64_t j0, int64_t j1) {                                                     \
        switch ((binary_op)jb->op) {                                                               \
        case B_POW:                                                                                \
            SPAN2(T, T, T, IPOW(x, y));                                                            \
            break;                                                                                 \
        case B_FMOD:                                                                               \
            SPAN2(T, T, T, y == -1 ? 0 : x % y);                                                   \
            break;                                                                                 \
        case B_IMOD:                                                                               \
            SPAN2(T, T, T,                                                                         \
                  y == -1 ? 0 : ((x % y != 0 && ((x % y < 0) != (y < 0))) ? x % y + y : x % y));   \
            break;                                                                                 \
            INT_WRAPPING_CASES(T, UT)                                                              \
        case B_DIV: /* the minimum / -1 wraps to the minimum */                                    \
            SPAN2(T, T, T, y == -1 ? (T)((UT)0 - (UT)x) : x / y);                                  \
            break;                                                                                 \
        case B_PRELU:                                                                              \
            SPAN2(T, T, T, x < 0 ? (T)((UT)y * (UT)x) : x);                                        \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
DEFINE_ARITH_INT(arith_i8, int8_t, uint32_t, ipow_i8)
DEFINE_ARITH_INT(arith_i16, int16_t, uint32_t, ipow_i16)
DEFINE_ARITH_INT(arith_i32, int32_t, uint32_t, ipow_i32)
DEFINE_ARITH_INT(arith_i64, int64_t, uint64_t, ipow_i64)

/* Unsigned types: the ops that take them (no Pow, no PRelu); both Mod forms are the plain
 * remainder. */
#define DEFINE_ARITH_UINT(name, T, UT)                                                             \
    static void name(const ew_job *jb, const tc_bcast_cursor *c, int64_t sa, int64_t sb,           \
                     int64_t j0, int64_t j1) {                                                     \
        switch ((binary_op)jb->op) {                                                               \
        case B_FMOD:                                                                               \
        case B_IMOD:                                                                               \
            SPAN2(T, T, T, x % y);                                                                 \
            break;                                                                                 \
            INT_WRAPPING_CASES(T, UT)                                                              \
        case B_DIV:                                                                                \
            SPAN2(T, T, T, x / y);                                                                 \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
DEFINE_ARITH_UINT(arith_u8, uint8_t, unsigned)
DEFINE_ARITH_UINT(arith_u16, uint16_t, unsigned)
DEFINE_ARITH_UINT(arith_u32, uint32_t, uint32_t)
DEFINE_ARITH_UINT(arith_u64, uint64_t, uint64_t)

#define DEFINE_COMPARE(name, T)                                                                    \
    static void name(const ew_job *jb, const tc_bcast_cursor *c, int64_t sa, int64_t sb,           \
                     int64_t j0, int64_t j1) {                                                     \
        switch ((binary_op)jb->op) {                                                               \
        case B_EQ:                                                                                 \
            SPAN2(uint8_t, T, T, x == y);                                                          \
            break;                                                                                 \
        case B_LT:                                                                                 \
            SPAN2(uint8_t, T, T, x < y);                                                           \
            break;                                                                                 \
        case B_GT:                                                                                 \
            SPAN2(uint8_t, T, T, x > y);                                                           \
            break;                                                                                 \
        case B_LE:                                                                                 \
            SPAN2(uint8_t, T, T, x <= y);                                                          \
            break;                                                                                 \
        case B_GE:                                                                                 \
            SPAN2(uint8_t, T, T, x >= y);                                                          \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
DEFINE_COMPARE(compare_f32, float)
DEFINE_COMPARE(compare_f64, double)
DEFINE_COMPARE(compare_i8, int8_t)
DEFINE_COMPARE(compare_i16, int16_t)
DEFINE_COMPARE(compare_i32, int32_t)
DEFINE_COMPARE(compare_i64, int64_t)
DEFINE_COMPARE(compare_u8, uint8_t)
DEFINE_COMPARE(compare_u16, uint16_t)
DEFINE_COMPARE(compare_u32, uint32_t)
DEFINE_COMPARE(compare_u64, uint64_t)

/* Bools are bytes; any nonzero byte is true, results are 0 or 1. */
static void logic_bool(const ew_job *jb, const tc_bcast_cursor *c, int64_t sa, int64_t sb,
                       int64_t j0, int64_t j1) {
    switch ((binary_op)jb->op) {
    case B_EQ:
        SPAN2(uint8_t, uint8_t, uint8_t, (x != 0) == (y != 0));
        break;
    case B_AND:
        SPAN2(uint8_t, uint8_t, uint8_t, (x != 0) & (y != 0));
        break;
    case B_OR:
        SPAN2(uint8_t, uint8_t, uint8_t, (x != 0) | (y != 0));
        break;
    case B_XOR:
        SPAN2(uint8_t, uint8_t, uint8_t, (x != 0) ^ (y != 0));
        break;
    default:
        break;
    }
}

static void span_binary(const ew_job *jb, const tc_bcast_cursor *c, int64_t j0, int64_t j1) {
    const int64_t sa = jb->bc->inner_stride[1], sb = jb->bc->inner_stride[2];
    bool compare = jb->op >= B_EQ && jb->op <= B_GE;
    switch (jb->dtype) {
    case TCONV_DTYPE_FLOAT:
        (compare ? compare_f32 : arith_f32)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_DOUBLE:
        (compare ? compare_f64 : arith_f64)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_INT32:
        (compare ? compare_i32 : arith_i32)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_INT64:
        (compare ? compare_i64 : arith_i64)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_INT8:
        (compare ? compare_i8 : arith_i8)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_INT16:
        (compare ? compare_i16 : arith_i16)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_UINT8:
        (compare ? compare_u8 : arith_u8)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_UINT16:
        (compare ? compare_u16 : arith_u16)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_UINT32:
        (compare ? compare_u32 : arith_u32)(jb, c, sa, sb, j0, j1);
        break;
    case TCONV_DTYPE_UINT64:
        (compare ? compare_u64 : arith_u64)(jb, c, sa, sb, j0, j1);
        break;
    default:
        logic_bool(jb, c, sa, sb, j0, j1);
        break;
    }
}

/* Inputs first..first+count-1 present, in `dtypes` and of one dtype. */
static tconv_status require_same_dtype(tc_kernel_ctx *ctx, size_t first, size_t count,
                                       uint32_t dtypes) {
    const tc_rt_tensor *t0, *t;
    tconv_status st = tc_kernel_require_input(ctx, first, &t0);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, first, dtypes);
    for (size_t i = first + 1; st == TCONV_OK && i < first + count; i++) {
        st = tc_kernel_require_input(ctx, i, &t);
        if (st == TCONV_OK && t->dtype != t0->dtype)
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID,
                              "inputs have different dtypes: %s ('%s') and %s ('%s')",
                              tconv_dtype_name(t0->dtype), tc_kernel_input_name(ctx, first),
                              tconv_dtype_name(t->dtype), tc_kernel_input_name(ctx, i));
    }
    return st;
}

/* dst = op(a, b) elementwise, broadcast to dst's shape (which holds a's and b's broadcast). */
static tconv_status apply_binary(tc_kernel_ctx *ctx, binary_op op, const tc_rt_tensor *dst,
                                 const tc_rt_tensor *a, const tc_rt_tensor *b, double cost) {
    const tc_rt_tensor *operands[3] = {dst, a, b};
    ew_job jb = {.span = span_binary,
                 .op = (int)op,
                 .dtype = a->dtype,
                 .a = a->data,
                 .b = b->data,
                 .dst = dst->data};
    return tc_ew_apply(ctx, 3, operands, &jb, cost);
}

/* The broadcast shape of inputs [0, n) (all present). */
static tconv_status inputs_broadcast_shape(tc_kernel_ctx *ctx, size_t n, int *rank, int64_t *dims) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, 0);
    *rank = t->rank;
    memcpy(dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
    for (size_t i = 1; i < n; i++) {
        t = tc_kernel_input(ctx, i);
        int ranks[2] = {*rank, t->rank};
        int64_t acc[TC_MAX_RANK];
        memcpy(acc, dims, sizeof acc);
        const int64_t *both[2] = {acc, t->dims};
        tconv_status st = tc_broadcast_shape(2, ranks, both, rank, dims, ctx->err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

/* Binary ops (2 inputs) and the variadic ones: out = in0 op in1 op in2 ... (left to right, each
 * step broadcast into the output). */
static tconv_status run_variadic(tc_kernel_ctx *ctx, binary_op op, uint32_t dtypes, double cost,
                                 tc_rt_tensor **result) {
    size_t n = ctx->n_inputs;
    tconv_status st = n == 0 ? tc_error_set(ctx->err, TCONV_ERR_INVALID, "no inputs")
                             : require_same_dtype(ctx, 0, n, dtypes);
    int rank;
    int64_t dims[TC_MAX_RANK];
    if (st == TCONV_OK)
        st = inputs_broadcast_shape(ctx, n, &rank, dims);
    if (st != TCONV_OK)
        return st;
    const tc_rt_tensor *in0 = tc_kernel_input(ctx, 0);
    bool boolean = op >= B_EQ && op <= B_XOR;
    tc_rt_tensor *out;
    /* written whole: the copy below, or apply_binary's walk over every element */
    st = tc_kernel_alloc_output_uninit(ctx, 0, boolean ? TCONV_DTYPE_BOOL : in0->dtype, rank, dims,
                                       &out);
    *result = out;
    if (st != TCONV_OK)
        return st;
    if (n == 1) {
        if (out->nbytes)
            memcpy(out->data, in0->data, out->nbytes);
        return TCONV_OK;
    }
    st = apply_binary(ctx, op, out, in0, tc_kernel_input(ctx, 1), cost);
    for (size_t i = 2; st == TCONV_OK && i < n; i++)
        st = apply_binary(ctx, op, out, out, tc_kernel_input(ctx, i), cost);
    return st;
}

static tconv_status run_binary(tc_kernel_ctx *ctx, binary_op op, uint32_t dtypes) {
    tc_rt_tensor *out;
    return run_variadic(ctx, op, dtypes, COST_CHEAP, &out);
}

/* An integer divisor with a zero, or an integer exponent with a negative value (numpy refuses
 * both: "integers to negative integer powers are not allowed"), is TCONV_ERR_INVALID. */
static tconv_status check_int_operand(tc_kernel_ctx *ctx, size_t index, binary_op op) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, index);
    if (!(TC_DTYPE_BIT(t->dtype) & (TC_DTYPES_INDEX | DTYPES_SMALL_SIGNED | DTYPES_UNSIGNED)))
        return TCONV_OK;
    for (int64_t i = 0; i < t->n_elements; i++) {
        int64_t v = tc_rt_get_i64(t, i);
        if (op == B_POW && v < 0)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "integer Pow with a negative exponent (%lld in '%s')", (long long)v,
                                tc_kernel_input_name(ctx, index));
        if (op != B_POW && v == 0)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "integer %s by zero ('%s')",
                                op == B_DIV ? "division" : "Mod", tc_kernel_input_name(ctx, index));
    }
    return TCONV_OK;
}

tconv_status tc_run_add(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_SUM, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_sub(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_SUB, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_mul(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_MUL, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_div(tc_kernel_ctx *ctx) {
    tconv_status st = require_same_dtype(ctx, 0, 2, DTYPES_ALL_NUMERIC);
    if (st == TCONV_OK)
        st = check_int_operand(ctx, 1, B_DIV);
    return st != TCONV_OK ? st : run_binary(ctx, B_DIV, DTYPES_ALL_NUMERIC);
}

tconv_status tc_run_min(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_MIN, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_max(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_MAX, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_sum(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_SUM, DTYPES_REAL);
}

tconv_status tc_run_mean(tc_kernel_ctx *ctx) {
    tc_rt_tensor *out;
    tconv_status st = run_variadic(ctx, B_SUM, DTYPES_REAL, COST_CHEAP, &out);
    if (st != TCONV_OK)
        return st;
    double count = (double)ctx->n_inputs;
    if (out->dtype == TCONV_DTYPE_FLOAT) {
        float *p = out->data, cf = (float)count;
        for (int64_t i = 0; i < out->n_elements; i++)
            p[i] /= cf;
    } else {
        double *p = out->data;
        for (int64_t i = 0; i < out->n_elements; i++)
            p[i] /= count;
    }
    return TCONV_OK;
}

tconv_status tc_run_equal(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_EQ, DTYPES_ALL_NUMERIC | DTYPES_BOOL);
}
tconv_status tc_run_less(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_LT, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_greater(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_GT, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_less_or_equal(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_LE, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_greater_or_equal(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_GE, DTYPES_ALL_NUMERIC);
}
tconv_status tc_run_and(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_AND, DTYPES_BOOL);
}
tconv_status tc_run_or(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_OR, DTYPES_BOOL);
}
tconv_status tc_run_xor(tc_kernel_ctx *ctx) {
    return run_binary(ctx, B_XOR, DTYPES_BOOL);
}

tconv_status tc_run_mod(tc_kernel_ctx *ctx) {
    int64_t fmod;
    tconv_status st = tc_node_attr_int(ctx->node, "fmod", 0, &fmod, ctx->err);
    if (st == TCONV_OK)
        st = require_same_dtype(ctx, 0, 2, DTYPES_ALL_NUMERIC);
    if (st != TCONV_OK)
        return st;
    bool real = TC_DTYPE_BIT(tc_kernel_input(ctx, 0)->dtype) & DTYPES_REAL;
    if (real && fmod != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "Mod of floating point inputs needs fmod=1 (has %lld)",
                            (long long)fmod);
    st = check_int_operand(ctx, 1, B_FMOD);
    return st != TCONV_OK ? st : run_binary(ctx, fmod ? B_FMOD : B_IMOD, DTYPES_ALL_NUMERIC);
}

/* Pow-12+ lets the exponent's dtype differ from the base's: a float base takes any numeric
 * exponent, an integer base an integer one; the exponent is converted to the base's dtype in
 * scratch first (it is usually a scalar). */
tconv_status tc_run_pow(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *y;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 1, &y);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, DTYPES_SIGNED);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 1, DTYPES_SIGNED);
    if (st != TCONV_OK)
        return st;
    bool int_base = TC_DTYPE_BIT(x->dtype) & TC_DTYPES_INDEX;
    if (int_base && !(TC_DTYPE_BIT(y->dtype) & TC_DTYPES_INDEX))
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "Pow of an integer base (%s) with a %s exponent",
                            tconv_dtype_name(x->dtype), tconv_dtype_name(y->dtype));
    st = check_int_operand(ctx, 1, B_POW);
    int rank;
    int64_t dims[TC_MAX_RANK];
    if (st == TCONV_OK)
        st = inputs_broadcast_shape(ctx, 2, &rank, dims);
    tc_rt_tensor *out;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, x->dtype, rank, dims, &out);
    if (st != TCONV_OK)
        return st;
    if (y->dtype == x->dtype)
        return apply_binary(ctx, B_POW, out, x, y, COST_LIBM);
    tc_rt_tensor exponent = *y, buf;
    exponent.dtype = x->dtype;
    exponent.nbytes = (size_t)y->n_elements * tc_rt_dtype_size(x->dtype);
    st = tc_kernel_scratch(ctx, exponent.nbytes, &buf);
    if (st != TCONV_OK)
        return st;
    exponent.data = buf.data;
    tc_convert_elements(y, &exponent); /* Cast's rules: integers truncate and saturate */
    st = apply_binary(ctx, B_POW, out, x, &exponent, COST_LIBM);
    tc_kernel_scratch_release(ctx, &buf);
    return st;
}

/* PRelu: slope broadcasts to X (unidirectionally: the output has X's shape). */
tconv_status tc_run_prelu(tc_kernel_ctx *ctx) {
    tconv_status st = require_same_dtype(ctx, 0, 2, DTYPES_SIGNED);
    int rank;
    int64_t dims[TC_MAX_RANK];
    if (st == TCONV_OK)
        st = inputs_broadcast_shape(ctx, 2, &rank, dims);
    if (st != TCONV_OK)
        return st;
    const tc_rt_tensor *x = tc_kernel_input(ctx, 0), *slope = tc_kernel_input(ctx, 1);
    if (rank != x->rank || memcmp(dims, x->dims, sizeof(int64_t) * (size_t)rank) != 0) {
        char xs[128], ss[128];
        return tc_error_set(
            ctx->err, TCONV_ERR_INVALID, "slope '%s' %s does not broadcast to X '%s' %s",
            tc_kernel_input_name(ctx, 1), tc_shape_format(slope->rank, slope->dims, ss, sizeof ss),
            tc_kernel_input_name(ctx, 0), tc_shape_format(x->rank, x->dims, xs, sizeof xs));
    }
    tc_rt_tensor *out;
    st = tc_kernel_alloc_output(ctx, 0, x->dtype, rank, dims, &out);
    return st != TCONV_OK ? st : apply_binary(ctx, B_PRELU, out, x, slope, COST_CHEAP);
}

/* ---------------------------------------------------------------- Where */

#define WHERE_SPAN(T)                                                                              \
    do {                                                                                           \
        T *d = (T *)jb->dst + c->offsets[0];                                                       \
        const T *px = (const T *)jb->b + c->offsets[2], *py = (const T *)jb->w + c->offsets[3];    \
        for (int64_t j = j0; j < j1; j++)                                                          \
            d[j] = pc[j * sc] ? px[j * sx] : py[j * sy];                                           \
    } while (0)

/* Operands (dst, condition, X, Y); copies elements by size, so every dtype works. */
static void span_where(const ew_job *jb, const tc_bcast_cursor *c, int64_t j0, int64_t j1) {
    const tc_bcast *b = jb->bc;
    const int64_t sc = b->inner_stride[1], sx = b->inner_stride[2], sy = b->inner_stride[3];
    const uint8_t *pc = (const uint8_t *)jb->a + c->offsets[1];
    switch (tc_rt_dtype_size(jb->dtype)) {
    case 1:
        WHERE_SPAN(uint8_t);
        break;
    case 2:
        WHERE_SPAN(uint16_t);
        break;
    case 4:
        WHERE_SPAN(uint32_t);
        break;
    default:
        WHERE_SPAN(uint64_t);
        break;
    }
}

tconv_status tc_run_where(tc_kernel_ctx *ctx) {
    tconv_status st = require_same_dtype(ctx, 0, 1, DTYPES_BOOL);
    if (st == TCONV_OK)
        st = require_same_dtype(ctx, 1, 2, TC_DTYPES_ANY);
    int rank;
    int64_t dims[TC_MAX_RANK];
    if (st == TCONV_OK)
        st = inputs_broadcast_shape(ctx, 3, &rank, dims);
    if (st != TCONV_OK)
        return st;
    const tc_rt_tensor *x = tc_kernel_input(ctx, 1);
    tc_rt_tensor *out;
    st = tc_kernel_alloc_output(ctx, 0, x->dtype, rank, dims, &out);
    if (st != TCONV_OK)
        return st;
    const tc_rt_tensor *operands[4] = {out, tc_kernel_input(ctx, 0), x, tc_kernel_input(ctx, 2)};
    ew_job jb = {.span = span_where,
                 .dtype = x->dtype,
                 .a = operands[1]->data,
                 .b = x->data,
                 .w = operands[3]->data,
                 .dst = out->data};
    return tc_ew_apply(ctx, 4, operands, &jb, COST_CHEAP);
}
