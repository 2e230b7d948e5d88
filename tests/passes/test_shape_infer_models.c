/* shape-infer against real files with known answers: the ONNX conformance node tests
 * (TCONV_ONNX_NODE_TESTS: the 291 of the first ops strictly, all 1,765 for consistency), the
 * ConvTranspose golden cases (tests/golden), the tensor op golden cases (tests/golden/ops) and the
 * regression models (models/). For each model:
 *   1. inference on the model as written must succeed: what the file declares is consistent
 *      with what tconv computes (a disagreement is an error);
 *   2. with the graph outputs' shapes erased, inference must give back every static dim of the
 *      expected outputs (test_data_set_0/output_N.pb) wherever it gives a static dim at all.
 *      For the node tests, small inputs (the shape arguments: starts, axes, scales, sizes...)
 *      are first folded into Constant nodes holding their test data, so that the arithmetic of
 *      Slice, Resize, Reshape, (Un)Squeeze, Pad... is checked against ONNX's own results.
 * What is not checked is counted, its reason printed, and bounded by each test: a directory
 * without a model or with one that does not load (none allowed), an output whose expected data
 * is not a TensorProto file or whose type is not a tensor (sequences, optionals).
 * Set TCONV_TEST_VERBOSE=1 to list the outputs inference could not fully determine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "importer/importer.h"
#include "passes/pass.h"
#include "testutil.h"

typedef struct tally {
    size_t models, outputs, fully_static, failures;
    size_t skipped;   /* directories not checked: no model.onnx, or it does not load */
    size_t unchecked; /* outputs not compared: see unchecked_output */
    bool quiet;       /* a phase whose counts are dropped prints nothing */
} tally;

/* Counts and prints an output that is not compared, with the reason. */
static void unchecked_output(const char *dir, size_t index, const char *why, tally *t) {
    if (!t->quiet)
        print_message("unchecked %s: output %zu: %s\n", dir, index, why);
    t->unchecked++;
}

