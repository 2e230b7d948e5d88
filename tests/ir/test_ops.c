/* The op table (src/ir/ops.def) is consistent: entries well formed, each op's versions adjacent,
 * ascending and disjoint, every op the runtime runs has a shape rule, the shape rule and kernel
 * tables agree with what the table says, and nodes resolve to the entry of the model's opset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "ir/ops.h"
#include "passes/shape_infer.h"
#include "runtime/kernels/kernel.h"

static void test_entries_are_well_formed(void **state) {
    (void)state;
    assert_null(tc_ops[TC_OP_NONE].name);
    for (int i = 1; i < TC_OP_COUNT; i++) {
        const tc_op_def *d = &tc_ops[i];
        assert_non_null(d->name);
        assert_non_null(d->domain);
        if (d->since < 1 || d->since > d->until || d->until > TC_OPSET_LATEST)
            fail_msg("%s-%d: opsets %d to %d", d->name, d->since, d->since, d->until);
        if (d->min_in > d->max_in || d->min_out > d->max_out)
            fail_msg("%s-%d: arity", d->name, d->since);
        for (size_t a = 0; a < d->n_attrs; a++) {
            assert_non_null(d->attrs[a].name);
            assert_in_range(d->attrs[a].type, TCONV_ATTR_FLOAT, TCONV_ATTR_TYPE_PROTOS);
            for (size_t b = 0; b < a; b++) {
                if (strcmp(d->attrs[a].name, d->attrs[b].name) == 0)
                    fail_msg("%s-%d: attribute '%s' twice", d->name, d->since, d->attrs[a].name);
            }
            assert_ptr_equal(tc_op_attr_find((tc_op)i, d->attrs[a].name), &d->attrs[a]);
        }
        assert_ptr_equal(d->attrs[d->n_attrs].name, NULL);
    }
}

static bool same_op(int a, int b) {
    return strcmp(tc_ops[a].name, tc_ops[b].name) == 0 &&
           strcmp(tc_ops[a].domain, tc_ops[b].domain) == 0;
}

/* tc_op_find relies on entries sorted by name and on no two entries matching one (domain, op,
 * opset); readers of ops.def on an op's versions sitting together. */
static void test_versions_are_adjacent_ascending_and_disjoint(void **state) {
    (void)state;
    for (int i = 1; i < TC_OP_COUNT; i++) {
        const tc_op_def *d = &tc_ops[i];
        if (i > 1 && strcmp(tc_ops[i - 1].name, d->name) > 0)
            fail_msg("%s comes after %s: entries must be sorted by name (binary search)", d->name,
                     tc_ops[i - 1].name);
        if (i > 1 && same_op(i - 1, i) && tc_ops[i - 1].until + 1 != d->since)
            fail_msg("%s-%d does not start where %s-%d ends (%d)", d->name, d->since, d->name,
                     tc_ops[i - 1].since, tc_ops[i - 1].until);
        for (int k = i + 2; k < TC_OP_COUNT; k++) {
            if (same_op(i, k) && !same_op(k - 1, k))
                fail_msg("%s: its entries are not adjacent", d->name);
        }
        for (int v = d->since; v <= d->until; v++)
            assert_int_equal(tc_op_find(d->domain, d->name, v), i);
    }
}

/* The runtime never plans a node shape inference cannot describe; the tables the passes and
 * the runtime build from ops.def hold a function exactly where the table says. */
static void test_kernels_and_shape_rules_match_the_table(void **state) {
    (void)state;
    for (int i = 1; i < TC_OP_COUNT; i++) {
        const tc_op_def *d = &tc_ops[i];
        if (d->has_kernel && !d->has_shape_rule)
            fail_msg("%s-%d has a kernel but no shape rule", d->name, d->since);
        assert_int_equal(tc_kernel_for((tc_op)i) != NULL, d->has_kernel);
        assert_int_equal(tc_si_rule_for((tc_op)i) != NULL, d->has_shape_rule);
    }
    assert_null(tc_kernel_for(TC_OP_NONE));
    assert_null(tc_si_rule_for(TC_OP_NONE));
}

