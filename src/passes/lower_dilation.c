/* (e) dilation folded into W: a ConvTranspose with dilation d on an axis equals one with
 * dilation 1 whose kernel has d-1 zeros between taps, (k-1)*d+1 long. The zeros are inserted by
 * lower_weights into a constant W (a DequantizeLinear of one stays one: the inserted taps hold
 * the zero point), else by graph ops on W (per dilated axis: Unsqueeze after it, Pad the new
 * axis to d, Reshape the two into k*d, Slice the first (k-1)*d+1), so W may be a graph input. Pads,
 * output size and the products are unchanged; the multiplies by the inserted zeros are new (0 * Inf
 * is NaN where the original never multiplied: backend-constraints, Exactness). */
#include <stdio.h>
#include <string.h>

#include "passes/target_lower.h"

static bool dilated(const tc_conv_transpose_match *m) {
    for (int i = 0; i < m->geometry.spatial_rank; i++) {
        if (m->geometry.dilations[i] != 1)
            return true;
    }
    return false;
}

static bool match_dilation(const tc_target *t, const tc_conv_transpose_match *m, char *why,
                           size_t why_size) {
    why[0] = '\0';
    if (t->dilation || !dilated(m))
        return false;
    for (int i = 0; i < m->w_rank; i++) {
        if (m->w_dims[i] < 0) {
            snprintf(why, why_size, "dilation cannot be folded into W: W's shape is unknown");
            return false;
        }
    }
    return true;
}

/* lower_weights' edit of a constant W: d-1 zeros between taps on each dilated axis. */
static tconv_status spread_taps(tc_weight *weight, const void *ctx, tc_error *err) {
    const tc_conv_transpose_geometry *g = ctx;
    tconv_status st = TCONV_OK;
    for (int i = 0; i < g->spatial_rank && st == TCONV_OK; i++) {
        if (g->dilations[i] != 1)
            st = tc_weight_spread(weight, 2 + i, g->dilations[i], err);
    }
    return st;
}

static tconv_status rewrite_dilation(tc_emitter *e, const tc_conv_transpose_match *m,
                                     tconv_node **added, size_t max_added, size_t *n_added) {
    (void)added;
    (void)max_added;
    *n_added = 0;
    tconv_node *node = m->node;
    const tc_conv_transpose_geometry *g = &m->geometry;
    int rank = m->w_rank, r = g->spatial_rank;
    int64_t dims[TC_MAX_RANK];
    memcpy(dims, m->w_dims, sizeof dims);
    tconv_dtype dtype = node->inputs[1]->type.kind == TCONV_TYPE_TENSOR
                            ? node->inputs[1]->type.dtype
                            : tc_lower_node_dtype(node);
    tconv_value *w = node->inputs[1];
    tc_emitter_before(e, node);
    bool constant;
    tconv_status st =
        tc_lower_constant_weight(e, w, "dilated_weights", spread_taps, g, &w, &constant);
    for (int i = 0; i < r && st == TCONV_OK && !constant; i++) {
        int64_t d = g->dilations[i], k = dims[2 + i];
        if (d == 1)
            continue;
        int64_t axis = 2 + i, after = axis + 1;
        int64_t pads[2 * TC_MAX_RANK] = {0};
        pads[(rank + 1) + after] = d - 1;
        int64_t shape[TC_MAX_RANK];
        memcpy(shape, dims, sizeof shape);
        shape[axis] = k * d;
        int64_t zero = 0, ke = (k - 1) * d + 1;
        tconv_value *u, *p, *s;
        if ((st = tc_emit_unsqueeze(e, w, &after, 1, "dilate_unsqueeze", &u)) ||
            (st = tc_emit_pad(e, u, pads, rank + 1, "dilate_zeros", &p)) ||
            (st = tc_emit_reshape(e, p, shape, rank, "dilate_merge", &w)) ||
            (st = tc_emit_slice(e, w, &axis, &zero, &ke, 1, "dilate_kernel", &s)))
            break;
        dims[axis] = ke;
        w = s;
        st = tc_emit_declare(e, w, dtype, rank, dims);
    }
    int64_t ones[TC_MAX_SPATIAL], kernel[TC_MAX_SPATIAL];
    for (int i = 0; i < r; i++) {
        ones[i] = 1;
        kernel[i] = (g->kernel[i] - 1) * g->dilations[i] + 1;
    }
    if (st == TCONV_OK)
        st = tc_node_set_input(node, 1, w, e->err);
    if (st == TCONV_OK)
        st = tc_node_set_attr_ints(node, "dilations", ones, (size_t)r, e->err);
    if (st == TCONV_OK && tc_node_attr(node, "kernel_shape"))
        st = tc_node_set_attr_ints(node, "kernel_shape", kernel, (size_t)r, e->err);
    return st == TCONV_OK ? tc_emitter_record(e, node) : st;
}

const tc_lowering tc_lower_dilation = {"dilation folded into W", match_dilation, rewrite_dilation};