static bool verbose(void) {
    const char *v = getenv("TCONV_TEST_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static tconv_status infer(tconv_model *m, tc_error *err) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    tc_error_clear(err);
    return tc_pass_shape_infer(m->graph, &options, err);
}

/* Forgets the graph outputs' shapes (dtype kept) so that inference has to find them. */
static void erase_output_shapes(tconv_model *m) {
    for (size_t i = 0; i < m->graph->n_outputs; i++) {
        tconv_value *v = m->graph->outputs[i].value;
        tc_error err;
        if (v->type.kind == TCONV_TYPE_TENSOR)
            assert_int_equal(tc_value_set_tensor_type(v, v->type.dtype, -1, NULL, &err), TCONV_OK);
    }
}

/* Compares one inferred output type with the dims of the expected tensor. */
static void compare_output(const char *dir, size_t index, const tconv_value *v,
                           const tconv_tensor *expected, tally *t) {
    const tc_type *type = &v->type;
    if (type->kind != TCONV_TYPE_TENSOR) {
        unchecked_output(dir, index, "not a tensor type", t);
        return;
    }
    t->outputs++;
    if (type->rank >= 0 && type->rank != expected->rank) {
        print_message("MISMATCH %s: output '%s' inferred rank %d, expected %d\n", dir, v->name,
                      type->rank, expected->rank);
        t->failures++;
        return;
    }
    bool all_static = type->rank >= 0;
    for (int i = 0; i < type->rank; i++) {
        const tc_dim *d = &type->dims[i];
        if (d->kind != TCONV_DIM_STATIC) {
            all_static = false;
            continue;
        }
        if (d->value != expected->dims[i]) {
            print_message("MISMATCH %s: output '%s' axis %d inferred %lld, expected %lld\n", dir,
                          v->name, i, (long long)d->value, (long long)expected->dims[i]);
            t->failures++;
        }
    }
    if (all_static)
        t->fully_static++;
    else if (verbose())
        print_message("partial  %s: output '%s' (rank %d)\n", dir, v->name, type->rank);
}

/* Replaces the uses of graph input i by a Constant holding its test data (small inputs only:
 * the shape arguments Slice, Resize, Reshape... take as inputs in the node tests). */
static void fold_input(tconv_model *m, const char *dir, size_t i) {
    char path[4200];
    tc_error err;
    tconv_tensor *data;
    int64_t n;
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
    if (!file_exists(path) || tc_tensor_load_pb(m, path, &data, &err) != TCONV_OK ||
        !tc_tensor_elements(data, &n) || n > 64)
        return;
    tconv_graph *g = m->graph;
    tconv_node *k;
    tconv_value *out;
    assert_int_equal(tc_node_create(g, "Constant", NULL, NULL, &k, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_tensor(k, "value", data, &err), TCONV_OK);
    assert_int_equal(tc_graph_add_unique_value(g, "folded", &out, &err), TCONV_OK);
    assert_int_equal(tc_node_add_output(k, out, &err), TCONV_OK);
    tc_graph_insert_before(g, g->first, k);
    assert_int_equal(tc_value_replace_uses(g->inputs[i].value, out, &err), TCONV_OK);
}

/* Infers and compares the outputs with the expected data; false if inference failed. */
static bool infer_and_compare(tconv_model *m, const char *dir, const char *phase, tally *t) {
    tc_error err;
    if (infer(m, &err) != TCONV_OK) {
        print_message("FAIL     %s (%s): %s\n", dir, phase, err.message);
        t->failures++;
        return false;
    }
    for (size_t i = 0; i < m->graph->n_outputs; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/test_data_set_0/output_%zu.pb", dir, i);
        tconv_tensor *expected;
        if (!file_exists(path)) {
            unchecked_output(dir, i, "no expected data", t);
            continue;
        }
        if (tc_tensor_load_pb(m, path, &expected, &err) != TCONV_OK) {
            unchecked_output(dir, i, err.message, t); /* sequences and optionals */
            continue;
        }
        compare_output(dir, i, m->graph->outputs[i].value, expected, t);
    }
    return true;
}

static void check_model_dir(const char *dir, bool fold_inputs, tally *t) {
    char path[4200];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (!file_exists(path)) {
        print_message("skip     %s: no model.onnx\n", dir);
        t->skipped++;
        return;
    }
    tconv_model *m;
    tc_error err;
    if (tc_model_load_file(path, NULL, &m, NULL, &err) != TCONV_OK) {
        print_message("skip     %s: %s\n", dir, err.message);
        t->skipped++;
        return;
    }
    t->models++;
    tally as_declared = *t; /* phase 1 only checks consistency: its counts are not kept */
    as_declared.quiet = true;
    bool ok = infer_and_compare(m, dir, "as declared", &as_declared);
    t->failures = as_declared.failures;
    if (ok) {
        erase_output_shapes(m);
        for (size_t i = 0; fold_inputs && i < m->graph->n_inputs; i++)
            fold_input(m, dir, i);
        infer_and_compare(m, dir, fold_inputs ? "outputs erased, inputs folded" : "outputs erased",
                          t);
    }
    tconv_model_free(m);
}

static void print_tally(const char *root, const tally *t) {
    print_message("%s: %zu models (%zu directories skipped), %zu outputs (%zu unchecked), %zu "
                  "fully static, %zu failures\n",
                  root, t->models, t->skipped, t->outputs, t->unchecked, t->fully_static,
                  t->failures);
}

static tally check_dirs(const char *root, char **names, size_t count, bool fold_inputs) {
    tally t = {0, 0, 0, 0, 0, 0, false};
    for (size_t i = 0; i < count; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        check_model_dir(dir, fold_inputs, &t);
    }
    print_tally(root, &t);
    return t;
}

static tally check_tree(const char *root, bool fold_inputs) {
    char **names;
    size_t count;
    if (tc_test_list_dirs(root, "", &names, &count) != 0)
        fail_msg("cannot list %s", root);
    tally t = check_dirs(root, names, count, fold_inputs);
    tc_test_free_names(names, count);
    return t;
}

/* The 291 tests of the ops tconv was first built for (tc_test_list_node_test_subset): every
 * output must come out fully static. */
static void test_onnx_node_test_subset(void **state) {
    (void)state;
    char **names;
    size_t count;
    assert_int_equal(tc_test_list_node_test_subset(&names, &count), 0);
    tally t = check_dirs(TCONV_ONNX_NODE_TESTS, names, count, true);
    tc_test_free_names(names, count);
    assert_int_equal(t.failures, 0);
    assert_int_equal(t.skipped, 0);
    assert_int_equal(t.models, 291);
    /* Not TensorProto files, so not compared: test_identity_opt (an optional) and
     * test_identity_sequence (a sequence). */
    assert_true(t.unchecked <= 2);
    /* Static inputs and the shape arguments folded: every output must come out static. */
    assert_int_equal(t.fully_static, t.outputs);
}

/* All 1,765 tests of ONNX v1.22.0: no model may fail to load and no inferred shape may
 * disagree with ONNX's output data, for the ops tconv has no rule for too (their outputs stay
 * dynamic). Measured 2026-11-26: 2150 outputs, 29 not tensors (sequences, optionals), 1361
 * fully static; the floor below catches a rule that silently stops giving static shapes. */
static void test_onnx_node_tests_all(void **state) {
    (void)state;
    tally t = check_tree(TCONV_ONNX_NODE_TESTS, true);
    assert_int_equal(t.failures, 0);
    assert_int_equal(t.skipped, 0);
    assert_int_equal(t.models, 1765);
    assert_true(t.unchecked <= 29);
    assert_true(t.fully_static >= 1361);
}

static void test_conv_transpose_golden(void **state) {
    (void)state;
    tally a = check_tree(TCONV_SOURCE_DIR "/tests/golden/convtranspose", false);
    tally b = check_tree(TCONV_SOURCE_DIR "/tests/golden/matrix", false);
    assert_int_equal(a.failures + b.failures, 0);
    assert_int_equal(a.skipped + b.skipped + a.unchecked + b.unchecked, 0);
    assert_int_equal(a.fully_static, a.outputs);
    assert_int_equal(b.fully_static, b.outputs);
    assert_true(a.models > 40 && b.models > 250);
}

/* The tensor and shape op cases tests/golden/ops/tensor_cases.tsv lists (generate_tensor.py),
 * inputs folded, but the error_* ones (nodes the runtime must refuse: their row names the
 * expected failure). Every output comes out static except NonZero's count, which depends on the
 * data (five nonzero_* cases), and range_f64 (shape inference reads float32 constants only). */
static void test_tensor_op_golden(void **state) {
    (void)state;
    const char *root = TCONV_SOURCE_DIR "/tests/golden/ops";
    FILE *list = fopen(TCONV_SOURCE_DIR "/tests/golden/ops/tensor_cases.tsv", "r");
    assert_non_null(list);
    tally t = {0, 0, 0, 0, 0, 0, false};
    char line[1024];
    size_t rows = 0;
    while (fgets(line, sizeof line, list)) {
        char *tab = strchr(line, '\t');
        if (rows++ == 0 || !tab)
            continue; /* the header */
        *tab = '\0';
        if (strncmp(line, "error_", 6) == 0)
            continue;
        char dir[2048];
        snprintf(dir, sizeof dir, "%s/%s", root, line);
        check_model_dir(dir, true, &t);
    }
    fclose(list);
    print_tally(root, &t);
    assert_int_equal(t.failures, 0);
    assert_int_equal(t.skipped + t.unchecked, 0);
    assert_true(t.models >= 145);
    assert_true(t.fully_static + 6 >= t.outputs);
}

static void test_regression_models(void **state) {
    (void)state;
    tally t = check_tree(TCONV_SOURCE_DIR "/models", false);
    assert_int_equal(t.failures, 0);
    assert_int_equal(t.skipped, 1); /* models/detectors: a folder of models, checked below */
    assert_int_equal(t.unchecked, 0);
    assert_true(t.models >= 10);
    /* torchvision's detectors: their outputs' row counts depend on the data */
    tally d = check_tree(TCONV_SOURCE_DIR "/models/detectors", false);
    assert_int_equal(d.failures, 0);
    assert_int_equal(d.skipped + d.unchecked, 0);
    assert_int_equal(d.models, 2);
}

/* ---------------------------------------------------------------- every value of a static model */

typedef struct value_tally {
    size_t models, values, shaped, not_tensors;
} value_tally;

static bool fully_static(const tconv_value *v) {
    int64_t dims[TC_MAX_RANK];
    int rank;
    return tc_value_static_shape(v, dims, &rank);
}

/* Counts the values the nodes of `g` (and of its subgraphs) produce; prints those left without
 * a fully static shape. */
static void count_values(const char *path, const tconv_graph *g, value_tally *t, size_t *missing) {
    for (const tconv_node *n = g->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_attrs; i++) {
            const tc_attr *a = &n->attrs[i];
            if (a->type == TCONV_ATTR_GRAPH && a->g)
                count_values(path, a->g, t, missing);
            for (size_t k = 0; a->type == TCONV_ATTR_GRAPHS && k < a->n; k++)
                count_values(path, a->graphs[k], t, missing);
        }
        for (size_t i = 0; i < n->n_outputs; i++) {
            const tconv_value *v = n->outputs[i];
            if (!v)
                continue;
            if (v->type.kind == TCONV_TYPE_OTHER) {
                t->not_tensors++; /* sequences, optionals: no shape to give */
                continue;
            }
            t->values++;
            if (fully_static(v)) {
                t->shaped++;
            } else {
                (*missing)++;
                print_message("no shape %s: '%s' of node '%s' (%s)\n", path, v->name,
                              n->name ? n->name : "", n->op_type);
            }
        }
    }
}

static bool inputs_static(const tconv_graph *g) {
    for (size_t i = 0; i < g->n_inputs; i++) {
        if (!g->inputs[i].value->initializer && !fully_static(g->inputs[i].value))
            return false;
    }
    return true;
}

/* Values whose size depends on what a Loop computes, not on shapes: a slice at the iteration
 * number in the body (ONNX's test_loop11) and a loop-carried value that grows every iteration. */
static bool data_dependent(const char *path) {
    static const char *const names[] = {"/onnx_loop11/", "/torch_loop_concat_grows/"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strstr(path, names[i]))
            return true;
    }
    return false;
}

