/* Index and shape kernels: ConstantOfShape, Size, Dropout (inference), Expand, Tile, Split,
 * Range, GatherElements, GatherND, ScatterElements, ScatterND, CumSum, DepthToSpace,
 * SpaceToDepth, NonZero, TopK, OneHot, Trilu. Ops that only move elements take every stored
 * dtype (moved by size); ops that compute (Range, CumSum, reductions of the scatters, TopK's
 * ordering) read floats as double and integers as int64, so 64-bit integers stay exact. */
#include "runtime/kernels/kernel_util.h"
#include "runtime/compute/compute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_NUMERIC_DTYPES                                                                       \
    (TC_DTYPES_NUMERIC | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE) | TC_DTYPE_BIT(TCONV_DTYPE_INT8) |       \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT8) | TC_DTYPE_BIT(TCONV_DTYPE_INT16) |                           \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT16) | TC_DTYPE_BIT(TCONV_DTYPE_UINT32))

static bool dtype_is_float(tconv_dtype d) {
    return d == TCONV_DTYPE_FLOAT || d == TCONV_DTYPE_DOUBLE || d == TCONV_DTYPE_FLOAT16;
}

static int64_t product(const int64_t *dims, int begin, int end) {
    int64_t p = 1;
    for (int i = begin; i < end; i++)
        p *= dims[i];
    return p;
}

/* Copies the element at src[si] to dst[di] (same dtype, esize bytes). */
static void copy_element(void *dst, int64_t di, const void *src, int64_t si, size_t esize) {
    memcpy((char *)dst + (size_t)di * esize, (const char *)src + (size_t)si * esize, esize);
}

/* count copies of one element (esize bytes at value) into dst: doubling copies. */
static void fill_value(void *dst, int64_t count, const void *value, size_t esize) {
    if (count <= 0)
        return;
    memcpy(dst, value, esize);
    int64_t done = 1;
    while (done < count) {
        int64_t n = done < count - done ? done : count - done;
        memcpy((char *)dst + (size_t)done * esize, dst, (size_t)n * esize);
        done += n;
    }
}

/* Checks input `index` exists and is of a dtype in mask. */
static tconv_status require(tc_kernel_ctx *ctx, size_t index, uint32_t mask,
                            const tc_rt_tensor **t) {
    return tc_kernel_require_typed(ctx, index, mask, t);
}

/* A scalar (or one-element) integer input. */
static tconv_status read_int_scalar(tc_kernel_ctx *ctx, size_t index, int64_t *out) {
    int64_t v[1];
    size_t n;
    tconv_status st = tc_kernel_read_ints(ctx, index, v, 1, &n);
    if (st != TCONV_OK)
        return st;
    if (n != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "input %zu ('%s') must hold one value",
                            index, tc_kernel_input_name(ctx, index));
    *out = v[0];
    return TCONV_OK;
}

/* ================================================================ threaded copies */

/* Large copies are cut into blocks of the outermost axis longer than 1 (the axes before it have
 * size 1, so each block is a contiguous piece of the output), one task each; each task copies
 * its block with the single-threaded tc_strided_copy / tc_indexed_copy. The axis is one of the
 * strided view's axes (its order is the output's) or of the output (indexed copies). */
#define COPY_TASK_BYTES (64 * 1024)

typedef struct copy_job {
    const tc_rt_tensor *src;
    tc_rt_tensor *dst;
    const tc_strided_view *view; /* strided copies; NULL: indexed */
    const int64_t *const *maps;  /* indexed copies */
    int axis;
    int64_t rows, rows_per_task;
} copy_job;

static void copy_rows_task(void *arg, int64_t task, int worker) {
    (void)worker;
    const copy_job *j = arg;
    int64_t first = task * j->rows_per_task, n = j->rows - first;
    if (n > j->rows_per_task)
        n = j->rows_per_task;
    int64_t inner = j->dst->n_elements / j->rows;
    tc_rt_tensor part = *j->dst;
    part.n_elements = n * inner;
    part.nbytes = (size_t)part.n_elements * tc_rt_dtype_size(part.dtype);
    part.data = (char *)j->dst->data + (size_t)(first * inner) * tc_rt_dtype_size(part.dtype);
    part.owns_data = false;
    if (j->view) {
        tc_strided_view v = *j->view;
        v.dims[j->axis] = n;
        v.offset += first * v.strides[j->axis];
        tc_strided_copy(&v, j->src, &part);
    } else {
        const int64_t *maps[TC_MAX_RANK];
        for (int i = 0; i < part.rank; i++)
            maps[i] = j->maps[i];
        maps[j->axis] += first;
        part.dims[j->axis] = n;
        tc_indexed_copy(j->src, &part, maps, NULL);
    }
}

static void parallel_copy(tc_kernel_ctx *ctx, copy_job *job, int rank, const int64_t *dims) {
    tc_rt_tensor *dst = job->dst;
    if (dst->n_elements == 0)
        return;
    job->axis = 0;
    while (job->axis < rank - 1 && dims[job->axis] == 1)
        job->axis++;
    size_t bytes = (size_t)dst->n_elements * tc_rt_dtype_size(dst->dtype);
    job->rows = rank > 0 ? dims[job->axis] : 1;
    int64_t tasks = (int64_t)(bytes / COPY_TASK_BYTES);
    if (tasks > job->rows)
        tasks = job->rows;
    if (tasks < 2 || ctx->n_threads < 2 || rank == 0) {
        if (job->view)
            tc_strided_copy(job->view, job->src, dst);
        else
            tc_indexed_copy(job->src, dst, job->maps, NULL);
        return;
    }
    job->rows_per_task = (job->rows + tasks - 1) / tasks;
    tasks = (job->rows + job->rows_per_task - 1) / job->rows_per_task;
    tc_parallel_for(ctx->pool, ctx->n_threads, tasks, copy_rows_task, job);
}

static void parallel_strided_copy(tc_kernel_ctx *ctx, const tc_strided_view *view,
                                  const tc_rt_tensor *src, tc_rt_tensor *dst) {
    copy_job job = {src, dst, view, NULL, 0, 0, 0};
    parallel_copy(ctx, &job, view->rank, view->dims);
}

