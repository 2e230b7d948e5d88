/* shape-infer rules for ops that make or pick shape data: Constant, Shape, Size, Gather,
 * ConstantOfShape. Besides their output types they record the known contents of small integer
 * outputs, so that Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains (what exporters
 * write for dynamic shapes) still give shapes. */
#include "passes/shape_infer.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- Constant */

static tconv_status constant_from_tensor(tc_si_ctx *ctx, tconv_tensor *t, tc_si_out *out) {
    (void)ctx;
    if (t->rank < 0 || t->rank > TC_MAX_RANK)
        return TCONV_OK;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0)
            return TCONV_OK; /* a broken tensor: the loader or runtime reports it */
    }
    out->dtype = t->dtype;
    out->shape.rank = t->rank;
    for (int i = 0; i < t->rank; i++)
        out->shape.dims[i] = tc_si_dim_static(t->dims[i]);
    out->data = tc_si_data_from_tensor(t);
    return TCONV_OK;
}

static void constant_list(tconv_dtype dtype, int rank, size_t n, tc_si_out *out) {
    out->dtype = dtype;
    out->shape.rank = rank;
    if (rank == 1)
        out->shape.dims[0] = tc_si_dim_static((int64_t)n);
}

static tconv_status constant_ints(tc_si_ctx *ctx, const int64_t *values, size_t n, int rank,
                                  tc_si_out *out) {
    constant_list(TCONV_DTYPE_INT64, rank, n, out);
    if (n > TC_SI_MAX_DATA)
        return TCONV_OK;
    if (!(out->data = tc_si_data_new(ctx)))
        return ctx->err->status;
    out->data->rank = rank;
    out->data->count = (int)n;
    for (size_t i = 0; i < n; i++)
        out->data->elems[i] = tc_si_dim_static(values[i]);
    return TCONV_OK;
}

tconv_status tc_si_infer_constant(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    for (size_t i = 0; i < node->n_attrs; i++) {
        const tc_attr *a = &node->attrs[i];
        if (!a->name)
            continue;
        if (!strcmp(a->name, "value") && a->type == TCONV_ATTR_TENSOR && a->t)
            return constant_from_tensor(ctx, a->t, &outs[0]);
        if (!strcmp(a->name, "value_int") && a->type == TCONV_ATTR_INT)
            return constant_ints(ctx, &a->i, 1, 0, &outs[0]);
        if (!strcmp(a->name, "value_ints") && a->type == TCONV_ATTR_INTS)
            return constant_ints(ctx, a->ints, a->n, 1, &outs[0]);
        if (!strcmp(a->name, "value_float") && a->type == TCONV_ATTR_FLOAT)
            constant_list(TCONV_DTYPE_FLOAT, 0, 1, &outs[0]);
        else if (!strcmp(a->name, "value_floats") && a->type == TCONV_ATTR_FLOATS)
            constant_list(TCONV_DTYPE_FLOAT, 1, a->n, &outs[0]);
        else if (!strcmp(a->name, "value_string") && a->type == TCONV_ATTR_STRING)
            constant_list(TCONV_DTYPE_STRING, 0, 1, &outs[0]);
        else if (!strcmp(a->name, "value_strings") && a->type == TCONV_ATTR_STRINGS)
            constant_list(TCONV_DTYPE_STRING, 1, a->n, &outs[0]);
    }
    return TCONV_OK; /* sparse_value and the like: cannot tell */
}

/* ---------------------------------------------------------------- Shape and Size */

static tconv_status data_from_dims(tc_si_ctx *ctx, const tc_dim *dims, int count, int rank,
                                   tc_si_out *out) {
    if (count > TC_SI_MAX_DATA)
        return TCONV_OK;
    if (!(out->data = tc_si_data_new(ctx)))
        return ctx->err->status;
    out->data->rank = rank;
    out->data->count = count;
    if (count > 0)
        memcpy(out->data->elems, dims, (size_t)count * sizeof(tc_dim));
    return TCONV_OK;
}

static int clamp_shape_index(int64_t index, int rank) {
    if (index < 0)
        index += rank;
    return (int)(index < 0 ? 0 : (index > rank ? rank : index));
}

/* Shape-15's start/end pick a range of the dims (negative counts from the end, clamped). */
tconv_status tc_si_infer_shape(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = TCONV_DTYPE_INT64;
    tc_si_shape_unknown(&outs[0].shape, 1);
    int64_t start, end;
    tconv_status st = tc_node_attr_int(node, "start", 0, &start, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "end", INT64_MAX, &end, ctx->err);
    if (st != TCONV_OK || x.shape.rank < 0)
        return st;
    int first = clamp_shape_index(start, x.shape.rank);
    int last = clamp_shape_index(end, x.shape.rank);
    int count = last > first ? last - first : 0;
    outs[0].shape.dims[0] = tc_si_dim_static(count);
    return data_from_dims(ctx, &x.shape.dims[first], count, 1, &outs[0]);
}

tconv_status tc_si_infer_size(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = TCONV_DTYPE_INT64;
    outs[0].shape.rank = 0;
    int64_t n;
    if (x.shape.rank < 0 || !tc_si_shape_product(&x.shape, 0, x.shape.rank, &n))
        return TCONV_OK;
    tc_dim d = tc_si_dim_static(n);
    return data_from_dims(ctx, &d, 1, 0, &outs[0]);
}

