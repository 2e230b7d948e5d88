/* (d) groups split: a ConvTranspose of G groups is G ConvTransposes of one group each, on the
 * group's slice of X's channels, W's input channels and B's output channels, concatenated on
 * the channel axis: Y = Concat(ConvTranspose(X[:, g*Ci:(g+1)*Ci], W[g*Ci:(g+1)*Ci],
 * B[g*Co:(g+1)*Co]) for g < G, axis 1), with Ci = C_in / G and Co = W.shape[1]. Same products,
 * same sums. A depthwise node stays grouped where the target takes depthwise groups. Constant W
 * and B are sliced by lower_weights (a DequantizeLinear of a constant stays one, its per-channel
 * scales sliced along), others by Slice nodes (graph inputs, computed weights). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/target_lower.h"

static bool match_groups(const tc_target *t, const tc_conv_transpose_match *m, char *why,
                         size_t why_size) {
    why[0] = '\0';
    int64_t group = m->geometry.group;
    if (group == 1 || t->group == TC_GROUPS_ANY || !t->conv_transpose)
        return false;
    bool depthwise = m->w_dims[0] == group;
    if (t->group == TC_GROUPS_DEPTHWISE && depthwise)
        return false;
    if (m->w_dims[0] < 0 || m->w_dims[1] < 0) {
        snprintf(why, why_size, "groups cannot be split: W's channel dims are unknown");
        return false;
    }
    return true;
}

typedef struct channel_range {
    int64_t start, size;
} channel_range;

static tconv_status slice_axis_0(tc_weight *weight, const void *ctx, tc_error *err) {
    const channel_range *r = ctx;
    return tc_weight_slice(weight, 0, r->start, r->size, err);
}

/* A slice of W or B on axis 0: a new constant where it is one (lower_weights), else a Slice. */
static tconv_status slice_weight(tc_emitter *e, tconv_value *v, int64_t start, int64_t size,
                                 const char *suffix, tconv_value **out) {
    channel_range range = {start, size};
    bool constant;
    tconv_status st = tc_lower_constant_weight(e, v, suffix, slice_axis_0, &range, out, &constant);
    if (st != TCONV_OK || constant)
        return st;
    int64_t axis = 0, end = start + size;
    st = tc_emit_slice(e, v, &axis, &start, &end, 1, suffix, out);
    return st == TCONV_OK ? tc_lower_declare_like(e, *out, v, 0, size, -1) : st;
}

/* X's, W's and B's slices of group g go before the node. */
static tconv_status slice_inputs(tc_emitter *e, const tc_conv_transpose_match *m, int64_t g,
                                 tconv_value **in) {
    tconv_node *node = m->node;
    int64_t ci = m->w_dims[0] / m->geometry.group, co = m->w_dims[1];
    int64_t axis_c = 1, begin = g * ci, end = (g + 1) * ci;
    tconv_status st;
    if ((st = tc_emit_slice(e, node->inputs[0], &axis_c, &begin, &end, 1, "group_input", &in[0])) ||
        (st = tc_lower_declare_like(e, in[0], node->inputs[0], 1, ci, -1)) ||
        (st = slice_weight(e, node->inputs[1], g * ci, ci, "group_weights", &in[1])))
        return st;
    in[2] = NULL;
    if (node->n_inputs > 2 && node->inputs[2])
        st = slice_weight(e, node->inputs[2], g * co, co, "group_bias", &in[2]);
    return st;
}

static tconv_status rewrite_groups(tc_emitter *e, const tc_conv_transpose_match *m,
                                   tconv_node **added, size_t max_added, size_t *n_added) {
    tconv_node *node = m->node;
    int64_t group = m->geometry.group, co = m->w_dims[1];
    tconv_value *y = node->outputs[0];
    *n_added = 0;
    if ((size_t)group - 1 > max_added)
        return tc_error_set(e->err, TCONV_ERR_LIMIT, "internal: %lld groups to split",
                            (long long)group);
    tconv_value **outs = calloc((size_t)group, sizeof *outs);
    tconv_value *(*ins)[3] = calloc((size_t)group, sizeof *ins);
    tconv_status st = outs && ins ? TCONV_OK : tc_error_nomem(e->err, "a group split");
    tc_emitter_before(e, node);
    for (int64_t g = 0; g < group && st == TCONV_OK; g++)
        st = slice_inputs(e, m, g, ins[g]);
    size_t n_in = node->n_inputs > 2 && node->inputs[2] ? 3 : 2;
    tc_emitter_after(e, node);
    for (int64_t g = 1; g < group && st == TCONV_OK; g++) {
        tconv_node *conv;
        if ((st = tc_emit_node(e, "ConvTranspose", "group", ins[g], n_in, &conv, &outs[g])) ||
            (st = tc_lower_copy_attrs(node, conv, e->err)) ||
            (st = tc_node_set_attr_int(conv, "group", 1, e->err)) ||
            (st = tc_lower_declare_like(e, outs[g], y, 1, co, -1)))
            break;
        added[(*n_added)++] = conv;
    }
    for (size_t i = 0; i < n_in && st == TCONV_OK; i++)
        st = tc_node_set_input(node, i, ins[0][i], e->err);
    if (st == TCONV_OK && (st = tc_node_set_attr_int(node, "group", 1, e->err)) == TCONV_OK &&
        (st = tc_emit_value(e, "group_output", &outs[0])) == TCONV_OK &&
        (st = tc_node_set_output(node, 0, outs[0], e->err)) == TCONV_OK)
        st = tc_lower_declare_like(e, outs[0], y, 1, co, -1);
    tconv_value *joined;
    if (st == TCONV_OK &&
        (st = tc_emit_concat(e, outs, (size_t)group, 1, "groups", &joined)) == TCONV_OK)
        st = tc_node_set_output(joined->producer, 0, y, e->err);
    free(outs);
    free(ins);
    return st == TCONV_OK ? tc_emitter_record(e, node) : st;
}

const tc_lowering tc_lower_groups = {"groups split", match_groups, rewrite_groups};
