/* Kernels of the detection ops: NonMaxSuppression, RoiAlign, GridSample, as ONNX's reference
 * implementation (onnx/reference/ops) and its node tests define them; docs/semantics.md says
 * where onnxruntime, torchvision and that reference differ and what tconv does with hostile
 * values (NaN scores, boxes and grids, rois far outside the image, huge counts).
 *
 * Work that depends on the data rather than the shapes (NonMaxSuppression's IoU comparisons,
 * RoiAlign's samples when sampling_ratio is 0) is charged to the session as it is found, before
 * it is done, so a work limit refuses it instead of running it. */
#include "runtime/kernels/kernel_util.h"
#include "runtime/budget/budget.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DETECT_FLOATS (TC_DTYPES_FLOAT | TC_DTYPES_DOUBLE)

/* Element i of a float or double tensor. */
static double get_real(const tc_rt_tensor *t, int64_t i) {
    return t->dtype == TCONV_DTYPE_DOUBLE ? ((const double *)t->data)[i]
                                          : (double)((const float *)t->data)[i];
}

static void set_real(tc_rt_tensor *t, int64_t i, double v) {
    if (t->dtype == TCONV_DTYPE_DOUBLE)
        ((double *)t->data)[i] = v;
    else
        ((float *)t->data)[i] = (float)v;
}

/* ================================================================ NonMaxSuppression */

/* Comparisons charged to the session at a time (a limit is then passed by at most this much
 * before it refuses). */
#define NMS_CHARGE_CHUNK ((uint64_t)1 << 16)

/* One box as [x_min, y_min, x_max, y_max] in float, as onnxruntime and the reference compute:
 * corners [y1, x1, y2, x2] in either order (center_point_box 0) or [x_c, y_c, w, h] (1). */
typedef struct nms_box {
    float x0, y0, x1, y1;
    float area; /* (x1 - x0) * (y1 - y0), once per box rather than per comparison */
} nms_box;

static nms_box nms_box_at(const float *b, int64_t center_point_box) {
    nms_box r;
    if (center_point_box) {
        float hw = b[2] / 2, hh = b[3] / 2;
        r.x0 = b[0] - hw;
        r.x1 = b[0] + hw;
        r.y0 = b[1] - hh;
        r.y1 = b[1] + hh;
    } else {
        r.x0 = fminf(b[1], b[3]);
        r.x1 = fmaxf(b[1], b[3]);
        r.y0 = fminf(b[0], b[2]);
        r.y1 = fmaxf(b[0], b[2]);
    }
    r.area = (r.x1 - r.x0) * (r.y1 - r.y0);
    return r;
}

/* The larger / smaller of two floats as a compare and select (fmaxf and fminf are library calls
 * where NaN rules apply, and this is the innermost loop): a NaN in b gives NaN, which the
 * comparisons below treat as no overlap. */
static inline float nms_max(float a, float b) {
    return a > b ? a : b;
}

static inline float nms_min(float a, float b) {
    return a < b ? a : b;
}

/* Whether b suppresses a: IoU strictly above the threshold. Boxes that do not overlap, or of
 * zero (or NaN) area, never suppress. */
static inline bool nms_suppresses(const nms_box *a, const nms_box *b, float iou_threshold) {
    float ix0 = nms_max(a->x0, b->x0), ix1 = nms_min(a->x1, b->x1);
    if (!(ix1 > ix0))
        return false;
    float iy0 = nms_max(a->y0, b->y0), iy1 = nms_min(a->y1, b->y1);
    if (!(iy1 > iy0))
        return false;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    float uni = a->area + b->area - inter;
    if (!(inter > 0) || !(a->area > 0) || !(b->area > 0) || !(uni > 0))
        return false;
    return inter / uni > iou_threshold;
}

/* An optional scalar input: *present false when omitted or empty (ONNX treats both alike). */
static tconv_status nms_optional_scalar(tc_kernel_ctx *ctx, size_t index, bool integer,
                                        double *value, bool *present) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, index);
    *present = t && t->n_elements > 0;
    if (!*present)
        return TCONV_OK;
    tconv_status st = tc_kernel_check_dtype(
        ctx, index, integer ? TC_DTYPE_BIT(TCONV_DTYPE_INT64) : TC_DTYPES_FLOAT);
    if (st != TCONV_OK)
        return st;
    if (t->n_elements != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "input %zu ('%s') must hold one value, not %lld", index,
                            tc_kernel_input_name(ctx, index), (long long)t->n_elements);
    *value = integer ? (double)((const int64_t *)t->data)[0] : (double)((const float *)t->data)[0];
    return TCONV_OK;
}

