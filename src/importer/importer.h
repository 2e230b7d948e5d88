/* ONNX <-> IR translation. The importer only translates: no pass runs here. */
#ifndef TC_IMPORTER_IMPORTER_H
#define TC_IMPORTER_IMPORTER_H

#include <stddef.h>

#include "ir/ir.h"
#include "tconv/limits.h"

/* Hard limits for untrusted files; 0 means "no limit" for the byte sizes. */
typedef struct tc_load_options {
    size_t max_file_bytes;   /* model file size; default 4 GiB */
    size_t max_tensor_bytes; /* one tensor's data; default 2 GiB */
    int max_graph_depth;     /* nesting of subgraphs; default 64, at most TCONV_GRAPH_DEPTH_MAX */
    size_t max_nodes;        /* total nodes in all graphs; default tc_load_max_nodes_for_memory
                                of the runtime's default memory limit (16 GiB): 4194304 */
    size_t max_memory_bytes; /* tensor data read or decoded into memory after loading (external
                                data, typed fields), counted before it is read; the memory
                                limit, default 16 GiB like the runtime's */
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
#define TC_NODE_MEMORY_BYTES ((size_t)4096)

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
/* Writes atomically with the external data files the model references, which are made available
 * next to `path` when it is in another folder: all in one tc_file_batch, the model renamed last.
 * Never modifies the model's own input file in place; refuses (TCONV_ERR_USAGE) a path that is
 * one of the input's external data files (compared by device and inode). */
tconv_status tc_model_save_file(const tconv_model *model, const char *path, tc_error *err);

/* Refuses (TCONV_ERR_USAGE, naming it) a path to be written that is one of the model's own
 * files: the file it was loaded from or one of its external data files (device and inode). */
tconv_status tc_model_refuse_own_file(const tconv_model *model, const char *path, tc_error *err);

/* A serialized TensorProto file (.pb of ONNX test data) as a tensor owned by `model`. */
tconv_status tc_tensor_load_pb(tconv_model *model, const char *path, tconv_tensor **out,
                               tc_error *err);
/* Same, refusing (TCONV_ERR_LIMIT) before it decodes anything a file over max_bytes or a tensor
 * whose dims and data_type declare more than max_bytes of data (0: only the file size cap). */
tconv_status tc_tensor_load_pb_within(tconv_model *model, const char *path, size_t max_bytes,
                                      tconv_tensor **out, tc_error *err);
/* Same from memory; `label` names the buffer in errors (NULL: "<memory>"). */
tconv_status tc_tensor_load_pb_buffer(tconv_model *model, const void *data, size_t size,
                                      const char *label, tconv_tensor **out, tc_error *err);
tconv_status tc_tensor_save_pb(tconv_tensor *tensor, const char *path, tc_error *err);

/* ---------------------------------------------------------------- writing files (atomic_write.c)
 *
 * Every file tconv writes goes through here: a temp file beside the target (temp_files.c, so a
 * signal handler can remove it), fsync, the mode (a new file: 0666 under the umask; a replaced
 * one: its own permission bits), then rename(2). Only regular files are replaced: a target that
 * is a symbolic link, device, FIFO, socket or folder is refused with TCONV_ERR_USAGE. */

/* Fills a file descriptor with the output; `path` is the final name, for messages. */
typedef tconv_status (*tc_fd_writer)(int fd, const char *path, void *ctx, tc_error *err);
/* Writes path atomically: write_fn fills the temp file; on any failure the temp file is removed
 * and an existing file is left as it was. */
tconv_status tc_write_file_atomic_with(const char *path, tc_fd_writer write_fn, void *ctx,
                                       tc_error *err);
tconv_status tc_write_file_atomic(const char *path, const void *data, size_t size, tc_error *err);
/* TCONV_OK when path is absent or a regular file; TCONV_ERR_USAGE naming what it is otherwise. */
tconv_status tc_output_path_check(const char *path, tc_error *err);

/* Files written together: each tc_file_batch_add writes a complete temp file beside its target;
 * tc_file_batch_commit renames them all, in the order added; tc_file_batch_free removes every
 * temp left and, unless the commit succeeded, the files and folders the batch created. */
typedef struct tc_file_batch tc_file_batch;
tconv_status tc_file_batch_new(tc_file_batch **out, tc_error *err);
tconv_status tc_file_batch_add(tc_file_batch *batch, const char *path, tc_fd_writer write_fn,
                               void *ctx, tc_error *err);
/* Creates the missing folders above path (removed again if the batch fails). */
tconv_status tc_file_batch_make_parents(tc_file_batch *batch, const char *path, tc_error *err);
tconv_status tc_file_batch_commit(tc_file_batch *batch, tc_error *err);
void tc_file_batch_free(tc_file_batch *batch);

/* ---------------------------------------------------------------- temp files (temp_files.c) */

typedef struct tc_temp_slot tc_temp_slot;
typedef struct tc_temp_file {
    char *path; /* "<target>.tmp.XXXXXX"; NULL when none */
    int fd;     /* open for writing until the caller closes it (-1 then) */
    tc_temp_slot *slot;
} tc_temp_file;
/* Creates a new temp file beside final_path (O_EXCL, mode 0666 under the umask), registered so
 * that tc_temp_files_remove_all removes it. */
tconv_status tc_temp_file_create(const char *final_path, tc_temp_file *out, tc_error *err);
/* Takes it out of the registry (after it was renamed into place) and frees the name; the fd is
 * the caller's. */
void tc_temp_file_forget(tc_temp_file *temp);
/* Closes (if open), removes and forgets it; a no-op for an empty one. */
void tc_temp_file_discard(tc_temp_file *temp);
/* Removes every registered temp file. Async-signal-safe (tconv_remove_temp_files). */
void tc_temp_files_remove_all(void);

/* write(2) until done, retrying on EINTR; errors name path. */
tconv_status tc_write_all(int fd, const char *path, const void *data, size_t size, tc_error *err);
/* Reads a whole file (malloc'd, caller frees); refuses files over max_bytes (0: no limit). */
tconv_status tc_read_file(const char *path, size_t max_bytes, void **data, size_t *size,
                          tc_error *err);

#endif
