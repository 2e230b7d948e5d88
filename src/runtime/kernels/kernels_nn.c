/* Neural-network kernels: BatchNormalization (inference, and training_mode), Resize and Upsample.
 */
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/resize.h"
#include "runtime/compute/compute.h"

#include <math.h>
#include <string.h>

/* ================================================================ BatchNormalization */

/* The attributes, read once when the session plans the node (tc_prepare_batchnorm). */
typedef struct batchnorm_attrs {
    float epsilon, momentum;
    bool spatial;  /* opset 7: parameters per channel (1) or per element of a plane (0) */
    bool training; /* training_mode = 1 (opset 14+): batchnorm_training */
} batchnorm_attrs;

/* Element count each parameter must have: C, or C x D1 x ... x Dn for spatial=0 (opset 7). */
static tconv_status batchnorm_param_size(tc_kernel_ctx *ctx, const batchnorm_attrs *bp,
                                         const tc_rt_tensor *x, int64_t *size, int64_t *inner) {
    if (x->rank < 2)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "X must have rank >= 2, has %d", x->rank);
    *inner = 1;
    for (int i = 2; i < x->rank; i++) {
        if (!tc_mul_i64(*inner, x->dims[i], inner))
            return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "X is too large");
    }
    *size = x->dims[1];
    if (!bp->spatial && !tc_mul_i64(x->dims[1], *inner, size))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "X is too large");
    return TCONV_OK;
}

/* scale, B, mean, var: float for float X; float or double for double X (opset 15 lets their
 * types differ from X's), read as double. */
static tconv_status batchnorm_params(tc_kernel_ctx *ctx, const tc_rt_tensor *x, int64_t size,
                                     const tc_rt_tensor *params[4]) {
    static const char *const names[] = {"scale", "B", "mean", "var"};
    uint32_t mask =
        x->dtype == TCONV_DTYPE_DOUBLE ? TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE : TC_DTYPES_FLOAT;
    for (size_t i = 0; i < 4; i++) {
        const tc_rt_tensor *t;
        tconv_status st = tc_kernel_require_input(ctx, i + 1, &t);
        if (st == TCONV_OK)
            st = tc_kernel_check_dtype(ctx, i + 1, mask);
        if (st != TCONV_OK)
            return st;
        if (t->n_elements != size)
            return tc_error_set(
                ctx->err, TCONV_ERR_INVALID, "%s ('%s') has %lld elements, expected %lld", names[i],
                tc_kernel_input_name(ctx, i + 1), (long long)t->n_elements, (long long)size);
        params[i] = t;
    }
    return TCONV_OK;
}

/* y = (x - mean) / sqrt(var + eps) * scale + B, per element in double: the float64 path, and
 * the float32 one where the folded scale or shift is not finite (var + eps = 0). */
static void batchnorm_formula(const tc_rt_tensor *x, const tc_rt_tensor *const prm[4], double eps,
                              int64_t size, int64_t inner, tc_rt_tensor *y) {
    bool per_channel = size == x->dims[1];
    int64_t channels = x->dims[1];
    for (int64_t i = 0; i < x->n_elements; i++) {
        int64_t c = (i / inner) % channels;
        int64_t k = per_channel ? c : c * inner + i % inner;
        double scale = tc_rt_get_f64(prm[0], k) / sqrt(tc_rt_get_f64(prm[3], k) + eps);
        tc_store_f64(y->dtype, y->data, i,
                     (tc_rt_get_f64(x, i) - tc_rt_get_f64(prm[2], k)) * scale +
                         tc_rt_get_f64(prm[1], k));
    }
}

static void batchnorm_plane(float *restrict out, const float *restrict in, int64_t count,
                            float scale, float shift) {
    for (int64_t i = 0; i < count; i++)
        out[i] = in[i] * scale + shift;
}

static void batchnorm_row(float *restrict out, const float *restrict in, int64_t count,
                          const float *restrict scale, const float *restrict shift) {
    for (int64_t i = 0; i < count; i++)
        out[i] = in[i] * scale[i] + shift[i];
}

/* training_mode = 1: normalizes with the batch's own mean and (population) variance per channel
 * and outputs the running statistics input * momentum + batch * (1 - momentum) (outputs 1 and 2,
 * each optional, in the type of input_mean/input_var). Sums in double, for float and double. */
