/* 3-D through 2-D where the depth axis is a plain copy: kernel 1, stride 1, no pads and no
 * output_padding on it (the "(1,k,k)" Conv3DTranspose of onnx/tensorflow-onnx#2286). Each depth
 * slice is then an independent 2-D ConvTranspose, so depth folds into the batch:
 *   Y = Transpose(Reshape(ConvTranspose2D(Reshape(Transpose(X, 0,2,1,3,4), [-1, C, H, W]),
 *                                         W[:, :, 0]), [-1, D, C_out, H', W']), 0,2,1,3,4)
 * Same products, same sums. Needs X's depth and spatial sizes static (the Reshapes name them).
 * Any other 3-D node on a 2-D-only target is refused: the general case (k_d 2-D ConvTransposes
 * and a strided scatter-add along depth) is not proven here. */
#include <stdio.h>
#include <string.h>

#include "passes/target_lower.h"

bool tc_lower_depth_foldable(const tc_conv_transpose_match *m) {
    const tc_conv_transpose_geometry *g = &m->geometry;
    if (g->spatial_rank != 3 || g->kernel[0] != 1 || g->strides[0] != 1 || g->pad_begin[0] != 0 ||
        g->pad_end[0] != 0 || g->output_padding[0] != 0 || m->attrs.has_output_shape)
        return false;
    for (int i = 2; i < 5; i++) {
        if (m->x_dims[i] < 0)
            return false;
    }
    return g->c_out >= 0 && g->out[1] >= 0 && g->out[2] >= 0 && m->x_dims[1] >= 0;
}

static bool match_depth(const tc_target *t, const tc_conv_transpose_match *m, char *why,
                        size_t why_size) {
    why[0] = '\0';
    if (!t->conv_transpose || m->geometry.spatial_rank != 3 || tc_target_rank_ok(t, 3) ||
        !tc_target_rank_ok(t, 2))
        return false;
    if (tc_lower_depth_foldable(m))
        return true;
    snprintf(why, why_size,
             "3-D through 2-D is proven only for depth kernel 1, stride 1, no depth pads and "
             "static sizes; this node has depth kernel %lld, stride %lld",
             (long long)m->geometry.kernel[0], (long long)m->geometry.strides[0]);
    return false;
}

static tconv_status merge_depth(tc_weight *weight, const void *ctx, tc_error *err) {
    (void)ctx;
    return tc_weight_merge_axes(weight, 2, 2, err); /* (k_d = 1, k_h) -> k_h */
}

/* The 2-D attributes: axes 1 and 2 of the 3-D ones. */
static tconv_status set_2d_attrs(tc_emitter *e, tconv_node *node,
                                 const tc_conv_transpose_match *m) {
    const tc_conv_transpose_attrs *a = &m->attrs;
    const tc_conv_transpose_geometry *g = &m->geometry;
    const int64_t values[4][2] = {{g->kernel[1], g->kernel[2]},
                                  {g->strides[1], g->strides[2]},
                                  {g->dilations[1], g->dilations[2]},
                                  {a->output_padding[1], a->output_padding[2]}};
    const int64_t pads[4] = {a->pads[1], a->pads[2], a->pads[4], a->pads[5]};
    return tc_lower_set_2d_attrs(node, a, values, pads, e->err);
}

static tconv_status rewrite_depth(tc_emitter *e, const tc_conv_transpose_match *m,
                                  tconv_node **added, size_t max_added, size_t *n_added) {
    (void)added;
    (void)max_added;
    *n_added = 0;
    tconv_node *node = m->node;
    const tc_conv_transpose_geometry *g = &m->geometry;
    tconv_value *x = node->inputs[0], *w = node->inputs[1], *y = node->outputs[0];
    static const int64_t perm[5] = {0, 2, 1, 3, 4};
    int64_t depth = m->x_dims[2];
    int64_t x_shape[4] = {-1, m->x_dims[1], m->x_dims[3], m->x_dims[4]};
    int64_t y_shape[5] = {-1, depth, g->c_out, g->out[1], g->out[2]};
    int64_t depth_axis = 2;
    tconv_value *xt, *x2, *w2, *y2, *y3, *out;
    bool constant;
    tc_emitter_before(e, node);
    tconv_status st;
    int64_t batch = m->x_dims[0] >= 0 ? m->x_dims[0] * depth : -1;
    int64_t x2_dims[4] = {batch, m->x_dims[1], m->x_dims[3], m->x_dims[4]};
    int64_t y2_dims[4] = {batch, g->c_out, g->out[1], g->out[2]};
    tconv_dtype dtype = tc_lower_node_dtype(node);
    if ((st = tc_emit_transpose(e, x, perm, 5, "depth_to_batch", &xt)) ||
        (st = tc_emit_reshape(e, xt, x_shape, 4, "depth_in_batch", &x2)) ||
        (st = tc_emit_declare(e, x2, dtype, 4, x2_dims)) ||
        (st = tc_lower_constant_weight(e, w, "depth_weights", merge_depth, NULL, &w2, &constant)))
        return st;
    if (!constant) {
        int64_t w_dims[4] = {m->w_dims[0], m->w_dims[1], m->w_dims[3], m->w_dims[4]};
        tconv_dtype w_dtype = w->type.kind == TCONV_TYPE_TENSOR ? w->type.dtype : dtype;
        if ((st = tc_emit_squeeze(e, w, &depth_axis, 1, "depth_weights", &w2)) ||
            (st = tc_emit_declare(e, w2, w_dtype, 4, w_dims)))
            return st;
    }
    if ((st = tc_node_set_input(node, 0, x2, e->err)) ||
        (st = tc_node_set_input(node, 1, w2, e->err)) || (st = set_2d_attrs(e, node, m)) ||
        (st = tc_emit_value(e, "depth_folded_output", &y2)) ||
        (st = tc_node_set_output(node, 0, y2, e->err)) ||
        (st = tc_emit_declare(e, y2, dtype, 4, y2_dims)))
        return st;
    tc_emitter_after(e, node);
    if ((st = tc_emit_reshape(e, y2, y_shape, 5, "batch_to_depth", &y3)) ||
        (st = tc_emit_transpose(e, y3, perm, 5, "depth_back", &out)) ||
        (st = tc_node_set_output(out->producer, 0, y, e->err)))
        return st;
    return tc_emitter_record(e, node);
}

const tc_lowering tc_lower_depth = {"3-D through 2-D", match_depth, rewrite_depth};
