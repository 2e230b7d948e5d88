/* ModelProto -> IR. The unpacked message stays alive inside the model (model->release), so the
 * IR can point at it: every object keeps its message as `origin` for a lossless save, and raw
 * tensor data is borrowed rather than copied.
 *
 * Node inputs are resolved in a second pass over each graph, after every output of the graph
 * has been declared: nodes may come in any order in the file, and a subgraph may capture a value
 * that an outer node later in the list produces. The graph is sorted afterwards. */
#define _POSIX_C_SOURCE 200809L

#include "importer/importer.h"
#include "importer/onnx_internal.h"
#include "importer/model_map.h"
#include "ir/verify.h"

#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB ((uint64_t)1 << 30)
/* Nesting of protobuf messages allowed per level of subgraph (Graph > Node > Attribute > Graph)
 * plus room for the deepest non-graph chains (TypeProto sequences of maps of ...). */
#define WIRE_LEVELS_PER_GRAPH 3
#define WIRE_EXTRA_LEVELS 64
/* Errors inside subgraphs name the enclosing graphs, nodes and attributes down to this depth;
 * deeper ones are elided ("...") so a deeply nested error keeps its own text within the
 * message size. */
#define CONTEXT_LEVELS 6

static size_t clamp_to_size(uint64_t v) {
    return v > SIZE_MAX ? SIZE_MAX : (size_t)v;
}

size_t tc_load_max_nodes_for_memory(size_t memory_bytes) {
    if (memory_bytes == 0)
        return 0;
    size_t n = memory_bytes / TC_NODE_MEMORY_BYTES;
    return n ? n : 1;
}

void tc_load_options_init(tc_load_options *options) {
    options->max_file_bytes = clamp_to_size(4 * GIB);
    options->max_tensor_bytes = clamp_to_size(2 * GIB);
    options->max_graph_depth = 64;
    options->max_nodes = tc_load_max_nodes_for_memory(clamp_to_size(16 * GIB));
    options->max_memory_bytes = clamp_to_size(16 * GIB);
    options->sort_nodes = true;
}

typedef struct load_ctx {
    tconv_model *model;
    tc_load_options options;
    tc_onnx_tensor_options tensor_options;
    size_t n_nodes;
    tc_error *err;
} load_ctx;

static const char *str_or_empty(const char *s) {
    return s ? s : "";
}

static char *dup_str(load_ctx *ctx, const char *s, bool *ok) {
    char *copy = tc_arena_strdup(ctx->model->arena, s);
    if (s && !copy)
        *ok = false;
    return copy;
}

static tconv_status nomem(load_ctx *ctx, const char *what) {
    return tc_error_nomem(ctx->err, what);
}

/* Whether errors at subgraph depth `depth` get their location prefixed (see CONTEXT_LEVELS). */
static bool shows_context(int depth) {
    return depth < CONTEXT_LEVELS;
}

static tconv_status prefix_node(tc_error *err, tconv_status st, size_t index,
                                const Onnx__NodeProto *np, int depth) {
    if (!shows_context(depth))
        return st;
    if (np->name && *np->name)
        return tc_error_prefix(err, st, "node '%s' (#%zu, %s): ", np->name, index,
                               str_or_empty(np->op_type));
    return tc_error_prefix(err, st, "node #%zu (%s): ", index, str_or_empty(np->op_type));
}

/* ---------------------------------------------------------------- types */

static tconv_status parse_dims(load_ctx *ctx, const Onnx__TensorShapeProto *shape, tc_type *type) {
    if (shape->n_dim > INT_MAX)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "shape has too many dims (%zu)",
                            shape->n_dim);
    type->rank = (int)shape->n_dim;
    type->dims = tc_arena_calloc(ctx->model->arena, shape->n_dim + 1, sizeof(tc_dim));
    if (!type->dims)
        return nomem(ctx, "a shape");
    for (size_t i = 0; i < shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
        tc_dim *out = &type->dims[i];
        out->origin = d;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
            d->dim_value >= 0) {
            out->kind = TCONV_DIM_STATIC;
            out->value = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            out->kind = TCONV_DIM_SYMBOLIC;
            out->param = tc_arena_strdup(ctx->model->arena, d->dim_param);
            if (d->dim_param && !out->param)
                return nomem(ctx, "a dim name");
        }
        /* Some exporters write dim_value -1 for "unknown": that is what it becomes. */
    }
    return TCONV_OK;
}

static tconv_status parse_type(load_ctx *ctx, const Onnx__TypeProto *tp, tc_type *type) {
    memset(type, 0, sizeof *type);
    type->rank = -1;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
        type->kind = TCONV_TYPE_OTHER; /* sequence, map, optional, sparse: kept in origin */
        return TCONV_OK;
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int32_t elem = tt->has_elem_type ? tt->elem_type : 0;
    if (elem != TCONV_DTYPE_UNDEFINED && !tc_dtype_is_known(elem))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "elem_type %d is not a known ONNX type",
                            (int)elem);
    type->kind = TCONV_TYPE_TENSOR;
    type->dtype = (tconv_dtype)elem;
    return tt->shape ? parse_dims(ctx, tt->shape, type) : TCONV_OK;
}

