/* shape-infer rules of the reductions and normalizations: Reduce* in their opset-18 input form
 * (noop_with_empty_axes, axes known or not), ArgMax/ArgMin (int64, keepdims, negative axis),
 * LayerNormalization's optional Mean/InvStdDev, GroupNormalization. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir/verify.h"
#include "passes/pass.h"

#include "ir_builder.h"

static void infer_ok(tconv_model *m) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    tc_error err;
    tc_error_clear(&err);
    if (tc_pass_shape_infer(m->graph, &options, &err) != TCONV_OK)
        fail_msg("shape-infer failed: %s", err.message);
    if (tc_model_verify(m, &err) != TCONV_OK)
        fail_msg("verify after shape-infer: %s", err.message);
}

static void test_reduce_v18_input_axes(void **state) {
    (void)state;
    tconv_model *m = b_model(18);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3,4,5");
    b_input(g, "A", TCONV_DTYPE_INT64, "2"); /* axes unknown here */
    b_i64(g, "axes", (int64_t[]){-1, 1}, 2);
    b_i64(g, "none", NULL, 0);
    b_node(g, "ReduceL2", "l2", "X,axes", "l2");
    b_node(g, "ReduceLogSumExp", "lse", "X,axes", "lse");
    b_int(g->last, "keepdims", 0);
    b_node(g, "ReduceMin", "noop", "X,none", "noop");
    b_int(g->last, "noop_with_empty_axes", 1);
    b_node(g, "ReduceProd", "all", "X", "all");
    b_int(g->last, "keepdims", 0);
    b_node(g, "ReduceL1", "unknown_keep", "X,A", "unknown_keep");
    b_node(g, "ReduceSumSquare", "unknown_drop", "X,A", "unknown_drop");
    b_int(g->last, "keepdims", 0);
    b_output(g, "all");
    infer_ok(m);
    assert_type(g, "l2", "float[N,1,4,1]");
    assert_type(g, "lse", "float[N,4]");
    assert_type(g, "noop", "float[N,3,4,5]");
    assert_type(g, "all", "float[]");
    assert_type(g, "unknown_keep", "float[?,?,?,?]");
    assert_type(g, "unknown_drop", "float"); /* rank unknown */
    tconv_model_free(m);
}

static void test_arg_reduce(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3,4");
    b_node(g, "ArgMax", "max_default", "X", "max_default");
    b_node(g, "ArgMin", "min_neg", "X", "min_neg");
    b_int(g->last, "axis", -1);
    b_int(g->last, "keepdims", 0);
    b_int(g->last, "select_last_index", 1);
    b_output(g, "min_neg");
    infer_ok(m);
    assert_type(g, "max_default", "int64[1,3,4]");
    assert_type(g, "min_neg", "int64[N,3]");
    tconv_model_free(m);
}

static void test_layer_and_group_normalization(void **state) {
    (void)state;
    tconv_model *m = b_model(18);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,6,4,5");
    b_f32(g, "S", "4,5", NULL);
    b_f32(g, "G", "3", NULL);
    b_node(g, "LayerNormalization", "ln", "X,S", "Y,Mean,InvStd");
    b_int(g->last, "axis", -2);
    b_node(g, "LayerNormalization", "ln_last", "X,S", "Y2");
    b_node(g, "GroupNormalization", "gn", "X,G,G", "Y3");
    b_int(g->last, "num_groups", 3);
    b_output(g, "Y3");
    infer_ok(m);
    assert_type(g, "Y", "float[N,6,4,5]");
    assert_type(g, "Mean", "float[N,6,1,1]");
    assert_type(g, "InvStd", "float[N,6,1,1]");
    assert_type(g, "Y2", "float[N,6,4,5]");
    assert_type(g, "Y3", "float[N,6,4,5]");
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_v18_input_axes),
        cmocka_unit_test(test_arg_reduce),
        cmocka_unit_test(test_layer_and_group_normalization),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