typedef struct nms_params {
    int64_t batches, classes, boxes, max_per_class, center_point_box;
    float iou_threshold, score_threshold;
    bool has_score_threshold;
} nms_params;

static tconv_status nms_read_params(tc_kernel_ctx *ctx, const tc_rt_tensor *boxes,
                                    const tc_rt_tensor *scores, nms_params *p) {
    if (boxes->rank != 3 || boxes->dims[2] != 4)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "boxes must be [num_batches, spatial_dimension, 4], not %d-D",
                            boxes->rank);
    if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "scores must be [num_batches, num_classes, spatial_dimension] = "
                            "[%lld, C, %lld]",
                            (long long)boxes->dims[0], (long long)boxes->dims[1]);
    p->batches = boxes->dims[0];
    p->boxes = boxes->dims[1];
    p->classes = scores->dims[1];
    tconv_status st =
        tc_node_attr_int(ctx->node, "center_point_box", 0, &p->center_point_box, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (p->center_point_box != 0 && p->center_point_box != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "center_point_box must be 0 or 1, not %lld",
                            (long long)p->center_point_box);
    double max_out = 0, iou = 0, score = 0;
    bool has_max, has_iou;
    if ((st = nms_optional_scalar(ctx, 2, true, &max_out, &has_max)) ||
        (st = nms_optional_scalar(ctx, 3, false, &iou, &has_iou)) ||
        (st = nms_optional_scalar(ctx, 4, false, &score, &p->has_score_threshold)))
        return st;
    /* Absent or negative: no box is kept (the reference's max(value, 0)); past the box count
     * (exporters write INT64_MAX): every box may be. Read as int64 again: the double above
     * only said it is present. */
    int64_t max_value = has_max ? ((const int64_t *)tc_kernel_input(ctx, 2)->data)[0] : 0;
    p->max_per_class = max_value < 0 ? 0 : max_value > p->boxes ? p->boxes : max_value;
    p->iou_threshold = (float)iou;
    p->score_threshold = (float)score;
    return TCONV_OK;
}

/* Selects the boxes of one batch and class into kept[] (box indices, in selection order);
 * returns how many. */
static tconv_status nms_one_class(tc_kernel_ctx *ctx, const nms_params *p, const float *boxes,
                                  const float *scores, tc_ranked *cand, nms_box *kept_boxes,
                                  int64_t *kept, int64_t *n_kept, uint64_t *pending) {
    int64_t n = 0;
    for (int64_t i = 0; i < p->boxes; i++) {
        float s = scores[i];
        if (isnan(s) || (p->has_score_threshold && !(s > p->score_threshold)))
            continue; /* NaN scores are never selected (see docs/semantics.md) */
        cand[n].value = s;
        cand[n++].index = i;
    }
    *n_kept = 0;
    if (n == 0 || p->max_per_class == 0)
        return TCONV_OK;
    qsort(cand, (size_t)n, sizeof *cand, tc_ranked_largest_first); /* ONNX's order */
    for (int64_t c = 0; c < n && *n_kept < p->max_per_class; c++) {
        nms_box box = nms_box_at(boxes + cand[c].index * 4, p->center_point_box);
        *pending += (uint64_t)*n_kept + 1;
        if (*pending >= NMS_CHARGE_CHUNK) {
            tconv_status st = tc_budget_charge_work(ctx->budget, *pending, ctx->err);
            *pending = 0;
            if (st != TCONV_OK)
                return st;
        }
        bool keep = true;
        for (int64_t k = 0; k < *n_kept && keep; k++)
            keep = !nms_suppresses(&box, &kept_boxes[k], p->iou_threshold);
        if (keep) {
            kept_boxes[*n_kept] = box;
            kept[(*n_kept)++] = cand[c].index;
        }
    }
    return TCONV_OK;
}

