/* MaxPool, AveragePool, LpPool and the global pools (ONNX semantics), prepared kernels
 * (kernel.h): their attributes are read once, per spatial rank, when the session plans them.
 *
 * The window (output size and pads per axis) is ir/window_geometry.h's, shared with shape
 * inference.
 * AveragePool with count_include_pad divides by the taps inside the padded input [-pb, x+pe)
 * (taps in the extra ceil_mode region do not count); without it, by the taps inside the input.
 * MaxPool's Indices are flat indices into X: plane * (spatial size) + the position in the plane,
 * row-major (storage_order 0) or column-major (storage_order 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/window_geometry.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/compute/compute.h"

typedef struct pool_geom {
    int rank;
    int64_t in[TC_MAX_SPATIAL], out[TC_MAX_SPATIAL];
    int64_t kernel[TC_MAX_SPATIAL], strides[TC_MAX_SPATIAL];
    int64_t dilations[TC_MAX_SPATIAL];
    int64_t pad_begin[TC_MAX_SPATIAL], pad_end[TC_MAX_SPATIAL];
    int64_t in_size, out_size, kernel_size;
    int64_t max_taps; /* taps of one window inside the input: min(kernel_size, in_size) */
} pool_geom;

typedef struct pool_attrs {
    tc_window_attrs win;
    bool count_include_pad;
    int64_t storage_order;
} pool_attrs;

static int64_t max_i64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

static int64_t min_i64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* ---------------------------------------------------------------- attributes and geometry */

static tconv_status read_flag(const tconv_node *node, const char *name, bool *out, tc_error *err) {
    int64_t v;
    tconv_status st = tc_node_attr_int(node, name, 0, &v, err);
    if (st == TCONV_OK && v != 0 && v != 1)
        return tc_error_set(err, TCONV_ERR_INVALID, "attribute '%s' must be 0 or 1", name);
    *out = v != 0;
    return st;
}

/* tc_rank_attr_reader: the window, ceil_mode, count_include_pad, storage_order. */
static tconv_status read_pool_attrs(const tconv_node *node, int rank, void *out, tc_error *err) {
    pool_attrs *a = out;
    memset(a, 0, sizeof *a);
    tconv_status st;
    if ((st = tc_window_read_attrs(node, rank, 1, 0, &a->win, err)) ||
        (st = read_flag(node, "ceil_mode", &a->win.ceil_mode, err)) ||
        (st = read_flag(node, "count_include_pad", &a->count_include_pad, err)) ||
        (st = tc_node_attr_int(node, "storage_order", 0, &a->storage_order, err)))
        return st;
    if (!a->win.has_kernel_shape)
        return tc_error_set(err, TCONV_ERR_INVALID, "attribute 'kernel_shape' is required");
    if (a->storage_order != 0 && a->storage_order != 1)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "attribute 'storage_order' must be 0 or 1, is %lld",
                            (long long)a->storage_order);
    return TCONV_OK;
}

static tconv_status pool_axis(tc_kernel_ctx *ctx, const pool_attrs *a, int i, int64_t x,
                              pool_geom *g) {
    tc_window_axis axis;
    tconv_status st =
        tc_window_resolve_axis(&a->win, i, x, a->win.kernel_shape[i], &axis, ctx->err);
    if (st != TCONV_OK)
        return st;
    g->in[i] = x;
    g->out[i] = axis.out;
    g->kernel[i] = a->win.kernel_shape[i];
    g->strides[i] = a->win.strides[i];
    g->dilations[i] = a->win.dilations[i];
    g->pad_begin[i] = axis.pad_begin;
    g->pad_end[i] = axis.pad_end;
    return TCONV_OK;
}

static tconv_status pool_geometry(tc_kernel_ctx *ctx, const tc_rt_tensor *x, const pool_attrs *a,
                                  pool_geom *g) {
    g->rank = x->rank - 2;
    for (int i = 0; i < g->rank; i++) {
        if (x->dims[2 + i] < 1)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "spatial axis %d of X is empty", i);
        tconv_status st = pool_axis(ctx, a, i, x->dims[2 + i], g);
        if (st != TCONV_OK)
            return st;
    }
    if (!tc_shape_elements(g->in, g->rank, &g->in_size) ||
        !tc_shape_elements(g->out, g->rank, &g->out_size) ||
        !tc_shape_elements(g->kernel, g->rank, &g->kernel_size))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "pooling sizes overflow");
    /* distinct taps hit distinct input positions (dilation >= 1) */
    g->max_taps = g->kernel_size < g->in_size ? g->kernel_size : g->in_size;
    return TCONV_OK;
}

