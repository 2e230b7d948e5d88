/* TopK keeps the k first of a slice in a heap instead of sorting the whole slice (first_k in
 * kernels_index.c): values and indices against a full sort of each slice (value, then the
 * smaller index on ties) on random shapes, axes, k (0 to the whole axis), largest and smallest,
 * with many ties; slices with a NaN keep the whole sort (the same qsort with the same order as
 * the reference's, so the same result). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_harness.h"

typedef struct ref_item {
    float value;
    int64_t index;
} ref_item;

static int ref_largest(const void *a, const void *b) {
    const ref_item *x = a, *y = b;
    if (x->value != y->value)
        return x->value > y->value ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

static int ref_smallest(const void *a, const void *b) {
    const ref_item *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

static void check_slices(const float *x, const int64_t *dims, int axis, int64_t k, bool largest,
                         const tc_rt_tensor *values, const tc_rt_tensor *indices) {
    int64_t outer = 1, inner = 1, n = dims[axis];
    for (int i = 0; i < axis; i++)
        outer *= dims[i];
    for (int i = axis + 1; i < 3; i++)
        inner *= dims[i];
    ref_item *items = malloc((size_t)n * sizeof *items);
    assert_non_null(items);
    const float *got_v = values->data;
    const int64_t *got_i = indices->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            for (int64_t s = 0; s < n; s++)
                items[s] = (ref_item){x[(o * n + s) * inner + in], s};
            qsort(items, (size_t)n, sizeof *items, largest ? ref_largest : ref_smallest);
            for (int64_t s = 0; s < k; s++) {
                int64_t at = (o * k + s) * inner + in;
                assert_int_equal(got_i[at], items[s].index);
                assert_true(got_v[at] == items[s].value ||
                            (isnan(got_v[at]) && isnan(items[s].value)));
            }
        }
    }
    free(items);
}

static void test_topk_matches_full_sort(void **state) {
    (void)state;
    uint64_t rng = 17;
    for (int c = 0; c < 300; c++) {
        int64_t dims[3] = {kh_rand_range(&rng, 1, 3), kh_rand_range(&rng, 1, 200),
                           kh_rand_range(&rng, 1, 3)};
        int axis = (int)kh_rand_range(&rng, 0, 2);
        int64_t k = kh_rand_range(&rng, 0, dims[axis]);
        bool largest = kh_rand_range(&rng, 0, 1);
        int64_t spread = kh_rand_range(&rng, 0, 1) ? 5 : 100000; /* many ties, or few */
        kernel_harness h;
        kh_init(&h, "TopK", 2);
        h.opset = 11;
        tc_rt_tensor *x = kh_input(&h, 3, dims, NULL);
        float *xv = x->data;
        for (int64_t i = 0; i < x->n_elements; i++)
            xv[i] = c % 6 == 0 && kh_rand_range(&rng, 0, 49) == 0
                        ? NAN
                        : (float)kh_rand_range(&rng, -spread, spread);
        int64_t one = 1;
        kh_input_typed(&h, TCONV_DTYPE_INT64, 1, &one, &k);
        kh_attr_int(&h, "axis", axis);
        kh_attr_int(&h, "largest", largest);
        kh_run_ok(&h);
        check_slices(xv, dims, axis, k, largest, &h.outputs[0], &h.outputs[1]);
        kh_free(&h);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topk_matches_full_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
