/* Data-movement kernels: Slice, Pad, Concat, Reshape, Transpose, Identity, Constant, Shape,
 * Gather, Unsqueeze, Squeeze, Flatten, Cast. They move elements of any stored dtype by size;
 * shape parameters (starts, pads, axes, shape, indices) are int32 or int64. */
#include "ir/slice_geometry.h"
#include "ir/shape_rules.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/compute/compute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Checks that input 0 (the data) exists and has a stored dtype. */
static tconv_status prepare_data(tc_kernel_ctx *ctx, const tc_rt_tensor **data) {
    tconv_status st = tc_kernel_require_input(ctx, 0, data);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_ANY);
    return st;
}

/* Axes given by an attribute or input: normalized to [0, rank), no duplicates. */
static tconv_status normalize_axes(tc_kernel_ctx *ctx, const char *what, const int64_t *axes,
                                   size_t n, int rank, int *out) {
    size_t bad = 0;
    tc_axes_status as = tc_axes_normalize(axes, n, rank, out, &bad);
    if (as == TC_AXES_OUT_OF_RANGE)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s %lld is out of range for rank %d",
                            what, (long long)axes[bad], rank);
    if (as == TC_AXES_REPEATED)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s: axis %lld repeats", what,
                            (long long)axes[bad]);
    return TCONV_OK;
}

/* An INTS attribute copied into values (at most cap); *present false when absent. */
static tconv_status attr_ints(tc_kernel_ctx *ctx, const char *name, int64_t *values, size_t cap,
                              size_t *count, bool *present) {
    const int64_t *v;
    tconv_status st = tc_node_attr_ints(ctx->node, name, present, &v, count, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (*count > cap)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "attribute '%s' has %zu values, at most %zu are supported", name,
                            *count, cap);
    if (*count)
        memcpy(values, v, *count * sizeof *values);
    return TCONV_OK;
}

/* ================================================================ Slice */

int64_t tc_test_slice_start_shift = 0;

/* Slice-10's inputs into args (Slice-1's attributes: tc_slice_args_from_attrs). */
static tconv_status slice_args_from_inputs(tc_kernel_ctx *ctx, tc_slice_args *p) {
    size_t n_ends = 0, n_axes = 0, n_steps = 0;
    tconv_status st = tc_kernel_read_ints(ctx, TC_SLICE_STARTS, p->starts, TC_MAX_RANK, &p->n);
    if (st == TCONV_OK)
        st = tc_kernel_read_ints(ctx, TC_SLICE_ENDS, p->ends, TC_MAX_RANK, &n_ends);
    bool has_axes = tc_kernel_input(ctx, TC_SLICE_AXES) != NULL;
    if (st == TCONV_OK && has_axes)
        st = tc_kernel_read_ints(ctx, TC_SLICE_AXES, p->axes, TC_MAX_RANK, &n_axes);
    bool has_steps = tc_kernel_input(ctx, TC_SLICE_STEPS) != NULL;
    if (st == TCONV_OK && has_steps)
        st = tc_kernel_read_ints(ctx, TC_SLICE_STEPS, p->steps, TC_MAX_RANK, &n_steps);
    if (st == TCONV_OK)
        st = tc_slice_args_complete(p, n_ends, has_axes, n_axes, has_steps, n_steps, ctx->err);
    return st;
}

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

