/* shape-infer rules for sliding-window ops: ConvTranspose (through the shared geometry of
 * ir/conv_transpose_geometry.h), Conv, MaxPool/AveragePool/LpPool and the global pools.
 *
 * A dynamic (symbolic) spatial size maps to the same symbol only where the op is the identity on
 * that axis (stride 1 and pads that give back the input size); elsewhere it is unknown, never a
 * made-up expression. */
#include "passes/shape_infer.h"

#include <string.h>

/* ---------------------------------------------------------------- ConvTranspose */

/* Static dims as int64 with -1 for the rest, as the geometry wants them; NULL if rank unknown. */
static const int64_t *static_or_minus_one(const tc_si_shape *shape, int64_t *buf) {
    if (shape->rank < 0)
        return NULL;
    for (int i = 0; i < shape->rank; i++)
        buf[i] = shape->dims[i].kind == TCONV_DIM_STATIC ? shape->dims[i].value : -1;
    return buf;
}

static int spatial_rank_of(const tc_si_tensor *x, const tc_si_tensor *w) {
    if (x->shape.rank >= 0)
        return x->shape.rank - 2;
    if (w->shape.rank >= 0)
        return w->shape.rank - 2;
    return -1;
}

static tconv_status check_ranks(tc_si_ctx *ctx, const tconv_node *node, const tc_si_tensor *x,
                                const tc_si_tensor *w) {
    if (x->shape.rank >= 0 && (x->shape.rank < 3 || x->shape.rank > TC_MAX_SPATIAL + 2))
        return tc_si_fail(ctx, node, "input X has rank %d; 3 to %d are supported", x->shape.rank,
                          TC_MAX_SPATIAL + 2);
    if (w->shape.rank >= 0 && (w->shape.rank < 3 || w->shape.rank > TC_MAX_SPATIAL + 2))
        return tc_si_fail(ctx, node, "weight W has rank %d; 3 to %d are supported", w->shape.rank,
                          TC_MAX_SPATIAL + 2);
    if (x->shape.rank >= 0 && w->shape.rank >= 0 && x->shape.rank != w->shape.rank)
        return tc_si_fail(ctx, node, "X has rank %d but W has rank %d", x->shape.rank,
                          w->shape.rank);
    return TCONV_OK;
}

/* The runtime kernel's operand checks (ir/conv_transpose_geometry.h), prefixed with the node:
 * the ranks, then (with_bias, once c_out is known or not) B. */
static tconv_status check_operands(tc_si_ctx *ctx, const tconv_node *node, const tc_si_tensor *x,
                                   const tc_si_tensor *w, bool with_bias, int64_t c_out) {
    tconv_status st = tc_conv_transpose_check_ranks(x->shape.rank, w->shape.rank, ctx->err);
    tc_si_tensor b;
    if (st == TCONV_OK && with_bias && tc_si_input(ctx, node, 2, &b)) {
        int64_t b_buf[TC_MAX_RANK];
        st = tc_conv_transpose_check_bias(b.shape.rank, static_or_minus_one(&b.shape, b_buf), c_out,
                                          ctx->err);
    }
    if (st == TCONV_OK)
        return st;
    char where[256];
    return tc_error_prefix(ctx->err, st, "%s: ", tc_node_describe(node, where, sizeof where));
}

/* A symbolic input size stays the same symbol when the output size equals the input size for
 * every input size: stride 1 and (SAME, or pads that cancel the kernel's growth). */
static bool conv_transpose_keeps_size(const tc_conv_transpose_attrs *a,
                                      const tc_conv_transpose_geometry *g, int i) {
    if (g->strides[i] != 1 || a->has_output_shape)
        return false;
    if (tc_auto_pad_is_same(a->auto_pad))
        return true;
    int64_t growth = (g->kernel[i] - 1) * g->dilations[i] + g->output_padding[i];
    return growth == g->pad_begin[i] + g->pad_end[i];
}

static void conv_transpose_output(const tc_si_tensor *x, const tc_conv_transpose_attrs *a,
                                  const tc_conv_transpose_geometry *g, bool geometry_known,
                                  tc_si_out *out) {
    tc_si_shape_unknown(&out->shape, a->spatial_rank + 2);
    if (x->shape.rank >= 0)
        out->shape.dims[0] = x->shape.dims[0];
    if (!geometry_known)
        return;
    if (g->c_out >= 0)
        out->shape.dims[1] = tc_si_dim_static(g->c_out);
    for (int i = 0; i < a->spatial_rank; i++) {
        const tc_dim *in = x->shape.rank >= 0 ? &x->shape.dims[2 + i] : NULL;
        if (g->out[i] > 0)
            out->shape.dims[2 + i] = tc_si_dim_static(g->out[i]);
        else if (in && in->kind == TCONV_DIM_SYMBOLIC && conv_transpose_keeps_size(a, g, i))
            out->shape.dims[2 + i] = *in;
    }
}

