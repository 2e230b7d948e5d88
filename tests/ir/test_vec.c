/* The growable-array helper (ir/vec.h): doubling from 8, a request past double taken whole, and
 * a byte size past SIZE_MAX refused with the array left as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ir/vec.h"

static void test_appends_keep_elements(void **state) {
    (void)state;
    int64_t *items = NULL;
    size_t n = 0, cap = 0;
    for (int64_t i = 0; i < 1000; i++) {
        assert_true(TC_VEC_RESERVE(items, cap, n + 1));
        assert_true(cap >= n + 1);
        items[n++] = i * 3;
    }
    assert_int_equal(cap, 1024); /* 8 doubled seven times */
    for (size_t i = 0; i < n; i++)
        assert_int_equal(items[i], (int64_t)i * 3);
    free(items);
}

static void test_capacity_rule(void **state) {
    (void)state;
    size_t out = 0;
    assert_true(tc_vec_next_cap(0, 4, 1, &out));
    assert_int_equal(out, 8);
    assert_true(tc_vec_next_cap(8, 4, 9, &out));
    assert_int_equal(out, 16);
    assert_true(tc_vec_next_cap(16, 4, 100, &out));
    assert_int_equal(out, 128);
    /* doubling would pass SIZE_MAX bytes: exactly the request, which fits */
    assert_true(tc_vec_next_cap(SIZE_MAX / 4, 1, SIZE_MAX / 4 + 1, &out));
    assert_true(out >= SIZE_MAX / 4 + 1);
    assert_true(tc_vec_next_cap(SIZE_MAX / 2 + 1, 1, SIZE_MAX / 2 + 2, &out));
    assert_int_equal(out, SIZE_MAX / 2 + 2);
}

static void test_overflow_leaves_array(void **state) {
    (void)state;
    int64_t *items = NULL;
    size_t cap = 0;
    assert_true(TC_VEC_RESERVE(items, cap, 3));
    int64_t *before = items;
    items[0] = 42;
    size_t out = 0;
    assert_false(tc_vec_next_cap(cap, sizeof *items, SIZE_MAX / sizeof *items + 1, &out));
    assert_false(TC_VEC_RESERVE(items, cap, SIZE_MAX / sizeof *items + 1));
    assert_ptr_equal(items, before);
    assert_int_equal(cap, 8);
    assert_int_equal(items[0], 42);
    free(items);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appends_keep_elements),
        cmocka_unit_test(test_capacity_rule),
        cmocka_unit_test(test_overflow_leaves_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
