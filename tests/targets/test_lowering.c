/* Backend targets (issue 21): the description format and its built-ins, the independent
 * checker, and per built-in target the lowering of every model of models/ and every golden
 * ConvTranspose case (tests/golden: named cases, the generated matrix, the dtype cases, the
 * target cases): each converts or is refused for a reason the build names; what converts meets
 * the target (the checker, run again here on the result), runs right against the golden outputs
 * (PyTorch), equals the original on random inputs, and has each rewritten node proven alone
 * (tconv_comparison_run_rewrites, what --check runs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importer/importer.h"
#include "passes/conv_transpose_match.h"
#include "passes/pass.h"
#include "passes/target.h"
#include "tconv/tconv.h"
#include "testutil.h"

/* ---------------------------------------------------------------- descriptions */

static void test_builtins_parse_with_sources(void **state) {
    (void)state;
    assert_int_equal(tc_target_builtin_count(), 8);
    static const char *const expected[] = {"tensorrt", "tflite", "coreml", "qnn",
                                           "ethos-u",  "rknn",   "tidl",   "conv-only"};
    for (size_t i = 0; i < tc_target_builtin_count(); i++) {
        tc_target t;
        tc_error err;
        assert_string_equal(tc_target_builtin_name(i), expected[i]);
        assert_int_equal(tc_target_builtin(expected[i], &t, &err), TCONV_OK);
        assert_string_equal(t.name, expected[i]);
        assert_true(t.summary[0]);
        size_t fields = 0;
        for (int f = 0; f < TC_TF_COUNT; f++) {
            if (t.set[f]) {
                fields++;
                assert_true(strlen(t.source[f]) > 5); /* every constraint names its source */
            }
        }
        assert_true(fields >= 1);
        char *text = tc_target_describe(&t);
        assert_non_null(strstr(text, "source: "));
        free(text);
    }
    tc_target t;
    tc_error err;
    assert_int_equal(tc_target_builtin("npu9000", &t, &err), TCONV_ERR_USAGE);
    assert_non_null(strstr(err.message, "tflite"));
}

static void test_builtin_values(void **state) {
    (void)state;
    tc_target t;
    tc_error err;
    assert_int_equal(tc_target_builtin("ethos-u", &t, &err), TCONV_OK);
    assert_int_equal(t.ranks, 1u << 2);
    assert_int_equal(t.pads, TC_PADS_ZERO | TC_PADS_SAME_UPPER);
    assert_true(t.valid_kernel_ge_stride && !t.dilation && t.group == TC_GROUPS_ONE);
    int64_t s11[2] = {1, 1}, s22[2] = {2, 2}, s12[2] = {1, 2};
    assert_true(tc_target_list_allows(&t.strides, s11, 2));
    assert_true(tc_target_list_allows(&t.strides, s22, 2));
    assert_false(tc_target_list_allows(&t.strides, s12, 2));
    assert_true(tc_target_lacks_op(&t, "DepthToSpace"));
    assert_int_equal(t.kernel_h_max, 64);
    assert_int_equal(t.kernel_area_max, 4096);
    assert_int_equal(tc_target_builtin("rknn", &t, &err), TCONV_OK);
    int64_t s24[2] = {2, 4}, s13[2] = {1, 3};
    assert_true(tc_target_list_allows(&t.strides, s24, 2));
    assert_false(tc_target_list_allows(&t.strides, s13, 2));
    assert_int_equal(t.pad_max, 15);
    assert_int_equal(t.kernel_max, 31);
    assert_int_equal(tc_target_builtin("conv-only", &t, &err), TCONV_OK);
    assert_false(t.conv_transpose);
}

