/* Public API: models (life cycle, reading and writing, errors, metadata, opsets), the version,
 * and the helpers every src/api file uses to record errors. */
#include "api/api_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/print.h"

/* A new model's IR version when the caller builds one: ONNX 1.13's, read by every current
 * runtime. */
#define NEW_MODEL_IR_VERSION 8

/* ---------------------------------------------------------------- error helpers */

tc_error *tc_api_begin(tconv_model *model) {
    tc_error_clear(&model->last_error);
    return &model->last_error;
}

tconv_status tc_api_end(tconv_model *model, tconv_status status) {
    if (status == TCONV_OK) {
        tc_error_clear(&model->last_error);
    } else {
        model->last_error.status = status;
        if (!model->last_error.message[0])
            tc_error_set(&model->last_error, status, "failed: %s", tconv_status_name(status));
    }
    return status;
}

tconv_status tc_api_usage(tconv_model *model, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tc_error_setv(model ? &model->last_error : NULL, TCONV_ERR_USAGE, fmt, ap);
    va_end(ap);
    return TCONV_ERR_USAGE;
}

void tc_api_copy_message(char *buf, size_t size, const char *message) {
    if (!buf || size == 0)
        return;
    snprintf(buf, size, "%s", message ? message : "");
}

tconv_model *tc_api_node_model(const tconv_node *node) {
    return node && node->graph ? node->graph->model : NULL;
}

tconv_model *tc_api_value_model(const tconv_value *value) {
    return value && value->graph ? value->graph->model : NULL;
}

tconv_status tc_api_check_dims(tconv_model *model, const char *what, int rank, const int64_t *dims,
                               bool allow_unknown_rank, bool allow_unknown_dims) {
    if (rank == -1 && allow_unknown_rank)
        return TCONV_OK;
    if (rank < 0 || rank > TCONV_MAX_DIMS)
        return tc_api_usage(model, "%s: rank %d is outside 0..%d", what, rank, TCONV_MAX_DIMS);
    if (rank > 0 && !dims)
        return tc_api_usage(model, "%s: rank %d but dims is NULL", what, rank);
    for (int i = 0; i < rank; i++) {
        if (dims[i] < (allow_unknown_dims ? -1 : 0))
            return tc_api_usage(model, "%s: dim %d is %lld", what, i, (long long)dims[i]);
    }
    return TCONV_OK;
}