tconv_status tc_run_non_max_suppression(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *boxes, *scores;
    tconv_status st = tc_kernel_require_typed(ctx, 0, TC_DTYPES_FLOAT, &boxes);
    if (st == TCONV_OK)
        st = tc_kernel_require_typed(ctx, 1, TC_DTYPES_FLOAT, &scores);
    nms_params p;
    if (st != TCONV_OK || (st = nms_read_params(ctx, boxes, scores, &p)))
        return st;
    /* Scratch: the candidates and kept boxes of one class, and every kept index of every class
     * (at most max_per_class each): all bounded by the inputs' sizes. */
    int64_t per_class = p.max_per_class, total = p.batches * p.classes * per_class;
    size_t cand_bytes = (size_t)p.boxes * sizeof(tc_ranked);
    size_t box_bytes = (size_t)per_class * sizeof(nms_box);
    size_t kept_bytes =
        (size_t)total * sizeof(int64_t) + (size_t)p.batches * (size_t)p.classes * sizeof(int64_t);
    tc_rt_tensor buf;
    if ((st = tc_kernel_scratch(ctx, cand_bytes + box_bytes + kept_bytes + 64, &buf)))
        return st;
    /* 8-byte members first: nms_box's size is not a multiple of 8 */
    char *base = buf.data;
    int64_t *counts = (int64_t *)(void *)base;
    int64_t *kept = counts + p.batches * p.classes;
    tc_ranked *cand = (tc_ranked *)(void *)(base + kept_bytes);
    nms_box *kept_boxes = (nms_box *)(void *)(base + kept_bytes + cand_bytes);
    uint64_t pending = 0;
    int64_t selected = 0;
    for (int64_t b = 0; b < p.batches && st == TCONV_OK; b++)
        for (int64_t c = 0; c < p.classes && st == TCONV_OK; c++) {
            int64_t bc = b * p.classes + c;
            st = nms_one_class(ctx, &p, (const float *)boxes->data + b * p.boxes * 4,
                               (const float *)scores->data + bc * p.boxes, cand, kept_boxes,
                               kept + bc * per_class, &counts[bc], &pending);
            selected += counts[bc];
        }
    if (st == TCONV_OK && pending)
        st = tc_budget_charge_work(ctx->budget, pending, ctx->err);
    tc_rt_tensor *y = NULL;
    int64_t dims[2] = {selected, 3};
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output_uninit(ctx, 0, TCONV_DTYPE_INT64, 2, dims, &y);
    if (st == TCONV_OK) {
        int64_t *out = y->data;
        for (int64_t bc = 0; bc < p.batches * p.classes; bc++)
            for (int64_t k = 0; k < counts[bc]; k++) {
                *out++ = bc / p.classes;
                *out++ = bc % p.classes;
                *out++ = kept[bc * per_class + k];
            }
    }
    tc_kernel_scratch_release(ctx, &buf);
    return st;
}

/* ================================================================ RoiAlign */

typedef struct roi_params {
    int64_t out_h, out_w, sampling_ratio;
    double spatial_scale, offset; /* offset 0.5: half_pixel */
    bool max_mode;
} roi_params;

static tconv_status roi_read_params(tc_kernel_ctx *ctx, roi_params *p) {
    const tconv_node *node = ctx->node;
    const char *mode, *transform = "output_half_pixel";
    float scale;
    tconv_status st = tc_node_attr_string(node, "mode", "avg", &mode, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "output_height", 1, &p->out_h, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "output_width", 1, &p->out_w, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "sampling_ratio", 0, &p->sampling_ratio, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float(node, "spatial_scale", 1.0f, &scale, ctx->err);
    /* RoiAlign-10 has no coordinate_transformation_mode and behaves as output_half_pixel;
     * RoiAlign-16 added it with half_pixel the default. */
    if (st == TCONV_OK && ctx->opset >= 16)
        st = tc_node_attr_string(node, "coordinate_transformation_mode", "half_pixel", &transform,
                                 ctx->err);
    if (st != TCONV_OK)
        return st;
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return tc_kernel_unsupported_attr(ctx, "mode", mode);
    if (strcmp(transform, "half_pixel") && strcmp(transform, "output_half_pixel"))
        return tc_kernel_unsupported_attr(ctx, "coordinate_transformation_mode", transform);
    if (p->out_h < 1 || p->out_w < 1 || p->sampling_ratio < 0 || !isfinite(scale))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "output_height %lld and output_width %lld must be at least 1, "
                            "sampling_ratio %lld at least 0, spatial_scale %g finite",
                            (long long)p->out_h, (long long)p->out_w, (long long)p->sampling_ratio,
                            (double)scale);
    p->max_mode = !strcmp(mode, "max");
    p->spatial_scale = scale;
    p->offset = strcmp(transform, "half_pixel") ? 0.0 : 0.5;
    return TCONV_OK;
}

/* One axis of one sample of the bilinear interpolation: the two pixels and their weights, or
 * `valid` false when the sample lies outside [-1, size] (it then contributes 0). */
