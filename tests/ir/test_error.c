/* Error records (ir/error.h): tc_error_prefix adds context and passes the failure's status up
 * unchanged, with or without a record to write to (it used to turn a missing record into
 * TCONV_ERR_USAGE); a long prefix keeps the record a terminated string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/error.h"
#include "ir/ir.h"

static void test_prefix_keeps_the_status(void **state) {
    (void)state;
    tc_error err;
    tc_error_set(&err, TCONV_ERR_PARSE, "bad varint");
    assert_int_equal(tc_error_prefix(&err, TCONV_ERR_PARSE, "%s: ", "model.onnx"), TCONV_ERR_PARSE);
    assert_int_equal(err.status, TCONV_ERR_PARSE);
    assert_string_equal(err.message, "model.onnx: bad varint");
}

static void test_prefix_without_a_record_returns_the_status(void **state) {
    (void)state;
    static const tconv_status all[] = {TCONV_ERR_IO,          TCONV_ERR_PARSE, TCONV_ERR_INVALID,
                                       TCONV_ERR_UNSUPPORTED, TCONV_ERR_LIMIT, TCONV_ERR_NOMEM,
                                       TCONV_ERR_MISMATCH};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        assert_int_equal(tc_error_prefix(NULL, all[i], "context: "), all[i]);
}

static void test_prefix_records_the_status_passed_up(void **state) {
    (void)state;
    tc_error err;
    tc_error_clear(&err); /* a status recorded without a message (or none) */
    assert_int_equal(tc_error_prefix(&err, TCONV_ERR_LIMIT, "step: "), TCONV_ERR_LIMIT);
    assert_int_equal(err.status, TCONV_ERR_LIMIT);
    assert_string_equal(err.message, "step: ");
}

static void test_long_prefix_is_cut_to_the_record(void **state) {
    (void)state;
    char long_name[2 * TC_ERROR_MESSAGE_MAX];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    tc_error err;
    tc_error_set(&err, TCONV_ERR_IO, "cannot open");
    assert_int_equal(tc_error_prefix(&err, TCONV_ERR_IO, "%s: ", long_name), TCONV_ERR_IO);
    assert_int_equal(strlen(err.message), TC_ERROR_MESSAGE_MAX - 1);
}

/* Through the library: the verifier prefixes graph and node to a failure found deep down, and
 * without a record the caller still learns which failure it was. */
static void test_verify_without_a_record_reports_invalid(void **state) {
    (void)state;
    tconv_model *model;
    tc_error err;
    assert_int_equal(tc_model_create(&model, &err), TCONV_OK);
    tconv_graph *g = model->graph;
    tconv_value *x, *t, *y;
    tconv_node *b, *a;
    assert_int_equal(tc_graph_get_or_add_value(g, "x", &x, &err), TCONV_OK);
    assert_int_equal(tc_graph_add_input(g, x, NULL, &err), TCONV_OK);
    assert_int_equal(tc_graph_get_or_add_value(g, "t", &t, &err), TCONV_OK);
    assert_int_equal(tc_graph_get_or_add_value(g, "y", &y, &err), TCONV_OK);
    /* b reads t before a produces it */
    assert_int_equal(tc_node_create(g, "Relu", NULL, "b", &b, &err), TCONV_OK);
    assert_int_equal(tc_node_add_input(b, t, &err), TCONV_OK);
    assert_int_equal(tc_node_add_output(b, y, &err), TCONV_OK);
    tc_graph_append_node(g, b);
    assert_int_equal(tc_node_create(g, "Abs", NULL, "a", &a, &err), TCONV_OK);
    assert_int_equal(tc_node_add_input(a, x, &err), TCONV_OK);
    assert_int_equal(tc_node_add_output(a, t, &err), TCONV_OK);
    tc_graph_append_node(g, a);
    assert_int_equal(tc_graph_add_output(g, y, NULL, &err), TCONV_OK);
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_non_null(strstr(err.message, "node 'b'"));
    assert_int_equal(tc_model_verify(model, NULL), TCONV_ERR_INVALID);
    tconv_model_free(model);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_keeps_the_status),
        cmocka_unit_test(test_prefix_without_a_record_returns_the_status),
        cmocka_unit_test(test_prefix_records_the_status_passed_up),
        cmocka_unit_test(test_long_prefix_is_cut_to_the_record),
        cmocka_unit_test(test_verify_without_a_record_reports_invalid),
    };
    return cmocka_run_group_tests_name("ir.error", tests, NULL, NULL);
}