static tconv_status batchnorm_training(tc_kernel_ctx *ctx, const tc_rt_tensor *x,
                                       const tc_rt_tensor *const prm[4], double eps, float momentum,
                                       int64_t inner, tc_rt_tensor *y) {
    tconv_status st = TCONV_OK;
    int64_t channels = x->dims[1], batch = x->dims[0];
    int64_t count = channels > 0 ? x->n_elements / channels : 0; /* batch * inner, no overflow */
    tc_rt_tensor *running[2] = {NULL, NULL};
    for (size_t k = 0; k < 2 && st == TCONV_OK; k++) {
        if (ctx->n_outputs > k + 1)
            st = tc_kernel_alloc_output(ctx, k + 1, prm[2 + k]->dtype, 1, &channels, &running[k]);
    }
    if (count == 0) /* empty: the batch loops would walk a huge leading dim over no data */
        batch = 0;
    for (int64_t c = 0; c < channels && st == TCONV_OK; c++) {
        double sum = 0.0, sq = 0.0;
        for (int64_t n = 0; n < batch; n++) {
            for (int64_t i = 0; i < inner; i++)
                sum += tc_rt_get_f64(x, (n * channels + c) * inner + i);
        }
        double mean = count > 0 ? sum / (double)count : 0.0;
        for (int64_t n = 0; n < batch; n++) {
            for (int64_t i = 0; i < inner; i++) {
                double d = tc_rt_get_f64(x, (n * channels + c) * inner + i) - mean;
                sq += d * d;
            }
        }
        double var = count > 0 ? sq / (double)count : 0.0;
        double scale = tc_rt_get_f64(prm[0], c) / sqrt(var + eps), shift = tc_rt_get_f64(prm[1], c);
        for (int64_t n = 0; n < batch; n++) {
            for (int64_t i = 0; i < inner; i++) {
                int64_t at = (n * channels + c) * inner + i;
                tc_store_f64(y->dtype, y->data, at, (tc_rt_get_f64(x, at) - mean) * scale + shift);
            }
        }
        const double batch_stat[2] = {mean, var};
        for (size_t k = 0; k < 2; k++) {
            if (running[k])
                tc_store_f64(running[k]->dtype, running[k]->data, c,
                             tc_rt_get_f64(prm[2 + k], c) * (double)momentum +
                                 batch_stat[k] * (1.0 - (double)momentum));
        }
    }
    return st;
}

/* y = x * scale + shift per plane, then the fused activation while the plane is in cache. */
static void batchnorm_folded(const tc_kernel_ctx *ctx, const tc_rt_tensor *x, const float *scale,
                             const float *shift, bool per_channel, int64_t inner, tc_rt_tensor *y) {
    int64_t channels = x->dims[1], batch = x->dims[0];
    for (int64_t n = 0; n < batch; n++) {
        for (int64_t c = 0; c < channels; c++) {
            int64_t base = (n * channels + c) * inner;
            const float *in = (const float *)x->data + base;
            float *out = (float *)y->data + base;
            if (per_channel)
                batchnorm_plane(out, in, inner, scale[c], shift[c]);
            else
                batchnorm_row(out, in, inner, scale + c * inner, shift + c * inner);
            if (ctx->activation)
                tc_kernel_activation_apply(ctx->activation, out, out, inner);
        }
    }
}

/* The float32 inference run: y = x * scale + shift, with scale = gamma / sqrt(var + eps) and
 * shift = beta - mean * scale computed once per parameter instead of a square root and a
 * division per element. */
static tconv_status batchnorm_inference_float(tc_kernel_ctx *ctx, const tc_rt_tensor *x,
                                              const tc_rt_tensor *const params[4], float eps,
                                              int64_t size, int64_t inner, tc_rt_tensor *y) {
    const float *prm[4] = {params[0]->data, params[1]->data, params[2]->data, params[3]->data};
    tc_rt_tensor folded;
    tconv_status st = tc_kernel_scratch(ctx, 2 * (size_t)size * sizeof(float), &folded);
    if (st != TCONV_OK)
        return st;
    float *scale = folded.data, *shift = scale + size;
    bool finite = true;
    for (int64_t k = 0; k < size; k++) {
        scale[k] = prm[0][k] / sqrtf(prm[3][k] + eps);
        shift[k] = prm[1][k] - prm[2][k] * scale[k];
        finite = finite && isfinite(scale[k]) && isfinite(shift[k]);
    }
    if (finite) {
        batchnorm_folded(ctx, x, scale, shift, size == x->dims[1], inner, y);
    } else {
        /* var + eps = 0 (or an infinite parameter): x * inf - mean * inf is NaN where the
         * formula gives (x - mean) / 0 * scale + B = +-inf; compute the formula itself, as the
         * float64 path does (and folding refuses such a BatchNormalization). */
        batchnorm_formula(x, params, (double)eps, size, inner, y);
        if (ctx->activation)
            tc_kernel_activation_apply(ctx->activation, y->data, y->data, y->n_elements);
    }
    tc_kernel_scratch_release(ctx, &folded);
    return TCONV_OK;
}