/* Each op has one kind, declared before its entries; kinds sorted as the entries are (the kind
 * lookup is a binary search); the node carries its kind whatever the opset. */
static void test_kinds(void **state) {
    (void)state;
    assert_null(tc_kinds[TC_KIND_NONE].name);
    for (int k = 1; k < TC_KIND_COUNT; k++) {
        assert_non_null(tc_kinds[k].name);
        if (k > 1 && strcmp(tc_kinds[k - 1].name, tc_kinds[k].name) >= 0)
            fail_msg("kind %s comes after %s: kinds must be sorted by name", tc_kinds[k].name,
                     tc_kinds[k - 1].name);
        assert_int_equal(tc_kind_find(tc_kinds[k].domain, tc_kinds[k].name), k);
        assert_string_equal(tc_kind_name((tc_op_kind)k), tc_kinds[k].name);
        assert_true((tc_kinds[k].activation == TC_ACTIVATION_NONE) ==
                    (tc_kinds[k].activation_cost == 0));
    }
    for (int i = 1; i < TC_OP_COUNT; i++) {
        const tc_op_def *d = &tc_ops[i];
        if (strcmp(tc_kinds[d->kind].name, d->name) != 0 ||
            strcmp(tc_kinds[d->kind].domain, d->domain) != 0)
            fail_msg("%s-%d has the kind of %s", d->name, d->since, tc_kinds[d->kind].name);
    }
    assert_int_equal(tc_kind_find(NULL, "Conv"), TC_KIND_Conv);
    assert_int_equal(tc_kind_find("ai.onnx", "Conv"), TC_KIND_Conv);
    assert_int_equal(tc_kind_find("com.example", "Conv"), TC_KIND_NONE);
    assert_int_equal(tc_kind_find("", "NoSuchOp"), TC_KIND_NONE);
    assert_int_equal(tc_kind_find("", NULL), TC_KIND_NONE);
    assert_string_equal(tc_kind_name(TC_KIND_NONE), "");
    assert_true(tc_kind_has(TC_KIND_Conv, TC_OPF_EPILOGUE));
    assert_true(tc_kind_has(TC_KIND_ConvTranspose, TC_OPF_EPILOGUE));
    assert_false(tc_kind_has(TC_KIND_Gemm, TC_OPF_EPILOGUE));
    assert_false(tc_kind_has(TC_KIND_NONE, 0));
    assert_true(tc_op_mixed_float_inputs(TC_OP_BatchNormalization_14));
    assert_false(tc_op_mixed_float_inputs(TC_OP_Add_7));
    assert_true(tc_op_mixed_float_inputs(TC_OP_NONE));
    assert_int_equal(tc_kinds[TC_KIND_Sigmoid].activation, TC_ACTIVATION_sigmoid);
    assert_int_equal(tc_kinds[TC_KIND_Gemm].activation, TC_ACTIVATION_NONE);

    tconv_model *m;
    tc_error err;
    tconv_node *slice, *custom;
    assert_int_equal(tc_model_create(&m, &err), TCONV_OK);
    assert_int_equal(tc_node_create(m->graph, "Slice", NULL, "s", &slice, &err), TCONV_OK);
    assert_int_equal(slice->op, TC_OP_NONE); /* no opset imported yet: a kind all the same */
    assert_true(tc_node_is(slice, TC_KIND_Slice));
    assert_false(tc_node_is(NULL, TC_KIND_Slice));
    assert_int_equal(tc_node_create(m->graph, "Slice", "com.example", "c", &custom, &err),
                     TCONV_OK);
    assert_int_equal(custom->kind, TC_KIND_NONE);
    tconv_model_free(m);
}

