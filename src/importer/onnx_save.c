/* IR -> ModelProto -> bytes. Every object that came from a file is written as a shallow copy of
 * its origin message with the fields the IR models overwritten, so whatever the IR does not model
 * (unknown fields, denotations, node metadata, sparse initializers, training_info, ...) is written
 * back untouched. Unchanged tensors are their origin message itself. All temporary messages live
 * in one arena that is dropped after packing. */
#define _XOPEN_SOURCE 700

#include "importer/importer.h"
#include "importer/onnx_internal.h"
#include "importer/model_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct save_ctx {
    tc_arena *tmp;
    tc_error *err;
    bool failed;
} save_ctx;

static void *alloc(save_ctx *ctx, size_t count, size_t size) {
    void *p = tc_arena_calloc(ctx->tmp, count ? count : 1, size);
    if (!p && !ctx->failed) {
        tc_error_nomem(ctx->err, "a message being saved");
        ctx->failed = true;
    }
    return p;
}

static char *str(const char *s) {
    return (char *)s; /* protobuf-c's structs are not const-correct; packing only reads */
}

/* proto2 presence of an optional scalar: keep the origin's "absent" when the value is still the
 * default, so an unchanged message packs to the same bytes. */
static protobuf_c_boolean keep_presence(bool origin_exists, protobuf_c_boolean origin_has,
                                        bool is_default) {
    return !origin_exists || origin_has || !is_default;
}

static Onnx__GraphProto *save_graph(save_ctx *ctx, tconv_graph *graph);

/* ---------------------------------------------------------------- types */

static Onnx__TensorShapeProto__Dimension *save_dim(save_ctx *ctx, const tc_dim *dim) {
    Onnx__TensorShapeProto__Dimension *d = alloc(ctx, 1, sizeof *d);
    if (!d)
        return NULL;
    if (dim->origin)
        *d = *(const Onnx__TensorShapeProto__Dimension *)dim->origin;
    else
        onnx__tensor_shape_proto__dimension__init(d);
    switch (dim->kind) {
    case TCONV_DIM_STATIC:
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dim->value;
        break;
    case TCONV_DIM_SYMBOLIC:
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = str(dim->param);
        break;
    case TCONV_DIM_UNKNOWN:
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
        break;
    }
    return d;
}

static Onnx__TensorShapeProto *save_shape(save_ctx *ctx, const tc_type *type,
                                          const Onnx__TensorShapeProto *origin) {
    Onnx__TensorShapeProto *s = alloc(ctx, 1, sizeof *s);
    Onnx__TensorShapeProto__Dimension **dims =
        alloc(ctx, (size_t)type->rank, sizeof(Onnx__TensorShapeProto__Dimension *));
    if (!s || !dims)
        return NULL;
    if (origin)
        *s = *origin;
    else
        onnx__tensor_shape_proto__init(s);
    for (int i = 0; i < type->rank; i++) {
        if (!(dims[i] = save_dim(ctx, &type->dims[i])))
            return NULL;
    }
    s->n_dim = (size_t)type->rank;
    s->dim = dims;
    return s;
}

/* A TypeProto for an edited type; the original (denotation, unknown fields) is the base. */
static Onnx__TypeProto *build_type(save_ctx *ctx, const tconv_value *value) {
    const tc_type *type = &value->type;
    const Onnx__TypeProto *origin = value->type_origin;
    if (type->kind != TCONV_TYPE_TENSOR)
        return type->kind == TCONV_TYPE_OTHER ? (Onnx__TypeProto *)origin : NULL;
    Onnx__TypeProto *t = alloc(ctx, 1, sizeof *t);
    Onnx__TypeProto__Tensor *tt = alloc(ctx, 1, sizeof *tt);
    if (!t || !tt)
        return NULL;
    bool origin_is_tensor =
        origin && origin->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && origin->tensor_type;
    if (origin)
        *t = *origin;
    else
        onnx__type_proto__init(t);
    if (origin_is_tensor)
        *tt = *origin->tensor_type;
    else
        onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)type->dtype;
    tt->shape = NULL;
    if (type->rank >= 0 &&
        !(tt->shape = save_shape(ctx, type, origin_is_tensor ? origin->tensor_type->shape : NULL)))
        return NULL;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    return t;
}