static tconv_status check_spatial_input(tc_kernel_ctx *ctx, const tc_rt_tensor **x,
                                        uint32_t dtypes) {
    tconv_status st;
    if ((st = tc_kernel_require_input(ctx, 0, x)) || (st = tc_kernel_check_dtype(ctx, 0, dtypes)))
        return st;
    if ((*x)->rank < 3 || (*x)->rank - 2 > TC_MAX_SPATIAL)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "X has rank %d; 3 to %d (N, C and 1 to %d spatial axes) are "
                            "supported",
                            (*x)->rank, TC_MAX_SPATIAL + 2, TC_MAX_SPATIAL);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- windows */

/* The window of one output position: per axis, the taps [lo, hi) that fall inside the input
 * and how many fall inside the padded input. */
typedef struct window {
    int64_t start[TC_MAX_SPATIAL]; /* input index of tap 0 */
    int64_t lo[TC_MAX_SPATIAL], hi[TC_MAX_SPATIAL];
    int64_t valid;  /* taps inside the input */
    int64_t padded; /* taps inside [-pb, x + pe) */
} window;

/* Taps t in [0, k) with lower <= start + t*d < upper. */
static int64_t tap_range(int64_t start, int64_t d, int64_t k, int64_t lower, int64_t upper,
                         int64_t *lo, int64_t *hi) {
    *lo = max_i64(0, tc_ceil_div(lower - start, d));
    *hi = min_i64(k, tc_floor_div(upper - 1 - start, d) + 1);
    return max_i64(0, *hi - *lo);
}

static void window_at(const pool_geom *g, const int64_t *o, window *w) {
    w->valid = w->padded = 1;
    for (int i = 0; i < g->rank; i++) {
        int64_t s = o[i] * g->strides[i] - g->pad_begin[i], lo, hi;
        w->start[i] = s;
        w->valid *= tap_range(s, g->dilations[i], g->kernel[i], 0, g->in[i], &w->lo[i], &w->hi[i]);
        w->padded *= tap_range(s, g->dilations[i], g->kernel[i], -g->pad_begin[i],
                               g->in[i] + g->pad_end[i], &lo, &hi);
    }
}

/* Row-major offsets (within a plane) of the window's taps inside the input; returns how many. */
static int64_t window_offsets(const pool_geom *g, const window *w, int64_t *offsets) {
    if (w->valid == 0)
        return 0;
    int64_t tap[TC_MAX_SPATIAL];
    for (int i = 0; i < g->rank; i++)
        tap[i] = w->lo[i];
    int64_t n = 0;
    for (;;) {
        int64_t off = 0;
        for (int i = 0; i < g->rank; i++)
            off = off * g->in[i] + w->start[i] + tap[i] * g->dilations[i];
        offsets[n++] = off;
        int i = g->rank - 1;
        for (; i >= 0; i--) {
            if (++tap[i] < w->hi[i])
                break;
            tap[i] = w->lo[i];
        }
        if (i < 0)
            return n;
    }
}

static void next_position(const pool_geom *g, int64_t *o) {
    for (int i = g->rank - 1; i >= 0; i--) {
        if (++o[i] < g->out[i])
            return;
        o[i] = 0;
    }
}

/* Column-major position in the plane of a row-major one. */
static int64_t column_major(const pool_geom *g, int64_t offset) {
    int64_t result = 0, scale = 1;
    int64_t coord[TC_MAX_SPATIAL];
    for (int i = g->rank - 1; i >= 0; i--) {
        coord[i] = offset % g->in[i];
        offset /= g->in[i];
    }
    for (int i = 0; i < g->rank; i++) {
        result += coord[i] * scale;
        scale *= g->in[i];
    }
    return result;
}

/* ---------------------------------------------------------------- plane jobs */

typedef enum pool_kind { POOL_MAX, POOL_AVERAGE, POOL_LP } pool_kind;

typedef struct pool_job {
    pool_geom g;
    pool_kind kind;
    bool count_include_pad;
    bool column_major;
    bool avx2; /* max_pool_plane_2d's AVX2 copy */
    tconv_dtype dtype;
    const void *x;
    void *y;
    int64_t *indices; /* MaxPool's optional second output */
    char *scratch;    /* per worker: the window offsets (max_taps), or max_pool_plane_2d's ring */
    size_t scratch_stride; /* bytes per worker */
    double p;              /* LpPool's norm */
} pool_job;

/* The tap (offset in offsets[]) holding the largest value: the first of equal ones; NaN is
 * skipped unless everything is NaN. */
#define DEFINE_ARGMAX(name, type, is_nan)                                                          \
    static int64_t name(const type *plane, const int64_t *offsets, int64_t n) {                    \
        int64_t best = 0;                                                                          \
        for (int64_t t = 1; t < n; t++) {                                                          \
            type v = plane[offsets[t]], b = plane[offsets[best]];                                  \
            if (v > b || (is_nan(b) && !is_nan(v)))                                                \
                best = t;                                                                          \
        }                                                                                          \
        return best;                                                                               \
    }