typedef struct roi_tap {
    int64_t lo, hi;
    double w_lo, w_hi;
    bool valid;
} roi_tap;

static roi_tap roi_tap_at(double v, int64_t size) {
    roi_tap t = {0, 0, 0, 0, false};
    if (!(v >= -1.0 && v <= (double)size))
        return t;
    if (v < 0)
        v = 0;
    t.lo = (int64_t)v;
    if (t.lo >= size - 1) {
        t.lo = t.hi = size - 1;
        v = (double)t.lo;
    } else {
        t.hi = t.lo + 1;
    }
    double l = v - (double)t.lo;
    t.w_lo = 1.0 - l;
    t.w_hi = l;
    t.valid = true;
    return t;
}

/* The samples of one axis of one roi: bin b, sample i at start + b*bin + (i + 0.5)*bin/grid.
 * Only the samples inside [-1, size] are kept (the others contribute 0): at most about
 * 2 (size + 2) per bin whatever the grid, so a roi far larger than the image costs no more
 * than the image. */
typedef struct roi_axis {
    int64_t grid;   /* samples per bin along this axis (the divisor counts them all) */
    roi_tap *taps;  /* bins x kept, the bin's valid samples first */
    int64_t *count; /* valid samples per bin */
    int64_t stride; /* taps per bin in `taps` */
} roi_axis;

/* The first and last sample index of a bin inside [-1, size], widened by one each side (the
 * exact test is roi_tap_at's). */
static void roi_axis_range(double first, double step, int64_t grid, int64_t size, int64_t *lo,
                           int64_t *hi) {
    double a = ceil((-1.0 - first) / step) - 1, b = floor(((double)size - first) / step) + 1;
    *lo = a < 0 ? 0 : a >= (double)grid ? grid : (int64_t)a;
    *hi = b < 0 ? -1 : b >= (double)grid ? grid - 1 : (int64_t)b;
}

static void roi_axis_fill(roi_axis *ax, double start, double bin, int64_t bins, int64_t size) {
    double step = bin / (double)ax->grid;
    for (int64_t b = 0; b < bins; b++) {
        double first = start + (double)b * bin + 0.5 * step;
        int64_t lo, hi, n = 0;
        roi_axis_range(first, step, ax->grid, size, &lo, &hi);
        /* Rois so far off that float64 cannot place their samples within a pixel could make the
         * range wider than the taps that fit: never look at more than that. */
        if (hi - lo >= ax->stride)
            hi = lo + ax->stride - 1;
        for (int64_t i = lo; i <= hi; i++) {
            roi_tap t = roi_tap_at(
                start + (double)b * bin + ((double)i + 0.5) * bin / (double)ax->grid, size);
            if (t.valid)
                ax->taps[b * ax->stride + n++] = t;
        }
        ax->count[b] = n;
    }
}

/* Samples per bin along one axis: sampling_ratio, else ceil(extent / bins) (at least 1 once
 * clamped to the kept taps' bound). Returns false for a non-finite extent. */
static bool roi_grid(const roi_params *p, double extent, int64_t bins, int64_t *grid) {
    if (p->sampling_ratio > 0) {
        *grid = p->sampling_ratio;
        return true;
    }
    double g = ceil(extent / (double)bins);
    if (!isfinite(g))
        return false;
    *grid = g < 1 ? 0 : g > (double)INT64_MAX / 4 ? INT64_MAX / 4 : (int64_t)g;
    return true;
}

/* The pooled values of one channel of one roi. */
static void roi_pool_channel(const roi_params *p, const roi_axis *ay, const roi_axis *ax,
                             const tc_rt_tensor *x, int64_t plane, int64_t width, double count,
                             tc_rt_tensor *y, int64_t out_at) {
    for (int64_t ph = 0; ph < p->out_h; ph++)
        for (int64_t pw = 0; pw < p->out_w; pw++) {
            const roi_tap *ty = ay->taps + ph * ay->stride, *tx = ax->taps + pw * ax->stride;
            int64_t ny = ay->count[ph], nx = ax->count[pw];
            double acc = 0;
            bool any = false;
            for (int64_t i = 0; i < ny; i++)
                for (int64_t j = 0; j < nx; j++) {
                    const roi_tap *a = &ty[i], *b = &tx[j];
                    double v1 = get_real(x, plane + a->lo * width + b->lo);
                    double v2 = get_real(x, plane + a->lo * width + b->hi);
                    double v3 = get_real(x, plane + a->hi * width + b->lo);
                    double v4 = get_real(x, plane + a->hi * width + b->hi);
                    double w1 = a->w_lo * b->w_lo, w2 = a->w_lo * b->w_hi;
                    double w3 = a->w_hi * b->w_lo, w4 = a->w_hi * b->w_hi;
                    if (!p->max_mode) {
                        acc += w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4;
                    } else {
                        /* ONNX's max mode: the largest weighted corner of each sample */
                        double m = fmax(fmax(w1 * v1, w2 * v2), fmax(w3 * v3, w4 * v4));
                        acc = any ? fmax(acc, m) : m;
                        any = true;
                    }
                }
            double out;
            if (!p->max_mode)
                out = count > 0 ? acc / count : 0;
            else /* samples outside the map weigh in as 0, as in the reference */
                out = !any ? 0 : (double)(ny * nx) < count ? fmax(acc, 0.0) : acc;
            set_real(y, out_at + ph * p->out_w + pw, out);
        }
}