static Onnx__TypeProto *choose_type(save_ctx *ctx, const tc_value_info *vi) {
    const tconv_value *value = vi->value;
    if (!value->type_dirty) {
        if (vi->origin)
            return ((const Onnx__ValueInfoProto *)vi->origin)->type;
        if (value->type_origin)
            return (Onnx__TypeProto *)value->type_origin;
    }
    return build_type(ctx, value);
}

static Onnx__ValueInfoProto *save_value_info(save_ctx *ctx, const tc_value_info *vi) {
    Onnx__ValueInfoProto *v = alloc(ctx, 1, sizeof *v);
    if (!v)
        return NULL;
    if (vi->origin)
        *v = *(const Onnx__ValueInfoProto *)vi->origin;
    else
        onnx__value_info_proto__init(v);
    v->name = str(vi->value->name);
    v->type = choose_type(ctx, vi);
    return ctx->failed ? NULL : v;
}

static Onnx__ValueInfoProto **save_value_infos(save_ctx *ctx, const tc_value_info *list, size_t n) {
    Onnx__ValueInfoProto **out = alloc(ctx, n, sizeof *out);
    for (size_t i = 0; out && i < n; i++) {
        if (!(out[i] = save_value_info(ctx, &list[i])))
            return NULL;
    }
    return out;
}