#define NEVER_NAN(v) ((void)(v), false)
DEFINE_ARGMAX(argmax_float, float, isnan)
DEFINE_ARGMAX(argmax_double, double, isnan)
DEFINE_ARGMAX(argmax_int8, int8_t, NEVER_NAN)
DEFINE_ARGMAX(argmax_uint8, uint8_t, NEVER_NAN)

/* Copies element `from` of src to element `to` of dst (same dtype). */
static void copy_element(tconv_dtype dtype, const void *src, int64_t from, void *dst, int64_t to) {
    size_t size = tc_rt_dtype_size(dtype);
    memcpy((char *)dst + (size_t)to * size, (const char *)src + (size_t)from * size, size);
}

static int64_t argmax(tconv_dtype dtype, const void *plane, const int64_t *offsets, int64_t n) {
    switch (dtype) {
    case TCONV_DTYPE_DOUBLE:
        return argmax_double(plane, offsets, n);
    case TCONV_DTYPE_INT8:
        return argmax_int8(plane, offsets, n);
    case TCONV_DTYPE_UINT8:
        return argmax_uint8(plane, offsets, n);
    default:
        return argmax_float(plane, offsets, n);
    }
}

/* An all-padding window (possible with dilation): the lowest value of the type, index -1. */
static void store_empty_max(tconv_dtype dtype, void *y, int64_t at) {
    tc_dtype_traits_of(dtype)->set_f64(y, at, -INFINITY); /* integers saturate to their lowest */
}

static void max_pool_plane(const pool_job *job, int64_t plane, int64_t *offsets) {
    const pool_geom *g = &job->g;
    size_t size = tc_rt_dtype_size(job->dtype);
    const char *x = (const char *)job->x + (size_t)(plane * g->in_size) * size;
    int64_t o[TC_MAX_SPATIAL] = {0};
    for (int64_t q = 0; q < g->out_size; q++, next_position(g, o)) {
        window w;
        window_at(g, o, &w);
        int64_t n = window_offsets(g, &w, offsets), at = plane * g->out_size + q;
        int64_t index = -1;
        if (n == 0) {
            store_empty_max(job->dtype, job->y, at);
        } else {
            int64_t off = offsets[argmax(job->dtype, x, offsets, n)];
            copy_element(job->dtype, x, off, job->y, at);
            index = plane * g->in_size + (job->column_major ? column_major(g, off) : off);
        }
        if (job->indices)
            job->indices[at] = index;
    }
}

/* The fast path of max_pool_plane for float 2-D windows without dilation or Indices. */
static bool max_pool_fast_2d(const pool_job *job) {
    const pool_geom *g = &job->g;
    return g->rank == 2 && job->dtype == TCONV_DTYPE_FLOAT && !job->indices &&
           g->dilations[0] == 1 && g->dilations[1] == 1;
}

/* argmax_float's rule on values: v replaces best when larger, or when best is NaN and v is not.
 *
 * Folding a sequence with it gives its first largest non-NaN value (first: of +0 and -0, or of
 * equal values, the earlier stays), or its first element when every element is NaN. That result
 * is the fold of the two halves' results (a NaN left half yields to a non-NaN right one; a
 * non-NaN left half yields only to a strictly larger right one), so the fold may be regrouped,
 * never reordered: a window is folded row by row (each row's taps in order, max_pool_row), then
 * the row results in row order (fold_rows), and gives the bits of argmax_float's
 * row-major scan (the NaN payload of an all-NaN window included). */
static inline float max_rule(float best, float v) {
    return (v > best || (best != best && v == v)) ? v : best;
}

/* The fold of row[lo, hi), -inf when empty (a window wholly in the padding). */
static float row_max(const float *row, int64_t lo, int64_t hi) {
    if (lo >= hi)
        return -INFINITY;
    float best = row[lo];
    for (int64_t w = lo + 1; w < hi; w++)
        best = max_rule(best, row[w]);
    return best;
}

/* The vector helpers below are always inlined into max_pool_plane_2d's two copies (baseline
 * and AVX2: there blends and three-operand compares). */
#define TC_POOL_INLINE static inline __attribute__((always_inline))

#if TC_HAVE_VECTOR_EXT
/* max_rule on four lanes: !(v <= best) is v > best or either NaN; v == v drops a NaN v. */
TC_POOL_INLINE tc_v4f max_rule4(tc_v4f best, tc_v4f v) {
    tc_v4i take = ~(v <= best) & (v == v);
    return (tc_v4f)(((tc_v4i)v & take) | ((tc_v4i)best & ~take));
}