tconv_status tc_si_infer_conv_transpose(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x, w;
    tc_si_input(ctx, node, 0, &x);
    tc_si_input(ctx, node, 1, &w);
    outs[0].dtype = x.dtype != TCONV_DTYPE_UNDEFINED ? x.dtype : w.dtype;
    tconv_status st = check_operands(ctx, node, &x, &w, false, -1);
    if (st != TCONV_OK)
        return st;
    tc_conv_transpose_attrs a;
    st = tc_conv_transpose_read_attrs(node, spatial_rank_of(&x, &w), &a, ctx->err);
    if (st != TCONV_OK)
        return st;
    int64_t x_buf[TC_MAX_SPATIAL + 2], w_buf[TC_MAX_SPATIAL + 2];
    tc_conv_transpose_geometry g;
    st = tc_conv_transpose_resolve(&a, static_or_minus_one(&x.shape, x_buf),
                                   static_or_minus_one(&w.shape, w_buf), ctx->convention, &g,
                                   ctx->err);
    if (st == TCONV_ERR_UNSUPPORTED) { /* kernel size unknown: only N (and rank) can be told */
        tc_error_clear(ctx->err);
        if ((st = check_operands(ctx, node, &x, &w, true, -1)) != TCONV_OK)
            return st;
        conv_transpose_output(&x, &a, &g, false, &outs[0]);
        return TCONV_OK;
    }
    if (st != TCONV_OK) {
        char where[256];
        return tc_error_prefix(ctx->err, st, "%s: ", tc_node_describe(node, where, sizeof where));
    }
    st = check_operands(ctx, node, &x, &w, true, g.c_out);
    if (st != TCONV_OK)
        return st;
    conv_transpose_output(&x, &a, &g, true, &outs[0]);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Conv and pooling */

/* Reads the window attributes (kernel_shape -1 when absent: W tells it, or it is unknown).
 * Shape inference takes negative pads as written; the kernels refuse them. */
static tconv_status read_window(tc_si_ctx *ctx, const tconv_node *node, int spatial_rank,
                                tc_window_attrs *w) {
    int64_t ceil_mode;
    tconv_status st;
    if ((st = tc_window_read_attrs(node, spatial_rank, -1, INT64_MIN, w, ctx->err)) ||
        (st = tc_node_attr_int(node, "ceil_mode", 0, &ceil_mode, ctx->err)))
        return st;
    w->ceil_mode = ceil_mode != 0;
    return TCONV_OK;
}

/* Spatial dims of a windowed op's output (kernel sizes in w->kernel_shape, -1 if unknown). */
static tconv_status window_spatial(tc_si_ctx *ctx, const tconv_node *node, const tc_window_attrs *w,
                                   const tc_si_shape *x, tc_si_shape *out) {
    for (int i = 0; i < w->spatial_rank; i++) {
        const tc_dim *in = &x->dims[2 + i];
        tc_dim *dst = &out->dims[2 + i];
        int64_t k = w->kernel_shape[i];
        *dst = tc_si_dim_unknown();
        if (k < 1)
            continue;
        if (in->kind == TCONV_DIM_STATIC) {
            tc_window_axis axis;
            tconv_status st = tc_window_resolve_axis(w, i, in->value, k, &axis, ctx->err);
            if (st != TCONV_OK) {
                char where[256];
                return tc_error_prefix(ctx->err, st,
                                       "%s: ", tc_node_describe(node, where, sizeof where));
            }
            *dst = tc_si_dim_static(axis.out);
        } else if (in->kind == TCONV_DIM_SYMBOLIC && tc_window_keeps_size(w, i, k)) {
            *dst = *in;
        }
    }
    return TCONV_OK;
}

static tconv_status conv_channels(tc_si_ctx *ctx, const tconv_node *node, const tc_si_tensor *x,
                                  const tc_si_tensor *w, tc_dim *out) {
    int64_t group;
    tconv_status st = tc_node_attr_int_or_default(node, "group", &group, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (group < 1)
        return tc_si_fail(ctx, node, "attribute 'group' must be at least 1");
    *out = w->shape.rank >= 1 ? w->shape.dims[0] : tc_si_dim_unknown();
    if (x->shape.rank < 2 || w->shape.rank < 2)
        return TCONV_OK;
    const tc_dim *c = &x->shape.dims[1], *per_group = &w->shape.dims[1];
    int64_t expected;
    if (c->kind == TCONV_DIM_STATIC && per_group->kind == TCONV_DIM_STATIC &&
        (!tc_mul_i64(per_group->value, group, &expected) || c->value != expected))
        return tc_si_fail(ctx, node, "X has %lld channels but W.shape[1] %lld x group %lld",
                          (long long)c->value, (long long)per_group->value, (long long)group);
    return TCONV_OK;
}

tconv_status tc_si_infer_conv(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x, w;
    tc_si_input(ctx, node, 0, &x);
    tc_si_input(ctx, node, 1, &w);
    outs[0].dtype = x.dtype != TCONV_DTYPE_UNDEFINED ? x.dtype : w.dtype;
    tconv_status st = check_ranks(ctx, node, &x, &w);
    int spatial_rank = spatial_rank_of(&x, &w);
    if (st != TCONV_OK || spatial_rank < 1)
        return st;
    tc_window_attrs a;
    if ((st = read_window(ctx, node, spatial_rank, &a)))
        return st;
    for (int i = 0; i < spatial_rank; i++) {
        const tc_dim *k = w.shape.rank >= 0 ? &w.shape.dims[2 + i] : NULL;
        if (k && k->kind == TCONV_DIM_STATIC && a.kernel_shape[i] >= 0 &&
            k->value != a.kernel_shape[i])
            return tc_si_fail(ctx, node, "kernel_shape[%d] = %lld but W has %lld on that axis", i,
                              (long long)a.kernel_shape[i], (long long)k->value);
        if (k && k->kind == TCONV_DIM_STATIC)
            a.kernel_shape[i] = k->value;
    }
    tc_si_shape_unknown(&outs[0].shape, spatial_rank + 2);
    if ((st = conv_channels(ctx, node, &x, &w, &outs[0].shape.dims[1])))
        return st;
    if (x.shape.rank < 0)
        return TCONV_OK;
    outs[0].shape.dims[0] = x.shape.dims[0];
    return window_spatial(ctx, node, &a, &x.shape, &outs[0].shape);
}

tconv_status tc_si_infer_pool(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    if (x.shape.rank < 0)
        return TCONV_OK;
    if (x.shape.rank < 3 || x.shape.rank > TC_MAX_SPATIAL + 2)
        return tc_si_fail(ctx, node, "input X has rank %d; 3 to %d are supported", x.shape.rank,
                          TC_MAX_SPATIAL + 2);
    tc_window_attrs a;
    tconv_status st = read_window(ctx, node, x.shape.rank - 2, &a);
    if (st != TCONV_OK)
        return st;
    tc_si_shape_unknown(&outs[0].shape, x.shape.rank);
    outs[0].shape.dims[0] = x.shape.dims[0];
    outs[0].shape.dims[1] = x.shape.dims[1];
    st = window_spatial(ctx, node, &a, &x.shape, &outs[0].shape);
    if (st == TCONV_OK && node->n_outputs > 1) { /* MaxPool's Indices */
        outs[1].dtype = TCONV_DTYPE_INT64;
        outs[1].shape = outs[0].shape;
    }
    return st;
}

tconv_status tc_si_infer_global_pool(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    if (x.shape.rank < 0)
        return TCONV_OK;
    if (x.shape.rank < 2)
        return tc_si_fail(ctx, node, "input X has rank %d; at least 2 is needed", x.shape.rank);
    outs[0].shape = x.shape;
    for (int i = 2; i < x.shape.rank; i++)
        outs[0].shape.dims[i] = tc_si_dim_static(1);
    return TCONV_OK;
}

/* MaxUnpool: output_shape when it is known, else (in - 1) * stride + kernel - pads per spatial
 * axis; X's type. */
tconv_status tc_si_infer_max_unpool(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    int64_t shape[TC_MAX_RANK];
    int count = 0;
    if (node->n_inputs > 2 && node->inputs[2]) {
        if (!tc_si_input_ints(ctx, node, 2, shape, &count) || count > TC_MAX_RANK)
            return TCONV_OK;
        tc_si_shape_unknown(&outs[0].shape, count);
        for (int i = 0; i < count; i++)
            outs[0].shape.dims[i] = tc_si_dim_static(shape[i]);
        return TCONV_OK;
    }
    if (x.shape.rank < 3)
        return TCONV_OK;
    int n = x.shape.rank - 2;
    bool has_k = false, has_s = false, has_p = false;
    const int64_t *k = NULL, *st = NULL, *pads = NULL;
    size_t nk = 0, ns = 0, np = 0;
    tconv_status s1 = tc_node_attr_ints(node, "kernel_shape", &has_k, &k, &nk, ctx->err);
    if (s1 == TCONV_OK)
        s1 = tc_node_attr_ints(node, "strides", &has_s, &st, &ns, ctx->err);
    if (s1 == TCONV_OK)
        s1 = tc_node_attr_ints(node, "pads", &has_p, &pads, &np, ctx->err);
    if (s1 != TCONV_OK)
        return s1;
    if (!has_k || (int)nk != n || (has_s && (int)ns != n) || (has_p && (int)np != 2 * n))
        return tc_si_fail(ctx, node, "kernel_shape, strides and pads do not fit %d spatial axes",
                          n);
    tc_si_shape_unknown(&outs[0].shape, x.shape.rank);
    outs[0].shape.dims[0] = x.shape.dims[0];
    outs[0].shape.dims[1] = x.shape.dims[1];
    for (int i = 0; i < n; i++) {
        const tc_dim *d = &x.shape.dims[2 + i];
        if (d->kind != TCONV_DIM_STATIC)
            continue;
        int64_t v =
            (d->value - 1) * (has_s ? st[i] : 1) + k[i] - (has_p ? pads[i] + pads[n + i] : 0);
        outs[0].shape.dims[2 + i] = tc_si_dim_static(v);
    }
    return TCONV_OK;
}
