/* Resize/Upsample interpolation. For each resized axis and output position, the ONNX reference
 * maps the output coordinate to an input coordinate x_ori, splits it into a base index and a
 * ratio in (0, 1], picks the n input positions nearest to x_ori (edge-padded) and weights them
 * with nearest/linear/cubic (optionally antialiased) coefficients. The n-D result is the
 * tensor product of the per-axis weights, so it is applied one axis at a time. */
#include "runtime/kernels/resize.h"

#include <math.h>
#include <string.h>

#include "runtime/kernels/kernel.h"

#define MAX_TAPS 4096

/* The taps of one axis live in one kernel scratch piece (`mem`): they scale with the output
 * length, so they count against the session's memory limit like every other buffer. */
typedef struct axis_taps {
    int64_t in, out;
    int64_t n_taps;
    int64_t *index; /* out x n_taps, clamped to [0, in) */
    double *weight; /* out x n_taps */
    bool *outside;  /* out: tf_crop_and_resize extrapolation */
    double *coeffs; /* n_taps: one output's coefficients while they are built */
    tc_rt_tensor mem;
} axis_taps;

/* ---------------------------------------------------------------- coordinates */

/* The "output_width" of the reference: scale * input length (in float32 when the scale came
 * from a float32 scales tensor, as numpy computes it). */
static double output_width(const tc_resize_params *p, int axis, int64_t in, bool f32) {
    double w = p->scales[axis] * (double)in;
    return f32 ? (double)(float)w : w;
}

static double crop_and_resize_coordinate(const tc_resize_params *p, int axis, int64_t x, int64_t in,
                                         double ow, bool *outside) {
    float r0 = (float)p->roi_start[axis], r1 = (float)p->roi_end[axis];
    float span = r1 - r0;
    double x_ori;
    if (ow == 1.0)
        x_ori = (double)(span * (float)(in - 1) / 2.0f);
    else
        x_ori = (double)x * (double)span * (double)(in - 1) / (ow - 1.0);
    x_ori += (double)(r0 * (float)(in - 1));
    /* a NaN roi (or one past float) is outside too: extrapolation_value */
    *outside = !(x_ori >= 0.0 && x_ori <= (double)(in - 1));
    return x_ori;
}

static double original_coordinate(const tc_resize_params *p, int axis, int64_t x, int64_t in,
                                  bool *outside) {
    double scale = p->scales[axis], xd = (double)x;
    double ow = output_width(p, axis, in, p->scales_f32);
    *outside = false;
    switch (p->ctm) {
    case TCONV_CTM_HALF_PIXEL:
        return (xd + 0.5) / scale - 0.5;
    case TCONV_CTM_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)p->out_dims[axis] / ow;
        double center = (double)in / 2.0;
        double offset = center * (1.0 - adjustment);
        return offset + (xd + 0.5) / scale - 0.5;
    }
    case TCONV_CTM_PYTORCH_HALF_PIXEL:
        return ow == 1.0 ? -0.5 : (xd + 0.5) / scale - 0.5;
    case TCONV_CTM_ALIGN_CORNERS:
        return ow == 1.0 ? 0.0 : xd * (double)(in - 1) / (ow - 1.0);
    case TCONV_CTM_ASYMMETRIC:
        return xd / scale;
    case TCONV_CTM_TF_HALF_PIXEL_FOR_NN:
        return (xd + 0.5) / scale;
    case TCONV_CTM_TF_CROP_AND_RESIZE:
        return crop_and_resize_coordinate(p, axis, x, in, ow, outside);
    }
    return xd;
}

/* ---------------------------------------------------------------- coefficients */

