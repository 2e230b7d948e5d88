/* IR -> ModelProto -> bytes. Every object that came from a file is written as a shallow copy of
 * its origin message with the fields the IR models overwritten, so whatever the IR does not model
 * (unknown fields, denotations, node metadata, sparse initializers, training_info, ...) is written
 * back untouched. Unchanged tensors are their origin message itself. All temporary messages live
 * in one arena that is dropped after packing. */
#define _XOPEN_SOURCE 700

#include "importer/importer.h"
#include "ir/vec.h"
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

typedef struct ext_plan ext_plan;

typedef struct save_ctx {
    tc_arena *tmp;
    tc_error *err;
    bool failed;
    const ext_plan *plan; /* where external tensors go (a file named after the output); NULL:
                           * they keep their references */
} save_ctx;

static Onnx__TensorProto *relocated_tensor(save_ctx *ctx, tconv_tensor *tensor);

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
    Onnx__TensorProto *t = ctx->plan && tensor->storage == TCONV_STORAGE_EXTERNAL
                               ? relocated_tensor(ctx, tensor)
                               : tc_onnx_tensor_to_proto(ctx->tmp, tensor, ctx->err);
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

static tconv_status model_to_proto(const tconv_model *model, tc_arena *tmp, const ext_plan *plan,
                                   Onnx__ModelProto **out, tc_error *err) {
    tc_error local = {TCONV_OK, ""}; /* the save functions read the status back from a record */
    save_ctx ctx = {tmp, err ? err : &local, false, plan};
    *out = save_model(&ctx, model);
    if (*out)
        return TCONV_OK;
    return ctx.err->status != TCONV_OK ? ctx.err->status
                                       : tc_error_nomem(ctx.err, "the saved model");
}

tconv_status tc_onnx_model_to_proto(const tconv_model *model, tc_arena *tmp, Onnx__ModelProto **out,
                                    tc_error *err) {
    return model_to_proto(model, tmp, NULL, out, err);
}

tconv_status tc_model_save_buffer(const tconv_model *model, void **data, size_t *size,
                                  tc_error *err) {
    tc_error local;
    save_ctx ctx = {tc_arena_create(), err ? err : &local, false, NULL};
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
    if (!TC_VEC_RESERVE(list->items, list->cap, list->n + 1))
        return false;
    list->items[list->n++] = location;
    return true;
}

/* Calls fn on every tensor of the model (initializers and attribute tensors of every graph;
 * subgraphs are in all_graphs too, so one pass over it sees every tensor); false as soon as fn
 * returns false. */
typedef bool (*tensor_fn)(void *ctx, const tconv_tensor *t);

static bool walk_graph_tensors(const tconv_graph *g, tensor_fn fn, void *ctx) {
    for (size_t i = 0; i < g->n_initializers; i++) {
        if (!fn(ctx, g->initializers[i]))
            return false;
    }
    for (const tconv_node *n = g->first; n; n = n->next) {
        for (size_t a = 0; a < n->n_attrs; a++) {
            const tc_attr *attr = &n->attrs[a];
            if (attr->type == TCONV_ATTR_TENSOR && attr->t && !fn(ctx, attr->t))
                return false;
            for (size_t k = 0; attr->type == TCONV_ATTR_TENSORS && k < attr->n; k++) {
                if (attr->tensors[k] && !fn(ctx, attr->tensors[k]))
                    return false;
            }
        }
    }
    return true;
}

static bool walk_tensors(const tconv_model *model, tensor_fn fn, void *ctx) {
    for (size_t i = 0; i < model->n_all_graphs; i++) {
        if (!walk_graph_tensors(model->all_graphs[i], fn, ctx))
            return false;
    }
    return true;
}

static bool collect_tensor(void *ctx, const tconv_tensor *t) {
    return t->storage != TCONV_STORAGE_EXTERNAL || !t->external.location ||
           list_add(ctx, t->external.location);
}

static bool collect_locations(const tconv_model *model, location_list *list) {
    return walk_tensors(model, collect_tensor, list);
}

