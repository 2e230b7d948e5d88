/* ONNX <-> IR translation. The importer only translates: no pass runs here. */
#ifndef TCONV_IMPORTER_IMPORTER_H
#define TCONV_IMPORTER_IMPORTER_H

#include <stddef.h>

#include "ir/ir.h"

/* Hard limits for untrusted files; 0 means "no limit" for the byte sizes. */
typedef struct tc_load_options {
    size_t max_file_bytes;   /* model file size; default 4 GiB */
    size_t max_tensor_bytes; /* one tensor's data; default 2 GiB */
    int max_graph_depth;     /* nesting of subgraphs; default 64 */
    size_t max_nodes;        /* total nodes in all graphs; default tc_load_max_nodes_for_memory
                                of the runtime's default memory limit (16 GiB): 4194304 */
    bool sort_nodes;         /* reorder out-of-order nodes (default true), else an error */
} tc_load_options;

typedef struct tc_load_info {
    size_t n_graphs_reordered; /* graphs whose nodes were not in topological order */
    size_t n_nodes;            /* nodes in all graphs and functions */
} tc_load_info;

void tc_load_options_init(tc_load_options *options);

/* Memory one node takes in the worst path, tconv-import --check (the IR of two models and two
 * runtime plans): 3.6 KB measured on a chain of a million Relu nodes (RSS 3.6 GB), import alone
 * 1.1 KB, tconv-run 1.9 KB. The IR is not part of the runtime's tensor accounting; the node
 * limit keeps it within the memory limit instead. */
#define TCONV_NODE_MEMORY_BYTES ((size_t)4096)

/* The node limit that keeps a graph's IR and plans within `memory_bytes` (0: no limit, 0). */
size_t tc_load_max_nodes_for_memory(size_t memory_bytes);

/* Loads and verifies a model. On failure *out is NULL and err names the file (and node, field).
 * options and info may be NULL. The caller frees the model with tconv_model_free. */
tconv_status tc_model_load_file(const char *path, const tc_load_options *options, tconv_model **out,
                                tc_load_info *info, tc_error *err);
/* Same from memory; `dir` is the folder external data is relative to (NULL: no external data
 * allowed). The buffer is copied if the model needs it after the call. */
tconv_status tc_model_load_buffer(const void *data, size_t size, const char *dir,
                                  const tc_load_options *options, tconv_model **out,
                                  tc_load_info *info, tc_error *err);

/* Serializes the model. Unchanged objects are written from their origin messages, so a model
 * saved without edits is the same message as the one loaded. */
tconv_status tc_model_save_buffer(const tconv_model *model, void **data, size_t *size,
                                  tc_error *err); /* *data malloc'd: caller frees */
/* Writes atomically (temp file in the same folder, then rename). External data files the model
 * references are made available next to `path` when it is in another folder. Never modifies
 * the model's own input file in place. */
tconv_status tc_model_save_file(const tconv_model *model, const char *path, tc_error *err);

/* A serialized TensorProto file (.pb of ONNX test data) as a tensor owned by `model`. */
tconv_status tc_tensor_load_pb(tconv_model *model, const char *path, tconv_tensor **out,
                               tc_error *err);
/* Same from memory; `label` names the buffer in errors (NULL: "<memory>"). */
tconv_status tc_tensor_load_pb_buffer(tconv_model *model, const void *data, size_t size,
                                      const char *label, tconv_tensor **out, tc_error *err);
tconv_status tc_tensor_save_pb(tconv_tensor *tensor, const char *path, tc_error *err);

/* Writes data to path through a temp file in the same folder and rename(2): a reader never sees
 * a partial file and a failure leaves any existing file untouched. */
/* Fills a file descriptor with the output; `path` is the final name, for messages. */
typedef tconv_status (*tc_fd_writer)(int fd, const char *path, void *ctx, tc_error *err);
/* The same for output produced piecewise: write_fn writes the temp file through fd, then it is
 * fsync'ed, closed and renamed over path; on any failure the temp file is removed. */
tconv_status tc_write_file_atomic_with(const char *path, tc_fd_writer write_fn, void *ctx,
                                       tc_error *err);
/* write(2) until done, retrying on EINTR; errors name path. */
tconv_status tc_write_all(int fd, const char *path, const void *data, size_t size, tc_error *err);
tconv_status tc_write_file_atomic(const char *path, const void *data, size_t size, tc_error *err);
/* Reads a whole file (malloc'd, caller frees); refuses files over max_bytes (0: no limit). */
tconv_status tc_read_file(const char *path, size_t max_bytes, void **data, size_t *size,
                          tc_error *err);

#endif
