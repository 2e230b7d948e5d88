/* legalize-conv-transpose over every ConvTranspose case we have golden data for: ONNX's
 * conformance tests (test_convtranspose*), the named semantic cases and the generated matrix
 * (tests/golden, PyTorch-computed). For each case and both policies: legalize, check that no
 * ConvTranspose is left with padding the policy forbids, run the converted model against the
 * golden outputs (tests/golden/dtypes: float16, bfloat16 and float64, run as written too),
 * compare it with the original on random inputs (tconv_comparison, the one
 * compare behind tconv-import --check), and save +
 * reload it to prove the emitted nodes serialize. */
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
#include "passes/rewrite_report.h"
#include "runtime/compute/test_hooks.h"
#include "testutil.h"

#define PASSES "shape-infer,legalize-conv-transpose,dce"

typedef struct case_counts {
    size_t cases, rewritten_nodes, failures;
} case_counts;

static bool attr_all_zero(const tconv_node *node, const char *name) {
    const tc_attr *a = tc_node_attr(node, name);
    for (size_t i = 0; a && i < a->n; i++) {
        if (a->ints[i] != 0)
            return false;
    }
    return true;
}

/* What the policy promises about every ConvTranspose left in the graph. */
static const char *illegal_conv_transpose(const tconv_graph *graph, tconv_policy policy) {
    for (tconv_node *n = graph->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_attrs; i++) {
            if (n->attrs[i].type == TCONV_ATTR_GRAPH) {
                const char *why = illegal_conv_transpose(n->attrs[i].g, policy);
                if (why)
                    return why;
            }
        }
        if (!tc_is_conv_transpose(n))
            continue;
        const tc_attr *auto_pad = tc_node_attr(n, "auto_pad");
        if (auto_pad && auto_pad->s.len && strncmp((const char *)auto_pad->s.data, "NOTSET", 6) &&
            strncmp((const char *)auto_pad->s.data, "VALID", 5))
            return "auto_pad SAME left";
        if (tc_node_attr(n, "output_shape"))
            return "output_shape left";
        if (!attr_all_zero(n, "output_padding"))
            return "output_padding left";
        const tc_attr *pads = tc_node_attr(n, "pads");
        if (pads && policy == TCONV_POLICY_VALID_ONLY && !attr_all_zero(n, "pads"))
            return "pads left under valid-only";
        for (size_t i = 0; pads && i < pads->n / 2; i++) {
            if (pads->ints[i] != pads->ints[i + pads->n / 2])
                return "asymmetric pads left";
        }
    }
    return NULL;
}

static tconv_status legalize_as(tconv_model *model, tconv_policy policy,
                                tconv_convention convention, size_t *rewritten, tc_error *err) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    options.policy = policy;
    options.convention = convention;
    tc_rewrite_report report;
    tc_rewrite_report_init(&report);
    options.report = &report;
    tconv_status st = tc_run_passes(model, PASSES, &options, NULL, NULL, err);
    *rewritten += report.count;
    tc_rewrite_report_free(&report);
    return st;
}

static tconv_status legalize(tconv_model *model, tconv_policy policy, size_t *rewritten,
                             tc_error *err) {
    return legalize_as(model, policy, TCONV_CONVENTION_ONNX, rewritten, err);
}

/* Tolerances of a set of cases (|got - expected| <= atol + rtol * |expected|): rtol/atol for the
 * rewritten model (golden data, and the original on random inputs); run_original: the model as
 * written is run against the golden outputs too, at original_rtol/original_atol. */
typedef struct tolerance {
    double rtol, atol;
    bool run_original;
    double original_rtol, original_atol;
} tolerance;

static const tolerance FLOAT32_TOLERANCE = {1e-4, 1e-5, false, 0.0, 0.0};

/* One case under one policy; returns false (after printing why) on any failure. */
static bool check_case(const char *dir, tconv_policy policy, tolerance tol, case_counts *counts) {
    char model_path[4200], data_set[4200];
    snprintf(model_path, sizeof model_path, "%s/model.onnx", dir);
    snprintf(data_set, sizeof data_set, "%s/test_data_set_0", dir);
    tconv_model *original = NULL, *model = NULL, *reloaded = NULL;
    tc_error err;
    tc_error_clear(&err);
    const char *why = NULL;
    tconv_status st = tc_model_load_file(model_path, NULL, &original, NULL, &err);
    if (st == TCONV_OK && tol.run_original)
        st = tc_test_run_data_set(original, data_set, tol.original_rtol, tol.original_atol, NULL,
                                  &err);
    if (st == TCONV_OK)
        st = tc_model_load_file(model_path, NULL, &model, NULL, &err);
    if (st == TCONV_OK)
        st = legalize(model, policy, &counts->rewritten_nodes, &err);
    if (st == TCONV_OK && (why = illegal_conv_transpose(model->graph, policy)) != NULL)
        st = tc_error_set(&err, TCONV_ERR_MISMATCH, "%s", why);
    if (st == TCONV_OK)
        st = tc_test_run_data_set(model, data_set, tol.rtol, tol.atol, NULL, &err);
    if (st == TCONV_OK)
        st = tc_test_compare_models(original, model, 7, tol.rtol, tol.atol, &err);
    if (st == TCONV_OK)
        st = tc_test_reload(model, &reloaded, &err);
    if (st == TCONV_OK)
        st = tc_test_run_data_set(reloaded, data_set, tol.rtol, tol.atol, NULL, &err);
    if (st != TCONV_OK)
        fprintf(stderr, "FAIL %s [%s]: %s\n", dir, tconv_policy_name(policy), err.message);
    tconv_model_free(original);
    tconv_model_free(model);
    tconv_model_free(reloaded);
    counts->cases++;
    return st == TCONV_OK;
}

