/* Model, graph, node and value bookkeeping: the invariants of ir.h (SSA producers, use lists,
 * unique names) are kept here and only here. */
#include "ir/ir.h"
#include "ir/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- model */

tconv_status tc_model_create(tconv_model **out, tc_error *err) {
    *out = NULL;
    tc_arena *arena = tc_arena_create();
    tconv_model *model = arena ? tc_arena_alloc(arena, sizeof *model) : NULL;
    if (!model) {
        tc_arena_destroy(arena);
        return tc_error_nomem(err, "a model");
    }
    model->arena = arena;
    model->dir = ".";
    tc_name_map_init(&model->names);
    tc_name_map_init(&model->name_suffixes);
    tconv_status st = tc_graph_create(model, NULL, &model->graph, err);
    if (st != TCONV_OK) {
        tconv_model_free(model);
        return st;
    }
    *out = model;
    return TCONV_OK;
}

void tconv_model_free(tconv_model *model) {
    if (!model)
        return;
    for (size_t i = 0; i < model->n_all_graphs; i++)
        tc_name_map_free(&model->all_graphs[i]->values);
    tc_name_map_free(&model->names);
    tc_name_map_free(&model->name_suffixes);
    if (model->release)
        model->release(model->release_owner);
    tc_arena_destroy(model->arena);
}