/* ---------------------------------------------------------------- Gather */

/* Picking known elements of a 1-D shape tensor with known indices. */
static tconv_status gather_data(tc_si_ctx *ctx, const tconv_node *node, int axis,
                                const tc_si_tensor *indices, tc_si_out *out) {
    const tc_si_data *src = tc_si_input_data(ctx, node, 0);
    int64_t idx[TC_SI_MAX_DATA];
    int n;
    if (!src || src->rank != 1 || axis != 0 || indices->shape.rank > 1 ||
        !tc_si_input_ints(ctx, node, 1, idx, &n))
        return TCONV_OK;
    tc_dim picked[TC_SI_MAX_DATA];
    for (int i = 0; i < n; i++) {
        int64_t k = idx[i] < 0 ? idx[i] + src->count : idx[i];
        if (k < 0 || k >= src->count)
            return TCONV_OK; /* out of range: the runtime reports it */
        picked[i] = src->elems[k];
    }
    return data_from_dims(ctx, picked, n,
                          indices->shape.rank < 0 ? (n == 1 ? 0 : 1) : indices->shape.rank, out);
}

tconv_status tc_si_infer_gather(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor data, indices;
    tc_si_input(ctx, node, 0, &data);
    tc_si_input(ctx, node, 1, &indices);
    outs[0].dtype = data.dtype;
    int64_t axis_attr;
    int axis;
    tconv_status st = tc_node_attr_int(node, "axis", 0, &axis_attr, ctx->err);
    if (st != TCONV_OK || data.shape.rank < 0)
        return st;
    if (data.shape.rank == 0)
        return tc_si_fail(ctx, node, "data must have rank 1 or more");
    if ((st = tc_si_normalize_axis(ctx, node, "axis", axis_attr, data.shape.rank, &axis)))
        return st;
    if ((st = gather_data(ctx, node, axis, &indices, &outs[0])) || indices.shape.rank < 0)
        return st;
    int rank = data.shape.rank + indices.shape.rank - 1;
    if (rank > TC_MAX_RANK)
        return TCONV_OK;
    tc_si_shape *out = &outs[0].shape;
    out->rank = 0;
    for (int i = 0; i < axis; i++)
        out->dims[out->rank++] = data.shape.dims[i];
    for (int i = 0; i < indices.shape.rank; i++)
        out->dims[out->rank++] = indices.shape.dims[i];
    for (int i = axis + 1; i < data.shape.rank; i++)
        out->dims[out->rank++] = data.shape.dims[i];
    return TCONV_OK;
}

/* ---------------------------------------------------------------- ConstantOfShape */

/* Known contents of a small integer ConstantOfShape of static shape and rank <= 2 (the zeros
 * torch appends to a pads list). */
static tconv_status filled_data(tc_si_ctx *ctx, const tc_attr *value, tc_si_out *out) {
    int64_t n, fill;
    tc_error scratch;
    const tc_si_shape *shape = &out->shape;
    if (!value || value->type != TCONV_ATTR_TENSOR || !value->t || shape->rank > 2 ||
        !tc_si_shape_product(shape, 0, shape->rank, &n) || n > TC_SI_MAX_DATA ||
        (shape->rank == 2 && shape->dims[1].value == 0))
        return TCONV_OK;
    tc_si_data *one = tc_si_data_from_tensor(value->t); /* integer dtypes only */
    bool known =
        one && one->count == 1 && tc_tensor_get_i64(value->t, 0, &fill, &scratch) == TCONV_OK;
    free(one);
    if (!known)
        return TCONV_OK;
    if (!(out->data = tc_si_data_new(ctx)))
        return ctx->err->status;
    out->data->rank = shape->rank;
    out->data->count = (int)n;
    out->data->cols = shape->rank == 2 ? (int)shape->dims[1].value : 0;
    for (int64_t i = 0; i < n; i++)
        out->data->elems[i] = tc_si_dim_static(fill);
    return TCONV_OK;
}

tconv_status tc_si_infer_constant_of_shape(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    const tc_attr *value = tc_node_attr(node, "value");
    outs[0].dtype =
        value && value->type == TCONV_ATTR_TENSOR && value->t ? value->t->dtype : TCONV_DTYPE_FLOAT;
    const tc_si_data *shape = tc_si_input_data(ctx, node, 0);
    if (shape && shape->rank == 1 && shape->count <= TC_MAX_RANK) {
        outs[0].shape.rank = shape->count;
        for (int i = 0; i < shape->count; i++) {
            const tc_dim *e = &shape->elems[i];
            if (e->kind == TCONV_DIM_STATIC && e->value < 0)
                return tc_si_fail(ctx, node, "shape[%d] is negative (%lld)", i,
                                  (long long)e->value);
            outs[0].shape.dims[i] = *e;
        }
        return filled_data(ctx, value, &outs[0]);
    }
    int64_t n = tc_si_input_elements(ctx, node, 0);
    if (n >= 0 && n <= TC_MAX_RANK)
        tc_si_shape_unknown(&outs[0].shape, (int)n); /* rank only */
    return TCONV_OK;
}
