/* Models: create, read and write ONNX files or buffers, clone, validate, print; error messages;
 * model-level metadata and opset imports.
 *
 * Reading keeps the model lossless: a model read and written with no edit is the same ONNX
 * message, fields unknown to tconv included. Writing a file is atomic (a temporary file in the
 * same folder, then rename): a failure never leaves a partial file. */
#ifndef TCONV_MODEL_H
#define TCONV_MODEL_H

#include "tconv/limits.h"
#include "tconv/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- life cycle */

/* An empty model: IR version 8, no opset import (add one with tconv_model_set_opset_version),
 * an empty main graph. On success *out is the new model, which the caller frees with
 * tconv_model_free. Errors: TCONV_ERR_USAGE (out is NULL), TCONV_ERR_NOMEM. */
tconv_status tconv_model_new(tconv_model **out);

/* Reads and verifies an ONNX model file (external data is read relative to its folder, and must
 * stay inside it), within `limits` (NULL: the defaults of tconv/limits.h). Nodes that are not in
 * topological order are sorted (see tconv_model_sorted_graph_count).
 * On success *out is the model (caller frees with tconv_model_free). On failure *out is NULL
 * and, when `message` is not NULL, the NUL-terminated reason (naming the file and, where it
 * applies, the node and field) is written into message[0 .. message_size-1], truncated to fit.
 * Errors: TCONV_ERR_USAGE (NULL path or out), TCONV_ERR_IO, TCONV_ERR_PARSE, TCONV_ERR_INVALID,
 * TCONV_ERR_UNSUPPORTED, TCONV_ERR_LIMIT (size or depth limits), TCONV_ERR_NOMEM. */
tconv_status tconv_model_read_file(const char *path, const tconv_limits *limits, tconv_model **out,
                                   char *message, size_t message_size);

/* The same from `size` bytes at `data`. The bytes are copied where the model needs them, so the
 * caller may free `data` when the call returns. external_data_dir is the folder that external
 * tensor data is relative to; NULL refuses models with external data. Ownership and errors as
 * tconv_model_read_file. */
tconv_status tconv_model_read_buffer(const void *data, size_t size, const char *external_data_dir,
                                     const tconv_limits *limits, tconv_model **out, char *message,
                                     size_t message_size);

/* Writes the model as an ONNX file, atomically (tconv/files.h). The tensors the model keeps in
 * external data files go into one file named after the output, PATH.data (out/a.onnx ->
 * out/a.onnx.data, as onnx's save_model names it), written in the same step, before the model:
 * on failure neither the model nor a data file is left. Two models written into one folder never
 * share a data file, and a model written over the file it was read from keeps working. `path`
 * may be the file the model was read from, never one of its external data files. The message of a
 * failure is tconv_model_last_error(model). Errors: TCONV_ERR_USAGE (path is not a regular file, or
 * is one of the model's external data files), TCONV_ERR_IO, TCONV_ERR_INVALID (the IR cannot be
 * serialized), TCONV_ERR_NOMEM. */
tconv_status tconv_model_write_file(tconv_model *model, const char *path);

/* TCONV_OK when writing `path` (a report, a tensor file, another model) would replace none of
 * the model's own files: the file it was read from and its external data files, compared by
 * device and inode (so a hard link or another spelling of the same file is caught too), and
 * `path` is a regular file or does not exist yet (tconv_check_output_path). Lets a program refuse
 * an output path before a long computation. The message is tconv_model_last_error(model).
 * Errors: TCONV_ERR_USAGE (NULL path, one of the model's files, not a regular file; the file is
 * named), TCONV_ERR_IO (the path cannot be looked at), TCONV_ERR_NOMEM. */
tconv_status tconv_model_check_output_path(tconv_model *model, const char *path);

/* Serializes the model into a new buffer: on success *data (free it with tconv_free) holds *size
 * bytes. On failure *data is NULL and *size 0. Errors as tconv_model_write_file. */
tconv_status tconv_model_write_buffer(tconv_model *model, void **data, size_t *size);

/* A deep copy of the model (serialized and read back without limits, so it is exactly what
 * writing the model would give). On success *out is the copy (caller frees with tconv_model_free).
 * The message of a failure is tconv_model_last_error(model). Errors: as writing and reading. */
tconv_status tconv_model_clone(tconv_model *model, tconv_model **out);