/* The first ValueInfoProto seen for a value gives its type; later ones are still validated. */
static tconv_status load_type(load_ctx *ctx, tconv_value *value, const Onnx__TypeProto *tp) {
    if (!tp)
        return TCONV_OK;
    tc_type type;
    tconv_status st = parse_type(ctx, tp, &type);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "type: ");
    if (value->type.kind == TCONV_TYPE_NONE || !value->type_origin) {
        value->type = type;
        value->type_origin = tp;
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- graph inputs and outputs */

typedef enum vi_kind { VI_INPUT, VI_OUTPUT, VI_VALUE_INFO } vi_kind;

static const char *const VI_NAMES[] = {"input", "output", "value_info"};

static tconv_status add_value_info(load_ctx *ctx, tconv_graph *graph, vi_kind kind,
                                   tconv_value *value, const void *origin) {
    switch (kind) {
    case VI_INPUT:
        if (value->is_graph_input)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "input '%s' is listed twice",
                                value->name);
        return tc_graph_add_input(graph, value, origin, ctx->err);
    case VI_OUTPUT:
        return tc_graph_add_output(graph, value, origin, ctx->err);
    case VI_VALUE_INFO:
        return tc_graph_add_value_info(graph, value, origin, ctx->err);
    }
    return TCONV_OK;
}

/* Inputs live in the graph's own scope; outputs and value_info may name outer values. */
static tconv_status lookup_value(tconv_graph *graph, vi_kind kind, const char *name,
                                 tconv_value **out, tc_error *err) {
    if (kind != VI_INPUT && (*out = tc_graph_find_value(graph, name)) != NULL)
        return TCONV_OK;
    return tc_graph_get_or_add_value(graph, name, out, err);
}

static tconv_status load_value_name(load_ctx *ctx, tconv_graph *graph, vi_kind kind, size_t index,
                                    const char *name, const void *origin, tconv_value **out) {
    if (!name || !*name)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s #%zu has no name", VI_NAMES[kind],
                            index);
    tconv_status st = lookup_value(graph, kind, name, out, ctx->err);
    return st != TCONV_OK ? st : add_value_info(ctx, graph, kind, *out, origin);
}

static tconv_status load_value_infos(load_ctx *ctx, tconv_graph *graph, vi_kind kind,
                                     Onnx__ValueInfoProto **list, size_t n) {
    for (size_t i = 0; i < n; i++) {
        tconv_value *value;
        tconv_status st = load_value_name(ctx, graph, kind, i, list[i]->name, list[i], &value);
        if (st == TCONV_OK)
            st = load_type(ctx, value, list[i]->type);
        if (st != TCONV_OK)
            return list[i]->name
                       ? tc_error_prefix(ctx->err, st, "%s '%s': ", VI_NAMES[kind], list[i]->name)
                       : st;
    }
    return TCONV_OK;
}

/* Function parameters: bare names, no ValueInfoProto. */
static tconv_status load_value_names(load_ctx *ctx, tconv_graph *graph, vi_kind kind, char **names,
                                     size_t n) {
    for (size_t i = 0; i < n; i++) {
        tconv_value *value;
        tconv_status st = load_value_name(ctx, graph, kind, i, names[i], NULL, &value);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- initializers */

static tconv_status load_initializer(load_ctx *ctx, tconv_graph *graph, size_t index,
                                     const Onnx__TensorProto *tp) {
    if (!tp->name || !*tp->name)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "initializer #%zu has no name", index);
    tconv_value *existing = tc_name_map_get(&graph->values, tp->name);
    if (existing && existing->initializer)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "initializer '%s' is defined twice",
                            tp->name);
    tconv_tensor *tensor;
    tconv_status st =
        tc_onnx_tensor_from_proto(ctx->model, tp, &ctx->tensor_options, &tensor, ctx->err);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "initializer #%zu: ", index);
    return tc_graph_add_initializer(graph, tensor, ctx->err);
}

/* The IR does not model sparse initializers (the saver keeps them from the origin), but nodes
 * may use them: their values are bound to a data-less placeholder tensor that is in no
 * initializer list, so the value counts as defined and reading its data fails cleanly. */
static tconv_status load_sparse_initializer(load_ctx *ctx, tconv_graph *graph, size_t index,
                                            const Onnx__SparseTensorProto *sp) {
    const char *name = sp->values ? sp->values->name : NULL;
    if (!name || !*name)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "sparse_initializer #%zu has no values.name", index);
    tconv_value *value;
    tconv_status st = tc_graph_get_or_add_value(graph, name, &value, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (value->initializer)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "initializer '%s' is defined twice", name);
    tconv_tensor *t = tc_arena_alloc(ctx->model->arena, sizeof *t);
    int64_t *dims = tc_arena_calloc(ctx->model->arena, sp->n_dims + 1, sizeof(int64_t));
    if (!t || !dims)
        return nomem(ctx, "a sparse initializer");
    if (sp->n_dims > TC_MAX_RANK)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT,
                            "sparse_initializer '%s': rank %zu is over the limit", name,
                            sp->n_dims);
    for (size_t i = 0; i < sp->n_dims; i++) {
        if (sp->dims[i] < 0)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "sparse_initializer '%s': dims[%zu] is negative", name, i);
        dims[i] = sp->dims[i];
    }
    t->model = ctx->model;
    t->name = value->name;
    t->dtype =
        sp->values->has_data_type ? (tconv_dtype)sp->values->data_type : TCONV_DTYPE_UNDEFINED;
    t->rank = (int)sp->n_dims;
    t->dims = dims;
    t->value = value;
    value->initializer = t;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- attributes */

