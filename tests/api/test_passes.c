/* Public API, passes: the built-in list, policy and convention names, pipelines with options,
 * the report's contents, passes of the caller's own in the list, after-pass callbacks, and
 * failures that name the pass and leave the model consistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

#include "api_test_util.h"

#define KERAS API_MODEL("keras_decoder")

static tconv_pipeline *new_pipeline(const char *passes) {
    tconv_pipeline *p = NULL;
    assert_int_equal(tconv_pipeline_new(&p), TCONV_OK);
    assert_int_equal(tconv_pipeline_set_passes(p, passes), TCONV_OK);
    return p;
}

static void test_builtin_passes_and_names(void **state) {
    (void)state;
    size_t n = tconv_builtin_pass_count();
    assert_int_equal(n, 5);
    const char *wanted[] = {"shape-infer", "legalize-conv-transpose", "dce", "lint-conv-transpose",
                            "lower-for-target"};
    for (size_t w = 0; w < 5; w++) {
        bool found = false;
        for (size_t i = 0; i < n; i++)
            found |= strcmp(tconv_builtin_pass_name(i), wanted[w]) == 0 &&
                     strlen(tconv_builtin_pass_summary(i)) > 0;
        assert_true(found);
    }
    assert_null(tconv_builtin_pass_name(n));
    assert_null(tconv_builtin_pass_summary(n));

    tconv_policy policy = TCONV_POLICY_SAME_OR_ASYMMETRIC;
    assert_true(tconv_policy_from_name("valid-only", &policy));
    assert_int_equal(policy, TCONV_POLICY_VALID_ONLY);
    assert_string_equal(tconv_policy_name(policy), "valid-only");
    assert_false(tconv_policy_from_name("bogus", &policy));
    assert_false(tconv_policy_from_name(NULL, &policy));
    assert_false(tconv_policy_from_name("valid-only", NULL));
    tconv_convention convention = TCONV_CONVENTION_ONNX;
    assert_true(tconv_convention_from_name("ort-legacy", &convention));
    assert_int_equal(convention, TCONV_CONVENTION_ORT_LEGACY);
    assert_string_equal(tconv_convention_name(TCONV_CONVENTION_ORT), "ort");
    assert_false(tconv_convention_from_name(NULL, &convention));
}

static void test_default_pipeline_and_report(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_pipeline *p = NULL;
    assert_int_equal(tconv_pipeline_new(&p), TCONV_OK); /* defaults: TCONV_DEFAULT_PASSES */
    tconv_report *r = NULL;
    API_OK(m, tconv_pipeline_run(p, m, &r));
    assert_non_null(r);
    assert_int_equal(tconv_report_rewrite_count(r), 4);
    assert_string_equal(tconv_report_rewritten_node(r, 0), "deconv1");
    assert_non_null(strstr(tconv_report_old_attributes(r, 0), "SAME_UPPER"));
    assert_non_null(strstr(tconv_report_new_nodes(r, 0), "\"Slice\""));
    assert_null(tconv_report_rewritten_node(r, 4));
    assert_int_equal(tconv_report_ops_before(r, "ConvTranspose"), 4);
    assert_int_equal(tconv_report_ops_after(r, "ConvTranspose"), 4);
    assert_int_equal(tconv_report_ops_before(r, "Slice"), 0);
    assert_int_equal(tconv_report_ops_after(r, "Slice"), api_count_ops(m, "Slice"));
    assert_true(tconv_report_ops_after(r, "Slice") >= 1);

    char *json = NULL;
    assert_int_equal(tconv_report_to_json(r, &json), TCONV_OK);
    assert_non_null(strstr(json, "\"policy\": \"same-or-asymmetric\""));
    assert_non_null(strstr(json, "\"convention\": \"onnx\""));
    assert_non_null(strstr(json, "\"rewritten\""));
    assert_non_null(strstr(json, "keras_decoder/model.onnx"));
    tconv_free(json);

    /* Every op type once, those of before first; Slice (new) after them. */
    size_t n_types = tconv_report_op_type_count(r), slice_at = n_types;
    for (size_t i = 0; i < n_types; i++) {
        if (strcmp(tconv_report_op_type(r, i), "Slice") == 0)
            slice_at = i;
        assert_true(tconv_report_ops_before(r, tconv_report_op_type(r, i)) +
                        tconv_report_ops_after(r, tconv_report_op_type(r, i)) >
                    0);
    }
    assert_true(slice_at < n_types && tconv_report_ops_before(r, "Slice") == 0);
    assert_null(tconv_report_op_type(r, n_types));
    char message[256], path[] = "/tmp/tconv_api_report_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(tconv_report_write_file(r, path, message, sizeof message), TCONV_OK);
    FILE *f = fopen(path, "r");
    char head[64] = "";
    assert_non_null(f);
    assert_non_null(fgets(head, sizeof head, f));
    fclose(f);
    remove(path);
    assert_int_equal(head[0], '{');
    assert_int_equal(tconv_report_write_file(r, "/nonexistent-dir/r.json", message, sizeof message),
                     TCONV_ERR_IO);
    assert_non_null(strstr(message, "nonexistent-dir"));

    /* Running again finds nothing left to rewrite. */
    tconv_report_free(r);
    API_OK(m, tconv_pipeline_run(p, m, &r));
    assert_int_equal(tconv_report_rewrite_count(r), 0);
    tconv_report_free(r);
    tconv_pipeline_free(p);
    tconv_model_free(m);
}