tconv_status tc_run_slice(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tc_slice_args p;
    memset(&p, 0, sizeof p);
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = tc_slice_args_in_attrs(ctx->opset) ? tc_slice_args_from_attrs(ctx->node, &p, ctx->err)
                                                : slice_args_from_inputs(ctx, &p);
    if (st != TCONV_OK)
        return st;
    if (p.n > (size_t)x->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%zu slice axes for rank %d", p.n,
                            x->rank);
    int axes[TC_MAX_RANK];
    st = normalize_axes(ctx, "axes", p.axes, p.n, x->rank, axes);
    if (st != TCONV_OK)
        return st;
    tc_strided_view view;
    tc_strided_view_init(&view, x);
    for (size_t i = 0; i < p.n; i++) {
        if (p.steps[i] == 0)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "step %zu is 0", i);
        int a = axes[i];
        int64_t first, count;
        if (tc_test_slice_start_shift && p.steps[i] > 0 && p.starts[i] >= 0) /* tests only */
            p.starts[i] += tc_test_slice_start_shift;
        count = tc_slice_axis_count(x->dims[a], p.starts[i], p.ends[i], p.steps[i], &first);
        view.offset += first * view.strides[a];
        /* with two or more elements |step| < dim, so the product stays in range */
        view.strides[a] = count > 1 ? view.strides[a] * p.steps[i] : 0;
        view.dims[a] = count;
    }
    tc_rt_tensor *y; /* the copy writes every element */
    st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, x->rank, view.dims, &y);
    if (st == TCONV_OK)
        tc_strided_copy(&view, x, y);
    return st;
}

/* ================================================================ Pad */

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

typedef struct pad_params {
    pad_mode mode;
    int64_t begin[TC_MAX_RANK], end[TC_MAX_RANK];
    uint8_t value[8]; /* the constant, in the data's dtype */
} pad_params;

static tconv_status pad_mode_from_attr(tc_kernel_ctx *ctx, pad_mode *mode) {
    const char *s;
    tconv_status st = tc_node_attr_string(ctx->node, "mode", "constant", &s, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (strcmp(s, "constant") == 0)
        *mode = PAD_CONSTANT;
    else if (strcmp(s, "reflect") == 0)
        *mode = PAD_REFLECT;
    else if (strcmp(s, "edge") == 0)
        *mode = PAD_EDGE;
    else if (strcmp(s, "wrap") == 0 && ctx->opset >= 19)
        *mode = PAD_WRAP;
    else
        return tc_kernel_unsupported_attr(ctx, "mode", s);
    return TCONV_OK;
}

/* Spreads a pads list [b_0..b_k, e_0..e_k] over the axes it names. */
static tconv_status pad_spread(tc_kernel_ctx *ctx, const int64_t *pads, size_t n_pads,
                               const int *axes, size_t n_axes, pad_params *p) {
    if (n_pads != 2 * n_axes)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "pads has %zu values, expected %zu (2 per axis)", n_pads, 2 * n_axes);
    for (size_t i = 0; i < n_axes; i++) {
        p->begin[axes[i]] = pads[i];
        p->end[axes[i]] = pads[i + n_axes];
    }
    return TCONV_OK;
}

static tconv_status pad_params_2(tc_kernel_ctx *ctx, const tc_rt_tensor *x, pad_params *p) {
    int64_t pads[2 * TC_MAX_RANK];
    size_t n_pads;
    bool present;
    float value;
    tconv_status st = attr_ints(ctx, "pads", pads, 2 * TC_MAX_RANK, &n_pads, &present);
    if (st == TCONV_OK)
        st = tc_node_attr_float_or_default(ctx->node, "value", &value, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (!present)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "Pad-2 needs the attribute 'pads'");
    int axes[TC_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        axes[i] = i;
    tc_store_f64(x->dtype, p->value, 0, value);
    return pad_spread(ctx, pads, n_pads, axes, (size_t)x->rank, p);
}

static tconv_status pad_constant_input(tc_kernel_ctx *ctx, const tc_rt_tensor *x, pad_params *p) {
    const tc_rt_tensor *c = tc_kernel_input(ctx, 2);
    if (!c)
        return TCONV_OK; /* zero-filled */
    if (c->dtype != x->dtype)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "constant_value is %s, the data is %s",
                            tconv_dtype_name(c->dtype), tconv_dtype_name(x->dtype));
    if (c->n_elements != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "constant_value must hold one element, has %lld",
                            (long long)c->n_elements);
    memcpy(p->value, c->data, tc_rt_dtype_size(c->dtype));
    return TCONV_OK;
}