/* Lanes i0..i3 of the eight lanes of a then b. */
#if defined(__clang__)
#define TC_SHUFFLE4(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#else
#define TC_SHUFFLE4(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (tc_v4i){i0, i1, i2, i3})
#endif

/* p[0], p[s], p[2s], p[3s], reading nothing past p[3s]. */
TC_POOL_INLINE tc_v4f load_strided4(const float *p, int64_t s) {
    if (s == 1)
        return tc_v4f_load(p);
    if (s == 2) { /* p[0..3] and p[3..6]: elements 0, 2 of the first, 1, 3 of the second */
        tc_v4f a = tc_v4f_load(p), b = tc_v4f_load(p + 3);
        return TC_SHUFFLE4(a, b, 0, 2, 5, 7);
    }
    return (tc_v4f){p[0], p[s], p[2 * s], p[3 * s]};
}
#endif

/* out[ow] for ow in [a, b), whose windows row[ow*s - pb, +k) lie inside the row: four outputs
 * at a time, tap by tap. Inlined with the common strides and kernel widths constant (plain or
 * shuffled loads, the taps unrolled). */
TC_POOL_INLINE void row_max_interior(const float *row, float *out, int64_t a, int64_t b, int64_t s,
                                     int64_t k, int64_t pb) {
    int64_t ow = a;
#if TC_HAVE_VECTOR_EXT
    /* the last block may overlap the one before it (it rewrites the same values) */
    for (int64_t next = a; b - a >= 4 && next < b; next += 4) {
        ow = min_i64(next, b - 4);
        const float *p = row + ow * s - pb;
        tc_v4f acc = load_strided4(p, s);
        for (int64_t t = 1; t < k; t++)
            acc = max_rule4(acc, load_strided4(p + t, s));
        tc_v4f_store(out + ow, acc);
        ow = b;
    }
#endif
    for (; ow < b; ow++)
        out[ow] = row_max(row, ow * s - pb, ow * s - pb + k);
}

/* What max_pool_row needs of the geometry along a row. */
typedef struct pool_row_plan {
    int64_t s, k, pb, in, out;
    int64_t a, b; /* the interior columns: windows wholly inside the row */
} pool_row_plan;

static pool_row_plan row_plan(const pool_geom *g) {
    pool_row_plan r = {.s = g->strides[1],
                       .k = g->kernel[1],
                       .pb = g->pad_begin[1],
                       .in = g->in[1],
                       .out = g->out[1]};
    r.a = min_i64(max_i64(tc_ceil_div(r.pb, r.s), 0), r.out);
    r.b = max_i64(r.a, min_i64(r.out, tc_floor_div(r.in - r.k + r.pb, r.s) + 1));
    return r;
}

/* One input row folded over each output column's window, clipped to the row: the border
 * columns one by one, the interior ones vectorized. */
TC_POOL_INLINE void max_pool_row(const pool_row_plan *r, const float *row, float *out) {
    for (int64_t ow = 0; ow < r->out; ow++) {
        if (ow == r->a)
            ow = r->b; /* the interior, done below */
        if (ow == r->out)
            break;
        int64_t w0 = ow * r->s - r->pb;
        out[ow] = row_max(row, max_i64(w0, 0), min_i64(w0 + r->k, r->in));
    }
    if (r->s == 2 && r->k == 2)
        row_max_interior(row, out, r->a, r->b, 2, 2, r->pb);
    else if (r->s == 2 && r->k == 3)
        row_max_interior(row, out, r->a, r->b, 2, 3, r->pb);
    else if (r->s == 1 && r->k == 3)
        row_max_interior(row, out, r->a, r->b, 1, 3, r->pb);
    else if (r->s == 1)
        row_max_interior(row, out, r->a, r->b, 1, r->k, r->pb);
    else if (r->s == 2)
        row_max_interior(row, out, r->a, r->b, 2, r->k, r->pb);
    else
        row_max_interior(row, out, r->a, r->b, r->s, r->k, r->pb);
}

/* y[i] = max_rule(u[i], v[i]) for i < n (y may be u). */
TC_POOL_INLINE void fold_rows(float *y, const float *u, const float *v, int64_t n) {
    int64_t i = 0;
#if TC_HAVE_VECTOR_EXT
    for (; i + 4 <= n; i += 4)
        tc_v4f_store(y + i, max_rule4(tc_v4f_load(u + i), tc_v4f_load(v + i)));
#endif
    for (; i < n; i++)
        y[i] = max_rule(u[i], v[i]);
}

/* 2x2 windows, stride 2, no pads (U-Net's downsampling): each output row from a row pair, four
 * outputs from eight columns of each row (the even and the odd ones folded, then the rows). */
static bool is_plain_2x2(const pool_geom *g) {
    for (int i = 0; i < 2; i++) {
        if (g->kernel[i] != 2 || g->strides[i] != 2 || g->pad_begin[i] != 0 ||
            2 * g->out[i] > g->in[i])
            return false;
    }
    return true;
}

