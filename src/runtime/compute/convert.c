/* Element reads of any stored dtype (through the dtype table) and shape strides and text: below
 * the kernels, because the tensor type, the tensor copies and the executor read them too. */
#include "runtime/compute/convert.h"

#include <math.h>
#include <stdio.h>

double tc_rt_get_f64(const tc_rt_tensor *t, int64_t i) {
    const tc_dtype_traits *traits = tc_dtype_traits_of(t->dtype);
    return traits->get_f64 ? traits->get_f64(t->data, i) : 0.0;
}

/* float -> int64 without undefined behaviour: NaN is 0, out-of-range values saturate. */
static int64_t saturate_f64_to_i64(double v) {
    if (isnan(v))
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

int64_t tc_rt_get_i64(const tc_rt_tensor *t, int64_t i) {
    const tc_dtype_traits *traits = tc_dtype_traits_of(t->dtype);
    if (traits->kind == TC_DTYPE_KIND_UNSIGNED) { /* uint64 past INT64_MAX saturates */
        uint64_t v = traits->get_bits(t->data, i);
        return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    if (traits->get_bits)
        return (int64_t)traits->get_bits(t->data, i);
    return saturate_f64_to_i64(tc_rt_get_f64(t, i));
}

void tc_shape_strides(int rank, const int64_t *dims, int64_t *strides) {
    /* Unsigned: a zero-sized tensor may have other dims whose product overflows; its strides
     * are never used then, and the arithmetic must not be undefined. */
    uint64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = (int64_t)s;
        s *= (uint64_t)dims[i];
    }
}

const char *tc_shape_format(int rank, const int64_t *dims, char *buf, size_t size) {
    size_t used = 0;
    int n = snprintf(buf, size, "[");
    used = n > 0 ? (size_t)n : 0;
    for (int i = 0; i < rank && used < size; i++) {
        n = snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)dims[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}