typedef struct roi_job {
    const roi_params *p;
    const tc_rt_tensor *x, *rois, *batch;
    tc_rt_tensor *y;
    roi_axis ay, ax;
} roi_job;

/* One roi: its sample taps per axis, then every channel. */
static tconv_status roi_align_one(tc_kernel_ctx *ctx, roi_job *j, int64_t r) {
    const roi_params *p = j->p;
    int64_t channels = j->x->dims[1], height = j->x->dims[2], width = j->x->dims[3];
    int64_t out_at = r * channels * p->out_h * p->out_w;
    int64_t n = tc_rt_get_i64(j->batch, r);
    if (n < 0 || n >= j->x->dims[0])
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "batch_indices[%lld] = %lld is outside X's batch [0, %lld)",
                            (long long)r, (long long)n, (long long)j->x->dims[0]);
    double c[4];
    for (int k = 0; k < 4; k++)
        c[k] = get_real(j->rois, r * 4 + k) * p->spatial_scale - p->offset;
    double roi_w = c[2] - c[0], roi_h = c[3] - c[1];
    if (p->offset == 0.0) { /* output_half_pixel: malformed rois count as 1x1 */
        roi_w = fmax(roi_w, 1.0);
        roi_h = fmax(roi_h, 1.0);
    }
    double bin_h = roi_h / (double)p->out_h, bin_w = roi_w / (double)p->out_w;
    if (!isfinite(c[0]) || !isfinite(c[1]) || !isfinite(bin_h) || !isfinite(bin_w) ||
        !roi_grid(p, roi_h, p->out_h, &j->ay.grid) || !roi_grid(p, roi_w, p->out_w, &j->ax.grid))
        return TCONV_OK; /* a roi with a non-finite coordinate pools to 0 (the output's zeros) */
    double count = (double)j->ay.grid * (double)j->ax.grid;
    if (count < 1)
        count = 1;
    if (j->ay.grid == 0 || j->ax.grid == 0)
        return TCONV_OK; /* an empty (or reversed) half_pixel roi: no samples */
    roi_axis_fill(&j->ay, c[1], bin_h, p->out_h, height);
    roi_axis_fill(&j->ax, c[0], bin_w, p->out_w, width);
    uint64_t samples = 0;
    for (int64_t b = 0; b < p->out_h; b++)
        for (int64_t a = 0; a < p->out_w; a++)
            samples = tc_work_add_sat(
                samples, tc_work_mul_sat((uint64_t)j->ay.count[b], (uint64_t)j->ax.count[a]));
    /* An explicit sampling_ratio's samples were counted from the shapes (tc_work_roi_align);
     * the adaptive grid's depend on the roi: charged now. */
    if (p->sampling_ratio == 0) {
        tconv_status st = tc_budget_charge_work(
            ctx->budget, tc_work_mul_sat(samples, 4 * (uint64_t)channels), ctx->err);
        if (st != TCONV_OK)
            return st;
    }
    for (int64_t ch = 0; ch < channels; ch++)
        roi_pool_channel(p, &j->ay, &j->ax, j->x, (n * channels + ch) * height * width, width,
                         count, j->y, out_at + ch * p->out_h * p->out_w);
    return TCONV_OK;
}

/* Taps per bin kept at most along an axis of `size` pixels: all the grid's, or as many as can
 * fall inside [-1, size] at a spacing of at least half a pixel (grid = ceil(bin)) plus the
 * range's slack; with an explicit sampling_ratio the spacing may be finer: then the grid. */
static int64_t roi_max_taps(const roi_params *p, int64_t size) {
    return p->sampling_ratio > 0 ? p->sampling_ratio : 2 * (size + 2) + 4;
}