static tconv_status pad_params_11(tc_kernel_ctx *ctx, const tc_rt_tensor *x, pad_params *p) {
    int64_t pads[2 * TC_MAX_RANK], raw_axes[TC_MAX_RANK];
    size_t n_pads, n_axes = (size_t)x->rank;
    int axes[TC_MAX_RANK];
    tconv_status st = tc_kernel_read_ints(ctx, 1, pads, 2 * TC_MAX_RANK, &n_pads);
    if (st == TCONV_OK)
        st = pad_constant_input(ctx, x, p);
    if (st != TCONV_OK)
        return st;
    if (tc_kernel_input(ctx, 3)) {
        if (ctx->opset < 18)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "input 3 (axes) exists from Pad-18 on, the model is opset %lld",
                                (long long)ctx->opset);
        st = tc_kernel_read_ints(ctx, 3, raw_axes, TC_MAX_RANK, &n_axes);
        if (st == TCONV_OK)
            st = normalize_axes(ctx, "axes", raw_axes, n_axes, x->rank, axes);
        if (st != TCONV_OK)
            return st;
    } else {
        for (int i = 0; i < x->rank; i++)
            axes[i] = i;
    }
    return pad_spread(ctx, pads, n_pads, axes, n_axes, p);
}

/* Index into a kept range of length m for the padded position j (j outside [0, m)). */
static int64_t pad_source_index(pad_mode mode, int64_t j, int64_t m) {
    switch (mode) {
    case PAD_EDGE:
        return j < 0 ? 0 : m - 1;
    case PAD_WRAP: {
        int64_t r = j % m;
        return r < 0 ? r + m : r;
    }
    case PAD_REFLECT: {
        if (m == 1)
            return 0;
        int64_t period = 2 * (m - 1);
        int64_t r = j % period;
        if (r < 0)
            r += period;
        return r < m ? r : period - r;
    }
    case PAD_CONSTANT:
        break;
    }
    return -1;
}

/* Per output position of one axis: the input index, or -1 for the constant. Negative pads crop
 * first; reflect/edge/wrap then work on the cropped range (as onnxruntime does). */
static tconv_status pad_axis_map(tc_kernel_ctx *ctx, const pad_params *p, int axis, int64_t dim,
                                 int64_t out_dim, int64_t *map) {
    int64_t lo = p->begin[axis] < 0 ? -p->begin[axis] : 0;
    int64_t hi = dim - (p->end[axis] < 0 ? -p->end[axis] : 0);
    int64_t m = hi - lo;
    int64_t before = p->begin[axis] > 0 ? p->begin[axis] : 0;
    if (m <= 0 && out_dim > 0 && p->mode != PAD_CONSTANT)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "axis %d has no elements left to pad from in this mode", axis);
    for (int64_t o = 0; o < out_dim; o++) {
        int64_t j = o - before;
        if (j >= 0 && j < m)
            map[o] = lo + j;
        else
            map[o] = p->mode == PAD_CONSTANT ? -1 : lo + pad_source_index(p->mode, j, m);
    }
    return TCONV_OK;
}

static tconv_status pad_output_dims(tc_kernel_ctx *ctx, const tc_rt_tensor *x, const pad_params *p,
                                    int64_t *dims) {
    for (int i = 0; i < x->rank; i++) {
        int64_t d;
        if (p->begin[i] < -x->dims[i] || p->end[i] < -x->dims[i] ||
            !tc_add_i64(x->dims[i], p->begin[i], &d) || !tc_add_i64(d, p->end[i], &d) || d < 0)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "pads %lld, %lld on axis %d of size %lld give a negative or "
                                "overflowing size",
                                (long long)p->begin[i], (long long)p->end[i], i,
                                (long long)x->dims[i]);
        dims[i] = d;
    }
    return TCONV_OK;
}