static void parallel_indexed_copy(tc_kernel_ctx *ctx, const tc_rt_tensor *src, tc_rt_tensor *dst,
                                  const int64_t *const *maps) {
    copy_job job = {src, dst, NULL, maps, 0, 0, 0};
    parallel_copy(ctx, &job, dst->rank, dst->dims);
}

/* ================================================================ ConstantOfShape, Size */

tconv_status tc_run_constant_of_shape(tc_kernel_ctx *ctx) {
    int64_t dims[TC_MAX_RANK];
    size_t rank;
    tconv_status st = tc_kernel_read_ints(ctx, 0, dims, TC_MAX_RANK, &rank);
    if (st != TCONV_OK)
        return st;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "shape[%zu] is negative (%lld)", i,
                                (long long)dims[i]);
    }
    const tc_attr *a = tc_node_attr(ctx->node, "value");
    tc_rt_tensor value;
    float zero = 0.0f;
    memset(&value, 0, sizeof value);
    if (a) {
        if (a->type != TCONV_ATTR_TENSOR || !a->t)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "attribute 'value' is not a tensor");
        if ((st = tc_rt_tensor_from_ir(a->t, &value, ctx->err)))
            return st;
        if (value.n_elements != 1) {
            tc_rt_tensor_release(&value);
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "attribute 'value' must hold one element, has %lld",
                                (long long)value.n_elements);
        }
    } else {
        value.dtype = TCONV_DTYPE_FLOAT;
        value.data = &zero;
    }
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, value.dtype, (int)rank, dims, &y);
    if (st == TCONV_OK)
        fill_value(y->data, y->n_elements, value.data, tc_rt_dtype_size(value.dtype));
    if (a)
        tc_rt_tensor_release(&value);
    return st;
}

tconv_status tc_run_size(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tc_rt_tensor *y;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, TCONV_DTYPE_INT64, 0, NULL, &y);
    if (st == TCONV_OK)
        *(int64_t *)y->data = x->n_elements;
    return st;
}

/* ================================================================ Dropout */

/* Inference: the output is the input and the mask all true (ones of the input's dtype before
 * opset 10). training_mode (input 2, opset 12) true with a non-zero ratio would need random
 * numbers: refused. */
tconv_status tc_run_dropout(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st != TCONV_OK)
        return st;
    const tc_rt_tensor *training = tc_kernel_input(ctx, 2);
    if (training && training->n_elements > 0 && tc_rt_get_f64(training, 0) != 0.0) {
        double ratio = 0.5;
        const tc_rt_tensor *r = tc_kernel_input(ctx, 1);
        if (r && r->n_elements > 0)
            ratio = tc_rt_get_f64(r, 0);
        if (ratio != 0.0)
            return tc_kernel_unsupported_attr(ctx, "training_mode", "true (with ratio > 0)");
    }
    if ((st = tc_kernel_copy_to_output(ctx, 0, x, x->rank, x->dims)))
        return st;
    if (ctx->n_outputs < 2)
        return TCONV_OK;
    tc_rt_tensor *mask;
    tconv_dtype mask_type = ctx->opset >= 10 ? TCONV_DTYPE_BOOL : x->dtype;
    if ((st = tc_kernel_alloc_output(ctx, 1, mask_type, x->rank, x->dims, &mask)))
        return st;
    for (int64_t i = 0; i < mask->n_elements; i++)
        tc_store_i64(mask_type, mask->data, i, 1);
    return TCONV_OK;
}

/* `count` int64s (at least one) of kernel scratch, within the session's memory limit; the caller
 * releases `mem` (tc_kernel_scratch_release). */
static tconv_status int64_scratch(tc_kernel_ctx *ctx, int64_t count, const char *what,
                                  tc_rt_tensor *mem, int64_t **out) {
    tconv_status st = tc_kernel_scratch(ctx, (size_t)(count ? count : 1) * sizeof(int64_t), mem);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "%s: ", what);
    *out = mem->data;
    return TCONV_OK;
}

/* ================================================================ Expand, Tile */

/* Merges neighbouring axes that broadcast alike (both from length 1, or both copied whole) and
 * drops output axes of length 1: Expand's copy then runs over few long rows instead of many
 * short ones (50x1x1x1 -> 50x16x7x7 becomes 50x1 -> 50x784). src and out (rank axes) are
 * rewritten in place; returns the new rank. */
static int coalesce_broadcast(int rank, int64_t *src, int64_t *out) {
    int r = 0;
    for (int i = 0; i < rank; i++) {
        if (out[i] == 1)
            continue;
        bool spread = src[i] == 1, whole = src[i] == out[i];
        if (r > 0 && ((spread && src[r - 1] == 1) || (whole && src[r - 1] == out[r - 1]))) {
            src[r - 1] *= src[i];
            out[r - 1] *= out[i];
            continue;
        }
        src[r] = src[i];
        out[r] = out[i];
        r++;
    }
    if (r == 0) { /* a single element */
        src[0] = out[0] = 1;
        r = 1;
    }
    return r;
}

/* y = x read through per-axis index maps (x seen at y's rank, leading 1s added); with
 * `coalesce` (source: broadcast_source) over coalesce_broadcast's merged axes. */
static tconv_status copy_through_maps(tc_kernel_ctx *ctx, const tc_rt_tensor *x, int rank,
                                      const int64_t *out_dims,
                                      int64_t (*source)(int64_t j, int64_t in_dim), bool coalesce) {
    tc_rt_tensor src = *x;
    int lead = rank - x->rank;
    src.rank = rank;
    for (int i = 0; i < rank; i++)
        src.dims[i] = i < lead ? 1 : x->dims[i - lead];
    tc_rt_tensor *y; /* every element is copied */
    tconv_status st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, rank, out_dims, &y);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    tc_rt_tensor dst = *y; /* a view of y: the same data, maybe fewer axes */
    if (coalesce)
        src.rank = dst.rank = coalesce_broadcast(rank, src.dims, dst.dims);
    rank = dst.rank;
    int64_t total = 0;
    for (int i = 0; i < rank; i++)
        total += dst.dims[i];
    tc_rt_tensor buf_mem;
    int64_t *buf = NULL;
    if ((st = int64_scratch(ctx, total, "index maps", &buf_mem, &buf)) != TCONV_OK)
        return st;
    const int64_t *maps[TC_MAX_RANK];
    int64_t *m = buf;
    for (int i = 0; i < rank; i++) {
        for (int64_t j = 0; j < dst.dims[i]; j++)
            m[j] = source(j, src.dims[i]);
        maps[i] = m;
        m += dst.dims[i];
    }
    parallel_indexed_copy(ctx, &src, &dst, maps);
    tc_kernel_scratch_release(ctx, &buf_mem);
    return TCONV_OK;
}

