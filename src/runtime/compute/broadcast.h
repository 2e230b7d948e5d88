/* Numpy-style (ONNX "multidirectional") broadcasting: the shape rule and a row iterator that
 * elementwise kernels use to walk several operands of different shapes in step. */
#ifndef TC_RUNTIME_BROADCAST_H
#define TC_RUNTIME_BROADCAST_H

#include <stddef.h>
#include <stdint.h>

#include "ir/error.h"
#include "runtime/compute/rt_tensor.h"

#define TC_BCAST_MAX_OPERANDS 4

/* The broadcast shape of n shapes (right-aligned; each dim equal or 1). An incompatible pair is
 * TCONV_ERR_INVALID naming the operands, the axis and the two dims. */
tconv_status tc_broadcast_shape(size_t n, const int *ranks, const int64_t *const *dims,
                                int *out_rank, int64_t *out_dims, tc_error *err);

/* Element strides for reading a tensor of shape (rank, dims) as the broadcast shape
 * (out_rank, out_dims): 0 on broadcast axes (missing or size 1). */
void tc_broadcast_strides(int rank, const int64_t *dims, int out_rank, const int64_t *out_dims,
                          int64_t *strides);

/* Walks the output of a broadcast operation row by row. Axes that can be merged are merged, so
 * rows are as long as possible; within a row operand k advances by inner_stride[k] (0 or 1). */
typedef struct tc_bcast {
    size_t n_operands;
    int out_rank; /* the broadcast shape, for allocating the output */
    int64_t out_dims[TC_MAX_RANK];
    int64_t n_elements;

    int rank; /* collapsed iteration space (at least 1 axis) */
    int64_t dims[TC_MAX_RANK];
    int64_t strides[TC_BCAST_MAX_OPERANDS][TC_MAX_RANK];
    int64_t row_length;
    int64_t inner_stride[TC_BCAST_MAX_OPERANDS];
    int64_t n_rows;
} tc_bcast;

/* Prepares iteration over n (<= TC_BCAST_MAX_OPERANDS) operands. */
tconv_status tc_bcast_init(tc_bcast *b, size_t n, const tc_rt_tensor *const *operands,
                           tc_error *err);

/* Cursor over rows: offsets[k] is the element offset of operand k at the row's start. */
typedef struct tc_bcast_cursor {
    int64_t index[TC_MAX_RANK];
    int64_t offsets[TC_BCAST_MAX_OPERANDS];
} tc_bcast_cursor;

void tc_bcast_cursor_init(const tc_bcast *b, tc_bcast_cursor *c);
/* Moves to the next row (call n_rows - 1 times). */
void tc_bcast_cursor_next(const tc_bcast *b, tc_bcast_cursor *c);
/* Moves to row `row` (0 <= row < n_rows) directly, so that threads can start mid-way. */
void tc_bcast_cursor_seek(const tc_bcast *b, tc_bcast_cursor *c, int64_t row);

#endif
