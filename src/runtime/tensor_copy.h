/* Element movement shared by data-movement kernels: strided views (Slice, Transpose), per-axis
 * index maps (Pad) and dtype conversion (Cast). Elements are moved by size, so every stored
 * dtype works. */
#ifndef TCONV_RUNTIME_TENSOR_COPY_H
#define TCONV_RUNTIME_TENSOR_COPY_H

#include <stdint.h>

#include "runtime/rt_tensor.h"

/* Element (dims, strides, offset) of a source tensor; strides may be negative. */
typedef struct tconv_strided_view {
    int rank;
    int64_t dims[TCONV_MAX_RANK];
    int64_t strides[TCONV_MAX_RANK];
    int64_t offset;
} tconv_strided_view;

/* The whole tensor t, row-major. */
void tconv_strided_view_init(tconv_strided_view *v, const tconv_rt_tensor *t);
/* dst (contiguous, shaped v->dims, same dtype) = the elements of src that v describes. */
void tconv_strided_copy(const tconv_strided_view *v, const tconv_rt_tensor *src,
                        tconv_rt_tensor *dst);
/* dst[o_0, .., o_k] = src[maps[0][o_0], .., maps[k][o_k]], or *fill where any map is -1. */
void tconv_indexed_copy(const tconv_rt_tensor *src, tconv_rt_tensor *dst,
                        const int64_t *const *maps, const void *fill);

/* Stores v as element index of a dtype buffer (float->int truncates and saturates, NaN -> 0). */
void tconv_store_f64(tconv_dtype dtype, void *data, int64_t index, double v);
/* dst (allocated, same shape) = src converted to dst's dtype, as Cast does. */
void tconv_convert_elements(const tconv_rt_tensor *src, tconv_rt_tensor *dst);

#endif