static tconv_status load_graph(load_ctx *ctx, tconv_graph *graph, const Onnx__GraphProto *gp,
                               int depth);

/* Which value field of an AttributeProto is set, as the type it implies. */
static int attr_set_fields(const Onnx__AttributeProto *a, tconv_attr_type *which) {
    const struct {
        bool set;
        tconv_attr_type type;
    } fields[] = {
        {a->has_f, TCONV_ATTR_FLOAT},
        {a->has_i, TCONV_ATTR_INT},
        {a->has_s, TCONV_ATTR_STRING},
        {a->t != NULL, TCONV_ATTR_TENSOR},
        {a->g != NULL, TCONV_ATTR_GRAPH},
        {a->sparse_tensor != NULL, TCONV_ATTR_SPARSE_TENSOR},
        {a->tp != NULL, TCONV_ATTR_TYPE_PROTO},
        {a->n_floats > 0, TCONV_ATTR_FLOATS},
        {a->n_ints > 0, TCONV_ATTR_INTS},
        {a->n_strings > 0, TCONV_ATTR_STRINGS},
        {a->n_tensors > 0, TCONV_ATTR_TENSORS},
        {a->n_graphs > 0, TCONV_ATTR_GRAPHS},
        {a->n_sparse_tensors > 0, TCONV_ATTR_SPARSE_TENSORS},
        {a->n_type_protos > 0, TCONV_ATTR_TYPE_PROTOS},
    };
    int count = 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (fields[i].set) {
            if (count++ == 0)
                *which = fields[i].type;
        }
    }
    return count;
}

static tconv_status check_attr_type(load_ctx *ctx, const Onnx__AttributeProto *a,
                                    tconv_attr_type *type) {
    tconv_attr_type set = TCONV_ATTR_UNDEFINED;
    int n_set = attr_set_fields(a, &set);
    bool is_ref = a->ref_attr_name && *a->ref_attr_name;
    if (a->has_type && ((int)a->type < TCONV_ATTR_FLOAT || (int)a->type > TCONV_ATTR_TYPE_PROTOS))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "type %d is not a known type",
                            (int)a->type);
    if (n_set > 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "more than one value field is set (%s and others)",
                            tconv_attr_type_name(set));
    if (a->has_type && n_set == 1 && (int)set != (int)a->type)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "expected %s, got %s",
                            tconv_attr_type_name(a->type), tconv_attr_type_name(set));
    if (is_ref && n_set)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "refers to '%s' and also holds a value",
                            a->ref_attr_name);
    /* Files from before the type field was required name it only through the value. */
    *type = a->has_type ? (tconv_attr_type)a->type : set;
    return TCONV_OK;
}

static tconv_status load_attr_tensor(load_ctx *ctx, const Onnx__TensorProto *tp,
                                     tconv_tensor **out) {
    return tc_onnx_tensor_from_proto(ctx->model, tp, &ctx->tensor_options, out, ctx->err);
}

static tconv_status load_subgraph(load_ctx *ctx, tconv_node *node, const Onnx__GraphProto *gp,
                                  int depth, tconv_graph **out) {
    if (depth > ctx->options.max_graph_depth) {
        char where[256] = "", node_where[240];
        if (!shows_context(depth - 1)) /* else the prefixes already say where */
            snprintf(where, sizeof where,
                     "%s: ", tc_node_describe(node, node_where, sizeof node_where));
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT,
                            "%ssubgraph '%s' is nested %d deep: subgraphs are nested deeper "
                            "than the limit of %d",
                            where, str_or_empty(gp->name), depth, ctx->options.max_graph_depth);
    }
    tconv_status st = tc_graph_create(ctx->model, node->graph, out, ctx->err);
    if (st != TCONV_OK)
        return st;
    (*out)->owner = node;
    return load_graph(ctx, *out, gp, depth);
}

/* Attribute strings are `bytes` on the wire, but every operator reads them as text (auto_pad,
 * mode, ...): a NUL would make "SAME_UPPER\0x" read as SAME_UPPER. */
static tconv_status check_attr_text(load_ctx *ctx, const ProtobufCBinaryData *s, const char *field,
                                    size_t index) {
    if (!s->len || !memchr(s->data, 0, s->len))
        return TCONV_OK;
    char shown[64];
    tc_escape_text(shown, sizeof shown, (const char *)s->data, s->len);
    if (strcmp(field, "s") == 0)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "s holds a NUL byte ('%s'): attribute strings cannot contain NUL",
                            shown);
    return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                        "%s[%zu] holds a NUL byte ('%s'): attribute strings cannot contain NUL",
                        field, index, shown);
}

