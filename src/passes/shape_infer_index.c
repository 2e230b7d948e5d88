/* shape-infer rules for index and layout ops: Range, GatherElements, GatherND, ScatterElements,
 * ScatterND, CumSum, Trilu, DepthToSpace, SpaceToDepth, NonZero, TopK, OneHot, Einsum. Outputs
 * whose size depends on data (NonZero's count, Range's length when its inputs are not known)
 * get an unknown dim. */
#include "passes/shape_infer.h"
#include "ir/einsum_equation.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The output is input 0's dtype and shape (CumSum, Trilu, the scatters). */
static tconv_status same_as_data(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    return TCONV_OK;
}

tconv_status tc_si_infer_cumsum(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return same_as_data(ctx, node, outs);
}

tconv_status tc_si_infer_trilu(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return same_as_data(ctx, node, outs);
}

tconv_status tc_si_infer_scatter_elements(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return same_as_data(ctx, node, outs);
}

tconv_status tc_si_infer_scatter_nd(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return same_as_data(ctx, node, outs);
}

/* ---------------------------------------------------------------- Range */

tconv_status tc_si_infer_range(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor start;
    tc_si_input(ctx, node, 0, &start);
    outs[0].dtype = start.dtype;
    outs[0].shape.rank = 1;
    outs[0].shape.dims[0] = tc_si_dim_unknown();
    float v[3];
    int64_t iv[3];
    int ints = 0;
    for (int i = 0; i < 3; i++) {
        int64_t data[TC_SI_MAX_DATA];
        int n;
        if (tc_si_input_ints(ctx, node, (size_t)i, data, &n) && n == 1)
            iv[ints++] = data[0];
        else if (!tc_si_input_floats(ctx, node, (size_t)i, &v[i], 1, &n) || n != 1)
            return TCONV_OK;
    }
    if (ints == 3) { /* exactly, as the kernel counts (float lost digits past 2^24) */
        int64_t count;
        if (iv[2] == 0)
            return tc_si_fail(ctx, node, "delta is 0");
        if (tc_range_count_i64(iv[0], iv[1], iv[2], &count))
            outs[0].shape.dims[0] = tc_si_dim_static(count);
        return TCONV_OK;
    }
    if (ints > 0)
        return TCONV_OK; /* mixed: not a valid Range (one type T) */
    if (v[2] == 0.0f)
        return tc_si_fail(ctx, node, "delta is 0");
    double count = ceil(((double)v[1] - (double)v[0]) / (double)v[2]);
    if (count < 9.2e18) /* NaN and past int64: unknown */
        outs[0].shape.dims[0] = tc_si_dim_static(count > 0 ? (int64_t)count : 0);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- gathers */

tconv_status tc_si_infer_gather_elements(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    tc_si_tensor data, indices;
    tc_si_input(ctx, node, 0, &data);
    tc_si_input(ctx, node, 1, &indices);
    outs[0].dtype = data.dtype;
    outs[0].shape = indices.shape;
    return TCONV_OK;
}

tconv_status tc_si_infer_gather_nd(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor data, indices;
    tc_si_input(ctx, node, 0, &data);
    tc_si_input(ctx, node, 1, &indices);
    outs[0].dtype = data.dtype;
    int64_t batch;
    tconv_status st = tc_node_attr_int(node, "batch_dims", 0, &batch, ctx->err);
    if (st != TCONV_OK || data.shape.rank < 0 || indices.shape.rank < 1)
        return st;
    const tc_dim *last = &indices.shape.dims[indices.shape.rank - 1];
    if (last->kind != TCONV_DIM_STATIC)
        return TCONV_OK;
    int64_t k = last->value;
    if (batch < 0 || batch + k > data.shape.rank || batch >= indices.shape.rank)
        return tc_si_fail(ctx, node, "index tuples of %lld with batch_dims %lld for data rank %d",
                          (long long)k, (long long)batch, data.shape.rank);
    tc_si_shape *out = &outs[0].shape;
    out->rank = 0;
    if (indices.shape.rank - 1 + data.shape.rank - (int)(batch + k) > TC_MAX_RANK) {
        out->rank = -1;
        return TCONV_OK;
    }
    for (int i = 0; i < indices.shape.rank - 1; i++)
        out->dims[out->rank++] = indices.shape.dims[i];
    for (int i = (int)(batch + k); i < data.shape.rank; i++)
        out->dims[out->rank++] = data.shape.dims[i];
    return TCONV_OK;
}

/* ---------------------------------------------------------------- DepthToSpace, SpaceToDepth */

static tc_dim scaled_dim(const tc_dim *d, int64_t mul, int64_t div) {
    if (d->kind != TCONV_DIM_STATIC || d->value * mul % div != 0)
        return tc_si_dim_unknown();
    return tc_si_dim_static(d->value * mul / div);
}

/* channels * c_mul / c_div, spatial dims * s_mul / s_div. */
static tconv_status block_rule(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs, bool to_space) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    int64_t bs;
    tconv_status st = tc_node_attr_int(node, "blocksize", 0, &bs, ctx->err);
    if (st != TCONV_OK || x.shape.rank < 0)
        return st;
    if (x.shape.rank != 4 || bs < 1)
        return tc_si_fail(ctx, node, "needs a rank-4 input and blocksize >= 1");
    outs[0].shape = x.shape;
    int64_t b2 = bs * bs;
    outs[0].shape.dims[1] =
        to_space ? scaled_dim(&x.shape.dims[1], 1, b2) : scaled_dim(&x.shape.dims[1], b2, 1);
    for (int i = 2; i < 4; i++)
        outs[0].shape.dims[i] =
            to_space ? scaled_dim(&x.shape.dims[i], bs, 1) : scaled_dim(&x.shape.dims[i], 1, bs);
    return TCONV_OK;
}

