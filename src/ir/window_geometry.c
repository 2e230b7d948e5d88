#include "ir/window_geometry.h"

#include <string.h>

const char *tc_auto_pad_name(tc_auto_pad auto_pad) {
    switch (auto_pad) {
    case TCONV_AUTO_PAD_NOTSET:
        return "NOTSET";
    case TCONV_AUTO_PAD_VALID:
        return "VALID";
    case TCONV_AUTO_PAD_SAME_UPPER:
        return "SAME_UPPER";
    case TCONV_AUTO_PAD_SAME_LOWER:
        return "SAME_LOWER";
    }
    return "?";
}

tconv_status tc_auto_pad_read(const tconv_node *node, tc_auto_pad *out, tc_error *err) {
    static const tc_auto_pad all[] = {TCONV_AUTO_PAD_NOTSET, TCONV_AUTO_PAD_VALID,
                                      TCONV_AUTO_PAD_SAME_UPPER, TCONV_AUTO_PAD_SAME_LOWER};
    const char *text;
    tconv_status st = tc_node_attr_string(node, "auto_pad", "NOTSET", &text, err);
    if (st != TCONV_OK)
        return st;
    *out = TCONV_AUTO_PAD_NOTSET;
    if (*text == '\0') /* some exporters write "" for the default */
        return TCONV_OK;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, tc_auto_pad_name(all[i])) == 0) {
            *out = all[i];
            return TCONV_OK;
        }
    }
    char where[256];
    return tc_error_set(err, TCONV_ERR_INVALID,
                        "%s: attribute 'auto_pad' is '%.64s', not NOTSET, VALID, SAME_UPPER or "
                        "SAME_LOWER",
                        tc_node_describe(node, where, sizeof where), text);
}

tconv_status tc_window_read_axis_ints(const tconv_node *node, const char *name, size_t count,
                                      int64_t fallback, int64_t min_value, int64_t *dst,
                                      bool *present, tc_error *err) {
    bool has;
    const int64_t *values;
    size_t n;
    tconv_status st = tc_node_attr_ints(node, name, &has, &values, &n, err);
    if (st != TCONV_OK)
        return st;
    if (present)
        *present = has;
    char where[256];
    if (has && n != count)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "%s: attribute '%s' has %zu values, expected %zu",
                            tc_node_describe(node, where, sizeof where), name, n, count);
    for (size_t i = 0; i < count; i++) {
        dst[i] = has ? values[i] : fallback;
        if (has && dst[i] < min_value)
            return tc_error_set(err, TCONV_ERR_INVALID,
                                "%s: attribute '%s' value %lld at index %zu is below %lld",
                                tc_node_describe(node, where, sizeof where), name,
                                (long long)dst[i], i, (long long)min_value);
    }
    return TCONV_OK;
}

tconv_status tc_window_read_attrs(const tconv_node *node, int spatial_rank, int64_t kernel_fallback,
                                  int64_t pad_min, tc_window_attrs *out, tc_error *err) {
    memset(out, 0, sizeof *out);
    out->spatial_rank = spatial_rank;
    size_t r = (size_t)spatial_rank;
    tconv_status st;
    if ((st = tc_auto_pad_read(node, &out->auto_pad, err)) ||
        (st = tc_window_read_axis_ints(node, "kernel_shape", r, kernel_fallback, 1,
                                       out->kernel_shape, &out->has_kernel_shape, err)) ||
        (st = tc_window_read_axis_ints(node, "strides", r, 1, 1, out->strides, NULL, err)) ||
        (st = tc_window_read_axis_ints(node, "dilations", r, 1, 1, out->dilations, NULL, err)))
        return st;
    return tc_window_read_axis_ints(node, "pads", 2 * r, 0, pad_min, out->pads, NULL, err);
}

/* The output size without SAME: floor or (ceil_mode) ceiling of span / s, plus one. */
static int64_t strided_count(const tc_window_attrs *a, int64_t span, int64_t s, int64_t x,
                             int64_t pb) {
    if (!a->ceil_mode || a->auto_pad == TCONV_AUTO_PAD_VALID)
        return tc_floor_div(span, s) + 1;
    int64_t out = tc_ceil_div(span, s) + 1, last_start;
    /* ceil_mode: a last window that would start in the end padding is dropped */
    if (out > 1 && (!tc_mul_i64(out - 1, s, &last_start) || last_start >= x + pb))
        out--;
    return out;
}

tconv_status tc_window_resolve_axis(const tc_window_attrs *a, int axis, int64_t x, int64_t k,
                                    tc_window_axis *out, tc_error *err) {
    int64_t s = a->strides[axis], d = a->dilations[axis];
    bool explicit_pads = a->auto_pad == TCONV_AUTO_PAD_NOTSET;
    int64_t pb = explicit_pads ? a->pads[axis] : 0;
    int64_t pe = explicit_pads ? a->pads[axis + a->spatial_rank] : 0;
    int64_t ke, span, same_total; /* x + ke bounds the SAME total pad */
    if (!tc_mul_i64(k - 1, d, &ke) || !tc_add_i64(ke, 1, &ke) || !tc_add_i64(x, ke, &same_total) ||
        !tc_add_i64(x, pb, &span) || !tc_add_i64(span, pe, &span))
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "spatial axis %d: kernel %lld, dilation %lld and pads %lld+%lld "
                            "overflow",
                            axis, (long long)k, (long long)d, (long long)pb, (long long)pe);
    span -= ke;
    int64_t n;
    if (tc_auto_pad_is_same(a->auto_pad)) {
        n = tc_ceil_div(x, s);
        int64_t total = (n - 1) * s + ke - x;
        total = total > 0 ? total : 0;
        pb = a->auto_pad == TCONV_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        pe = total - pb;
    } else {
        n = strided_count(a, span, s, x, pb);
    }
    if (n < 1)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "output size of spatial axis %d would be %lld (input %lld, "
                            "dilated kernel %lld, stride %lld, pads %lld+%lld)",
                            axis, (long long)n, (long long)x, (long long)ke, (long long)s,
                            (long long)pb, (long long)pe);
    out->out = n;
    out->pad_begin = pb;
    out->pad_end = pe;
    out->dilated_kernel = ke;
    return TCONV_OK;
}

bool tc_window_keeps_size(const tc_window_attrs *a, int axis, int64_t k) {
    int64_t ke, pads;
    if (a->strides[axis] != 1 || !tc_mul_i64(k - 1, a->dilations[axis], &ke) ||
        !tc_add_i64(ke, 1, &ke))
        return false;
    switch (a->auto_pad) {
    case TCONV_AUTO_PAD_SAME_UPPER:
    case TCONV_AUTO_PAD_SAME_LOWER:
        return true;
    case TCONV_AUTO_PAD_VALID:
        return ke == 1;
    case TCONV_AUTO_PAD_NOTSET:
        break;
    }
    return tc_add_i64(a->pads[axis], a->pads[axis + a->spatial_rank], &pads) && ke - 1 == pads;
}