tconv_status tc_api_capture_text(tconv_status (*write)(const void *ctx, FILE *out), const void *ctx,
                                 char **text) {
    char *buf = NULL;
    size_t len = 0;
    FILE *stream = open_memstream(&buf, &len);
    if (!stream)
        return TCONV_ERR_NOMEM;
    tconv_status st = write(ctx, stream);
    if (fclose(stream) != 0 && st == TCONV_OK)
        st = TCONV_ERR_NOMEM;
    if (st != TCONV_OK || !buf) {
        free(buf);
        return st == TCONV_OK ? TCONV_ERR_NOMEM : st;
    }
    *text = buf;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- version and memory */

const char *tconv_version(void) {
    return TCONV_VERSION_STRING;
}

int tconv_version_number(void) {
    return TCONV_VERSION_NUMBER;
}

void tconv_free(void *memory) {
    free(memory);
}

const char *tconv_escape_text(char *buf, size_t size, const char *text) {
    return buf && size ? tc_escape_cstr(buf, size, text) : "";
}

/* ---------------------------------------------------------------- life cycle */

tconv_status tconv_model_new(tconv_model **out) {
    if (!out)
        return TCONV_ERR_USAGE;
    tc_error err;
    tconv_status st = tc_model_create(out, &err);
    if (st != TCONV_OK)
        return st;
    tc_model_set_ir_version(*out, NEW_MODEL_IR_VERSION);
    return TCONV_OK;
}

/* Hands a load's result to the caller: the model on success, the message on failure. */
static tconv_status finish_read(tconv_status st, tconv_model **out, const tc_load_info *info,
                                const tc_error *err, char *message, size_t message_size) {
    if (st != TCONV_OK) {
        tconv_model_free(*out);
        *out = NULL;
        tc_api_copy_message(message, message_size,
                            err->message[0] ? err->message : tconv_status_name(st));
        return st;
    }
    (*out)->n_graphs_sorted_on_load = info->n_graphs_reordered;
    tc_error_clear(&(*out)->last_error);
    return TCONV_OK;
}

tconv_status tconv_model_read_file(const char *path, const tconv_limits *limits, tconv_model **out,
                                   char *message, size_t message_size) {
    tc_api_copy_message(message, message_size, "");
    if (!out || !path) {
        tc_api_copy_message(message, message_size,
                            "tconv_model_read_file: path and out must not be NULL");
        if (out)
            *out = NULL;
        return TCONV_ERR_USAGE;
    }
    *out = NULL;
    tc_error err;
    tc_error_clear(&err);
    tc_load_info info = {0};
    tc_load_options options;
    tc_api_load_options(limits, &options);
    tconv_status st = tc_model_load_file(path, &options, out, &info, &err);
    return finish_read(st, out, &info, &err, message, message_size);
}

tconv_status tconv_model_read_buffer(const void *data, size_t size, const char *external_data_dir,
                                     const tconv_limits *limits, tconv_model **out, char *message,
                                     size_t message_size) {
    tc_api_copy_message(message, message_size, "");
    if (!out || (!data && size > 0)) {
        tc_api_copy_message(message, message_size,
                            "tconv_model_read_buffer: out (and data when size > 0) must not "
                            "be NULL");
        if (out)
            *out = NULL;
        return TCONV_ERR_USAGE;
    }
    *out = NULL;
    static const unsigned char empty = 0;
    tc_error err;
    tc_error_clear(&err);
    tc_load_info info = {0};
    tc_load_options options;
    tc_api_load_options(limits, &options);
    tconv_status st = tc_model_load_buffer(data ? data : &empty, size, external_data_dir, &options,
                                           out, &info, &err);
    return finish_read(st, out, &info, &err, message, message_size);
}

tconv_status tconv_model_write_file(tconv_model *model, const char *path) {
    if (!model)
        return TCONV_ERR_USAGE;
    if (!path)
        return tc_api_usage(model, "tconv_model_write_file: path is NULL");
    return tc_api_end(model, tc_model_save_file(model, path, tc_api_begin(model)));
}

tconv_status tconv_model_check_output_path(tconv_model *model, const char *path) {
    if (!model)
        return TCONV_ERR_USAGE;
    if (!path)
        return tc_api_usage(model, "tconv_model_check_output_path: path is NULL");
    tc_error *err = tc_api_begin(model);
    tconv_status st = tc_output_path_check(path, err);
    if (st == TCONV_OK)
        st = tc_model_refuse_own_file(model, path, err);
    return tc_api_end(model, st);
}

tconv_status tconv_model_write_buffer(tconv_model *model, void **data, size_t *size) {
    if (data)
        *data = NULL;
    if (size)
        *size = 0;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!data || !size)
        return tc_api_usage(model, "tconv_model_write_buffer: data and size must not be NULL");
    tconv_status st = tc_model_save_buffer(model, data, size, tc_api_begin(model));
    if (st != TCONV_OK) {
        free(*data);
        *data = NULL;
        *size = 0;
    }
    return tc_api_end(model, st);
}

static void copy_ids(const tconv_graph *from, tconv_graph *to);

/* The subgraphs of two copies of a node, attribute by attribute. */
static void copy_subgraph_ids(const tconv_node *from, tconv_node *to) {
    for (size_t i = 0; i < from->n_attrs && i < to->n_attrs; i++) {
        const tc_attr *a = &from->attrs[i], *b = &to->attrs[i];
        if (a->type == TCONV_ATTR_GRAPH && b->type == TCONV_ATTR_GRAPH && a->g && b->g)
            copy_ids(a->g, b->g);
        for (size_t k = 0;
             a->type == TCONV_ATTR_GRAPHS && b->type == TCONV_ATTR_GRAPHS && k < a->n && k < b->n;
             k++) {
            if (a->graphs[k] && b->graphs[k])
                copy_ids(a->graphs[k], b->graphs[k]);
        }
    }
}

/* A copy keeps its nodes' ids, so that a rewrite report made on one (its node ids) finds the
 * same nodes in the other: the saved copy lists the nodes in the same order. */
static void copy_ids(const tconv_graph *from, tconv_graph *to) {
    if (from->n_nodes != to->n_nodes)
        return;
    tconv_node *b = to->first;
    for (const tconv_node *a = from->first; a && b; a = a->next, b = b->next) {
        b->id = a->id;
        copy_subgraph_ids(a, b);
    }
}

