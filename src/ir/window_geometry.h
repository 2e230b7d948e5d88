/* The one place where the sliding window of Conv and pooling (MaxPool, AveragePool, LpPool) is
 * resolved: per spatial axis, the output size and the pads for auto_pad NOTSET/VALID/SAME_*,
 * ceil_mode and dilations (ONNX semantics). Shape inference and the Conv and pooling kernels both
 * call it, so the arithmetic cannot drift between them. ConvTranspose, whose window runs the
 * other way, is in conv_transpose_geometry.h and shares auto_pad and the divisions from here.
 *
 * Output size of one axis, with ke = (k-1)*d + 1:
 *   NOTSET: (x + pb + pe - ke) / s + 1, rounded down, or up with ceil_mode; with ceil_mode the
 *           last window must start inside the input or the left padding, else it is dropped.
 *   VALID:  (x - ke) / s + 1 rounded down, no pads (ceil_mode gives the same size).
 *   SAME_*: ceil(x / s); total pad max(0, (out-1)*s + ke - x), SAME_UPPER puts the odd extra at
 *           the end, SAME_LOWER at the beginning. */
#ifndef TC_IR_WINDOW_GEOMETRY_H
#define TC_IR_WINDOW_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

#define TC_MAX_SPATIAL 8

typedef enum tc_auto_pad {
    TCONV_AUTO_PAD_NOTSET = 0,
    TCONV_AUTO_PAD_VALID,
    TCONV_AUTO_PAD_SAME_UPPER,
    TCONV_AUTO_PAD_SAME_LOWER
} tc_auto_pad;

const char *tc_auto_pad_name(tc_auto_pad auto_pad);

static inline bool tc_auto_pad_is_same(tc_auto_pad auto_pad) {
    return auto_pad == TCONV_AUTO_PAD_SAME_UPPER || auto_pad == TCONV_AUTO_PAD_SAME_LOWER;
}

/* Reads attribute auto_pad: NOTSET (also when absent or "", which some exporters write), VALID,
 * SAME_UPPER or SAME_LOWER. Messages name the node and the attribute, as the IR's getters do. */
tconv_status tc_auto_pad_read(const tconv_node *node, tc_auto_pad *out, tc_error *err);

/* Floor and ceiling division for any sign of a (C's `/` truncates toward zero); b != 0.
 * Inline: the kernels call them per column run. */
static inline int64_t tc_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static inline int64_t tc_ceil_div(int64_t a, int64_t b) {
    return -tc_floor_div(-a, b);
}

/* An optional per-axis INTS attribute that must have `count` values, each >= min_value;
 * `fallback` fills dst when it is absent. *present (may be NULL) says whether it was written.
 * Messages name the node and the attribute. */
tconv_status tc_window_read_axis_ints(const tconv_node *node, const char *name, size_t count,
                                      int64_t fallback, int64_t min_value, int64_t *dst,
                                      bool *present, tc_error *err);

/* The window attributes of a Conv or pooling node. */
typedef struct tc_window_attrs {
    int spatial_rank;
    tc_auto_pad auto_pad;
    bool ceil_mode; /* pooling only: the caller reads it (Conv has none) */
    bool has_kernel_shape;
    int64_t kernel_shape[TC_MAX_SPATIAL]; /* the reader's fallback when absent */
    int64_t strides[TC_MAX_SPATIAL];
    int64_t dilations[TC_MAX_SPATIAL];
    int64_t pads[2 * TC_MAX_SPATIAL]; /* begins then ends, as in ONNX; 0 when absent */
} tc_window_attrs;

/* Reads auto_pad, kernel_shape (kernel_fallback when absent), strides, dilations (>= 1) and pads
 * (>= pad_min) for spatial_rank axes; ceil_mode is left false. */
tconv_status tc_window_read_attrs(const tconv_node *node, int spatial_rank, int64_t kernel_fallback,
                                  int64_t pad_min, tc_window_attrs *out, tc_error *err);

/* One resolved axis. */
typedef struct tc_window_axis {
    int64_t out;       /* output size, >= 1 */
    int64_t pad_begin; /* as written (NOTSET), 0 (VALID) or SAME's split */
    int64_t pad_end;
    int64_t dilated_kernel; /* ke = (k-1)*d + 1 */
} tc_window_axis;

/* Resolves spatial axis `axis` for input size x and kernel size k (W's for Conv, kernel_shape for
 * pooling). TCONV_ERR_INVALID naming the axis when the arithmetic overflows (attribute values are
 * untrusted) or the output would be empty; the caller prefixes the node. */
tconv_status tc_window_resolve_axis(const tc_window_attrs *a, int axis, int64_t x, int64_t k,
                                    tc_window_axis *out, tc_error *err);

/* Whether the output size equals the input size for every input size on this axis (stride 1 and
 * SAME, or pads that cancel the window), so that a symbolic size maps to itself. */
bool tc_window_keeps_size(const tc_window_attrs *a, int axis, int64_t k);

#endif
