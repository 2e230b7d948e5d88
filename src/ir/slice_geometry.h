/* ONNX Slice's per-axis index arithmetic, shared by shape inference and the runtime kernel so
 * that the two can never disagree on which elements a Slice keeps. */
#ifndef TC_IR_SLICE_GEOMETRY_H
#define TC_IR_SLICE_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Elements Slice keeps on an axis of size dim (>= 0) for start, end and a non-zero step, after
 * ONNX's normalization: negative indices count from the end, then starts and ends are clamped
 * to [0, dim] (positive step) or [0, dim-1] / [-1, dim-1] (negative step). *first is the first
 * index taken. */
int64_t tc_slice_axis_count(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first);

/* Where Slice keeps its arguments: the attributes starts, ends, axes at Slice-1 (no steps), the
 * inputs 1 starts, 2 ends, 3 axes, 4 steps (3 and 4 optional) from Slice-10 on. */
static inline bool tc_slice_args_in_attrs(int64_t opset) {
    return opset < 10;
}
enum { TC_SLICE_STARTS = 1, TC_SLICE_ENDS, TC_SLICE_AXES, TC_SLICE_STEPS };

/* Slice's arguments, as given (axes not yet normalized against a rank). */
typedef struct tc_slice_args {
    int64_t starts[TC_MAX_RANK], ends[TC_MAX_RANK], axes[TC_MAX_RANK];
    int64_t steps[TC_MAX_RANK];
    size_t n;
} tc_slice_args;

/* Slice-1's attributes into args, completed (below). TCONV_ERR_INVALID when starts or ends is
 * missing or the lengths differ, TCONV_ERR_UNSUPPORTED past TC_MAX_RANK values. */
tconv_status tc_slice_args_from_attrs(const tconv_node *node, tc_slice_args *args, tc_error *err);

/* Completes arguments read from Slice-10's inputs (args->n: the starts' length; the others'
 * lengths as read, has_axes/has_steps false where the input is omitted): the lengths must agree
 * (TCONV_ERR_INVALID), omitted axes are 0..n-1 and omitted steps 1. */
tconv_status tc_slice_args_complete(tc_slice_args *args, size_t n_ends, bool has_axes,
                                    size_t n_axes, bool has_steps, size_t n_steps, tc_error *err);

#endif