/* ---------------------------------------------------------------- the output's data file
 *
 * The external data of a written model goes into one file named after it, as onnx's own
 * save_model does: out/a.onnx -> out/a.onnx.data, each tensor's bytes at a new offset. Two models
 * converted into one folder never share a data file, and a model converted in place gets its data
 * file replaced, with the model, by one holding the same tensors. */

/* One external tensor: where its bytes are now and where they go. */
typedef struct ext_move {
    const tconv_tensor *tensor;
    char *src; /* its current file, resolved */
    int64_t src_offset, offset;
    size_t nbytes;
} ext_move;

struct ext_plan {
    const tconv_model *model;
    ext_move *moves; /* in the data file's order */
    size_t n, cap;
    ext_move **by_tensor; /* sorted by tensor address, for the saver's lookups */
    char *location;       /* "a.onnx.data" */
    char *path;           /* its path beside the output */
    int64_t size;
    tc_error *err;
    tconv_status status;
};

static bool plan_tensor(void *ctx, const tconv_tensor *t) {
    ext_plan *plan = ctx;
    if (t->storage != TCONV_STORAGE_EXTERNAL || !t->external.location)
        return true;
    int64_t n;
    size_t nbytes;
    if (!tc_tensor_elements(t, &n) || !tc_dtype_storage_bytes(t->dtype, n, &nbytes)) {
        plan->status = tc_error_set(plan->err, TCONV_ERR_INVALID, "tensor '%s': its size overflows",
                                    t->name ? t->name : "");
        return false;
    }
    if (!TC_VEC_RESERVE(plan->moves, plan->cap, plan->n + 1)) {
        plan->status = tc_error_nomem(plan->err, "the external data plan");
        return false;
    }
    ext_move *m = &plan->moves[plan->n];
    *m = (ext_move){t, NULL, t->external.offset, plan->size, nbytes};
    plan->status =
        tc_onnx_resolve_external(plan->model->dir, t->external.location, &m->src, plan->err);
    if (plan->status != TCONV_OK)
        return false;
    plan->n++;
    plan->size += (int64_t)nbytes;
    return true;
}

static int compare_by_tensor(const void *a, const void *b) {
    const void *x = (*(ext_move *const *)a)->tensor, *y = (*(ext_move *const *)b)->tensor;
    return x < y ? -1 : x > y;
}

static void ext_plan_free(ext_plan *plan) {
    for (size_t i = 0; i < plan->n; i++)
        free(plan->moves[i].src);
    free(plan->moves);
    free(plan->by_tensor);
    free(plan->location);
    free(plan->path);
}

/* The data file's name and every external tensor's place in it; plan->n 0: the model has none. */
static tconv_status ext_plan_make(const tconv_model *model, const char *path, ext_plan *plan,
                                  tc_error *err) {
    *plan = (ext_plan){.model = model, .err = err, .status = TCONV_OK};
    if (!walk_tensors(model, plan_tensor, plan))
        return plan->status;
    if (!plan->n)
        return TCONV_OK;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(path);
    plan->location = malloc(strlen(base) + 6);
    plan->path = malloc(len + 6);
    plan->by_tensor = malloc(plan->n * sizeof *plan->by_tensor);
    if (!plan->location || !plan->path || !plan->by_tensor)
        return tc_error_nomem(err, "the external data plan");
    snprintf(plan->location, strlen(base) + 6, "%s.data", base);
    snprintf(plan->path, len + 6, "%s.data", path);
    for (size_t i = 0; i < plan->n; i++)
        plan->by_tensor[i] = &plan->moves[i];
    qsort(plan->by_tensor, plan->n, sizeof *plan->by_tensor, compare_by_tensor);
    return TCONV_OK;
}

static const ext_move *ext_plan_find(const ext_plan *plan, const tconv_tensor *t) {
    ext_move key = {.tensor = t}, *pkey = &key;
    ext_move **found =
        bsearch(&pkey, plan->by_tensor, plan->n, sizeof *plan->by_tensor, compare_by_tensor);
    return found ? *found : NULL;
}