/* Symmetric explicit pads: kept by the default policy, rewritten by valid-only; the convention
 * goes into the report. */
static void test_policy_and_convention(void **state) {
    (void)state;
    static const int64_t pads[] = {1, 1, 1, 1};
    tconv_model *m = api_build_conv_transpose(pads, NULL);
    tconv_pipeline *p = new_pipeline(TCONV_DEFAULT_PASSES);
    tconv_report *r = NULL;
    API_OK(m, tconv_pipeline_run(p, m, &r));
    assert_int_equal(tconv_report_rewrite_count(r), 0);
    tconv_report_free(r);

    assert_int_equal(tconv_pipeline_set_policy(p, TCONV_POLICY_VALID_ONLY), TCONV_OK);
    assert_int_equal(tconv_pipeline_set_convention(p, TCONV_CONVENTION_ORT), TCONV_OK);
    API_OK(m, tconv_pipeline_run(p, m, &r));
    assert_int_equal(tconv_report_rewrite_count(r), 1);
    assert_string_equal(tconv_report_rewritten_node(r, 0), "up");
    char *json = NULL;
    assert_int_equal(tconv_report_to_json(r, &json), TCONV_OK);
    assert_non_null(strstr(json, "\"policy\": \"valid-only\""));
    assert_non_null(strstr(json, "\"convention\": \"ort\""));
    assert_non_null(strstr(json, "\"model\": \"\"")); /* built in memory: no file */
    tconv_free(json);
    tconv_report_free(r);

    assert_int_equal(tconv_pipeline_set_policy(p, (tconv_policy)42), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_pipeline_last_error(p), "policy"));
    assert_int_equal(tconv_pipeline_set_convention(p, (tconv_convention)-1), TCONV_ERR_USAGE);
    tconv_pipeline_free(p);
    tconv_model_free(m);
}

typedef struct pass_log {
    int runs;
    char order[256];
} pass_log;

/* A pass of the test's own: counts Relu nodes and tags them. */
static tconv_status tag_relus(tconv_model *model, void *user_data) {
    pass_log *log = user_data;
    log->runs++;
    for (tconv_node *n = tconv_graph_first_node(tconv_model_graph(model)); n;
         n = tconv_node_next(n)) {
        if (strcmp(tconv_node_op_type(n), "Relu") == 0) {
            tconv_status st = tconv_attr_set_string(n, "tag", "seen");
            if (st != TCONV_OK)
                return st;
        }
    }
    return TCONV_OK;
}