static tconv_status load_attr_lists(load_ctx *ctx, tconv_node *node, const Onnx__AttributeProto *a,
                                    tc_attr *attr, int depth) {
    tc_arena *arena = ctx->model->arena;
    switch (attr->type) {
    case TCONV_ATTR_FLOATS:
        attr->n = a->n_floats;
        attr->floats = tc_arena_memdup(arena, a->floats, a->n_floats * sizeof(float));
        return attr->floats ? TCONV_OK : nomem(ctx, "an attribute");
    case TCONV_ATTR_INTS:
        attr->n = a->n_ints;
        attr->ints = tc_arena_memdup(arena, a->ints, a->n_ints * sizeof(int64_t));
        return attr->ints ? TCONV_OK : nomem(ctx, "an attribute");
    case TCONV_ATTR_STRINGS:
        attr->n = a->n_strings;
        attr->strings = tc_arena_calloc(arena, a->n_strings + 1, sizeof(tc_bytes));
        if (!attr->strings)
            return nomem(ctx, "an attribute");
        for (size_t k = 0; k < a->n_strings; k++) {
            if (check_attr_text(ctx, &a->strings[k], "strings", k) != TCONV_OK)
                return ctx->err->status;
            attr->strings[k] = (tc_bytes){a->strings[k].data, a->strings[k].len};
        }
        return TCONV_OK;
    case TCONV_ATTR_TENSORS:
        attr->n = a->n_tensors;
        attr->tensors = tc_arena_calloc(arena, a->n_tensors + 1, sizeof(tconv_tensor *));
        if (!attr->tensors)
            return nomem(ctx, "an attribute");
        for (size_t k = 0; k < a->n_tensors; k++) {
            tconv_status st = load_attr_tensor(ctx, a->tensors[k], &attr->tensors[k]);
            if (st != TCONV_OK)
                return tc_error_prefix(ctx->err, st, "tensors[%zu]: ", k);
        }
        return TCONV_OK;
    case TCONV_ATTR_GRAPHS:
        attr->n = a->n_graphs;
        attr->graphs = tc_arena_calloc(arena, a->n_graphs + 1, sizeof(tconv_graph *));
        if (!attr->graphs)
            return nomem(ctx, "an attribute");
        for (size_t k = 0; k < a->n_graphs; k++) {
            tconv_status st = load_subgraph(ctx, node, a->graphs[k], depth + 1, &attr->graphs[k]);
            if (st != TCONV_OK)
                return shows_context(depth) ? tc_error_prefix(ctx->err, st, "graphs[%zu]: ", k)
                                            : st;
        }
        return TCONV_OK;
    default:
        return TCONV_OK; /* sparse tensors and type protos stay in the origin */
    }
}

static tconv_status load_attr_value(load_ctx *ctx, tconv_node *node, const Onnx__AttributeProto *a,
                                    tc_attr *attr, int depth) {
    switch (attr->type) {
    case TCONV_ATTR_FLOAT:
        attr->f = a->f;
        return TCONV_OK;
    case TCONV_ATTR_INT:
        attr->i = a->i;
        return TCONV_OK;
    case TCONV_ATTR_STRING: {
        /* a NUL-terminated arena copy: tc_node_attr_string then hands it out as it is, so
         * reading an attribute never writes the model (sessions on one model run in parallel) */
        uint8_t *copy = tc_arena_alloc(ctx->model->arena, a->s.len + 1);
        if (!copy)
            return tc_error_nomem(ctx->err, "a string attribute");
        if (a->s.len)
            memcpy(copy, a->s.data, a->s.len);
        copy[a->s.len] = '\0';
        attr->s = (tc_bytes){copy, a->s.len};
        return check_attr_text(ctx, &a->s, "s", 0);
    }
    case TCONV_ATTR_TENSOR:
        return a->t ? load_attr_tensor(ctx, a->t, &attr->t) : TCONV_OK;
    case TCONV_ATTR_GRAPH:
        return a->g ? load_subgraph(ctx, node, a->g, depth + 1, &attr->g) : TCONV_OK;
    default:
        return load_attr_lists(ctx, node, a, attr, depth);
    }
}

static tconv_status load_attr(load_ctx *ctx, tconv_node *node, size_t index,
                              const Onnx__AttributeProto *a, int depth) {
    if (!a->name || !*a->name)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "attribute #%zu has no name", index);
    tc_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.origin = a;
    attr.name = tc_arena_strdup(ctx->model->arena, a->name);
    if (!attr.name)
        return nomem(ctx, "an attribute name");
    tconv_status st = check_attr_type(ctx, a, &attr.type);
    if (st == TCONV_OK && a->ref_attr_name && *a->ref_attr_name &&
        !(attr.ref_attr_name = tc_arena_strdup(ctx->model->arena, a->ref_attr_name)))
        st = nomem(ctx, "an attribute reference");
    if (st == TCONV_OK)
        st = load_attr_value(ctx, node, a, &attr, depth);
    if (st == TCONV_OK)
        st = tc_node_add_attr(node, &attr, ctx->err);
    if (st != TCONV_OK)
        return shows_context(depth) ? tc_error_prefix(ctx->err, st, "attribute '%s': ", a->name)
                                    : st;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- nodes */