static int64_t broadcast_source(int64_t j, int64_t in_dim) {
    return in_dim == 1 ? 0 : j;
}

static int64_t tile_source(int64_t j, int64_t in_dim) {
    return j % in_dim;
}

tconv_status tc_run_expand(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t shape[TC_MAX_RANK], dims[TC_MAX_RANK];
    size_t n;
    int rank;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st == TCONV_OK)
        st = tc_kernel_read_ints(ctx, 1, shape, TC_MAX_RANK, &n);
    if (st != TCONV_OK)
        return st;
    int ranks[2] = {x->rank, (int)n};
    const int64_t *shapes[2] = {x->dims, shape};
    if ((st = tc_broadcast_shape(2, ranks, shapes, &rank, dims, ctx->err)))
        return st;
    return copy_through_maps(ctx, x, rank, dims, broadcast_source, true);
}

tconv_status tc_run_tile(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t repeats[TC_MAX_RANK], dims[TC_MAX_RANK];
    size_t n;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st != TCONV_OK)
        return st;
    if (ctx->opset < 6) { /* Tile-1: input 1 repeats input 2's axis */
        int64_t tiles = 0, axis_raw = 0;
        int axis;
        if ((st = read_int_scalar(ctx, 1, &tiles)) || (st = read_int_scalar(ctx, 2, &axis_raw)) ||
            (st = tc_kernel_normalize_axis(ctx, "axis", axis_raw, x->rank, &axis)))
            return st;
        n = (size_t)x->rank;
        for (int i = 0; i < x->rank; i++)
            repeats[i] = i == axis ? tiles : 1;
    } else if ((st = tc_kernel_read_ints(ctx, 1, repeats, TC_MAX_RANK, &n))) {
        return st;
    }
    if (n != (size_t)x->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "repeats has %zu values for rank %d", n,
                            x->rank);
    for (int i = 0; i < x->rank; i++) {
        if (repeats[i] < 0 || !tc_mul_i64(x->dims[i], repeats[i], &dims[i]))
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "repeats[%d] = %lld is invalid", i,
                                (long long)repeats[i]);
    }
    return copy_through_maps(ctx, x, x->rank, dims, tile_source, false);
}

/* ================================================================ Split */

/* The sizes of the parts: the 'split' attribute (before 13) or input 1, else equal parts
 * (opset 18's num_outputs: the last part may be smaller). */
static tconv_status split_sizes(tc_kernel_ctx *ctx, int64_t dim, int64_t *sizes) {
    size_t n = ctx->n_outputs, count = 0;
    bool present = false;
    tconv_status st;
    if (ctx->opset < 13) {
        const int64_t *v;
        if ((st = tc_node_attr_ints(ctx->node, "split", &present, &v, &count, ctx->err)))
            return st;
        if (present && count == n)
            memcpy(sizes, v, n * sizeof *sizes);
    }
    if (!present && tc_kernel_input(ctx, 1)) {
        present = true;
        if ((st = tc_kernel_read_ints(ctx, 1, sizes, n, &count)))
            return st;
    }
    if (present) {
        if (count != n || !tc_split_sizes_cut(sizes, n, dim))
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "split sizes (%zu values) do not cut an axis of %lld into %zu "
                                "parts",
                                count, (long long)dim, n);
        return TCONV_OK;
    }
    int64_t parts = (int64_t)n;
    if ((st = tc_node_attr_int(ctx->node, "num_outputs", parts, &parts, ctx->err)))
        return st;
    if (parts != (int64_t)n || (ctx->opset < 18 && dim % parts != 0))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "cannot split an axis of %lld into %lld equal parts for %zu outputs",
                            (long long)dim, (long long)parts, n);
    int64_t part = dim / parts + (dim % parts != 0);
    for (size_t i = 0; i < n; i++) {
        int64_t left = dim - part * (int64_t)i;
        sizes[i] = left < part ? (left > 0 ? left : 0) : part;
    }
    return TCONV_OK;
}

tconv_status tc_run_split(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t axis_raw;
    int axis;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", 0, &axis_raw, ctx->err);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", axis_raw, x->rank, &axis);
    if (st != TCONV_OK)
        return st;
    int64_t *sizes = malloc(ctx->n_outputs * sizeof *sizes);
    if (!sizes)
        return tc_error_nomem(ctx->err, "split sizes");
    st = split_sizes(ctx, x->dims[axis], sizes);
    tc_strided_view view;
    tc_strided_view_init(&view, x);
    int64_t start = 0;
    for (size_t i = 0; st == TCONV_OK && i < ctx->n_outputs; i++) {
        tc_rt_tensor *y;
        view.dims[axis] = sizes[i];
        view.offset = start * view.strides[axis];
        st = tc_kernel_alloc_output(ctx, i, x->dtype, x->rank, view.dims, &y);
        if (st == TCONV_OK)
            parallel_strided_copy(ctx, &view, x, y);
        start += sizes[i];
    }
    free(sizes);
    return st;
}

/* ================================================================ Range */

