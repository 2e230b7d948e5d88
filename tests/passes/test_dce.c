/* dce on graphs built by hand: dead chains, unused initializers and value_info, what keeps values
 * alive (graph outputs, uses inside subgraphs, subgraph outputs naming outer values), dead code
 * inside subgraphs, and a 100k-node graph that must come out right in one linear pass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "passes/pass.h"

#include "ir_builder.h"

static void run_dce(tconv_model *m) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    tc_error err;
    tc_error_clear(&err);
    if (tc_pass_dce(m->graph, &options, &err) != TCONV_OK)
        fail_msg("dce failed: %s", err.message);
    if (tc_model_verify(m, &err) != TCONV_OK)
        fail_msg("verify after dce: %s", err.message);
}

static bool has_node(const tconv_graph *g, const char *name) {
    for (const tconv_node *n = g->first; n; n = n->next) {
        if (n->name && strcmp(n->name, name) == 0)
            return true;
    }
    return false;
}

static tconv_node *find_node(const tconv_graph *g, const char *name) {
    for (tconv_node *n = g->first; n; n = n->next) {
        if (n->name && strcmp(n->name, name) == 0)
            return n;
    }
    fail_msg("no node '%s'", name);
    return NULL;
}

static bool has_initializer(const tconv_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_initializers; i++) {
        if (strcmp(g->initializers[i]->name, name) == 0)
            return true;
    }
    return false;
}

static void add_value_info(tconv_graph *g, const char *name) {
    B_OK(tc_graph_add_value_info(g, tc_graph_find_value(g, name), NULL, &b_err_));
}

static void test_dead_chain_and_value_info(void **state) {
    (void)state;
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "4");
    b_input(g, "UNUSED", TCONV_DTYPE_FLOAT, "4");
    b_node(g, "Relu", "live1", "X", "a");
    b_node(g, "Relu", "dead1", "X", "d1");
    b_node(g, "Sigmoid", "dead2", "d1,a", "d2"); /* also uses a live value */
    b_node(g, "Tanh", "live2", "a", "y");
    b_node(g, "Add", "dead3", "d2,d1", "d3");
    b_output(g, "y");
    add_value_info(g, "a");
    add_value_info(g, "d1");
    add_value_info(g, "d3");
    add_value_info(g, "X");
    run_dce(m);
    assert_int_equal(g->n_nodes, 2);
    assert_true(has_node(g, "live1"));
    assert_true(has_node(g, "live2"));
    assert_int_equal(g->n_inputs, 2); /* graph inputs stay, used or not */
    assert_int_equal(tc_graph_find_value(g, "a")->n_uses, 1);
    assert_int_equal(g->n_value_info, 2);
    assert_ptr_equal(g->value_info[0].value, tc_graph_find_value(g, "a"));
    assert_ptr_equal(g->value_info[1].value, tc_graph_find_value(g, "X"));
    tconv_model_free(m);
}

static void test_unused_initializers(void **state) {
    (void)state;
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "4");
    b_f32(g, "W_live", "4", NULL);
    b_f32(g, "W_dead_user", "4", NULL);
    b_f32(g, "W_orphan", "4", NULL);
    b_f32(g, "W_default", "4", NULL); /* also a graph input: an overridable default */
    B_OK(tc_graph_add_input(g, tc_graph_find_value(g, "W_default"), NULL, &b_err_));
    b_f32(g, "W_out", "4", NULL); /* a graph output directly */
    b_node(g, "Add", "live", "X,W_live", "y");
    b_node(g, "Mul", "dead", "X,W_dead_user", "z");
    b_output(g, "y");
    b_output(g, "W_out");
    run_dce(m);
    assert_true(has_node(g, "live"));
    assert_false(has_node(g, "dead"));
    assert_true(has_initializer(g, "W_live"));
    assert_false(has_initializer(g, "W_dead_user"));
    assert_false(has_initializer(g, "W_orphan"));
    assert_true(has_initializer(g, "W_default"));
    assert_true(has_initializer(g, "W_out"));
    assert_int_equal(g->n_initializers, 3);
    assert_null(tc_graph_find_value(g, "W_orphan")->initializer);
    tconv_model_free(m);
}