static char **value_names(save_ctx *ctx, const tc_value_info *list, size_t n) {
    char **out = alloc(ctx, n, sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        out[i] = str(list[i].value->name);
    return out;
}

/* ---------------------------------------------------------------- tensors and attributes */

static Onnx__TensorProto *save_tensor(save_ctx *ctx, tconv_tensor *tensor) {
    if (ctx->failed)
        return NULL;
    Onnx__TensorProto *t = tc_onnx_tensor_to_proto(ctx->tmp, tensor, ctx->err);
    if (!t) {
        ctx->failed = true;
        tc_error_prefix(ctx->err, ctx->err->status,
                        "tensor '%s': ", tensor->name ? tensor->name : "");
    }
    return t;
}

static bool save_attr_lists(save_ctx *ctx, const tc_attr *attr, Onnx__AttributeProto *a) {
    switch (attr->type) {
    case TCONV_ATTR_FLOATS:
        a->n_floats = attr->n;
        a->floats = attr->floats;
        return true;
    case TCONV_ATTR_INTS:
        a->n_ints = attr->n;
        a->ints = attr->ints;
        return true;
    case TCONV_ATTR_STRINGS:
        a->n_strings = attr->n;
        a->strings = alloc(ctx, attr->n, sizeof(ProtobufCBinaryData));
        for (size_t k = 0; a->strings && k < attr->n; k++)
            a->strings[k] =
                (ProtobufCBinaryData){attr->strings[k].len, (uint8_t *)attr->strings[k].data};
        return a->strings != NULL;
    case TCONV_ATTR_TENSORS:
        a->n_tensors = attr->n;
        a->tensors = alloc(ctx, attr->n, sizeof(Onnx__TensorProto *));
        for (size_t k = 0; a->tensors && k < attr->n; k++) {
            if (!(a->tensors[k] = save_tensor(ctx, attr->tensors[k])))
                return false;
        }
        return a->tensors != NULL;
    case TCONV_ATTR_GRAPHS:
        a->n_graphs = attr->n;
        a->graphs = alloc(ctx, attr->n, sizeof(Onnx__GraphProto *));
        for (size_t k = 0; a->graphs && k < attr->n; k++) {
            if (!(a->graphs[k] = save_graph(ctx, attr->graphs[k])))
                return false;
        }
        return a->graphs != NULL;
    default:
        return true; /* sparse tensors and type protos come from the origin */
    }
}

static bool save_attr_value(save_ctx *ctx, const tc_attr *attr, Onnx__AttributeProto *a,
                            const Onnx__AttributeProto *origin) {
    switch (attr->type) {
    case TCONV_ATTR_FLOAT:
        a->f = attr->f;
        a->has_f = keep_presence(origin, origin && origin->has_f, attr->f == 0.0f);
        return true;
    case TCONV_ATTR_INT:
        a->i = attr->i;
        a->has_i = keep_presence(origin, origin && origin->has_i, attr->i == 0);
        return true;
    case TCONV_ATTR_STRING:
        a->s = (ProtobufCBinaryData){attr->s.len, (uint8_t *)attr->s.data};
        a->has_s = keep_presence(origin, origin && origin->has_s, attr->s.len == 0);
        return true;
    case TCONV_ATTR_TENSOR:
        return !attr->t || (a->t = save_tensor(ctx, attr->t)) != NULL;
    case TCONV_ATTR_GRAPH:
        return !attr->g || (a->g = save_graph(ctx, attr->g)) != NULL;
    default:
        return save_attr_lists(ctx, attr, a);
    }
}

static Onnx__AttributeProto *save_attr(save_ctx *ctx, const tc_attr *attr) {
    const Onnx__AttributeProto *origin = attr->origin;
    Onnx__AttributeProto *a = alloc(ctx, 1, sizeof *a);
    if (!a)
        return NULL;
    if (origin)
        *a = *origin;
    else
        onnx__attribute_proto__init(a);
    a->name = str(attr->name);
    a->type = (Onnx__AttributeProto__AttributeType)attr->type;
    /* A file without the type field had it inferred from the value on load. */
    a->has_type = origin ? origin->has_type : 1;
    if (!save_attr_value(ctx, attr, a, origin)) {
        if (!ctx->failed)
            tc_error_nomem(ctx->err, "an attribute");
        ctx->failed = true;
        tc_error_prefix(ctx->err, ctx->err->status,
                        "attribute '%s': ", attr->name ? attr->name : "");
        return NULL;
    }
    return a;
}

/* ---------------------------------------------------------------- nodes and graphs */

static char **save_node_values(save_ctx *ctx, tconv_value *const *values, size_t n) {
    char **names = alloc(ctx, n, sizeof(char *));
    for (size_t i = 0; names && i < n; i++)
        names[i] = values[i] ? str(values[i]->name) : "";
    return names;
}

static Onnx__NodeProto *save_node(save_ctx *ctx, const tconv_node *node) {
    const Onnx__NodeProto *origin = node->origin;
    Onnx__NodeProto *n = alloc(ctx, 1, sizeof *n);
    Onnx__AttributeProto **attrs = alloc(ctx, node->n_attrs, sizeof *attrs);
    char **inputs = save_node_values(ctx, node->inputs, node->n_inputs);
    char **outputs = save_node_values(ctx, node->outputs, node->n_outputs);
    if (!n || !attrs || !inputs || !outputs)
        return NULL;
    if (origin)
        *n = *origin;
    else
        onnx__node_proto__init(n);
    n->n_input = node->n_inputs;
    n->input = inputs;
    n->n_output = node->n_outputs;
    n->output = outputs;
    n->name = str(node->name);
    n->op_type = str(node->op_type);
    n->domain = str(node->domain);
    n->overload = str(node->overload);
    n->doc_string = str(node->doc_string);
    for (size_t i = 0; i < node->n_attrs; i++) {
        if (!(attrs[i] = save_attr(ctx, &node->attrs[i]))) {
            char where[256];
            tc_error_prefix(ctx->err, ctx->err->status,
                            "%s: ", tc_node_describe(node, where, sizeof where));
            return NULL;
        }
    }
    n->n_attribute = node->n_attrs;
    n->attribute = attrs;
    return n;
}

static Onnx__NodeProto **save_nodes(save_ctx *ctx, const tconv_graph *graph) {
    Onnx__NodeProto **nodes = alloc(ctx, graph->n_nodes, sizeof *nodes);
    size_t i = 0;
    for (const tconv_node *node = graph->first; nodes && node && i < graph->n_nodes;
         node = node->next) {
        if (!(nodes[i++] = save_node(ctx, node)))
            return NULL;
    }
    return nodes;
}

static Onnx__GraphProto *save_graph(save_ctx *ctx, tconv_graph *graph) {
    const Onnx__GraphProto *origin = graph->origin;
    Onnx__GraphProto *g = alloc(ctx, 1, sizeof *g);
    if (!g)
        return NULL;
    if (origin)
        *g = *origin;
    else
        onnx__graph_proto__init(g);
    g->name = str(graph->name);
    g->doc_string = str(graph->doc_string);
    g->node = save_nodes(ctx, graph);
    g->n_node = graph->n_nodes;
    g->initializer = alloc(ctx, graph->n_initializers, sizeof(Onnx__TensorProto *));
    for (size_t i = 0; g->initializer && i < graph->n_initializers; i++)
        g->initializer[i] = save_tensor(ctx, graph->initializers[i]);
    g->n_initializer = graph->n_initializers;
    g->input = save_value_infos(ctx, graph->inputs, graph->n_inputs);
    g->n_input = graph->n_inputs;
    g->output = save_value_infos(ctx, graph->outputs, graph->n_outputs);
    g->n_output = graph->n_outputs;
    g->value_info = save_value_infos(ctx, graph->value_info, graph->n_value_info);
    g->n_value_info = graph->n_value_info;
    if (ctx->failed) {
        tc_error_prefix(ctx->err, ctx->err->status, "graph '%s': ", graph->name ? graph->name : "");
        return NULL;
    }
    return g;
}

static Onnx__FunctionProto *save_function(save_ctx *ctx, const tc_function *fn) {
    const Onnx__FunctionProto *origin = fn->origin;
    Onnx__FunctionProto *f = alloc(ctx, 1, sizeof *f);
    if (!f)
        return NULL;
    if (origin)
        *f = *origin;
    else
        onnx__function_proto__init(f);
    const tconv_graph *body = fn->body;
    f->name = str(fn->name);
    f->domain = str(fn->domain);
    f->overload = str(fn->overload);
    f->doc_string = str(fn->doc_string);
    f->input = value_names(ctx, body->inputs, body->n_inputs);
    f->n_input = body->n_inputs;
    f->output = value_names(ctx, body->outputs, body->n_outputs);
    f->n_output = body->n_outputs;
    f->node = save_nodes(ctx, body);
    f->n_node = body->n_nodes;
    f->value_info = save_value_infos(ctx, body->value_info, body->n_value_info);
    f->n_value_info = body->n_value_info;
    if (ctx->failed) {
        tc_error_prefix(ctx->err, ctx->err->status, "function '%s': ", fn->name ? fn->name : "");
        return NULL;
    }
    return f;
}

/* ---------------------------------------------------------------- the model */

static Onnx__OperatorSetIdProto **save_opsets(save_ctx *ctx, const tconv_model *model) {
    Onnx__OperatorSetIdProto **out = alloc(ctx, model->n_opsets, sizeof *out);
    for (size_t i = 0; out && i < model->n_opsets; i++) {
        const tc_opset *op = &model->opsets[i];
        const Onnx__OperatorSetIdProto *origin = op->origin;
        Onnx__OperatorSetIdProto *o = alloc(ctx, 1, sizeof *o);
        if (!(out[i] = o))
            return NULL;
        if (origin)
            *o = *origin;
        else
            onnx__operator_set_id_proto__init(o);
        o->domain = str(op->domain);
        o->version = op->version;
        o->has_version = keep_presence(origin, origin && origin->has_version, op->version == 0);
    }
    return out;
}

static Onnx__StringStringEntryProto **save_metadata(save_ctx *ctx, const tconv_model *model) {
    Onnx__StringStringEntryProto **out = alloc(ctx, model->n_metadata, sizeof *out);
    for (size_t i = 0; out && i < model->n_metadata; i++) {
        const tc_string_pair *kv = &model->metadata[i];
        Onnx__StringStringEntryProto *e = alloc(ctx, 1, sizeof *e);
        if (!(out[i] = e))
            return NULL;
        if (kv->origin)
            *e = *(const Onnx__StringStringEntryProto *)kv->origin;
        else
            onnx__string_string_entry_proto__init(e);
        e->key = str(kv->key);
        e->value = str(kv->value);
    }
    return out;
}

static Onnx__FunctionProto **save_functions(save_ctx *ctx, const tconv_model *model) {
    Onnx__FunctionProto **out = alloc(ctx, model->n_functions, sizeof *out);
    for (size_t i = 0; out && i < model->n_functions; i++) {
        if (!(out[i] = save_function(ctx, model->functions[i])))
            return NULL;
    }
    return out;
}

static Onnx__ModelProto *save_model(save_ctx *ctx, const tconv_model *model) {
    const Onnx__ModelProto *origin = model->origin;
    Onnx__ModelProto *m = alloc(ctx, 1, sizeof *m);
    if (!m)
        return NULL;
    if (origin)
        *m = *origin;
    else
        onnx__model_proto__init(m);
    m->has_ir_version = model->has_ir_version;
    m->ir_version = model->ir_version;
    m->opset_import = save_opsets(ctx, model);
    m->n_opset_import = model->n_opsets;
    m->producer_name = str(model->producer_name);
    m->producer_version = str(model->producer_version);
    m->domain = str(model->domain);
    m->has_model_version = model->has_model_version;
    m->model_version = model->model_version;
    m->doc_string = str(model->doc_string);
    m->graph = model->graph ? save_graph(ctx, model->graph) : NULL;
    m->metadata_props = save_metadata(ctx, model);
    m->n_metadata_props = model->n_metadata;
    m->functions = save_functions(ctx, model);
    m->n_functions = model->n_functions;
    return ctx->failed ? NULL : m;
}

tconv_status tc_onnx_model_to_proto(const tconv_model *model, tc_arena *tmp, Onnx__ModelProto **out,
                                    tc_error *err) {
    tc_error local = {TCONV_OK, ""}; /* the save functions read the status back from a record */
    save_ctx ctx = {tmp, err ? err : &local, false};
    *out = save_model(&ctx, model);
    if (*out)
        return TCONV_OK;
    return ctx.err->status != TCONV_OK ? ctx.err->status
                                       : tc_error_nomem(ctx.err, "the saved model");
}

tconv_status tc_model_save_buffer(const tconv_model *model, void **data, size_t *size,
                                  tc_error *err) {
    tc_error local;
    save_ctx ctx = {tc_arena_create(), err ? err : &local, false};
    *data = NULL;
    *size = 0;
    if (!ctx.tmp)
        return tc_error_nomem(ctx.err, "the saver");
    Onnx__ModelProto *m = NULL;
    tconv_status st = tc_onnx_model_to_proto(model, ctx.tmp, &m, ctx.err);
    if (st == TCONV_OK) {
        size_t n = protobuf_c_message_get_packed_size(&m->base);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf) {
            st = tc_error_nomem(ctx.err, "the serialized model");
        } else {
            *size = protobuf_c_message_pack(&m->base, buf);
            *data = buf;
        }
    }
    tc_arena_destroy(ctx.tmp);
    return st;
}

