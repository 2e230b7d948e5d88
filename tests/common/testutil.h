/* Helpers shared by the tests: ONNX test directories (model.onnx + test_data_set_N with .pb files).
 */
#ifndef TCONV_TESTS_TESTUTIL_H
#define TCONV_TESTS_TESTUTIL_H

#include <stddef.h>

#include "ir/ir.h"
#include "runtime/rt_tensor.h"

/* Sorted names of the subdirectories of `parent` that start with `prefix` ("" for all).
 * *names is malloc'd (each entry too): free with tc_test_free_names. */
int tc_test_list_dirs(const char *parent, const char *prefix, char ***names, size_t *count);
void tc_test_free_names(char **names, size_t count);

/* Reads dir/<kind>_0.pb, <kind>_1.pb, ... (kind "input" or "output") as runtime tensors.
 * *tensors malloc'd; release each and free the array with tc_test_free_tensors. */
tconv_status tc_test_read_pb_files(const char *dir, const char *kind, tc_rt_tensor **tensors,
                                   size_t *count, tc_error *err);
void tc_test_free_tensors(tc_rt_tensor *tensors, size_t count);

/* Runs `model` on data_set_dir's inputs and compares with its outputs. On a mismatch the status
 * is TCONV_ERR_MISMATCH and err says which output and where. */
tconv_status tc_test_run_data_set(tconv_model *model, const char *data_set_dir, double rtol,
                                  double atol, double *max_abs_err, tc_error *err);

/* Runs two models on the same seeded random inputs and compares all outputs. */
tconv_status tc_test_compare_models(tconv_model *a, tconv_model *b, uint64_t seed, double rtol,
                                    double atol, tc_error *err);

#endif
