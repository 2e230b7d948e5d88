/* tc_strided_copy against an element-by-element reference, on views whose last axis is short
 * (the block path: DepthToSpace, the phase interleave's Transpose), views whose axes merge, and
 * others, for 1, 2, 4 and 8 byte elements, with negative strides and offsets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "runtime/compute/tensor_copy.h"

/* Element of v at flat output position e (row-major over v->dims), as a source index. */
static int64_t source_index(const tc_strided_view *v, int64_t e) {
    int64_t off = v->offset;
    for (int ax = v->rank - 1; ax >= 0; ax--) {
        off += (e % v->dims[ax]) * v->strides[ax];
        e /= v->dims[ax];
    }
    return off;
}

static void check_view(const tc_strided_view *v, tconv_dtype dtype, size_t esize) {
    int64_t src_dims[1] = {4096}, dst_dims[TC_MAX_RANK];
    memcpy(dst_dims, v->dims, sizeof dst_dims);
    tc_rt_tensor src, dst;
    assert_int_equal(tc_rt_tensor_alloc(&src, dtype, 1, src_dims, NULL), TCONV_OK);
    assert_int_equal(tc_rt_tensor_alloc(&dst, dtype, v->rank, dst_dims, NULL), TCONV_OK);
    for (size_t b = 0; b < src.nbytes; b++)
        ((uint8_t *)src.data)[b] = (uint8_t)(b * 7 + b / 251);
    tc_strided_copy(v, &src, &dst);
    for (int64_t e = 0; e < dst.n_elements; e++) {
        int64_t s = source_index(v, e);
        assert_true(s >= 0 && (s + 1) * (int64_t)esize <= (int64_t)src.nbytes);
        assert_memory_equal((char *)dst.data + e * (int64_t)esize,
                            (char *)src.data + s * (int64_t)esize, esize);
    }
    tc_rt_tensor_release(&src);
    tc_rt_tensor_release(&dst);
}

static void test_short_last_axis(void **state) {
    (void)state;
    static const struct {
        tconv_dtype dtype;
        size_t esize;
    } types[] = {{TCONV_DTYPE_UINT8, 1},
                 {TCONV_DTYPE_FLOAT16, 2},
                 {TCONV_DTYPE_FLOAT, 4},
                 {TCONV_DTYPE_DOUBLE, 8}};
    /* DepthToSpace CRD, N=1 c=3 H=4 bs=2 W=5: (n, c, h, b1, w, b2) */
    tc_strided_view d2s = {6, {1, 3, 4, 2, 5, 2}, {240, 80, 5, 40, 1, 20}, 0};
    /* a Transpose [0,1,4,2,5,3] of (1, 2, 3, 3, 4, 6): last axis 3, next 6 */
    tc_strided_view tr = {6, {1, 2, 4, 3, 6, 3}, {432, 216, 6, 72, 1, 24}, 0};
    /* negative strides and an offset; last axis 2 under 9 */
    tc_strided_view neg = {3, {4, 9, 2}, {-30, 3, -100}, 300};
    /* the row path: a last axis of 8 or more, or under a short one */
    tc_strided_view row = {3, {3, 3, 9}, {100, 30, 3}, 0};
    tc_strided_view narrow = {3, {5, 3, 2}, {50, 7, 20}, 0};
    /* axes that merge (coalesce_view): StyleGAN2's Transpose [0, 2, 1, 3, 4] of (2, 32, 32, 3,
     * 3), its 3x3 taps one 9-float row; axes of one element between them; a view whose every
     * axis merges into one contiguous row; a merge under a negative stride */
    tc_strided_view taps = {5, {2, 8, 4, 3, 3}, {288, 9, 72, 3, 1}, 0};
    tc_strided_view ones = {5, {3, 1, 4, 1, 5}, {20, 999, 5, -7, 1}, 0};
    tc_strided_view whole = {3, {2, 3, 4}, {12, 4, 1}, 17};
    tc_strided_view neg_merge = {3, {3, 2, 5}, {-10, 5, 1}, 40};
    tc_strided_view unit = {2, {1, 1}, {5, 3}, 9};
    const tc_strided_view *views[] = {&d2s,  &tr,   &neg,   &row,       &narrow,
                                      &taps, &ones, &whole, &neg_merge, &unit};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (size_t v = 0; v < sizeof views / sizeof views[0]; v++)
            check_view(views[v], types[t].dtype, types[t].esize);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_last_axis),
    };
    return cmocka_run_group_tests_name("runtime.strided_copy", tests, NULL, NULL);
}