/* ---------------------------------------------------------------- external data next to the output
 */

typedef struct location_list {
    const char **items;
    size_t n, cap;
} location_list;

static bool list_add(location_list *list, const char *location) {
    for (size_t i = 0; i < list->n; i++) {
        if (strcmp(list->items[i], location) == 0)
            return true;
    }
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 8;
        const char **grown = realloc(list->items, cap * sizeof(char *));
        if (!grown)
            return false;
        list->items = grown;
        list->cap = cap;
    }
    list->items[list->n++] = location;
    return true;
}

static bool collect_tensor(location_list *list, const tconv_tensor *t) {
    return !t || t->storage != TCONV_STORAGE_EXTERNAL || !t->external.location ||
           list_add(list, t->external.location);
}

static bool collect_graph(location_list *list, const tconv_graph *g) {
    for (size_t i = 0; i < g->n_initializers; i++) {
        if (!collect_tensor(list, g->initializers[i]))
            return false;
    }
    for (const tconv_node *n = g->first; n; n = n->next) {
        for (size_t a = 0; a < n->n_attrs; a++) {
            const tc_attr *attr = &n->attrs[a];
            if (!collect_tensor(list, attr->type == TCONV_ATTR_TENSOR ? attr->t : NULL))
                return false;
            for (size_t k = 0; attr->type == TCONV_ATTR_TENSORS && k < attr->n; k++) {
                if (!collect_tensor(list, attr->tensors[k]))
                    return false;
            }
        }
    }
    return true;
}

