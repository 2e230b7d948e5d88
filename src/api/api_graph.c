/* Public API: walking and editing graphs, nodes and values through the IR's own functions,
 * with the argument checks a library boundary needs (NULL handles, foreign objects, indices). */
#include "api/api_internal.h"

#include <string.h>

/* ---------------------------------------------------------------- graphs */

tconv_graph *tconv_model_graph(tconv_model *model) {
    return model ? model->graph : NULL;
}

tconv_model *tconv_graph_model(const tconv_graph *graph) {
    return graph ? graph->model : NULL;
}

const char *tconv_graph_name(const tconv_graph *graph) {
    return graph ? graph->name : NULL;
}

tconv_graph *tconv_graph_parent(const tconv_graph *graph) {
    return graph ? graph->parent : NULL;
}

tconv_node *tconv_graph_owner(const tconv_graph *graph) {
    return graph ? graph->owner : NULL;
}

size_t tconv_graph_node_count(const tconv_graph *graph) {
    return graph ? graph->n_nodes : 0;
}

tconv_node *tconv_graph_first_node(const tconv_graph *graph) {
    return graph ? graph->first : NULL;
}

tconv_node *tconv_graph_last_node(const tconv_graph *graph) {
    return graph ? graph->last : NULL;
}

size_t tconv_graph_input_count(const tconv_graph *graph) {
    return graph ? graph->n_inputs : 0;
}

tconv_value *tconv_graph_input(const tconv_graph *graph, size_t index) {
    return graph && index < graph->n_inputs ? graph->inputs[index].value : NULL;
}

size_t tconv_graph_output_count(const tconv_graph *graph) {
    return graph ? graph->n_outputs : 0;
}

tconv_value *tconv_graph_output(const tconv_graph *graph, size_t index) {
    return graph && index < graph->n_outputs ? graph->outputs[index].value : NULL;
}

size_t tconv_graph_initializer_count(const tconv_graph *graph) {
    return graph ? graph->n_initializers : 0;
}

tconv_tensor *tconv_graph_initializer(const tconv_graph *graph, size_t index) {
    return graph && index < graph->n_initializers ? graph->initializers[index] : NULL;
}

tconv_value *tconv_graph_lookup(const tconv_graph *graph, const char *name) {
    return graph && name ? tc_graph_find_value(graph, name) : NULL;
}

/* The checks every "new named thing" call shares: a graph, an out pointer, a usable name. */
static tconv_status check_new_named(tconv_graph *graph, const char *what, const char *base_name,
                                    const void *out) {
    if (!graph)
        return TCONV_ERR_USAGE;
    if (!out)
        return tc_api_usage(graph->model, "%s: out is NULL", what);
    if (!base_name || !*base_name)
        return tc_api_usage(graph->model, "%s: the name must not be NULL or empty", what);
    return TCONV_OK;
}

tconv_status tconv_graph_new_value(tconv_graph *graph, const char *base_name, tconv_value **out) {
    tconv_status st = check_new_named(graph, "tconv_graph_new_value", base_name, out);
    if (st != TCONV_OK)
        return st;
    *out = NULL;
    return tc_api_end(graph->model,
                      tc_graph_add_unique_value(graph, base_name, out, tc_api_begin(graph->model)));
}

/* Copies public dims (-1: unknown) into IR dims. */
static void dims_from_public(int rank, const int64_t *dims, tc_dim *out) {
    for (int i = 0; i < rank; i++) {
        out[i].kind = dims[i] < 0 ? TCONV_DIM_UNKNOWN : TCONV_DIM_STATIC;
        out[i].value = dims[i] < 0 ? 0 : dims[i];
        out[i].param = NULL;
        out[i].origin = NULL;
    }
}

/* Sets a value's tensor type from public dims; rank -1 leaves the shape unknown. */
static tconv_status set_value_type(tconv_value *value, tconv_dtype dtype, int rank,
                                   const int64_t *dims, tc_error *err) {
    tc_dim ir_dims[TCONV_MAX_DIMS];
    if (rank > 0)
        dims_from_public(rank, dims, ir_dims);
    return tc_value_set_tensor_type(value, dtype, rank, ir_dims, err);
}