static void log_pass(const char *pass_name, tconv_model *model, void *user_data) {
    pass_log *log = user_data;
    (void)model;
    strncat(log->order, pass_name, sizeof log->order - strlen(log->order) - 2);
    strcat(log->order, ";");
}

static void test_own_pass_in_the_list(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_pipeline *p = new_pipeline("shape-infer,tag-relus,legalize-conv-transpose,dce");
    pass_log log = {0, ""};
    assert_int_equal(tconv_pipeline_add_pass(p, "tag-relus", tag_relus, &log), TCONV_OK);
    assert_int_equal(tconv_pipeline_set_after_pass(p, log_pass, &log), TCONV_OK);
    tconv_report *r = NULL;
    API_OK(m, tconv_pipeline_run(p, m, &r));
    assert_int_equal(log.runs, 1);
    assert_string_equal(log.order, "shape-infer;tag-relus;legalize-conv-transpose;dce;");
    const char *tag = NULL;
    API_OK(m, tconv_attr_get_string(api_find_node(m, "deconv2_relu"), "tag", &tag));
    assert_string_equal(tag, "seen");
    assert_int_equal(tconv_report_rewrite_count(r), 4);
    tconv_report_free(r);

    /* Names that cannot be added. */
    assert_int_equal(tconv_pipeline_add_pass(p, "tag-relus", tag_relus, NULL), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_pipeline_last_error(p), "exists"));
    assert_int_equal(tconv_pipeline_add_pass(p, "dce", tag_relus, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_pipeline_add_pass(p, "a,b", tag_relus, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_pipeline_add_pass(p, "", tag_relus, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_pipeline_add_pass(p, "x", NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_pipeline_set_after_pass(p, NULL, NULL), TCONV_OK);
    assert_string_equal(tconv_pipeline_last_error(p), "");
    tconv_pipeline_free(p);
    tconv_model_free(m);
}

static tconv_status failing_pass(tconv_model *model, void *user_data) {
    (void)user_data;
    return tconv_model_set_error(model, TCONV_ERR_UNSUPPORTED, "cannot handle this model");
}

static tconv_status silent_failing_pass(tconv_model *model, void *user_data) {
    (void)model;
    (void)user_data;
    return TCONV_ERR_INVALID;
}

/* Removes the first node although its output is used: the IR check after the pass catches it. */
static tconv_status breaking_pass(tconv_model *model, void *user_data) {
    (void)user_data;
    return tconv_node_remove(tconv_graph_first_node(tconv_model_graph(model)));
}

static void test_failures_name_the_pass(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_pipeline *p = new_pipeline("shape-infer,bogus-pass,dce");
    tconv_report *r = (tconv_report *)(uintptr_t)1;
    assert_int_equal(tconv_pipeline_run(p, m, &r), TCONV_ERR_USAGE);
    assert_null(r);
    assert_non_null(strstr(tconv_model_last_error(m), "bogus-pass"));
    assert_int_equal(tconv_graph_node_count(tconv_model_graph(m)), 8); /* nothing ran */

    assert_int_equal(tconv_pipeline_add_pass(p, "fails", failing_pass, NULL), TCONV_OK);
    assert_int_equal(tconv_pipeline_add_pass(p, "fails-silently", silent_failing_pass, NULL),
                     TCONV_OK);
    assert_int_equal(tconv_pipeline_add_pass(p, "breaks", breaking_pass, NULL), TCONV_OK);
    assert_int_equal(tconv_pipeline_set_passes(p, "fails"), TCONV_OK);
    assert_int_equal(tconv_pipeline_run(p, m, NULL), TCONV_ERR_UNSUPPORTED);
    assert_string_equal(tconv_model_last_error(m), "pass fails: cannot handle this model");
    assert_int_equal(tconv_pipeline_set_passes(p, "fails-silently"), TCONV_OK);
    assert_int_equal(tconv_pipeline_run(p, m, NULL), TCONV_ERR_INVALID);
    assert_non_null(strstr(tconv_model_last_error(m), "pass fails-silently: "));
    assert_int_equal(tconv_pipeline_set_passes(p, "breaks"), TCONV_OK);
    assert_int_equal(tconv_pipeline_run(p, m, NULL), TCONV_ERR_INVALID);
    assert_non_null(strstr(tconv_model_last_error(m), "IR invalid after pass breaks"));
    /* An invalid model is refused before any pass runs. */
    assert_int_equal(tconv_pipeline_set_passes(p, "dce"), TCONV_OK);
    assert_int_equal(tconv_pipeline_run(p, m, NULL), TCONV_ERR_INVALID);
    assert_non_null(strstr(tconv_model_last_error(m), "before the pipeline"));

    assert_int_equal(tconv_pipeline_set_passes(p, "dce,"), TCONV_OK);
    tconv_model *fresh = api_read(KERAS);
    assert_int_equal(tconv_pipeline_run(p, fresh, NULL), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_model_last_error(fresh), "empty pass name"));
    assert_int_equal(tconv_pipeline_set_passes(p, "none"), TCONV_OK);
    API_OK(fresh, tconv_pipeline_run(p, fresh, NULL));
    assert_int_equal(tconv_pipeline_set_passes(p, NULL), TCONV_ERR_USAGE);
    tconv_model_free(fresh);
    tconv_pipeline_free(p);
    tconv_model_free(m);
}

/* An invalid ConvTranspose (group that does not divide the channels) fails the legalization
 * with the node named. */
static void test_invalid_conv_transpose(void **state) {
    (void)state;
    tconv_model *m = api_build_conv_transpose(NULL, NULL);
    API_OK(m, tconv_attr_set_int(api_find_node(m, "up"), "group", 3));
    tconv_pipeline *p = new_pipeline(TCONV_DEFAULT_PASSES);
    tconv_status st = tconv_pipeline_run(p, m, NULL);
    assert_int_not_equal(st, TCONV_OK);
    assert_non_null(strstr(tconv_model_last_error(m), "up"));
    tconv_pipeline_free(p);
    tconv_model_free(m);
}

static void test_null_handles(void **state) {
    (void)state;
    assert_int_equal(tconv_pipeline_new(NULL), TCONV_ERR_USAGE);
    tconv_pipeline_free(NULL);
    assert_string_equal(tconv_pipeline_last_error(NULL), "");
    assert_int_equal(tconv_pipeline_set_passes(NULL, "dce"), TCONV_ERR_USAGE);
    assert_int_equal(tconv_pipeline_set_policy(NULL, TCONV_POLICY_VALID_ONLY), TCONV_ERR_USAGE);
    assert_int_equal(tconv_pipeline_add_pass(NULL, "x", failing_pass, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_pipeline_set_after_pass(NULL, NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_pipeline_run(NULL, NULL, NULL), TCONV_ERR_USAGE);
    tconv_model *m = api_read(KERAS);
    assert_int_equal(tconv_pipeline_run(NULL, m, NULL), TCONV_ERR_USAGE);
    assert_true(strlen(tconv_model_last_error(m)) > 0);
    tconv_model_free(m);
    assert_int_equal(tconv_report_rewrite_count(NULL), 0);
    assert_null(tconv_report_rewritten_node(NULL, 0));
    assert_null(tconv_report_old_attributes(NULL, 0));
    assert_null(tconv_report_new_nodes(NULL, 0));
    assert_int_equal(tconv_report_warning_count(NULL), 0);
    assert_null(tconv_report_warning(NULL, 0));
    assert_int_equal(tconv_report_ops_before(NULL, "Relu"), 0);
    assert_int_equal(tconv_report_ops_after(NULL, "Relu"), 0);
    assert_int_equal(tconv_report_to_json(NULL, NULL), TCONV_ERR_USAGE);
    tconv_report_free(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_passes_and_names),
        cmocka_unit_test(test_default_pipeline_and_report),
        cmocka_unit_test(test_policy_and_convention),
        cmocka_unit_test(test_own_pass_in_the_list),
        cmocka_unit_test(test_failures_name_the_pass),
        cmocka_unit_test(test_invalid_conv_transpose),
        cmocka_unit_test(test_null_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
