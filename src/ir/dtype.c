#include "ir/ir.h"

#include <stdint.h>

typedef struct dtype_info {
    const char *name;
    int bits;
} dtype_info;

static const dtype_info DTYPES[TCONV_DTYPE_MAX + 1] = {
    [TCONV_DTYPE_UNDEFINED] = {"undefined", 0},
    [TCONV_DTYPE_FLOAT] = {"float", 32},
    [TCONV_DTYPE_UINT8] = {"uint8", 8},
    [TCONV_DTYPE_INT8] = {"int8", 8},
    [TCONV_DTYPE_UINT16] = {"uint16", 16},
    [TCONV_DTYPE_INT16] = {"int16", 16},
    [TCONV_DTYPE_INT32] = {"int32", 32},
    [TCONV_DTYPE_INT64] = {"int64", 64},
    [TCONV_DTYPE_STRING] = {"string", 0},
    [TCONV_DTYPE_BOOL] = {"bool", 8},
    [TCONV_DTYPE_FLOAT16] = {"float16", 16},
    [TCONV_DTYPE_DOUBLE] = {"double", 64},
    [TCONV_DTYPE_UINT32] = {"uint32", 32},
    [TCONV_DTYPE_UINT64] = {"uint64", 64},
    [TCONV_DTYPE_COMPLEX64] = {"complex64", 64},
    [TCONV_DTYPE_COMPLEX128] = {"complex128", 128},
    [TCONV_DTYPE_BFLOAT16] = {"bfloat16", 16},
    [TCONV_DTYPE_FLOAT8E4M3FN] = {"float8e4m3fn", 8},
    [TCONV_DTYPE_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 8},
    [TCONV_DTYPE_FLOAT8E5M2] = {"float8e5m2", 8},
    [TCONV_DTYPE_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 8},
    [TCONV_DTYPE_UINT4] = {"uint4", 4},
    [TCONV_DTYPE_INT4] = {"int4", 4},
    [TCONV_DTYPE_FLOAT4E2M1] = {"float4e2m1", 4},
    [TCONV_DTYPE_FLOAT8E8M0] = {"float8e8m0", 8},
    [TCONV_DTYPE_UINT2] = {"uint2", 2},
    [TCONV_DTYPE_INT2] = {"int2", 2},
};

bool tc_dtype_is_known(int dtype) {
    return dtype > TCONV_DTYPE_UNDEFINED && dtype <= TCONV_DTYPE_MAX;
}

const char *tconv_dtype_name(int dtype) {
    return (dtype >= 0 && dtype <= TCONV_DTYPE_MAX) ? DTYPES[dtype].name : "undefined";
}

int tc_dtype_bits(int dtype) {
    return tc_dtype_is_known(dtype) ? DTYPES[dtype].bits : 0;
}

bool tc_range_count_i64(int64_t start, int64_t limit, int64_t delta, int64_t *out) {
    if (delta == 0)
        return false;
    /* in uint64: limit - start + delta - 1 overflows int64 */
    uint64_t span = 0, step = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;
    if (delta > 0 && limit > start)
        span = (uint64_t)limit - (uint64_t)start;
    else if (delta < 0 && limit < start)
        span = (uint64_t)start - (uint64_t)limit;
    uint64_t count = span ? (span - 1) / step + 1 : 0;
    if (count > (uint64_t)INT64_MAX)
        return false;
    *out = (int64_t)count;
    return true;
}

bool tc_split_sizes_cut(const int64_t *sizes, size_t n, int64_t dim) {
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (sizes[i] < 0 || !tc_add_i64(sum, sizes[i], &sum))
            return false;
    }
    return dim < 0 || sum == dim;
}

bool tc_mul_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

bool tc_add_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

bool tc_shape_elements(const int64_t *dims, int rank, int64_t *out) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || !tc_mul_i64(n, dims[i], &n))
            return false;
    }
    *out = n;
    return true;
}

bool tc_dtype_storage_bytes(int dtype, int64_t n_elements, size_t *out_bytes) {
    int bits = tc_dtype_bits(dtype);
    int64_t total_bits;
    if (bits == 0 || n_elements < 0 || !tc_mul_i64(n_elements, bits, &total_bits))
        return false;
    uint64_t bytes = ((uint64_t)total_bits + 7u) / 8u;
    if (bytes > SIZE_MAX)
        return false;
    *out_bytes = (size_t)bytes;
    return true;
}
