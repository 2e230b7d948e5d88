/* The Conv/pooling window geometry (ir/window_geometry.h) on hand-worked axes: each auto_pad
 * mode, SAME's odd pad on either side, ceil_mode's dropped last window, dilation, the overflow
 * and empty-output errors, the symbolic-size rule and the one auto_pad parser. The conformance
 * tests check the same code through the kernels and shape inference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/window_geometry.h"

/* One spatial axis with the given attributes. */
static tc_window_attrs one_axis(tc_auto_pad auto_pad, int64_t s, int64_t d, int64_t pb, int64_t pe,
                                bool ceil_mode) {
    tc_window_attrs a;
    memset(&a, 0, sizeof a);
    a.spatial_rank = 1;
    a.auto_pad = auto_pad;
    a.ceil_mode = ceil_mode;
    a.strides[0] = s;
    a.dilations[0] = d;
    a.pads[0] = pb;
    a.pads[1] = pe;
    return a;
}

static tc_window_axis resolve_ok(const tc_window_attrs *a, int64_t x, int64_t k) {
    tc_window_axis axis;
    tc_error err;
    if (tc_window_resolve_axis(a, 0, x, k, &axis, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    return axis;
}

static void test_notset_floor_and_ceil_mode(void **state) {
    (void)state;
    /* x 6, k 3, s 2, pads 1+0: span 4, floor 2+1 = 3; ceil_mode also 3 */
    tc_window_attrs a = one_axis(TCONV_AUTO_PAD_NOTSET, 2, 1, 1, 0, false);
    assert_int_equal(resolve_ok(&a, 6, 3).out, 3);
    /* x 5, k 2, s 2, no pads: span 3 -> floor 2, ceil 3 (last window starts at 4 < 5: kept) */
    a = one_axis(TCONV_AUTO_PAD_NOTSET, 2, 1, 0, 0, false);
    assert_int_equal(resolve_ok(&a, 5, 2).out, 2);
    a.ceil_mode = true;
    assert_int_equal(resolve_ok(&a, 5, 2).out, 3);
    /* x 4, k 1, s 2, pads 0+1: span 4 -> ceil 2+1 = 3, but window 2 would start at 4, in the
     * end pad: dropped */
    a = one_axis(TCONV_AUTO_PAD_NOTSET, 2, 1, 0, 1, true);
    assert_int_equal(resolve_ok(&a, 4, 1).out, 2);
    tc_window_axis axis = resolve_ok(&a, 4, 1);
    assert_int_equal(axis.pad_begin, 0);
    assert_int_equal(axis.pad_end, 1);
}

static void test_valid_ignores_pads_and_ceil_mode(void **state) {
    (void)state;
    tc_window_attrs a = one_axis(TCONV_AUTO_PAD_VALID, 2, 1, 5, 5, true);
    tc_window_axis axis = resolve_ok(&a, 5, 2); /* (5 - 2) / 2 + 1 = 2, rounded down */
    assert_int_equal(axis.out, 2);
    assert_int_equal(axis.pad_begin, 0);
    assert_int_equal(axis.pad_end, 0);
}

static void test_same_splits_the_odd_pad(void **state) {
    (void)state;
    /* x 5, k 4, s 1: out 5, total pad 3: UPPER 1+2, LOWER 2+1 */
    tc_window_attrs a = one_axis(TCONV_AUTO_PAD_SAME_UPPER, 1, 1, 9, 9, false);
    tc_window_axis axis = resolve_ok(&a, 5, 4);
    assert_int_equal(axis.out, 5);
    assert_int_equal(axis.pad_begin, 1);
    assert_int_equal(axis.pad_end, 2);
    a.auto_pad = TCONV_AUTO_PAD_SAME_LOWER;
    axis = resolve_ok(&a, 5, 4);
    assert_int_equal(axis.pad_begin, 2);
    assert_int_equal(axis.pad_end, 1);
    /* x 7, k 3, s 3: out ceil(7/3) = 3, total (3-1)*3 + 3 - 7 = 2 */
    a = one_axis(TCONV_AUTO_PAD_SAME_UPPER, 3, 1, 0, 0, false);
    axis = resolve_ok(&a, 7, 3);
    assert_int_equal(axis.out, 3);
    assert_int_equal(axis.pad_begin + axis.pad_end, 2);
}

static void test_dilation_widens_the_window(void **state) {
    (void)state;
    tc_window_attrs a = one_axis(TCONV_AUTO_PAD_NOTSET, 1, 3, 0, 0, false);
    tc_window_axis axis = resolve_ok(&a, 10, 3); /* ke = 7: 10 - 7 + 1 = 4 */
    assert_int_equal(axis.dilated_kernel, 7);
    assert_int_equal(axis.out, 4);
}

static void test_errors_name_the_axis(void **state) {
    (void)state;
    tc_window_attrs a = one_axis(TCONV_AUTO_PAD_NOTSET, 1, 1, 0, 0, false);
    tc_window_axis axis;
    tc_error err;
    assert_int_equal(tc_window_resolve_axis(&a, 0, 2, 5, &axis, &err), TCONV_ERR_INVALID);
    assert_non_null(strstr(err.message, "spatial axis 0 would be"));
    a.dilations[0] = INT64_MAX / 2;
    assert_int_equal(tc_window_resolve_axis(&a, 0, 2, 5, &axis, &err), TCONV_ERR_INVALID);
    assert_non_null(strstr(err.message, "overflow"));
}

static void test_keeps_size(void **state) {
    (void)state;
    tc_window_attrs a = one_axis(TCONV_AUTO_PAD_NOTSET, 1, 1, 1, 1, false);
    assert_true(tc_window_keeps_size(&a, 0, 3));  /* pads 1+1 cancel k 3 */
    assert_false(tc_window_keeps_size(&a, 0, 5)); /* they do not cancel k 5 */
    a.auto_pad = TCONV_AUTO_PAD_SAME_LOWER;
    assert_true(tc_window_keeps_size(&a, 0, 5));
    a.strides[0] = 2;
    assert_false(tc_window_keeps_size(&a, 0, 5));
    a = one_axis(TCONV_AUTO_PAD_VALID, 1, 1, 0, 0, false);
    assert_true(tc_window_keeps_size(&a, 0, 1));
    assert_false(tc_window_keeps_size(&a, 0, 2));
}

static void test_divisions_round_toward_minus_infinity(void **state) {
    (void)state;
    assert_int_equal(tc_floor_div(7, 2), 3);
    assert_int_equal(tc_floor_div(-7, 2), -4);
    assert_int_equal(tc_floor_div(7, -2), -4);
    assert_int_equal(tc_floor_div(-6, 2), -3);
    assert_int_equal(tc_ceil_div(7, 2), 4);
    assert_int_equal(tc_ceil_div(-7, 2), -3);
    assert_int_equal(tc_ceil_div(6, 2), 3);
}

static void test_auto_pad_read(void **state) {
    (void)state;
    static const struct {
        const char *text;
        tc_auto_pad want;
    } cases[] = {{"", TCONV_AUTO_PAD_NOTSET},
                 {"NOTSET", TCONV_AUTO_PAD_NOTSET},
                 {"VALID", TCONV_AUTO_PAD_VALID},
                 {"SAME_UPPER", TCONV_AUTO_PAD_SAME_UPPER},
                 {"SAME_LOWER", TCONV_AUTO_PAD_SAME_LOWER}};
    tconv_model *model;
    tconv_node *node;
    tc_error err;
    tc_auto_pad got;
    assert_int_equal(tc_model_create(&model, &err), TCONV_OK);
    assert_int_equal(tc_node_create(model->graph, "Conv", NULL, "c", &node, &err), TCONV_OK);
    assert_int_equal(tc_auto_pad_read(node, &got, &err), TCONV_OK); /* absent */
    assert_int_equal(got, TCONV_AUTO_PAD_NOTSET);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(tc_node_set_attr_string(node, "auto_pad", cases[i].text, &err), TCONV_OK);
        assert_int_equal(tc_auto_pad_read(node, &got, &err), TCONV_OK);
        assert_int_equal(got, cases[i].want);
    }
    assert_int_equal(tc_node_set_attr_string(node, "auto_pad", "SAME", &err), TCONV_OK);
    assert_int_equal(tc_auto_pad_read(node, &got, &err), TCONV_ERR_INVALID);
    assert_non_null(strstr(err.message, "'c'"));
    assert_non_null(strstr(err.message, "'SAME', not NOTSET"));
    tconv_model_free(model);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notset_floor_and_ceil_mode),
        cmocka_unit_test(test_valid_ignores_pads_and_ceil_mode),
        cmocka_unit_test(test_same_splits_the_odd_pad),
        cmocka_unit_test(test_dilation_widens_the_window),
        cmocka_unit_test(test_errors_name_the_axis),
        cmocka_unit_test(test_keeps_size),
        cmocka_unit_test(test_divisions_round_toward_minus_infinity),
        cmocka_unit_test(test_auto_pad_read),
    };
    return cmocka_run_group_tests_name("ir.window_geometry", tests, NULL, NULL);
}