/* Parse errors name file, line and field. */
static void test_parse_errors(void **state) {
    (void)state;
    static const struct {
        const char *text, *expected;
    } cases[] = {
        {"name x\nranks 4\n", "f.txt:2: field 'ranks'"},
        {"name x\n\n# c\npads zero diagonal\n", "f.txt:4: field 'pads'"},
        {"name x\ndilation maybe\n", "f.txt:2: field 'dilation'"},
        {"name x\ngroup two\n", "f.txt:2: field 'group'"},
        {"name x\nstrides 2x\n", "f.txt:2: field 'strides'"},
        {"name x\nstrides\n", "f.txt:2: field 'strides'"},
        {"name x\nkernel_max 0\n", "f.txt:2: field 'kernel_max'"},
        {"name x\nbanana 3\n", "f.txt:2: field '?'"},
        {"name x\nranks 2\nranks 3\n", "f.txt:3: field 'ranks'"},
        {"ranks 2\n", "field 'name'"},
        {"name a b\n", "f.txt:1: field 'name'"},
        {"name x\nweights sometimes\n", "f.txt:2: field 'weights'"},
        {"name x\nmissing_ops Depth-To\n", "f.txt:2: field 'missing_ops'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tc_target t;
        tc_error err;
        tc_error_clear(&err);
        assert_int_equal(tc_target_parse(cases[i].text, strlen(cases[i].text), "f.txt", &t, &err),
                         TCONV_ERR_INVALID);
        if (!strstr(err.message, cases[i].expected))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.message, cases[i].expected);
    }
    const char nul[] = "name x\0ranks 2\n";
    tc_target t;
    tc_error err;
    assert_int_equal(tc_target_parse(nul, sizeof nul - 1, "f.txt", &t, &err), TCONV_ERR_INVALID);
}

static void test_file_format_roundtrip(void **state) {
    (void)state;
    const char *text = "# my NPU\n"
                       "name npu-a\n"
                       "summary an NPU\n"
                       "ranks 2 @ datasheet p. 3\n"
                       "pads zero symmetric @ datasheet p. 4\n"
                       "pad_max 3\n"
                       "strides 2 4 @ p. 5\n"
                       "kernels 2x2 4x4\n"
                       "group depthwise\n"
                       "dilation no\n"
                       "output_padding no\n"
                       "weights constant\n"
                       "missing_ops DepthToSpace Resize\n";
    tc_target t;
    tc_error err;
    assert_int_equal(tc_target_parse(text, strlen(text), "npu.txt", &t, &err), TCONV_OK);
    assert_string_equal(t.name, "npu-a");
    assert_string_equal(t.source[TC_TF_RANKS], "datasheet p. 3");
    assert_int_equal(t.pad_max, 3);
    assert_int_equal(t.group, TC_GROUPS_DEPTHWISE);
    int64_t k22[2] = {2, 2}, k23[2] = {2, 3};
    assert_true(tc_target_list_allows(&t.kernels, k22, 2));
    assert_false(tc_target_list_allows(&t.kernels, k23, 2));
    assert_true(tc_target_lacks_op(&t, "Resize"));
    assert_true(t.weights_constant);
    /* an empty description takes everything but the global refusals */
    const char *empty = "name any\n";
    assert_int_equal(tc_target_parse(empty, strlen(empty), "e.txt", &t, &err), TCONV_OK);
    assert_true(t.dilation && t.output_padding && t.group == TC_GROUPS_ANY);
}

static tconv_model *load(const char *dir);