/* The tensor's proto with its external data at its place in the output's data file. */
static Onnx__TensorProto *relocated_tensor(save_ctx *ctx, tconv_tensor *tensor) {
    const ext_move *m = ext_plan_find(ctx->plan, tensor);
    if (!m) {
        tc_error_set(ctx->err, TCONV_ERR_INVALID, "external data not planned");
        return NULL;
    }
    tconv_tensor moved = *tensor;
    moved.external.location = ctx->plan->location;
    moved.external.offset = m->offset;
    moved.external.length = (int64_t)m->nbytes;
    moved.dirty = true; /* rebuilt from its origin with the new location */
    return tc_onnx_tensor_to_proto(ctx->tmp, &moved, ctx->err);
}

/* Copies nbytes at offset of `src` into fd; a file shorter than that is an error. */
static tconv_status copy_range(int fd, const char *dst, const ext_move *m, tc_error *err) {
    int in = open(m->src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return tc_error_set(err, TCONV_ERR_IO, "cannot open '%s': %s", m->src, strerror(errno));
    char buf[1 << 16];
    tconv_status st = TCONV_OK;
    size_t done = 0;
    while (st == TCONV_OK && done < m->nbytes) {
        size_t want = m->nbytes - done < sizeof buf ? m->nbytes - done : sizeof buf;
        ssize_t got = pread(in, buf, want, (off_t)(m->src_offset + (int64_t)done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            st = tc_error_set(err, TCONV_ERR_IO, "%s: cannot read %zu bytes at offset %lld: %s",
                              m->src, m->nbytes, (long long)m->src_offset,
                              got < 0 ? strerror(errno) : "the file ends before");
        else if ((st = tc_write_all(fd, dst, buf, (size_t)got, err)) == TCONV_OK)
            done += (size_t)got;
    }
    close(in);
    return st;
}

/* Fills the data file: every external tensor's bytes, in the plan's order (a tc_fd_writer). */
static tconv_status write_data_file(int fd, const char *dst, void *ctx, tc_error *err) {
    const ext_plan *plan = ctx;
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < plan->n; i++)
        st = copy_range(fd, dst, &plan->moves[i], err);
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

/* The data file goes first in the batch, the model last. */
static tconv_status add_data_file(tc_file_batch *batch, const ext_plan *plan, const char *path,
                                  tc_error *err) {
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < plan->n; i++)
        st = refuse_input_file(path, plan->moves[i].src, err);
    if (st == TCONV_OK && plan->n)
        st = tc_output_path_check(plan->path, err);
    if (st == TCONV_OK && plan->n)
        st = tc_file_batch_make_parents(batch, plan->path, err);
    return st == TCONV_OK && plan->n
               ? tc_file_batch_add(batch, plan->path, write_data_file, (void *)plan, err)
               : st;
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

/* The data file first, the model last: the model is replaced only once all it references is in
 * place, and a failure anywhere leaves the old outputs as they were. */
static tconv_status save_in_batch(tc_file_batch *batch, const ext_plan *plan,
                                  const tconv_model *model, const Onnx__ModelProto *proto,
                                  const char *path, tc_error *err) {
    tconv_status st = add_data_file(batch, plan, path, err);
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
    ext_plan plan;
    if (!tmp)
        st = tc_error_nomem(err, "the saver");
    if (st == TCONV_OK && (st = ext_plan_make(model, path, &plan, err)) != TCONV_OK)
        tc_error_prefix(err, st, "%s: ", path);
    if (st == TCONV_OK &&
        (st = model_to_proto(model, tmp, plan.n ? &plan : NULL, &proto, err)) != TCONV_OK)
        tc_error_prefix(err, st, "%s: ", path);
    if (st == TCONV_OK)
        st = tc_file_batch_new(&batch, err);
    if (st == TCONV_OK)
        st = save_in_batch(batch, &plan, model, proto, path, err);
    tc_file_batch_free(batch);
    if (tmp)
        ext_plan_free(&plan);
    tc_arena_destroy(tmp);
    return st;
}
