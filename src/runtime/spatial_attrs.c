#include "runtime/spatial_attrs.h"

#include <string.h>

tconv_status tc_kernel_read_axis_ints(tc_kernel_ctx *ctx, const char *name, size_t count,
                                      int64_t fallback, int64_t min_value, int64_t *dst,
                                      bool *present) {
    bool has;
    const int64_t *values;
    size_t n;
    tconv_status st = tc_node_attr_ints(ctx->node, name, &has, &values, &n, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (present)
        *present = has;
    if (has && n != count)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "attribute '%s' has %zu values, expected %zu", name, n, count);
    for (size_t i = 0; i < count; i++) {
        dst[i] = has ? values[i] : fallback;
        if (has && dst[i] < min_value)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "attribute '%s' value %lld at index %zu is below %lld", name,
                                (long long)dst[i], i, (long long)min_value);
    }
    return TCONV_OK;
}

tconv_status tc_kernel_read_auto_pad(tc_kernel_ctx *ctx, tc_auto_pad *out) {
    static const tc_auto_pad all[] = {TCONV_AUTO_PAD_NOTSET, TCONV_AUTO_PAD_VALID,
                                      TCONV_AUTO_PAD_SAME_UPPER, TCONV_AUTO_PAD_SAME_LOWER};
    const char *text;
    tconv_status st = tc_node_attr_string(ctx->node, "auto_pad", "NOTSET", &text, ctx->err);
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
    return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                        "attribute 'auto_pad' is '%.64s', not NOTSET, VALID, SAME_UPPER or "
                        "SAME_LOWER",
                        text);
}

tconv_status tc_kernel_window_span(tc_kernel_ctx *ctx, int axis, int64_t x, int64_t k, int64_t d,
                                   int64_t pb, int64_t pe, int64_t *ke, int64_t *span) {
    int64_t padded, same_total; /* x + ke bounds the SAME total pad */
    if (!tc_mul_i64(k - 1, d, ke) || !tc_add_i64(*ke, 1, ke) || !tc_add_i64(x, *ke, &same_total) ||
        !tc_add_i64(x, pb, &padded) || !tc_add_i64(padded, pe, &padded))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "spatial axis %d: kernel %lld, dilation %lld and pads %lld+%lld "
                            "overflow",
                            axis, (long long)k, (long long)d, (long long)pb, (long long)pe);
    *span = padded - *ke;
    return TCONV_OK;
}