/* A tensor type a caller gives: a known dtype and sane dims. */
static tconv_status check_type(tconv_model *model, const char *what, tconv_dtype dtype, int rank,
                               const int64_t *dims) {
    if (!tc_dtype_is_known((int)dtype) || dtype == TCONV_DTYPE_UNDEFINED)
        return tc_api_usage(model, "%s: %d is not an element type", what, (int)dtype);
    return tc_api_check_dims(model, what, rank, dims, true, true);
}

tconv_status tconv_graph_new_input(tconv_graph *graph, const char *base_name, tconv_dtype dtype,
                                   int rank, const int64_t *dims, tconv_value **out) {
    tconv_status st = check_new_named(graph, "tconv_graph_new_input", base_name, out);
    if (st == TCONV_OK)
        st = check_type(graph->model, "tconv_graph_new_input", dtype, rank, dims);
    if (st != TCONV_OK)
        return st;
    *out = NULL;
    tc_error *err = tc_api_begin(graph->model);
    tconv_value *v = NULL;
    st = tc_graph_add_unique_value(graph, base_name, &v, err);
    if (st == TCONV_OK)
        st = set_value_type(v, dtype, rank, dims, err);
    if (st == TCONV_OK)
        st = tc_graph_add_input(graph, v, NULL, err);
    if (st == TCONV_OK)
        *out = v;
    return tc_api_end(graph->model, st);
}

tconv_status tconv_graph_new_initializer(tconv_graph *graph, const char *base_name,
                                         tconv_dtype dtype, int rank, const int64_t *dims,
                                         const void *data, size_t nbytes, tconv_value **out) {
    tconv_status st = check_new_named(graph, "tconv_graph_new_initializer", base_name, out);
    if (st == TCONV_OK)
        st = tc_api_check_dims(graph->model, "tconv_graph_new_initializer", rank, dims, false,
                               false);
    if (st != TCONV_OK)
        return st;
    *out = NULL;
    tc_error *err = tc_api_begin(graph->model);
    tconv_value *v = NULL;
    tconv_tensor *t = NULL;
    st = tc_graph_add_unique_value(graph, base_name, &v, err);
    if (st == TCONV_OK)
        st = tc_tensor_create(graph->model, v->name, dtype, rank, dims, data, nbytes, &t, err);
    if (st == TCONV_OK)
        st = tc_graph_add_initializer(graph, t, err);
    if (st == TCONV_OK)
        *out = v;
    return tc_api_end(graph->model, st);
}

tconv_status tconv_graph_append_output(tconv_graph *graph, tconv_value *value) {
    if (!graph)
        return TCONV_ERR_USAGE;
    if (tc_api_value_model(value) != graph->model)
        return tc_api_usage(graph->model,
                            "tconv_graph_append_output: the value is NULL or of another model");
    return tc_api_end(graph->model,
                      tc_graph_add_output(graph, value, NULL, tc_api_begin(graph->model)));
}

static bool graph_contains(const tconv_graph *graph, const tconv_node *node) {
    return node && node->graph == graph && (node->prev || node->next || graph->first == node);
}

tconv_status tconv_graph_new_node(tconv_graph *graph, const char *op_type, const char *domain,
                                  const char *name, tconv_node *before, tconv_node **out) {
    if (!graph)
        return TCONV_ERR_USAGE;
    if (!out)
        return tc_api_usage(graph->model, "tconv_graph_new_node: out is NULL");
    *out = NULL;
    if (!op_type || !*op_type)
        return tc_api_usage(graph->model, "tconv_graph_new_node: op_type is NULL or empty");
    if (before && !graph_contains(graph, before))
        return tc_api_usage(graph->model,
                            "tconv_graph_new_node: the node to insert before is not in this "
                            "graph");
    tconv_node *node = NULL;
    tconv_status st =
        tc_node_create(graph, op_type, domain && *domain ? domain : NULL,
                       name && *name ? name : NULL, &node, tc_api_begin(graph->model));
    if (st == TCONV_OK) {
        if (before)
            tc_graph_insert_before(graph, before, node);
        else
            tc_graph_append_node(graph, node);
        *out = node;
    }
    return tc_api_end(graph->model, st);
}

tconv_status tconv_graph_sort(tconv_graph *graph) {
    if (!graph)
        return TCONV_ERR_USAGE;
    tc_error *err = tc_api_begin(graph->model);
    return tc_api_end(graph->model, tc_graph_sort_topologically(graph, NULL, err));
}

/* ---------------------------------------------------------------- nodes */

const char *tconv_node_op_type(const tconv_node *node) {
    return node ? node->op_type : NULL;
}

