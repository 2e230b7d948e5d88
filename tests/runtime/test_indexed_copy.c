/* tc_indexed_copy (src/runtime/compute/tensor_copy.c), the element mover of Pad and of Gather's
 * blocks, against a plain per-element reference: inner maps that mix padding, long consecutive
 * runs, short and reversed stretches (a reflect pad's borders), more pieces than it precomputes,
 * every element size, ranks 1 to 4 with whole planes in the padding. */
#include "rt_test_util.h"

#include "runtime/compute/tensor_copy.h"

#define ROWS 3
#define MAX_N 400

/* The reference: dst[r, o] = src[rows_map[r], inner[o]], or fill where a map is -1. */
static void reference(const tc_rt_tensor *src, const int64_t *rows_map, const int64_t *inner,
                      int64_t n, const void *fill, char *want) {
    size_t esize = tc_rt_dtype_size(src->dtype);
    for (int64_t r = 0; r < ROWS; r++)
        for (int64_t o = 0; o < n; o++) {
            char *d = want + (size_t)(r * n + o) * esize;
            if (rows_map[r] < 0 || inner[o] < 0)
                memcpy(d, fill, esize);
            else
                memcpy(d,
                       (const char *)src->data +
                           (size_t)(rows_map[r] * src->dims[1] + inner[o]) * esize,
                       esize);
        }
}

static void check_maps(tconv_dtype dtype, const int64_t *inner, int64_t n, int64_t src_cols) {
    int64_t src_dims[2] = {2, src_cols}, dst_dims[2] = {ROWS, n};
    int64_t rows_map[ROWS] = {1, -1, 0};
    tc_rt_tensor src = rtt_tensor(dtype, 2, src_dims, NULL);
    unsigned char *bytes = src.data;
    for (size_t i = 0; i < src.nbytes; i++)
        bytes[i] = (unsigned char)(i * 37 + 11);
    tc_rt_tensor dst = rtt_tensor(dtype, 2, dst_dims, NULL);
    unsigned char fill[8] = {0xA5, 0x5A, 0xC3, 0x3C, 0x96, 0x69, 0xF0, 0x0F};
    const int64_t *maps[2] = {rows_map, inner};
    tc_indexed_copy(&src, &dst, maps, fill);
    static char want[ROWS * MAX_N * 8];
    reference(&src, rows_map, inner, n, fill, want);
    assert_memory_equal(dst.data, want, dst.nbytes);
    tc_rt_tensor_release(&src);
    tc_rt_tensor_release(&dst);
}

static void check_all_sizes(const int64_t *inner, int64_t n, int64_t src_cols) {
    const tconv_dtype dtypes[] = {TCONV_DTYPE_UINT8, TCONV_DTYPE_FLOAT16, TCONV_DTYPE_FLOAT,
                                  TCONV_DTYPE_DOUBLE};
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        check_maps(dtypes[i], inner, n, src_cols);
}

/* Reflect pad by 3 of 32 columns: 3 reversed, 32 consecutive, 3 reversed; and by 1 of 8
 * (every stretch short); then the same with constant padding around. */
static void test_reflect_borders(void **state) {
    (void)state;
    int64_t inner[MAX_N];
    for (int64_t cols = 8; cols <= 32; cols += 24) {
        int64_t pad = cols == 8 ? 1 : 3, n = cols + 2 * pad;
        for (int64_t o = 0; o < n; o++) {
            int64_t j = o - pad;
            inner[o] = j < 0 ? -j : (j >= cols ? 2 * (cols - 1) - j : j);
        }
        check_all_sizes(inner, n, cols);
        for (int64_t o = 0; o < n; o++)
            inner[o] = (o < 2 || o >= n - 5) ? -1 : inner[o];
        check_all_sizes(inner, n, cols);
    }
}

/* Stretches of every length from 1 to 12 around INDEXED_MIN_RUN, padding between some. */
static void test_mixed_stretches(void **state) {
    (void)state;
    int64_t inner[MAX_N], n = 0, next = 0;
    for (int64_t len = 1; len <= 12; len++) {
        for (int64_t k = 0; k < len; k++)
            inner[n++] = next + k;
        next += len + 3;
        if (len % 3 == 0)
            inner[n++] = -1;
    }
    check_all_sizes(inner, n, next);
}

/* More pieces than the precomputed table holds: runs of 8 apart, with padding between. */
static void test_many_pieces(void **state) {
    (void)state;
    int64_t inner[MAX_N], n = 0;
    for (int64_t run = 0; run < 40; run++) {
        for (int64_t k = 0; k < 8; k++)
            inner[n++] = run * 9 + k;
        inner[n++] = -1;
    }
    check_all_sizes(inner, n, 40 * 9);
}

/* Ranks 1 to 4, planes and rows of the outer axes in the padding (a map of -1 on an axis before
 * the last two fills the whole plane), reflect maps on the last two: against the per-element
 * definition dst[i] = src[map_0[i_0], ..., map_r[i_r]], the fill where any map is -1. */
static void test_ranks_and_planes(void **state) {
    (void)state;
    /* per axis: the output size and the map; the source dims are 3 on every axis */
    static const int64_t maps_4d[4][6] = {
        {2, -1, 0}, {1, 0, -1, 2}, {1, 0, 1, 2, 1}, {2, 1, 0, 1, 2, 1}};
    static const int64_t out_4d[4] = {3, 4, 5, 6};
    for (int rank = 1; rank <= 4; rank++) {
        int64_t src_dims[4], dst_dims[4];
        const int64_t *maps[4];
        for (int ax = 0; ax < rank; ax++) {
            int from = 4 - rank + ax; /* the last `rank` axes of the 4-D case */
            src_dims[ax] = 3;
            dst_dims[ax] = out_4d[from];
            maps[ax] = maps_4d[from];
        }
        tc_rt_tensor src = rtt_tensor(TCONV_DTYPE_FLOAT, rank, src_dims, NULL);
        tc_rt_tensor dst = rtt_tensor(TCONV_DTYPE_FLOAT, rank, dst_dims, NULL);
        float *x = src.data, *y = dst.data, fill = -7.5f;
        for (int64_t i = 0; i < src.n_elements; i++)
            x[i] = (float)i;
        tc_indexed_copy(&src, &dst, maps, &fill);
        for (int64_t i = 0; i < dst.n_elements; i++) {
            int64_t rest = i, at = 0, scale = 1;
            bool padding = false;
            for (int ax = rank - 1; ax >= 0; ax--) {
                int64_t m = maps[ax][rest % dst_dims[ax]];
                rest /= dst_dims[ax];
                padding = padding || m < 0;
                at += m * scale;
                scale *= src_dims[ax];
            }
            float want = padding ? fill : x[at];
            assert_memory_equal(&y[i], &want, sizeof want);
        }
        tc_rt_tensor_release(&src);
        tc_rt_tensor_release(&dst);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reflect_borders),
        cmocka_unit_test(test_mixed_stretches),
        cmocka_unit_test(test_many_pieces),
        cmocka_unit_test(test_ranks_and_planes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