static tconv_status duplicate_producer(load_ctx *ctx, const tconv_value *value) {
    char where[256];
    if (value->producer)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "output '%s' is already produced by %s",
                            value->name, tc_node_describe(value->producer, where, sizeof where));
    return tc_error_set(ctx->err, TCONV_ERR_INVALID, "output '%s' is already defined as %s",
                        value->name, value->is_graph_input ? "a graph input" : "an initializer");
}

static tconv_status declare_outputs(load_ctx *ctx, tconv_node *node, const Onnx__NodeProto *np) {
    for (size_t k = 0; k < np->n_output; k++) {
        tconv_value *value = NULL;
        const char *name = np->output[k];
        if (name && *name) {
            tconv_status st = tc_graph_get_or_add_value(node->graph, name, &value, ctx->err);
            if (st != TCONV_OK)
                return st;
            if (value->producer || value->is_graph_input || value->initializer)
                return duplicate_producer(ctx, value);
        }
        tconv_status st = tc_node_add_output(node, value, ctx->err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

static tconv_status declare_node(load_ctx *ctx, tconv_graph *graph, const Onnx__NodeProto *np) {
    if (ctx->options.max_nodes && ctx->n_nodes >= ctx->options.max_nodes)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "more than %zu nodes",
                            ctx->options.max_nodes);
    ctx->n_nodes++;
    if (!np->op_type || !*np->op_type)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "op_type is empty");
    tconv_node *node;
    tconv_status st = tc_node_create(graph, np->op_type, np->domain,
                                     np->name && *np->name ? np->name : NULL, &node, ctx->err);
    if (st != TCONV_OK)
        return st;
    bool ok = true;
    /* An empty name was kept out of the model's name table above but is written back as "". */
    if (np->name && !*np->name)
        node->name = dup_str(ctx, np->name, &ok);
    node->overload = dup_str(ctx, np->overload, &ok);
    node->doc_string = dup_str(ctx, np->doc_string, &ok);
    node->origin = np;
    if (!ok)
        return nomem(ctx, "a node");
    tc_graph_append_node(graph, node);
    return declare_outputs(ctx, node, np);
}

static tconv_status resolve_inputs(load_ctx *ctx, tconv_node *node, const Onnx__NodeProto *np) {
    for (size_t k = 0; k < np->n_input; k++) {
        tconv_value *value = NULL;
        const char *name = np->input[k];
        if (name && *name) {
            value = tc_graph_find_value(node->graph, name);
            /* Defined nowhere: keep the name so the verifier can report it. */
            tconv_status st =
                value ? TCONV_OK : tc_graph_get_or_add_value(node->graph, name, &value, ctx->err);
            if (st != TCONV_OK)
                return st;
        }
        tconv_status st = tc_node_add_input(node, value, ctx->err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

static int compare_attr_names(const void *a, const void *b) {
    return strcmp((*(const tc_attr *const *)a)->name, (*(const tc_attr *const *)b)->name);
}

/* Readers take the first attribute of a name, so a second one would be silently ignored (and
 * a checker reading the last would see another model). Sorted, to stay linear-logarithmic for
 * a node with a hostile number of attributes. */
static tconv_status check_unique_attrs(load_ctx *ctx, const tconv_node *node) {
    if (node->n_attrs < 2)
        return TCONV_OK;
    const tc_attr **sorted = malloc(node->n_attrs * sizeof *sorted);
    if (!sorted)
        return nomem(ctx, "attribute names");
    for (size_t i = 0; i < node->n_attrs; i++)
        sorted[i] = &node->attrs[i];
    qsort(sorted, node->n_attrs, sizeof *sorted, compare_attr_names);
    const char *twice = NULL;
    for (size_t i = 1; i < node->n_attrs && !twice; i++) {
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
            twice = sorted[i]->name;
    }
    free(sorted);
    if (twice)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "attribute '%s' is given twice", twice);
    return TCONV_OK;
}

static tconv_status complete_node(load_ctx *ctx, tconv_node *node, const Onnx__NodeProto *np,
                                  int depth) {
    tconv_status st = resolve_inputs(ctx, node, np);
    for (size_t k = 0; st == TCONV_OK && k < np->n_attribute; k++)
        st = load_attr(ctx, node, k, np->attribute[k], depth);
    return st == TCONV_OK ? check_unique_attrs(ctx, node) : st;
}

static tconv_status load_nodes(load_ctx *ctx, tconv_graph *graph, Onnx__NodeProto **nodes, size_t n,
                               int depth) {
    tconv_node *first_new = NULL;
    for (size_t i = 0; i < n; i++) {
        tconv_status st = declare_node(ctx, graph, nodes[i]);
        if (st != TCONV_OK)
            return prefix_node(ctx->err, st, i, nodes[i], depth);
        if (i == 0)
            first_new = graph->last;
    }
    tconv_node *node = first_new;
    for (size_t i = 0; i < n; i++, node = node->next) {
        tconv_status st = complete_node(ctx, node, nodes[i], depth);
        if (st != TCONV_OK)
            return prefix_node(ctx->err, st, i, nodes[i], depth);
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- graphs and functions */

static tconv_status load_graph_body(load_ctx *ctx, tconv_graph *graph, const Onnx__GraphProto *gp,
                                    int depth) {
    tconv_status st = load_value_infos(ctx, graph, VI_INPUT, gp->input, gp->n_input);
    for (size_t i = 0; st == TCONV_OK && i < gp->n_initializer; i++)
        st = load_initializer(ctx, graph, i, gp->initializer[i]);
    for (size_t i = 0; st == TCONV_OK && i < gp->n_sparse_initializer; i++)
        st = load_sparse_initializer(ctx, graph, i, gp->sparse_initializer[i]);
    if (st == TCONV_OK)
        st = load_nodes(ctx, graph, gp->node, gp->n_node, depth);
    if (st == TCONV_OK)
        st = load_value_infos(ctx, graph, VI_OUTPUT, gp->output, gp->n_output);
    if (st == TCONV_OK)
        st = load_value_infos(ctx, graph, VI_VALUE_INFO, gp->value_info, gp->n_value_info);
    return st;
}

static tconv_status load_graph(load_ctx *ctx, tconv_graph *graph, const Onnx__GraphProto *gp,
                               int depth) {
    bool ok = true;
    graph->origin = gp;
    graph->name = dup_str(ctx, gp->name, &ok);
    graph->doc_string = dup_str(ctx, gp->doc_string, &ok);
    if (!ok)
        return nomem(ctx, "a graph");
    tconv_status st = load_graph_body(ctx, graph, gp, depth);
    if (st != TCONV_OK && depth == CONTEXT_LEVELS)
        return tc_error_prefix(ctx->err, st, "graph '%s': ...: ", str_or_empty(gp->name));
    if (st != TCONV_OK && shows_context(depth))
        return tc_error_prefix(ctx->err, st, "graph '%s': ", str_or_empty(gp->name));
    return st;
}

static tconv_status load_function_body(load_ctx *ctx, tconv_graph *body,
                                       const Onnx__FunctionProto *fp) {
    tconv_status st = load_value_names(ctx, body, VI_INPUT, fp->input, fp->n_input);
    if (st == TCONV_OK)
        st = load_nodes(ctx, body, fp->node, fp->n_node, 0);
    if (st == TCONV_OK)
        st = load_value_names(ctx, body, VI_OUTPUT, fp->output, fp->n_output);
    if (st == TCONV_OK)
        st = load_value_infos(ctx, body, VI_VALUE_INFO, fp->value_info, fp->n_value_info);
    return st;
}

/* attribute_proto (defaults), attribute (parameters without one) and opset_import. */
static tconv_status load_function_signature(load_ctx *ctx, tc_function *fn,
                                            const Onnx__FunctionProto *fp) {
    tc_arena *arena = ctx->model->arena;
    fn->attrs = tc_arena_calloc(arena, fp->n_attribute_proto + 1, sizeof *fn->attrs);
    fn->attr_params = tc_arena_calloc(arena, fp->n_attribute + 1, sizeof *fn->attr_params);
    fn->opsets = tc_arena_calloc(arena, fp->n_opset_import + 1, sizeof *fn->opsets);
    if (!fn->attrs || !fn->attr_params || !fn->opsets)
        return nomem(ctx, "a function");
    bool ok = true;
    for (size_t i = 0; i < fp->n_attribute; i++)
        fn->attr_params[fn->n_attr_params++] = dup_str(ctx, fp->attribute[i], &ok);
    for (size_t i = 0; ok && i < fp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = fp->opset_import[i];
        fn->opsets[i].domain = dup_str(ctx, op->domain, &ok);
        fn->opsets[i].version = op->version;
        fn->opsets[i].origin = op;
        fn->n_opsets = i + 1;
    }
    if (!ok)
        return nomem(ctx, "a function");
    for (size_t i = 0; i < fp->n_attribute_proto; i++) {
        const Onnx__AttributeProto *a = fp->attribute_proto[i];
        tc_attr *attr = &fn->attrs[i];
        attr->origin = a;
        attr->name = dup_str(ctx, a->name, &ok);
        if (!ok || !attr->name)
            return ok ? tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                     "attribute_proto #%zu has no name", i)
                      : nomem(ctx, "a function attribute");
        tconv_status st = check_attr_type(ctx, a, &attr->type);
        if (st == TCONV_OK && (attr->type == TCONV_ATTR_GRAPH || attr->type == TCONV_ATTR_GRAPHS))
            st = tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "a graph default is not supported");
        if (st == TCONV_OK)
            st = load_attr_value(ctx, NULL, a, attr, 0);
        if (st != TCONV_OK)
            return tc_error_prefix(ctx->err, st, "attribute_proto '%s': ", attr->name);
        fn->n_attrs = i + 1;
    }
    return TCONV_OK;
}

static tconv_status load_function(load_ctx *ctx, const Onnx__FunctionProto *fp, tc_function **out) {
    bool ok = true;
    tc_function *fn = tc_arena_alloc(ctx->model->arena, sizeof *fn);
    if (!fn)
        return nomem(ctx, "a function");
    fn->origin = fp;
    fn->name = dup_str(ctx, fp->name, &ok);
    fn->domain = dup_str(ctx, fp->domain, &ok);
    fn->overload = dup_str(ctx, fp->overload, &ok);
    fn->doc_string = dup_str(ctx, fp->doc_string, &ok);
    if (!ok)
        return nomem(ctx, "a function");
    tconv_status st = tc_graph_create(ctx->model, NULL, &fn->body, ctx->err);
    if (st != TCONV_OK)
        return st;
    fn->body->function = fn;
    fn->body->name = fn->name;
    *out = fn;
    st = load_function_signature(ctx, fn, fp);
    if (st == TCONV_OK)
        st = load_function_body(ctx, fn->body, fp);
    if (st == TCONV_OK)
        tc_function_resolve_ops(fn);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "function '%s': ", str_or_empty(fp->name));
    return TCONV_OK;
}

/* ---------------------------------------------------------------- the model */

static tconv_status load_opsets(load_ctx *ctx, const Onnx__ModelProto *m) {
    tconv_model *model = ctx->model;
    model->opsets = tc_arena_calloc(model->arena, m->n_opset_import + 1, sizeof(tc_opset));
    if (!model->opsets)
        return nomem(ctx, "opset imports");
    model->cap_opsets = m->n_opset_import + 1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = m->opset_import[i];
        bool ok = true;
        model->opsets[i].domain = dup_str(ctx, op->domain, &ok);
        model->opsets[i].version = op->version;
        model->opsets[i].origin = op;
        if (!ok)
            return nomem(ctx, "an opset import");
        if (op->has_version && op->version < 1)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "opset_import '%s': version %" PRId64 " is not positive",
                                str_or_empty(op->domain), op->version);
    }
    model->n_opsets = m->n_opset_import;
    return TCONV_OK;
}