tconv_status tc_run_range(tc_kernel_ctx *ctx) {
    const uint32_t mask =
        TC_DTYPES_NUMERIC | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE) | TC_DTYPE_BIT(TCONV_DTYPE_INT16);
    const tc_rt_tensor *in[3];
    tconv_status st = TCONV_OK;
    for (size_t i = 0; i < 3 && st == TCONV_OK; i++) {
        st = require(ctx, i, mask, &in[i]);
        if (st == TCONV_OK && in[i]->n_elements != 1)
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "input %zu ('%s') must be a scalar", i,
                              tc_kernel_input_name(ctx, i));
    }
    if (st != TCONV_OK)
        return st;
    tconv_dtype dtype = in[0]->dtype;
    int64_t n;
    tc_rt_tensor *y;
    if (dtype_is_float(dtype)) {
        double start = tc_rt_get_f64(in[0], 0), limit = tc_rt_get_f64(in[1], 0),
               delta = tc_rt_get_f64(in[2], 0);
        double count = ceil((limit - start) / delta);
        if (delta == 0.0 || !(count < 9.2e18))
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "delta %g gives no finite range",
                                delta);
        n = count > 0 ? (int64_t)count : 0;
        if ((st = tc_kernel_alloc_output(ctx, 0, dtype, 1, &n, &y)))
            return st;
        for (int64_t i = 0; i < n; i++)
            tc_store_f64(dtype, y->data, i, start + (double)i * delta);
        return TCONV_OK;
    }
    int64_t start = tc_rt_get_i64(in[0], 0), limit = tc_rt_get_i64(in[1], 0),
            delta = tc_rt_get_i64(in[2], 0);
    if (delta == 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "delta is 0");
    if (!tc_range_count_i64(start, limit, delta, &n))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "a range of more than 2^63 elements");
    if ((st = tc_kernel_alloc_output(ctx, 0, dtype, 1, &n, &y)))
        return st;
    for (int64_t i = 0; i < n; i++)
        tc_store_i64(dtype, y->data, i, /* mod 2^64: each value lies in [start, limit) */
                     (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta));
    return TCONV_OK;
}

/* ================================================================ scatter reductions */

typedef enum reduction { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } reduction;

static tconv_status read_reduction(tc_kernel_ctx *ctx, reduction *out) {
    const char *name;
    tconv_status st = tc_node_attr_string(ctx->node, "reduction", "none", &name, ctx->err);
    if (st != TCONV_OK)
        return st;
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    for (int i = 0; i < 5; i++) {
        if (strcmp(name, names[i]) == 0 && (i < 3 || ctx->opset >= 18)) {
            *out = (reduction)i;
            return TCONV_OK;
        }
    }
    return tc_kernel_unsupported_attr(ctx, "reduction", name);
}

/* y[di] = y[di] (reduction) u[ui]; none: y[di] = u[ui]. */
static void reduce_into(reduction red, tc_rt_tensor *y, int64_t di, const tc_rt_tensor *u,
                        int64_t ui, size_t esize) {
    if (red == RED_NONE) {
        copy_element(y->data, di, u->data, ui, esize);
    } else if (dtype_is_float(y->dtype)) {
        double a = tc_rt_get_f64(y, di), b = tc_rt_get_f64(u, ui);
        double r = red == RED_ADD   ? a + b
                   : red == RED_MUL ? a * b
                   : red == RED_MAX ? (b > a ? b : a)
                                    : (b < a ? b : a);
        tc_store_f64(y->dtype, y->data, di, r);
    } else {
        int64_t a = tc_rt_get_i64(y, di), b = tc_rt_get_i64(u, ui);
        int64_t r = red == RED_ADD   ? (int64_t)((uint64_t)a + (uint64_t)b)
                    : red == RED_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                    : red == RED_MAX ? (b > a ? b : a)
                                     : (b < a ? b : a);
        tc_store_i64(y->dtype, y->data, di, r);
    }
}

/* Data and updates dtypes: any for plain assignment, numeric ones for reductions. */
static tconv_status scatter_inputs(tc_kernel_ctx *ctx, reduction *red, const tc_rt_tensor **x,
                                   const tc_rt_tensor **idx, const tc_rt_tensor **upd) {
    tconv_status st = read_reduction(ctx, red);
    uint32_t mask = *red == RED_NONE ? TC_DTYPES_ANY : INDEX_NUMERIC_DTYPES;
    if (st == TCONV_OK)
        st = require(ctx, 0, mask, x);
    if (st == TCONV_OK)
        st = require(ctx, 1, TC_DTYPES_INDEX, idx);
    if (st == TCONV_OK)
        st = require(ctx, 2, mask, upd);
    if (st == TCONV_OK && (*upd)->dtype != (*x)->dtype)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "updates and data differ in dtype");
    return st;
}

/* ================================================================ GatherElements,
 * ScatterElements */

/* For each element of `idx` (same rank as data, no longer than data off the axis): the offset
 * in data of the element it names along axis, into offsets. The offset of the element's position
 * off the axis follows the walk over idx (one addition a step). */
static tconv_status element_offsets(tc_kernel_ctx *ctx, const tc_rt_tensor *data,
                                    const tc_rt_tensor *idx, int axis, int64_t *offsets) {
    if (idx->rank != data->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "indices have rank %d, data rank %d",
                            idx->rank, data->rank);
    for (int d = 0; d < data->rank; d++) {
        if (d != axis && idx->dims[d] > data->dims[d])
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "indices dim %d (%lld) exceeds data's (%lld)", d,
                                (long long)idx->dims[d], (long long)data->dims[d]);
    }
    int64_t strides[TC_MAX_RANK], pos[TC_MAX_RANK] = {0}, base = 0, n = data->dims[axis];
    tc_shape_strides(data->rank, data->dims, strides);
    const int64_t *wide = idx->dtype == TCONV_DTYPE_INT64 ? idx->data : NULL;
    for (int64_t i = 0; i < idx->n_elements; i++) {
        int64_t k = wide ? wide[i] : tc_rt_get_i64(idx, i);
        if (k < -n || k >= n) /* its message */
            return tc_kernel_normalize_index(ctx, k, n, &k);
        offsets[i] = base + (k < 0 ? k + n : k) * strides[axis];
        for (int d = idx->rank - 1; d >= 0; d--) {
            int64_t step = d == axis ? 0 : strides[d];
            if (++pos[d] < idx->dims[d]) {
                base += step;
                break;
            }
            base -= (idx->dims[d] - 1) * step;
            pos[d] = 0;
        }
    }
    return TCONV_OK;
}

static tconv_status axis_attr(tc_kernel_ctx *ctx, int rank, int *axis) {
    int64_t raw;
    tconv_status st = tc_node_attr_int(ctx->node, "axis", 0, &raw, ctx->err);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", raw, rank, axis);
    return st;
}

