/* shape-infer rules for ops that move data around: Slice, Pad, Concat, Reshape, Transpose,
 * Unsqueeze, Squeeze, Flatten, Expand, Tile, Split and the reductions.
 *
 * Their shape arguments come as attributes in old opsets and as inputs later (Slice 10, Pad 11,
 * (Un)Squeeze and ReduceSum 13, other reductions 18). When an input argument is neither an
 * initializer nor a known computation, the output keeps the rank it must have, with unknown dims
 * where the argument matters. */
#include "ir/slice_geometry.h"
#include "ir/shape_rules.h"
#include "passes/shape_infer.h"

#include <string.h>

/* Marks axes[0..count) in `seen` (normalized against rank); duplicates are an error. */
static tconv_status normalize_axes(tc_si_ctx *ctx, const tconv_node *node, const char *what,
                                   const int64_t *axes, int count, int rank, int *out, bool *seen) {
    size_t bad = 0;
    tc_axes_status as = tc_axes_normalize(axes, (size_t)count, rank, out, &bad);
    if (as == TC_AXES_OUT_OF_RANGE)
        return tc_si_fail(ctx, node, "%s %lld is out of range for rank %d", what,
                          (long long)axes[bad], rank);
    if (as == TC_AXES_REPEATED)
        return tc_si_fail(ctx, node, "%s lists axis %lld twice", what, (long long)axes[bad]);
    for (int i = 0; i < rank; i++)
        seen[i] = false;
    for (int i = 0; i < count; i++)
        seen[out[i]] = true;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Slice */

typedef struct slice_args {
    tc_si_ints starts, ends, axes, steps;
} slice_args;

static tconv_status read_slice_args(tc_si_ctx *ctx, const tconv_node *node, slice_args *a) {
    bool attrs = ctx->opset > 0 && tc_slice_args_in_attrs(ctx->opset);
    tconv_status st;
    if ((st = tc_si_ints_arg(ctx, node, attrs ? "starts" : NULL, TC_SLICE_STARTS, &a->starts)) ||
        (st = tc_si_ints_arg(ctx, node, attrs ? "ends" : NULL, TC_SLICE_ENDS, &a->ends)) ||
        (st = tc_si_ints_arg(ctx, node, attrs ? "axes" : NULL, TC_SLICE_AXES, &a->axes)))
        return st;
    if (attrs)
        a->steps.state = TCONV_SI_ARG_ABSENT;
    else if ((st = tc_si_ints_arg(ctx, node, NULL, TC_SLICE_STEPS, &a->steps)))
        return st;
    return TCONV_OK;
}

/* A dim that is not static survives a slice that provably keeps the whole axis. */
static bool slice_keeps_all(int64_t start, int64_t end, int64_t step) {
    return step == 1 && start == 0 && end >= INT32_MAX;
}

static tconv_status slice_axis(tc_si_ctx *ctx, const tconv_node *node, const slice_args *a, int i,
                               tc_dim *dim) {
    int64_t start = a->starts.values[i], end = a->ends.values[i];
    int64_t step = a->steps.state == TCONV_SI_ARG_KNOWN ? a->steps.values[i] : 1;
    if (step == 0)
        return tc_si_fail(ctx, node, "steps[%d] is 0", i);
    int64_t first;
    if (dim->kind == TCONV_DIM_STATIC)
        *dim = tc_si_dim_static(tc_slice_axis_count(dim->value, start, end, step, &first));
    else if (!slice_keeps_all(start, end, step))
        *dim = tc_si_dim_unknown();
    return TCONV_OK;
}

/* Known contents of a sliced tensor of rank 1 or 2 (pads reversed row by row, shape pieces). */
static tconv_status slice_data(tc_si_ctx *ctx, const tconv_node *node, const slice_args *a,
                               const int *axes, tc_si_out *out) {
    const tc_si_data *src = tc_si_input_data(ctx, node, 0);
    if (!src || src->rank < 1 || src->rank > 2 || (src->rank == 2 && src->cols <= 0))
        return TCONV_OK;
    int64_t size[2] = {src->rank == 2 ? src->count / src->cols : src->count, src->cols};
    int64_t first[2] = {0, 0}, step[2] = {1, 1}, count[2] = {size[0], size[1]};
    for (int i = 0; i < a->starts.count; i++) {
        int ax = axes[i];
        step[ax] = a->steps.state == TCONV_SI_ARG_KNOWN ? a->steps.values[i] : 1;
        if (step[ax] == 0)
            return TCONV_OK;
        count[ax] = tc_slice_axis_count(size[ax], a->starts.values[i], a->ends.values[i], step[ax],
                                        &first[ax]);
    }
    if (src->rank == 2 && count[1] == 0)
        return TCONV_OK; /* empty rows: nothing to tell */
    tc_si_data *d = tc_si_data_new(ctx);
    if (!d)
        return ctx->err->status;
    d->rank = src->rank;
    int64_t cols = src->rank == 2 ? count[1] : 1;
    d->cols = src->rank == 2 ? (int)count[1] : 0;
    d->count = (int)(count[0] * cols);
    for (int64_t r = 0; r < count[0]; r++) {
        for (int64_t c = 0; c < cols; c++) {
            int64_t from = src->rank == 2
                               ? (first[0] + r * step[0]) * size[1] + first[1] + c * step[1]
                               : first[0] + r * step[0];
            d->elems[r * cols + c] = src->elems[from];
        }
    }
    out->data = d;
    return TCONV_OK;
}

static bool slice_args_known(const slice_args *a) {
    int n = a->starts.count;
    return a->starts.state == TCONV_SI_ARG_KNOWN && a->ends.state == TCONV_SI_ARG_KNOWN &&
           a->axes.state != TCONV_SI_ARG_UNKNOWN && a->steps.state != TCONV_SI_ARG_UNKNOWN &&
           a->ends.count == n && (a->axes.state == TCONV_SI_ARG_ABSENT || a->axes.count == n) &&
           (a->steps.state == TCONV_SI_ARG_ABSENT || a->steps.count == n);
}

tconv_status tc_si_infer_slice(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    int rank = x.shape.rank;
    if (rank < 0)
        return TCONV_OK;
    slice_args a;
    tconv_status st = read_slice_args(ctx, node, &a);
    if (st != TCONV_OK)
        return st;
    outs[0].shape = x.shape;
    if (!slice_args_known(&a)) {
        if (a.axes.state != TCONV_SI_ARG_KNOWN) {
            tc_si_shape_unknown(&outs[0].shape, rank);
            return TCONV_OK;
        }
        int axes[TC_SI_MAX_DATA];
        bool seen[TC_MAX_RANK];
        if (a.axes.count > rank)
            return tc_si_fail(ctx, node, "axes has %d values for rank %d", a.axes.count, rank);
        st = normalize_axes(ctx, node, "axes", a.axes.values, a.axes.count, rank, axes, seen);
        for (int i = 0; st == TCONV_OK && i < a.axes.count; i++)
            outs[0].shape.dims[axes[i]] = tc_si_dim_unknown(); /* only sliced axes change */
        return st;
    }
    if (a.starts.count > rank)
        return tc_si_fail(ctx, node, "starts has %d values for rank %d", a.starts.count, rank);
    if (a.axes.state == TCONV_SI_ARG_ABSENT) {
        a.axes.count = a.starts.count;
        for (int i = 0; i < a.axes.count; i++)
            a.axes.values[i] = i;
    }
    int axes[TC_SI_MAX_DATA];
    bool seen[TC_MAX_RANK];
    st = normalize_axes(ctx, node, "axes", a.axes.values, a.axes.count, rank, axes, seen);
    for (int i = 0; st == TCONV_OK && i < a.axes.count; i++)
        st = slice_axis(ctx, node, &a, i, &outs[0].shape.dims[axes[i]]);
    return st == TCONV_OK ? slice_data(ctx, node, &a, axes, &outs[0]) : st;
}

/* ---------------------------------------------------------------- Pad */

static tconv_status pad_axis(tc_si_ctx *ctx, const tconv_node *node, int axis, int64_t begin,
                             int64_t end, tc_dim *dim) {
    int64_t total, size;
    if (!tc_add_i64(begin, end, &total))
        return tc_si_fail(ctx, node, "pads of axis %d overflow", axis);
    if (dim->kind != TCONV_DIM_STATIC) {
        if (total != 0)
            *dim = tc_si_dim_unknown();
        return TCONV_OK;
    }
    if (!tc_add_i64(dim->value, total, &size) || size < 0)
        return tc_si_fail(ctx, node, "padding axis %d of size %lld by %lld+%lld gives %lld", axis,
                          (long long)dim->value, (long long)begin, (long long)end, (long long)size);
    *dim = tc_si_dim_static(size);
    return TCONV_OK;
}

static tconv_status read_pad_args(tc_si_ctx *ctx, const tconv_node *node, tc_si_ints *pads,
                                  tc_si_ints *axes) {
    axes->state = TCONV_SI_ARG_ABSENT;
    axes->count = -1;
    if (ctx->opset > 0 && ctx->opset < 11) {
        tconv_status st = tc_si_ints_arg(ctx, node, "pads", 0, pads);
        if (st == TCONV_OK && pads->state == TCONV_SI_ARG_ABSENT) /* Pad-1 */
            st = tc_si_ints_arg(ctx, node, "paddings", 0, pads);
        return st;
    }
    tconv_status st = tc_si_ints_arg(ctx, node, NULL, 1, pads);
    return st == TCONV_OK ? tc_si_ints_arg(ctx, node, NULL, 3, axes) : st;
}

tconv_status tc_si_infer_pad(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    int rank = x.shape.rank;
    if (rank < 0)
        return TCONV_OK;
    tc_si_ints pads, axes_arg;
    tconv_status st = read_pad_args(ctx, node, &pads, &axes_arg);
    if (st != TCONV_OK)
        return st;
    if (pads.state != TCONV_SI_ARG_KNOWN || axes_arg.state == TCONV_SI_ARG_UNKNOWN) {
        tc_si_shape_unknown(&outs[0].shape, rank); /* rank only */
        return TCONV_OK;
    }
    int axes[TC_SI_MAX_DATA];
    bool seen[TC_MAX_RANK];
    int n = axes_arg.state == TCONV_SI_ARG_KNOWN ? axes_arg.count : rank;
    if (axes_arg.state == TCONV_SI_ARG_KNOWN)
        st = normalize_axes(ctx, node, "axes", axes_arg.values, n, rank, axes, seen);
    else
        for (int i = 0; i < n; i++)
            axes[i] = i;
    if (st != TCONV_OK)
        return st;
    if (pads.count != 2 * n)
        return tc_si_fail(ctx, node, "pads has %d values, expected %d (2 x %d axes)", pads.count,
                          2 * n, n);
    outs[0].shape = x.shape;
    for (int i = 0; st == TCONV_OK && i < n; i++)
        st = pad_axis(ctx, node, axes[i], pads.values[i], pads.values[i + n],
                      &outs[0].shape.dims[axes[i]]);
    return st;
}

/* ---------------------------------------------------------------- Concat */

/* Two dims the model says are equal: the more precise one; different static sizes are an error. */
static tconv_status unify_dim(tc_si_ctx *ctx, const tconv_node *node, int axis, tc_dim *acc,
                              const tc_dim *other) {
    if (acc->kind == TCONV_DIM_STATIC && other->kind == TCONV_DIM_STATIC &&
        acc->value != other->value)
        return tc_si_fail(ctx, node, "inputs differ on axis %d: %lld and %lld", axis,
                          (long long)acc->value, (long long)other->value);
    if (acc->kind == TCONV_DIM_UNKNOWN ||
        (acc->kind == TCONV_DIM_SYMBOLIC && other->kind == TCONV_DIM_STATIC))
        *acc = *other;
    return TCONV_OK;
}

static void concat_data(tc_si_ctx *ctx, const tconv_node *node, tc_si_out *out) {
    tc_si_data joined;
    joined.rank = 1;
    joined.count = 0;
    for (size_t i = 0; i < node->n_inputs; i++) {
        const tc_si_data *d = tc_si_value_data(ctx, node->inputs[i]);
        if (!d || d->rank != 1 || joined.count + d->count > TC_SI_MAX_DATA)
            return;
        memcpy(&joined.elems[joined.count], d->elems, (size_t)d->count * sizeof(tc_dim));
        joined.count += d->count;
    }
    if ((out->data = tc_si_data_new(ctx)))
        *out->data = joined;
}

/* Adds one input's size on the concatenation axis to *total (-1 once one is not static). */
static void concat_add_size(const tc_dim *d, int64_t *total) {
    if (*total >= 0 && (d->kind != TCONV_DIM_STATIC || !tc_add_i64(*total, d->value, total)))
        *total = -1;
}

/* Folds input `in` into the accumulated output shape: same rank, the other axes agree. */
static tconv_status concat_merge(tc_si_ctx *ctx, const tconv_node *node, int axis,
                                 const tc_si_shape *in, tc_si_shape *acc) {
    if (in->rank != acc->rank)
        return tc_si_fail(ctx, node, "inputs have ranks %d and %d", acc->rank, in->rank);
    for (int k = 0; k < in->rank; k++) {
        tconv_status st =
            k == axis ? TCONV_OK : unify_dim(ctx, node, k, &acc->dims[k], &in->dims[k]);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

tconv_status tc_si_infer_concat(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    int64_t axis_attr, total = 0;
    tconv_status st = tc_node_attr_int(node, "axis", INT64_MIN, &axis_attr, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (axis_attr == INT64_MIN)
        return tc_si_fail(ctx, node, "attribute 'axis' is required");
    tc_si_out *out = &outs[0];
    int axis = -1;
    for (size_t i = 0; i < node->n_inputs; i++) {
        tc_si_tensor in;
        if (!tc_si_input(ctx, node, i, &in))
            continue;
        if (out->dtype == TCONV_DTYPE_UNDEFINED)
            out->dtype = in.dtype;
        if (in.shape.rank < 0) {
            total = -1;
        } else if (axis < 0) {
            st = tc_si_normalize_axis(ctx, node, "axis", axis_attr, in.shape.rank, &axis);
            out->shape = in.shape;
        } else {
            st = concat_merge(ctx, node, axis, &in.shape, &out->shape);
        }
        if (st != TCONV_OK)
            return st;
        if (in.shape.rank >= 0)
            concat_add_size(&in.shape.dims[axis], &total);
    }
    if (axis < 0)
        return TCONV_OK;
    if (node->n_inputs > 1) /* one input: its own dim, even a symbol */
        out->shape.dims[axis] = total >= 0 ? tc_si_dim_static(total) : tc_si_dim_unknown();
    concat_data(ctx, node, out);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Reshape */

/* The size of the -1 axis: input dims over the other output dims, after cancelling the symbols
 * both sides share. Unknown (false) when something else remains that is not static. */
static bool reshape_inferred_size(const tc_si_shape *in, const tc_si_shape *out, int skip,
                                  int64_t *numerator, int64_t *denominator) {
    bool used[TC_MAX_RANK] = {false};
    *denominator = 1;
    for (int i = 0; i < out->rank; i++) {
        const tc_dim *d = &out->dims[i];
        if (i == skip)
            continue;
        if (d->kind == TCONV_DIM_STATIC) {
            if (!tc_mul_i64(*denominator, d->value, denominator))
                return false;
            continue;
        }
        int match = -1;
        for (int k = 0; k < in->rank && match < 0; k++) {
            if (!used[k] && d->kind == TCONV_DIM_SYMBOLIC && tc_si_dim_same(d, &in->dims[k]))
                match = k;
        }
        if (match < 0)
            return false;
        used[match] = true;
    }
    *numerator = 1;
    for (int k = 0; k < in->rank; k++) {
        if (used[k])
            continue;
        if (in->dims[k].kind != TCONV_DIM_STATIC ||
            !tc_mul_i64(*numerator, in->dims[k].value, numerator))
            return false;
    }
    return true;
}

static tconv_status reshape_fill_minus_one(tc_si_ctx *ctx, const tconv_node *node,
                                           const tc_si_shape *in, tc_si_shape *out, int minus_one) {
    int64_t num, den;
    if (in->rank < 0 || !reshape_inferred_size(in, out, minus_one, &num, &den))
        return TCONV_OK;
    if (den == 0 || num % den != 0)
        return tc_si_fail(ctx, node,
                          "cannot reshape %lld elements into a shape whose other "
                          "dims hold %lld",
                          (long long)num, (long long)den);
    out->dims[minus_one] = tc_si_dim_static(num / den);
    return TCONV_OK;
}

static tconv_status reshape_check_total(tc_si_ctx *ctx, const tconv_node *node,
                                        const tc_si_shape *in, const tc_si_shape *out) {
    int64_t a, b;
    if (in->rank < 0 || !tc_si_shape_product(in, 0, in->rank, &a) ||
        !tc_si_shape_product(out, 0, out->rank, &b) || a == b)
        return TCONV_OK;
    return tc_si_fail(ctx, node, "cannot reshape %lld elements into %lld", (long long)a,
                      (long long)b);
}

static tconv_status reshape_target(tc_si_ctx *ctx, const tconv_node *node, const tc_si_data *target,
                                   bool allow_zero, const tc_si_shape *in, tc_si_shape *out) {
    int64_t values[TC_MAX_RANK];
    bool known[TC_MAX_RANK];
    for (int i = 0; i < target->count; i++) {
        known[i] = target->elems[i].kind == TCONV_DIM_STATIC;
        values[i] = known[i] ? target->elems[i].value : 0;
    }
    int minus_one;
    char why[128];
    if (!tc_reshape_target_check(values, known, target->count, allow_zero, in->rank, &minus_one,
                                 why, sizeof why))
        return tc_si_fail(ctx, node, "%s", why);
    out->rank = target->count;
    for (int i = 0; i < target->count; i++) {
        out->dims[i] = target->elems[i];
        if (known[i] && values[i] == 0 && !allow_zero)
            out->dims[i] = in->rank > i ? in->dims[i] : tc_si_dim_unknown();
        else if (i == minus_one)
            out->dims[i] = tc_si_dim_unknown();
    }
    if (minus_one >= 0)
        return reshape_fill_minus_one(ctx, node, in, out, minus_one);
    return reshape_check_total(ctx, node, in, out);
}

/* Known contents keep their order through a Reshape to a static shape of rank <= 2. */
static tconv_status reshaped_data(tc_si_ctx *ctx, const tconv_node *node, tc_si_out *out) {
    const tc_si_data *src = tc_si_input_data(ctx, node, 0);
    int64_t n;
    const tc_si_shape *shape = &out->shape;
    if (!src || shape->rank < 0 || shape->rank > 2 ||
        !tc_si_shape_product(shape, 0, shape->rank, &n) || n != src->count ||
        (shape->rank == 2 && shape->dims[1].value == 0))
        return TCONV_OK;
    if (!(out->data = tc_si_data_new(ctx)))
        return ctx->err->status;
    *out->data = *src;
    out->data->rank = shape->rank;
    out->data->cols = shape->rank == 2 ? (int)shape->dims[1].value : 0;
    return TCONV_OK;
}

tconv_status tc_si_infer_reshape(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    int64_t allow_zero;
    tconv_status st = tc_node_attr_int(node, "allowzero", 0, &allow_zero, ctx->err);
    if (st != TCONV_OK)
        return st;
    tc_si_data from_attr;
    const tc_si_data *target = NULL;
    if (ctx->opset > 0 && ctx->opset < 5) {
        tc_si_ints shape;
        if ((st = tc_si_ints_arg(ctx, node, "shape", 0, &shape)))
            return st;
        if (shape.state == TCONV_SI_ARG_KNOWN) {
            from_attr.rank = 1;
            from_attr.count = shape.count;
            for (int i = 0; i < shape.count; i++)
                from_attr.elems[i] = tc_si_dim_static(shape.values[i]);
            target = &from_attr;
        }
    } else if (node->n_inputs > 1) {
        target = tc_si_input_data(ctx, node, 1);
    }
    if (target && target->rank == 1 && target->count <= TC_MAX_RANK) {
        st = reshape_target(ctx, node, target, allow_zero != 0, &x.shape, &outs[0].shape);
        return st == TCONV_OK ? reshaped_data(ctx, node, &outs[0]) : st;
    }
    int64_t n = node->n_inputs > 1 ? tc_si_input_elements(ctx, node, 1) : -1;
    if (n >= 0 && n <= TC_MAX_RANK)
        tc_si_shape_unknown(&outs[0].shape, (int)n); /* rank only */
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Transpose */

/* Known contents of a transposed tensor of rank <= 2. */
static tconv_status transposed_data(tc_si_ctx *ctx, const tconv_node *node, const tc_si_ints *perm,
                                    tc_si_out *out) {
    const tc_si_data *src = tc_si_input_data(ctx, node, 0);
    if (!src || src->rank > 2 || (src->rank == 2 && src->cols <= 0))
        return TCONV_OK;
    if (!(out->data = tc_si_data_new(ctx)))
        return ctx->err->status;
    *out->data = *src;
    if (src->rank < 2 || perm->values[0] == 0)
        return TCONV_OK;
    int rows = src->count / src->cols;
    out->data->cols = rows;
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < src->cols; c++)
            out->data->elems[c * rows + r] = src->elems[r * src->cols + c];
    }
    return TCONV_OK;
}

tconv_status tc_si_infer_transpose(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    int rank = x.shape.rank;
    if (rank < 0)
        return TCONV_OK;
    tc_si_ints perm;
    tconv_status st = tc_si_ints_arg(ctx, node, "perm", 0, &perm);
    if (st != TCONV_OK)
        return st;
    if (perm.state == TCONV_SI_ARG_ABSENT) {
        perm.count = rank;
        for (int i = 0; i < rank; i++)
            perm.values[i] = rank - 1 - i;
    }
    if (perm.count != rank)
        return tc_si_fail(ctx, node, "perm has %d values for rank %d", perm.count, rank);
    bool seen[TC_MAX_RANK] = {false};
    outs[0].shape.rank = rank;
    for (int i = 0; i < rank; i++) {
        int64_t p = perm.values[i];
        if (p < 0 || p >= rank || seen[p])
            return tc_si_fail(ctx, node, "perm is not a permutation of 0..%d", rank - 1);
        seen[p] = true;
        outs[0].shape.dims[i] = x.shape.dims[p];
    }
    return transposed_data(ctx, node, &perm, &outs[0]);
}

/* ---------------------------------------------------------------- Unsqueeze and Squeeze */

/* axes: attribute before opset 13, input 1 from 13 on. */
static tconv_status read_axes(tc_si_ctx *ctx, const tconv_node *node, int64_t since_input,
                              tc_si_ints *axes) {
    bool attr = ctx->opset > 0 && ctx->opset < since_input;
    return tc_si_ints_arg(ctx, node, attr ? "axes" : NULL, 1, axes);
}

static void rank_changing_data(tc_si_ctx *ctx, const tconv_node *node, int from_rank, int to_rank,
                               tc_si_out *out) {
    const tc_si_data *src = tc_si_input_data(ctx, node, 0);
    if (!src || src->rank != from_rank || src->count != 1)
        return;
    if ((out->data = tc_si_data_new(ctx))) {
        *out->data = *src;
        out->data->rank = to_rank;
    }
}

tconv_status tc_si_infer_unsqueeze(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    tc_si_ints axes;
    tconv_status st = read_axes(ctx, node, 13, &axes);
    if (st != TCONV_OK || x.shape.rank < 0 || axes.count < 0)
        return st;
    int rank = x.shape.rank + axes.count;
    if (rank > TC_MAX_RANK)
        return TCONV_OK;
    if (axes.state != TCONV_SI_ARG_KNOWN) {
        tc_si_shape_unknown(&outs[0].shape, rank); /* rank only */
        return TCONV_OK;
    }
    int normalized[TC_SI_MAX_DATA];
    bool inserted[TC_MAX_RANK];
    if ((st = normalize_axes(ctx, node, "axes", axes.values, axes.count, rank, normalized,
                             inserted)))
        return st;
    outs[0].shape.rank = rank;
    for (int i = 0, k = 0; i < rank; i++)
        outs[0].shape.dims[i] = inserted[i] ? tc_si_dim_static(1) : x.shape.dims[k++];
    if (x.shape.rank == 0 && axes.count == 1)
        rank_changing_data(ctx, node, 0, 1, &outs[0]);
    return TCONV_OK;
}

/* Without axes, every dim that is 1 goes: only known when all dims are static. */
static tconv_status squeeze_all_ones(const tc_si_shape *x, tc_si_shape *out) {
    out->rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (x->dims[i].kind != TCONV_DIM_STATIC) {
            out->rank = -1;
            return TCONV_OK;
        }
        if (x->dims[i].value != 1)
            out->dims[out->rank++] = x->dims[i];
    }
    return TCONV_OK;
}

tconv_status tc_si_infer_squeeze(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    tc_si_ints axes;
    tconv_status st = read_axes(ctx, node, 13, &axes);
    if (st != TCONV_OK || x.shape.rank < 0)
        return st;
    if (axes.state == TCONV_SI_ARG_ABSENT)
        return squeeze_all_ones(&x.shape, &outs[0].shape);
    if (axes.state != TCONV_SI_ARG_KNOWN) {
        if (axes.count >= 0 && axes.count <= x.shape.rank)
            tc_si_shape_unknown(&outs[0].shape, x.shape.rank - axes.count);
        return TCONV_OK;
    }
    int normalized[TC_SI_MAX_DATA];
    bool removed[TC_MAX_RANK];
    if ((st = normalize_axes(ctx, node, "axes", axes.values, axes.count, x.shape.rank, normalized,
                             removed)))
        return st;
    outs[0].shape.rank = 0;
    for (int i = 0; i < x.shape.rank; i++) {
        const tc_dim *d = &x.shape.dims[i];
        if (removed[i] && d->kind == TCONV_DIM_STATIC && d->value != 1)
            return tc_si_fail(ctx, node, "cannot squeeze axis %d of size %lld", i,
                              (long long)d->value);
        if (!removed[i])
            outs[0].shape.dims[outs[0].shape.rank++] = *d;
    }
    if (x.shape.rank == 1 && axes.count == 1)
        rank_changing_data(ctx, node, 1, 0, &outs[0]);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Flatten */

/* Product of dims [begin, end): static, or the one non-static dim when all others are 1. */
static tc_dim range_product(const tc_si_shape *x, int begin, int end) {
    int64_t product;
    if (tc_si_shape_product(x, begin, end, &product))
        return tc_si_dim_static(product);
    int other = -1;
    for (int i = begin; i < end; i++) {
        if (tc_si_dim_is(&x->dims[i], 1))
            continue;
        if (other >= 0 || x->dims[i].kind == TCONV_DIM_STATIC)
            return tc_si_dim_unknown();
        other = i;
    }
    return other >= 0 ? x->dims[other] : tc_si_dim_unknown();
}

tconv_status tc_si_infer_flatten(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    int64_t axis;
    tconv_status st = tc_node_attr_int(node, "axis", 1, &axis, ctx->err);
    if (st != TCONV_OK || x.shape.rank < 0)
        return st;
    int rank = x.shape.rank;
    if (axis < -(int64_t)rank || axis > rank)
        return tc_si_fail(ctx, node, "axis %lld is out of range for rank %d", (long long)axis,
                          rank);
    int a = (int)(axis < 0 ? axis + rank : axis);
    outs[0].shape.rank = 2;
    outs[0].shape.dims[0] = range_product(&x.shape, 0, a);
    outs[0].shape.dims[1] = range_product(&x.shape, a, rank);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Expand and Tile */

tconv_status tc_si_infer_expand(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    const tc_si_data *shape = tc_si_input_data(ctx, node, 1);
    if (x.shape.rank < 0)
        return TCONV_OK;
    tc_si_shape target;
    if (shape && shape->rank == 1 && shape->count <= TC_MAX_RANK) {
        target.rank = shape->count;
        memcpy(target.dims, shape->elems, (size_t)shape->count * sizeof(tc_dim));
    } else {
        int64_t n = node->n_inputs > 1 ? tc_si_input_elements(ctx, node, 1) : -1;
        if (n < 0 || n > TC_MAX_RANK)
            return TCONV_OK;
        tc_si_shape_unknown(&target, (int)n);
    }
    return tc_si_broadcast(ctx, node, &x.shape, &target, &outs[0].shape);
}

/* Tile-1 repeats input 2's axis input 1 times: the per-axis repeats that amounts to. */
static tconv_status tile1_repeats(tc_si_ctx *ctx, const tconv_node *node, int rank,
                                  tc_si_ints *repeats) {
    int64_t tiles[TC_SI_MAX_DATA], axis_raw[TC_SI_MAX_DATA];
    int n_tiles, n_axis, axis;
    repeats->state = TCONV_SI_ARG_UNKNOWN;
    if (!tc_si_input_ints(ctx, node, 1, tiles, &n_tiles) ||
        !tc_si_input_ints(ctx, node, 2, axis_raw, &n_axis) || n_tiles != 1 || n_axis != 1)
        return TCONV_OK;
    tconv_status st = tc_si_normalize_axis(ctx, node, "axis", axis_raw[0], rank, &axis);
    if (st != TCONV_OK)
        return st;
    repeats->state = TCONV_SI_ARG_KNOWN;
    repeats->count = rank;
    for (int i = 0; i < rank; i++)
        repeats->values[i] = i == axis ? tiles[0] : 1;
    return TCONV_OK;
}

tconv_status tc_si_infer_tile(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    if (x.shape.rank < 0)
        return TCONV_OK;
    tc_si_ints repeats;
    tconv_status st = tc_si_ints_arg(ctx, node, NULL, 1, &repeats);
    if (st == TCONV_OK && ctx->opset > 0 && ctx->opset < 6)
        st = tile1_repeats(ctx, node, x.shape.rank, &repeats);
    if (st != TCONV_OK)
        return st;
    outs[0].shape = x.shape;
    if (repeats.state != TCONV_SI_ARG_KNOWN) {
        tc_si_shape_unknown(&outs[0].shape, x.shape.rank);
        return TCONV_OK;
    }
    if (repeats.count != x.shape.rank)
        return tc_si_fail(ctx, node, "repeats has %d values for rank %d", repeats.count,
                          x.shape.rank);
    for (int i = 0; i < x.shape.rank; i++) {
        tc_dim *d = &outs[0].shape.dims[i];
        int64_t r = repeats.values[i], size;
        if (r < 0)
            return tc_si_fail(ctx, node, "repeats[%d] is negative", i);
        if (d->kind == TCONV_DIM_STATIC && tc_mul_i64(d->value, r, &size))
            *d = tc_si_dim_static(size);
        else if (r != 1)
            *d = r == 0 ? tc_si_dim_static(0) : tc_si_dim_unknown();
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- Split */

static tconv_status split_sizes(tc_si_ctx *ctx, const tconv_node *node, const tc_dim *dim,
                                tc_si_ints *split) {
    bool attr = ctx->opset > 0 && ctx->opset < 13;
    tconv_status st = tc_si_ints_arg(ctx, node, attr ? "split" : NULL, 1, split);
    if (st == TCONV_OK && attr && ctx->opset < 2 && split->state == TCONV_SI_ARG_ABSENT)
        st = tc_si_ints_arg(ctx, node, NULL, 1, split); /* Split-1 also takes it as input 1 */
    if (st != TCONV_OK || split->state != TCONV_SI_ARG_ABSENT)
        return st;
    /* Equal parts; opset 18 lets the last one be smaller. */
    int64_t n = (int64_t)node->n_outputs, num_outputs;
    if ((st = tc_node_attr_int(node, "num_outputs", n, &num_outputs, ctx->err)))
        return st;
    if (dim->kind != TCONV_DIM_STATIC || n > TC_SI_MAX_DATA || num_outputs != n || n < 1)
        return TCONV_OK;
    int64_t part = dim->value / n + (dim->value % n != 0);
    split->state = TCONV_SI_ARG_KNOWN;
    split->count = (int)n;
    for (int i = 0; i < (int)n; i++) {
        int64_t left = dim->value - part * i;
        split->values[i] = left < part ? (left > 0 ? left : 0) : part;
    }
    return TCONV_OK;
}

tconv_status tc_si_infer_split(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    for (size_t i = 0; i < node->n_outputs; i++)
        outs[i].dtype = x.dtype;
    int64_t axis_attr;
    int axis;
    tconv_status st = tc_node_attr_int(node, "axis", 0, &axis_attr, ctx->err);
    if (st != TCONV_OK || x.shape.rank < 0)
        return st;
    if ((st = tc_si_normalize_axis(ctx, node, "axis", axis_attr, x.shape.rank, &axis)))
        return st;
    tc_si_ints split;
    if ((st = split_sizes(ctx, node, &x.shape.dims[axis], &split)))
        return st;
    if (split.state == TCONV_SI_ARG_KNOWN && split.count != (int)node->n_outputs)
        return tc_si_fail(ctx, node, "split has %d values for %zu outputs", split.count,
                          node->n_outputs);
    if (split.state == TCONV_SI_ARG_KNOWN &&
        !tc_split_sizes_cut(split.values, (size_t)split.count,
                            x.shape.dims[axis].kind == TCONV_DIM_STATIC ? x.shape.dims[axis].value
                                                                        : -1))
        return tc_si_fail(ctx, node, "split sizes do not cut the axis into %zu parts",
                          node->n_outputs);
    for (size_t i = 0; i < node->n_outputs; i++) {
        outs[i].shape = x.shape;
        outs[i].shape.dims[axis] = split.state == TCONV_SI_ARG_KNOWN
                                       ? tc_si_dim_static(split.values[i])
                                       : tc_si_dim_unknown();
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- reductions */

/* axes: an attribute (ReduceSum before 13, the others before 18) or input 1. */
static tconv_status read_reduce_axes(tc_si_ctx *ctx, const tconv_node *node, tc_si_ints *axes) {
    tconv_status st = tc_si_ints_arg(ctx, node, "axes", 0, axes);
    if (st == TCONV_OK && axes->state == TCONV_SI_ARG_ABSENT)
        st = tc_si_ints_arg(ctx, node, NULL, 1, axes);
    return st;
}

static void reduced_shape(const tc_si_shape *x, const bool *reduced, bool keep_dims,
                          tc_si_shape *out) {
    out->rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!reduced[i])
            out->dims[out->rank++] = x->dims[i];
        else if (keep_dims)
            out->dims[out->rank++] = tc_si_dim_static(1);
    }
}

tconv_status tc_si_infer_reduce(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor x;
    tc_si_input(ctx, node, 0, &x);
    outs[0].dtype = x.dtype;
    int64_t keep_dims, noop_empty;
    tc_si_ints axes;
    tconv_status st;
    if ((st = tc_node_attr_int_or_default(node, "keepdims", &keep_dims, ctx->err)) ||
        (st = tc_node_attr_int(node, "noop_with_empty_axes", 0, &noop_empty, ctx->err)) ||
        (st = read_reduce_axes(ctx, node, &axes)) || x.shape.rank < 0)
        return st;
    int rank = x.shape.rank;
    bool reduced[TC_MAX_RANK];
    int normalized[TC_SI_MAX_DATA];
    if (axes.state == TCONV_SI_ARG_UNKNOWN) {
        if (keep_dims)
            tc_si_shape_unknown(&outs[0].shape, rank);
        return TCONV_OK;
    }
    if (axes.state == TCONV_SI_ARG_ABSENT || axes.count == 0) { /* all axes, or none */
        for (int i = 0; i < rank; i++)
            reduced[i] = !noop_empty;
    } else if ((st = normalize_axes(ctx, node, "axes", axes.values, axes.count, rank, normalized,
                                    reduced))) {
        return st;
    }
    reduced_shape(&x.shape, reduced, keep_dims != 0, &outs[0].shape);
    return TCONV_OK;
}
