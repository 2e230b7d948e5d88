/* shape-infer rules for the detection ops: NonMaxSuppression (its row count depends on the
 * data: unknown), RoiAlign ([num_rois, C, output_height, output_width]) and GridSample
 * ([N, C, grid's spatial dims]). */
#include "passes/shape_infer.h"

tconv_status tc_si_infer_non_max_suppression(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    (void)node;
    outs[0].dtype = TCONV_DTYPE_INT64;
    tc_si_shape_unknown(&outs[0].shape, 2); /* [selected, 3] */
    outs[0].shape.dims[1] = tc_si_dim_static(3);
    return TCONV_OK;
}

tconv_status tc_si_infer_roi_align(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x, rois, batch_indices;
    tc_si_input(ctx, node, 0, &x);
    tc_si_input(ctx, node, 1, &rois);
    tc_si_input(ctx, node, 2, &batch_indices);
    outs[0].dtype = x.dtype;
    int64_t height, width;
    tconv_status st = tc_node_attr_int(node, "output_height", 1, &height, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "output_width", 1, &width, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (height < 1 || width < 1)
        return tc_si_fail(ctx, node,
                          "output_height and output_width must be at least 1 (%lld, %lld)",
                          (long long)height, (long long)width);
    if (x.shape.rank >= 0 && x.shape.rank != 4)
        return tc_si_fail(ctx, node, "X must be 4-D [N, C, H, W], not %d-D", x.shape.rank);
    tc_si_shape_unknown(&outs[0].shape, 4);
    if (rois.shape.rank == 2)
        outs[0].shape.dims[0] = rois.shape.dims[0];
    else if (batch_indices.shape.rank == 1)
        outs[0].shape.dims[0] = batch_indices.shape.dims[0];
    if (x.shape.rank == 4)
        outs[0].shape.dims[1] = x.shape.dims[1];
    outs[0].shape.dims[2] = tc_si_dim_static(height);
    outs[0].shape.dims[3] = tc_si_dim_static(width);
    return TCONV_OK;
}

tconv_status tc_si_infer_grid_sample(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x, grid;
    tc_si_input(ctx, node, 0, &x);
    tc_si_input(ctx, node, 1, &grid);
    outs[0].dtype = x.dtype;
    if (x.shape.rank >= 0 && x.shape.rank < 3)
        return tc_si_fail(ctx, node, "X must be at least 3-D [N, C, spatial...], not %d-D",
                          x.shape.rank);
    if (x.shape.rank < 0 || grid.shape.rank < 0) {
        outs[0].shape.rank = -1;
        return TCONV_OK;
    }
    if (grid.shape.rank != x.shape.rank)
        return tc_si_fail(ctx, node, "grid must have X's rank %d, not %d", x.shape.rank,
                          grid.shape.rank);
    if (grid.shape.dims[grid.shape.rank - 1].kind == TCONV_DIM_STATIC &&
        !tc_si_dim_is(&grid.shape.dims[grid.shape.rank - 1], x.shape.rank - 2))
        return tc_si_fail(ctx, node, "grid's last dim must be %d (X's spatial rank)",
                          x.shape.rank - 2);
    outs[0].shape.rank = x.shape.rank;
    outs[0].shape.dims[0] =
        x.shape.dims[0].kind == TCONV_DIM_STATIC ? x.shape.dims[0] : grid.shape.dims[0];
    outs[0].shape.dims[1] = x.shape.dims[1];
    for (int d = 2; d < x.shape.rank; d++)
        outs[0].shape.dims[d] = grid.shape.dims[d - 1];
    return TCONV_OK;
}
