/* Helpers shared by kernels: input presence and dtype checks with messages that name the input,
 * attribute whitelists (an attribute a kernel does not know is TCONV_ERR_UNSUPPORTED, never
 * silently ignored), reading small integer/float parameter tensors, and axis normalization.
 * Messages need not name the node: the executor prefixes it. */
#ifndef TC_RUNTIME_KERNEL_UTIL_H
#define TC_RUNTIME_KERNEL_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/compute/compute.h"
#include "ir/window_geometry.h"
#include "runtime/kernels/kernel.h"

#define TC_DTYPE_BIT(d) (UINT32_C(1) << (d))
#define TC_DTYPES_FLOAT TC_DTYPE_BIT(TCONV_DTYPE_FLOAT)
#define TC_DTYPES_DOUBLE TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE)
#define TC_DTYPES_INDEX (TC_DTYPE_BIT(TCONV_DTYPE_INT32) | TC_DTYPE_BIT(TCONV_DTYPE_INT64))
#define TC_DTYPES_NUMERIC (TC_DTYPES_FLOAT | TC_DTYPES_INDEX)
/* Every dtype the runtime stores: data-movement kernels copy elements of any of them. */
#define TC_DTYPES_ANY                                                                              \
    (TC_DTYPE_BIT(TCONV_DTYPE_FLOAT) | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE) |                          \
     TC_DTYPE_BIT(TCONV_DTYPE_FLOAT16) | TC_DTYPE_BIT(TCONV_DTYPE_INT8) |                          \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT8) | TC_DTYPE_BIT(TCONV_DTYPE_INT16) |                           \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT16) | TC_DTYPE_BIT(TCONV_DTYPE_INT32) |                          \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT32) | TC_DTYPE_BIT(TCONV_DTYPE_INT64) |                          \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT64) | TC_DTYPE_BIT(TCONV_DTYPE_BOOL) |                           \
     TC_DTYPE_BIT(TCONV_DTYPE_BFLOAT16) | TC_DTYPES_SMALL)
/* The 8-bit and 4-bit float types and the sub-byte integers, stored a byte an element
 * (ir/minifloat.c); float8e8m0 only as a DequantizeLinear scale. */
#define TC_DTYPES_SMALL                                                                            \
    (TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E4M3FN) | TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E4M3FNUZ) |           \
     TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E5M2) | TC_DTYPE_BIT(TCONV_DTYPE_FLOAT8E5M2FNUZ) |             \
     TC_DTYPE_BIT(TCONV_DTYPE_FLOAT4E2M1) | TC_DTYPE_BIT(TCONV_DTYPE_INT4) |                       \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT4) | TC_DTYPE_BIT(TCONV_DTYPE_INT2) |                            \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT2))
/* float16 and bfloat16: kernels never see them unless their op is listed as moving data
 * (tc_op_half_native): the executor runs the float32 kernel on widened copies. */
#define TC_DTYPES_HALF (TC_DTYPE_BIT(TCONV_DTYPE_FLOAT16) | TC_DTYPE_BIT(TCONV_DTYPE_BFLOAT16))

/* The graph name of input `index` ("" when unnamed or absent), for messages. */
const char *tc_kernel_input_name(const tc_kernel_ctx *ctx, size_t index);

/* The input at index, or an error saying that the required input is missing. */
tconv_status tc_kernel_require_input(const tc_kernel_ctx *ctx, size_t index,
                                     const tc_rt_tensor **out);

/* Both checks: the input at index, required, of a dtype in `mask`. */
tconv_status tc_kernel_require_typed(const tc_kernel_ctx *ctx, size_t index, uint32_t mask,
                                     const tc_rt_tensor **out);

/* TCONV_ERR_UNSUPPORTED "unsupported dtype D for input i ('name') of Op; supported: ..." when
 * the input's dtype is not in `mask` (TC_DTYPE_BIT set). Absent inputs pass. */
