/* Loss functions: NegativeLogLikelihoodLoss (12, 13, 22), and Hardmax beside them (the one-hot
 * of the largest value). NegativeLogLikelihoodLoss: SoftmaxCrossEntropyLoss runs as its
 * ONNX function body (session_function.c), whose NegativeLogLikelihoodLoss is this kernel.
 *
 * loss[n, d...] = -input[n, target[n, d...], d...] * weight[target] (weight 1 when absent), 0
 * where target == ignore_index; reduction none keeps them, sum adds them, mean divides the sum
 * by the sum of the weights taken (the count of targets not ignored without weights), as ONNX's
 * reference. Sums in double, rounded once. A target outside [0, C) that is not ignored is an
 * error. */
#include "runtime/kernels/kernel_util.h"
#include "runtime/compute/compute.h"

#include <math.h>
#include <string.h>

#define DTYPES_LOSS (TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE)

typedef struct nll_args {
    const tc_rt_tensor *x, *target, *weight;
    int64_t n, c, d; /* input [n, c, d] (trailing dims flattened), target [n, d] */
    bool has_ignore;
    int64_t ignore_index;
} nll_args;

static tconv_status nll_check(tc_kernel_ctx *ctx, nll_args *a) {
    char xs[256], ts[256];
    const tc_rt_tensor *x = a->x, *t = a->target;
    bool ok = x->rank >= 2 && t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int i = 2; ok && i < x->rank; i++)
        ok = t->dims[i - 1] == x->dims[i];
    if (!ok)
        return tc_error_set(
            ctx->err, TCONV_ERR_INVALID,
            "target %s does not fit input %s (want [N, d1, ...] for [N, C, d1, ...])",
            tc_shape_format(t->rank, t->dims, ts, sizeof ts),
            tc_shape_format(x->rank, x->dims, xs, sizeof xs));
    a->n = x->dims[0];
    a->c = x->dims[1];
    a->d = 1;
    for (int i = 2; i < x->rank; i++)
        a->d *= x->dims[i];
    if (a->weight && (a->weight->rank != 1 || a->weight->dims[0] != a->c))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "weight must be [C] = [%lld]",
                            (long long)a->c);
    return TCONV_OK;
}

tconv_status tc_run_nll_loss(tc_kernel_ctx *ctx) {
    nll_args a;
    memset(&a, 0, sizeof a);
    const char *reduction = "mean";
    tconv_status st = tc_kernel_require_input(ctx, 0, &a.x);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 1, &a.target);
    a.weight = tc_kernel_input(ctx, 2);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, DTYPES_LOSS);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 1, TC_DTYPES_INDEX);
    if (st == TCONV_OK && a.weight && a.weight->dtype != a.x->dtype)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "weight is %s, input is %s",
                          tconv_dtype_name(a.weight->dtype), tconv_dtype_name(a.x->dtype));
    if (st == TCONV_OK)
        st = tc_node_attr_string(ctx->node, "reduction", "mean", &reduction, ctx->err);
    if (st == TCONV_OK && strcmp(reduction, "none") != 0 && strcmp(reduction, "sum") != 0 &&
        strcmp(reduction, "mean") != 0)
        st = tc_kernel_unsupported_attr(ctx, "reduction", reduction);
    a.has_ignore = tc_node_attr(ctx->node, "ignore_index") != NULL;
    if (st == TCONV_OK && a.has_ignore)
        st = tc_node_attr_int(ctx->node, "ignore_index", 0, &a.ignore_index, ctx->err);
    if (st == TCONV_OK)
        st = nll_check(ctx, &a);
    if (st != TCONV_OK)
        return st;
    bool none = strcmp(reduction, "none") == 0;
    tc_rt_tensor *y;
    st = none ? tc_kernel_alloc_output(ctx, 0, a.x->dtype, a.target->rank, a.target->dims, &y)
              : tc_kernel_alloc_output(ctx, 0, a.x->dtype, 0, NULL, &y);
    if (st != TCONV_OK)
        return st;
    double sum = 0.0, weight_sum = 0.0;
    for (int64_t i = 0; i < a.n; i++) {
        for (int64_t k = 0; k < a.d; k++) {
            int64_t t = tc_rt_get_i64(a.target, i * a.d + k);
            double loss = 0.0, w = 0.0;
            if (!(a.has_ignore && t == a.ignore_index)) {
                if (t < 0 || t >= a.c)
                    return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                        "target %lld is outside [0, %lld)", (long long)t,
                                        (long long)a.c);
                w = a.weight ? tc_rt_get_f64(a.weight, t) : 1.0;
                loss = -tc_rt_get_f64(a.x, (i * a.c + t) * a.d + k) * w;
            }
            if (none) {
                tc_store_f64(y->dtype, y->data, i * a.d + k, loss);
            }
            sum += loss;
            weight_sum += w;
        }
    }
    if (none)
        return TCONV_OK;
    double v = strcmp(reduction, "sum") == 0 ? sum : sum / weight_sum;
    tc_store_f64(y->dtype, y->data, 0, v);
    return TCONV_OK;
}

/* Hardmax: 1 at the first largest value along the axis, 0 elsewhere. Before opset 13 the input
 * is seen as 2-D, [prod(dims[:axis]), prod(dims[axis:])] (axis default 1); from 13 the axis is
 * one dimension (default -1). */
tconv_status tc_run_hardmax(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t axis_attr;
    bool coerced = ctx->opset < 13;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, DTYPES_LOSS);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", coerced ? 1 : -1, &axis_attr, ctx->err);
    int axis = 0;
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", axis_attr, x->rank < 1 ? 1 : x->rank, &axis);
    tc_rt_tensor *y;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (st != TCONV_OK)
        return st;
    int64_t outer = 1, len = 1, inner = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < axis)
            outer *= x->dims[i];
        else if (i == axis || coerced)
            len *= x->dims[i];
        else
            inner *= x->dims[i];
    }
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t k = 0; k < inner; k++) {
            int64_t base = o * len * inner + k, best = 0;
            for (int64_t j = 1; j < len; j++) {
                if (tc_rt_get_f64(x, base + j * inner) > tc_rt_get_f64(x, base + best * inner))
                    best = j;
            }
            if (len == 0)
                continue;
            tc_store_f64(y->dtype, y->data, base + best * inner, 1.0);
        }
    }
    return TCONV_OK;
}