tconv_status tc_run_gather_elements(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *idx;
    int axis;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st == TCONV_OK)
        st = require(ctx, 1, TC_DTYPES_INDEX, &idx);
    if (st == TCONV_OK)
        st = axis_attr(ctx, x->rank, &axis);
    if (st != TCONV_OK)
        return st;
    tc_rt_tensor off_mem;
    int64_t *off = NULL;
    if ((st = int64_scratch(ctx, idx->n_elements, "gather offsets", &off_mem, &off)) != TCONV_OK)
        return st;
    tc_rt_tensor *y;
    st = element_offsets(ctx, x, idx, axis, off);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, x->dtype, idx->rank, idx->dims, &y);
    if (st == TCONV_OK) {
        size_t esize = tc_rt_dtype_size(x->dtype);
        for (int64_t i = 0; i < y->n_elements; i++)
            copy_element(y->data, i, x->data, off[i], esize);
    }
    tc_kernel_scratch_release(ctx, &off_mem);
    return st;
}

tconv_status tc_run_scatter_elements(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *idx, *upd;
    reduction red;
    int axis;
    tconv_status st = scatter_inputs(ctx, &red, &x, &idx, &upd);
    if (st == TCONV_OK)
        st = axis_attr(ctx, x->rank, &axis);
    if (st == TCONV_OK && !tc_rt_same_shape(upd, idx))
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "updates and indices differ in shape");
    if (st != TCONV_OK)
        return st;
    tc_rt_tensor off_mem;
    int64_t *off = NULL;
    if ((st = int64_scratch(ctx, idx->n_elements, "scatter offsets", &off_mem, &off)) != TCONV_OK)
        return st;
    tc_rt_tensor *y;
    st = element_offsets(ctx, x, idx, axis, off);
    if (st == TCONV_OK)
        st = tc_kernel_copy_to_output(ctx, 0, x, x->rank, x->dims);
    if (st == TCONV_OK) {
        y = &ctx->outputs[0];
        size_t esize = tc_rt_dtype_size(x->dtype);
        if (red == RED_NONE && esize == 4) { /* (4-byte moves, not a call each) */
            for (int64_t i = 0; i < idx->n_elements; i++)
                memcpy((char *)y->data + 4 * off[i], (const char *)upd->data + 4 * i, 4);
        } else {
            for (int64_t i = 0; i < idx->n_elements; i++)
                reduce_into(red, y, off[i], upd, i, esize);
        }
    }
    tc_kernel_scratch_release(ctx, &off_mem);
    return st;
}

/* ================================================================ GatherND, ScatterND */

/* The index tuples of `idx` (last dim k) into data after `batch` batch dims: for tuple t, the
 * element offset of the slice it names within its batch's block, into offsets. */
static tconv_status nd_offsets(tc_kernel_ctx *ctx, const tc_rt_tensor *data,
                               const tc_rt_tensor *idx, int batch, int64_t *offsets) {
    int k = (int)idx->dims[idx->rank - 1];
    int64_t strides[TC_MAX_RANK];
    tc_shape_strides(data->rank, data->dims, strides);
    int64_t tuples = idx->n_elements / (k ? k : 1);
    if (k == 0)
        tuples = product(idx->dims, 0, idx->rank - 1);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        for (int j = 0; j < k; j++) {
            int64_t v = 0;
            tconv_status st = tc_kernel_normalize_index(ctx, tc_rt_get_i64(idx, t * k + j),
                                                        data->dims[batch + j], &v);
            if (st != TCONV_OK)
                return st;
            off += v * strides[batch + j];
        }
        offsets[t] = off;
    }
    return TCONV_OK;
}

static tconv_status nd_check(tc_kernel_ctx *ctx, const tc_rt_tensor *data, const tc_rt_tensor *idx,
                             int batch) {
    if (idx->rank < 1 || batch < 0 || batch >= idx->rank || batch >= data->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "indices rank %d, data rank %d, batch_dims %d do not fit", idx->rank,
                            data->rank, batch);
    int64_t k = idx->dims[idx->rank - 1];
    if (k > data->rank - batch)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "index tuples of %lld for %d non-batch data dims", (long long)k,
                            data->rank - batch);
    for (int i = 0; i < batch; i++) {
        if (idx->dims[i] != data->dims[i])
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "batch dim %d differs: indices %lld, data %lld", i,
                                (long long)idx->dims[i], (long long)data->dims[i]);
    }
    return TCONV_OK;
}

tconv_status tc_run_gather_nd(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *idx;
    int64_t batch_raw;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st == TCONV_OK)
        st = require(ctx, 1, TC_DTYPES_INDEX, &idx);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "batch_dims", 0, &batch_raw, ctx->err);
    if (st == TCONV_OK)
        st = nd_check(ctx, x, idx, (int)batch_raw);
    if (st != TCONV_OK)
        return st;
    int batch = (int)batch_raw, k = (int)idx->dims[idx->rank - 1];
    int64_t dims[TC_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < idx->rank - 1; i++)
        dims[rank++] = idx->dims[i];
    for (int i = batch + k; i < x->rank; i++)
        dims[rank++] = x->dims[i];
    int64_t tuples = product(idx->dims, 0, idx->rank - 1);
    tc_rt_tensor off_mem;
    int64_t *off = NULL;
    if ((st = int64_scratch(ctx, tuples, "gather offsets", &off_mem, &off)) != TCONV_OK)
        return st;
    tc_rt_tensor *y;
    st = nd_offsets(ctx, x, idx, batch, off);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, x->dtype, rank, dims, &y);
    if (st == TCONV_OK && y->n_elements > 0) {
        size_t esize = tc_rt_dtype_size(x->dtype);
        int64_t slice = product(x->dims, batch + k, x->rank);
        int64_t block = product(x->dims, batch, x->rank);
        int64_t per_batch = product(idx->dims, batch, idx->rank - 1);
        for (int64_t t = 0; t < tuples; t++) {
            int64_t b = per_batch ? t / per_batch : 0;
            memcpy((char *)y->data + (size_t)(t * slice) * esize,
                   (const char *)x->data + (size_t)(b * block + off[t]) * esize,
                   (size_t)slice * esize);
        }
    }
    tc_kernel_scratch_release(ctx, &off_mem);
    return st;
}