/* The run: ctx->params is tc_prepare_batchnorm's batchnorm_attrs; no IR. */
static tconv_status run_batchnorm(tc_kernel_ctx *ctx) {
    const batchnorm_attrs *bp = ctx->params;
    const tc_rt_tensor *x;
    const tc_rt_tensor *params[4];
    int64_t size = 0, inner = 1;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE);
    if (st == TCONV_OK)
        st = batchnorm_param_size(ctx, bp, x, &size, &inner);
    if (st == TCONV_OK)
        st = batchnorm_params(ctx, x, size, params);
    tc_rt_tensor *y;
    /* every element of y is written below, whichever path */
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (st != TCONV_OK)
        return st;
    /* empty: nothing to compute (X [2^58, 4, 0] would loop 2^60 times over no data) */
    if (y->n_elements == 0 && !bp->training)
        return TCONV_OK;
    if (ctx->activation && (x->dtype != TCONV_DTYPE_FLOAT || bp->training))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "a fused activation needs a float32 inference BatchNormalization");
    if (bp->training)
        return batchnorm_training(ctx, x, params, (double)bp->epsilon, bp->momentum, inner, y);
    if (x->dtype == TCONV_DTYPE_DOUBLE) {
        batchnorm_formula(x, params, (double)bp->epsilon, size, inner, y);
        return TCONV_OK;
    }
    return batchnorm_inference_float(ctx, x, params, bp->epsilon, size, inner, y);
}

/* training_mode = 1 (opset 14+) is run by batchnorm_training; the training outputs of older
 * opsets (saved mean/var, is_test = 0) are not implemented. Inference takes a fused activation
 * (a Relu after a BatchNormalization that follows no Conv: ERFNet's downsampler, after its
 * Concat). */
tconv_status tc_prepare_batchnorm(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    batchnorm_attrs *bp = tc_kernel_params_alloc(pc, sizeof *bp);
    if (!bp)
        return TCONV_ERR_NOMEM;
    *out = (tc_kernel_prepared){.run = run_batchnorm, .params = bp};
    const tconv_node *node = pc->node;
    int64_t training = 0, spatial = 1;
    tconv_status st;
    if ((st = tc_node_attr_float_or_default(node, "epsilon", &bp->epsilon, pc->err)) ||
        (st = tc_node_attr_float_or_default(node, "momentum", &bp->momentum, pc->err)) ||
        (st = tc_node_attr_int_or_default(node, "spatial", &spatial, pc->err)) ||
        (st = tc_node_attr_int_or_default(node, "training_mode", &training, pc->err)))
        return st;
    bp->spatial = spatial != 0;
    bp->training = training != 0;
    if (!bp->training) {
        for (size_t i = 1; i < node->n_outputs; i++) {
            if (node->outputs[i])
                return tc_error_set(pc->err, TCONV_ERR_UNSUPPORTED,
                                    "unsupported training outputs (output %zu '%s'): only "
                                    "inference BatchNormalization is implemented",
                                    i, node->outputs[i]->name);
        }
        out->epilogues = TC_EPILOGUE_ACTIVATION;
    }
    return TCONV_OK;
}

/* ================================================================ Resize, Upsample */

typedef struct name_value {
    const char *name;
    int value;
} name_value;

static tconv_status parse_enum_attr(tc_kernel_ctx *ctx, const char *attr, const char *fallback,
                                    const name_value *table, int *out) {
    const char *s;
    tconv_status st = tc_node_attr_string(ctx->node, attr, fallback, &s, ctx->err);
    if (st != TCONV_OK)
        return st;
    for (const name_value *e = table; e->name; e++) {
        if (strcmp(e->name, s) == 0) {
            *out = e->value;
            return TCONV_OK;
        }
    }
    return tc_kernel_unsupported_attr(ctx, attr, s);
}