static bool is_default_domain(const char *domain) {
    return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

int64_t tc_model_opset(const tconv_model *model, const char *domain) {
    bool want_default = is_default_domain(domain);
    for (size_t i = 0; i < model->n_opsets; i++) {
        const char *d = model->opsets[i].domain;
        if (want_default ? is_default_domain(d) : (d && strcmp(d, domain) == 0))
            return model->opsets[i].version;
    }
    return 0;
}

int64_t tc_graph_opset(const tconv_graph *graph, const char *domain) {
    bool want_default = is_default_domain(domain);
    for (const tconv_graph *g = graph; g; g = g->parent) {
        const tc_function *fn = g->function;
        for (size_t i = 0; fn && i < fn->n_opsets; i++) {
            const char *d = fn->opsets[i].domain;
            if (want_default ? is_default_domain(d) : (d && strcmp(d, domain) == 0))
                return fn->opsets[i].version;
        }
    }
    return tc_model_opset(graph->model, domain);
}

static void resolve_graph_ops(tconv_graph *graph) {
    for (tconv_node *n = graph->first; n; n = n->next) {
        n->op = tc_op_find(n->domain, n->op_type, tc_graph_opset(graph, n->domain));
        for (size_t i = 0; i < n->n_attrs; i++) {
            const tc_attr *a = &n->attrs[i];
            if (a->type == TCONV_ATTR_GRAPH && a->g)
                resolve_graph_ops(a->g);
            for (size_t k = 0; a->type == TCONV_ATTR_GRAPHS && k < a->n; k++)
                resolve_graph_ops(a->graphs[k]);
        }
    }
}

void tc_function_resolve_ops(tc_function *fn) {
    resolve_graph_ops(fn->body);
}

/* A changed opset changes which table entry each node is: resolve them all again. */
static void resolve_ops(tconv_model *model) {
    for (size_t i = 0; i < model->n_all_graphs; i++) {
        for (tconv_node *n = model->all_graphs[i]->first; n; n = n->next)
            n->op =
                tc_op_find(n->domain, n->op_type, tc_graph_opset(model->all_graphs[i], n->domain));
    }
}

tconv_status tc_model_set_opset(tconv_model *model, const char *domain, int64_t version,
                                tc_error *err) {
    bool want_default = is_default_domain(domain);
    for (size_t i = 0; i < model->n_opsets; i++) {
        const char *d = model->opsets[i].domain;
        if (want_default ? is_default_domain(d) : (d && strcmp(d, domain) == 0)) {
            model->opsets[i].version = version;
            resolve_ops(model);
            return TCONV_OK;
        }
    }
    if (!tc_arena_grow_array(model->arena, (void **)&model->opsets, &model->cap_opsets,
                             sizeof(tc_opset), model->n_opsets + 1))
        return tc_error_nomem(err, "an opset import");
    tc_opset *op = &model->opsets[model->n_opsets++];
    op->domain = tc_arena_strdup(model->arena, domain ? domain : "");
    op->version = version;
    op->origin = NULL;
    if (!op->domain)
        return tc_error_nomem(err, "an opset domain");
    resolve_ops(model);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- graphs and values */

void tc_model_set_ir_version(tconv_model *model, int64_t version) {
    model->has_ir_version = true;
    model->ir_version = version;
}

tconv_status tc_graph_create(tconv_model *model, tconv_graph *parent, tconv_graph **out,
                             tc_error *err) {
    tconv_graph *graph = tc_arena_alloc(model->arena, sizeof *graph);
    if (!graph ||
        !tc_arena_grow_array(model->arena, (void **)&model->all_graphs, &model->cap_all_graphs,
                             sizeof(tconv_graph *), model->n_all_graphs + 1))
        return tc_error_nomem(err, "a graph");
    graph->model = model;
    graph->parent = parent;
    tc_name_map_init(&graph->values);
    model->all_graphs[model->n_all_graphs++] = graph;
    *out = graph;
    return TCONV_OK;
}

tconv_value *tc_graph_find_value(const tconv_graph *graph, const char *name) {
    for (const tconv_graph *g = graph; g; g = g->parent) {
        tconv_value *v = tc_name_map_get(&g->values, name);
        if (v)
            return v;
    }
    return NULL;
}

static tconv_status graph_new_value(tconv_graph *graph, const char *name, tconv_value **out,
                                    tc_error *err) {
    tconv_model *model = graph->model;
    tconv_value *v = tc_arena_alloc(model->arena, sizeof *v);
    const char *owned = v ? tc_arena_strdup(model->arena, name) : NULL;
    if (!owned || !tc_name_map_put(&graph->values, owned, v) ||
        !tc_name_map_put(&model->names, owned, v))
        return tc_error_nomem(err, "a value");
    v->name = owned;
    v->graph = graph;
    v->type.rank = -1;
    *out = v;
    return TCONV_OK;
}

tconv_status tc_graph_get_or_add_value(tconv_graph *graph, const char *name, tconv_value **out,
                                       tc_error *err) {
    tconv_value *v = tc_name_map_get(&graph->values, name);
    if (v) {
        *out = v;
        return TCONV_OK;
    }
    return graph_new_value(graph, name, out, err);
}

/* base if unused, else base_1, base_2, ...: readable names that never collide. The next
 * suffix to try is remembered per base, so naming many values after one base stays linear. */
static char *unique_name(tconv_model *model, const char *base) {
    if (!tc_name_map_contains(&model->names, base))
        return tc_arena_strdup(model->arena, base);
    uintptr_t k = (uintptr_t)tc_name_map_get(&model->name_suffixes, base);
    size_t len = strlen(base) + 24;
    char *buf = malloc(len);
    if (!buf)
        return NULL;
    char *result = NULL;
    for (k = k ? k : 1;; k++) {
        snprintf(buf, len, "%s_%lu", base, (unsigned long)k);
        if (!tc_name_map_contains(&model->names, buf)) {
            result = tc_arena_strdup(model->arena, buf);
            break;
        }
    }
    free(buf);
    const char *key = tc_name_map_contains(&model->name_suffixes, base)
                          ? base
                          : tc_arena_strdup(model->arena, base);
    if (!result || !key || !tc_name_map_put(&model->name_suffixes, key, (void *)(k + 1)))
        return NULL;
    return result;
}

tconv_status tc_graph_add_unique_value(tconv_graph *graph, const char *base, tconv_value **out,
                                       tc_error *err) {
    char *name = unique_name(graph->model, base);
    if (!name)
        return tc_error_nomem(err, "a value name");
    return graph_new_value(graph, name, out, err);
}

const char *tc_model_unique_node_name(tconv_model *model, const char *base) {
    char *name = unique_name(model, base);
    if (name && !tc_name_map_put(&model->names, name, NULL))
        return NULL;
    return name;
}

static tconv_status append_value_info(tconv_graph *graph, tc_value_info **array, size_t *n,
                                      size_t *cap, tconv_value *value, const void *origin,
                                      tc_error *err) {
    if (!tc_arena_grow_array(graph->model->arena, (void **)array, cap, sizeof(tc_value_info),
                             *n + 1))
        return tc_error_nomem(err, "a graph value list");
    (*array)[*n].value = value;
    (*array)[*n].origin = origin;
    (*n)++;
    return TCONV_OK;
}

tconv_status tc_graph_add_input(tconv_graph *graph, tconv_value *value, const void *origin,
                                tc_error *err) {
    value->is_graph_input = true;
    return append_value_info(graph, &graph->inputs, &graph->n_inputs, &graph->cap_inputs, value,
                             origin, err);
}

tconv_status tc_graph_add_output(tconv_graph *graph, tconv_value *value, const void *origin,
                                 tc_error *err) {
    return append_value_info(graph, &graph->outputs, &graph->n_outputs, &graph->cap_outputs, value,
                             origin, err);
}

tconv_status tc_graph_add_value_info(tconv_graph *graph, tconv_value *value, const void *origin,
                                     tc_error *err) {
    return append_value_info(graph, &graph->value_info, &graph->n_value_info,
                             &graph->cap_value_info, value, origin, err);
}

tconv_status tc_graph_add_initializer(tconv_graph *graph, tconv_tensor *tensor, tc_error *err) {
    if (!tensor->name)
        return tc_error_set(err, TCONV_ERR_INVALID, "initializer #%zu has no name",
                            graph->n_initializers);
    tconv_value *value;
    tconv_status st = tc_graph_get_or_add_value(graph, tensor->name, &value, err);
    if (st != TCONV_OK)
        return st;
    if (!tc_arena_grow_array(graph->model->arena, (void **)&graph->initializers,
                             &graph->cap_initializers, sizeof(tconv_tensor *),
                             graph->n_initializers + 1))
        return tc_error_nomem(err, "the initializer list");
    graph->initializers[graph->n_initializers++] = tensor;
    value->initializer = tensor;
    tensor->value = value;
    if (value->type.kind == TCONV_TYPE_NONE) {
        value->type.kind = TCONV_TYPE_TENSOR;
        value->type.dtype = tensor->dtype;
        value->type.rank = tensor->rank;
        value->type.dims =
            tc_arena_calloc(graph->model->arena, (size_t)tensor->rank + 1, sizeof(tc_dim));
        if (!value->type.dims)
            return tc_error_nomem(err, "an initializer type");
        for (int i = 0; i < tensor->rank; i++) {
            value->type.dims[i].kind = TCONV_DIM_STATIC;
            value->type.dims[i].value = tensor->dims[i];
        }
    }
    return TCONV_OK;
}

size_t tc_graph_retain_initializers(tconv_graph *graph,
                                    bool (*keep)(const tconv_tensor *tensor, void *ctx),
                                    void *ctx) {
    size_t k = 0;
    for (size_t i = 0; i < graph->n_initializers; i++) {
        tconv_tensor *tensor = graph->initializers[i];
        if (keep(tensor, ctx)) {
            graph->initializers[k++] = tensor;
            continue;
        }
        if (tensor->value && tensor->value->initializer == tensor)
            tensor->value->initializer = NULL;
        tensor->value = NULL;
    }
    size_t removed = graph->n_initializers - k;
    graph->n_initializers = k;
    return removed;
}

size_t tc_graph_retain_value_info(tconv_graph *graph,
                                  bool (*keep)(const tconv_value *value, void *ctx), void *ctx) {
    size_t k = 0;
    for (size_t i = 0; i < graph->n_value_info; i++) {
        if (keep(graph->value_info[i].value, ctx))
            graph->value_info[k++] = graph->value_info[i];
    }
    size_t removed = graph->n_value_info - k;
    graph->n_value_info = k;
    return removed;
}

bool tc_graph_remove_value_info(tconv_graph *graph, const tconv_value *value) {
    tc_value_info *list = graph->value_info;
    size_t n = graph->n_value_info;
    for (size_t i = n; i-- > 0;) {
        if (list[i].value == value) {
            memmove(list + i, list + i + 1, (n - i - 1) * sizeof *list);
            graph->n_value_info = n - 1;
            return true;
        }
    }
    return false;
}

static bool value_info_contains(const tc_value_info *list, size_t n, const tconv_value *v) {
    for (size_t i = 0; i < n; i++) {
        if (list[i].value == v)
            return true;
    }
    return false;
}

bool tc_graph_has_value_info(const tconv_graph *graph, const tconv_value *value) {
    return value_info_contains(graph->value_info, graph->n_value_info, value);
}

bool tc_graph_is_output(const tconv_graph *graph, const tconv_value *value) {
    return value_info_contains(graph->outputs, graph->n_outputs, value);
}

/* ---------------------------------------------------------------- nodes */

tconv_status tc_node_create(tconv_graph *graph, const char *op_type, const char *domain,
                            const char *name, tconv_node **out, tc_error *err) {
    tc_arena *arena = graph->model->arena;
    tconv_node *node = tc_arena_alloc(arena, sizeof *node);
    if (!node)
        return tc_error_nomem(err, "a node");
    node->graph = graph;
    node->op_type = tc_arena_strdup(arena, op_type ? op_type : "");
    node->domain = tc_arena_strdup(arena, domain);
    node->name = tc_arena_strdup(arena, name);
    if (!node->op_type || (domain && !node->domain) || (name && !node->name))
        return tc_error_nomem(err, "a node");
    if (node->name && !tc_name_map_contains(&graph->model->names, node->name) &&
        !tc_name_map_put(&graph->model->names, node->name, NULL))
        return tc_error_nomem(err, "a node name");
    node->id = graph->model->next_id++;
    node->op = tc_op_find(node->domain, node->op_type, tc_graph_opset(graph, node->domain));
    /* the entry knows its kind; only an op at an opset the table lacks needs the search */
    node->kind =
        node->op != TC_OP_NONE ? tc_ops[node->op].kind : tc_kind_find(node->domain, node->op_type);
    *out = node;
    return TCONV_OK;
}

tconv_status tc_node_set_name(tconv_node *node, const char *name, tc_error *err) {
    tconv_model *model = node->graph->model;
    if (!name) {
        node->name = NULL;
        return TCONV_OK;
    }
    char *copy = tc_arena_strdup(model->arena, name);
    if (!copy ||
        (!tc_name_map_contains(&model->names, copy) && !tc_name_map_put(&model->names, copy, NULL)))
        return tc_error_nomem(err, "a node name");
    node->name = copy;
    return TCONV_OK;
}

static void link_between(tconv_graph *graph, tconv_node *prev, tconv_node *next, tconv_node *node) {
    node->graph = graph;
    node->prev = prev;
    node->next = next;
    if (prev)
        prev->next = node;
    else
        graph->first = node;
    if (next)
        next->prev = node;
    else
        graph->last = node;
    graph->n_nodes++;
}

void tc_graph_append_node(tconv_graph *graph, tconv_node *node) {
    link_between(graph, graph->last, NULL, node);
}

void tc_graph_insert_before(tconv_graph *graph, tconv_node *pos, tconv_node *node) {
    link_between(graph, pos ? pos->prev : graph->last, pos, node);
}

void tc_graph_insert_after(tconv_graph *graph, tconv_node *pos, tconv_node *node) {
    link_between(graph, pos, pos ? pos->next : graph->first, node);
}

/* Removes the use (node, index) in O(1): the node knows where its entry sits, and the entry
 * moved into the hole tells its own node its new place. */
static void value_remove_use(tconv_value *value, const tconv_node *node, size_t index) {
    size_t pos = node->use_pos[index];
    node->graph->model->use_list_steps++;
    if (TC_NEVER(pos >= value->n_uses || value->uses[pos].node != node ||
                 value->uses[pos].input_index != index))
        return; /* not a use of value: the lists are kept only here */
    tc_use moved = value->uses[--value->n_uses];
    value->uses[pos] = moved;
    moved.node->use_pos[moved.input_index] = pos;
}

static bool value_add_use(tconv_model *model, tconv_value *value, tconv_node *node, size_t index) {
    if (!tc_arena_grow_array(model->arena, (void **)&value->uses, &value->cap_uses, sizeof(tc_use),
                             value->n_uses + 1))
        return false;
    node->use_pos[index] = value->n_uses;
    value->uses[value->n_uses].node = node;
    value->uses[value->n_uses].input_index = index;
    value->n_uses++;
    return true;
}

void tc_graph_remove_node(tconv_graph *graph, tconv_node *node) {
    for (size_t i = 0; i < node->n_inputs; i++) {
        if (node->inputs[i])
            value_remove_use(node->inputs[i], node, i);
    }
    for (size_t i = 0; i < node->n_outputs; i++) {
        if (node->outputs[i] && node->outputs[i]->producer == node)
            node->outputs[i]->producer = NULL;
    }
    if (node->prev)
        node->prev->next = node->next;
    else
        graph->first = node->next;
    if (node->next)
        node->next->prev = node->prev;
    else
        graph->last = node->prev;
    node->prev = node->next = NULL;
    graph->n_nodes--;
}

tconv_status tc_node_add_input(tconv_node *node, tconv_value *value, tc_error *err) {
    tconv_model *model = node->graph->model;
    if (!tc_arena_grow_array(model->arena, (void **)&node->inputs, &node->cap_inputs,
                             sizeof(tconv_value *), node->n_inputs + 1) ||
        !tc_arena_grow_array(model->arena, (void **)&node->use_pos, &node->cap_use_pos,
                             sizeof(size_t), node->n_inputs + 1))
        return tc_error_nomem(err, "node inputs");
    size_t index = node->n_inputs++;
    node->inputs[index] = value;
    if (value && !value_add_use(model, value, node, index))
        return tc_error_nomem(err, "a value use");
    return TCONV_OK;
}

tconv_status tc_node_set_input(tconv_node *node, size_t index, tconv_value *value, tc_error *err) {
    if (index >= node->n_inputs)
        return tc_error_set(err, TCONV_ERR_USAGE, "input index %zu out of range (%zu inputs)",
                            index, node->n_inputs);
    if (node->inputs[index])
        value_remove_use(node->inputs[index], node, index);
    node->inputs[index] = value;
    if (value && !value_add_use(node->graph->model, value, node, index))
        return tc_error_nomem(err, "a value use");
    return TCONV_OK;
}

void tc_node_truncate_inputs(tconv_node *node, size_t count) {
    while (node->n_inputs > count) {
        size_t index = --node->n_inputs;
        if (node->inputs[index])
            value_remove_use(node->inputs[index], node, index);
        node->inputs[index] = NULL;
    }
}

tconv_status tc_node_add_output(tconv_node *node, tconv_value *value, tc_error *err) {
    if (!tc_arena_grow_array(node->graph->model->arena, (void **)&node->outputs, &node->cap_outputs,
                             sizeof(tconv_value *), node->n_outputs + 1))
        return tc_error_nomem(err, "node outputs");
    size_t index = node->n_outputs++;
    node->outputs[index] = value;
    if (value) {
        value->producer = node;
        value->producer_index = index;
    }
    return TCONV_OK;
}

tconv_status tc_node_set_output(tconv_node *node, size_t index, tconv_value *value, tc_error *err) {
    if (index >= node->n_outputs)
        return tc_error_set(err, TCONV_ERR_USAGE, "output index %zu out of range (%zu outputs)",
                            index, node->n_outputs);
    tconv_value *old = node->outputs[index];
    if (old && old->producer == node)
        old->producer = NULL;
    node->outputs[index] = value;
    if (value) {
        value->producer = node;
        value->producer_index = index;
    }
    return TCONV_OK;
}

tconv_status tc_value_replace_uses(tconv_value *from, tconv_value *to, tc_error *err) {
    while (from->n_uses > 0) {
        tc_use use = from->uses[from->n_uses - 1];
        tconv_status st = tc_node_set_input(use.node, use.input_index, to, err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

tconv_status tc_value_set_tensor_type(tconv_value *value, tconv_dtype dtype, int rank,
                                      const tc_dim *dims, tc_error *err) {
    tc_dim *copy = NULL;
    if (rank > 0) {
        copy = tc_arena_calloc(value->graph->model->arena, (size_t)rank, sizeof(tc_dim));
        if (!copy)
            return tc_error_nomem(err, "a value type");
        memcpy(copy, dims, (size_t)rank * sizeof(tc_dim));
    }
    value->type.kind = TCONV_TYPE_TENSOR;
    value->type.dtype = dtype;
    value->type.rank = rank;
    value->type.dims = copy;
    value->type_dirty = true;
    return TCONV_OK;
}

bool tc_value_static_shape(const tconv_value *value, int64_t *dims, int *rank) {
    const tc_type *t = &value->type;
    if (t->kind != TCONV_TYPE_TENSOR || t->rank < 0 || t->rank > TC_MAX_RANK)
        return false;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i].kind != TCONV_DIM_STATIC)
            return false;
        dims[i] = t->dims[i].value;
    }
    *rank = t->rank;
    return true;
}

size_t tc_node_index(const tconv_node *node) {
    size_t index = 0;
    for (const tconv_node *n = node->prev; n; n = n->prev)
        index++;
    return index;
}

bool tc_node_is_onnx_domain(const tconv_node *node) {
    return is_default_domain(node->domain);
}

bool tc_node_is(const tconv_node *node, tc_op_kind kind) {
    return node && node->kind == kind;
}

const char *tc_node_describe(const tconv_node *node, char *buf, size_t size) {
    return tc_node_describe_at(node, tc_node_index(node), buf, size);
}

static const char *node_label(const tconv_node *node) {
    if (node->name && *node->name)
        return node->name;
    return node->n_outputs && node->outputs[0] ? node->outputs[0]->name : node->op_type;
}

/* The attribute of `owner` that holds `graph`: its name, with "[k]" for a GRAPHS entry. */
static void holder_attr(const tconv_node *owner, const tconv_graph *graph, char *buf, size_t size) {
    snprintf(buf, size, "?");
    for (size_t i = 0; i < owner->n_attrs; i++) {
        const tc_attr *a = &owner->attrs[i];
        const char *name = a->name ? a->name : "";
        if (a->type == TCONV_ATTR_GRAPH && a->g == graph)
            snprintf(buf, size, "%s", name);
        for (size_t k = 0; a->type == TCONV_ATTR_GRAPHS && k < a->n; k++) {
            if (a->graphs[k] == graph)
                snprintf(buf, size, "%s[%zu]", name, k);
        }
    }
}

const char *tc_node_path(const tconv_node *node, char *buf, size_t size) {
    if (!size)
        return buf;
    const tconv_node *owner = node->graph ? node->graph->owner : NULL;
    buf[0] = '\0';
    if (owner && owner != node) {
        char attr[128];
        tc_node_path(owner, buf, size);
        holder_attr(owner, node->graph, attr, sizeof attr);
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "/%s/", attr);
    }
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "%s", node_label(node));
    return buf;
}

const char *tc_node_describe_at(const tconv_node *node, size_t index, char *buf, size_t size) {
    char raw[512]; /* names are escaped: the text goes to terminals and logs */
    int n = snprintf(raw, sizeof raw, "node '%s' (#%zu, %s)", node->name ? node->name : "", index,
                     node->op_type);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
    return size ? tc_escape_text(buf, size, raw, len) : buf;
}

tconv_status tc_node_for_each_subgraph(tconv_node *node,
                                       tconv_status (*fn)(tconv_graph *sub, void *ctx), void *ctx) {
    for (size_t i = 0; i < node->n_attrs; i++) {
        const tc_attr *a = &node->attrs[i];
        if (a->type == TCONV_ATTR_GRAPH && a->g) {
            tconv_status st = fn(a->g, ctx);
            if (st != TCONV_OK)
                return st;
        } else if (a->type == TCONV_ATTR_GRAPHS) {
            for (size_t k = 0; k < a->n; k++) {
                tconv_status st = a->graphs[k] ? fn(a->graphs[k], ctx) : TCONV_OK;
                if (st != TCONV_OK)
                    return st;
            }
        }
    }
    return TCONV_OK;
}
