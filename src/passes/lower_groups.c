/* (d) groups split: a ConvTranspose of G groups is G ConvTransposes of one group each, on the
 * group's slice of X's channels, W's input channels and B's output channels, concatenated on
 * the channel axis: Y = Concat(ConvTranspose(X[:, g*Ci:(g+1)*Ci], W[g*Ci:(g+1)*Ci],
 * B[g*Co:(g+1)*Co]) for g < G, axis 1), with Ci = C_in / G and Co = W.shape[1]. Same products,
 * same sums. A depthwise node stays grouped where the target takes depthwise groups. The slices
 * are Slice nodes, so W and B may be constants, DequantizeLinear outputs or graph inputs. */
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

/* X's, W's and B's slices of group g go before the node. */
static tconv_status slice_inputs(tc_emitter *e, const tc_conv_transpose_match *m, int64_t g,
                                 tconv_value **in) {
    tconv_node *node = m->node;
    int64_t ci = m->w_dims[0] / m->geometry.group, co = m->w_dims[1];
    int64_t axis_c = 1, axis_0 = 0, begin = g * ci, end = (g + 1) * ci;
    int64_t b_begin = g * co, b_end = (g + 1) * co;
    tconv_status st;
    if ((st = tc_emit_slice(e, node->inputs[0], &axis_c, &begin, &end, 1, "group_input", &in[0])) ||
        (st = tc_lower_declare_like(e, in[0], node->inputs[0], 1, ci, -1)) ||
        (st = tc_emit_slice(e, node->inputs[1], &axis_0, &begin, &end, 1, "group_weights",
                            &in[1])) ||
        (st = tc_lower_declare_like(e, in[1], node->inputs[1], 0, ci, -1)))
        return st;
    in[2] = NULL;
    if (node->n_inputs > 2 && node->inputs[2]) {
        if ((st = tc_emit_slice(e, node->inputs[2], &axis_0, &b_begin, &b_end, 1, "group_bias",
                                &in[2])) ||
            (st = tc_lower_declare_like(e, in[2], node->inputs[2], 0, co, -1)))
            return st;
    }
    return TCONV_OK;
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