/* The public API: targets by name and by file, the pipeline's target, the checker. */
static void test_public_api(void **state) {
    (void)state;
    tconv_pipeline *p = NULL;
    assert_int_equal(tconv_pipeline_new(&p), TCONV_OK);
    assert_int_equal(tconv_pipeline_set_target(p, "npu9000"), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_pipeline_last_error(p), "unknown target 'npu9000'"));
    assert_int_equal(
        tconv_pipeline_set_target_file(p, TCONV_SOURCE_DIR "/tests/targets/data/bad_value.txt"),
        TCONV_ERR_INVALID);
    assert_non_null(strstr(tconv_pipeline_last_error(p), "bad_value.txt:4: field 'pads'"));
    assert_int_equal(tconv_pipeline_set_target_file(p, TCONV_SOURCE_DIR "/tests/targets/nope"),
                     TCONV_ERR_IO);
    assert_int_equal(tconv_pipeline_set_target(NULL, "tflite"), TCONV_ERR_USAGE);
    /* a target, then none: the default pipeline leaves the dilated node as it is */
    assert_int_equal(tconv_pipeline_set_target(p, "tflite"), TCONV_OK);
    assert_int_equal(tconv_pipeline_set_target(p, NULL), TCONV_OK);
    tconv_model *m = load(TCONV_SOURCE_DIR "/tests/golden/targets/r1_k5_s3_d2");
    tconv_report *report = NULL;
    assert_int_equal(tconv_pipeline_run(p, m, &report), TCONV_OK);
    assert_int_equal(tconv_report_ops_after(report, "ConvTranspose"), 1);
    assert_int_equal(tconv_report_ops_after(report, "Unsqueeze"), 0);
    tconv_report_free(report);
    /* with tflite: 1-D lifted, dilation folded */
    assert_int_equal(tconv_pipeline_set_target(p, "tflite"), TCONV_OK);
    assert_int_equal(tconv_pipeline_run(p, m, &report), TCONV_OK);
    assert_int_equal(tconv_report_rewrite_count(report), 1);
    assert_int_equal(tconv_report_ops_after(report, "Squeeze"), 1);
    tconv_report_free(report);
    tconv_target *t = NULL;
    char message[256];
    assert_int_equal(tconv_target_open("tflite", &t, message, sizeof message), TCONV_OK);
    assert_string_equal(tconv_target_name(t), "tflite");
    size_t n = 99;
    char *text = NULL;
    assert_int_equal(tconv_target_check(t, m, &n, &text), TCONV_OK);
    assert_int_equal(n, 0);
    assert_string_equal(text, "");
    tconv_free(text);
    tconv_model *original = load(TCONV_SOURCE_DIR "/tests/golden/targets/r1_k5_s3_d2");
    assert_int_equal(tconv_target_check(t, original, &n, &text), TCONV_OK);
    assert_int_equal(n, 2); /* 1-D, dilation 2 */
    assert_non_null(strstr(text, "has dilations [2] (dilation: transpose_conv.cc"));
    tconv_free(text);
    assert_int_equal(tconv_target_describe(t, &text), TCONV_OK);
    assert_non_null(strstr(text, "source: "));
    tconv_free(text);
    tconv_target_free(t);
    assert_int_equal(tconv_target_open_file(TCONV_SOURCE_DIR "/tests/targets/data/bad_value.txt",
                                            &t, message, sizeof message),
                     TCONV_ERR_INVALID);
    assert_null(t);
    assert_non_null(strstr(message, ":4: field 'pads'"));
    assert_int_equal(tconv_target_open("nope", &t, message, sizeof message), TCONV_ERR_USAGE);
    tconv_model_free(original);
    tconv_model_free(m);
    tconv_pipeline_free(p);
}

/* ---------------------------------------------------------------- the checker */

static tconv_model *load(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    tconv_model *m = NULL;
    tc_error err;
    if (tc_model_load_file(path, NULL, &m, NULL, &err) != TCONV_OK)
        fail_msg("%s: %s", path, err.message);
    return m;
}

/* Whether checking `dir`'s model against `target` as it is breaks `field`. */
static bool breaks(const char *target, const char *dir, tc_target_field field) {
    tc_target t;
    tc_error err;
    assert_int_equal(tc_target_builtin(target, &t, &err), TCONV_OK);
    tconv_model *m = load(dir);
    tc_target_violations v;
    assert_int_equal(tc_target_check_model(&t, m, &v, &err), TCONV_OK);
    bool found = false;
    for (size_t i = 0; i < v.count; i++)
        found |= v.items[i].field == field;
    tc_target_violations_free(&v);
    tconv_model_free(m);
    return found;
}

#define GOLDEN TCONV_SOURCE_DIR "/tests/golden/convtranspose/"