static tconv_status pad_fill(tc_kernel_ctx *ctx, const tc_rt_tensor *x, const pad_params *p,
                             tc_rt_tensor *y) {
    int64_t total = 0;
    for (int i = 0; i < y->rank; i++) {
        if (!tc_add_i64(total, y->dims[i], &total))
            return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "pad index maps overflow");
    }
    tc_rt_tensor maps_mem;
    tconv_status st =
        tc_kernel_scratch(ctx, (size_t)(total ? total : 1) * sizeof(int64_t), &maps_mem);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "pad index maps: ");
    int64_t *maps = maps_mem.data;
    const int64_t *axis_maps[TC_MAX_RANK];
    int64_t used = 0;
    for (int i = 0; i < y->rank && st == TCONV_OK; i++) {
        st = pad_axis_map(ctx, p, i, x->dims[i], y->dims[i], maps + used);
        axis_maps[i] = maps + used;
        used += y->dims[i];
    }
    if (st == TCONV_OK)
        tc_indexed_copy(x, y, axis_maps, p->value);
    tc_kernel_scratch_release(ctx, &maps_mem);
    return st;
}

tconv_status tc_run_pad(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    pad_params p;
    memset(&p, 0, sizeof p);
    bool attr_form = ctx->opset < 11;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = pad_mode_from_attr(ctx, &p.mode);
    if (st == TCONV_OK)
        st = attr_form ? pad_params_2(ctx, x, &p) : pad_params_11(ctx, x, &p);
    int64_t dims[TC_MAX_RANK];
    if (st == TCONV_OK)
        st = pad_output_dims(ctx, x, &p, dims);
    tc_rt_tensor *y;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, x->rank, dims,
                                           &y); /* pad_fill writes every element */
    if (st == TCONV_OK && y->n_elements > 0)
        st = pad_fill(ctx, x, &p, y);
    return st;
}

/* ================================================================ Concat */

static tconv_status concat_check(tc_kernel_ctx *ctx, const tc_rt_tensor *first, int axis,
                                 int64_t *axis_total) {
    *axis_total = 0;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const tc_rt_tensor *t;
        tconv_status st = tc_kernel_require_input(ctx, i, &t);
        if (st != TCONV_OK)
            return st;
        if (t->dtype != first->dtype || t->rank != first->rank)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "input %zu ('%s') is %s rank %d, input 0 is %s rank %d", i,
                                tc_kernel_input_name(ctx, i), tconv_dtype_name(t->dtype), t->rank,
                                tconv_dtype_name(first->dtype), first->rank);
        for (int d = 0; d < t->rank; d++) {
            if (d != axis && t->dims[d] != first->dims[d])
                return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                    "input %zu ('%s') has %lld at axis %d, input 0 has %lld", i,
                                    tc_kernel_input_name(ctx, i), (long long)t->dims[d], d,
                                    (long long)first->dims[d]);
        }
        if (!tc_add_i64(*axis_total, t->dims[axis], axis_total))
            return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "concatenated size overflows");
    }
    return TCONV_OK;
}

typedef struct concat_job {
    const tc_kernel_ctx *ctx;
    int axis;
    int64_t inner;
    size_t esize, out_row; /* bytes of one output row (every input's piece of it) */
    char *y;
} concat_job;

/* n bytes from src to dst: the common small pieces (one float, one double or int64: stacking
 * boxes' coordinates) as one move instead of a memcpy call each. */
static inline void copy_piece(char *dst, const char *src, size_t n) {
    if (n == 4)
        memcpy(dst, src, 4);
    else if (n == 8)
        memcpy(dst, src, 8);
    else
        memcpy(dst, src, n);
}

/* Output bytes [begin, end): each output row is the inputs' pieces of that row, in order. The
 * piece holding `begin` is found once; then the pieces follow one another. */
