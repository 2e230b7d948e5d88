/* shape-infer rules for Resize (10: X, scales; 11+: X, roi, scales, sizes; 18+: axes and
 * keep_aspect_ratio_policy) and Upsample (7: scales attribute; 9: scales input).
 *
 * Sizes are taken as given; scales give floor(float(x) * scale), in float as ONNX's own shape
 * inference and onnxruntime compute it. */
#include "passes/shape_infer.h"

#include <math.h>
#include <string.h>

typedef struct resize_args {
    int n_axes;
    int axes[TC_MAX_RANK];
    tc_si_ints sizes; /* state ABSENT when not given */
    bool scales_known, scales_given;
    int n_scales;
    float scales[TC_SI_MAX_DATA];
} resize_args;

static tconv_status read_resize_axes(tc_si_ctx *ctx, const tconv_node *node, int rank,
                                     resize_args *r) {
    tc_si_ints axes;
    tconv_status st = tc_si_ints_arg(ctx, node, "axes", 0, &axes);
    if (st != TCONV_OK)
        return st;
    if (axes.state == TCONV_SI_ARG_ABSENT) {
        r->n_axes = rank;
        for (int i = 0; i < rank; i++)
            r->axes[i] = i;
        return TCONV_OK;
    }
    if (axes.count > rank)
        return tc_si_fail(ctx, node, "attribute 'axes' has %d values for rank %d", axes.count,
                          rank);
    r->n_axes = axes.count;
    for (int i = 0; i < axes.count; i++) {
        if ((st = tc_si_normalize_axis(ctx, node, "attribute 'axes'", axes.values[i], rank,
                                       &r->axes[i])))
            return st;
    }
    return TCONV_OK;
}

/* Scales from input `index`: an empty tensor (the opset 11-12 way to skip it) is not given. */
static void read_scales_input(tc_si_ctx *ctx, const tconv_node *node, size_t index,
                              resize_args *r) {
    if (index >= node->n_inputs || !node->inputs[index])
        return;
    r->scales_given = tc_si_input_elements(ctx, node, index) != 0;
    if (tc_si_input_floats(ctx, node, index, r->scales, TC_SI_MAX_DATA, &r->n_scales)) {
        r->scales_given = r->n_scales > 0;
        r->scales_known = r->n_scales > 0;
    }
}

static tc_dim scaled_dim(const tc_dim *in, float scale) {
    if (in->kind == TCONV_DIM_STATIC) {
        float size = floorf((float)in->value * scale);
        if (size >= 0 && size < 9.0e18f)
            return tc_si_dim_static((int64_t)size);
    } else if (in->kind == TCONV_DIM_SYMBOLIC && scale == 1.0f) {
        return *in;
    }
    return tc_si_dim_unknown();
}

static tconv_status apply_scales(tc_si_ctx *ctx, const tconv_node *node, const resize_args *r,
                                 tc_si_shape *out) {
    if (r->n_scales != r->n_axes)
        return tc_si_fail(ctx, node, "scales has %d values for %d axes", r->n_scales, r->n_axes);
    for (int i = 0; i < r->n_axes; i++) {
        if (!(r->scales[i] > 0.0f))
            return tc_si_fail(ctx, node, "scales[%d] = %g is not positive", i,
                              (double)r->scales[i]);
        out->dims[r->axes[i]] = scaled_dim(&out->dims[r->axes[i]], r->scales[i]);
    }
    return TCONV_OK;
}

/* keep_aspect_ratio_policy not_larger / not_smaller: one scale for all the axes, from the
 * tightest (or loosest) of sizes[i] / x[i]; needs the static input sizes. */
static void apply_sizes_keeping_aspect(const resize_args *r, bool not_larger, tc_si_shape *out) {
    float scale = 0.0f;
    for (int i = 0; i < r->n_axes; i++) {
        const tc_dim *d = &out->dims[r->axes[i]];
        if (d->kind != TCONV_DIM_STATIC || d->value <= 0) {
            for (int k = 0; k < r->n_axes; k++)
                out->dims[r->axes[k]] = tc_si_dim_unknown();
            return;
        }
        float s = (float)r->sizes.values[i] / (float)d->value;
        if (i == 0 || (not_larger ? s < scale : s > scale))
            scale = s;
    }
    for (int i = 0; i < r->n_axes; i++) {
        tc_dim *d = &out->dims[r->axes[i]];
        *d = tc_si_dim_static((int64_t)roundf(scale * (float)d->value));
    }
}

static tconv_status apply_sizes(tc_si_ctx *ctx, const tconv_node *node, const resize_args *r,
                                tc_si_shape *out) {
    if (r->sizes.count != r->n_axes)
        return tc_si_fail(ctx, node, "sizes has %d values for %d axes", r->sizes.count, r->n_axes);
    for (int i = 0; i < r->n_axes; i++) {
        if (r->sizes.values[i] < 0)
            return tc_si_fail(ctx, node, "sizes[%d] is negative", i);
    }
    const char *policy;
    tconv_status st =
        tc_node_attr_string(node, "keep_aspect_ratio_policy", "stretch", &policy, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (!strcmp(policy, "not_larger") || !strcmp(policy, "not_smaller")) {
        apply_sizes_keeping_aspect(r, !strcmp(policy, "not_larger"), out);
        return TCONV_OK;
    }
    for (int i = 0; i < r->n_axes; i++)
        out->dims[r->axes[i]] = tc_si_dim_static(r->sizes.values[i]);
    return TCONV_OK;
}

static void unknown_axes(const resize_args *r, tc_si_shape *out) {
    for (int i = 0; i < r->n_axes; i++)
        out->dims[r->axes[i]] = tc_si_dim_unknown();
}

tconv_status tc_si_infer_resize(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    if (x.shape.rank < 0)
        return TCONV_OK;
    resize_args r;
    memset(&r, 0, sizeof r);
    tconv_status st = read_resize_axes(ctx, node, x.shape.rank, &r);
    bool v10 = ctx->opset > 0 && ctx->opset < 11;
    if (st == TCONV_OK && !v10)
        st = tc_si_ints_arg(ctx, node, NULL, 3, &r.sizes);
    if (st != TCONV_OK)
        return st;
    read_scales_input(ctx, node, v10 ? 1 : 2, &r);
    outs[0].shape = x.shape;
    if (r.sizes.state == TCONV_SI_ARG_KNOWN && r.sizes.count > 0)
        return apply_sizes(ctx, node, &r, &outs[0].shape);
    if (r.scales_known && r.sizes.state != TCONV_SI_ARG_UNKNOWN)
        return apply_scales(ctx, node, &r, &outs[0].shape);
    unknown_axes(&r, &outs[0].shape);
    return TCONV_OK;
}

tconv_status tc_si_infer_upsample(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    if (x.shape.rank < 0)
        return TCONV_OK;
    resize_args r;
    memset(&r, 0, sizeof r);
    r.n_axes = x.shape.rank;
    for (int i = 0; i < x.shape.rank; i++)
        r.axes[i] = i;
    const tc_attr *attr = tc_node_attr(node, "scales");
    if (attr && attr->type == TCONV_ATTR_FLOATS && attr->n <= TC_SI_MAX_DATA) {
        r.scales_known = true;
        r.n_scales = (int)attr->n;
        if (attr->n)
            memcpy(r.scales, attr->floats, attr->n * sizeof(float));
    } else {
        read_scales_input(ctx, node, 1, &r);
    }
    outs[0].shape = x.shape;
    if (r.scales_known)
        return apply_scales(ctx, node, &r, &outs[0].shape);
    unknown_axes(&r, &outs[0].shape);
    return TCONV_OK;
}
