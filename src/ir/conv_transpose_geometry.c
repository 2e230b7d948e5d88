#include "ir/conv_transpose_geometry.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *tconv_convention_name(tconv_convention convention) {
    switch (convention) {
    case TCONV_CONVENTION_ONNX:
        return "onnx";
    case TCONV_CONVENTION_ORT:
        return "ort";
    case TCONV_CONVENTION_ORT_LEGACY:
        return "ort-legacy";
    }
    return "?";
}

bool tc_convention_parse(const char *text, tconv_convention *out) {
    static const tconv_convention all[] = {TCONV_CONVENTION_ONNX, TCONV_CONVENTION_ORT,
                                           TCONV_CONVENTION_ORT_LEGACY};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, tconv_convention_name(all[i])) == 0) {
            *out = all[i];
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------- attribute reading */

typedef struct ints_attr {
    bool present;
    const int64_t *values;
    size_t count;
} ints_attr;

static tconv_status read_ints(const tconv_node *node, const char *name, ints_attr *out,
                              tc_error *err) {
    return tc_node_attr_ints(node, name, &out->present, &out->values, &out->count, err);
}

static tconv_status attr_error(const tconv_node *node, const char *attr, tc_error *err,
                               const char *what) {
    char where[256];
    return tc_error_set(err, TCONV_ERR_INVALID, "%s: attribute '%s': %s",
                        tc_node_describe(node, where, sizeof where), attr, what);
}

/* The spatial rank from the first attribute that fixes it, when X and W did not. */
static int rank_from_attrs(const ints_attr *kernel, const ints_attr *strides,
                           const ints_attr *dilations, const ints_attr *pads,
                           const ints_attr *output_padding) {
    if (kernel->present)
        return (int)kernel->count;
    if (strides->present)
        return (int)strides->count;
    if (dilations->present)
        return (int)dilations->count;
    if (pads->present && pads->count % 2 == 0)
        return (int)(pads->count / 2);
    if (output_padding->present)
        return (int)output_padding->count;
    return -1;
}

/* Copies an optional per-axis list, checking its length and lower bound. */
static tconv_status copy_axis_list(const tconv_node *node, const char *name, const ints_attr *a,
                                   size_t expected, int64_t fallback, int64_t min_value,
                                   int64_t *dst, tc_error *err) {
    for (size_t i = 0; i < expected; i++)
        dst[i] = fallback;
    if (!a->present)
        return TCONV_OK;
    if (a->count != expected) {
        char what[128];
        snprintf(what, sizeof what, "has %zu values, expected %zu", a->count, expected);
        return attr_error(node, name, err, what);
    }
    for (size_t i = 0; i < expected; i++) {
        if (a->values[i] < min_value) {
            char what[128];
            snprintf(what, sizeof what, "value %lld at index %zu is below %lld",
                     (long long)a->values[i], i, (long long)min_value);
            return attr_error(node, name, err, what);
        }
        dst[i] = a->values[i];
    }
    return TCONV_OK;
}

/* The spatial elements an output_shape asks for per channel: beyond this no tensor could hold
 * the output (2^31 elements is the default tensor limit of 2 GiB even for 1-byte elements),
 * and the rewrite would write a Pad of that size into the model. */
#define MAX_OUTPUT_ELEMENTS ((int64_t)1 << 31)

static tconv_status check_output_size(const tconv_node *node, const int64_t *shape, int rank,
                                      tc_error *err) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (!tc_mul_i64(n, shape[i], &n) || n > MAX_OUTPUT_ELEMENTS) {
            char what[160];
            snprintf(what, sizeof what,
                     "asks for more than %" PRId64
                     " output elements per channel (axis %d is %" PRId64
                     "): larger than any tensor may be",
                     MAX_OUTPUT_ELEMENTS, i, shape[i]);
            return attr_error(node, "output_shape", err, what);
        }
    }
    return TCONV_OK;
}

static tconv_status read_output_shape(const tconv_node *node, const ints_attr *a, int rank,
                                      tc_conv_transpose_attrs *out, tc_error *err) {
    if (!a->present)
        return TCONV_OK;
    size_t offset = 0;
    if (a->count == (size_t)rank + 2) {
        offset = 2;
        out->output_shape_has_batch_channel = true;
    } else if (a->count != (size_t)rank) {
        char what[128];
        snprintf(what, sizeof what, "has %zu values, expected %d (or %d with N,C in front)",
                 a->count, rank, rank + 2);
        return attr_error(node, "output_shape", err, what);
    }
    out->has_output_shape = true;
    tconv_status st =
        copy_axis_list(node, "output_shape", &(ints_attr){true, a->values + offset, (size_t)rank},
                       (size_t)rank, 0, 1, out->output_shape, err);
    return st == TCONV_OK ? check_output_size(node, out->output_shape, rank, err) : st;
}