static void concat_bytes(void *vjob, int64_t begin, int64_t end) {
    const concat_job *job = vjob;
    size_t at = (size_t)begin, n_inputs = job->ctx->n_inputs;
    size_t row = at / job->out_row, within = at % job->out_row, i = 0;
    const tc_rt_tensor *const *inputs = job->ctx->inputs;
    for (;; i++) {
        size_t chunk = (size_t)(inputs[i]->dims[job->axis] * job->inner) * job->esize;
        if (within < chunk)
            break;
        within -= chunk;
    }
    while (at < (size_t)end) {
        const tc_rt_tensor *t = inputs[i];
        size_t chunk = (size_t)(t->dims[job->axis] * job->inner) * job->esize;
        size_t n = chunk - within;
        if (n > (size_t)end - at)
            n = (size_t)end - at;
        if (n > 0) /* (an empty input has no data at all) */
            copy_piece(job->y + at, (const char *)t->data + row * chunk + within, n);
        at += n;
        within = 0;
        if (++i == n_inputs) {
            i = 0;
            row++;
        }
    }
}

/* Concat's parameters, read once when it is prepared. */
typedef struct concat_params {
    int64_t axis;
} concat_params;

static tconv_status run_concat(tc_kernel_ctx *ctx) {
    const concat_params *params = ctx->params;
    const tc_rt_tensor *first;
    int axis;
    tconv_status st = prepare_data(ctx, &first);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", params->axis, first->rank, &axis);
    int64_t total;
    if (st == TCONV_OK)
        st = concat_check(ctx, first, axis, &total);
    if (st != TCONV_OK)
        return st;
    int64_t dims[TC_MAX_RANK];
    memcpy(dims, first->dims, sizeof dims);
    dims[axis] = total;
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output_uninit(ctx, 0, first->dtype, first->rank, dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    concat_job job = {.ctx = ctx, .axis = axis, .inner = 1, .y = y->data};
    job.esize = tc_rt_dtype_size(first->dtype);
    for (int d = axis + 1; d < first->rank; d++)
        job.inner *= dims[d];
    job.out_row = (size_t)(total * job.inner) * job.esize;
    /* the output's bytes split over threads (a streamed float per 4 bytes), whole cache lines */
    tc_parallel_ranges(ctx->pool, ctx->n_threads, (int64_t)y->nbytes, TC_PARALLEL_COST_STREAM / 4.0,
                       64, 16 * 1024, concat_bytes, &job);
    return TCONV_OK;
}

static bool concat_work(const void *params, const tc_work_shapes *w, uint64_t *out) {
    (void)params;
    return tc_work_elements_moved(w, out);
}

tconv_status tc_prepare_concat(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    concat_params *params = tc_kernel_params_alloc(pc, sizeof *params);
    if (!params)
        return TCONV_ERR_NOMEM;
    *out = (tc_kernel_prepared){.run = run_concat, .params = params, .work = concat_work};
    if (!tc_node_attr(pc->node, "axis"))
        return tc_error_set(pc->err, TCONV_ERR_INVALID, "the attribute 'axis' is required");
    return tc_node_attr_int(pc->node, "axis", 0, &params->axis, pc->err);
}

/* ================================================================ Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity: same elements, new shape */

static tconv_status reshape_resolve(tc_kernel_ctx *ctx, const tc_rt_tensor *x, const int64_t *shape,
                                    size_t n, bool allowzero, int64_t *dims) {
    int infer;
    char why[128];
    if (!tc_reshape_target_check(shape, NULL, (int)n, allowzero, x->rank, &infer, why, sizeof why))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s", why);
    int64_t known = 1;
    for (size_t i = 0; i < n; i++) {
        if ((int)i == infer)
            continue;
        int64_t d = shape[i] == 0 && !allowzero ? x->dims[i] : shape[i];
        dims[i] = d;
        if (!tc_mul_i64(known, d, &known))
            return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "shape overflows");
    }
    if (infer >= 0) {
        if (known == 0 || x->n_elements % known != 0)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "cannot infer the -1 dim: %lld elements over %lld",
                                (long long)x->n_elements, (long long)known);
        dims[infer] = x->n_elements / known;
        known = x->n_elements;
    }
    if (known != x->n_elements) {
        char a[256], b[256];
        return tc_error_set(
            ctx->err, TCONV_ERR_INVALID, "cannot reshape %s (%lld elements) to %s (%lld elements)",
            tc_shape_format(x->rank, x->dims, a, sizeof a), (long long)x->n_elements,
            tc_shape_format((int)n, dims, b, sizeof b), (long long)known);
    }
    return TCONV_OK;
}