tconv_status tc_run_roi_align(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *rois, *batch;
    tconv_status st = tc_kernel_require_typed(ctx, 0, DETECT_FLOATS, &x);
    if (st == TCONV_OK)
        st = tc_kernel_require_typed(ctx, 1, DETECT_FLOATS, &rois);
    if (st == TCONV_OK)
        st = tc_kernel_require_typed(ctx, 2, TC_DTYPES_INDEX, &batch);
    roi_params p;
    if (st != TCONV_OK || (st = roi_read_params(ctx, &p)))
        return st;
    if (x->rank != 4)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "X must be 4-D [N, C, H, W], not %d-D",
                            x->rank);
    if (rois->dtype != x->dtype)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "rois must have X's dtype");
    if (rois->rank != 2 || rois->dims[1] != 4 || batch->rank != 1 ||
        batch->dims[0] != rois->dims[0])
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "rois must be [num_rois, 4] and batch_indices [num_rois]");
    int64_t num_rois = rois->dims[0];
    int64_t dims[4] = {num_rois, x->dims[1], p.out_h, p.out_w};
    tc_rt_tensor *y;
    if ((st = tc_kernel_alloc_output(ctx, 0, x->dtype, 4, dims, &y)))
        return st;
    if (y->n_elements == 0)
        return TCONV_OK;
    if (x->dims[2] == 0 || x->dims[3] == 0)
        return TCONV_OK; /* no pixels: every sample is 0 */
    roi_job j = {.p = &p, .x = x, .rois = rois, .batch = batch, .y = y};
    j.ay.stride = roi_max_taps(&p, x->dims[2]);
    j.ax.stride = roi_max_taps(&p, x->dims[3]);
    /* Scratch: taps and counts of both axes (bounded by the attributes and the image size). */
    uint64_t taps = tc_work_add_sat(tc_work_mul_sat((uint64_t)p.out_h, (uint64_t)j.ay.stride),
                                    tc_work_mul_sat((uint64_t)p.out_w, (uint64_t)j.ax.stride));
    uint64_t bytes = tc_work_add_sat(tc_work_mul_sat(taps, sizeof(roi_tap)),
                                     ((uint64_t)p.out_h + (uint64_t)p.out_w) * sizeof(int64_t));
    if (bytes > SIZE_MAX / 2)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "sampling_ratio %lld needs too many samples",
                            (long long)p.sampling_ratio);
    tc_rt_tensor buf;
    if ((st = tc_kernel_scratch(ctx, (size_t)bytes, &buf)))
        return st;
    j.ay.taps = buf.data;
    j.ax.taps = j.ay.taps + p.out_h * j.ay.stride;
    j.ay.count = (int64_t *)(void *)(j.ax.taps + p.out_w * j.ax.stride);
    j.ax.count = j.ay.count + p.out_h;
    for (int64_t r = 0; r < num_rois && st == TCONV_OK; r++)
        st = roi_align_one(ctx, &j, r);
    tc_kernel_scratch_release(ctx, &buf);
    return st;
}

/* ================================================================ GridSample */

