/* Shape rules of ArgMax/ArgMin and LayerNormalization (the Reduce* rule is in
 * shape_infer_tensor.c; the other normalizations keep their input's type and shape). */
#include "passes/shape_infer.h"

#include <string.h>

/* ArgMax, ArgMin: int64 indices, the axis dropped or kept as 1. */
tconv_status tc_si_infer_arg_reduce(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = TCONV_DTYPE_INT64;
    int64_t axis_attr, keep_dims;
    int axis;
    tconv_status st;
    if ((st = tc_node_attr_int(node, "axis", 0, &axis_attr, ctx->err)) ||
        (st = tc_node_attr_int_or_default(node, "keepdims", &keep_dims, ctx->err)) ||
        x.shape.rank < 0 ||
        (st = tc_si_normalize_axis(ctx, node, "axis", axis_attr, x.shape.rank, &axis)))
        return st;
    outs[0].shape.rank = 0;
    for (int i = 0; i < x.shape.rank; i++) {
        if (i != axis)
            outs[0].shape.dims[outs[0].shape.rank++] = x.shape.dims[i];
        else if (keep_dims)
            outs[0].shape.dims[outs[0].shape.rank++] = tc_si_dim_static(1);
    }
    return TCONV_OK;
}

/* Y is X's type; Mean and InvStdDev have X's dims before axis and 1 from axis on, in the stash
 * type (float unless stash_type says otherwise). */
tconv_status tc_si_infer_layer_normalization(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    int64_t axis_attr, stash;
    int axis;
    tconv_status st;
    if ((st = tc_node_attr_int(node, "axis", -1, &axis_attr, ctx->err)) ||
        (st = tc_node_attr_int(node, "stash_type", TCONV_DTYPE_FLOAT, &stash, ctx->err)))
        return st;
    for (size_t i = 1; i < node->n_outputs && i <= 2; i++) {
        outs[i].dtype = (tconv_dtype)stash;
        outs[i].shape.rank = -1;
    }
    int rank = outs[0].shape.rank;
    if (rank < 0 || (st = tc_si_normalize_axis(ctx, node, "axis", axis_attr, rank, &axis)))
        return st;
    for (size_t i = 1; i < node->n_outputs && i <= 2; i++) {
        outs[i].shape = outs[0].shape;
        for (int d = axis; d < rank; d++)
            outs[i].shape.dims[d] = tc_si_dim_static(1);
    }
    return TCONV_OK;
}

/* NegativeLogLikelihoodLoss: the loss per target element (reduction none: the target's shape)
 * or their weighted mean or sum (a scalar), of the input's type. */
tconv_status tc_si_infer_nll_loss(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    const char *reduction;
    tconv_status st = tc_node_attr_string(node, "reduction", "mean", &reduction, ctx->err);
    if (st != TCONV_OK)
        return st;
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    if (strcmp(reduction, "none") == 0)
        tc_si_same_as_input(ctx, node, 1, &outs[0]);
    else
        tc_si_shape_unknown(&outs[0].shape, 0);
    outs[0].dtype = x.dtype;
    return TCONV_OK;
}