tconv_status tc_conv_transpose_read_attrs(const tconv_node *node, int spatial_rank,
                                          tc_conv_transpose_attrs *out, tc_error *err) {
    memset(out, 0, sizeof *out);
    ints_attr kernel, strides, dilations, pads, output_padding, output_shape;
    tconv_status st;
    if ((st = read_ints(node, "kernel_shape", &kernel, err)) ||
        (st = read_ints(node, "strides", &strides, err)) ||
        (st = read_ints(node, "dilations", &dilations, err)) ||
        (st = read_ints(node, "pads", &pads, err)) ||
        (st = read_ints(node, "output_padding", &output_padding, err)) ||
        (st = read_ints(node, "output_shape", &output_shape, err)) ||
        (st = tc_node_attr_int(node, "group", 1, &out->group, err)) ||
        (st = tc_auto_pad_read(node, &out->auto_pad, err)))
        return st;
    if (out->group < 1)
        return attr_error(node, "group", err, "must be at least 1");
    int rank = spatial_rank >= 0
                   ? spatial_rank
                   : rank_from_attrs(&kernel, &strides, &dilations, &pads, &output_padding);
    if (rank < 0 && output_shape.present)
        rank = (int)output_shape.count;
    if (rank < 1 || rank > TC_MAX_SPATIAL) {
        char where[256];
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "%s: cannot tell the number of spatial axes (got %d; 1..%d "
                            "supported) from X, W or the attributes",
                            tc_node_describe(node, where, sizeof where), rank, TC_MAX_SPATIAL);
    }
    out->spatial_rank = rank;
    size_t r = (size_t)rank;
    out->has_kernel_shape = kernel.present;
    out->has_pads = pads.present;
    out->has_output_padding = output_padding.present;
    if ((st = copy_axis_list(node, "kernel_shape", &kernel, r, 0, 1, out->kernel_shape, err)) ||
        (st = copy_axis_list(node, "strides", &strides, r, 1, 1, out->strides, err)) ||
        (st = copy_axis_list(node, "dilations", &dilations, r, 1, 1, out->dilations, err)) ||
        (st = copy_axis_list(node, "pads", &pads, 2 * r, 0, 0, out->pads, err)) ||
        (st = copy_axis_list(node, "output_padding", &output_padding, r, 0, 0, out->output_padding,
                             err)))
        return st;
    return read_output_shape(node, &output_shape, rank, out, err);
}

/* ---------------------------------------------------------------- resolution */

/* Splits a total pad into begin/end the way `convention` does for this auto_pad mode. The
 * odd extra goes to the end when `extra_at_end`. onnxruntime clamps a negative total to 0:
 * 1.30 then adds nothing (the caller sets the output size from the clamped total), <= 1.12
 * keeps its output size, so the whole shortfall lands at the end. */
static void split_total(int64_t total, bool extra_at_end, tconv_convention convention, int64_t *pb,
                        int64_t *pe) {
    if (convention != TCONV_CONVENTION_ONNX && total < 0) {
        *pb = 0;
        *pe = convention == TCONV_CONVENTION_ORT ? 0 : total;
        return;
    }
    int64_t half = tc_floor_div(total, 2);
    *pb = extra_at_end ? half : total - half;
    *pe = total - *pb;
}

/* ONNX and onnxruntime >= 1.13 put the odd extra pad at the end only for SAME_UPPER (SAME_LOWER
 * and output_shape put it at the beginning); onnxruntime <= 1.12 did the opposite. */
static bool extra_at_end(tc_auto_pad auto_pad, tconv_convention convention) {
    bool upper = auto_pad == TCONV_AUTO_PAD_SAME_UPPER;
    return convention == TCONV_CONVENTION_ORT_LEGACY ? !upper : upper;
}

/* Why onnxruntime 1.30 refuses the node (docs/semantics.md, measured), or NULL. Per axis:
 * output_shape given: t = max(0, F + op - output_shape), refused unless
 * floor((output_shape + t - ke) / s) + 1 == x; otherwise refused when op >= s. */