tconv_status tc_run_reshape(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t shape[TC_MAX_RANK], dims[TC_MAX_RANK], allowzero = 0;
    size_t n;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "allowzero", 0, &allowzero, ctx->err);
    if (st == TCONV_OK)
        st = tc_kernel_read_ints(ctx, 1, shape, TC_MAX_RANK, &n);
    if (st == TCONV_OK)
        st = reshape_resolve(ctx, x, shape, n, allowzero != 0, dims);
    if (st == TCONV_OK)
        st = tc_kernel_forward_to_output(ctx, 0, x, (int)n, dims);
    return st;
}

tconv_status tc_run_identity(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = tc_kernel_forward_to_output(ctx, 0, x, x->rank, x->dims);
    return st;
}

tconv_status tc_run_flatten(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t axis;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", 1, &axis, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (axis < -(int64_t)x->rank || axis > (int64_t)x->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "axis %lld is outside [-%d, %d]",
                            (long long)axis, x->rank, x->rank);
    if (axis < 0)
        axis += x->rank;
    int64_t dims[2] = {1, 1};
    for (int i = 0; i < x->rank; i++) {
        if (!tc_mul_i64(dims[i < axis ? 0 : 1], x->dims[i], &dims[i < axis ? 0 : 1]))
            return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "flattened size overflows");
    }
    return tc_kernel_forward_to_output(ctx, 0, x, 2, dims);
}

/* Axes of (Un)squeeze: the attribute before opset 13, the (optional for Squeeze) input after. */
static tconv_status squeeze_axes(tc_kernel_ctx *ctx, int64_t *axes, size_t *n, bool *present) {
    if (ctx->opset < 13)
        return attr_ints(ctx, "axes", axes, TC_MAX_RANK, n, present);
    *present = tc_kernel_input(ctx, 1) != NULL;
    *n = 0;
    return *present ? tc_kernel_read_ints(ctx, 1, axes, TC_MAX_RANK, n) : TCONV_OK;
}

tconv_status tc_run_squeeze(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t raw[TC_MAX_RANK];
    size_t n;
    bool present;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = squeeze_axes(ctx, raw, &n, &present);
    int axes[TC_MAX_RANK];
    if (st == TCONV_OK)
        st = normalize_axes(ctx, "axes", raw, n, x->rank, axes);
    if (st != TCONV_OK)
        return st;
    bool drop[TC_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        if (x->dims[axes[i]] != 1)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "cannot squeeze axis %d of size %lld",
                                axes[i], (long long)x->dims[axes[i]]);
        drop[axes[i]] = true;
    }
    int64_t dims[TC_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!(present ? drop[i] : x->dims[i] == 1))
            dims[rank++] = x->dims[i];
    }
    return tc_kernel_forward_to_output(ctx, 0, x, rank, dims);
}

tconv_status tc_run_unsqueeze(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t raw[TC_MAX_RANK];
    size_t n;
    bool present;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = squeeze_axes(ctx, raw, &n, &present);
    if (st != TCONV_OK)
        return st;
    if (!present)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "Unsqueeze needs axes");
    if ((size_t)x->rank + n > TC_MAX_RANK)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "result rank %zu exceeds %d",
                            (size_t)x->rank + n, TC_MAX_RANK);
    int out_rank = x->rank + (int)n, axes[TC_MAX_RANK];
    st = normalize_axes(ctx, "axes", raw, n, out_rank, axes);
    if (st != TCONV_OK)
        return st;
    bool inserted[TC_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++)
        inserted[axes[i]] = true;
    int64_t dims[TC_MAX_RANK];
    for (int i = 0, k = 0; i < out_rank; i++)
        dims[i] = inserted[i] ? 1 : x->dims[k++];
    return tc_kernel_forward_to_output(ctx, 0, x, out_rank, dims);
}