/* An If whose branches read outer values: a use inside a subgraph keeps the outer producer; so
 * does a branch output that names an outer value directly (no node uses it). */
static tconv_model *if_model(bool if_output_used) {
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "4");
    b_input(g, "cond", TCONV_DTYPE_BOOL, "");
    b_node(g, "Relu", "captured_by_node", "X", "cap1");
    b_node(g, "Sigmoid", "captured_as_output", "X", "cap2");
    b_node(g, "Tanh", "outer_dead", "X", "dead");
    tconv_node *if_node = b_node(g, "If", "if", "cond", "r");
    tconv_graph *then_g = b_subgraph(g, "then");
    b_node(then_g, "Neg", "then_live", "cap1", "t");
    b_node(then_g, "Abs", "then_dead", "cap1", "t_dead");
    b_output(then_g, "t");
    tconv_graph *else_g = b_subgraph(g, "else");
    b_output(else_g, "cap2");
    b_graph_attr(if_node, "then_branch", then_g);
    b_graph_attr(if_node, "else_branch", else_g);
    b_node(g, "Identity", "out", if_output_used ? "r" : "X", "y");
    b_output(g, "y");
    return m;
}

static void test_subgraph_captures_keep_outer_values(void **state) {
    (void)state;
    tconv_model *m = if_model(true);
    tconv_graph *g = m->graph;
    run_dce(m);
    assert_true(has_node(g, "captured_by_node"));
    assert_true(has_node(g, "captured_as_output"));
    assert_true(has_node(g, "if"));
    assert_false(has_node(g, "outer_dead"));
    tconv_graph *then_g = tc_node_attr(find_node(g, "if"), "then_branch")->g;
    assert_true(has_node(then_g, "then_live"));
    assert_false(has_node(then_g, "then_dead")); /* dead code inside the subgraph goes too */
    assert_int_equal(tc_graph_find_value(g, "cap1")->n_uses, 1);
    tconv_model_free(m);
}

/* A dead If goes with everything only it kept alive through its branches. */
static void test_dead_if_releases_its_captures(void **state) {
    (void)state;
    tconv_model *m = if_model(false);
    tconv_graph *g = m->graph;
    run_dce(m);
    assert_int_equal(g->n_nodes, 1);
    assert_true(has_node(g, "out"));
    assert_int_equal(tc_graph_find_value(g, "X")->n_uses, 1);
    tconv_model_free(m);
}

/* Nodes with several outputs stay while any output is used; graph outputs are roots. */
static void test_multi_output_and_graph_outputs(void **state) {
    (void)state;
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "1,1,4,4");
    tconv_node *pool = b_node(g, "MaxPool", "pool", "X", "P,I");
    b_ints(pool, "kernel_shape", (int64_t[]){2, 2}, 2);
    b_node(g, "Relu", "only_output", "X", "o");
    b_node(g, "Identity", "uses_indices", "I", "i2");
    b_node(g, "Identity", "dead", "P", "p2");
    b_output(g, "o");
    b_output(g, "i2");
    b_output(g, "X"); /* an input that is also an output */
    run_dce(m);
    assert_int_equal(g->n_nodes, 3);
    assert_true(has_node(g, "pool"));
    assert_true(has_node(g, "only_output"));
    assert_true(has_node(g, "uses_indices"));
    assert_int_equal(g->n_outputs, 3);
    tconv_model_free(m);
}

/* 100k nodes: a live chain and a dead chain interleaved in the node list (worst order for a
 * naive fixpoint sweep), and dead side branches hanging off the live chain. */