static const char *ort_refusal(const tc_conv_transpose_attrs *a, const int64_t *x_dims,
                               const int64_t *kernel, bool *depends_on_size) {
    *depends_on_size = false;
    if (a->has_output_shape && a->output_shape_has_batch_channel)
        return "output_shape with N,C in front (\"output_shape has incorrect size\")";
    for (int i = 0; i < a->spatial_rank; i++) {
        int64_t s = a->strides[i], op = a->output_padding[i];
        if (op >= s)
            return "output_padding >= stride (\"output_padding may be too large for stride\")";
        int64_t x = x_dims ? x_dims[2 + i] : -1;
        if (!a->has_output_shape)
            continue;
        int64_t ke, full, os = a->output_shape[i];
        if (x < 1 || !tc_mul_i64(kernel[i] - 1, a->dilations[i], &ke) || !tc_add_i64(ke, 1, &ke) ||
            !tc_mul_i64(s, x - 1, &full) || !tc_add_i64(full, ke, &full) || full > INT64_MAX - op) {
            *depends_on_size = true; /* too-negative totals are refused for some input sizes */
            continue;
        }
        int64_t t = full + op - os > 0 ? full + op - os : 0;
        if (tc_floor_div(os + t - ke, s) + 1 != x)
            return "output_shape whose total padding is too negative for the input size";
    }
    return NULL;
}

static tconv_status resolve_kernel(const tc_conv_transpose_attrs *a, const int64_t *w_dims,
                                   tc_conv_transpose_geometry *g, tc_error *err) {
    for (int i = 0; i < a->spatial_rank; i++) {
        int64_t from_w = w_dims ? w_dims[2 + i] : -1;
        int64_t from_attr = a->has_kernel_shape ? a->kernel_shape[i] : -1;
        if (from_w >= 0 && from_attr >= 0 && from_w != from_attr)
            return tc_error_set(err, TCONV_ERR_INVALID,
                                "kernel_shape[%d] = %lld but W has %lld on that axis", i,
                                (long long)from_attr, (long long)from_w);
        g->kernel[i] = from_w >= 0 ? from_w : from_attr;
        if (g->kernel[i] < 1)
            return tc_error_set(err, from_w == 0 ? TCONV_ERR_INVALID : TCONV_ERR_UNSUPPORTED,
                                g->kernel[i] == 0 ? "W has an empty kernel axis %d"
                                                  : "kernel size of axis %d is unknown (no "
                                                    "kernel_shape and W's shape is dynamic)",
                                i);
    }
    return TCONV_OK;
}

static tconv_status resolve_channels(const tc_conv_transpose_attrs *a, const int64_t *x_dims,
                                     const int64_t *w_dims, tc_conv_transpose_geometry *g,
                                     tc_error *err) {
    int64_t x_c = x_dims ? x_dims[1] : -1;
    int64_t w_c = w_dims ? w_dims[0] : -1;
    if (x_c >= 0 && w_c >= 0 && x_c != w_c)
        return tc_error_set(err, TCONV_ERR_INVALID, "X has %lld channels but W.shape[0] is %lld",
                            (long long)x_c, (long long)w_c);
    g->c_in = x_c >= 0 ? x_c : w_c;
    if (g->c_in >= 0 && g->c_in % a->group != 0)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "group %lld does not divide the %lld input channels",
                            (long long)a->group, (long long)g->c_in);
    g->c_out = -1;
    if (w_dims && w_dims[1] >= 0 && !tc_mul_i64(w_dims[1], a->group, &g->c_out))
        return tc_error_set(err, TCONV_ERR_INVALID, "output channel count overflows");
    return TCONV_OK;
}

static tconv_status resolve_axis(const tc_conv_transpose_attrs *a, int i, int64_t x,
                                 tconv_convention convention, tc_conv_transpose_geometry *g,
                                 tc_error *err) {
    int64_t k = g->kernel[i], s = a->strides[i], d = a->dilations[i], op = a->output_padding[i];
    int64_t r = a->spatial_rank;
    if (op >= (s > d ? s : d))
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "output_padding[%d] = %lld must be less than max(stride %lld, "
                            "dilation %lld)",
                            i, (long long)op, (long long)s, (long long)d);
    int64_t ke, full = -1, tmp;
    if (!tc_mul_i64(k - 1, d, &ke) || !tc_add_i64(ke, 1, &ke))
        return tc_error_set(err, TCONV_ERR_INVALID, "dilated kernel size overflows");
    if (x == 0)
        return tc_error_set(err, TCONV_ERR_INVALID, "input spatial axis %d is empty", i);
    if (x > 0 && (!tc_mul_i64(s, x - 1, &tmp) || !tc_add_i64(tmp, ke, &full)))
        return tc_error_set(err, TCONV_ERR_INVALID, "output size of axis %d overflows", i);
    g->in[i] = x;
    g->full[i] = full;
    int64_t pb = 0, pe = 0, out = -1;
    if (a->has_output_shape) {
        out = a->output_shape[i];
        if (full < 0) {
            g->pads_known = false;
        } else {
            int64_t total = full + op - out;
            split_total(total, extra_at_end(a->auto_pad, convention), convention, &pb, &pe);
            pe = total - pb; /* out is output_shape whatever the split */
        }
    } else if (tc_auto_pad_is_same(a->auto_pad)) {
        int64_t total = op + ke - s; /* independent of x: works for dynamic sizes */
        split_total(total, extra_at_end(a->auto_pad, convention), convention, &pb, &pe);
        if (convention == TCONV_CONVENTION_ORT && total < 0) /* 1.30: out = F + op */
            out = full >= 0 ? full + op : -1;
        else if (x > 0 && !tc_mul_i64(x, s, &out))
            return tc_error_set(err, TCONV_ERR_INVALID, "output size of axis %d overflows", i);
    } else {
        if (a->auto_pad == TCONV_AUTO_PAD_NOTSET) {
            pb = a->pads[i];
            pe = a->pads[i + r];
        }
        if (full >= 0)
            out = full - pb - pe + op;
    }
    g->pad_begin[i] = pb;
    g->pad_end[i] = pe;
    g->out[i] = out;
    if (out == 0 || (out < 0 && full >= 0))
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "output size of spatial axis %d would be %lld (input %lld, "
                            "kernel %lld, stride %lld, pads %lld+%lld)",
                            i, (long long)out, (long long)x, (long long)k, (long long)s,
                            (long long)pb, (long long)pe);
    return TCONV_OK;
}