/* Frees the model and everything it owns (graphs, nodes, values, tensors, strings). Objects
 * made from it (runners) must be freed first. NULL is ignored. */
void tconv_model_free(tconv_model *model);

/* ---------------------------------------------------------------- errors */

/* The message of the last failed call on this model or on one of its graphs, nodes, values or
 * tensors; "" after a call that succeeded (every call that returns a status resets it). Owned by
 * the model, valid until its next call; never NULL ("" for a NULL model). */
const char *tconv_model_last_error(const tconv_model *model);

/* The status that went with tconv_model_last_error (TCONV_OK after a success; TCONV_ERR_USAGE for
 * a NULL model). */
tconv_status tconv_model_last_status(const tconv_model *model);

/* Records a failure in the model and returns `status`, so that a caller's own pass can say
 * `return tconv_model_set_error(model, TCONV_ERR_INVALID, "node x: ...");` and the message
 * reaches whoever runs the pipeline. message is copied (truncated to 1023 bytes); NULL gives "".
 * TCONV_OK clears the error. */
tconv_status tconv_model_set_error(tconv_model *model, tconv_status status, const char *message);

/* ---------------------------------------------------------------- checks and text */

/* Verifies the IR: SSA (one definition a value), topological node order, defined graph outputs,
 * scoping of subgraphs, and for the ops tconv knows at the model's opset their input and output
 * counts and the types and presence of their attributes. The pipeline does this after every
 * pass; a caller that edits the graph itself can call it too. Errors: TCONV_ERR_INVALID with
 * the node and value named in tconv_model_last_error. */
tconv_status tconv_model_validate(tconv_model *model);

/* The readable text form of the IR, one node a line with the types that are known:
 *   %y: float[1,64,32,32] = ConvTranspose(%x: float[1,128,16,16], %w) {strides=[2,2]}  # conv1
 * On success *text is a NUL-terminated string the caller frees with tconv_free.
 * Errors: TCONV_ERR_USAGE, TCONV_ERR_NOMEM. */
tconv_status tconv_model_format_ir(tconv_model *model, char **text);

/* A summary of the model, what `tconv-import MODEL` prints: path, IR version, producer,
 * opsets, node counts per op type, and every ConvTranspose (in all graphs) with its attributes,
 * marked "-> rewrite" where the default policy changes it. On success *text is a NUL-terminated
 * string the caller frees with tconv_free. Errors: TCONV_ERR_USAGE, TCONV_ERR_NOMEM. */
tconv_status tconv_model_format_summary(tconv_model *model, char **text);

/* ---------------------------------------------------------------- metadata and opsets */

/* ir_version of the model; 0 when the field is absent (or model is NULL). */
int64_t tconv_model_ir_version(const tconv_model *model);
/* Sets ir_version. Errors: TCONV_ERR_USAGE (NULL model, version < 1). */
tconv_status tconv_model_set_ir_version(tconv_model *model, int64_t version);

/* producer_name / producer_version; NULL when absent. Owned by the model. */
const char *tconv_model_producer_name(const tconv_model *model);
const char *tconv_model_producer_version(const tconv_model *model);

/* The file the model was read from; NULL when it was read from memory or built. Owned by the
 * model. */
const char *tconv_model_path(const tconv_model *model);

/* How many graphs (main graph and subgraphs) had their nodes out of topological order when the
 * model was read; the reader sorted them. 0 for a model not read from a file or buffer. */
size_t tconv_model_sorted_graph_count(const tconv_model *model);

/* Number of opset imports. */
size_t tconv_model_opset_count(const tconv_model *model);

/* Opset import `index` (0 <= index < tconv_model_opset_count): *domain ("" for ai.onnx; owned by
 * the model) and *version. Either out pointer may be NULL. false when index or model is bad. */
bool tconv_model_opset_at(const tconv_model *model, size_t index, const char **domain,
                          int64_t *version);

/* The imported opset version of `domain` (NULL, "" or "ai.onnx": the default domain); 0 when the
 * model does not import it. */
int64_t tconv_model_opset_version(const tconv_model *model, const char *domain);

/* Imports `domain` at `version`, or changes the version it is imported at. Changing the version
 * does not convert nodes. Errors: TCONV_ERR_USAGE (NULL model, version < 1), TCONV_ERR_NOMEM. */
tconv_status tconv_model_set_opset_version(tconv_model *model, const char *domain, int64_t version);

#ifdef __cplusplus
}
#endif

#endif