TC_POOL_INLINE void max_pool_plane_2x2(const pool_geom *g, const float *x, float *y) {
    int64_t n = g->out[1];
    for (int64_t oh = 0; oh < g->out[0]; oh++, y += n) {
        const float *r0 = x + 2 * oh * g->in[1], *r1 = r0 + g->in[1];
        int64_t ow = 0;
#if TC_HAVE_VECTOR_EXT
        /* the last block may overlap the one before it (it rewrites the same values) */
        for (int64_t next = 0; n >= 4 && next < n; next += 4) {
            ow = min_i64(next, n - 4);
            tc_v4f a0 = tc_v4f_load(r0 + 2 * ow), a1 = tc_v4f_load(r0 + 2 * ow + 4);
            tc_v4f b0 = tc_v4f_load(r1 + 2 * ow), b1 = tc_v4f_load(r1 + 2 * ow + 4);
            tc_v4f top =
                max_rule4(TC_SHUFFLE4(a0, a1, 0, 2, 4, 6), TC_SHUFFLE4(a0, a1, 1, 3, 5, 7));
            tc_v4f bottom =
                max_rule4(TC_SHUFFLE4(b0, b1, 0, 2, 4, 6), TC_SHUFFLE4(b0, b1, 1, 3, 5, 7));
            tc_v4f_store(y + ow, max_rule4(top, bottom));
            ow = n;
        }
#endif
        for (; ow < n; ow++)
            y[ow] = max_rule(max_rule(r0[2 * ow], r0[2 * ow + 1]),
                             max_rule(r1[2 * ow], r1[2 * ow + 1]));
    }
}

/* Rows of the ring max_pool_plane_2d keeps: a window spans at most that many input rows. */
static int64_t max_pool_ring_rows(const pool_geom *g) {
    return min_i64(g->kernel[0], g->in[0]);
}

/* One plane, separably: each input row a window touches is folded over every output column's
 * window once (max_pool_row, into a ring of max_pool_ring_rows rows), then each output row is
 * the fold of its window's rows in order. `ring` holds max_pool_ring_rows x out[1] floats. */
TC_POOL_INLINE void max_pool_plane_2d(const pool_job *job, int64_t plane, float *ring) {
    const pool_geom *g = &job->g;
    const float *x = (const float *)job->x + plane * g->in_size;
    float *y = (float *)job->y + plane * g->out_size;
    if (is_plain_2x2(g)) {
        max_pool_plane_2x2(g, x, y);
        return;
    }
    pool_row_plan r = row_plan(g);
    int64_t n_ring = max_pool_ring_rows(g), width = g->out[1], done = 0;
    for (int64_t oh = 0; oh < g->out[0]; oh++, y += width) {
        int64_t h0 = oh * g->strides[0] - g->pad_begin[0];
        int64_t h_lo = max_i64(h0, 0), h_hi = min_i64(h0 + g->kernel[0], g->in[0]);
        if (h_lo >= h_hi) {
            for (int64_t ow = 0; ow < width; ow++)
                y[ow] = -INFINITY;
            continue;
        }
        for (int64_t h = max_i64(h_lo, done); h < h_hi; h++)
            max_pool_row(&r, x + h * g->in[1], ring + (h % n_ring) * width);
        done = max_i64(done, h_hi);
        const float *first = ring + (h_lo % n_ring) * width;
        if (h_hi - h_lo == 1)
            memcpy(y, first, (size_t)width * sizeof(float));
        for (int64_t h = h_lo + 1; h < h_hi; h++)
            fold_rows(y, h == h_lo + 1 ? first : y, ring + (h % n_ring) * width, width);
    }
}

static void max_pool_plane_2d_base(const pool_job *job, int64_t plane, float *ring) {
    max_pool_plane_2d(job, plane, ring);
}

TC_TARGET_AVX2 static void max_pool_plane_2d_avx2(const pool_job *job, int64_t plane, float *ring) {
    max_pool_plane_2d(job, plane, ring);
}

/* AveragePool (the sum over the divisor count_include_pad picks) and LpPool ((sum |x|^p)^(1/p)
 * over the valid taps: padding adds zeros). Sums in double for float and double data alike. */