tconv_status tc_conv_transpose_resolve(const tc_conv_transpose_attrs *attrs, const int64_t *x_dims,
                                       const int64_t *w_dims, tconv_convention convention,
                                       tc_conv_transpose_geometry *out, tc_error *err) {
    memset(out, 0, sizeof *out);
    out->spatial_rank = attrs->spatial_rank;
    out->group = attrs->group;
    out->pads_known = true;
    memcpy(out->strides, attrs->strides, sizeof out->strides);
    memcpy(out->dilations, attrs->dilations, sizeof out->dilations);
    memcpy(out->output_padding, attrs->output_padding, sizeof out->output_padding);
    tconv_status st = resolve_kernel(attrs, w_dims, out, err);
    if (st == TCONV_OK && convention == TCONV_CONVENTION_ORT) {
        out->convention_refusal =
            ort_refusal(attrs, x_dims, out->kernel, &out->convention_refusal_depends_on_size);
        if (out->convention_refusal) /* tconv follows ONNX where onnxruntime refuses */
            convention = TCONV_CONVENTION_ONNX;
    }
    if (st == TCONV_OK)
        st = resolve_channels(attrs, x_dims, w_dims, out, err);
    for (int i = 0; st == TCONV_OK && i < attrs->spatial_rank; i++)
        st = resolve_axis(attrs, i, x_dims ? x_dims[2 + i] : -1, convention, out, err);
    return st;
}

/* ---------------------------------------------------------------- operand checks */

tconv_status tc_conv_transpose_check_ranks(int x_rank, int w_rank, tc_error *err) {
    if (x_rank >= 0 && (x_rank < 3 || x_rank - 2 > TC_MAX_SPATIAL))
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                            "X has rank %d; 3 to %d (N, C and 1 to %d spatial axes) are "
                            "supported",
                            x_rank, TC_MAX_SPATIAL + 2, TC_MAX_SPATIAL);
    if (x_rank >= 0 && w_rank >= 0 && w_rank != x_rank)
        return tc_error_set(err, TCONV_ERR_INVALID, "W has rank %d but X has rank %d", w_rank,
                            x_rank);
    if (w_rank >= 0 && (w_rank < 3 || w_rank - 2 > TC_MAX_SPATIAL))
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "W has rank %d; it must be (C_in, C_out/group, k...) with 1 to %d "
                            "kernel axes",
                            w_rank, TC_MAX_SPATIAL);
    return TCONV_OK;
}

tconv_status tc_conv_transpose_check_bias(int b_rank, const int64_t *b_dims, int64_t c_out,
                                          tc_error *err) {
    if (b_rank == -2 || b_rank == -1)
        return TCONV_OK;
    bool wrong = b_rank != 1 || (b_dims[0] >= 0 && c_out >= 0 && b_dims[0] != c_out);
    if (!wrong)
        return TCONV_OK;
    char shape[32 * TC_MAX_SPATIAL + 8] = "[";
    size_t used = 1;
    for (int i = 0; i < b_rank && i < TC_MAX_SPATIAL + 2 && used < sizeof shape; i++) {
        char dim[24];
        if (b_dims[i] >= 0)
            snprintf(dim, sizeof dim, "%lld", (long long)b_dims[i]);
        else
            snprintf(dim, sizeof dim, "?");
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%s", i ? "," : "", dim);
    }
    if (used < sizeof shape)
        snprintf(shape + used, sizeof shape - used, "]");
    if (c_out < 0)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "B must be 1-D (one value per output channel), has shape %s", shape);
    return tc_error_set(err, TCONV_ERR_INVALID,
                        "B must be 1-D with %lld elements (the output channels), has shape %s",
                        (long long)c_out, shape);
}