/* Values a call of one of the model's own functions (ModelProto.functions) computes: shape
 * inference does not look into function bodies (the runtime plans a body per call; inferring
 * one would write types into the body every caller shares). Left to do. */
static bool calls_model_function(const char *path) {
    return strstr(path, "/fn_local_nested/") != NULL;
}

static void count_model(const char *path, value_tally *t, size_t *missing, size_t *exempt) {
    tconv_model *m;
    tc_error err;
    if (tc_model_load_file(path, NULL, &m, NULL, &err) != TCONV_OK)
        fail_msg("%s: %s", path, err.message);
    if (inputs_static(m->graph)) {
        if (infer(m, &err) != TCONV_OK)
            fail_msg("%s: %s", path, err.message);
        value_tally one = {1, 0, 0, 0};
        size_t gaps = 0;
        count_values(path, m->graph, &one, &gaps);
        t->models++;
        t->values += one.values;
        t->shaped += one.shaped;
        t->not_tensors += one.not_tensors;
        *(data_dependent(path) || calls_model_function(path) ? exempt : missing) += gaps;
    }
    tconv_model_free(m);
}

static void count_tree(const char *root, value_tally *t, size_t *missing, size_t *exempt) {
    char **names;
    size_t count;
    if (tc_test_list_dirs(root, "", &names, &count) != 0)
        fail_msg("cannot list %s", root);
    for (size_t i = 0; i < count; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s/model.onnx", root, names[i]);
        if (file_exists(path) && strncmp(names[i], "error_", 6) != 0) /* broken on purpose */
            count_model(path, t, missing, exempt);
    }
    tc_test_free_names(names, count);
}

