/* The shape rules shape inference and the kernels share (ir/shape_rules.h, slice_geometry.h):
 * axes against a rank, one axis of broadcasting (static and symbolic), Reshape's target rules,
 * and Slice's arguments completed by opset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/shape_rules.h"
#include "ir/slice_geometry.h"

static void test_axes(void **state) {
    (void)state;
    int a = -7;
    assert_true(tc_axis_normalize(-1, 4, &a));
    assert_int_equal(a, 3);
    assert_true(tc_axis_normalize(-4, 4, &a));
    assert_int_equal(a, 0);
    assert_false(tc_axis_normalize(4, 4, &a));
    assert_false(tc_axis_normalize(-5, 4, &a));
    assert_false(tc_axis_normalize(0, 0, &a));
    int out[4];
    size_t bad = 99;
    assert_int_equal(tc_axes_normalize((int64_t[]){0, -1}, 2, 3, out, &bad), TC_AXES_OK);
    assert_int_equal(out[1], 2);
    assert_int_equal(tc_axes_normalize((int64_t[]){1, -2}, 2, 3, out, &bad), TC_AXES_REPEATED);
    assert_int_equal(bad, 1);
    assert_int_equal(tc_axes_normalize((int64_t[]){0, 3}, 2, 3, out, &bad), TC_AXES_OUT_OF_RANGE);
    assert_int_equal(bad, 1);
}

static tc_dim st(int64_t v) {
    return (tc_dim){.kind = TCONV_DIM_STATIC, .value = v};
}

static tc_dim sym(const char *p) {
    return (tc_dim){.kind = TCONV_DIM_SYMBOLIC, .param = p};
}

static void test_broadcast_dim(void **state) {
    (void)state;
    tc_dim out, a = st(1), b = st(5), n = sym("N"), m = sym("M");
    assert_true(tc_dim_broadcast(&a, &b, &out));
    assert_int_equal(out.value, 5);
    assert_true(tc_dim_broadcast(&b, &b, &out));
    tc_dim c = st(4);
    assert_false(tc_dim_broadcast(&b, &c, &out));
    assert_true(tc_dim_broadcast(&n, &b, &out)); /* N must be 1 or 5: the result is 5 */
    assert_int_equal(out.kind, TCONV_DIM_STATIC);
    assert_int_equal(out.value, 5);
    assert_true(tc_dim_broadcast(&n, &n, &out));
    assert_string_equal(out.param, "N");
    assert_true(tc_dim_broadcast(&n, &m, &out));
    assert_int_equal(out.kind, TCONV_DIM_UNKNOWN);
    assert_true(tc_dim_broadcast(&a, &n, &out));
    assert_string_equal(out.param, "N");
}

static void test_reshape_target(void **state) {
    (void)state;
    char why[128];
    int m = 7;
    assert_true(
        tc_reshape_target_check((int64_t[]){0, -1}, NULL, 2, false, 3, &m, why, sizeof why));
    assert_int_equal(m, 1);
    assert_false(
        tc_reshape_target_check((int64_t[]){-1, -1}, NULL, 2, false, 3, &m, why, sizeof why));
    assert_string_equal(why, "shape has more than one -1");
    assert_false(
        tc_reshape_target_check((int64_t[]){2, -3}, NULL, 2, false, 3, &m, why, sizeof why));
    assert_false(
        tc_reshape_target_check((int64_t[]){1, 1, 0}, NULL, 3, false, 2, &m, why, sizeof why));
    assert_true(
        tc_reshape_target_check((int64_t[]){1, 1, 0}, NULL, 3, true, 2, &m, why, sizeof why));
    assert_false(
        tc_reshape_target_check((int64_t[]){0, -1}, NULL, 2, true, 3, &m, why, sizeof why));
    /* an entry not known yet is left alone, a 0 with the input's rank unknown too */
    assert_true(tc_reshape_target_check((int64_t[]){-7, 0}, (bool[]){false, true}, 2, false, -1, &m,
                                        why, sizeof why));
    assert_int_equal(m, -1);
}

static void test_slice_args(void **state) {
    (void)state;
    assert_true(tc_slice_args_in_attrs(1));
    assert_false(tc_slice_args_in_attrs(10));
    tc_slice_args a;
    memset(&a, 0, sizeof a);
    a.n = 2;
    tc_error err;
    assert_int_equal(tc_slice_args_complete(&a, 2, false, 0, false, 0, &err), TCONV_OK);
    assert_int_equal(a.axes[1], 1);
    assert_int_equal(a.steps[0], 1);
    assert_int_equal(tc_slice_args_complete(&a, 1, false, 0, false, 0, &err), TCONV_ERR_INVALID);
    assert_int_equal(tc_slice_args_complete(&a, 2, true, 2, true, 3, &err), TCONV_ERR_INVALID);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axes),
        cmocka_unit_test(test_broadcast_dim),
        cmocka_unit_test(test_reshape_target),
        cmocka_unit_test(test_slice_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