tconv_status tconv_model_clone(tconv_model *model, tconv_model **out) {
    if (out)
        *out = NULL;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!out)
        return tc_api_usage(model, "tconv_model_clone: out is NULL");
    void *bytes = NULL;
    size_t size = 0;
    /* The model is in memory already: whatever limits it was read with, the copy fits. */
    tc_load_options unlimited;
    tc_load_options_init(&unlimited);
    unlimited.max_file_bytes = unlimited.max_tensor_bytes = unlimited.max_nodes = 0;
    unlimited.max_graph_depth = INT_MAX;
    tc_error *err = tc_api_begin(model);
    tconv_status st = tc_model_save_buffer(model, &bytes, &size, err);
    if (st == TCONV_OK && (st = tc_model_load_buffer(bytes, size, model->dir, &unlimited, out, NULL,
                                                     err)) != TCONV_OK)
        tc_error_prefix(err, st, "reading the copy back: ");
    free(bytes);
    if (st == TCONV_OK) {
        copy_ids(model->graph, (*out)->graph);
        (*out)->next_id = model->next_id > (*out)->next_id ? model->next_id : (*out)->next_id;
    }
    if (st == TCONV_OK && model->path &&
        !((*out)->path = tc_arena_strdup((*out)->arena, model->path)))
        st = tc_error_nomem(err, "a model path");
    if (st != TCONV_OK) {
        tconv_model_free(*out);
        *out = NULL;
    }
    return tc_api_end(model, st);
}

/* tconv_model_free is the IR's own (ir/graph.c): it ignores NULL. */

/* ---------------------------------------------------------------- errors */

const char *tconv_model_last_error(const tconv_model *model) {
    return model ? model->last_error.message : "";
}

tconv_status tconv_model_last_status(const tconv_model *model) {
    return model ? model->last_error.status : TCONV_ERR_USAGE;
}

tconv_status tconv_model_set_error(tconv_model *model, tconv_status status, const char *message) {
    if (!model)
        return TCONV_ERR_USAGE;
    if (status == TCONV_OK)
        tc_error_clear(&model->last_error);
    else
        tc_error_set(&model->last_error, status, "%s", message ? message : "");
    return status;
}

/* ---------------------------------------------------------------- checks and text */

tconv_status tconv_model_validate(tconv_model *model) {
    if (!model)
        return TCONV_ERR_USAGE;
    return tc_api_end(model, tc_model_verify(model, tc_api_begin(model)));
}

static tconv_status print_model(const void *model, FILE *out) {
    return tc_model_print(model, out);
}

tconv_status tconv_model_format_ir(tconv_model *model, char **text) {
    if (text)
        *text = NULL;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!text)
        return tc_api_usage(model, "tconv_model_format_ir: text is NULL");
    tc_error *err = tc_api_begin(model);
    tconv_status st = tc_api_capture_text(print_model, model, text);
    if (st != TCONV_OK)
        tc_error_set(err, st, "formatting the IR: %s", tconv_status_name(st));
    return tc_api_end(model, st);
}

/* ---------------------------------------------------------------- metadata and opsets */

int64_t tconv_model_ir_version(const tconv_model *model) {
    return model && model->has_ir_version ? model->ir_version : 0;
}

tconv_status tconv_model_set_ir_version(tconv_model *model, int64_t version) {
    if (!model)
        return TCONV_ERR_USAGE;
    if (version < 1)
        return tc_api_usage(model, "tconv_model_set_ir_version: version %lld < 1",
                            (long long)version);
    tc_api_begin(model);
    tc_model_set_ir_version(model, version);
    return TCONV_OK;
}

const char *tconv_model_producer_name(const tconv_model *model) {
    return model ? model->producer_name : NULL;
}

const char *tconv_model_producer_version(const tconv_model *model) {
    return model ? model->producer_version : NULL;
}

const char *tconv_model_path(const tconv_model *model) {
    return model ? model->path : NULL;
}

size_t tconv_model_sorted_graph_count(const tconv_model *model) {
    return model ? model->n_graphs_sorted_on_load : 0;
}

size_t tconv_model_opset_count(const tconv_model *model) {
    return model ? model->n_opsets : 0;
}

bool tconv_model_opset_at(const tconv_model *model, size_t index, const char **domain,
                          int64_t *version) {
    if (!model || index >= model->n_opsets)
        return false;
    if (domain)
        *domain = model->opsets[index].domain ? model->opsets[index].domain : "";
    if (version)
        *version = model->opsets[index].version;
    return true;
}

int64_t tconv_model_opset_version(const tconv_model *model, const char *domain) {
    return model ? tc_model_opset(model, domain) : 0;
}

tconv_status tconv_model_set_opset_version(tconv_model *model, const char *domain,
                                           int64_t version) {
    if (!model)
        return TCONV_ERR_USAGE;
    if (version < 1)
        return tc_api_usage(model, "tconv_model_set_opset_version: version %lld < 1",
                            (long long)version);
    return tc_api_end(model, tc_model_set_opset(model, domain, version, tc_api_begin(model)));
}