tconv_status tc_kernel_check_dtype(const tc_kernel_ctx *ctx, size_t index, uint32_t mask);

/* The same check for a dtype the kernel was asked to produce (e.g. Cast's `to`). */
tconv_status tc_kernel_check_output_dtype(const tc_kernel_ctx *ctx, int dtype, uint32_t mask);

/* An attribute value a kernel does not implement: TCONV_ERR_UNSUPPORTED naming both. */
tconv_status tc_kernel_unsupported_attr(const tc_kernel_ctx *ctx, const char *attr,
                                        const char *value);
/* The same from a kernel's prepare. */
tconv_status tc_prepare_unsupported_attr(const tc_kernel_prepare_ctx *pc, const char *attr,
                                         const char *value);

/* Reads a 1-D (or scalar) int32/int64 tensor into values (at most cap). */
tconv_status tc_kernel_read_ints(const tc_kernel_ctx *ctx, size_t index, int64_t *values,
                                 size_t cap, size_t *count);
/* Reads a 1-D (or scalar) float tensor into values as doubles (at most cap). */
tconv_status tc_kernel_read_floats(const tc_kernel_ctx *ctx, size_t index, double *values,
                                   size_t cap, size_t *count);

/* Maps axis in [-rank, rank) to [0, rank); `what` names the attribute/input for the message. */
tconv_status tc_kernel_normalize_axis(const tc_kernel_ctx *ctx, const char *what, int64_t axis,
                                      int rank, int *out);

/* An index k into an axis of size dim (negative counts from the end) as [0, dim); out of range
 * is TCONV_ERR_INVALID. */
tconv_status tc_kernel_normalize_index(const tc_kernel_ctx *ctx, int64_t k, int64_t dim,
                                       int64_t *out);

/* A value and the index it came from, for sorts that rank values and break ties by the lower
 * index (ONNX's TopK and NonMaxSuppression order). qsort comparators: larger values first /
 * smaller values first, equal values by lower index first. */
typedef struct tc_ranked {
    double value;
    int64_t index;
} tc_ranked;
int tc_ranked_largest_first(const void *a, const void *b);
int tc_ranked_smallest_first(const void *a, const void *b);

/* Allocates output `index` with the input's dtype and shape and copies the data. */
tconv_status tc_kernel_copy_to_output(tc_kernel_ctx *ctx, size_t index, const tc_rt_tensor *src,
                                      int rank, const int64_t *dims);

/* The attributes of a windowed op (Conv, ConvTranspose, the pools), read once when its kernel
 * is prepared (kernel.h) for every spatial rank 1..TC_MAX_SPATIAL its run may meet: their
 * lengths are checked against the rank, which only X tells (and W of a subgraph may be
 * overridden). A read that failed keeps its status and message for the run to report, as the
 * kernel did when it read them on every run. */
typedef tconv_status (*tc_rank_attr_reader)(const tconv_node *node, int spatial_rank, void *out,
                                            tc_error *err);
typedef struct tc_rank_attrs {
    const void *attrs[TC_MAX_SPATIAL + 1]; /* by spatial rank; NULL: failed or not read */
    tconv_status status[TC_MAX_SPATIAL + 1];
    const char *message[TC_MAX_SPATIAL + 1]; /* when status is not TCONV_OK */
} tc_rank_attrs;

/* Fills `out` with `size`-byte reads kept in pc->arena: for spatial rank `only` when the run can
 * meet no other (a failed read formats a message: most of prepare's cost), else (0) for every
 * rank. Fails only for memory. */
tconv_status tc_rank_attrs_read(const tc_kernel_prepare_ctx *pc, tc_rank_attr_reader read,
                                size_t size, int only, tc_rank_attrs *out);
/* The attributes read for spatial_rank, or the read's error. */
tconv_status tc_rank_attrs_get(const tc_kernel_ctx *ctx, const tc_rank_attrs *r, int spatial_rank,
                               const void **out);

#endif