typedef enum gs_mode { GS_NEAREST, GS_LINEAR, GS_CUBIC } gs_mode;
typedef enum gs_padding { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_padding;

typedef struct gs_params {
    gs_mode mode;
    gs_padding padding;
    bool align_corners;
    int spatial; /* X's spatial rank */
} gs_params;

static tconv_status gs_read_params(tc_kernel_ctx *ctx, gs_params *p) {
    const char *mode, *padding;
    int64_t align;
    bool v20 = ctx->opset >= 20; /* GridSample-20 renamed bilinear/bicubic to linear/cubic */
    tconv_status st =
        tc_node_attr_string(ctx->node, "mode", v20 ? "linear" : "bilinear", &mode, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_string(ctx->node, "padding_mode", "zeros", &padding, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "align_corners", 0, &align, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (!strcmp(mode, "nearest"))
        p->mode = GS_NEAREST;
    else if (!strcmp(mode, v20 ? "linear" : "bilinear"))
        p->mode = GS_LINEAR;
    else if (!strcmp(mode, v20 ? "cubic" : "bicubic"))
        p->mode = GS_CUBIC;
    else
        return tc_kernel_unsupported_attr(ctx, "mode", mode);
    if (!strcmp(padding, "zeros"))
        p->padding = GS_ZEROS;
    else if (!strcmp(padding, "border"))
        p->padding = GS_BORDER;
    else if (!strcmp(padding, "reflection"))
        p->padding = GS_REFLECTION;
    else
        return tc_kernel_unsupported_attr(ctx, "padding_mode", padding);
    p->align_corners = align != 0;
    return TCONV_OK;
}

/* Reflects v into [lo, hi] by the nearer border until it is inside (the reference's
 * _gs_reflect); a range of zero width (align_corners with one pixel) gives lo. */
static double gs_reflect(double v, double lo, double hi) {
    double range = hi - lo;
    if (v >= lo && v <= hi)
        return v;
    if (!(range > 0))
        return lo;
    double d = v < lo ? lo - v : v - hi;
    double k = floor(d / range), r = d - k * range;
    bool even = fmod(k, 2.0) == 0;
    if (v < lo)
        return even ? lo + r : hi - r;
    return even ? hi - r : lo + r;
}

/* The pixel index that coordinate index i reads along an axis of `size` pixels, or -1 for a
 * zero (outside, zeros padding). */
static int64_t gs_index(const gs_params *p, int64_t i, int64_t size) {
    if (i >= 0 && i < size)
        return i;
    if (p->padding == GS_ZEROS)
        return -1;
    if (p->padding == GS_BORDER)
        return i < 0 ? 0 : size - 1;
    double lo = p->align_corners ? 0.0 : -0.5,
           hi = p->align_corners ? (double)size - 1 : (double)size - 0.5;
    int64_t r = (int64_t)gs_reflect((double)i, lo, hi);
    return r < 0 ? 0 : r >= size ? size - 1 : r;
}

/* Keys' cubic convolution weights (a = -0.75) for the four taps around t in [0, 1). */
static void gs_cubic_weights(double t, double *w) {
    const double a = -0.75;
    double x = t + 1;
    w[0] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    x = 1 - t;
    w[2] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x = 2 - t;
    w[3] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/* Rounds half to even (nearbyint), in every rank: the node tests of ONNX v1.22.0 expect it for
 * 3-D too (-0.5 -> 0), although PyTorch's 3-D nearest rounds half away from zero. */
static double gs_round(double v) {
    return nearbyint(v);
}

/* Per spatial axis of one output point: the taps (pixel index or -1) and their weights. */
typedef struct gs_axis_taps {
    int n;
    int64_t index[4];
    double weight[4];
} gs_axis_taps;

/* The taps of one axis for normalized coordinate g; false when g is NaN (the point is 0). */
static bool gs_axis(const gs_params *p, double g, int64_t size, gs_axis_taps *t) {
    if (isnan(g))
        return false;
    double v =
        p->align_corners ? (g + 1) / 2.0 * (double)(size - 1) : ((g + 1) * (double)size - 1) / 2.0;
    if (p->mode == GS_NEAREST)
        v = gs_round(v);
    double lo = p->align_corners ? 0.0 : -0.5;
    double hi = p->align_corners ? (double)size - 1 : (double)size - 0.5;
    /* Linear and nearest move an outside coordinate inside first; cubic pads its four taps only
     * (PyTorch and onnxruntime 1.30; see docs/semantics.md). */
    if ((v < lo || v > hi) && p->mode != GS_CUBIC) {
        if (p->padding == GS_BORDER)
            v = v < 0 ? 0 : v > (double)size - 1 ? (double)size - 1 : v;
        else if (p->padding == GS_REFLECTION)
            v = gs_reflect(v, lo, hi);
    }
    if (isnan(v))
        return false;
    /* Far outside: with zeros padding every tap reads 0; cubic's border/reflection taps are
     * taken from that distance (border: the edge pixel; an infinity reflects to NaN: 0). Never
     * converted to an index from further out. */
    double far = (double)size + 8;
    if (p->mode == GS_CUBIC && p->padding != GS_ZEROS && (v < -far || v > far)) {
        if (isinf(v) && p->padding == GS_REFLECTION)
            return false;
        v = v < 0 ? -far : far;
    }
    if (v < -far || v > far) {
        t->n = 1;
        t->index[0] = -1;
        t->weight[0] = 1;
        return true;
    }
    if (p->mode == GS_NEAREST) {
        t->n = 1;
        t->index[0] = gs_index(p, (int64_t)v, size); /* truncation, as the reference */
        t->weight[0] = 1;
        return true;
    }
    double f = floor(v), frac = v - f;
    int64_t i0 = (int64_t)f;
    if (p->mode == GS_LINEAR) {
        t->n = 2;
        t->weight[0] = 1 - frac;
        t->weight[1] = frac;
        for (int k = 0; k < 2; k++)
            t->index[k] = gs_index(p, i0 + k, size);
    } else {
        t->n = 4;
        gs_cubic_weights(frac, t->weight);
        for (int k = 0; k < 4; k++)
            t->index[k] = gs_index(p, i0 - 1 + k, size);
    }
    return true;
}

/* The corners one output point reads: the product of the axes' taps, those that read a pixel
 * (offset into X's sample n, weight); returns how many. */
static int64_t gs_corners(const gs_params *p, const gs_axis_taps *taps, const int64_t *x_strides,
                          int64_t *offset, double *weight) {
    int r = p->spatial, pos[TC_MAX_RANK] = {0};
    int64_t n = 0;
    for (;;) {
        double w = 1;
        int64_t at = 0;
        bool zero = false;
        for (int d = 0; d < r; d++) {
            int64_t idx = taps[d].index[pos[d]];
            w *= taps[d].weight[pos[d]];
            zero |= idx < 0;
            at += (idx < 0 ? 0 : idx) * x_strides[d + 2];
        }
        if (!zero && w != 0) {
            offset[n] = at;
            weight[n++] = w;
        }
        int d = r - 1;
        while (d >= 0 && ++pos[d] == taps[d].n)
            pos[d--] = 0;
        if (d < 0)
            return n;
    }
}

tconv_status tc_run_grid_sample(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *grid;
    tconv_status st = tc_kernel_require_typed(ctx, 0, DETECT_FLOATS, &x);
    if (st == TCONV_OK)
        st = tc_kernel_require_typed(ctx, 1, DETECT_FLOATS, &grid);
    gs_params p;
    if (st != TCONV_OK || (st = gs_read_params(ctx, &p)))
        return st;
    p.spatial = x->rank - 2;
    if (x->rank < 3 || grid->rank != x->rank || grid->dims[0] != x->dims[0] ||
        grid->dims[x->rank - 1] != p.spatial)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "X must be [N, C, D1..Dr] and grid [N, d1..dr, r] (r = %d)", p.spatial);
    if (ctx->opset < 20 && x->rank != 4)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "GridSample-16 takes 4-D X only, not %d-D (GridSample-20 takes N-D)",
                            x->rank);
    int64_t dims[TC_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int d = 0; d < p.spatial; d++)
        dims[d + 2] = grid->dims[d + 1];
    tc_rt_tensor *y;
    if ((st = tc_kernel_alloc_output_uninit(ctx, 0, x->dtype, x->rank, dims, &y)))
        return st;
    if (y->n_elements == 0)
        return TCONV_OK;
    int64_t x_strides[TC_MAX_RANK], points = y->n_elements / (dims[0] * dims[1]);
    tc_shape_strides(x->rank, x->dims, x_strides);
    int64_t corners_max = 1; /* 1, 2 or 4 taps an axis */
    for (int d = 0; d < p.spatial; d++)
        corners_max *= p.mode == GS_NEAREST ? 1 : p.mode == GS_LINEAR ? 2 : 4;
    tc_rt_tensor buf;
    if ((st = tc_kernel_scratch(ctx, (size_t)corners_max * (sizeof(int64_t) + sizeof(double)),
                                &buf)))
        return st;
    int64_t *offset = buf.data;
    double *weight = (double *)(void *)(offset + corners_max);
    for (int64_t n = 0; n < dims[0]; n++)
        for (int64_t q = 0; q < points; q++) {
            gs_axis_taps taps[TC_MAX_RANK];
            int64_t g_at = (n * points + q) * p.spatial, corners = 0;
            bool ok = x->n_elements > 0;
            /* grid's last axis lists (x, y, ...): its first value indexes X's last axis */
            for (int d = 0; d < p.spatial && ok; d++)
                ok =
                    gs_axis(&p, get_real(grid, g_at + p.spatial - 1 - d), x->dims[d + 2], &taps[d]);
            if (ok)
                corners = gs_corners(&p, taps, x_strides, offset, weight);
            for (int64_t ch = 0; ch < dims[1]; ch++) {
                int64_t base = n * x_strides[0] + ch * x_strides[1];
                double acc = 0;
                for (int64_t k = 0; k < corners; k++)
                    acc += weight[k] * get_real(x, base + offset[k]);
                set_real(y, (n * dims[1] + ch) * points + q, acc);
            }
        }
    tc_kernel_scratch_release(ctx, &buf);
    return TCONV_OK;
}