/* ================================================================ Transpose */

tconv_status tc_run_transpose(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t perm[TC_MAX_RANK];
    size_t n;
    bool present;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = attr_ints(ctx, "perm", perm, TC_MAX_RANK, &n, &present);
    if (st != TCONV_OK)
        return st;
    if (!present) {
        n = (size_t)x->rank;
        for (int i = 0; i < x->rank; i++)
            perm[i] = x->rank - 1 - i;
    }
    int axes[TC_MAX_RANK];
    if (n != (size_t)x->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "perm has %zu entries for rank %d", n,
                            x->rank);
    st = normalize_axes(ctx, "perm", perm, n, x->rank, axes);
    if (st != TCONV_OK)
        return st;
    tc_strided_view view, src;
    tc_strided_view_init(&src, x);
    view.offset = 0;
    view.rank = x->rank;
    for (int i = 0; i < x->rank; i++) {
        view.dims[i] = x->dims[axes[i]];
        view.strides[i] = src.strides[axes[i]];
    }
    tc_rt_tensor *y; /* the copy writes every element */
    st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, x->rank, view.dims, &y);
    if (st == TCONV_OK)
        tc_strided_copy(&view, x, y);
    return st;
}

/* ================================================================ Constant, Shape */

static tconv_status constant_from_tensor(tc_kernel_ctx *ctx, const tc_attr *a) {
    tc_rt_tensor t;
    if (!a->t)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "attribute 'value' has no tensor");
    tconv_status st = tc_rt_tensor_from_ir(a->t, &t, ctx->err);
    if (st != TCONV_OK)
        return st;
    st = tc_kernel_copy_to_output(ctx, 0, &t, t.rank, t.dims);
    tc_rt_tensor_release(&t);
    return st;
}

static tconv_status constant_from_numbers(tc_kernel_ctx *ctx, const tc_attr *a) {
    bool is_list = a->type == TCONV_ATTR_FLOATS || a->type == TCONV_ATTR_INTS;
    bool is_float = a->type == TCONV_ATTR_FLOAT || a->type == TCONV_ATTR_FLOATS;
    int64_t n = is_list ? (int64_t)a->n : 1;
    tc_rt_tensor *y;
    tconv_status st = tc_kernel_alloc_output(
        ctx, 0, is_float ? TCONV_DTYPE_FLOAT : TCONV_DTYPE_INT64, is_list ? 1 : 0, &n, &y);
    if (st != TCONV_OK || n == 0)
        return st;
    if (is_float)
        memcpy(y->data, is_list ? a->floats : &a->f, (size_t)n * sizeof(float));
    else
        memcpy(y->data, is_list ? a->ints : &a->i, (size_t)n * sizeof(int64_t));
    return TCONV_OK;
}

tconv_status tc_run_constant(tc_kernel_ctx *ctx) {
    if (ctx->node->n_attrs != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "Constant needs exactly one value attribute, has %zu",
                            ctx->node->n_attrs);
    const tc_attr *a = &ctx->node->attrs[0];
    if (strcmp(a->name, "value") == 0 && a->type == TCONV_ATTR_TENSOR)
        return constant_from_tensor(ctx, a);
    if ((strcmp(a->name, "value_float") == 0 && a->type == TCONV_ATTR_FLOAT) ||
        (strcmp(a->name, "value_floats") == 0 && a->type == TCONV_ATTR_FLOATS) ||
        (strcmp(a->name, "value_int") == 0 && a->type == TCONV_ATTR_INT) ||
        (strcmp(a->name, "value_ints") == 0 && a->type == TCONV_ATTR_INTS))
        return constant_from_numbers(ctx, a);
    return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                        "unsupported Constant attribute '%s' of type %s (sparse and string "
                        "constants are not supported)",
                        a->name, tconv_attr_type_name(a->type));
}