/* Subgraphs are in all_graphs too, so one pass over it sees every tensor. */
static bool collect_locations(const tconv_model *model, location_list *list) {
    for (size_t i = 0; i < model->n_all_graphs; i++) {
        if (!collect_graph(list, model->all_graphs[i]))
            return false;
    }
    return true;
}

/* Copies the file at ctx (a path) into fd: a tc_fd_writer. */
static tconv_status copy_from(int fd, const char *dst, void *ctx, tc_error *err) {
    const char *src = ctx;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return tc_error_set(err, TCONV_ERR_IO, "cannot open '%s': %s", src, strerror(errno));
    char buf[1 << 16];
    tconv_status st = TCONV_OK;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            st = tc_error_set(err, TCONV_ERR_IO, "%s: read failed: %s", src, strerror(errno));
        if (n <= 0 || (st = tc_write_all(fd, dst, buf, (size_t)n, err)) != TCONV_OK)
            break;
    }
    close(in);
    return st;
}

static tconv_status files_equal(const char *a, const char *b, bool *equal, tc_error *err) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    tconv_status st = TCONV_OK;
    *equal = false;
    if (!fa || !fb) {
        st = tc_error_set(err, TCONV_ERR_IO, "cannot open '%s': %s", !fa ? a : b, strerror(errno));
    } else {
        char ba[1 << 14], bb[1 << 14];
        for (;;) {
            size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
            if (na != nb || memcmp(ba, bb, na) != 0)
                break;
            if (na == 0) {
                *equal = !ferror(fa) && !ferror(fb);
                break;
            }
        }
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return st;
}

