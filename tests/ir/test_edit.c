/* The IR's edit functions (ir.h, "Editing"): what passes and the public API change the IR
 * through instead of writing struct fields. Each test edits and then checks the fields and the
 * bookkeeping (use lists, reserved names) the edit must keep consistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../passes/ir_builder.h"

static tconv_model *new_model(void) {
    tconv_model *model;
    B_OK(tc_model_create(&model, &b_err_));
    return model;
}

/* A node Op(inputs...) -> y appended to g. */
static tconv_node *node_with_inputs(tconv_graph *g, const char *name, tconv_value **inputs,
                                    size_t n) {
    tconv_node *node;
    B_OK(tc_node_create(g, "Op", NULL, name, &node, &b_err_));
    for (size_t i = 0; i < n; i++)
        B_OK(tc_node_add_input(node, inputs[i], &b_err_));
    B_OK(tc_node_add_output(node, b_value(g, "y"), &b_err_));
    tc_graph_append_node(g, node);
    return node;
}

static void test_set_name_reserves_the_name(void **state) {
    (void)state;
    tconv_model *m = new_model();
    tconv_node *node = node_with_inputs(m->graph, "old", NULL, 0);
    char name[] = "renamed";
    B_OK(tc_node_set_name(node, name, &b_err_));
    name[0] = 'X'; /* the node holds its own copy */
    assert_string_equal(node->name, "renamed");
    assert_string_equal(tc_model_unique_node_name(m, "renamed"), "renamed_1");
    B_OK(tc_node_set_name(node, NULL, &b_err_));
    assert_null(node->name);
    tconv_model_free(m);
}

static void test_truncate_inputs_drops_their_uses(void **state) {
    (void)state;
    tconv_model *m = new_model();
    tconv_value *in[3] = {b_value(m->graph, "x"), b_value(m->graph, "w"), b_value(m->graph, "b")};
    tconv_node *node = node_with_inputs(m->graph, "n", in, 3);
    tc_node_truncate_inputs(node, 2);
    assert_int_equal(node->n_inputs, 2);
    assert_int_equal(in[2]->n_uses, 0);
    assert_int_equal(in[0]->n_uses, 1);
    assert_ptr_equal(in[1]->uses[0].node, node);
    assert_int_equal(in[1]->uses[0].input_index, 1);
    tc_node_truncate_inputs(node, 5); /* more than it has: nothing changes */
    assert_int_equal(node->n_inputs, 2);
    tc_node_truncate_inputs(node, 0);
    assert_int_equal(node->n_inputs, 0);
    assert_int_equal(in[0]->n_uses, 0);
    assert_int_equal(in[1]->n_uses, 0);
    tconv_model_free(m);
}

static void test_remove_value_info_keeps_order(void **state) {
    (void)state;
    tconv_model *m = new_model();
    tconv_value *a = b_value(m->graph, "a"), *b = b_value(m->graph, "b"),
                *c = b_value(m->graph, "c");
    B_OK(tc_graph_add_value_info(m->graph, a, NULL, &b_err_));
    B_OK(tc_graph_add_value_info(m->graph, b, NULL, &b_err_));
    B_OK(tc_graph_add_value_info(m->graph, c, NULL, &b_err_));
    assert_true(tc_graph_remove_value_info(m->graph, b));
    assert_int_equal(m->graph->n_value_info, 2);
    assert_ptr_equal(m->graph->value_info[0].value, a);
    assert_ptr_equal(m->graph->value_info[1].value, c);
    assert_false(tc_graph_remove_value_info(m->graph, b));
    assert_false(tc_graph_has_value_info(m->graph, b));
    assert_int_equal(m->graph->n_value_info, 2);
    tconv_model_free(m);
}

static void test_set_attr_floats_replaces_in_place(void **state) {
    (void)state;
    tconv_model *m = new_model();
    tconv_node *node = node_with_inputs(m->graph, "n", NULL, 0);
    float first[2] = {1.0f, 2.0f}, second[3] = {3.0f, 4.0f, 5.0f};
    B_OK(tc_node_set_attr_int(node, "before", 1, &b_err_));
    B_OK(tc_node_set_attr_floats(node, "scales", first, 2, &b_err_));
    B_OK(tc_node_set_attr_int(node, "after", 2, &b_err_));
    B_OK(tc_node_set_attr_floats(node, "scales", second, 3, &b_err_));
    second[0] = -1.0f; /* the attribute holds its own copy */
    assert_int_equal(node->n_attrs, 3);
    assert_string_equal(node->attrs[1].name, "scales");
    const float *values;
    size_t count;
    bool present;
    B_OK(tc_node_attr_floats(node, "scales", &present, &values, &count, &b_err_));
    assert_true(present);
    assert_int_equal(count, 3);
    assert_true(values[0] == 3.0f && values[2] == 5.0f);
    tconv_model_free(m);
}

static void test_set_ir_version(void **state) {
    (void)state;
    tconv_model *m = new_model();
    assert_false(m->has_ir_version);
    tc_model_set_ir_version(m, 9);
    assert_true(m->has_ir_version);
    assert_int_equal(m->ir_version, 9);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_name_reserves_the_name),
        cmocka_unit_test(test_truncate_inputs_drops_their_uses),
        cmocka_unit_test(test_remove_value_info_keeps_order),
        cmocka_unit_test(test_set_attr_floats_replaces_in_place),
        cmocka_unit_test(test_set_ir_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
