/* Helpers shared by the tests: ONNX test directories (model.onnx + test_data_set_N with .pb
 * files) and comparing two models, each a thin wrapper of the public API's one implementation
 * (tconv_runner_run_data_set, tconv_comparison) that reports in a tc_error. */
#ifndef TC_TESTS_TESTUTIL_H
#define TC_TESTS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "tconv/runtime.h"

/* Sorted names of the subdirectories of `parent` that start with `prefix` ("" for all).
 * *names is malloc'd (each entry too): free with tc_test_free_names. */
int tc_test_list_dirs(const char *parent, const char *prefix, char ***names, size_t *count);
void tc_test_free_names(char **names, size_t count);

/* The 291 ONNX node tests of the ops tconv had first (TCONV_ONNX_NODE_TESTS_SUBSET,
 * tests/data/onnx-node-tests-subset.tsv, first column), in the list's order, each checked to be
 * a folder of TCONV_ONNX_NODE_TESTS. The tests that must pass on every test of a folder (full
 * shape inference, every .pb round trip) walk this list; walks by op name prefix take the whole
 * suite. Returns -1 with a message on stderr when the list cannot be read or names a missing
 * test. Free with tc_test_free_names. */
int tc_test_list_node_test_subset(char ***names, size_t *count);

/* Runs `model` on data_set_dir's inputs and compares with its outputs, both ways: as written
 * (unfused, what a backend runs) and fused (what tconv-run does). On a mismatch the status is
 * TCONV_ERR_MISMATCH and err says which way, which output and where. */
tconv_status tc_test_run_data_set(tconv_model *model, const char *data_set_dir, double rtol,
                                  double atol, double *max_abs_err, tc_error *err);
/* The same one way. */
tconv_status tc_test_run_data_set_as(tconv_model *model, const char *data_set_dir, bool fused,
                                     double rtol, double atol, double *max_abs_err, tc_error *err);

/* Saves `model` to memory and loads it again into *out (proves the emitted nodes serialize). */
tconv_status tc_test_reload(const tconv_model *model, tconv_model **out, tc_error *err);

/* Runs two models on the same seeded random inputs (tconv_comparison, one run with `seed`) and
 * compares all outputs. */
tconv_status tc_test_compare_models(tconv_model *a, tconv_model *b, uint64_t seed, double rtol,
                                    double atol, tc_error *err);

/* The same with both models run under `convention` (as --check does for a rewrite made for it). */
tconv_status tc_test_compare_models_as(tconv_model *a, tconv_model *b, tconv_convention convention,
                                       uint64_t seed, double rtol, double atol, tc_error *err);

/* Runs test_data_set_0 of every ONNX node test (TCONV_ONNX_NODE_TESTS, all of v1.22.0) whose name
 * starts with `prefix`; prints each failure; returns how many failed. *count gets how many
 * ran. */
size_t tc_test_run_node_tests(const char *prefix, double rtol, double atol, size_t *count);

#endif