static void check_all_at(const char *parent, const char *prefix, size_t min_cases, tolerance tol) {
    char **names;
    size_t n;
    assert_int_equal(tc_test_list_dirs(parent, prefix, &names, &n), 0);
    assert_true(n >= min_cases);
    case_counts counts = {0};
    static const tconv_policy policies[] = {TCONV_POLICY_SAME_OR_ASYMMETRIC,
                                            TCONV_POLICY_VALID_ONLY};
    for (size_t i = 0; i < n; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", parent, names[i]);
        for (size_t p = 0; p < 2; p++) {
            if (!check_case(dir, policies[p], tol, &counts))
                counts.failures++;
        }
    }
    fprintf(stderr, "%s: %zu cases x 2 policies, %zu nodes rewritten, %zu failures\n", parent, n,
            counts.rewritten_nodes, counts.failures);
    tc_test_free_names(names, n);
    assert_int_equal(counts.failures, 0);
    assert_true(counts.rewritten_nodes > 0);
}

static void check_all(const char *parent, const char *prefix, size_t min_cases) {
    check_all_at(parent, prefix, min_cases, FLOAT32_TOLERANCE);
}

static void test_onnx_conformance_cases(void **state) {
    (void)state;
    check_all(TCONV_ONNX_NODE_TESTS, "test_convtranspose", 11);
}

static void test_named_semantic_cases(void **state) {
    (void)state;
    check_all(TCONV_SOURCE_DIR "/tests/golden/convtranspose", "", 40);
}

static void test_generated_matrix(void **state) {
    (void)state;
    check_all(TCONV_SOURCE_DIR "/tests/golden/matrix", "", 300);
}

/* tests/golden/dtypes (generate_dtypes.py): every named case in float16, bfloat16 and float64,
 * golden computed in float64 from the rounded inputs and rounded once. Run as written and after
 * the rewrite.
 * As written, float16 and bfloat16 are computed in float32 and rounded once on store: within one
 * unit in the last place, 2^-10 (float16, 11-bit significand) and 2^-7 (bfloat16, 8 bits)
 * relative (atol 1e-5 for float32's sum error near zero).
 * The rewritten model stores intermediate values in the type (the ConvTranspose's output before a
 * separate bias Add or Pad): each such rounding costs up to half a unit of the intermediate
 * (|value| < 16 in these cases: 2^-8 in float16, 2^-5 in bfloat16), which cancellation can leave
 * in a small result, so atol is one such unit, 2^-7 and 2^-4.
 * float64 computes in double: a few ulps of double sums of ~30 terms of size ~10, 1e-12, which a
 * float32 detour (errors ~1e-7) could never meet. */
static void test_dtype_cases(void **state) {
    (void)state;
    const char *parent = TCONV_SOURCE_DIR "/tests/golden/dtypes";
    check_all_at(parent, "float16_", 40, (tolerance){1.0 / 512, 1.0 / 128, true, 1.0 / 1024, 1e-5});
    check_all_at(parent, "bfloat16_", 40, (tolerance){1.0 / 64, 1.0 / 16, true, 1.0 / 128, 1e-5});
    check_all_at(parent, "float64_", 40, (tolerance){1e-12, 1e-12, true, 1e-12, 1e-12});
}

/* Rewrites made for onnxruntime's conventions (--convention ort / ort-legacy) are proven the way
 * --check proves them: the original run under the same convention. */