/* Attribute defaults come from the schema: every one has the type it is declared with, and the
 * readers take them (and a present attribute over them). */
static void test_attribute_defaults(void **state) {
    (void)state;
    size_t n_defaults = 0;
    for (int i = 1; i < TC_OP_COUNT; i++) {
        for (size_t a = 0; a < tc_ops[i].n_attrs; a++) {
            const tc_op_attr *at = &tc_ops[i].attrs[a];
            n_defaults += at->has_default;
            if (at->has_default && at->required)
                fail_msg("%s-%d: required attribute '%s' with a default", tc_ops[i].name,
                         tc_ops[i].since, at->name);
            if (at->has_default && at->type != TCONV_ATTR_FLOAT && at->type != TCONV_ATTR_INT &&
                at->type != TCONV_ATTR_STRING)
                fail_msg("%s-%d: '%s' has a default of a type no reader takes", tc_ops[i].name,
                         tc_ops[i].since, at->name);
        }
    }
    assert_true(n_defaults >= 20);
    tconv_model *m;
    tc_error err;
    tconv_node *leaky, *bn, *relu;
    float f = 0.0f;
    int64_t i64 = 0;
    assert_int_equal(tc_model_create(&m, &err), TCONV_OK);
    assert_int_equal(tc_model_set_opset(m, "", 17, &err), TCONV_OK);
    assert_int_equal(tc_node_create(m->graph, "LeakyRelu", NULL, "l", &leaky, &err), TCONV_OK);
    assert_int_equal(tc_node_attr_float_or_default(leaky, "alpha", &f, &err), TCONV_OK);
    assert_true(f == 0.01f);
    assert_int_equal(tc_node_set_attr_float(leaky, "alpha", 0.5f, &err), TCONV_OK);
    assert_int_equal(tc_node_attr_float_or_default(leaky, "alpha", &f, &err), TCONV_OK);
    assert_true(f == 0.5f);
    assert_int_equal(tc_node_create(m->graph, "BatchNormalization", NULL, "b", &bn, &err),
                     TCONV_OK);
    assert_int_equal(tc_node_attr_float_or_default(bn, "epsilon", &f, &err), TCONV_OK);
    assert_true(f == 1e-5f);
    assert_int_equal(tc_node_attr_int_or_default(bn, "training_mode", &i64, &err), TCONV_OK);
    assert_int_equal(i64, 0);
    /* no default in the table: the reader's mistake, named */
    assert_int_equal(tc_node_attr_int_or_default(bn, "is_test", &i64, &err), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "'is_test' no default"));
    assert_int_equal(tc_node_create(m->graph, "Relu", NULL, "r", &relu, &err), TCONV_OK);
    assert_int_equal(tc_node_attr_float_or_default(relu, "alpha", &f, &err), TCONV_ERR_UNSUPPORTED);
    tconv_model_free(m);
    /* a node of no entry (no opset yet) takes the default of its kind's entries */
    tconv_node *elu;
    assert_int_equal(tc_model_create(&m, &err), TCONV_OK);
    assert_int_equal(tc_node_create(m->graph, "Elu", NULL, "e", &elu, &err), TCONV_OK);
    assert_int_equal(elu->op, TC_OP_NONE);
    assert_int_equal(tc_node_attr_float_or_default(elu, "alpha", &f, &err), TCONV_OK);
    assert_true(f == 1.0f);
    tconv_model_free(m);
}