static tconv_status load_metadata(load_ctx *ctx, const Onnx__ModelProto *m) {
    tconv_model *model = ctx->model;
    model->metadata =
        tc_arena_calloc(model->arena, m->n_metadata_props + 1, sizeof(tc_string_pair));
    if (!model->metadata)
        return nomem(ctx, "metadata");
    bool ok = true;
    for (size_t i = 0; i < m->n_metadata_props; i++) {
        model->metadata[i].key = dup_str(ctx, m->metadata_props[i]->key, &ok);
        model->metadata[i].value = dup_str(ctx, m->metadata_props[i]->value, &ok);
        model->metadata[i].origin = m->metadata_props[i];
    }
    model->n_metadata = m->n_metadata_props;
    return ok ? TCONV_OK : nomem(ctx, "metadata");
}

static tconv_status load_functions(load_ctx *ctx, const Onnx__ModelProto *m) {
    tconv_model *model = ctx->model;
    model->functions = tc_arena_calloc(model->arena, m->n_functions + 1, sizeof(tc_function *));
    if (!model->functions)
        return nomem(ctx, "functions");
    for (size_t i = 0; i < m->n_functions; i++) {
        tconv_status st = load_function(ctx, m->functions[i], &model->functions[i]);
        if (st != TCONV_OK)
            return st;
        model->n_functions = i + 1;
    }
    return TCONV_OK;
}

