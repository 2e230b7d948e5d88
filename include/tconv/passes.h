/* Running passes: a pipeline (a named pass list with options, plus passes of the caller's own)
 * and the report of what the legalization rewrote.
 *
 *   tconv_pipeline *p;
 *   tconv_report *report;
 *   tconv_pipeline_new(&p);
 *   tconv_pipeline_set_passes(p, TCONV_DEFAULT_PASSES);
 *   tconv_pipeline_set_policy(p, TCONV_POLICY_VALID_ONLY);
 *   if (tconv_pipeline_run(p, model, &report) != TCONV_OK)
 *       fprintf(stderr, "%s\n", tconv_model_last_error(model));
 *
 * The pipeline verifies the IR after every pass (tconv_model_validate). A pipeline holds only
 * configuration: one pipeline can run on several models, also from several threads at once,
 * as long as nobody configures it meanwhile. */
#ifndef TCONV_PASSES_H
#define TCONV_PASSES_H

#include "tconv/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What tconv-import runs by default. */
#define TCONV_DEFAULT_PASSES "shape-infer,legalize-conv-transpose,dce"

typedef struct tconv_pipeline tconv_pipeline;
typedef struct tconv_report tconv_report;

/* ---------------------------------------------------------------- built-in passes and options */

/* The built-in passes ("shape-infer", "lint-conv-transpose", "legalize-conv-transpose", "dce"):
 * name and a one-line summary of pass `index`; NULL when index >= tconv_builtin_pass_count().
 * Static strings. */
size_t tconv_builtin_pass_count(void);
const char *tconv_builtin_pass_name(size_t index);
const char *tconv_builtin_pass_summary(size_t index);

/* "same-or-asymmetric" / "valid-only" and back; from_name gives false (and leaves *out) for an
 * unknown or NULL name. The names are static. */
const char *tconv_policy_name(tconv_policy policy);
bool tconv_policy_from_name(const char *name, tconv_policy *out);
/* "onnx" / "ort" / "ort-legacy" and back, the same way. */
const char *tconv_convention_name(tconv_convention convention);
bool tconv_convention_from_name(const char *name, tconv_convention *out);

/* ---------------------------------------------------------------- pipelines */

/* A pass of the caller's: edits `model` through the public API and returns TCONV_OK, or records
 * its reason with tconv_model_set_error and returns that status. */
typedef tconv_status (*tconv_pass_callback)(tconv_model *model, void *user_data);

/* Called after each pass that succeeded (and was verified), e.g. to print the IR with
 * tconv_model_format_ir. */
typedef void (*tconv_after_pass_callback)(const char *pass_name, tconv_model *model,
                                          void *user_data);

/* A pipeline with the defaults: passes TCONV_DEFAULT_PASSES, policy same-or-asymmetric,
 * convention onnx. On success *out is the pipeline; free it with tconv_pipeline_free.
 * Errors: TCONV_ERR_USAGE (out is NULL), TCONV_ERR_NOMEM. */
tconv_status tconv_pipeline_new(tconv_pipeline **out);
/* NULL is ignored. */
void tconv_pipeline_free(tconv_pipeline *pipeline);

/* The message of the pipeline's last failed configuration call; "" after a success. Owned by the
 * pipeline. (A failed tconv_pipeline_run leaves its message in the model.) */
const char *tconv_pipeline_last_error(const tconv_pipeline *pipeline);

/* The passes to run, comma-separated: built-in names and names given to tconv_pipeline_add_pass
 * ("shape-infer,my-pass,legalize-conv-transpose,dce"); "none" or "" runs nothing. The list is
 * copied; names are checked when the pipeline runs, before any pass runs. Errors:
 * TCONV_ERR_USAGE (NULL), TCONV_ERR_NOMEM. */
tconv_status tconv_pipeline_set_passes(tconv_pipeline *pipeline, const char *pass_list);
/* Policy and convention of the legalization (and of shape inference for the convention).
 * Errors: TCONV_ERR_USAGE for a NULL pipeline or a value outside the enum. */
tconv_status tconv_pipeline_set_policy(tconv_pipeline *pipeline, tconv_policy policy);
tconv_status tconv_pipeline_set_convention(tconv_pipeline *pipeline, tconv_convention convention);