static void check_conventions(const char *parent, const char *prefix, size_t min_cases) {
    char **names;
    size_t n, failures = 0, rewritten = 0;
    assert_int_equal(tc_test_list_dirs(parent, prefix, &names, &n), 0);
    assert_true(n >= min_cases);
    static const tconv_convention conventions[] = {TCONV_CONVENTION_ORT,
                                                   TCONV_CONVENTION_ORT_LEGACY};
    for (size_t i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s/model.onnx", parent, names[i]);
        for (size_t k = 0; k < 2; k++) {
            tconv_model *original = NULL, *model = NULL;
            tc_error err;
            tc_error_clear(&err);
            tconv_status st = tc_model_load_file(path, NULL, &original, NULL, &err);
            if (st == TCONV_OK)
                st = tc_model_load_file(path, NULL, &model, NULL, &err);
            if (st == TCONV_OK)
                st = legalize_as(model, TCONV_POLICY_SAME_OR_ASYMMETRIC, conventions[k], &rewritten,
                                 &err);
            if (st == TCONV_OK)
                st =
                    tc_test_compare_models_as(original, model, conventions[k], 7, 1e-4, 1e-5, &err);
            if (st != TCONV_OK) {
                fprintf(stderr, "FAIL %s [%s]: %s\n", names[i],
                        tconv_convention_name(conventions[k]), err.message);
                failures++;
            }
            tconv_model_free(original);
            tconv_model_free(model);
        }
    }
    fprintf(stderr,
            "%s: %zu cases x 2 conventions (ort, ort-legacy), %zu nodes rewritten, %zu failures\n",
            parent, n, rewritten, failures);
    tc_test_free_names(names, n);
    assert_int_equal(failures, 0);
    assert_true(rewritten > 0);
}

static void test_onnxruntime_conventions(void **state) {
    (void)state;
    check_conventions(TCONV_ONNX_NODE_TESTS, "test_convtranspose", 11);
    check_conventions(TCONV_SOURCE_DIR "/tests/golden/convtranspose", "", 40);
    check_conventions(TCONV_SOURCE_DIR "/tests/golden/matrix", "", 300);
}

/* A wrong crop in the Slice kernel (every start one too far) must be caught: by the comparison
 * with the original (--check's) and by the golden outputs run as written. Fused, the Slice
 * kernel never runs: that is why proofs run unfused. */
static void test_wrong_slice_crop_is_caught(void **state) {
    (void)state;
    const char *parent = TCONV_SOURCE_DIR "/tests/golden/convtranspose";
    char **names;
    size_t n, with_slice = 0, caught_cmp = 0, caught_golden = 0, fused_blind = 0;
    assert_int_equal(tc_test_list_dirs(parent, "", &names, &n), 0);
    for (size_t i = 0; i < n; i++) {
        char model_path[4200], data_set[4200];
        snprintf(model_path, sizeof model_path, "%s/%s/model.onnx", parent, names[i]);
        snprintf(data_set, sizeof data_set, "%s/%s/test_data_set_0", parent, names[i]);
        tconv_model *original = NULL, *model = NULL;
        tc_error err;
        size_t rewritten = 0;
        assert_int_equal(tc_model_load_file(model_path, NULL, &original, NULL, &err), TCONV_OK);
        assert_int_equal(tc_model_load_file(model_path, NULL, &model, NULL, &err), TCONV_OK);
        assert_int_equal(legalize(model, TCONV_POLICY_SAME_OR_ASYMMETRIC, &rewritten, &err),
                         TCONV_OK);
        tc_op_counts ops;
        assert_int_equal(tc_op_counts_collect(model, &ops, &err), TCONV_OK);
        if (tc_op_counts_get(&ops, "Slice") > 0) {
            with_slice++;
            tc_test_slice_start_shift = 1;
            caught_cmp += tc_test_compare_models(original, model, 7, 1e-4, 1e-5, &err) != TCONV_OK;
            caught_golden +=
                tc_test_run_data_set_as(model, data_set, false, 1e-4, 1e-5, NULL, &err) != TCONV_OK;
            fused_blind +=
                tc_test_run_data_set_as(model, data_set, true, 1e-4, 1e-5, NULL, &err) == TCONV_OK;
            tc_test_slice_start_shift = 0;
        }
        tc_op_counts_free(&ops);
        tconv_model_free(original);
        tconv_model_free(model);
    }
    tc_test_free_names(names, n);
    fprintf(stderr,
            "wrong Slice crop: %zu cases with a Slice, caught by the comparison %zu, by "
            "the unfused golden run %zu; fused runs that missed it %zu\n",
            with_slice, caught_cmp, caught_golden, fused_blind);
    assert_true(with_slice >= 10);
    assert_int_equal(caught_cmp, with_slice);
    assert_int_equal(caught_golden, with_slice);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_onnx_conformance_cases),
        cmocka_unit_test(test_named_semantic_cases),
        cmocka_unit_test(test_generated_matrix),
        cmocka_unit_test(test_dtype_cases),
        cmocka_unit_test(test_onnxruntime_conventions),
        cmocka_unit_test(test_wrong_slice_crop_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
