/* ONNX Slice's per-axis index arithmetic, shared by shape inference and the runtime kernel so
 * that the two can never disagree on which elements a Slice keeps. */
#ifndef TCONV_IR_SLICE_GEOMETRY_H
#define TCONV_IR_SLICE_GEOMETRY_H

#include <stdint.h>

/* Elements Slice keeps on an axis of size dim (>= 0) for start, end and a non-zero step, after
 * ONNX's normalization: negative indices count from the end, then starts and ends are clamped
 * to [0, dim] (positive step) or [0, dim-1] / [-1, dim-1] (negative step). *first is the first
 * index taken. */
int64_t tc_slice_axis_count(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first);

#endif