const char *tconv_node_domain(const tconv_node *node) {
    return node ? (node->domain ? node->domain : "") : NULL;
}

const char *tconv_node_name(const tconv_node *node) {
    return node && node->name && *node->name ? node->name : NULL;
}

tconv_status tconv_node_set_name(tconv_node *node, const char *name) {
    tconv_model *model = tc_api_node_model(node);
    if (!model)
        return TCONV_ERR_USAGE;
    tc_error *err = tc_api_begin(model);
    return tc_api_end(model, tc_node_set_name(node, name && *name ? name : NULL, err));
}

tconv_graph *tconv_node_graph(const tconv_node *node) {
    return node ? node->graph : NULL;
}

tconv_node *tconv_node_next(const tconv_node *node) {
    return node ? node->next : NULL;
}

tconv_node *tconv_node_prev(const tconv_node *node) {
    return node ? node->prev : NULL;
}

size_t tconv_node_input_count(const tconv_node *node) {
    return node ? node->n_inputs : 0;
}

tconv_value *tconv_node_input(const tconv_node *node, size_t index) {
    return node && index < node->n_inputs ? node->inputs[index] : NULL;
}

size_t tconv_node_output_count(const tconv_node *node) {
    return node ? node->n_outputs : 0;
}

tconv_value *tconv_node_output(const tconv_node *node, size_t index) {
    return node && index < node->n_outputs ? node->outputs[index] : NULL;
}

/* A value a node may read or define: NULL (when allowed) or one of the node's model. */
static tconv_status check_node_value(const tconv_node *node, const tconv_value *value,
                                     bool allow_null, const char *what) {
    tconv_model *model = tc_api_node_model(node);
    if (!model)
        return TCONV_ERR_USAGE;
    if (!value && !allow_null)
        return tc_api_usage(model, "%s: the value is NULL", what);
    if (value && tc_api_value_model(value) != model)
        return tc_api_usage(model, "%s: the value belongs to another model", what);
    return TCONV_OK;
}

tconv_status tconv_node_append_input(tconv_node *node, tconv_value *value) {
    tconv_status st = check_node_value(node, value, true, "tconv_node_append_input");
    if (st != TCONV_OK)
        return st;
    tconv_model *model = node->graph->model;
    return tc_api_end(model, tc_node_add_input(node, value, tc_api_begin(model)));
}

tconv_status tconv_node_replace_input(tconv_node *node, size_t index, tconv_value *value) {
    tconv_status st = check_node_value(node, value, true, "tconv_node_replace_input");
    if (st != TCONV_OK)
        return st;
    tconv_model *model = node->graph->model;
    return tc_api_end(model, tc_node_set_input(node, index, value, tc_api_begin(model)));
}

tconv_status tconv_node_new_output(tconv_node *node, const char *base_name, tconv_value **out) {
    tconv_model *model = tc_api_node_model(node);
    if (out)
        *out = NULL;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!base_name || !*base_name)
        return tc_api_usage(model, "tconv_node_new_output: the name is NULL or empty");
    tc_error *err = tc_api_begin(model);
    tconv_value *v = NULL;
    tconv_status st = tc_graph_add_unique_value(node->graph, base_name, &v, err);
    if (st == TCONV_OK)
        st = tc_node_add_output(node, v, err);
    if (st == TCONV_OK && out)
        *out = v;
    return tc_api_end(model, st);
}

tconv_status tconv_node_append_output(tconv_node *node, tconv_value *value) {
    tconv_status st = check_node_value(node, value, false, "tconv_node_append_output");
    if (st != TCONV_OK)
        return st;
    tconv_model *model = node->graph->model;
    if (value->producer || value->initializer || value->is_graph_input)
        return tc_api_usage(model,
                            "tconv_node_append_output: value '%s' is already defined (by a "
                            "node, an initializer or a graph input)",
                            value->name);
    return tc_api_end(model, tc_node_add_output(node, value, tc_api_begin(model)));
}

tconv_status tconv_node_remove(tconv_node *node) {
    tconv_model *model = tc_api_node_model(node);
    if (!model)
        return TCONV_ERR_USAGE;
    tc_api_begin(model);
    if (!graph_contains(node->graph, node))
        return tc_api_usage(model, "tconv_node_remove: the node is not in a graph");
    tc_graph_remove_node(node->graph, node);
    return TCONV_OK;
}