static tconv_status resize_mode(tc_kernel_ctx *ctx, bool cubic_allowed, tc_resize_params *p) {
    static const name_value modes[] = {{"nearest", TCONV_RESIZE_NEAREST},
                                       {"linear", TCONV_RESIZE_LINEAR},
                                       {"cubic", TCONV_RESIZE_CUBIC},
                                       {NULL, 0}};
    static const name_value modes_no_cubic[] = {
        {"nearest", TCONV_RESIZE_NEAREST}, {"linear", TCONV_RESIZE_LINEAR}, {NULL, 0}};
    int v = 0;
    tconv_status st =
        parse_enum_attr(ctx, "mode", "nearest", cubic_allowed ? modes : modes_no_cubic, &v);
    p->mode = (tc_resize_mode)v;
    return st;
}

/* coordinate_transformation_mode values valid at the node's opset. */
static tconv_status resize_ctm(tc_kernel_ctx *ctx, tc_resize_params *p) {
    static const name_value all[] = {
        {"half_pixel", TCONV_CTM_HALF_PIXEL},
        {"pytorch_half_pixel", TCONV_CTM_PYTORCH_HALF_PIXEL},
        {"align_corners", TCONV_CTM_ALIGN_CORNERS},
        {"asymmetric", TCONV_CTM_ASYMMETRIC},
        {"tf_crop_and_resize", TCONV_CTM_TF_CROP_AND_RESIZE},
        {"tf_half_pixel_for_nn", TCONV_CTM_TF_HALF_PIXEL_FOR_NN}, /* opsets 11-17 */
        {"half_pixel_symmetric", TCONV_CTM_HALF_PIXEL_SYMMETRIC}, /* opset 19+ */
        {NULL, 0}};
    int v = 0;
    tconv_status st = parse_enum_attr(ctx, "coordinate_transformation_mode", "half_pixel", all, &v);
    if (st != TCONV_OK)
        return st;
    if ((v == TCONV_CTM_TF_HALF_PIXEL_FOR_NN && ctx->opset >= 18) ||
        (v == TCONV_CTM_HALF_PIXEL_SYMMETRIC && ctx->opset < 19)) {
        const char *s;
        tc_node_attr_string(ctx->node, "coordinate_transformation_mode", "", &s, ctx->err);
        return tc_kernel_unsupported_attr(ctx, "coordinate_transformation_mode", s);
    }
    p->ctm = (tc_resize_ctm)v;
    return TCONV_OK;
}

static tconv_status resize_nearest_mode(tc_kernel_ctx *ctx, tc_resize_params *p) {
    static const name_value modes[] = {{"round_prefer_floor", TCONV_NEAREST_ROUND_PREFER_FLOOR},
                                       {"round_prefer_ceil", TCONV_NEAREST_ROUND_PREFER_CEIL},
                                       {"floor", TCONV_NEAREST_FLOOR},
                                       {"ceil", TCONV_NEAREST_CEIL},
                                       {NULL, 0}};
    int v = 0;
    tconv_status st = parse_enum_attr(ctx, "nearest_mode", "round_prefer_floor", modes, &v);
    p->nearest = (tc_nearest_mode)v;
    return st;
}

static tconv_status resize_numeric_attrs(tc_kernel_ctx *ctx, tc_resize_params *p) {
    float a = -0.75f, extrapolation = 0.0f;
    int64_t exclude = 0, antialias = 0;
    tconv_status st = tc_node_attr_float_or_default(ctx->node, "cubic_coeff_a", &a, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "extrapolation_value", &extrapolation,
                                           ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "exclude_outside", 0, &exclude, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "antialias", 0, &antialias, ctx->err);
    p->cubic_a = a;
    p->extrapolation_value = extrapolation;
    p->exclude_outside = exclude != 0;
    p->antialias = antialias != 0 && p->mode != TCONV_RESIZE_NEAREST;
    return st;
}