static double cubic_kernel(double x, double a) {
    x = fabs(x);
    if (x <= 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    if (x < 2.0)
        return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    return 0.0;
}

static void normalize(double *c, int64_t n) {
    double sum = 0.0;
    for (int64_t k = 0; k < n; k++)
        sum += c[k];
    for (int64_t k = 0; k < n; k++)
        c[k] /= sum;
}

static void nearest_coeffs(tc_nearest_mode mode, double ratio, double *c) {
    bool up;
    if (ratio == 1.0) {
        up = true; /* x_ori is an integer: base + 1 is x_ori itself */
    } else {
        switch (mode) {
        case TCONV_NEAREST_ROUND_PREFER_FLOOR:
            up = ratio > 0.5;
            break;
        case TCONV_NEAREST_ROUND_PREFER_CEIL:
            up = ratio >= 0.5;
            break;
        case TCONV_NEAREST_FLOOR:
            up = false;
            break;
        default:
            up = true;
            break;
        }
    }
    c[0] = up ? 0.0 : 1.0;
    c[1] = up ? 1.0 : 0.0;
}

static void cubic_coeffs(double r, double a, double *c) {
    double s = 1.0 - r;
    c[0] = ((a * (r + 1.0) - 5.0 * a) * (r + 1.0) + 8.0 * a) * (r + 1.0) - 4.0 * a;
    c[1] = ((a + 2.0) * r - (a + 3.0)) * r * r + 1.0;
    c[2] = ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0;
    c[3] = ((a * (s + 1.0) - 5.0 * a) * (s + 1.0) + 8.0 * a) * (s + 1.0) - 4.0 * a;
}

/* First tap offset (relative to the base index) of the antialias filters; the footprint is
 * 2 - 2 * start taps. */
static int64_t antialias_start(const tc_resize_params *p, double scale) {
    double s = scale < 1.0 ? scale : 1.0;
    double reach = p->mode == TCONV_RESIZE_CUBIC ? 2.0 : 1.0;
    return (int64_t)floor(-reach / s) + 1;
}

static int64_t taps_per_output(const tc_resize_params *p, double scale) {
    if (p->antialias && p->mode != TCONV_RESIZE_NEAREST)
        return 2 - 2 * antialias_start(p, scale);
    return p->mode == TCONV_RESIZE_CUBIC ? 4 : 2;
}

static void antialias_coeffs(const tc_resize_params *p, double scale, double ratio, double *c,
                             int64_t n) {
    double s = scale < 1.0 ? scale : 1.0;
    int64_t start = antialias_start(p, scale);
    for (int64_t k = 0; k < n; k++) {
        double arg = ((double)(start + k) - ratio) * s;
        if (p->mode == TCONV_RESIZE_CUBIC) {
            c[k] = cubic_kernel(arg, p->cubic_a);
        } else {
            double v = 1.0 - fabs(arg);
            c[k] = v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
        }
    }
    normalize(c, n);
}

static void coefficients(const tc_resize_params *p, double scale, double ratio, double *c,
                         int64_t n) {
    if (p->mode == TCONV_RESIZE_NEAREST)
        nearest_coeffs(p->nearest, ratio, c);
    else if (p->antialias)
        antialias_coeffs(p, scale, ratio, c, n);
    else if (p->mode == TCONV_RESIZE_CUBIC)
        cubic_coeffs(ratio, p->cubic_a, c);
    else {
        c[0] = 1.0 - ratio;
        c[1] = ratio;
    }
}

/* ---------------------------------------------------------------- taps */

/* The n positions nearest to base + ratio (smaller first on ties) within the edge-padded range
 * [-pad, in + pad): a window starting at base - n/2 + 1, shifted to stay in that range. */
static int64_t window_start(int64_t base, int64_t n, int64_t in) {
    int64_t pad = (n + 1) / 2;
    int64_t start = base - n / 2 + 1;
    if (start < -pad)
        start = -pad;
    if (start + n > in + pad)
        start = in + pad - n;
    return start;
}

static void fill_output_taps(const tc_resize_params *p, int axis, axis_taps *t, int64_t x,
                             double *c) {
    int64_t n = t->n_taps, in = t->in;
    bool outside;
    double x_ori = original_coordinate(p, axis, x, in, &outside);
    /* Past the edge-padded range every coordinate takes the same taps: clamped there, so that
     * NaN or a huge one (a NaN or 1e30 roi) never reaches the int64 conversion (UB). */
    double lo = -(double)n - 2.0, hi = (double)in + (double)n + 2.0;
    if (!(x_ori >= lo))
        x_ori = lo;
    if (x_ori > hi)
        x_ori = hi;
    double fl = floor(x_ori);
    double ratio = x_ori == fl ? 1.0 : x_ori - fl;
    int64_t base = (int64_t)(x_ori - ratio);
    coefficients(p, p->scales[axis], ratio, c, n);
    int64_t start = window_start(base, n, in);
    if (p->exclude_outside) {
        for (int64_t k = 0; k < n; k++) {
            if (start + k < 0 || start + k >= in)
                c[k] = 0.0;
        }
        normalize(c, n);
    }
    t->outside[x] = outside;
    for (int64_t k = 0; k < n; k++) {
        int64_t idx = start + k;
        t->index[x * n + k] = idx < 0 ? 0 : (idx >= in ? in - 1 : idx);
        t->weight[x * n + k] = c[k];
    }
}

static void taps_free(tc_kernel_ctx *ctx, axis_taps *t) {
    tc_kernel_scratch_release(ctx, &t->mem);
    memset(t, 0, sizeof *t);
}

/* Carves index, weight, coeffs and outside out of one scratch piece (8-byte parts first). */
static tconv_status taps_alloc(tc_kernel_ctx *ctx, axis_taps *t) {
    size_t count = (size_t)(t->out ? t->out : 1) * (size_t)t->n_taps;
    size_t out = (size_t)(t->out ? t->out : 1);
    size_t eights = 2 * count + (size_t)t->n_taps;
    if (count / (size_t)t->n_taps != out || eights > (SIZE_MAX - out) / 8)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "resize coefficients overflow");
    tconv_status st = tc_kernel_scratch(ctx, eights * 8 + out, &t->mem);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "resize coefficients: ");
    unsigned char *base = t->mem.data;
    t->index = (int64_t *)base;
    t->weight = (double *)(base + count * 8);
    t->coeffs = (double *)(base + 2 * count * 8);
    t->outside = (bool *)(base + eights * 8);
    return TCONV_OK;
}