/* Adds a copy of the data file to the batch, unless an equal file is already there. */
static tconv_status add_external_file(tc_file_batch *batch, const char *src, const char *dst,
                                      tc_error *err) {
    tconv_status st = tc_output_path_check(dst, err);
    if (st != TCONV_OK)
        return st;
    if (access(dst, F_OK) == 0) {
        bool equal;
        st = files_equal(src, dst, &equal, err);
        if (st == TCONV_OK && !equal)
            st = tc_error_set(err, TCONV_ERR_IO,
                              "external data file '%s' already exists with different "
                              "contents; refusing to overwrite it",
                              dst);
        return st;
    }
    st = tc_file_batch_make_parents(batch, dst, err);
    return st == TCONV_OK ? tc_file_batch_add(batch, dst, copy_from, (void *)src, err) : st;
}

static tconv_status same_folder(const char *a, const char *b, bool *same, tc_error *err) {
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    tconv_status st = TCONV_OK;
    if (!ra || !rb)
        st = tc_error_set(err, TCONV_ERR_IO, "cannot resolve folder '%s': %s", !ra ? a : b,
                          strerror(errno));
    else
        *same = strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return st;
}

/* Whether a and b name the same file: compared by device and inode, so another name for the
 * same file (a hard link, "./w.bin") is caught too. false when either does not exist. */
static bool same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Writing the model over one of the input's data files would break the input and the output
 * (the model is allowed: it is only replaced by the final rename). */
static tconv_status refuse_input_file(const char *path, const char *src, tc_error *err) {
    if (!same_file(path, src))
        return TCONV_OK;
    return tc_error_set(err, TCONV_ERR_USAGE,
                        "is the input model's external data file '%s'; writing over it would break "
                        "both models, give another output path",
                        src);
}