tconv_status tc_run_shape(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t start = 0, end = TC_MAX_RANK;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "start", 0, &start, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "end", x->rank, &end, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (start < 0)
        start += x->rank;
    if (end < 0)
        end += x->rank;
    start = clamp_i64(start, 0, x->rank);
    end = clamp_i64(end, 0, x->rank);
    int64_t n = end > start ? end - start : 0;
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, TCONV_DTYPE_INT64, 1, &n, &y);
    if (st == TCONV_OK && n > 0)
        memcpy(y->data, x->dims + start, (size_t)n * sizeof(int64_t));
    return st;
}

/* ================================================================ Gather */

static tconv_status gather_indices(tc_kernel_ctx *ctx, const tc_rt_tensor *idx, int64_t dim,
                                   int64_t *out) {
    for (int64_t i = 0; i < idx->n_elements; i++) {
        tconv_status st = tc_kernel_normalize_index(ctx, tc_rt_get_i64(idx, i), dim, &out[i]);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

static tconv_status gather_shape(tc_kernel_ctx *ctx, const tc_rt_tensor *x, const tc_rt_tensor *idx,
                                 int axis, int *rank, int64_t *dims) {
    *rank = x->rank - 1 + idx->rank;
    if (*rank > TC_MAX_RANK)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "result rank %d exceeds %d", *rank,
                            TC_MAX_RANK);
    int k = 0;
    for (int i = 0; i < axis; i++)
        dims[k++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++)
        dims[k++] = idx->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        dims[k++] = x->dims[i];
    return TCONV_OK;
}

tconv_status tc_run_gather(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *idx;
    int64_t axis_attr;
    int axis, rank;
    int64_t dims[TC_MAX_RANK];
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 1, &idx);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 1, TC_DTYPES_INDEX);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", 0, &axis_attr, ctx->err);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", axis_attr, x->rank, &axis);
    if (st == TCONV_OK)
        st = gather_shape(ctx, x, idx, axis, &rank, dims);
    if (st != TCONV_OK)
        return st;
    tc_rt_tensor k_mem;
    st = tc_kernel_scratch(ctx, (size_t)(idx->n_elements ? idx->n_elements : 1) * sizeof(int64_t),
                           &k_mem);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "gather indices: ");
    int64_t *k = k_mem.data;
    tc_rt_tensor *y;
    st = gather_indices(ctx, idx, x->dims[axis], k);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, x->dtype, rank, dims, &y);
    if (st == TCONV_OK && y->n_elements > 0) {
        size_t esize = tc_rt_dtype_size(x->dtype);
        int64_t outer = 1, inner = 1;
        for (int i = 0; i < axis; i++)
            outer *= x->dims[i];
        for (int i = axis + 1; i < x->rank; i++)
            inner *= x->dims[i];
        size_t block = (size_t)inner * esize;
        char *dst = y->data;
        for (int64_t o = 0; o < outer; o++) {
            const char *src = (const char *)x->data + (size_t)(o * x->dims[axis]) * block;
            for (int64_t i = 0; i < idx->n_elements; i++, dst += block)
                memcpy(dst, src + (size_t)k[i] * block, block);
        }
    }
    tc_kernel_scratch_release(ctx, &k_mem);
    return st;
}

/* ================================================================ Cast */

tconv_status tc_run_cast(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t to;
    tconv_status st = prepare_data(ctx, &x);
    if (st == TCONV_OK && !tc_node_attr(ctx->node, "to"))
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "the attribute 'to' is required");
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "to", 0, &to, ctx->err);
    if (st == TCONV_OK)
        st = tc_kernel_check_output_dtype(ctx, (int)to, TC_DTYPES_ANY);
    tc_rt_tensor *y;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, (tconv_dtype)to, x->rank, x->dims, &y);
    int64_t saturate = 1;
    if (st == TCONV_OK)
        st = tc_node_attr_int_or_default(ctx->node, "saturate", &saturate, ctx->err);
    if (st == TCONV_OK)
        tc_convert_elements_saturate(x, y, saturate != 0);
    return st;
}