static void sum_pool_plane(const pool_job *job, int64_t plane, int64_t *offsets) {
    const pool_geom *g = &job->g;
    bool f64 = job->dtype == TCONV_DTYPE_DOUBLE, lp = job->kind == POOL_LP;
    const float *x = (const float *)job->x + plane * g->in_size;
    const double *xd = (const double *)job->x + plane * g->in_size;
    int64_t o[TC_MAX_SPATIAL] = {0};
    for (int64_t q = 0; q < g->out_size; q++, next_position(g, o)) {
        window w;
        window_at(g, o, &w);
        int64_t n = window_offsets(g, &w, offsets);
        double sum = 0.0;
        for (int64_t t = 0; t < n; t++) {
            double v = f64 ? xd[offsets[t]] : (double)x[offsets[t]];
            sum += lp ? pow(fabs(v), job->p) : v;
        }
        int64_t divisor = job->count_include_pad ? w.padded : w.valid;
        double r = lp ? pow(sum, 1.0 / job->p) : (divisor > 0 ? sum / (double)divisor : 0.0);
        if (f64)
            ((double *)job->y)[plane * g->out_size + q] = r;
        else
            ((float *)job->y)[plane * g->out_size + q] = (float)r;
    }
}

static void pool_task(void *vjob, int64_t plane, int worker) {
    const pool_job *job = vjob;
    void *scratch = job->scratch + (size_t)worker * job->scratch_stride;
    int64_t *offsets = scratch;
    if (job->kind == POOL_MAX && max_pool_fast_2d(job) && job->avx2)
        max_pool_plane_2d_avx2(job, plane, scratch);
    else if (job->kind == POOL_MAX && max_pool_fast_2d(job))
        max_pool_plane_2d_base(job, plane, scratch);
    else if (job->kind == POOL_MAX)
        max_pool_plane(job, plane, offsets);
    else
        sum_pool_plane(job, plane, offsets);
}

/* ---------------------------------------------------------------- kernels */

/* What a pool's prepare keeps (kernel.h): its kind and input types, LpPool's and GlobalLpPool's
 * p, whether MaxPool's Indices output is wanted, the window's taps for the work, and the
 * attributes per spatial rank. */
typedef struct pool_params {
    pool_kind kind;
    uint32_t dtypes;
    int64_t p;
    bool indices_wanted; /* the node has no second output slot, or a named one */
    uint64_t taps;
    tc_rank_attrs attrs; /* pool_attrs by rank (the windowed pools only) */
} pool_params;

/* The run of MaxPool, AveragePool, LpPool: ctx->params is their pool_params; no IR. */
static tconv_status run_pool(tc_kernel_ctx *ctx) {
    const pool_params *params = ctx->params;
    const tc_rt_tensor *x;
    const void *read = NULL;
    pool_kind kind = params->kind;
    pool_job job = {.kind = kind, .p = (double)params->p};
    tconv_status st;
    if ((st = check_spatial_input(ctx, &x, params->dtypes)) ||
        (st = tc_rank_attrs_get(ctx, &params->attrs, x->rank - 2, &read)))
        return st;
    const pool_attrs *attrs = read;
    if ((st = pool_geometry(ctx, x, attrs, &job.g)))
        return st;
    int64_t dims[TC_MAX_RANK] = {x->dims[0], x->dims[1]};
    memcpy(dims + 2, job.g.out, (size_t)job.g.rank * sizeof(int64_t));
    tc_rt_tensor *y, *indices = NULL; /* the planes write every element */
    st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, x->rank, dims, &y);
    bool want_indices = kind == POOL_MAX && ctx->n_outputs > 1 && params->indices_wanted;
    if (st == TCONV_OK && want_indices)
        st = tc_kernel_alloc_output_uninit(ctx, 1, TCONV_DTYPE_INT64, x->rank, dims, &indices);
    if (st != TCONV_OK || y->n_elements == 0)
        return st;
    int64_t planes = x->dims[0] * x->dims[1];
    /* a window tap costs about a streamed element (parallel.h) */
    double work = (double)y->n_elements * (double)job.g.kernel_size * TC_PARALLEL_COST_STREAM;
    int workers =
        tc_parallel_workers(tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, work), planes);
    job.count_include_pad = attrs->count_include_pad;
    job.column_major = attrs->storage_order == 1;
    job.dtype = x->dtype;
    job.x = x->data;
    job.y = y->data;
    job.indices = indices ? indices->data : NULL;
    job.avx2 = tc_cpu_has_avx2();
    int64_t per_worker = job.g.max_taps * (int64_t)sizeof(int64_t), ring;
    if (kind == POOL_MAX && max_pool_fast_2d(&job) &&
        (!tc_mul_i64(max_pool_ring_rows(&job.g), job.g.out[1], &ring) ||
         !tc_mul_i64(ring, (int64_t)sizeof(float), &per_worker) || per_worker > INT64_MAX / 64))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "pooling window scratch overflows");
    job.scratch_stride = ((size_t)per_worker + 63) & ~(size_t)63;
    tc_rt_tensor scratch;
    st = tc_kernel_scratch(ctx, (size_t)workers * job.scratch_stride, &scratch);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "pooling window scratch: ");
    job.scratch = scratch.data;
    tc_parallel_for(ctx->pool, workers, planes, pool_task, &job);
    tc_kernel_scratch_release(ctx, &scratch);
    return TCONV_OK;
}

