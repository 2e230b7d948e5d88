/* (c) 1-D through 2-D: Y = Squeeze(ConvTranspose2D(Unsqueeze(X, 2), Unsqueeze(W, 2)), 2). The
 * new axis has size 1 in X and W: its output is F = s*(1-1) + 1 = 1 for any stride, so it takes
 * the stride of the real axis (targets that want square strides, 2x2, accept it) unless the node
 * is SAME, where it takes stride 1 (SAME's output x*s would be s). Same products, same sums. */
#include <stdio.h>
#include <string.h>

#include "passes/target_lower.h"

static bool match_rank(const tc_target *t, const tc_conv_transpose_match *m, char *why,
                       size_t why_size) {
    why[0] = '\0';
    int r = m->geometry.spatial_rank;
    if (!t->conv_transpose || tc_target_rank_ok(t, r))
        return false;
    if (r == 1 && tc_target_rank_ok(t, 2))
        return true;
    if (r == 1)
        snprintf(why, why_size, "1-D on a target without 2-D");
    return false; /* 3-D: lower_depth.c */
}

static tconv_status insert_axis_2(tc_weight *weight, const void *ctx, tc_error *err) {
    (void)ctx;
    return tc_weight_insert_axis(weight, 2, err);
}

static tconv_status rewrite_rank(tc_emitter *e, const tc_conv_transpose_match *m,
                                 tconv_node **added, size_t max_added, size_t *n_added) {
    (void)added;
    (void)max_added;
    *n_added = 0;
    tconv_node *node = m->node;
    const tc_conv_transpose_attrs *a = &m->attrs;
    const tc_conv_transpose_geometry *g = &m->geometry;
    tconv_value *x = node->inputs[0], *w = node->inputs[1], *y = node->outputs[0];
    int64_t axis = 2;
    tconv_value *x2, *w2, *y2, *out;
    tc_emitter_before(e, node);
    bool constant;
    tconv_status st;
    if ((st = tc_emit_unsqueeze(e, x, &axis, 1, "lift_input", &x2)) ||
        (st = tc_lower_declare_like(e, x2, x, -1, 0, 2)) ||
        (st =
             tc_lower_constant_weight(e, w, "lifted_weights", insert_axis_2, NULL, &w2, &constant)))
        return st;
    if (!constant && ((st = tc_emit_unsqueeze(e, w, &axis, 1, "lift_weights", &w2)) ||
                      (st = tc_lower_declare_like(e, w2, w, -1, 0, 2))))
        return st;
    if ((st = tc_node_set_input(node, 0, x2, e->err)) ||
        (st = tc_node_set_input(node, 1, w2, e->err)))
        return st;
    bool same = tc_auto_pad_is_same(a->auto_pad);
    const int64_t values[4][2] = {{1, g->kernel[0]},
                                  {same ? 1 : g->strides[0], g->strides[0]},
                                  {1, g->dilations[0]},
                                  {0, a->output_padding[0]}};
    const int64_t pads[4] = {0, a->pads[0], 0, a->pads[1]};
    if ((st = tc_lower_set_2d_attrs(node, a, values, pads, e->err)) ||
        (st = tc_emit_value(e, "lifted_output", &y2)) ||
        (st = tc_node_set_output(node, 0, y2, e->err)) ||
        (st = tc_lower_declare_like(e, y2, y, -1, 0, 2)))
        return st;
    tc_emitter_after(e, node);
    if ((st = tc_emit_squeeze(e, y2, &axis, 1, "lower", &out)) ||
        (st = tc_node_set_output(out->producer, 0, y, e->err)))
        return st;
    return tc_emitter_record(e, node);
}

const tc_lowering tc_lower_rank = {"1-D through 2-D", match_rank, rewrite_rank};