/* The axes a Resize-18+ node resizes (all axes otherwise), normalized. */
static tconv_status resize_axes(tc_kernel_ctx *ctx, int rank, int *axes, size_t *n) {
    const int64_t *raw;
    bool present;
    tconv_status st = tc_node_attr_ints(ctx->node, "axes", &present, &raw, n, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (!present) {
        *n = (size_t)rank;
        for (int i = 0; i < rank; i++)
            axes[i] = i;
        return TCONV_OK;
    }
    if (*n > (size_t)rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%zu axes for rank %d", *n, rank);
    bool seen[TC_MAX_RANK] = {false};
    for (size_t i = 0; i < *n; i++) {
        st = tc_kernel_normalize_axis(ctx, "axes", raw[i], rank, &axes[i]);
        if (st != TCONV_OK)
            return st;
        if (seen[axes[i]])
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "axis %lld repeats",
                                (long long)raw[i]);
        seen[axes[i]] = true;
    }
    return TCONV_OK;
}

static tconv_status resize_roi(tc_kernel_ctx *ctx, const int *axes, size_t n_axes,
                               tc_resize_params *p) {
    for (int i = 0; i < TC_MAX_RANK; i++) {
        p->roi_start[i] = 0.0;
        p->roi_end[i] = 1.0;
    }
    const tc_rt_tensor *roi = tc_kernel_input(ctx, 1);
    if (p->ctm != TCONV_CTM_TF_CROP_AND_RESIZE)
        return TCONV_OK;
    if (!roi || roi->n_elements == 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "tf_crop_and_resize needs the roi input");
    tconv_status st =
        tc_kernel_check_dtype(ctx, 1, TC_DTYPES_FLOAT | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE));
    if (st != TCONV_OK)
        return st;
    if ((size_t)roi->n_elements != 2 * n_axes)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "roi has %lld values, expected %zu",
                            (long long)roi->n_elements, 2 * n_axes);
    for (size_t i = 0; i < n_axes; i++) {
        p->roi_start[axes[i]] = tc_rt_get_f64(roi, (int64_t)i);
        p->roi_end[axes[i]] = tc_rt_get_f64(roi, (int64_t)(i + n_axes));
    }
    return TCONV_OK;
}

/* Output size from scales: floor(scale x input). */
static tconv_status resize_from_scales(tc_kernel_ctx *ctx, const tc_rt_tensor *x,
                                       const double *scales, const int *axes, size_t n_axes,
                                       tc_resize_params *p) {
    for (size_t i = 0; i < n_axes; i++) {
        int a = axes[i];
        double out = floor(scales[i] * (double)x->dims[a]);
        if (!(scales[i] > 0.0) || !(out < 9.0e15))
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "scale %g for axis %d is invalid",
                                scales[i], a);
        p->scales[a] = scales[i];
        p->out_dims[a] = (int64_t)out;
    }
    p->scales_f32 = true;
    return TCONV_OK;
}

static tconv_status keep_aspect_policy(tc_kernel_ctx *ctx, int *policy) {
    static const name_value policies[] = {
        {"stretch", 0}, {"not_larger", 1}, {"not_smaller", 2}, {NULL, 0}};
    return parse_enum_attr(ctx, "keep_aspect_ratio_policy", "stretch", policies, policy);
}

/* Output size from sizes: scale = size / input, or with keep_aspect_ratio_policy one common
 * scale (min or max over the axes) and sizes round(scale x input). */
static tconv_status resize_from_sizes(tc_kernel_ctx *ctx, const tc_rt_tensor *x,
                                      const int64_t *sizes, const int *axes, size_t n_axes,
                                      tc_resize_params *p) {
    int policy = 0;
    tconv_status st = keep_aspect_policy(ctx, &policy);
    if (st != TCONV_OK)
        return st;
    double common = policy == 1 ? INFINITY : 0.0;
    for (size_t i = 0; i < n_axes; i++) {
        int a = axes[i];
        if (sizes[i] < 0 || x->dims[a] == 0)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "size %lld for axis %d (of length %lld) is invalid",
                                (long long)sizes[i], a, (long long)x->dims[a]);
        p->scales[a] = (double)sizes[i] / (double)x->dims[a];
        p->out_dims[a] = sizes[i];
        common = policy == 1 ? fmin(common, p->scales[a]) : fmax(common, p->scales[a]);
    }
    for (size_t i = 0; policy != 0 && i < n_axes; i++) {
        int a = axes[i];
        p->scales[a] = common;
        p->out_dims[a] = (int64_t)(common * (double)x->dims[a] + 0.5);
    }
    return TCONV_OK;
}