tconv_status tc_run_scatter_nd(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *idx, *upd;
    reduction red;
    tconv_status st = scatter_inputs(ctx, &red, &x, &idx, &upd);
    if (st == TCONV_OK)
        st = nd_check(ctx, x, idx, 0);
    if (st != TCONV_OK)
        return st;
    int k = (int)idx->dims[idx->rank - 1];
    int64_t tuples = product(idx->dims, 0, idx->rank - 1);
    int64_t slice = product(x->dims, k, x->rank);
    if (upd->n_elements != tuples * slice || upd->rank != idx->rank - 1 + x->rank - k)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "updates must have shape indices.shape[:-1] + data.shape[%d:]", k);
    tc_rt_tensor off_mem;
    int64_t *off = NULL;
    if ((st = int64_scratch(ctx, tuples, "scatter offsets", &off_mem, &off)) != TCONV_OK)
        return st;
    st = nd_offsets(ctx, x, idx, 0, off);
    if (st == TCONV_OK)
        st = tc_kernel_copy_to_output(ctx, 0, x, x->rank, x->dims);
    if (st == TCONV_OK) {
        tc_rt_tensor *y = &ctx->outputs[0];
        size_t esize = tc_rt_dtype_size(x->dtype);
        for (int64_t t = 0; t < tuples; t++) {
            for (int64_t e = 0; e < slice; e++)
                reduce_into(red, y, off[t] + e, upd, t * slice + e, esize);
        }
    }
    tc_kernel_scratch_release(ctx, &off_mem);
    return st;
}

/* ================================================================ CumSum, CumProd */

/* Running sums (CumSum) or products (CumProd) along the axis input: floats in double, rounded
 * as stored; integers wrap as two's complement. */
static tconv_status run_cumulative(tc_kernel_ctx *ctx, bool multiply) {
    const tc_rt_tensor *x;
    int64_t axis_raw = 0, exclusive = 0, reverse = 0;
    int axis;
    tconv_status st = require(ctx, 0, INDEX_NUMERIC_DTYPES, &x);
    if (st == TCONV_OK)
        st = read_int_scalar(ctx, 1, &axis_raw);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", axis_raw, x->rank, &axis);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "exclusive", 0, &exclusive, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "reverse", 0, &reverse, ctx->err);
    tc_rt_tensor *y;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (st != TCONV_OK)
        return st;
    int64_t n = x->dims[axis], inner = product(x->dims, axis + 1, x->rank);
    int64_t outer = product(x->dims, 0, axis);
    bool is_float = dtype_is_float(x->dtype);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            double facc = multiply ? 1.0 : 0.0;
            uint64_t iacc = multiply ? 1 : 0;
            for (int64_t s = 0; s < n; s++) {
                int64_t j = reverse ? n - 1 - s : s;
                int64_t e = (o * n + j) * inner + in;
                if (is_float) {
                    double v = tc_rt_get_f64(x, e);
                    double next = multiply ? facc * v : facc + v;
                    tc_store_f64(x->dtype, y->data, e, exclusive ? facc : next);
                    facc = next;
                } else {
                    uint64_t v = (uint64_t)tc_rt_get_i64(x, e);
                    uint64_t next = multiply ? iacc * v : iacc + v;
                    tc_store_i64(x->dtype, y->data, e, (int64_t)(exclusive ? iacc : next));
                    iacc = next;
                }
            }
        }
    }
    return TCONV_OK;
}

tconv_status tc_run_cumsum(tc_kernel_ctx *ctx) {
    return run_cumulative(ctx, false);
}

tconv_status tc_run_cumprod(tc_kernel_ctx *ctx) {
    return run_cumulative(ctx, true);
}

/* ================================================================ DepthToSpace, SpaceToDepth */

static tconv_status block_input(tc_kernel_ctx *ctx, const tc_rt_tensor **x, int64_t *bs) {
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, x);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "blocksize", 0, bs, ctx->err);
    if (st != TCONV_OK)
        return st;
    if ((*x)->rank != 4 || *bs < 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "needs a rank-4 input and blocksize >= 1 (rank %d, blocksize %lld)",
                            (*x)->rank, (long long)*bs);
    return TCONV_OK;
}

/* Copies x through a rank-6 view into a new rank-4 output. */
static tconv_status copy_view(tc_kernel_ctx *ctx, const tc_rt_tensor *x, const int64_t *vdims,
                              const int64_t *vstrides, const int64_t *out_dims) {
    tc_strided_view view;
    view.rank = 6;
    view.offset = 0;
    memcpy(view.dims, vdims, 6 * sizeof(int64_t));
    memcpy(view.strides, vstrides, 6 * sizeof(int64_t));
    tc_rt_tensor *y;
    tconv_status st = tc_kernel_alloc_output(ctx, 0, x->dtype, 4, out_dims, &y);
    if (st == TCONV_OK)
        parallel_strided_copy(ctx, &view, x, y);
    return st;
}

tconv_status tc_run_depth_to_space(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t bs;
    const char *mode = "DCR";
    tconv_status st = block_input(ctx, &x, &bs);
    if (st == TCONV_OK)
        st = tc_node_attr_string(ctx->node, "mode", "DCR", &mode, ctx->err);
    if (st != TCONV_OK)
        return st;
    bool crd = strcmp(mode, "CRD") == 0;
    if (!crd && strcmp(mode, "DCR") != 0)
        return tc_kernel_unsupported_attr(ctx, "mode", mode);
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    if (C % (bs * bs) != 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "channels %lld are not a multiple of blocksize^2 (%lld)", (long long)C,
                            (long long)(bs * bs));
    int64_t c = C / (bs * bs), sC = H * W;
    /* Output order (n, c, h, b1, w, b2); input channel (b1*bs + b2)*c + ch (DCR) or
     * ch*bs*bs + b1*bs + b2 (CRD). */
    int64_t vdims[6] = {N, c, H, bs, W, bs};
    int64_t vstrides[6] = {C * sC, crd ? bs * bs * sC : sC, W, crd ? bs * sC : bs * c * sC,
                           1,      crd ? sC : c * sC};
    int64_t out_dims[4] = {N, c, H * bs, W * bs};
    return copy_view(ctx, x, vdims, vstrides, out_dims);
}