tconv_status tc_si_infer_depth_to_space(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return block_rule(ctx, node, outs, true);
}

tconv_status tc_si_infer_space_to_depth(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return block_rule(ctx, node, outs, false);
}

/* ---------------------------------------------------------------- NonZero, TopK, OneHot */

tconv_status tc_si_infer_nonzero(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = TCONV_DTYPE_INT64;
    tc_si_shape_unknown(&outs[0].shape, 2); /* [rank, count]: count depends on the data */
    if (x.shape.rank >= 0)
        outs[0].shape.dims[0] = tc_si_dim_static(x.shape.rank);
    return TCONV_OK;
}

tconv_status tc_si_infer_topk(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    outs[1].dtype = TCONV_DTYPE_INT64;
    int64_t axis_attr, k = -1;
    int axis;
    tconv_status st = tc_node_attr_int(node, "axis", -1, &axis_attr, ctx->err);
    if (st == TCONV_OK && ctx->opset > 0 && ctx->opset < 10)
        st = tc_node_attr_int(node, "k", -1, &k, ctx->err);
    if (st != TCONV_OK || x.shape.rank < 0)
        return st;
    if ((st = tc_si_normalize_axis(ctx, node, "axis", axis_attr, x.shape.rank, &axis)))
        return st;
    int64_t kv[TC_SI_MAX_DATA];
    int n;
    if (k < 0 && tc_si_input_ints(ctx, node, 1, kv, &n) && n == 1)
        k = kv[0];
    outs[0].shape = x.shape;
    outs[0].shape.dims[axis] = k >= 0 ? tc_si_dim_static(k) : tc_si_dim_unknown();
    outs[1].shape = outs[0].shape;
    return TCONV_OK;
}

tconv_status tc_si_infer_one_hot(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor indices, values;
    tc_si_input(ctx, node, 0, &indices);
    tc_si_input(ctx, node, 2, &values);
    outs[0].dtype = values.dtype;
    int64_t axis_attr;
    int axis;
    tconv_status st = tc_node_attr_int(node, "axis", -1, &axis_attr, ctx->err);
    if (st != TCONV_OK || indices.shape.rank < 0 || indices.shape.rank + 1 > TC_MAX_RANK)
        return st;
    int rank = indices.shape.rank + 1;
    if ((st = tc_si_normalize_axis(ctx, node, "axis", axis_attr, rank, &axis)))
        return st;
    int64_t depth[TC_SI_MAX_DATA];
    float fdepth;
    int n;
    tc_dim d = tc_si_dim_unknown();
    if (tc_si_input_ints(ctx, node, 1, depth, &n) && n == 1)
        d = tc_si_dim_static(depth[0]);
    else if (tc_si_input_floats(ctx, node, 1, &fdepth, 1, &n) && n == 1)
        d = tc_si_dim_static((int64_t)fdepth);
    outs[0].shape.rank = rank;
    for (int i = 0, j = 0; i < rank; i++)
        outs[0].shape.dims[i] = i == axis ? d : indices.shape.dims[j++];
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Einsum */

tconv_status tc_si_infer_einsum(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor in[TC_EINSUM_MAX_OPERANDS] = {0};
    int ranks[TC_EINSUM_MAX_OPERANDS];
    int n = (int)node->n_inputs;
    if (n < 1 || n > TC_EINSUM_MAX_OPERANDS)
        return TCONV_OK;
    for (int i = 0; i < n; i++) {
        tc_si_input(ctx, node, (size_t)i, &in[i]);
        ranks[i] = in[i].shape.rank;
    }
    outs[0].dtype = in[0].dtype;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0)
            return TCONV_OK;
    }
    const char *equation;
    tc_einsum e;
    tconv_status st = tc_node_attr_string(node, "equation", "", &equation, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (tc_einsum_parse(equation, n, ranks, &e, ctx->err) != TCONV_OK) {
        char why[TC_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", ctx->err->message);
        return tc_si_fail(ctx, node, "%s", why);
    }
    outs[0].shape.rank = e.out_rank;
    for (int o = 0; o < e.out_rank; o++) {
        /* A dim other than 1 wins (1s broadcast); all 1: 1; else unknown. */
        tc_dim d = tc_si_dim_unknown();
        bool all_one = true;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < e.ranks[i]; k++) {
                const tc_dim *dim = &in[i].shape.dims[k];
                if (e.labels[i][k] != e.out[o] || tc_si_dim_is(dim, 1))
                    continue;
                all_one = false;
                if (dim->kind != TCONV_DIM_UNKNOWN)
                    d = *dim;
            }
        }
        outs[0].shape.dims[o] = all_one ? tc_si_dim_static(1) : d;
    }
    return TCONV_OK;
}