static tconv_status resize_output_size(tc_kernel_ctx *ctx, const tc_rt_tensor *x, const int *axes,
                                       size_t n_axes, tc_resize_params *p) {
    for (int i = 0; i < x->rank; i++) {
        p->scales[i] = 1.0;
        p->out_dims[i] = x->dims[i];
    }
    const tc_rt_tensor *scales = tc_kernel_input(ctx, 2);
    const tc_rt_tensor *sizes = tc_kernel_input(ctx, 3);
    bool has_scales = scales && scales->n_elements > 0, has_sizes = sizes && sizes->n_elements > 0;
    if (has_scales == has_sizes)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "exactly one of scales and sizes must be given");
    size_t n;
    if (has_scales) {
        double v[TC_MAX_RANK];
        tconv_status st = tc_kernel_read_floats(ctx, 2, v, TC_MAX_RANK, &n);
        if (st == TCONV_OK && n != n_axes)
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "%zu scales for %zu axes", n, n_axes);
        return st == TCONV_OK ? resize_from_scales(ctx, x, v, axes, n_axes, p) : st;
    }
    int64_t v[TC_MAX_RANK];
    tconv_status st = tc_kernel_read_ints(ctx, 3, v, TC_MAX_RANK, &n);
    if (st == TCONV_OK && n != n_axes)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "%zu sizes for %zu axes", n, n_axes);
    return st == TCONV_OK ? resize_from_sizes(ctx, x, v, axes, n_axes, p) : st;
}

static tconv_status resize_finish(tc_kernel_ctx *ctx, const tc_rt_tensor *x,
                                  const tc_resize_params *p) {
    tc_rt_tensor *y; /* tc_resize_float writes every element */
    tconv_status st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, x->rank, p->out_dims, &y);
    if (st == TCONV_OK)
        st = tc_resize_float(ctx, p, x, y);
    return st;
}

static tconv_status resize_attrs(tc_kernel_ctx *ctx, tc_resize_params *p) {
    tconv_status st = resize_mode(ctx, true, p);
    if (st == TCONV_OK)
        st = resize_ctm(ctx, p);
    if (st == TCONV_OK)
        st = resize_nearest_mode(ctx, p);
    if (st == TCONV_OK)
        st = resize_numeric_attrs(ctx, p);
    return st;
}

/* Resize-11 and later: X, roi, scales, sizes. */
tconv_status tc_run_resize_11(tc_kernel_ctx *ctx) {
    tc_resize_params p;
    memset(&p, 0, sizeof p);
    const tc_rt_tensor *x;
    int axes[TC_MAX_RANK];
    size_t n_axes;
    tconv_status st = resize_attrs(ctx, &p);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_FLOAT);
    if (st == TCONV_OK)
        st = resize_axes(ctx, x->rank, axes, &n_axes);
    if (st == TCONV_OK)
        st = resize_roi(ctx, axes, n_axes, &p);
    if (st == TCONV_OK)
        st = resize_output_size(ctx, x, axes, n_axes, &p);
    if (st == TCONV_OK)
        st = resize_finish(ctx, x, &p);
    return st;
}

/* Resize-10 and Upsample: scales only, asymmetric coordinates, nearest rounds down (the ONNX
 * version converter's Resize 10 -> 11 mapping). */
static tconv_status run_scales_only(tc_kernel_ctx *ctx, const double *scales, size_t n) {
    tc_resize_params p;
    memset(&p, 0, sizeof p);
    const tc_rt_tensor *x;
    tconv_status st = resize_mode(ctx, false, &p);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_FLOAT);
    if (st != TCONV_OK)
        return st;
    if (n != (size_t)x->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%zu scales for rank %d", n, x->rank);
    p.ctm = TCONV_CTM_ASYMMETRIC;
    p.nearest = TCONV_NEAREST_FLOOR;
    int axes[TC_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        axes[i] = i;
        p.roi_start[i] = 0.0;
        p.roi_end[i] = 1.0;
    }
    st = resize_from_scales(ctx, x, scales, axes, n, &p);
    if (st == TCONV_OK)
        st = resize_finish(ctx, x, &p);
    return st;
}

tconv_status tc_run_resize_10(tc_kernel_ctx *ctx) {
    double scales[TC_MAX_RANK];
    size_t n;
    tconv_status st = tc_kernel_read_floats(ctx, 1, scales, TC_MAX_RANK, &n);
    return st == TCONV_OK ? run_scales_only(ctx, scales, n) : st;
}

tconv_status tc_run_upsample_7(tc_kernel_ctx *ctx) {
    double scales[TC_MAX_RANK];
    const float *v;
    size_t n;
    bool present;
    tconv_status st = tc_node_attr_floats(ctx->node, "scales", &present, &v, &n, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (!present || n > TC_MAX_RANK)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "Upsample-7 needs the attribute 'scales' (one per axis)");
    for (size_t i = 0; i < n; i++)
        scales[i] = v[i];
    return run_scales_only(ctx, scales, n);
}

tconv_status tc_run_upsample_9(tc_kernel_ctx *ctx) {
    return tc_run_resize_10(ctx);
}
