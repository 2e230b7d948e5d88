/* Strided and indexed element copies, and dtype conversion. */
#include "runtime/tensor_copy.h"

#include <math.h>
#include <string.h>

#include "runtime/kernel_util.h"

void tc_strided_view_init(tc_strided_view *v, const tc_rt_tensor *t) {
    v->rank = t->rank;
    v->offset = 0;
    memcpy(v->dims, t->dims, sizeof v->dims);
    tc_shape_strides(t->rank, t->dims, v->strides);
}

/* n elements of size esize from src (every `stride` elements) to contiguous dst. */
static void copy_row(char *dst, const char *src, int64_t n, int64_t stride, size_t esize) {
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * esize);
        return;
    }
    switch (esize) {
    case 1:
        for (int64_t j = 0; j < n; j++)
            ((uint8_t *)dst)[j] = ((const uint8_t *)src)[j * stride];
        break;
    case 2:
        for (int64_t j = 0; j < n; j++)
            memcpy(dst + 2 * j, src + 2 * j * stride, 2);
        break;
    case 4:
        for (int64_t j = 0; j < n; j++)
            memcpy(dst + 4 * j, src + 4 * j * stride, 4);
        break;
    default:
        for (int64_t j = 0; j < n; j++)
            memcpy(dst + 8 * j, src + 8 * j * stride, 8);
        break;
    }
}

void tc_strided_copy(const tc_strided_view *v, const tc_rt_tensor *src, tc_rt_tensor *dst) {
    if (dst->n_elements == 0)
        return;
    size_t esize = tc_rt_dtype_size(src->dtype);
    const char *base = src->data;
    char *out = dst->data;
    if (v->rank == 0) {
        memcpy(out, base + v->offset * (int64_t)esize, esize);
        return;
    }
    int last = v->rank - 1;
    int64_t n = v->dims[last], idx[TCONV_MAX_RANK] = {0}, offset = v->offset;
    int64_t rows = dst->n_elements / n;
    for (int64_t r = 0; r < rows; r++) {
        copy_row(out + (size_t)(r * n) * esize, base + offset * (int64_t)esize, n, v->strides[last],
                 esize);
        for (int ax = last - 1; ax >= 0; ax--) {
            offset += v->strides[ax];
            if (++idx[ax] < v->dims[ax])
                break;
            offset -= v->strides[ax] * v->dims[ax];
            idx[ax] = 0;
        }
    }
}

/* Input offset of an output row (all axes but the last), or -1 when the row is padding. */
static int64_t indexed_row_offset(const int64_t *idx, int rank, const int64_t *const *maps,
                                  const int64_t *in_strides) {
    int64_t off = 0;
    for (int ax = 0; ax < rank - 1; ax++) {
        int64_t m = maps[ax][idx[ax]];
        if (m < 0)
            return -1;
        off += m * in_strides[ax];
    }
    return off;
}

/* count copies of the element at fill. */
static void fill_elements(char *dst, int64_t count, size_t esize, const void *fill) {
    if (esize == 4) {
        uint32_t v;
        memcpy(&v, fill, 4);
        for (int64_t i = 0; i < count; i++)
            memcpy(dst + 4 * i, &v, 4);
        return;
    }
    for (int64_t i = 0; i < count; i++)
        memcpy(dst + (size_t)i * esize, fill, esize);
}

/* One output row: runs of consecutive source positions are copied with one memcpy, padding
 * runs filled (base < 0: the whole row is padding). */
static void indexed_row(char *row, const char *in, int64_t base, const int64_t *inner, int64_t n,
                        size_t esize, const void *fill) {
    if (base < 0) {
        fill_elements(row, n, esize, fill);
        return;
    }
    for (int64_t j = 0, k; j < n; j = k) {
        k = j + 1;
        if (inner[j] < 0) {
            while (k < n && inner[k] < 0)
                k++;
            fill_elements(row + (size_t)j * esize, k - j, esize, fill);
        } else {
            while (k < n && inner[k] == inner[k - 1] + 1)
                k++;
            memcpy(row + (size_t)j * esize, in + (size_t)(base + inner[j]) * esize,
                   (size_t)(k - j) * esize);
        }
    }
}

void tc_indexed_copy(const tc_rt_tensor *src, tc_rt_tensor *dst, const int64_t *const *maps,
                     const void *fill) {
    if (dst->n_elements == 0)
        return;
    size_t esize = tc_rt_dtype_size(src->dtype);
    const char *in = src->data;
    char *out = dst->data;
    if (dst->rank == 0) {
        memcpy(out, in, esize);
        return;
    }
    int64_t in_strides[TCONV_MAX_RANK], idx[TCONV_MAX_RANK] = {0};
    tc_shape_strides(src->rank, src->dims, in_strides);
    int last = dst->rank - 1;
    int64_t n = dst->dims[last], rows = dst->n_elements / n;
    const int64_t *inner = maps[last];
    for (int64_t r = 0; r < rows; r++) {
        int64_t base = indexed_row_offset(idx, dst->rank, maps, in_strides);
        indexed_row(out + (size_t)(r * n) * esize, in, base, inner, n, esize, fill);
        for (int ax = last - 1; ax >= 0; ax--) {
            if (++idx[ax] < dst->dims[ax])
                break;
            idx[ax] = 0;
        }
    }
}