static void test_find_by_domain_name_and_opset(void **state) {
    (void)state;
    assert_int_equal(tc_op_find("", "Slice", 9), TC_OP_Slice_1);
    assert_int_equal(tc_op_find(NULL, "Slice", 10), TC_OP_Slice_10);
    assert_int_equal(tc_op_find("ai.onnx", "Slice", TC_OPSET_LATEST), TC_OP_Slice_10);
    assert_int_equal(tc_op_find("", "Slice", 0), TC_OP_NONE);
    assert_int_equal(tc_op_find("", "Slice", TC_OPSET_LATEST + 1), TC_OP_NONE);
    assert_int_equal(tc_op_find("com.example", "Slice", 13), TC_OP_NONE);
    assert_int_equal(tc_op_find("", "NoSuchOp", 13), TC_OP_NONE);
    assert_int_equal(tc_op_find("", "Clip", 10), TC_OP_Clip_6);
    assert_int_equal(tc_op_find("", "Clip", 11), TC_OP_Clip_11);
    /* Conv has no output_padding (ConvTranspose has): the verifier once said otherwise */
    assert_null(tc_op_attr_find(TC_OP_Conv_1, "output_padding"));
    assert_non_null(tc_op_attr_find(TC_OP_ConvTranspose_1, "output_padding"));
    int first = 0, last = 0;
    assert_true(tc_op_kernel_span("", "Upsample", &first, &last));
    assert_int_equal(first, 7);
    assert_int_equal(last, 9);
    assert_false(tc_op_kernel_span("", "MeanVarianceNormalization", &first, &last));
}

static void test_nodes_follow_the_model_opset(void **state) {
    (void)state;
    tconv_model *m;
    tc_error err;
    tconv_node *slice, *custom;
    assert_int_equal(tc_model_create(&m, &err), TCONV_OK);
    assert_int_equal(tc_node_create(m->graph, "Slice", NULL, "s", &slice, &err), TCONV_OK);
    assert_int_equal(slice->op, TC_OP_NONE); /* no opset imported yet */
    tc_graph_append_node(m->graph, slice);
    assert_int_equal(tc_node_create(m->graph, "Slice", "com.example", "c", &custom, &err),
                     TCONV_OK);
    tc_graph_append_node(m->graph, custom);
    assert_int_equal(tc_model_set_opset(m, "", 9, &err), TCONV_OK);
    assert_int_equal(slice->op, TC_OP_Slice_1);
    assert_int_equal(tc_model_set_opset(m, "", 13, &err), TCONV_OK);
    assert_int_equal(slice->op, TC_OP_Slice_10);
    assert_int_equal(custom->op, TC_OP_NONE);
    tconv_node *later;
    assert_int_equal(tc_node_create(m->graph, "Slice", "ai.onnx", "t", &later, &err), TCONV_OK);
    assert_int_equal(later->op, TC_OP_Slice_10);
    tconv_model_free(m);
}

/* What the executor checks when it plans a node: attributes of the entry only. */
static void test_runtime_refuses_attributes_the_entry_lacks(void **state) {
    (void)state;
    tconv_model *m;
    tc_error err;
    tconv_node *conv;
    assert_int_equal(tc_model_create(&m, &err), TCONV_OK);
    assert_int_equal(tc_model_set_opset(m, "", 17, &err), TCONV_OK);
    assert_int_equal(tc_node_create(m->graph, "Conv", NULL, "c", &conv, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(conv, "strides", (int64_t[]){1}, 1, &err), TCONV_OK);
    assert_int_equal(tc_kernel_check_node_attrs(conv, conv->op, 17, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(conv, "output_padding", (int64_t[]){1}, 1, &err),
                     TCONV_OK);
    assert_int_equal(tc_kernel_check_node_attrs(conv, conv->op, 17, &err), TCONV_ERR_UNSUPPORTED);
    assert_string_equal(err.message, "unsupported attribute 'output_padding' for Conv at opset 17");
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_are_well_formed),
        cmocka_unit_test(test_versions_are_adjacent_ascending_and_disjoint),
        cmocka_unit_test(test_kernels_and_shape_rules_match_the_table),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_attribute_defaults),
        cmocka_unit_test(test_find_by_domain_name_and_opset),
        cmocka_unit_test(test_nodes_follow_the_model_opset),
        cmocka_unit_test(test_runtime_refuses_attributes_the_entry_lacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