static void test_large_graph_half_dead(void **state) {
    (void)state;
    enum { N = 25000 };
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    tconv_value *live = b_input(g, "X", TCONV_DTYPE_FLOAT, "8");
    tconv_value *dead = live;
    for (int i = 0; i < N; i++) {
        tconv_node *n;
        tconv_value *next;
        char name[32];
        B_OK(tc_node_create(g, "Relu", NULL, NULL, &n, &b_err_));
        B_OK(tc_node_add_input(n, live, &b_err_));
        snprintf(name, sizeof name, "live%d", i);
        B_OK(tc_graph_get_or_add_value(g, name, &next, &b_err_));
        B_OK(tc_node_add_output(n, next, &b_err_));
        tc_graph_append_node(g, n);
        live = next;
        for (int k = 0; k < 3; k++) { /* a dead chain link and two dead side branches */
            B_OK(tc_node_create(g, k == 0 ? "Neg" : "Abs", NULL, NULL, &n, &b_err_));
            B_OK(tc_node_add_input(n, k == 0 ? dead : live, &b_err_));
            snprintf(name, sizeof name, "dead%d_%d", i, k);
            B_OK(tc_graph_get_or_add_value(g, name, &next, &b_err_));
            B_OK(tc_node_add_output(n, next, &b_err_));
            tc_graph_append_node(g, n);
            if (k == 0)
                dead = next;
        }
    }
    B_OK(tc_graph_add_output(g, live, NULL, &b_err_));
    assert_int_equal(g->n_nodes, 4 * N);
    run_dce(m);
    assert_int_equal(g->n_nodes, N);
    tconv_value *expect = tc_graph_find_value(g, "X");
    for (tconv_node *n = g->first; n; n = n->next) {
        assert_string_equal(n->op_type, "Relu");
        assert_ptr_equal(n->inputs[0], expect);
        assert_int_equal(n->outputs[0]->n_uses, n->next ? 1 : 0);
        expect = n->outputs[0];
    }
    assert_ptr_equal(expect, live);
    tconv_model_free(m);
}

/* N nodes all reading X, one of them live: removing the N - 1 dead uses of X looks at one
 * use-list entry each (issue 16, item 5: a linear search per removal made this quadratic, 23 s
 * at 500k nodes). */
static void test_many_users_of_one_value(void **state) {
    (void)state;
    enum { N = 50000 };
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    tconv_value *x = b_input(g, "X", TCONV_DTYPE_FLOAT, "8");
    tconv_value *out = NULL;
    for (int i = 0; i < N; i++) {
        tconv_node *n;
        char name[32];
        B_OK(tc_node_create(g, "Relu", NULL, NULL, &n, &b_err_));
        B_OK(tc_node_add_input(n, x, &b_err_));
        snprintf(name, sizeof name, "r%d", i);
        B_OK(tc_graph_get_or_add_value(g, name, &out, &b_err_));
        B_OK(tc_node_add_output(n, out, &b_err_));
        tc_graph_append_node(g, n);
    }
    B_OK(tc_graph_add_output(g, tc_graph_find_value(g, "r123"), NULL, &b_err_));
    uint64_t before = m->use_list_steps;
    run_dce(m); /* verifies the use lists too */
    assert_int_equal(g->n_nodes, 1);
    assert_int_equal(x->n_uses, 1);
    assert_true(m->use_list_steps - before <= (uint64_t)N);
    tconv_model_free(m);
}

/* Running it again finds nothing more to do. */
static void test_idempotent(void **state) {
    (void)state;
    tconv_model *m = if_model(true);
    run_dce(m);
    size_t nodes = m->graph->n_nodes, inits = m->graph->n_initializers;
    run_dce(m);
    assert_int_equal(m->graph->n_nodes, nodes);
    assert_int_equal(m->graph->n_initializers, inits);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dead_chain_and_value_info),
        cmocka_unit_test(test_unused_initializers),
        cmocka_unit_test(test_subgraph_captures_keep_outer_values),
        cmocka_unit_test(test_dead_if_releases_its_captures),
        cmocka_unit_test(test_multi_output_and_graph_outputs),
        cmocka_unit_test(test_large_graph_half_dead),
        cmocka_unit_test(test_many_users_of_one_value),
        cmocka_unit_test(test_idempotent),
    };
    return cmocka_run_group_tests_name("passes.dce", tests, NULL, NULL);
}