static void test_checker_finds_each_constraint(void **state) {
    (void)state;
    assert_true(breaks("tflite", GOLDEN "dilation2_k3", TC_TF_DILATION));
    assert_false(breaks("tensorrt", GOLDEN "dilation2_k3", TC_TF_DILATION));
    assert_true(breaks("tflite", GOLDEN "group2_bias", TC_TF_GROUP));
    assert_false(breaks("coreml", GOLDEN "group2_bias", TC_TF_GROUP));
    assert_true(breaks("conv-only", GOLDEN "group2_bias", TC_TF_CONV_TRANSPOSE));
    assert_true(breaks("tflite", GOLDEN "auto_pad_notset_explicit_pads", TC_TF_PADS));
    assert_true(breaks("rknn", GOLDEN "default_attrs_2d", TC_TF_STRIDES));
    assert_true(breaks("ethos-u", TCONV_SOURCE_DIR "/models/decoder3d", TC_TF_RANKS));
    assert_true(breaks("tflite", TCONV_SOURCE_DIR "/models/audio_upsampler", TC_TF_RANKS));
    assert_false(breaks("tensorrt", TCONV_SOURCE_DIR "/models/audio_upsampler", TC_TF_RANKS));
    assert_true(breaks("tidl", TCONV_SOURCE_DIR "/models/fcn_head", TC_TF_STRIDES));
}

/* ---------------------------------------------------------------- lowering, per target */

typedef struct target_counts {
    size_t converted, refused, nodes, failures;
} target_counts;

/* Why a node may be refused: the phase form needs constant weights (the golden cases of
 * convtranspose/, matrix/ and dtypes/ feed W and B as graph inputs), a target that needs
 * constant weights gets none, or 3-D on a 2-D-only target whose depth axis does not fold into
 * the batch (3-D through 2-D is proven only for depth kernel 1, stride 1). Any
 * other refusal is a failure. */
static bool refusal_expected(const char *message) {
    return strstr(message, "phase decomposition") || strstr(message, "3-D through 2-D") ||
           strstr(message, "no constant"); /* the golden cases feed W and B as inputs */
}

static bool is_dynamic(const tconv_model *m) {
    for (size_t i = 0; i < m->graph->n_inputs; i++) {
        const tconv_value *v = m->graph->inputs[i].value;
        for (int a = 0; v->type.kind == TCONV_TYPE_TENSOR && a < v->type.rank; a++) {
            if (v->type.dims[a].kind != TCONV_DIM_STATIC)
                return true;
        }
    }
    return false;
}

/* A QDQ model stays one: every Conv and ConvTranspose left reads W through a DequantizeLinear
 * (what a backend's quantizer fuses), none a float W that lower_weights dequantized. */
static bool weights_still_quantized(const tconv_model *m) {
    for (const tconv_node *n = m->graph->first; n; n = n->next) {
        bool conv = strcmp(n->op_type, "Conv") == 0 || strcmp(n->op_type, "ConvTranspose") == 0;
        const tconv_value *w = n->n_inputs > 1 ? n->inputs[1] : NULL;
        if (conv && (!w || !w->producer || strcmp(w->producer->op_type, "DequantizeLinear") != 0))
            return false;
    }
    return true;
}

/* Each rewritten node alone, the original node against its chain (what --check runs). */
static bool prove_rewrites(tconv_model *original, tconv_model *model, const tconv_report *report,
                           double rtol, double atol, char *why, size_t why_size) {
    tconv_comparison *c = NULL;
    bool ok = tconv_comparison_new(&c) == TCONV_OK && tconv_comparison_set_runs(c, 2) == TCONV_OK &&
              tconv_comparison_set_tolerance(c, rtol, atol) == TCONV_OK;
    ok = ok && tconv_comparison_run_rewrites(c, original, model, report) == TCONV_OK;
    for (size_t i = 0; ok && i < tconv_comparison_rewrite_count(c); i++)
        ok = tconv_comparison_rewrite_proven(c, i);
    if (!ok)
        snprintf(why, why_size, "local proof: %s",
                 c ? tconv_comparison_last_error(c) : "no memory");
    tconv_comparison_free(c);
    return ok;
}

