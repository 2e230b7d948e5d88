/* Shape inference for the recurrent ops (RNN, GRU, LSTM): Y is [T, D, N, H] ([N, T, D, H] with
 * layout 1), Y_h and Y_c are [D, N, H] ([N, D, H]), with T and N from X, D from W and H from the
 * hidden_size attribute or R. */
#include "passes/shape_infer.h"

#include <string.h>

tconv_status tc_si_infer_rnn(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x, w, r;
    tc_si_input(ctx, node, 0, &x);
    tc_si_input(ctx, node, 1, &w);
    tc_si_input(ctx, node, 2, &r);
    int64_t hidden, layout;
    tconv_status st = tc_node_attr_int(node, "hidden_size", 0, &hidden, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "layout", 0, &layout, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (x.shape.rank >= 0 && x.shape.rank != 3)
        return tc_si_fail(ctx, node, "X must have rank 3, has %d", x.shape.rank);
    tc_dim t = tc_si_dim_unknown(), n = tc_si_dim_unknown(), d = tc_si_dim_unknown();
    tc_dim h = hidden > 0 ? tc_si_dim_static(hidden) : tc_si_dim_unknown();
    if (x.shape.rank == 3) {
        t = x.shape.dims[layout ? 1 : 0];
        n = x.shape.dims[layout ? 0 : 1];
    }
    if (w.shape.rank == 3)
        d = w.shape.dims[0];
    if (hidden <= 0 && r.shape.rank == 3)
        h = r.shape.dims[2];
    for (size_t i = 0; i < node->n_outputs; i++) {
        outs[i].dtype = x.dtype;
        if (i == 0) {
            tc_si_shape_unknown(&outs[i].shape, 4);
            tc_dim y0[4] = {t, d, n, h}, y1[4] = {n, t, d, h};
            memcpy(outs[i].shape.dims, layout ? y1 : y0, sizeof y0);
        } else {
            tc_si_shape_unknown(&outs[i].shape, 3);
            tc_dim s0[3] = {d, n, h}, s1[3] = {n, d, h};
            memcpy(outs[i].shape.dims, layout ? s1 : s0, sizeof s0);
        }
    }
    return TCONV_OK;
}