/* ---------------------------------------------------------------- conversion */

typedef enum number_kind { NUM_FLOAT, NUM_SIGNED, NUM_UNSIGNED } number_kind;

typedef struct number {
    number_kind kind;
    double f;
    int64_t i;
    uint64_t u;
} number;

static number load_number(const tc_rt_tensor *t, int64_t i) {
    number n = {NUM_SIGNED, 0.0, 0, 0};
    switch (t->dtype) {
    case TCONV_DTYPE_FLOAT:
    case TCONV_DTYPE_DOUBLE:
    case TCONV_DTYPE_FLOAT16:
        n.kind = NUM_FLOAT;
        n.f = tc_rt_get_f64(t, i);
        break;
    case TCONV_DTYPE_UINT64:
        n.kind = NUM_UNSIGNED;
        n.u = ((const uint64_t *)t->data)[i];
        break;
    case TCONV_DTYPE_INT64:
        n.i = ((const int64_t *)t->data)[i];
        break;
    default:
        n.i = (int64_t)tc_rt_get_f64(t, i);
        break; /* exact for <= 32-bit ints, bool */
    }
    return n;
}

static double clamp_double(double v, double lo, double hi) {
    if (isnan(v))
        return 0.0;
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The number as a two's complement 64-bit pattern (floats truncated and saturated to
 * [lo, hi]). */
static uint64_t number_bits(number n, double lo, double hi) {
    switch (n.kind) {
    case NUM_FLOAT: {
        double v = trunc(clamp_double(n.f, lo, hi));
        if (v >= 9223372036854775808.0)
            return (uint64_t)v;
        return (uint64_t)(int64_t)(v >= -9223372036854775808.0 ? v : -9223372036854775808.0);
    }
    case NUM_UNSIGNED:
        return n.u;
    case NUM_SIGNED:
        break;
    }
    return (uint64_t)n.i;
}

static double number_f64(number n) {
    return n.kind == NUM_FLOAT ? n.f : (n.kind == NUM_UNSIGNED ? (double)n.u : (double)n.i);
}

static float number_f32(number n) {
    return n.kind == NUM_FLOAT ? (float)n.f : (n.kind == NUM_UNSIGNED ? (float)n.u : (float)n.i);
}

static bool number_nonzero(number n) {
    return n.kind == NUM_FLOAT ? n.f != 0.0 : (n.kind == NUM_UNSIGNED ? n.u != 0 : n.i != 0);
}

static void store_number(tconv_dtype dtype, void *data, int64_t i, number n) {
    switch (dtype) {
    case TCONV_DTYPE_FLOAT:
        ((float *)data)[i] = number_f32(n);
        break;
    case TCONV_DTYPE_DOUBLE:
        ((double *)data)[i] = number_f64(n);
        break;
    case TCONV_DTYPE_FLOAT16:
        ((uint16_t *)data)[i] = tc_float_to_half(number_f32(n));
        break;
    case TCONV_DTYPE_BOOL:
        ((uint8_t *)data)[i] = number_nonzero(n) ? 1 : 0;
        break;
    case TCONV_DTYPE_INT8:
        ((int8_t *)data)[i] = (int8_t)number_bits(n, -128.0, 127.0);
        break;
    case TCONV_DTYPE_UINT8:
        ((uint8_t *)data)[i] = (uint8_t)number_bits(n, 0.0, 255.0);
        break;
    case TCONV_DTYPE_INT16:
        ((int16_t *)data)[i] = (int16_t)number_bits(n, -32768.0, 32767.0);
        break;
    case TCONV_DTYPE_UINT16:
        ((uint16_t *)data)[i] = (uint16_t)number_bits(n, 0.0, 65535.0);
        break;
    case TCONV_DTYPE_INT32:
        ((int32_t *)data)[i] = (int32_t)number_bits(n, -2147483648.0, 2147483647.0);
        break;
    case TCONV_DTYPE_UINT32:
        ((uint32_t *)data)[i] = (uint32_t)number_bits(n, 0.0, 4294967295.0);
        break;
    case TCONV_DTYPE_INT64:
        ((int64_t *)data)[i] =
            (int64_t)number_bits(n, -9223372036854775808.0, 9223372036854774784.0);
        break;
    case TCONV_DTYPE_UINT64:
        ((uint64_t *)data)[i] = number_bits(n, 0.0, 18446744073709549568.0);
        break;
    default:
        break;
    }
}

void tc_store_f64(tconv_dtype dtype, void *data, int64_t index, double v) {
    number n = {NUM_FLOAT, v, 0, 0};
    store_number(dtype, data, index, n);
}

void tc_store_i64(tconv_dtype dtype, void *data, int64_t index, int64_t v) {
    number n = {NUM_SIGNED, 0.0, v, 0};
    store_number(dtype, data, index, n);
}

void tc_convert_elements(const tc_rt_tensor *src, tc_rt_tensor *dst) {
    if (src->dtype == dst->dtype) {
        if (src->nbytes)
            memcpy(dst->data, src->data, src->nbytes);
        return;
    }
    for (int64_t i = 0; i < src->n_elements; i++)
        store_number(dst->dtype, dst->data, i, load_number(src, i));
}