/* Every value of every static model (every graph input of static shape) in models/, the golden
 * suites and tests/proof gets a static shape from inference: the local proof of a rewrite runs at
 * the shapes it finds, so a value left unknown would be proven at guessed sizes. */
static void test_static_models_every_value(void **state) {
    (void)state;
    static const char *const roots[] = {"/models",
                                        "/tests/golden/convtranspose",
                                        "/tests/golden/matrix",
                                        "/tests/golden/ort_conventions",
                                        "/tests/golden/dynamic_output_shape",
                                        "/tests/golden/dtypes",
                                        "/tests/golden/dtype_ops",
                                        "/tests/golden/ops"};
    static const char *const proof_models[] = {"melgan_pad.onnx", "chunk_slice.onnx",
                                               "unnamed.onnx", "same_name.onnx"};
    value_tally t = {0, 0, 0, 0};
    size_t missing = 0, exempt = 0;
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        char root[1024];
        snprintf(root, sizeof root, "%s%s", TCONV_SOURCE_DIR, roots[i]);
        count_tree(root, &t, &missing, &exempt);
    }
    for (size_t i = 0; i < sizeof proof_models / sizeof proof_models[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/proof/%s", TCONV_SOURCE_DIR, proof_models[i]);
        count_model(path, &t, &missing, &exempt);
    }
    print_message("%zu static models: %zu values, %zu with a static shape, %zu data-dependent or "
                  "computed by a model function, %zu without (%zu sequences/optionals)\n",
                  t.models, t.values, t.shaped, exempt, missing, t.not_tensors);
    assert_true(t.models > 900);
    assert_int_equal(missing, 0);
    assert_true(exempt <= 3);
    assert_int_equal(t.shaped + exempt, t.values);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_onnx_node_test_subset),
        cmocka_unit_test(test_onnx_node_tests_all),
        cmocka_unit_test(test_conv_transpose_golden),
        cmocka_unit_test(test_tensor_op_golden),
        cmocka_unit_test(test_regression_models),
        cmocka_unit_test(test_static_models_every_value),
    };
    return cmocka_run_group_tests_name("passes.shape_infer_models", tests, NULL, NULL);
}
