/* Shared by the public API's implementation (src/api): how a public call records its error in
 * the object it worked on. Public handles are the IR's own objects (tconv_model is struct
 * tconv_model of ir/ir.h), so no wrapper layer sits between the API and the IR. */
#ifndef TC_API_API_INTERNAL_H
#define TC_API_API_INTERNAL_H

#include <stdio.h>

#include "importer/importer.h"
#include "ir/ir.h"
#include "passes/diagnostics.h"
#include "passes/rewrite_report.h"
#include "runtime/session/session.h"
#include "tconv/tconv.h"

/* Values for symbolic input dims (runners and comparisons): names malloc'd. */
typedef struct tc_api_dims {
    tc_dim_binding *items;
    size_t count, cap;
} tc_api_dims;

/* A runner (tconv/runtime.h): a session of the runtime plus the inputs and outputs of its last
 * run. Shared by api_runtime.c and api_data_set.c. */
struct tconv_runner {
    tconv_model *model;
    tc_session *session;
    size_t n_inputs, n_outputs;
    tc_rt_tensor *inputs;  /* n_inputs; an input is set when it has a dtype */
    tc_rt_tensor *outputs; /* n_outputs; filled by the last successful run */
    bool has_run;
    tc_api_dims dims;
    tc_error last_error;
    struct tc_profile *profile; /* NULL unless tconv_runner_set_profiling turned it on */
};

/* The importer's and the runtime's options a tconv_limits stands for (defaults when NULL). */
void tc_api_load_options(const tconv_limits *limits, tc_load_options *out);
void tc_api_session_options(const tconv_limits *limits, tc_session_options *out);

/* tc_session_create with the session's memory and work planned from the shapes inference gives
 * the values the model leaves untyped, kept in the session's type table (api_session.c): the
 * model is only read, so sessions may be created from one model on several threads at once. */
/* The built-in ONNX function library (src/runtime/data/onnx_functions.onnx, compiled in by
 * cmake/embed_bytes.cmake), loaded on first use and kept for the process; NULL if it did not
 * load. tc_api_session_create gives it to every session it makes. */
const tconv_model *tc_api_function_library(void);

tconv_status tc_api_session_create(tconv_model *model, const tc_session_options *options,
                                   tc_session **out, tc_error *err);

/* Binds (or rebinds) `name` to value >= 0. Errors: TCONV_ERR_USAGE, TCONV_ERR_NOMEM. */
tconv_status tc_api_dims_bind(tc_api_dims *dims, const char *name, int64_t value, tc_error *err);
void tc_api_dims_free(tc_api_dims *dims);

/* A pool of helper threads that runners share (tconv/runtime.h). */
struct tconv_threadpool {
    tc_thread_pool *pool;
};

/* What a pipeline run did (tconv/passes.h). Made by tconv_pipeline_run, read by api_report.c. */
struct tconv_report {
    tc_rewrite_report rewrites;
    tc_diagnostics warnings;
    tc_op_counts before, after;
    char *model_path; /* malloc'd; NULL for a model that has no file */
    tconv_policy policy;
    tconv_convention convention;
};

/* The local proof's two small models for one rewrite (api_proof.c): the original node alone
 * (`before`) and the chain that replaced it (`after`), with the same inputs: the node's data
 * inputs typed as in `rewritten` (every dim that is not static symbolic, named), its
 * initializers copied. The models borrow attributes from `original` and `rewritten`, which must
 * outlive them. Errors: TCONV_ERR_UNSUPPORTED (the node is not in the main graph, an input of
 * unknown shape), TCONV_ERR_INVALID, TCONV_ERR_NOMEM. */
tconv_status tc_api_extract_rewrite(tconv_model *original, tconv_model *rewritten,
                                    const tc_rewrite_record *rec, tconv_model **before,
                                    tconv_model **after, tc_error *err);

/* Reads and parses a target file (at most 64 KiB), errors naming file, line and field. */
struct tc_target;
tconv_status tc_api_target_read_file(const char *path, struct tc_target *out, tc_error *err);

/* The data inputs (not initializers) of the node a rewrite replaced, when it is in the main graph
 * of `original` and one of them has a dim that is not static in `rewritten` (where shape
 * inference ran): what a run of the original must show for the local proof to run at the node's
 * real shape. Up to `cap` names (pointers into `original`) go into names; returns their count, 0
 * when none is needed or the node cannot be found. */
size_t tc_api_rewrite_run_inputs(tconv_model *original, tconv_model *rewritten,
                                 const tc_rewrite_record *rec, const char **names, size_t cap);

/* An empty report (calloc'd, lists initialized); NULL when out of memory. */
tconv_report *tc_api_report_new(void);

_Static_assert(TCONV_MAX_DIMS == TC_MAX_RANK, "public and IR rank limits differ");

/* Starts a fallible public call on `model`: clears its last error and returns the record the
 * internal calls fill in. */
tc_error *tc_api_begin(tconv_model *model);

/* Ends a public call with `status`: TCONV_OK clears the model's error; a failure keeps the
 * message the internal code wrote (or gets one naming the status if it wrote none). */
tconv_status tc_api_end(tconv_model *model, tconv_status status);

/* Records a TCONV_ERR_USAGE failure with a formatted message in the model (which may be NULL:
 * then nothing is recorded) and returns TCONV_ERR_USAGE. */
tconv_status tc_api_usage(tconv_model *model, const char *fmt, ...) TC_PRINTF(2, 3);

/* Copies `message` into a caller's buffer of `size` bytes, truncated, NUL-terminated; nothing
 * when buf is NULL or size is 0. */
void tc_api_copy_message(char *buf, size_t size, const char *message);

/* The model a graph object belongs to (NULL for NULL). */
tconv_model *tc_api_node_model(const tconv_node *node);
tconv_model *tc_api_value_model(const tconv_value *value);

/* Checks a (rank, dims) pair given by a caller: 0 <= rank <= TCONV_MAX_DIMS (or -1 when
 * allow_unknown_rank), dims non-NULL when rank > 0, each dim >= 0 (or -1 when allow_unknown_dims).
 * Records a usage error in `model` naming `what`. */
tconv_status tc_api_check_dims(tconv_model *model, const char *what, int rank, const int64_t *dims,
                               bool allow_unknown_rank, bool allow_unknown_dims);

/* Reads a serialized TensorProto file (.pb of ONNX test data) into dst (owned data; release
 * with tc_rt_tensor_release), refusing before it reads or decodes them a file or a tensor over
 * max_bytes (0: no limit but the file size cap). Errors name the file. The runtime reads no
 * files: the API reads them through the importer and hands the runtime tensors. */
tconv_status tc_api_tensor_load_pb(const char *path, size_t max_bytes, tc_rt_tensor *dst,
                                   tc_error *err);

/* Runs write(ctx, stream) on a memory stream and hands the text to the caller (*text malloc'd,
 * NUL-terminated; free with tconv_free). */
tconv_status tc_api_capture_text(tconv_status (*write)(const void *ctx, FILE *out), const void *ctx,
                                 char **text);

#endif