static bool pool_work(const void *params, const tc_work_shapes *w, uint64_t *out) {
    return tc_work_window_outputs(((const pool_params *)params)->taps, w, out);
}

/* The prepare of every pool: p (LpPool, GlobalLpPool; a norm for LpPool), the Indices output,
 * the taps and, for a windowed pool (`windowed`), its attributes per rank. */
static tconv_status prepare_pool(const tc_kernel_prepare_ctx *pc, pool_kind kind, uint32_t dtypes,
                                 bool windowed, tc_kernel_fn run, tc_kernel_prepared *out) {
    pool_params *params = tc_kernel_params_alloc(pc, sizeof *params);
    if (!params)
        return TCONV_ERR_NOMEM;
    const tconv_node *node = pc->node;
    params->kind = kind;
    params->dtypes = dtypes;
    params->p = 2;
    params->indices_wanted = node->n_outputs < 2 || node->outputs[1];
    *out = (tc_kernel_prepared){.run = run, .params = params};
    tconv_status st;
    if (kind == POOL_LP &&
        (st = tc_node_attr_int_or_default(node, "p", &params->p, pc->err)) != TCONV_OK)
        return st;
    if (!windowed)
        return TCONV_OK;
    if (params->p < 1)
        return tc_error_set(pc->err, TCONV_ERR_INVALID, "p = %lld is not a norm",
                            (long long)params->p);
    params->taps = tc_work_window_taps(node);
    out->work = pool_work;
    return tc_rank_attrs_read(pc, read_pool_attrs, sizeof(pool_attrs), 0, &params->attrs);
}

tconv_status tc_prepare_max_pool(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    return prepare_pool(pc, POOL_MAX,
                        TC_DTYPES_FLOAT | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE) |
                            TC_DTYPE_BIT(TCONV_DTYPE_INT8) | TC_DTYPE_BIT(TCONV_DTYPE_UINT8),
                        true, run_pool, out);
}

tconv_status tc_prepare_average_pool(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    return prepare_pool(pc, POOL_AVERAGE, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE, true, run_pool, out);
}

tconv_status tc_prepare_lp_pool(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    return prepare_pool(pc, POOL_LP, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE, true, run_pool, out);
}

/* The global pools' output shape [N, C, 1, ...] into dims; returns the elements of a plane. */
static int64_t global_output_dims(const tc_rt_tensor *x, int64_t *dims) {
    int64_t spatial = 1;
    for (int i = 0; i < x->rank; i++) {
        dims[i] = i < 2 ? x->dims[i] : 1;
        if (i >= 2)
            spatial *= x->dims[i];
    }
    return spatial;
}

/* GlobalMaxPool and GlobalLpPool: one value per (n, c) plane, in double; ctx->params is their
 * pool_params. */
static tconv_status run_global(tc_kernel_ctx *ctx) {
    const pool_params *params = ctx->params;
    pool_kind kind = params->kind;
    const tc_rt_tensor *x;
    int64_t p = params->p;
    tconv_status st;
    if ((st = check_spatial_input(ctx, &x, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE)))
        return st;
    int64_t dims[TC_MAX_RANK], spatial = global_output_dims(x, dims);
    tc_rt_tensor *y;
    if ((st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, dims, &y)) != TCONV_OK)
        return st;
    for (int64_t q = 0; q < y->n_elements; q++) {
        double acc = kind == POOL_MAX ? -INFINITY : 0.0;
        bool all_nan = kind == POOL_MAX && spatial > 0;
        for (int64_t i = 0; i < spatial; i++) {
            double v = tc_rt_get_f64(x, q * spatial + i);
            if (kind == POOL_MAX) {
                all_nan = all_nan && isnan(v);
                acc = v > acc ? v : acc;
            } else {
                acc += pow(fabs(v), (double)p);
            }
        }
        double r = kind == POOL_MAX ? (all_nan ? NAN : acc) : pow(acc, 1.0 / (double)p);
        tc_store_f64(y->dtype, y->data, q, r);
    }
    return TCONV_OK;
}

tconv_status tc_prepare_global_max_pool(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    return prepare_pool(pc, POOL_MAX, 0, false, run_global, out);
}

tconv_status tc_prepare_global_lp_pool(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    return prepare_pool(pc, POOL_LP, 0, false, run_global, out);
}