static tconv_status load_model_fields(load_ctx *ctx, const Onnx__ModelProto *m) {
    tconv_model *model = ctx->model;
    bool ok = true;
    model->has_ir_version = m->has_ir_version;
    model->ir_version = m->ir_version;
    model->producer_name = dup_str(ctx, m->producer_name, &ok);
    model->producer_version = dup_str(ctx, m->producer_version, &ok);
    model->domain = dup_str(ctx, m->domain, &ok);
    model->has_model_version = m->has_model_version;
    model->model_version = m->model_version;
    model->doc_string = dup_str(ctx, m->doc_string, &ok);
    if (!ok)
        return nomem(ctx, "model fields");
    tconv_status st = load_opsets(ctx, m);
    if (st == TCONV_OK)
        st = load_metadata(ctx, m);
    if (st != TCONV_OK)
        return st;
    if (!m->graph)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "the model has no graph");
    st = load_graph(ctx, model->graph, m->graph, 0);
    return st == TCONV_OK ? load_functions(ctx, m) : st;
}

/* ---------------------------------------------------------------- order and checks */

static tconv_status sort_all(tconv_model *model, bool sort, tc_load_info *info, tc_error *err) {
    if (!sort)
        return TCONV_OK;
    size_t reordered = 0;
    tconv_status st = tc_graph_sort_count(model->graph, &reordered, err);
    for (size_t i = 0; st == TCONV_OK && i < model->n_functions; i++) {
        st = tc_graph_sort_count(model->functions[i]->body, &reordered, err);
        if (st != TCONV_OK)
            tc_error_prefix(err, st, "function '%s': ", str_or_empty(model->functions[i]->name));
    }
    if (info)
        info->n_graphs_reordered = reordered;
    return st;
}

static int wire_depth_limit(const tc_load_options *options) {
    int depth = options->max_graph_depth > 0 ? options->max_graph_depth : 0;
    if (depth > (INT_MAX - WIRE_EXTRA_LEVELS) / WIRE_LEVELS_PER_GRAPH - 1)
        depth = (INT_MAX - WIRE_EXTRA_LEVELS) / WIRE_LEVELS_PER_GRAPH - 1;
    return (depth + 1) * WIRE_LEVELS_PER_GRAPH + WIRE_EXTRA_LEVELS;
}

