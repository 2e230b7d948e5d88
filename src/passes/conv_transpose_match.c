#include "passes/conv_transpose_match.h"

#include <string.h>

bool tc_is_conv_transpose(const tconv_node *node) {
    return tc_node_is(node, TC_KIND_ConvTranspose);
}

/* Rank and dims of a value's declared type; unknown dims are -1, unknown rank gives -1. */
static int value_dims(const tconv_value *value, int64_t *dims) {
    if (!value || value->type.kind != TCONV_TYPE_TENSOR || value->type.rank < 0 ||
        value->type.rank > TC_MAX_RANK)
        return -1;
    for (int i = 0; i < value->type.rank; i++) {
        const tc_dim *d = &value->type.dims[i];
        dims[i] = d->kind == TCONV_DIM_STATIC ? d->value : -1;
    }
    return value->type.rank;
}

static tconv_status prefix_node(const tconv_node *node, tconv_status st, tc_error *err) {
    char where[256];
    return tc_error_prefix(err, st, "%s: ", tc_node_describe(node, where, sizeof where));
}

tconv_status tc_conv_transpose_match_node(tconv_node *node, tconv_convention convention,
                                          tc_conv_transpose_match *out, tc_error *err) {
    memset(out, 0, sizeof *out);
    out->node = node;
    if (node->n_inputs < 2 || !node->inputs[0] || !node->inputs[1] || node->n_outputs < 1 ||
        !node->outputs[0]) {
        char where[256];
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "%s: needs inputs X and W and output Y (has %zu inputs, %zu "
                            "outputs)",
                            tc_node_describe(node, where, sizeof where), node->n_inputs,
                            node->n_outputs);
    }
    out->x_rank = value_dims(node->inputs[0], out->x_dims);
    out->w_rank = value_dims(node->inputs[1], out->w_dims);
    /* the runtime kernel's checks, wherever the shapes are known */
    tconv_status st = tc_conv_transpose_check_ranks(out->x_rank, out->w_rank, err);
    if (st != TCONV_OK)
        return prefix_node(node, st, err);
    int rank = out->x_rank >= 0 ? out->x_rank : out->w_rank;
    st = tc_conv_transpose_read_attrs(node, rank >= 0 ? rank - 2 : -1, &out->attrs, err);
    if (st != TCONV_OK)
        return st;
    if (rank < 0)
        rank = out->attrs.spatial_rank + 2;
    /* Unknown shapes become all-unknown dims of the right rank. */
    if (out->x_rank < 0) {
        out->x_rank = rank;
        for (int i = 0; i < rank; i++)
            out->x_dims[i] = -1;
    }
    if (out->w_rank < 0) {
        out->w_rank = rank;
        for (int i = 0; i < rank; i++)
            out->w_dims[i] = -1;
    }
    st = tc_conv_transpose_resolve(&out->attrs, out->x_dims, out->w_dims, convention,
                                   &out->geometry, err);
    if (st == TCONV_OK && node->n_inputs > 2 && node->inputs[2]) {
        int64_t b_dims[TC_MAX_RANK];
        st = tc_conv_transpose_check_bias(value_dims(node->inputs[2], b_dims), b_dims,
                                          out->geometry.c_out, err);
    }
    return st == TCONV_OK ? st : prefix_node(node, st, err);
}

static bool has_output_padding(const tc_conv_transpose_attrs *a) {
    for (int i = 0; i < a->spatial_rank; i++) {
        if (a->output_padding[i] != 0)
            return true;
    }
    return false;
}

static bool has_asymmetric_pads(const tc_conv_transpose_geometry *g) {
    for (int i = 0; i < g->spatial_rank; i++) {
        if (g->pad_begin[i] != g->pad_end[i])
            return true;
    }
    return false;
}

static bool has_any_pads(const tc_conv_transpose_geometry *g) {
    for (int i = 0; i < g->spatial_rank; i++) {
        if (g->pad_begin[i] != 0 || g->pad_end[i] != 0)
            return true;
    }
    return false;
}

bool tc_conv_transpose_needs_rewrite(const tc_conv_transpose_match *m, tconv_policy policy) {
    const tc_conv_transpose_attrs *a = &m->attrs;
    bool same = tc_auto_pad_is_same(a->auto_pad);
    if (same || a->has_output_shape || has_output_padding(a) || has_asymmetric_pads(&m->geometry))
        return true;
    return policy == TCONV_POLICY_VALID_ONLY && has_any_pads(&m->geometry);
}