/* The backend target (tconv/targets.h): a built-in one by name, or with NULL none (the default);
 * or one described in a file. With a target, lower-for-target runs after each
 * legalize-conv-transpose of the pass list (legalize-conv-transpose then keeps the pads the
 * target takes): every ConvTranspose is rewritten into a form the target takes, and where one
 * cannot be, tconv_pipeline_run fails with TCONV_ERR_UNSUPPORTED naming each node and the
 * constraint it breaks. Errors: TCONV_ERR_USAGE (NULL pipeline, unknown name), TCONV_ERR_IO
 * and TCONV_ERR_INVALID (the file: its message names file, line and field), TCONV_ERR_NOMEM;
 * the message in tconv_pipeline_last_error. */
tconv_status tconv_pipeline_set_target(tconv_pipeline *pipeline, const char *name);
tconv_status tconv_pipeline_set_target_file(tconv_pipeline *pipeline, const char *path);

/* Registers a pass of the caller's under `name` (copied) so that the pass list can name it;
 * user_data is passed to it as is (the pipeline does not own it). Errors: TCONV_ERR_USAGE for a
 * NULL argument, an empty name, a name with a ',' or one already taken (built-in or added
 * before); TCONV_ERR_NOMEM. */
tconv_status tconv_pipeline_add_pass(tconv_pipeline *pipeline, const char *name,
                                     tconv_pass_callback pass, void *user_data);

/* Sets (or with NULL clears) the callback run after each pass. */
tconv_status tconv_pipeline_set_after_pass(tconv_pipeline *pipeline,
                                           tconv_after_pass_callback callback, void *user_data);

/* Runs the pass list on the model, verifying the IR after each pass. When `report` is not NULL,
 * on success *report is what the passes did (free it with tconv_report_free); on failure it is
 * NULL. A failure's message is tconv_model_last_error(model), prefixed with the pass's name.
 * On failure the passes before the failing one have been applied (and verified): run on a
 * tconv_model_clone when the original must survive. Errors: TCONV_ERR_USAGE (NULL arguments,
 * an unknown pass name: then nothing runs), and whatever a pass returns (TCONV_ERR_INVALID for
 * a ConvTranspose that breaks the spec, TCONV_ERR_UNSUPPORTED, TCONV_ERR_NOMEM, ...). */
tconv_status tconv_pipeline_run(const tconv_pipeline *pipeline, tconv_model *model,
                                tconv_report **report);

/* ---------------------------------------------------------------- reports */

/* Rewrites of legalize-conv-transpose, in the order they happened: the name of the original
 * node, its attributes before the rewrite as a JSON object, and the nodes that replaced it as a
 * JSON array of {name, op_type, inputs, outputs, attributes}. NULL when index is out of range.
 * Strings owned by the report. */
size_t tconv_report_rewrite_count(const tconv_report *report);
const char *tconv_report_rewritten_node(const tconv_report *report, size_t index);
const char *tconv_report_old_attributes(const tconv_report *report, size_t index);
const char *tconv_report_new_nodes(const tconv_report *report, size_t index);

/* Warnings of the passes (lint findings, accepted oddities); strings owned by the report. */
size_t tconv_report_warning_count(const tconv_report *report);
const char *tconv_report_warning(const tconv_report *report, size_t index);

/* How many nodes of op_type the model had (in all graphs) before and after the pipeline. */
size_t tconv_report_ops_before(const tconv_report *report, const char *op_type);
size_t tconv_report_ops_after(const tconv_report *report, const char *op_type);

/* The op types counted before or after: tconv_report_op_type_count of them, each once (those of
 * the model before the pipeline, sorted, then those that only the result has). NULL when index
 * is out of range. Strings owned by the report. */
size_t tconv_report_op_type_count(const tconv_report *report);
const char *tconv_report_op_type(const tconv_report *report, size_t index);

/* The whole report as JSON, the format of `tconv-import --report`: {"model", "policy",
 * "convention", "rewritten": [...], "ops_before": {...}, "ops_after": {...}, "warnings": [...]}.
 * On success *json is a NUL-terminated string the caller frees with tconv_free.
 * Errors: TCONV_ERR_USAGE, TCONV_ERR_NOMEM, TCONV_ERR_IO (no memory stream). */
tconv_status tconv_report_to_json(const tconv_report *report, char **json);

/* Writes tconv_report_to_json's text to `path`, atomically. On failure, when `message` is not
 * NULL, the reason is written into message[0 .. message_size-1]. Errors: TCONV_ERR_USAGE,
 * TCONV_ERR_IO, TCONV_ERR_NOMEM. */
tconv_status tconv_report_write_file(const tconv_report *report, const char *path, char *message,
                                     size_t message_size);
/* NULL is ignored. */
void tconv_report_free(tconv_report *report);

#ifdef __cplusplus
}
#endif

#endif