static tconv_status unpack_model(tc_onnx_loaded *loaded, const tc_load_options *options,
                                 Onnx__ModelProto **out, tc_error *err) {
    *out = NULL;
    size_t size;
    const uint8_t *data = tc_onnx_loaded_bytes(loaded, &size);
    if (size == 0)
        return tc_error_set(err, TCONV_ERR_PARSE, "the file is empty, not an ONNX model");
    /* The file-size limit also bounds what decoding allocates beyond the file's bytes. */
    tconv_status st =
        tc_onnx_check_wire_bounded(data, size, &onnx__model_proto__descriptor,
                                   wire_depth_limit(options), options->max_file_bytes, err);
    if (st != TCONV_OK)
        return st;
    return tc_onnx_loaded_unpack(loaded, out, err); /* borrows large raw_data in place */
}

/* The model takes `loaded` (the message and the bytes it borrows from), also on failure. */
static tconv_status new_model(tc_onnx_loaded *loaded, Onnx__ModelProto *message, const char *path,
                              const char *dir, size_t max_memory_bytes, tconv_model **out,
                              tc_error *err) {
    tconv_status st = tc_model_create(out, err);
    if (st != TCONV_OK) {
        tc_onnx_loaded_free(loaded);
        return st;
    }
    tconv_model *model = *out;
    model->origin = message;
    model->release = tc_onnx_loaded_free;
    model->release_owner = loaded;
    model->path = tc_arena_strdup(model->arena, path);
    model->dir = tc_arena_strdup(model->arena, dir ? dir : ".");
    model->max_decoded_bytes = max_memory_bytes;
    if ((path && !model->path) || !model->dir)
        return tc_error_nomem(err, "the model path");
    return TCONV_OK;
}

static tconv_status build_model(load_ctx *ctx, const Onnx__ModelProto *message,
                                tc_load_info *info) {
    tconv_status st = load_model_fields(ctx, message);
    if (st == TCONV_OK)
        st = sort_all(ctx->model, ctx->options.sort_nodes, info, ctx->err);
    if (st == TCONV_OK)
        st = tc_model_verify(ctx->model, ctx->err);
    if (st == TCONV_OK && info)
        info->n_nodes = ctx->n_nodes;
    return st;
}

/* The model owns `loaded`: the message and the mapped or copied bytes its large raw_data
 * fields point into (model_map.h). */
static tconv_status load_bytes(tc_onnx_loaded *loaded, const char *label, const char *path,
                               const char *dir, const tc_load_options *options, tconv_model **out,
                               tc_load_info *info, tc_error *err) {
    load_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    if (options)
        ctx.options = *options;
    else
        tc_load_options_init(&ctx.options);
    ctx.err = err;
    /* Deeper nesting would overflow the stack in protobuf-c's unpacker (limits.h). */
    if (ctx.options.max_graph_depth > TCONV_GRAPH_DEPTH_MAX)
        ctx.options.max_graph_depth = TCONV_GRAPH_DEPTH_MAX;
    ctx.tensor_options.max_tensor_bytes = ctx.options.max_tensor_bytes;
    ctx.tensor_options.allow_external = dir != NULL;
    ctx.tensor_options.no_external_reason =
        "needs a folder to be relative to, and the model was loaded from memory without one";
    Onnx__ModelProto *message;
    tconv_status st = unpack_model(loaded, &ctx.options, &message, err);
    if (st != TCONV_OK)
        tc_onnx_loaded_free(loaded);
    if (st == TCONV_OK)
        st = new_model(loaded, message, path, dir, ctx.options.max_memory_bytes, &ctx.model, err);
    if (st == TCONV_OK)
        st = build_model(&ctx, message, info);
    if (st != TCONV_OK) {
        tconv_model_free(ctx.model);
        return tc_error_prefix(err, st, "%s: ", label);
    }
    *out = ctx.model;
    return TCONV_OK;
}

tconv_status tc_model_load_buffer(const void *data, size_t size, const char *dir,
                                  const tc_load_options *options, tconv_model **out,
                                  tc_load_info *info, tc_error *err) {
    *out = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    if (!data && size)
        return tc_error_set(err, TCONV_ERR_USAGE, "model buffer is NULL");
    tc_onnx_loaded *loaded;
    tconv_status st = tc_onnx_loaded_copy(data, size, &loaded, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "<memory>: ");
    return load_bytes(loaded, "<memory>", NULL, dir, options, out, info, err);
}

tconv_status tc_model_load_file(const char *path, const tc_load_options *options, tconv_model **out,
                                tc_load_info *info, tc_error *err) {
    *out = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    tc_load_options defaults;
    if (!options) {
        tc_load_options_init(&defaults);
        options = &defaults;
    }
    tc_onnx_loaded *loaded;
    tconv_status st = tc_onnx_loaded_map_file(path, options->max_file_bytes, &loaded, err);
    if (st != TCONV_OK)
        return st;
    char *dir = tc_path_dirname(path);
    if (!dir) {
        tc_onnx_loaded_free(loaded);
        return tc_error_nomem(err, "a folder name");
    }
    st = load_bytes(loaded, path, path, dir, options, out, info, err);
    free(dir);
    return st;
}
