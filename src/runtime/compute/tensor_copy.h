/* Element movement shared by data-movement kernels: strided views (Slice, Transpose), per-axis
 * index maps (Pad) and dtype conversion (Cast). Elements are moved by size, so every stored
 * dtype works. */
#ifndef TC_RUNTIME_TENSOR_COPY_H
#define TC_RUNTIME_TENSOR_COPY_H

#include <stdint.h>

#include "runtime/compute/rt_tensor.h"

/* Element (dims, strides, offset) of a source tensor; strides may be negative. */
typedef struct tc_strided_view {
    int rank;
    int64_t dims[TC_MAX_RANK];
    int64_t strides[TC_MAX_RANK];
    int64_t offset;
} tc_strided_view;

/* The whole tensor t, row-major. */
void tc_strided_view_init(tc_strided_view *v, const tc_rt_tensor *t);
/* dst (contiguous, shaped v->dims, same dtype) = the elements of src that v describes. */
void tc_strided_copy(const tc_strided_view *v, const tc_rt_tensor *src, tc_rt_tensor *dst);
/* dst[o_0, .., o_k] = src[maps[0][o_0], .., maps[k][o_k]], or *fill where any map is -1. */
void tc_indexed_copy(const tc_rt_tensor *src, tc_rt_tensor *dst, const int64_t *const *maps,
                     const void *fill);

/* Stores v as element index of a dtype buffer (float->int truncates and saturates, NaN -> 0). */
void tc_store_f64(tconv_dtype dtype, void *data, int64_t index, double v);
/* Stores v as element index of a dtype buffer (exact for 64-bit integers; saturates). */
void tc_store_i64(tconv_dtype dtype, void *data, int64_t index, int64_t v);
/* dst (allocated, same shape) = src converted to dst's dtype, as Cast does (float8 targets
 * saturate). */
void tc_convert_elements(const tc_rt_tensor *src, tc_rt_tensor *dst);
/* The same with Cast-19's `saturate` for float8 targets (tc_double_to_minifloat). */
void tc_convert_elements_saturate(const tc_rt_tensor *src, tc_rt_tensor *dst, bool saturate);

#endif
