/* The verifier, the topological sort and the printer on IR built by hand through the ir.h API
 * (no importer involved). */
#define _XOPEN_SOURCE 700

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "ir/print.h"
#include "ir/verify.h"
#include "ir/verify.h"

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        if (!strstr((haystack), (needle)))                                                         \
            fail_msg("message \"%s\" lacks \"%s\"", (haystack), (needle));                         \
    } while (0)

static tconv_model *new_model(void) {
    tconv_model *model;
    tc_error err;
    if (tc_model_create(&model, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    if (tc_model_set_opset(model, "", 17, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    model->graph->name = "main";
    return model;
}

static tconv_value *value(tconv_graph *g, const char *name) {
    tconv_value *v;
    tc_error err;
    if (tc_graph_get_or_add_value(g, name, &v, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    return v;
}

static tconv_value *input(tconv_graph *g, const char *name) {
    tconv_value *v = value(g, name);
    tc_error err;
    assert_int_equal(tc_graph_add_input(g, v, NULL, &err), TCONV_OK);
    return v;
}

static void output(tconv_graph *g, tconv_value *v) {
    tc_error err;
    assert_int_equal(tc_graph_add_output(g, v, NULL, &err), TCONV_OK);
}

/* A node (not yet linked) reading `in` (NULL-terminated) and producing a value named `out`. */
static tconv_node *make_node(tconv_graph *g, const char *op, const char *name,
                             tconv_value *const *in, const char *out) {
    tconv_node *n;
    tc_error err;
    assert_int_equal(tc_node_create(g, op, NULL, name, &n, &err), TCONV_OK);
    for (; in && *in; in++)
        assert_int_equal(tc_node_add_input(n, *in, &err), TCONV_OK);
    if (out)
        assert_int_equal(tc_node_add_output(n, value(g, out), &err), TCONV_OK);
    return n;
}

static tconv_node *append(tconv_graph *g, const char *op, const char *name, tconv_value *const *in,
                          const char *out) {
    tconv_node *n = make_node(g, op, name, in, out);
    tc_graph_append_node(g, n);
    return n;
}

static const char *node_order(const tconv_graph *g, char *buf, size_t size) {
    buf[0] = '\0';
    for (const tconv_node *n = g->first; n; n = n->next) {
        strncat(buf, n->name, size - strlen(buf) - 1);
        if (n->next)
            strncat(buf, ",", size - strlen(buf) - 1);
    }
    return buf;
}

/* ---------------------------------------------------------------- order */

static void test_sorted_graph_verifies_and_stays_put(void **state) {
    (void)state;
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tconv_value *x = input(g, "x");
    tconv_node *a = append(g, "Abs", "a", (tconv_value *[]){x, NULL}, "t");
    tconv_node *b = append(g, "Relu", "b", (tconv_value *[]){a->outputs[0], NULL}, "y");
    output(g, b->outputs[0]);
    tc_error err;
    assert_int_equal(tc_model_verify(model, &err), TCONV_OK);
    bool reordered = true;
    assert_int_equal(tc_graph_sort_topologically(g, &reordered, &err), TCONV_OK);
    assert_false(reordered);
    char order[256];
    assert_string_equal(node_order(g, order, sizeof order), "a,b");
    tconv_model_free(model);
}

static void test_out_of_order_is_reported_then_sorted_stably(void **state) {
    (void)state;
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tconv_value *x = input(g, "x");
    /* c and d are independent of a -> b: they keep their places relative to each other. */
    append(g, "Neg", "c", (tconv_value *[]){x, NULL}, "tc");
    tconv_node *b = append(g, "Relu", "b", (tconv_value *[]){value(g, "t"), NULL}, "y");
    append(g, "Abs", "a", (tconv_value *[]){x, NULL}, "t");
    append(g, "Exp", "d", (tconv_value *[]){x, NULL}, "td");
    output(g, b->outputs[0]);
    tc_error err;
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "graph 'main': node 'b' (#1, Relu): input 0 't' is used before "
                                 "node 'a' (#2, Abs) produces it");
    bool reordered = false;
    assert_int_equal(tc_graph_sort_topologically(g, &reordered, &err), TCONV_OK);
    assert_true(reordered);
    char order[256];
    assert_string_equal(node_order(g, order, sizeof order), "c,a,b,d");
    assert_int_equal(tc_model_verify(model, &err), TCONV_OK);
    tconv_model_free(model);
}

static void test_cycle_names_a_node_on_it(void **state) {
    (void)state;
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tconv_value *x = input(g, "x");
    append(g, "Abs", "entry", (tconv_value *[]){x, NULL}, "e");
    append(g, "Add", "p", (tconv_value *[]){value(g, "e"), value(g, "q_out"), NULL}, "p_out");
    append(g, "Relu", "q", (tconv_value *[]){value(g, "p_out"), NULL}, "q_out");
    append(g, "Neg", "after", (tconv_value *[]){value(g, "q_out"), NULL}, "y");
    output(g, value(g, "y"));
    tc_error err;
    assert_int_equal(tc_graph_sort_topologically(g, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "graph 'main': cycle through node '");
    assert_true(strstr(err.message, "'p' (#1, Add)") || strstr(err.message, "'q' (#2, Relu)"));
    tconv_model_free(model);
}

/* 100k nodes in reverse order: the sort and the verifier are iterative. */
static void test_long_reversed_chain(void **state) {
    (void)state;
    enum { N = 100000 };
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tconv_value *prev = input(g, "x");
    for (int i = 0; i < N; i++) {
        char name[32], out[32];
        snprintf(name, sizeof name, "n%d", i);
        snprintf(out, sizeof out, "v%d", i);
        tconv_node *n = make_node(g, "Relu", name, (tconv_value *[]){prev, NULL}, out);
        tc_graph_insert_before(g, g->first, n); /* each node before its producer */
        prev = n->outputs[0];
    }
    output(g, prev);
    size_t reordered = 0;
    tc_error err;
    assert_int_equal(tc_graph_sort_count(g, &reordered, &err), TCONV_OK);
    assert_int_equal(reordered, 1);
    assert_string_equal(g->first->name, "n0");
    assert_int_equal(tc_model_verify(model, &err), TCONV_OK);
    tconv_model_free(model);
}

/* ---------------------------------------------------------------- definitions and scopes */

static void test_undefined_values(void **state) {
    (void)state;
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tconv_value *x = input(g, "x");
    append(g, "Add", "add", (tconv_value *[]){x, value(g, "ghost"), NULL}, "y");
    output(g, value(g, "y"));
    tc_error err;
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "graph 'main': node 'add' (#0, Add): input 1 'ghost' is not "
                                 "defined");
    tc_node_set_input(g->first, 1, x, &err);
    output(g, value(g, "z"));
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "graph 'main': output 'z' is not defined");
    tconv_model_free(model);
}

/* If (#0) whose then-branch reads %t, produced by a node after it: the If depends on that
 * node through the capture. */
static void test_subgraph_captures_count_as_dependencies(void **state) {
    (void)state;
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tconv_value *x = input(g, "x"), *cond = input(g, "cond");
    tconv_node *if_node = append(g, "If", "if", (tconv_value *[]){cond, NULL}, "y");
    tconv_value *t = value(g, "t");
    tc_error err;
    for (int i = 0; i < 2; i++) {
        tconv_graph *branch;
        assert_int_equal(tc_graph_create(model, g, &branch, &err), TCONV_OK);
        branch->owner = if_node;
        branch->name = i ? "else" : "then";
        tconv_node *n = append(branch, "Identity", i ? "id_else" : "id_then",
                               (tconv_value *[]){t, NULL}, i ? "o_else" : "o_then");
        output(branch, n->outputs[0]);
        tc_attr attr = {
            .name = i ? "else_branch" : "then_branch", .type = TCONV_ATTR_GRAPH, .g = branch};
        assert_int_equal(tc_node_add_attr(if_node, &attr, &err), TCONV_OK);
    }
    append(g, "Abs", "abs", (tconv_value *[]){x, NULL}, "t");
    output(g, value(g, "y"));
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "graph 'main': node 'if' (#0, If): attribute 'then_branch': "
                                 "graph 'then': node 'id_then' (#0, Identity): input 0 't'");
    bool reordered = false;
    assert_int_equal(tc_graph_sort_topologically(g, &reordered, &err), TCONV_OK);
    assert_true(reordered);
    char order[64];
    assert_string_equal(node_order(g, order, sizeof order), "abs,if");
    assert_int_equal(tc_model_verify(model, &err), TCONV_OK);
    /* A subgraph verified on its own sees its enclosing graph's definitions. */
    assert_int_equal(tc_graph_verify(if_node->attrs[0].g, &err), TCONV_OK);
    tconv_model_free(model);
}

static void test_known_op_attribute_types(void **state) {
    (void)state;
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tconv_value *x = input(g, "x"), *w = input(g, "w");
    append(g, "Relu", "relu", (tconv_value *[]){x, NULL}, "r");
    tconv_node *conv =
        append(g, "ConvTranspose", "conv1", (tconv_value *[]){value(g, "r"), w, NULL}, "y");
    output(g, value(g, "y"));
    tc_error err;
    assert_int_equal(tc_node_set_attr_ints(conv, "strides", (int64_t[]){2, 2}, 2, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_float(conv, "pads", 1.0f, &err), TCONV_OK);
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "graph 'main': node 'conv1' (#1, ConvTranspose): attribute "
                                 "'pads': expected INTS, got FLOAT");
    assert_int_equal(tc_node_set_attr_ints(conv, "pads", (int64_t[]){1, 1, 1, 1}, 4, &err),
                     TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(conv, "group", (int64_t[]){1}, 1, &err), TCONV_OK);
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "attribute 'group': expected INT, got INTS");
    tconv_model_free(model);
}

/* Arity and required attributes come from the op table entry of the model's opset. */
static void test_schema_of_the_model_opset(void **state) {
    (void)state;
    tconv_model *model = new_model(); /* opset 17: Slice takes starts and ends as inputs */
    tconv_graph *g = model->graph;
    tconv_value *x = input(g, "x");
    tconv_node *slice = append(g, "Slice", "s", (tconv_value *[]){x, NULL}, "y");
    output(g, value(g, "y"));
    tc_error err;
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "node 's' (#0, Slice): inputs: 1 given, Slice takes 3 to 5");
    /* Slice-1 reads them from required attributes */
    assert_int_equal(tc_model_set_opset(model, "", 9, &err), TCONV_OK);
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "attribute 'ends' is missing, but Slice-1 requires it");
    assert_int_equal(tc_node_set_attr_ints(slice, "starts", (int64_t[]){0}, 1, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(slice, "ends", (int64_t[]){1}, 1, &err), TCONV_OK);
    assert_int_equal(tc_model_verify(model, &err), TCONV_OK);
    tconv_model_free(model);
}

static void test_broken_links_are_found(void **state) {
    (void)state;
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tconv_value *x = input(g, "x");
    tconv_node *a = append(g, "Abs", "a", (tconv_value *[]){x, NULL}, "y");
    output(g, a->outputs[0]);
    tc_error err;
    x->n_uses = 0; /* an input without its use-list entry */
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "use lists are out of sync");
    x->n_uses = 1;
    a->outputs[0]->producer = NULL; /* an output that does not point back */
    assert_int_equal(tc_model_verify(model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "node 'a' (#0, Abs): output 0 'y' does not name this node");
    tconv_model_free(model);
}

/* ---------------------------------------------------------------- printing */

static void test_print_one_node_a_line(void **state) {
    (void)state;
    tconv_model *model = new_model();
    tconv_graph *g = model->graph;
    tc_error err;
    tconv_value *x = input(g, "x"), *w = input(g, "w");
    tc_dim xd[] = {{TCONV_DIM_STATIC, 1, NULL, NULL},
                   {TCONV_DIM_SYMBOLIC, 0, "C", NULL},
                   {TCONV_DIM_UNKNOWN, 0, NULL, NULL}};
    assert_int_equal(tc_value_set_tensor_type(x, TCONV_DTYPE_FLOAT, 3, xd, &err), TCONV_OK);
    tconv_node *conv = append(g, "ConvTranspose", "conv1", (tconv_value *[]){x, w, NULL}, "y");
    assert_int_equal(tc_node_set_attr_ints(conv, "strides", (int64_t[]){2, 2}, 2, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_string(conv, "auto_pad", "SAME_UPPER", &err), TCONV_OK);
    output(g, conv->outputs[0]);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(tc_model_print(model, out), TCONV_OK);
    fclose(out);
    assert_contains(text, "graph 'main'(%x: float[1,C,?], %w) -> (%y) {\n");
    assert_contains(text, "  %y = ConvTranspose(%x: float[1,C,?], %w) {strides=[2, 2], "
                          "auto_pad=\"SAME_UPPER\"}  # conv1\n");
    free(text);
    tconv_model_free(model);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorted_graph_verifies_and_stays_put),
        cmocka_unit_test(test_out_of_order_is_reported_then_sorted_stably),
        cmocka_unit_test(test_cycle_names_a_node_on_it),
        cmocka_unit_test(test_long_reversed_chain),
        cmocka_unit_test(test_undefined_values),
        cmocka_unit_test(test_subgraph_captures_count_as_dependencies),
        cmocka_unit_test(test_known_op_attribute_types),
        cmocka_unit_test(test_schema_of_the_model_opset),
        cmocka_unit_test(test_broken_links_are_found),
        cmocka_unit_test(test_print_one_node_a_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
