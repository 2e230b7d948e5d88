/* Attribute readers shared by the spatial kernels (Conv, ConvTranspose's neighbours, pooling):
 * per-axis INTS lists and auto_pad. Messages name the attribute; the executor prefixes the
 * node. */
#ifndef TCONV_RUNTIME_SPATIAL_ATTRS_H
#define TCONV_RUNTIME_SPATIAL_ATTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/conv_transpose_geometry.h"
#include "runtime/kernel.h"

/* An optional INTS attribute that must have `count` values, each >= min_value; `fallback`
 * fills dst when it is absent (unchecked). *present (may be NULL) says whether it was written. */
tconv_status tc_kernel_read_axis_ints(tc_kernel_ctx *ctx, const char *name, size_t count,
                                      int64_t fallback, int64_t min_value, int64_t *dst,
                                      bool *present);

/* The dilated window ke = (k-1)*d + 1 and the padded span x + pb + pe - ke of one axis, with
 * overflow checks (attribute values are untrusted): TCONV_ERR_INVALID naming the axis. */
tconv_status tc_kernel_window_span(tc_kernel_ctx *ctx, int axis, int64_t x, int64_t k, int64_t d,
                                   int64_t pb, int64_t pe, int64_t *ke, int64_t *span);

/* auto_pad: NOTSET (also when absent or ""), VALID, SAME_UPPER or SAME_LOWER. */
tconv_status tc_kernel_read_auto_pad(tc_kernel_ctx *ctx, tc_auto_pad *out);

#endif
