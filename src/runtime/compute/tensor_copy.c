/* Strided and indexed element copies, and dtype conversion. */
#include "runtime/compute/tensor_copy.h"

#include <math.h>
#include <string.h>

#include "runtime/compute/convert.h"

void tc_strided_view_init(tc_strided_view *v, const tc_rt_tensor *t) {
    v->rank = t->rank;
    v->offset = 0;
    memcpy(v->dims, t->dims, sizeof v->dims);
    tc_shape_strides(t->rank, t->dims, v->strides);
}

/* Below this many bytes a contiguous row is copied inline: a libc call costs more. */
#define SHORT_COPY_BYTES 64

/* n elements of size esize from src (every `stride` elements) to contiguous dst. */
static void copy_row(char *dst, const char *src, int64_t n, int64_t stride, size_t esize) {
    if (stride == 1) {
        size_t bytes = (size_t)n * esize;
        if (bytes >= SHORT_COPY_BYTES || bytes % 4 != 0) {
            memcpy(dst, src, bytes);
            return;
        }
        for (size_t b = 0; b < bytes; b += 4)
            memcpy(dst + b, src + b, 4);
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

/* dst[i*n + j] = src[i*sm + j*sn] for i < m, j < n: the last two axes of a view whose last one
 * is short (DepthToSpace's and the phase interleave's blocksize), a column j at a time, so that
 * the reads run along i (often contiguous) instead of n-element rows with a row's bookkeeping
 * each. */
static void copy_block(char *dst, const char *src, int64_t m, int64_t sm, int64_t n, int64_t sn,
                       size_t esize) {
    for (int64_t j = 0; j < n; j++) {
        char *d = dst + (size_t)j * esize;
        const char *s = src + (size_t)(j * sn) * esize;
        size_t dstep = (size_t)n * esize, sstep = (size_t)sm * esize;
        switch (esize) {
        case 4:
            for (int64_t i = 0; i < m; i++)
                memcpy(d + (size_t)i * dstep, s + (size_t)i * sstep, 4);
            break;
        case 2:
            for (int64_t i = 0; i < m; i++)
                memcpy(d + (size_t)i * dstep, s + (size_t)i * sstep, 2);
            break;
        default:
            for (int64_t i = 0; i < m; i++)
                memcpy(d + (size_t)i * dstep, s + (size_t)i * sstep, esize);
            break;
        }
    }
}

/* A last axis this short, under a longer one, is copied with the one before it (copy_block). */
#define SHORT_ROW 8

/* The view with each axis that continues the next one in the source (stride = next stride x
 * next dim) merged into it, and axes of one element dropped: the copy's rows as long as the
 * layouts allow (a Transpose that keeps its last axes together, StyleGAN2's [0, 2, 1, 3, 4] of
 * 3x3 taps, copied 12-byte rows one at a time: 40 us for 72 KiB). dst is contiguous in the
 * view's order, so merging view axes keeps its layout. */
static void coalesce_view(const tc_strided_view *v, tc_strided_view *out) {
    out->offset = v->offset;
    out->rank = 0;
    for (int i = 0; i < v->rank; i++) {
        if (v->dims[i] == 1)
            continue;
        int r = out->rank;
        if (r > 0 && out->strides[r - 1] == v->strides[i] * v->dims[i]) {
            out->dims[r - 1] *= v->dims[i];
            out->strides[r - 1] = v->strides[i];
            continue;
        }
        out->dims[r] = v->dims[i];
        out->strides[r] = v->strides[i];
        out->rank++;
    }
    if (out->rank == 0) { /* every axis of one element: one element */
        out->rank = 1;
        out->dims[0] = 1;
        out->strides[0] = 1;
    }
}

void tc_strided_copy(const tc_strided_view *view, const tc_rt_tensor *src, tc_rt_tensor *dst) {
    if (dst->n_elements == 0)
        return;
    tc_strided_view merged;
    const tc_strided_view *v = view;
    if (view->rank > 0) {
        coalesce_view(view, &merged);
        v = &merged;
    }
    size_t esize = tc_rt_dtype_size(src->dtype);
    const char *base = src->data;
    char *out = dst->data;
    if (v->rank == 0) {
        memcpy(out, base + v->offset * (int64_t)esize, esize);
        return;
    }
    int last = v->rank - 1;
    int64_t n = v->dims[last], idx[TC_MAX_RANK] = {0}, offset = v->offset;
    /* the inner axes each step copies: the last, or the last two (copy_block) */
    int inner = v->rank >= 2 && n < SHORT_ROW && v->strides[last] != 1 && v->dims[last - 1] >= 2 * n
                    ? 2
                    : 1;
    int64_t step = inner == 2 ? v->dims[last - 1] * n : n, steps = dst->n_elements / step;
    for (int64_t r = 0; r < steps; r++) {
        char *to = out + (size_t)(r * step) * esize;
        const char *from = base + offset * (int64_t)esize;
        if (inner == 2)
            copy_block(to, from, v->dims[last - 1], v->strides[last - 1], n, v->strides[last],
                       esize);
        else
            copy_row(to, from, n, v->strides[last], esize);
        for (int ax = last - inner; ax >= 0; ax--) {
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

/* The innermost map of an indexed copy cut once into pieces that every row repeats: padding,
 * a stretch of at least INDEXED_MIN_RUN consecutive sources (one memcpy), or a gather of
 * scattered or short stretches (a reflect or edge pad's borders: element by element, where a
 * memcpy call per element cost more than the copy). */
#define INDEXED_MIN_RUN 8
#define INDEXED_MAX_PIECES 64

typedef enum piece_kind { PIECE_FILL, PIECE_RUN, PIECE_GATHER } piece_kind;

typedef struct indexed_piece {
    piece_kind kind;
    int64_t at, len; /* output positions [at, at + len) */
} indexed_piece;

/* Length of the stretch of consecutive sources starting at j. */
static int64_t run_length(const int64_t *inner, int64_t j, int64_t n) {
    int64_t k = j + 1;
    while (k < n && inner[k] >= 0 && inner[k] == inner[k - 1] + 1)
        k++;
    return k - j;
}

/* The pieces of inner[0, n); 0 when there would be more than INDEXED_MAX_PIECES. */
static size_t indexed_pieces(const int64_t *inner, int64_t n, indexed_piece *pieces) {
    size_t count = 0;
    for (int64_t j = 0; j < n;) {
        indexed_piece p = {PIECE_FILL, j, 0};
        if (inner[j] < 0) {
            while (j < n && inner[j] < 0)
                j++;
        } else if (run_length(inner, j, n) >= INDEXED_MIN_RUN) {
            p.kind = PIECE_RUN;
            j += run_length(inner, j, n);
        } else {
            p.kind = PIECE_GATHER;
            while (j < n && inner[j] >= 0 && run_length(inner, j, n) < INDEXED_MIN_RUN)
                j += run_length(inner, j, n);
        }
        p.len = j - p.at;
        if (count == INDEXED_MAX_PIECES)
            return 0;
        pieces[count++] = p;
    }
    return count;
}

static void gather_elements(char *dst, const char *src, const int64_t *index, int64_t n,
                            size_t esize) {
    switch (esize) {
    case 4:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + 4 * i, src + 4 * index[i], 4);
        break;
    case 8:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + 8 * i, src + 8 * index[i], 8);
        break;
    case 2:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + 2 * i, src + 2 * index[i], 2);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + esize * (size_t)i, src + esize * (size_t)index[i], esize);
        break;
    }
}

/* pieced_row for 4-byte elements, every piece inlined (4-byte memcpy calls become moves): a
 * pad's rows are short, and a call per piece was much of their cost. */
static void pieced_row_4(char *row, const char *src, const int64_t *inner,
                         const indexed_piece *pieces, size_t n_pieces, const void *fill) {
    for (size_t i = 0; i < n_pieces; i++) {
        const indexed_piece *p = &pieces[i];
        char *dst = row + 4 * p->at;
        if (p->kind == PIECE_FILL) {
            uint32_t v;
            memcpy(&v, fill, 4);
            for (int64_t k = 0; k < p->len; k++)
                memcpy(dst + 4 * k, &v, 4);
        } else if (p->kind == PIECE_RUN) {
            const char *from = src + 4 * inner[p->at];
            if (p->len <= 16) {
                for (int64_t k = 0; k < p->len; k++)
                    memcpy(dst + 4 * k, from + 4 * k, 4);
            } else {
                memcpy(dst, from, (size_t)p->len * 4);
            }
        } else {
            const int64_t *index = inner + p->at;
            for (int64_t k = 0; k < p->len; k++)
                memcpy(dst + 4 * k, src + 4 * index[k], 4);
        }
    }
}

static void pieced_row(char *row, const char *in, int64_t base, const int64_t *inner,
                       const indexed_piece *pieces, size_t n_pieces, size_t esize,
                       const void *fill) {
    /* An empty input (a Pad whose output is all fill) has no data: no offset from NULL. */
    const char *src = in ? in + (size_t)base * esize : NULL;
    if (esize == 4) {
        pieced_row_4(row, src, inner, pieces, n_pieces, fill);
        return;
    }
    for (size_t i = 0; i < n_pieces; i++) {
        const indexed_piece *p = &pieces[i];
        char *dst = row + (size_t)p->at * esize;
        if (p->kind == PIECE_FILL)
            fill_elements(dst, p->len, esize, fill);
        else if (p->kind == PIECE_RUN)
            memcpy(dst, src + (size_t)inner[p->at] * esize, (size_t)p->len * esize);
        else
            gather_elements(dst, src, inner + p->at, p->len, esize);
    }
}

/* Input offset of the plane at idx (every axis but the last two), or -1 when it is padding. */
static int64_t indexed_plane_offset(const int64_t *idx, int rank, const int64_t *const *maps,
                                    const int64_t *in_strides) {
    return rank < 2 ? 0 : indexed_row_offset(idx, rank - 1, maps, in_strides);
}

/* Plane by plane (every axis but the last two), its rows by the second-last axis' map: a pad's
 * rows are short (CycleGAN's reflect pads, rows of 10), and the offset of each row summed over
 * every axis cost as much as its copy. */
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
    int64_t in_strides[TC_MAX_RANK], idx[TC_MAX_RANK] = {0};
    tc_shape_strides(src->rank, src->dims, in_strides);
    int last = dst->rank - 1;
    int64_t n = dst->dims[last], height = last > 0 ? dst->dims[last - 1] : 1;
    int64_t planes = dst->n_elements / (n * height);
    const int64_t *inner = maps[last], *rows_map = last > 0 ? maps[last - 1] : NULL;
    int64_t row_stride = last > 0 ? in_strides[last - 1] : 0;
    indexed_piece pieces[INDEXED_MAX_PIECES];
    size_t n_pieces = indexed_pieces(inner, n, pieces);
    for (int64_t p = 0; p < planes; p++) {
        int64_t plane = indexed_plane_offset(idx, dst->rank, maps, in_strides);
        for (int64_t y = 0; y < height; y++, out += (size_t)n * esize) {
            int64_t m = rows_map ? rows_map[y] : 0;
            int64_t base = plane < 0 || m < 0 ? -1 : plane + m * row_stride;
            if (base < 0)
                fill_elements(out, n, esize, fill);
            else if (n_pieces > 0)
                pieced_row(out, in, base, inner, pieces, n_pieces, esize, fill);
            else
                indexed_row(out, in, base, inner, n, esize, fill);
        }
        for (int ax = last - 2; ax >= 0; ax--) {
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
    const tc_dtype_traits *traits = tc_dtype_traits_of(t->dtype);
    number n = {NUM_SIGNED, 0.0, 0, 0};
    if (traits->kind == TC_DTYPE_KIND_FLOAT) {
        n.kind = NUM_FLOAT;
        n.f = traits->get_f64(t->data, i);
    } else if (traits->kind == TC_DTYPE_KIND_UNSIGNED) {
        n.kind = NUM_UNSIGNED;
        n.u = traits->get_bits(t->data, i);
    } else if (traits->get_bits) {
        n.i = (int64_t)traits->get_bits(t->data, i);
    }
    return n;
}

/* The number as a two's complement 64-bit pattern, a float truncated and saturated to the
 * range of dtype's row (its min/max). */
static uint64_t number_bits(number n, const tc_dtype_traits *traits) {
    switch (n.kind) {
    case NUM_FLOAT: {
        /* the sub-byte integers keep the low bits of the int64 value (ml_dtypes) */
        const tc_dtype_traits *wide =
            traits->subbyte ? tc_dtype_traits_of(TCONV_DTYPE_INT64) : traits;
        double v = isnan(n.f)
                       ? 0.0
                       : trunc(n.f < wide->min ? wide->min : (n.f > wide->max ? wide->max : n.f));
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

static bool number_nonzero(number n) {
    return n.kind == NUM_FLOAT ? n.f != 0.0 : (n.kind == NUM_UNSIGNED ? n.u != 0 : n.i != 0);
}

/* saturate: how float8 targets take values past their range (tc_double_to_minifloat). */
static void store_number(tconv_dtype dtype, void *data, int64_t i, number n, bool saturate) {
    const tc_dtype_traits *traits = tc_dtype_traits_of(dtype);
    if (traits->kind == TC_DTYPE_KIND_BOOL) {
        traits->set_bits(data, i, number_nonzero(n));
    } else if (traits->set_bits) {
        traits->set_bits(data, i, number_bits(n, traits));
    } else if (dtype == TCONV_DTYPE_FLOAT && n.kind != NUM_FLOAT) {
        /* an integer rounds once, straight to float (not through double) */
        ((float *)data)[i] = n.kind == NUM_UNSIGNED ? (float)n.u : (float)n.i;
    } else if (traits->minifloat && !saturate) {
        ((uint8_t *)data)[i] = tc_double_to_minifloat(dtype, number_f64(n), false);
    } else if (traits->set_f64) {
        traits->set_f64(data, i, number_f64(n));
    }
}

void tc_store_f64(tconv_dtype dtype, void *data, int64_t index, double v) {
    number n = {NUM_FLOAT, v, 0, 0};
    store_number(dtype, data, index, n, true);
}

void tc_store_i64(tconv_dtype dtype, void *data, int64_t index, int64_t v) {
    number n = {NUM_SIGNED, 0.0, v, 0};
    store_number(dtype, data, index, n, true);
}

void tc_convert_elements_saturate(const tc_rt_tensor *src, tc_rt_tensor *dst, bool saturate) {
    if (src->dtype == dst->dtype) {
        if (src->nbytes)
            memcpy(dst->data, src->data, src->nbytes);
        return;
    }
    for (int64_t i = 0; i < src->n_elements; i++)
        store_number(dst->dtype, dst->data, i, load_number(src, i), saturate);
}

void tc_convert_elements(const tc_rt_tensor *src, tc_rt_tensor *dst) {
    tc_convert_elements_saturate(src, dst, true);
}