static bool check_case(const char *target, const char *dir, double rtol, double atol,
                       target_counts *counts) {
    tconv_model *original = load(dir), *model = load(dir);
    tconv_pipeline *p = NULL;
    tconv_report *report = NULL;
    char why[1400] = "";
    assert_int_equal(tconv_pipeline_new(&p), TCONV_OK);
    assert_int_equal(tconv_pipeline_set_target(p, target), TCONV_OK);
    tconv_status st = tconv_pipeline_run(p, model, &report);
    bool ok = true;
    if (st != TCONV_OK) {
        ok = st == TCONV_ERR_UNSUPPORTED && refusal_expected(tconv_model_last_error(model));
        snprintf(why, sizeof why, "refused: %s", tconv_model_last_error(model));
        counts->refused++;
    } else {
        counts->converted++;
        counts->nodes += tconv_report_rewrite_count(report);
        tc_target t;
        tc_error err;
        tc_error_clear(&err);
        assert_int_equal(tc_target_builtin(target, &t, &err), TCONV_OK);
        tc_target_violations v;
        assert_int_equal(tc_target_check_model(&t, model, &v, &err), TCONV_OK);
        if (v.count) {
            char *text = tc_target_violations_text(&t, &v, "; ");
            snprintf(why, sizeof why, "checker: %s", text);
            free(text);
            ok = false;
        }
        tc_target_violations_free(&v);
        char data_set[4200];
        snprintf(data_set, sizeof data_set, "%s/test_data_set_0", dir);
        if (ok && tc_test_run_data_set(model, data_set, rtol, atol, NULL, &err) != TCONV_OK) {
            snprintf(why, sizeof why, "golden: %s", err.message);
            ok = false;
        }
        if (ok && !is_dynamic(original) &&
            tc_test_compare_models(original, model, 11, rtol, atol, &err) != TCONV_OK) {
            snprintf(why, sizeof why, "whole model: %s", err.message);
            ok = false;
        }
        if (ok && !is_dynamic(original))
            ok = prove_rewrites(original, model, report, rtol, atol, why, sizeof why);
        if (ok && strstr(dir, "/qdq_") && !weights_still_quantized(model)) {
            snprintf(why, sizeof why,
                     "QDQ: a Conv/ConvTranspose reads a W that is no "
                     "DequantizeLinear output");
            ok = false;
        }
    }
    if (!ok)
        fprintf(stderr, "FAIL %s [%s]: %s\n", dir, target, why);
    tconv_report_free(report);
    tconv_pipeline_free(p);
    tconv_model_free(original);
    tconv_model_free(model);
    return ok;
}

/* A case's tolerance from its set's cases.tsv (name, dtype, atol, rtol: generate_targets.py
 * and generate_phase.py give each case the order-independent bound of its sums); false when the
 * set has no such file or the case no line. */
