/* Element reads of any stored dtype, shape strides and text, and float16 conversions in bulk
 * (convert.c, half_convert.c): below the kernels, because the tensor type, the tensor copies and
 * the executor use them too. */
#ifndef TC_RUNTIME_CONVERT_H
#define TC_RUNTIME_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/compute/rt_tensor.h"

/* Element i of a tensor of any stored numeric dtype as double / as int64. */
double tc_rt_get_f64(const tc_rt_tensor *t, int64_t i);
int64_t tc_rt_get_i64(const tc_rt_tensor *t, int64_t i);

/* Row-major strides (in elements) of a shape. */
void tc_shape_strides(int rank, const int64_t *dims, int64_t *strides);

/* "[1,3,224,224]" into buf. */
const char *tc_shape_format(int rank, const int64_t *dims, char *buf, size_t size);

/* n float16 values <-> float at once (half_convert.c: F16C where the CPU has it, the same bits
 * as the scalar tc_half_to_float / tc_float_to_half of ir/dtype.h). */
void tc_half_to_float_n(const uint16_t *in, float *out, int64_t n);
void tc_float_to_half_n(const float *in, uint16_t *out, int64_t n);

#endif