static tconv_status add_one_location(tc_file_batch *batch, const tconv_model *model,
                                     const char *path, const char *out_dir, bool same,
                                     const char *location, tc_error *err) {
    char *src, *dst = NULL;
    tconv_status st = tc_onnx_resolve_external(model->dir, location, &src, err);
    if (st != TCONV_OK)
        return st;
    st = refuse_input_file(path, src, err);
    if (st == TCONV_OK && !same && !(dst = tc_path_join(out_dir, location)))
        st = tc_error_nomem(err, "a path");
    const char *slash = strrchr(path, '/');
    if (st == TCONV_OK && dst && strcmp(location, slash ? slash + 1 : path) == 0)
        st = tc_error_set(err, TCONV_ERR_USAGE,
                          "is where the model's external data file '%s' goes; give another "
                          "output path",
                          location);
    if (st == TCONV_OK && dst)
        st = add_external_file(batch, src, dst, err);
    free(src);
    free(dst);
    return st;
}

/* The data files the model references, copied next to `path` when it is in another folder. */
static tconv_status add_external_files(tc_file_batch *batch, const tconv_model *model,
                                       const char *path, tc_error *err) {
    location_list list = {0};
    if (!collect_locations(model, &list)) {
        free(list.items);
        return tc_error_nomem(err, "external data locations");
    }
    tconv_status st = TCONV_OK;
    char *out_dir = list.n ? tc_path_dirname(path) : NULL;
    bool same = true;
    if (list.n && !out_dir)
        st = tc_error_nomem(err, "a folder name");
    if (st == TCONV_OK && list.n)
        st = same_folder(model->dir ? model->dir : ".", out_dir, &same, err);
    for (size_t i = 0; st == TCONV_OK && i < list.n; i++)
        st = add_one_location(batch, model, path, out_dir, same, list.items[i], err);
    free(out_dir);
    free(list.items);
    return st;
}

tconv_status tc_model_refuse_own_file(const tconv_model *model, const char *path, tc_error *err) {
    if (model->path && same_file(path, model->path))
        return tc_error_set(err, TCONV_ERR_USAGE,
                            "%s: is the input model '%s'; give another output path", path,
                            model->path);
    location_list list = {0};
    if (!collect_locations(model, &list)) {
        free(list.items);
        return tc_error_nomem(err, "external data locations");
    }
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < list.n; i++) {
        char *src;
        if (tc_onnx_resolve_external(model->dir, list.items[i], &src, err) != TCONV_OK) {
            tc_error_clear(err); /* a location that does not resolve names no file to protect */
            continue;
        }
        if (same_file(path, src))
            st = tc_error_set(err, TCONV_ERR_USAGE,
                              "%s: is the input model's external data file '%s'; writing over it "
                              "would break the model, give another output path",
                              path, src);
        free(src);
    }
    free(list.items);
    return st;
}

/* Data files first, the model last: the model is replaced only once all it references is in
 * place, and a failure anywhere leaves the old outputs as they were. */
static tconv_status save_in_batch(tc_file_batch *batch, const tconv_model *model,
                                  const Onnx__ModelProto *proto, const char *path, tc_error *err) {
    tconv_status st = add_external_files(batch, model, path, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "%s: ", path);
    tc_onnx_packed packed = {&proto->base, tc_onnx_model_loaded(model)};
    st = tc_file_batch_add(batch, path, tc_onnx_write_packed, &packed, err);
    return st == TCONV_OK ? tc_file_batch_commit(batch, err) : st;
}

tconv_status tc_model_save_file(const tconv_model *model, const char *path, tc_error *err) {
    tc_error local;
    if (!err)
        err = &local;
    tconv_status st = tc_output_path_check(path, err);
    if (st != TCONV_OK)
        return st;
    tc_arena *tmp = tc_arena_create();
    tc_file_batch *batch = NULL;
    Onnx__ModelProto *proto = NULL;
    if (!tmp)
        st = tc_error_nomem(err, "the saver");
    if (st == TCONV_OK && (st = tc_onnx_model_to_proto(model, tmp, &proto, err)) != TCONV_OK)
        tc_error_prefix(err, st, "%s: ", path);
    if (st == TCONV_OK)
        st = tc_file_batch_new(&batch, err);
    if (st == TCONV_OK)
        st = save_in_batch(batch, model, proto, path, err);
    tc_file_batch_free(batch);
    tc_arena_destroy(tmp);
    return st;
}