/* Visits subgraphs in attribute order, stopping at the wanted one (or counting them all). */
typedef struct subgraph_walk {
    size_t wanted, seen;
    tconv_graph *found;
} subgraph_walk;

static tconv_status visit_subgraph(tconv_graph *sub, void *ctx) {
    subgraph_walk *walk = ctx;
    if (walk->seen++ == walk->wanted) {
        walk->found = sub;
        return TCONV_ERR_USAGE; /* stops the walk; not an error for the caller */
    }
    return TCONV_OK;
}

size_t tconv_node_subgraph_count(const tconv_node *node) {
    if (!node)
        return 0;
    subgraph_walk walk = {SIZE_MAX, 0, NULL};
    tc_node_for_each_subgraph((tconv_node *)node, visit_subgraph, &walk);
    return walk.seen;
}

tconv_graph *tconv_node_subgraph(const tconv_node *node, size_t index) {
    if (!node)
        return NULL;
    subgraph_walk walk = {index, 0, NULL};
    tc_node_for_each_subgraph((tconv_node *)node, visit_subgraph, &walk);
    return walk.found;
}

/* ---------------------------------------------------------------- values */

const char *tconv_value_name(const tconv_value *value) {
    return value ? value->name : NULL;
}

tconv_graph *tconv_value_graph(const tconv_value *value) {
    return value ? value->graph : NULL;
}

static const tc_type *tensor_type(const tconv_value *value) {
    return value && value->type.kind == TCONV_TYPE_TENSOR ? &value->type : NULL;
}

tconv_dtype tconv_value_dtype(const tconv_value *value) {
    const tc_type *t = tensor_type(value);
    return t ? t->dtype : TCONV_DTYPE_UNDEFINED;
}

int tconv_value_rank(const tconv_value *value) {
    const tc_type *t = tensor_type(value);
    return t ? t->rank : -1;
}

static const tc_dim *value_dim(const tconv_value *value, int axis) {
    const tc_type *t = tensor_type(value);
    return t && axis >= 0 && axis < t->rank && t->dims ? &t->dims[axis] : NULL;
}

int64_t tconv_value_dim(const tconv_value *value, int axis) {
    const tc_dim *d = value_dim(value, axis);
    return d && d->kind == TCONV_DIM_STATIC ? d->value : -1;
}

const char *tconv_value_dim_param(const tconv_value *value, int axis) {
    const tc_dim *d = value_dim(value, axis);
    return d && d->kind == TCONV_DIM_SYMBOLIC ? d->param : NULL;
}

tconv_status tconv_value_set_type(tconv_value *value, tconv_dtype dtype, int rank,
                                  const int64_t *dims) {
    tconv_model *model = tc_api_value_model(value);
    if (!model)
        return TCONV_ERR_USAGE;
    tconv_status st = check_type(model, "tconv_value_set_type", dtype, rank, dims);
    if (st != TCONV_OK)
        return st;
    return tc_api_end(model, set_value_type(value, dtype, rank, dims, tc_api_begin(model)));
}

tconv_node *tconv_value_producer(const tconv_value *value) {
    return value ? value->producer : NULL;
}

size_t tconv_value_use_count(const tconv_value *value) {
    return value ? value->n_uses : 0;
}

tconv_node *tconv_value_user(const tconv_value *value, size_t index, size_t *input_index) {
    if (!value || index >= value->n_uses)
        return NULL;
    if (input_index)
        *input_index = value->uses[index].input_index;
    return value->uses[index].node;
}

bool tconv_value_is_graph_input(const tconv_value *value) {
    return value && value->is_graph_input;
}

bool tconv_value_is_graph_output(const tconv_value *value) {
    return value && value->graph && tc_graph_is_output(value->graph, value);
}

tconv_tensor *tconv_value_initializer(const tconv_value *value) {
    return value ? value->initializer : NULL;
}

tconv_status tconv_value_replace_all_uses(tconv_value *from, tconv_value *to) {
    tconv_model *model = tc_api_value_model(from);
    if (!model)
        return TCONV_ERR_USAGE;
    if (tc_api_value_model(to) != model)
        return tc_api_usage(model,
                            "tconv_value_replace_all_uses: the new value is NULL or belongs to "
                            "another model");
    if (from == to)
        return tc_api_end(model, TCONV_OK);
    return tc_api_end(model, tc_value_replace_uses(from, to, tc_api_begin(model)));
}