static tconv_status taps_build(tc_kernel_ctx *ctx, const tc_resize_params *p, int axis, int64_t in,
                               axis_taps *t) {
    memset(t, 0, sizeof *t);
    t->in = in;
    t->out = p->out_dims[axis];
    double scale = p->scales[axis];
    if (!(scale > 0.0) || !isfinite(scale))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "scale %g of axis %d is not positive",
                            scale, axis);
    t->n_taps = taps_per_output(p, scale);
    if (t->n_taps > MAX_TAPS)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "antialias footprint of %lld taps on axis %d (scale %g) is too "
                            "large",
                            (long long)t->n_taps, axis, scale);
    tconv_status st = taps_alloc(ctx, t);
    if (st != TCONV_OK)
        return st;
    for (int64_t x = 0; x < t->out; x++)
        fill_output_taps(p, axis, t, x, t->coeffs);
    return TCONV_OK;
}

/* True when the taps reproduce the input (same length, every output takes its own index with
 * weight 1 and nothing else). */
static bool taps_identity(const axis_taps *t) {
    if (t->in != t->out)
        return false;
    for (int64_t x = 0; x < t->out; x++) {
        if (t->outside[x])
            return false;
        double own = 0.0;
        for (int64_t k = 0; k < t->n_taps; k++) {
            double w = t->weight[x * t->n_taps + k];
            if (t->index[x * t->n_taps + k] == x)
                own += w;
            else if (w != 0.0)
                return false;
        }
        if (own != 1.0)
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------- applying */

static void apply_axis(const double *src, double *dst, int64_t outer, int64_t inner,
                       const axis_taps *t, double extrapolation) {
    for (int64_t o = 0; o < outer; o++) {
        const double *s = src + o * t->in * inner;
        for (int64_t x = 0; x < t->out; x++) {
            double *d = dst + (o * t->out + x) * inner;
            if (t->outside[x]) {
                for (int64_t i = 0; i < inner; i++)
                    d[i] = extrapolation;
                continue;
            }
            for (int64_t i = 0; i < inner; i++)
                d[i] = 0.0;
            for (int64_t k = 0; k < t->n_taps; k++) {
                double w = t->weight[x * t->n_taps + k];
                if (w == 0.0)
                    continue;
                const double *row = s + t->index[x * t->n_taps + k] * inner;
                for (int64_t i = 0; i < inner; i++)
                    d[i] += w * row[i];
            }
        }
    }
}

/* Resizes axis `axis` of src (shape dims) into dst; dims[axis] becomes the output length.
 * Returns false in *resized when the axis is an identity (dst untouched). */
static tconv_status resize_axis(tc_kernel_ctx *ctx, const tc_resize_params *p, int axis, int rank,
                                int64_t *dims, const double *src, double *dst, bool *resized) {
    *resized = false;
    axis_taps t;
    tconv_status st = taps_build(ctx, p, axis, dims[axis], &t);
    if (st != TCONV_OK)
        return st;
    if (!taps_identity(&t)) {
        int64_t outer = 1, inner = 1;
        for (int i = 0; i < axis; i++)
            outer *= dims[i];
        for (int i = axis + 1; i < rank; i++)
            inner *= dims[i];
        apply_axis(src, dst, outer, inner, &t, p->extrapolation_value);
        dims[axis] = t.out;
        *resized = true;
    }
    taps_free(ctx, &t);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- the two last axes */

/* Most resizes (image upsampling) change only the two last axes of an N..HW tensor: then each
 * plane resizes alone, one output row at a time. The arithmetic is resize_axis's, in its order
 * (the row axis, then the column axis; in double, a sum from 0.0 over the nonzero weights; an
 * outside output takes the extrapolation value), so the results are the same bits; only the
 * whole-tensor double buffers and the per-output loop setup are gone. */
typedef struct plane_resize {
    const axis_taps *rows, *cols; /* NULL: that axis is an identity */
    bool cols_outside;            /* some output column takes the extrapolation value */
    int64_t in_h, in_w, out_h, out_w;
    double extrapolation;
    const float *x;
    float *y;
    double *line; /* per worker: in_w doubles */
    bool picks;   /* every resized axis is one-hot (taps_pick): resize_plane_picks */
} plane_resize;

/* line = output row r of the row axis (in_w values). */
static void resize_plane_row(const plane_resize *job, const float *x, int64_t r, double *line) {
    int64_t w = job->in_w;
    const axis_taps *t = job->rows;
    if (!t) {
        for (int64_t i = 0; i < w; i++)
            line[i] = x[r * w + i];
        return;
    }
    double fill = t->outside[r] ? job->extrapolation : 0.0;
    for (int64_t i = 0; i < w; i++)
        line[i] = fill;
    if (t->outside[r])
        return;
    for (int64_t k = 0; k < t->n_taps; k++) {
        double wt = t->weight[r * t->n_taps + k];
        if (wt == 0.0)
            continue;
        const float *src = x + t->index[r * t->n_taps + k] * w;
        for (int64_t i = 0; i < w; i++)
            line[i] += wt * (double)src[i];
    }
}

/* acc + w * v, where a zero weight adds nothing (apply_axis skips it: 0 x inf would be NaN).
 * Adding the zero instead is the same: acc starts at +0.0 and a sum with +0.0 never gives -0. */
static inline double add_tap(double acc, double w, double v) {
    return acc + (w != 0.0 ? w * v : 0.0);
}

/* y[c] for c in [0, n_out) from line along n_taps taps a column (index, weight: from the
 * column of y[0] on, none outside); inlined with n_taps = 2 constant (nearest and linear). */
static inline __attribute__((always_inline)) void
resize_cols_inside(const int64_t *index, const double *weight, int64_t n_taps, const double *line,
                   float *y, int64_t n_out) {
    for (int64_t c = 0; c < n_out; c++, index += n_taps, weight += n_taps) {
        double acc = 0.0;
        for (int64_t k = 0; k < n_taps; k++)
            acc = add_tap(acc, weight[k], line[index[k]]);
        y[c] = (float)acc;
    }
}

/* y[0, out_w) = line resized along the column axis. */
static void resize_plane_cols(const plane_resize *job, const double *line, float *y) {
    const axis_taps *t = job->cols;
    if (!t) {
        for (int64_t i = 0; i < job->out_w; i++)
            y[i] = (float)line[i];
    } else if (!job->cols_outside && t->n_taps == 2) {
        resize_cols_inside(t->index, t->weight, 2, line, y, job->out_w);
    } else if (!job->cols_outside) {
        resize_cols_inside(t->index, t->weight, t->n_taps, line, y, job->out_w);
    } else {
        int64_t n = t->n_taps;
        for (int64_t c = 0; c < job->out_w; c++) {
            if (t->outside[c])
                y[c] = (float)job->extrapolation;
            else
                resize_cols_inside(t->index + c * n, t->weight + c * n, n, line, y + c, 1);
        }
    }
}

/* Whether every output of the axis takes one input with weight 1 and nothing else (nearest;
 * linear on whole coordinates). */
static bool taps_one_hot(const axis_taps *t) {
    int64_t n = t->n_taps;
    for (int64_t x = 0; x < t->out; x++) {
        int64_t ones = 0;
        for (int64_t k = 0; k < n; k++) {
            double w = t->weight[x * n + k];
            ones += w == 1.0;
            if (w != 0.0 && w != 1.0)
                return false;
        }
        if (ones != 1 || t->outside[x])
            return false;
    }
    return true;
}

/* index[x] = the input of output x of a one-hot axis (the taps are this call's: index[x] is
 * written after every index[x' * n_taps + k] with x' <= x was read). */
static void taps_pick(axis_taps *t) {
    int64_t n = t->n_taps;
    for (int64_t x = 0; x < t->out; x++) {
        int64_t k = 0;
        while (t->weight[x * n + k] != 1.0)
            k++;
        t->index[x] = t->index[x * n + k];
    }
}

/* One plane of a one-hot resize: each output is its one input plus 0.0, which is what the sums
 * give (0.0 + 1.0 * v: -0 becomes +0, the rest stays; once or twice, the same), in float. */
static void resize_plane_picks(const plane_resize *job, const float *x, float *y) {
    for (int64_t r = 0; r < job->out_h; r++, y += job->out_w) {
        const float *src = x + (job->rows ? job->rows->index[r] : r) * job->in_w;
        if (job->cols) {
            const int64_t *pick = job->cols->index;
            for (int64_t c = 0; c < job->out_w; c++)
                y[c] = src[pick[c]] + 0.0f;
        } else {
            for (int64_t c = 0; c < job->out_w; c++)
                y[c] = src[c] + 0.0f;
        }
    }
}

static void resize_plane_task(void *vjob, int64_t plane, int worker) {
    const plane_resize *job = vjob;
    const float *x = job->x + plane * job->in_h * job->in_w;
    float *y = job->y + plane * job->out_h * job->out_w;
    double *line = job->line + (int64_t)worker * job->in_w;
    if (job->picks) {
        resize_plane_picks(job, x, y);
        return;
    }
    for (int64_t r = 0; r < job->out_h; r++) {
        resize_plane_row(job, x, r, line);
        resize_plane_cols(job, line, y + r * job->out_w);
    }
}

/* Whether every axis before the last two is an identity (taps_identity), so that
 * resize_planes applies; a failure is an error of taps_build. */
static tconv_status leading_axes_identity(tc_kernel_ctx *ctx, const tc_resize_params *p,
                                          const tc_rt_tensor *x, bool *identity) {
    *identity = x->rank >= 2;
    for (int axis = 0; *identity && axis < x->rank - 2; axis++) {
        axis_taps t;
        tconv_status st = taps_build(ctx, p, axis, x->dims[axis], &t);
        if (st != TCONV_OK)
            return st;
        *identity = taps_identity(&t);
        taps_free(ctx, &t);
    }
    return TCONV_OK;
}

/* The resize when only the two last axes change: one plane per task. */
static tconv_status resize_planes(tc_kernel_ctx *ctx, const tc_resize_params *p,
                                  const tc_rt_tensor *x, tc_rt_tensor *y) {
    int r = x->rank;
    plane_resize job = {.in_h = x->dims[r - 2],
                        .in_w = x->dims[r - 1],
                        .out_h = y->dims[r - 2],
                        .out_w = y->dims[r - 1],
                        .extrapolation = p->extrapolation_value,
                        .x = x->data,
                        .y = y->data};
    axis_taps rows, cols;
    tconv_status st = taps_build(ctx, p, r - 2, job.in_h, &rows);
    if (st != TCONV_OK)
        return st;
    if ((st = taps_build(ctx, p, r - 1, job.in_w, &cols)) != TCONV_OK) {
        taps_free(ctx, &rows);
        return st;
    }
    job.rows = taps_identity(&rows) ? NULL : &rows;
    job.cols = taps_identity(&cols) ? NULL : &cols;
    for (int64_t c = 0; c < cols.out; c++)
        job.cols_outside = job.cols_outside || cols.outside[c];
    /* (both identities: the plain path copies without the + 0.0) */
    job.picks = (job.rows || job.cols) && (!job.rows || taps_one_hot(&rows)) &&
                (!job.cols || taps_one_hot(&cols));
    if (job.picks && job.rows)
        taps_pick(&rows);
    if (job.picks && job.cols)
        taps_pick(&cols);
    int64_t planes = x->n_elements / (job.in_h * job.in_w);
    double taps = (double)(rows.n_taps + cols.n_taps);
    double work = (double)y->n_elements * taps * TC_PARALLEL_COST_STREAM;
    int workers =
        tc_parallel_workers(tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, work), planes);
    tc_rt_tensor lines;
    st = tc_kernel_scratch(ctx, (size_t)workers * (size_t)job.in_w * sizeof(double), &lines);
    if (st == TCONV_OK) {
        job.line = lines.data;
        tc_parallel_for(ctx->pool, workers, planes, resize_plane_task, &job);
        tc_kernel_scratch_release(ctx, &lines);
    } else {
        st = tc_error_prefix(ctx->err, st, "resize row buffers: ");
    }
    taps_free(ctx, &cols);
    taps_free(ctx, &rows);
    return st;
}

/* The most elements any intermediate holds: the input, then after each axis is resized. */
static bool largest_intermediate(const tc_resize_params *p, const tc_rt_tensor *x, int64_t *out) {
    int64_t dims[TC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    int64_t most = x->n_elements;
    for (int axis = 0; axis < x->rank; axis++) {
        dims[axis] = p->out_dims[axis];
        int64_t n;
        if (!tc_shape_elements(dims, x->rank, &n))
            return false;
        if (n > most)
            most = n;
    }
    *out = most;
    return (uint64_t)most <= SIZE_MAX / (2 * sizeof(double));
}

/* Two double buffers, taken from the kernel scratch (within the session's memory limit), that
 * the axes ping-pong between. */
static tconv_status resize_run(tc_kernel_ctx *ctx, const tc_resize_params *p, const tc_rt_tensor *x,
                               tc_rt_tensor *y) {
    int64_t most;
    if (!largest_intermediate(p, x, &most))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "resize intermediate is too large");
    size_t bytes = (size_t)(most ? most : 1) * sizeof(double);
    tc_rt_tensor a, b;
    tconv_status st = tc_kernel_scratch(ctx, bytes, &a);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "resize buffers: ");
    st = tc_kernel_scratch(ctx, bytes, &b);
    if (st != TCONV_OK) {
        tc_kernel_scratch_release(ctx, &a);
        return tc_error_prefix(ctx->err, st, "resize buffers: ");
    }
    double *buf = a.data, *other = b.data;
    const float *in = x->data;
    for (int64_t i = 0; i < x->n_elements; i++)
        buf[i] = in[i];
    int64_t dims[TC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    for (int axis = 0; axis < x->rank && st == TCONV_OK && y->n_elements > 0; axis++) {
        bool resized;
        st = resize_axis(ctx, p, axis, x->rank, dims, buf, other, &resized);
        if (resized) {
            double *t = buf;
            buf = other;
            other = t;
        }
    }
    if (st == TCONV_OK) {
        float *out = y->data;
        for (int64_t i = 0; i < y->n_elements; i++)
            out[i] = (float)buf[i];
    }
    tc_kernel_scratch_release(ctx, &b);
    tc_kernel_scratch_release(ctx, &a);
    return st;
}

static tconv_status check_tensors(tc_kernel_ctx *ctx, const tc_rt_tensor *x,
                                  const tc_rt_tensor *y) {
    if (x->dtype != TCONV_DTYPE_FLOAT || y->dtype != TCONV_DTYPE_FLOAT || y->rank != x->rank)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "tc_resize_float: float tensors only");
    if (x->n_elements == 0 && y->n_elements > 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "cannot resize an empty tensor");
    return TCONV_OK;
}

tconv_status tc_resize_float_by_axes(tc_kernel_ctx *ctx, const tc_resize_params *p,
                                     const tc_rt_tensor *x, tc_rt_tensor *y) {
    tconv_status st = check_tensors(ctx, x, y);
    return st == TCONV_OK ? resize_run(ctx, p, x, y) : st;
}

tconv_status tc_resize_float(tc_kernel_ctx *ctx, const tc_resize_params *p, const tc_rt_tensor *x,
                             tc_rt_tensor *y) {
    tconv_status st = check_tensors(ctx, x, y);
    if (st != TCONV_OK)
        return st;
    if (y->n_elements > 0) { /* (then x has elements too) */
        bool planes;
        st = leading_axes_identity(ctx, p, x, &planes);
        if (st != TCONV_OK || planes)
            return st != TCONV_OK ? st : resize_planes(ctx, p, x, y);
    }
    return resize_run(ctx, p, x, y);
}