tconv_status tc_run_space_to_depth(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t bs;
    tconv_status st = block_input(ctx, &x, &bs);
    if (st != TCONV_OK)
        return st;
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    if (H % bs != 0 || W % bs != 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "spatial dims %lldx%lld are not multiples of blocksize %lld",
                            (long long)H, (long long)W, (long long)bs);
    /* Output order (n, b1, b2, c, h', w'): input (n, c, h'*bs + b1, w'*bs + b2). */
    int64_t vdims[6] = {N, bs, bs, C, H / bs, W / bs};
    int64_t vstrides[6] = {C * H * W, W, 1, H * W, bs * W, bs};
    int64_t out_dims[4] = {N, C * bs * bs, H / bs, W / bs};
    return copy_view(ctx, x, vdims, vstrides, out_dims);
}

/* ================================================================ NonZero */

tconv_status tc_run_nonzero(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st != TCONV_OK)
        return st;
    int64_t count = 0;
    for (int64_t i = 0; i < x->n_elements; i++)
        count += tc_rt_get_f64(x, i) != 0.0;
    int64_t dims[2] = {x->rank, count}, pos[TC_MAX_RANK] = {0};
    tc_rt_tensor *y;
    if ((st = tc_kernel_alloc_output(ctx, 0, TCONV_DTYPE_INT64, 2, dims, &y)))
        return st;
    int64_t *out = y->data, k = 0;
    for (int64_t i = 0; i < x->n_elements; i++) {
        if (tc_rt_get_f64(x, i) != 0.0) {
            for (int d = 0; d < x->rank; d++)
                out[d * count + k] = pos[d];
            k++;
        }
        for (int d = x->rank - 1; d >= 0; d--) {
            if (++pos[d] < x->dims[d])
                break;
            pos[d] = 0;
        }
    }
    return TCONV_OK;
}

/* ================================================================ TopK */

typedef struct topk_job {
    const tc_rt_tensor *x;
    tc_rt_tensor *values, *indices;
    int64_t n, k, inner;
    bool largest;
    tc_ranked *items; /* n per worker */
    size_t esize;
} topk_job;

/* Whether a comes before b: tc_ranked_largest_first's (or smallest's) order. */
static inline bool ranked_before(const tc_ranked *a, const tc_ranked *b, bool largest) {
    if (a->value != b->value)
        return largest ? a->value > b->value : a->value < b->value;
    return a->index < b->index;
}

/* Restores the heap of items[0, k) below slot i: no item comes before its parent (the root is
 * the one that would come last). */
static void heap_sift_down(tc_ranked *h, int64_t k, int64_t i, bool largest) {
    for (;;) {
        int64_t last = i, l = 2 * i + 1, r = l + 1;
        if (l < k && ranked_before(&h[last], &h[l], largest))
            last = l;
        if (r < k && ranked_before(&h[last], &h[r], largest))
            last = r;
        if (last == i)
            return;
        tc_ranked t = h[i];
        h[i] = h[last];
        h[last] = t;
        i = last;
    }
}

/* items[0, k) = the k first of items[0, n) in order: a heap of the k first seen so far (most
 * items are turned away by one comparison with its root), then those k sorted. Without NaNs the
 * order is total (value, then index), so these are exactly what sorting all n gives. */
static void first_k(tc_ranked *items, int64_t n, int64_t k, bool largest) {
    for (int64_t i = k / 2 - 1; i >= 0; i--)
        heap_sift_down(items, k, i, largest);
    for (int64_t s = k; s < n; s++) {
        if (ranked_before(&items[s], &items[0], largest)) {
            items[0] = items[s];
            heap_sift_down(items, k, 0, largest);
        }
    }
    qsort(items, (size_t)k, sizeof *items,
          largest ? tc_ranked_largest_first : tc_ranked_smallest_first);
}

static void topk_slice(void *arg, int64_t task, int worker) {
    const topk_job *j = arg;
    int64_t o = task / j->inner, in = task % j->inner;
    tc_ranked *items = j->items + (size_t)worker * (size_t)j->n;
    bool nan = false;
    for (int64_t s = 0; s < j->n; s++) {
        items[s].value = tc_rt_get_f64(j->x, (o * j->n + s) * j->inner + in);
        items[s].index = s;
        nan = nan || isnan(items[s].value);
    }
    if (!nan && j->k < j->n) /* (NaNs keep the whole sort's order, whatever it makes of them) */
        first_k(items, j->n, j->k, j->largest);
    else
        qsort(items, (size_t)j->n, sizeof *items,
              j->largest ? tc_ranked_largest_first : tc_ranked_smallest_first);
    int64_t *idx = j->indices->data;
    for (int64_t s = 0; s < j->k; s++) {
        int64_t dst = (o * j->k + s) * j->inner + in;
        copy_element(j->values->data, dst, j->x->data, (o * j->n + items[s].index) * j->inner + in,
                     j->esize);
        idx[dst] = items[s].index;
    }
}

tconv_status tc_run_topk(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t k, axis_raw, largest;
    int axis;
    tconv_status st = require(ctx, 0, INDEX_NUMERIC_DTYPES, &x);
    if (st == TCONV_OK)
        st = ctx->opset < 10 ? tc_node_attr_int(ctx->node, "k", -1, &k, ctx->err)
                             : read_int_scalar(ctx, 1, &k);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", -1, &axis_raw, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "largest", 1, &largest, ctx->err);
    if (st == TCONV_OK)
        st = tc_kernel_normalize_axis(ctx, "axis", axis_raw, x->rank, &axis);
    if (st != TCONV_OK)
        return st;
    if (k < 0 || k > x->dims[axis])
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "k = %lld for an axis of size %lld",
                            (long long)k, (long long)x->dims[axis]);
    int64_t dims[TC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = k;
    topk_job job = {x,
                    NULL,
                    NULL,
                    x->dims[axis],
                    k,
                    product(x->dims, axis + 1, x->rank),
                    largest != 0,
                    NULL,
                    tc_rt_dtype_size(x->dtype)};
    if ((st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, dims, &job.values)) ||
        (st = tc_kernel_alloc_output(ctx, 1, TCONV_DTYPE_INT64, x->rank, dims, &job.indices)))
        return st;
    int64_t slices = product(x->dims, 0, axis) * job.inner;
    if (slices == 0 || k == 0)
        return TCONV_OK;
    int threads =
        tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, (double)x->n_elements * 20.0);
    int workers = tc_parallel_workers(threads, slices);
    /* the sort's scratch (16 bytes per element of a slice, per worker) is held within the
     * memory limit: a malloc of its own escaped it (882 MB under --max-memory-mb 150) */
    int64_t items;
    tc_rt_tensor scratch;
    if (!tc_mul_i64(workers, job.n, &items) || items > (int64_t)(SIZE_MAX / sizeof *job.items))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "TopK's sort scratch is too large");
    size_t bytes = (size_t)items * sizeof *job.items;
    if ((st = tc_kernel_scratch(ctx, bytes, &scratch)) != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "TopK's sort scratch: ");
    job.items = scratch.data;
    tc_parallel_for(ctx->pool, threads, slices, topk_slice, &job);
    tc_kernel_scratch_release(ctx, &scratch);
    return TCONV_OK;
}