static bool case_tolerance(const char *parent, const char *name, double *rtol, double *atol) {
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/cases.tsv", parent);
    FILE *f = fopen(path, "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        char case_name[256], dtype[32];
        double a, r;
        found = sscanf(line, "%255s %31s %lf %lf", case_name, dtype, &a, &r) == 4 &&
                strcmp(case_name, name) == 0;
        if (found) {
            *atol = a;
            *rtol = r;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* The cases of `parent` whose names start with `prefix`, but those that end with `skip` (run
 * with other tolerances); a case listed in the set's cases.tsv with a tolerance takes that. */
static void check_suite(const char *target, const char *parent, const char *prefix,
                        const char *skip, size_t min_cases, double rtol, double atol,
                        target_counts *counts) {
    char **names;
    size_t n;
    assert_int_equal(tc_test_list_dirs(parent, prefix, &names, &n), 0);
    assert_true(n >= min_cases);
    target_counts before = *counts;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if (skip && len >= strlen(skip) && strcmp(names[i] + len - strlen(skip), skip) == 0)
            continue;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", parent, names[i]);
        char model[4200];
        snprintf(model, sizeof model, "%s/model.onnx", dir);
        FILE *f = fopen(model, "rb");
        if (!f)
            continue; /* models/ holds a README and the generator too */
        fclose(f);
        double case_rtol = rtol, case_atol = atol;
        case_tolerance(parent, names[i], &case_rtol, &case_atol);
        if (!check_case(target, dir, case_rtol, case_atol, counts))
            counts->failures++;
    }
    tc_test_free_names(names, n);
    fprintf(stderr, "  %s %s%s: %zu converted, %zu refused, %zu nodes rewritten\n", target,
            strrchr(parent, '/') + 1, prefix, counts->converted - before.converted,
            counts->refused - before.refused, counts->nodes - before.nodes);
}

static void check_target(const char *target, size_t min_converted) {
    target_counts counts = {0};
    /* models/: the golden tolerances of tests/models/tests.cmake */
    check_suite(target, TCONV_SOURCE_DIR "/models", "dcgan_generator_fp16", NULL, 1, 1e-2, 5e-3,
                &counts);
    check_suite(target, TCONV_SOURCE_DIR "/models", "", "_fp16", 13, 1e-3, 1e-4, &counts);
    check_suite(target, TCONV_SOURCE_DIR "/tests/golden/convtranspose", "", NULL, 40, 1e-4, 1e-5,
                &counts);
    check_suite(target, TCONV_SOURCE_DIR "/tests/golden/matrix", "", NULL, 300, 1e-4, 1e-5,
                &counts);
    check_suite(target, TCONV_SOURCE_DIR "/tests/golden/dtypes", "float64_", NULL, 40, 1e-12, 1e-12,
                &counts);
    check_suite(target, TCONV_SOURCE_DIR "/tests/golden/dtypes", "float16_", NULL, 40, 1.0 / 512,
                1.0 / 128, &counts);
    /* constant W and B (what deployed models have): the lowerings edit them as constants */
    check_suite(target, TCONV_SOURCE_DIR "/tests/golden/targets", "", NULL, 47, 0, 0, &counts);
    check_suite(target, TCONV_SOURCE_DIR "/tests/golden/phase", "", NULL, 40, 0, 0, &counts);
    fprintf(stderr, "target %s: %zu converted, %zu refused, %zu nodes rewritten, %zu failures\n",
            target, counts.converted, counts.refused, counts.nodes, counts.failures);
    assert_int_equal(counts.failures, 0);
    assert_true(counts.converted >= min_converted);
}

/* Floors: what this build converts (the rest is refused for one of refusal_expected's reasons). */
static void test_target_tensorrt(void **state) {
    (void)state;
    check_target("tensorrt", 550);
}

static void test_target_tflite(void **state) {
    (void)state;
    check_target("tflite", 550);
}

static void test_target_coreml(void **state) {
    (void)state;
    check_target("coreml", 190);
}

static void test_target_qnn(void **state) {
    (void)state;
    check_target("qnn", 550);
}

static void test_target_ethos_u(void **state) {
    (void)state;
    check_target("ethos-u", 497);
}

static void test_target_rknn(void **state) {
    (void)state;
    check_target("rknn", 497);
}

static void test_target_tidl(void **state) {
    (void)state;
    check_target("tidl", 441);
}

static void test_target_conv_only(void **state) {
    (void)state;
    check_target("conv-only", 550);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_parse_with_sources),
        cmocka_unit_test(test_builtin_values),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_file_format_roundtrip),
        cmocka_unit_test(test_checker_finds_each_constraint),
        cmocka_unit_test(test_public_api),
        cmocka_unit_test(test_target_tensorrt),
        cmocka_unit_test(test_target_tflite),
        cmocka_unit_test(test_target_coreml),
        cmocka_unit_test(test_target_qnn),
        cmocka_unit_test(test_target_ethos_u),
        cmocka_unit_test(test_target_rknn),
        cmocka_unit_test(test_target_tidl),
        cmocka_unit_test(test_target_conv_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