/* GlobalAveragePool has no attributes: nothing to prepare. */
static tconv_status run_global_average_pool(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x;
    tconv_status st;
    if ((st = check_spatial_input(ctx, &x, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE)))
        return st;
    int64_t dims[TC_MAX_RANK], spatial = global_output_dims(x, dims);
    tc_rt_tensor *y;
    st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, dims, &y);
    if (st != TCONV_OK)
        return st;
    bool f64 = x->dtype == TCONV_DTYPE_DOUBLE;
    const float *src = x->data;
    const double *src64 = x->data;
    for (int64_t p = 0; p < y->n_elements; p++) {
        double sum = 0.0;
        if (f64) {
            for (int64_t i = 0; i < spatial; i++)
                sum += src64[p * spatial + i];
        } else {
            for (int64_t i = 0; i < spatial; i++)
                sum += src[p * spatial + i];
        }
        double mean = spatial > 0 ? sum / (double)spatial : NAN;
        if (f64)
            ((double *)y->data)[p] = mean;
        else
            ((float *)y->data)[p] = (float)mean;
    }
    return TCONV_OK;
}

/* MaxUnpool, as ONNX's reference: X's values scattered where I (MaxPool's flat indices) says
 * into zeros of the inferred shape, (in - 1) * stride + kernel - pads per spatial axis; with
 * output_shape, that block sits at the start of a zero tensor of that shape (which must hold
 * it). An index outside the inferred shape is an error. */
static tconv_status unpool_inferred_dims(tc_kernel_ctx *ctx, const tc_rt_tensor *x, int64_t *dims) {
    int n = x->rank - 2;
    bool has_k = false, has_s = false, has_p = false;
    const int64_t *k = NULL, *s = NULL, *p = NULL;
    size_t nk = 0, ns = 0, np = 0;
    tconv_status st = tc_node_attr_ints(ctx->node, "kernel_shape", &has_k, &k, &nk, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_ints(ctx->node, "strides", &has_s, &s, &ns, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_ints(ctx->node, "pads", &has_p, &p, &np, ctx->err);
    if (st == TCONV_OK &&
        (!has_k || (int)nk != n || (has_s && (int)ns != n) || (has_p && (int)np != 2 * n)))
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID,
                          "kernel_shape, strides and pads do not fit %d spatial axes", n);
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int i = 0; st == TCONV_OK && i < n; i++) {
        dims[2 + i] =
            (x->dims[2 + i] - 1) * (has_s ? s[i] : 1) + k[i] - (has_p ? p[i] + p[n + i] : 0);
        if (dims[2 + i] < 0)
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "the output would be empty");
    }
    return st;
}

tconv_status tc_run_max_unpool(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *idx;
    tconv_status st = check_spatial_input(ctx, &x, TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 1, &idx);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 1, TC_DTYPE_BIT(TCONV_DTYPE_INT64));
    if (st == TCONV_OK && idx->n_elements != x->n_elements)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "I has %lld elements, X %lld",
                          (long long)idx->n_elements, (long long)x->n_elements);
    int64_t inferred[TC_MAX_RANK], dims[TC_MAX_RANK];
    if (st == TCONV_OK)
        st = unpool_inferred_dims(ctx, x, inferred);
    if (st != TCONV_OK)
        return st;
    memcpy(dims, inferred, sizeof dims);
    if (tc_kernel_input(ctx, 2)) {
        size_t count = 0;
        st = tc_kernel_read_ints(ctx, 2, dims, TC_MAX_RANK, &count);
        if (st == TCONV_OK && (int)count != x->rank)
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "output_shape has %zu dims, X %d", count,
                              x->rank);
        for (int i = 0; st == TCONV_OK && i < x->rank; i++) {
            if (dims[i] < inferred[i])
                st = tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                  "output_shape dim %d (%lld) is below the unpooled %lld", i,
                                  (long long)dims[i], (long long)inferred[i]);
        }
    }
    tc_rt_tensor *y;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, x->dtype, x->rank, dims, &y);
    if (st != TCONV_OK)
        return st;
    int64_t n_inferred = 1;
    for (int i = 0; i < x->rank; i++)
        n_inferred *= inferred[i];
    const int64_t *where = idx->data;
    for (int64_t e = 0; e < x->n_elements; e++) {
        int64_t q = where[e], at = 0, scale = 1;
        if (q < 0 || q >= n_inferred)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "index %lld is outside the unpooled %lld elements", (long long)q,
                                (long long)n_inferred);
        for (int i = x->rank - 1; i >= 0; i--) { /* inferred position -> output position */
            at += (q % inferred[i]) * scale;
            q /= inferred[i];
            scale *= dims[i];
        }
        copy_element(x->dtype, x->data, e, y->data, at);
    }
    return TCONV_OK;
}

tconv_status tc_prepare_global_average_pool(const tc_kernel_prepare_ctx *pc,
                                            tc_kernel_prepared *out) {
    (void)pc;
    *out = (tc_kernel_prepared){.run = run_global_average_pool};
    return TCONV_OK;
}