/* ================================================================ OneHot */

tconv_status tc_run_one_hot(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *idx, *depth_t, *values;
    int64_t axis_raw;
    tconv_status st = require(ctx, 0, INDEX_NUMERIC_DTYPES, &idx);
    if (st == TCONV_OK)
        st = require(ctx, 1, INDEX_NUMERIC_DTYPES, &depth_t);
    if (st == TCONV_OK)
        st = require(ctx, 2, TC_DTYPES_ANY, &values);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "axis", -1, &axis_raw, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (depth_t->n_elements != 1 || values->n_elements != 2)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "depth must be one value and values two (have %lld and %lld)",
                            (long long)depth_t->n_elements, (long long)values->n_elements);
    int rank = idx->rank + 1, axis;
    if (rank > TC_MAX_RANK)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "result rank %d exceeds %d", rank,
                            TC_MAX_RANK);
    if ((st = tc_kernel_normalize_axis(ctx, "axis", axis_raw, rank, &axis)))
        return st;
    int64_t depth = (int64_t)tc_rt_get_f64(depth_t, 0);
    if (depth < 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "depth %lld is below 1", (long long)depth);
    int64_t dims[TC_MAX_RANK];
    for (int i = 0, j = 0; i < rank; i++)
        dims[i] = i == axis ? depth : idx->dims[j++];
    tc_rt_tensor *y;
    if ((st = tc_kernel_alloc_output(ctx, 0, values->dtype, rank, dims, &y)))
        return st;
    size_t esize = tc_rt_dtype_size(values->dtype);
    int64_t outer = product(idx->dims, 0, axis), inner = product(idx->dims, axis, idx->rank);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            int64_t k = (int64_t)tc_rt_get_f64(idx, o * inner + in);
            if (k < 0)
                k += depth;
            for (int64_t d = 0; d < depth; d++)
                copy_element(y->data, (o * depth + d) * inner + in, values->data, d == k ? 1 : 0,
                             esize);
        }
    }
    return TCONV_OK;
}

/* ================================================================ Trilu */

tconv_status tc_run_trilu(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t k = 0, upper;
    tconv_status st = require(ctx, 0, TC_DTYPES_ANY, &x);
    if (st == TCONV_OK && tc_kernel_input(ctx, 1))
        st = read_int_scalar(ctx, 1, &k);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "upper", 1, &upper, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (x->rank < 2)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "input rank %d is below 2", x->rank);
    if ((st = tc_kernel_copy_to_output(ctx, 0, x, x->rank, x->dims)))
        return st;
    tc_rt_tensor *y = &ctx->outputs[0];
    if (y->n_elements == 0) /* X [2^58, 4, 0] would loop 2^60 times over no data */
        return TCONV_OK;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t mats = product(x->dims, 0, x->rank - 2);
    /* Past the matrix's corners every k keeps or drops the same: clamped so that i + k cannot
     * overflow (k = INT64_MAX wrapped to a negative edge and dropped the wrong triangle). */
    if (k > cols)
        k = cols;
    if (k < -rows)
        k = -rows;
    size_t esize = tc_rt_dtype_size(x->dtype);
    char *data = y->data;
    /* Zero what the triangle drops: upper keeps j - i >= k, lower keeps j - i <= k. */
    for (int64_t m = 0; m < mats; m++) {
        for (int64_t i = 0; i < rows; i++) {
            char *row = data + (size_t)((m * rows + i) * cols) * esize;
            int64_t edge = i + k; /* first kept column (upper) or last kept (lower) */
            int64_t lo = upper ? 0 : (edge + 1 > 0 ? edge + 1 : 0);
            int64_t hi = upper ? (edge < cols ? edge : cols) : cols;
            if (lo > cols)
                lo = cols;
            if (hi > lo)
                memset(row + (size_t)lo * esize, 0, (size_t)(hi - lo) * esize);
        }
    }
    return TCONV_OK;
}

/* ================================================================ EyeLike */

/* Ones on diagonal k of a 2-D tensor shaped like the input, of `dtype` (default: the input's). */
tconv_status tc_run_eye_like(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    int64_t dtype, k;
    tconv_status st = require(ctx, 0, INDEX_NUMERIC_DTYPES | TC_DTYPE_BIT(TCONV_DTYPE_BOOL), &x);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "dtype", x->dtype, &dtype, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "k", 0, &k, ctx->err);
    if (st == TCONV_OK)
        st = tc_kernel_check_output_dtype(ctx, (int)dtype,
                                          INDEX_NUMERIC_DTYPES | TC_DTYPE_BIT(TCONV_DTYPE_BOOL));
    if (st == TCONV_OK && x->rank != 2)
        st =
            tc_error_set(ctx->err, TCONV_ERR_INVALID, "the input must be 2-D, is rank %d", x->rank);
    tc_rt_tensor *y;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, (tconv_dtype)dtype, 2, x->dims, &y);
    if (st != TCONV_OK)
        return st;
    for (int64_t r = 0; r < x->dims[0]; r++) {
        int64_t c = r + k;
        if (c >= 0 && c < x->dims[1])
            tc_store_i64(y->dtype, y->data, r * x->dims[1] + c, 1);
    }
    return TCONV_OK;
}
