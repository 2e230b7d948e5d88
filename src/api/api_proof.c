/* Local proof of one rewrite: the original node alone and the chain the legalization emitted for
 * it alone, as two small models with the same inputs (the node's data inputs with the shapes
 * shape inference gave them, its initializers copied), so that the comparison depends on no
 * other op of the model. Used by tconv_comparison_run_rewrites (api_compare.c). */
#include "api/api_internal.h"

#include <stdio.h>
#include <string.h>

/* The node with id `id` in `graph` or in a subgraph of it: nodes are found by identity, so that
 * unnamed nodes and nodes sharing a name are proven like any other. */
static tconv_node *find_node(const tconv_graph *graph, uint64_t id) {
    for (tconv_node *n = graph->first; n; n = n->next) {
        if (n->id == id)
            return n;
        for (size_t i = 0; i < n->n_attrs; i++) {
            const tc_attr *a = &n->attrs[i];
            tconv_node *found = a->type == TCONV_ATTR_GRAPH && a->g ? find_node(a->g, id) : NULL;
            for (size_t k = 0; !found && a->type == TCONV_ATTR_GRAPHS && k < a->n; k++)
                found = a->graphs[k] ? find_node(a->graphs[k], id) : NULL;
            if (found)
                return found;
        }
    }
    return NULL;
}

static tconv_status copy_opsets(const tconv_model *from, tconv_model *to, tc_error *err) {
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < from->n_opsets; i++)
        st = tc_model_set_opset(to, from->opsets[i].domain, from->opsets[i].version, err);
    return st;
}

static tconv_status copy_initializer(tconv_tensor *src, tconv_graph *g, tc_error *err) {
    const void *data;
    size_t nbytes;
    tconv_tensor *t;
    tconv_status st = tc_tensor_data(src, &data, &nbytes, err);
    if (st == TCONV_OK)
        st = tc_tensor_create(g->model, src->name, src->dtype, src->rank, src->dims, data, nbytes,
                              &t, err);
    return st == TCONV_OK ? tc_graph_add_initializer(g, t, err) : st;
}

/* A graph input of the small model called `name` with `type`; a dim that is not static becomes
 * the symbolic dim of its own name, or "<input>_<axis>" when it has none, so that a comparison
 * can give it sizes. */
static tconv_status add_input(tconv_graph *g, const char *name, const tc_type *type,
                              tc_error *err) {
    if (type->kind != TCONV_TYPE_TENSOR || type->rank < 0)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                            "the shape of input '%s' is unknown (give --dim values or declare it)",
                            name);
    tc_dim dims[TC_MAX_RANK];
    for (int a = 0; a < type->rank; a++) {
        dims[a] = type->dims[a];
        dims[a].origin = NULL;
        if (dims[a].kind == TCONV_DIM_STATIC)
            continue;
        if (dims[a].kind != TCONV_DIM_SYMBOLIC || !dims[a].param) {
            char param[160];
            snprintf(param, sizeof param, "%.120s_%d", name, a);
            dims[a].param = tc_arena_strdup(g->model->arena, param);
            if (!dims[a].param)
                return tc_error_nomem(err, "a dim name");
        }
        dims[a].kind = TCONV_DIM_SYMBOLIC;
    }
    tconv_value *v;
    tconv_status st = tc_graph_get_or_add_value(g, name, &v, err);
    if (st == TCONV_OK)
        st = tc_value_set_tensor_type(v, type->dtype, type->rank, dims, err);
    return st == TCONV_OK ? tc_graph_add_input(g, v, NULL, err) : st;
}

/* The data input of a ConvTranspose whose shape nothing gave (an op before it that shape
 * inference does not know, no declared shape): its rank and channels follow from the weights
 * (W is C_in x C_out/group x k...), the other dims are left to the proof's sizes. */
static bool type_from_weights(const tconv_node *node, size_t index, tc_type *type, tc_dim *dims) {
    const tconv_value *w = node->n_inputs > 1 ? node->inputs[1] : NULL;
    if (index != 0 || node->kind != TC_KIND_ConvTranspose || !w || !w->initializer ||
        w->initializer->rank < 3 || w->initializer->rank > TC_MAX_RANK)
        return false;
    type->kind = TCONV_TYPE_TENSOR;
    type->dtype = w->initializer->dtype;
    type->rank = w->initializer->rank;
    type->dims = dims;
    for (int a = 0; a < type->rank; a++)
        dims[a] = (tc_dim){.kind = TCONV_DIM_UNKNOWN};
    dims[1] = (tc_dim){.kind = TCONV_DIM_STATIC, .value = w->initializer->dims[0]};
    return true;
}

static tconv_status copy_node(const tconv_node *node, tconv_graph *g, tc_error *err);

/* The node that computes `v` from initializers alone (a Constant; a DequantizeLinear of constant
 * weights, as QDQ models feed W), or NULL. The small models compute such a value as the model
 * does instead of feeding it random data: a rewrite may have turned it into new constants (the
 * target lowerings edit W under its DequantizeLinear), which random data would not match. */
static const tconv_node *constant_producer(const tconv_value *v) {
    const tconv_node *p = v->producer;
    if (!p || p->n_outputs != 1)
        return NULL;
    for (size_t i = 0; i < p->n_attrs; i++) {
        if (p->attrs[i].type == TCONV_ATTR_GRAPH || p->attrs[i].type == TCONV_ATTR_GRAPHS)
            return NULL;
    }
    for (size_t i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i] && !p->inputs[i]->initializer)
            return NULL;
    }
    return p;
}

/* The original node's inputs, in the same order in both small models: initializers copied, the
 * others graph inputs typed as in `scope`, the rewritten graph that holds the emitted nodes
 * (shape inference ran on it), else as declared, else from the weights. */
static tconv_status add_node_inputs(const tconv_node *node, const tconv_graph *scope,
                                    tconv_graph *g, tc_error *err) {
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < node->n_inputs; i++) {
        const tconv_value *v = node->inputs[i];
        if (!v || tc_graph_find_value(g, v->name))
            continue;
        if (v->initializer) {
            st = copy_initializer(v->initializer, g, err);
            continue;
        }
        const tconv_node *producer = constant_producer(v);
        if (producer) {
            st = copy_node(producer, g, err);
            continue;
        }
        const tconv_value *typed = tc_graph_find_value(scope, v->name);
        const tc_type *type = typed && typed->type.rank >= 0 ? &typed->type : &v->type;
        tc_type derived;
        tc_dim dims[TC_MAX_RANK];
        if (type->rank < 0 && type_from_weights(node, i, &derived, dims))
            type = &derived;
        st = add_input(g, v->name, type, err);
    }
    return st;
}

static tconv_status value_named(tconv_graph *g, const tconv_value *v, tconv_value **out,
                                tc_error *err) {
    *out = NULL;
    return v ? tc_graph_get_or_add_value(g, v->name, out, err) : TCONV_OK;
}

/* A copy of `node` (attributes shared with the source model, which outlives the copy). Inputs
 * that no node of the copy produces and that are initializers of the source are copied. */
static tconv_status copy_node(const tconv_node *node, tconv_graph *g, tc_error *err) {
    tconv_node *n;
    tconv_status st = tc_node_create(g, node->op_type, node->domain, node->name, &n, err);
    for (size_t i = 0; st == TCONV_OK && i < node->n_inputs; i++) {
        const tconv_value *v = node->inputs[i];
        tconv_value *copy;
        if (v && v->initializer && !tc_graph_find_value(g, v->name))
            st = copy_initializer(v->initializer, g, err);
        if (st == TCONV_OK && (st = value_named(g, v, &copy, err)) == TCONV_OK)
            st = tc_node_add_input(n, copy, err);
    }
    for (size_t i = 0; st == TCONV_OK && i < node->n_outputs; i++) {
        tconv_value *copy;
        if ((st = value_named(g, node->outputs[i], &copy, err)) == TCONV_OK)
            st = tc_node_add_output(n, copy, err);
    }
    for (size_t i = 0; st == TCONV_OK && i < node->n_attrs; i++)
        st = tc_node_add_attr(n, &node->attrs[i], err);
    if (st == TCONV_OK)
        tc_graph_append_node(g, n);
    return st;
}

static tconv_status add_output(tconv_graph *g, const char *name, tc_error *err) {
    tconv_value *v = tc_graph_find_value(g, name);
    if (!v || !v->producer)
        return tc_error_set(err, TCONV_ERR_INVALID, "no node of the rewrite produces '%s'", name);
    return tc_graph_add_output(g, v, NULL, err);
}

static tconv_status new_model(const tconv_model *like, tconv_model **out, tc_error *err) {
    tconv_status st = tc_model_create(out, err);
    return st == TCONV_OK ? copy_opsets(like, *out, err) : st;
}

static tconv_status build_before(tconv_model *original, const tconv_node *node,
                                 const tconv_graph *scope, tconv_model **out, tc_error *err) {
    tconv_status st = new_model(original, out, err);
    if (st == TCONV_OK)
        st = add_node_inputs(node, scope, (*out)->graph, err);
    if (st == TCONV_OK)
        st = copy_node(node, (*out)->graph, err);
    for (size_t i = 0; st == TCONV_OK && i < node->n_outputs; i++)
        if (node->outputs[i])
            st = add_output((*out)->graph, node->outputs[i]->name, err);
    return st;
}

static tconv_status build_after(const tconv_model *original, const tconv_node *node,
                                const tconv_graph *scope, const tc_rewrite_record *rec,
                                tconv_model **out, tc_error *err) {
    tconv_status st = new_model(original, out, err);
    if (st == TCONV_OK)
        st = add_node_inputs(node, scope, (*out)->graph, err);
    for (size_t i = 0; st == TCONV_OK && i < rec->n_new; i++) {
        const tconv_node *emitted = find_node(scope->model->graph, rec->new_ids[i]);
        st = emitted && emitted->graph == scope
                 ? copy_node(emitted, (*out)->graph, err)
                 : tc_error_set(err, TCONV_ERR_INVALID,
                                "node %zu of the %zu that replaced it is not beside the others",
                                i + 1, rec->n_new);
    }
    for (size_t i = 0; st == TCONV_OK && i < node->n_outputs; i++)
        if (node->outputs[i])
            st = add_output((*out)->graph, node->outputs[i]->name, err);
    return st;
}

size_t tc_api_rewrite_run_inputs(tconv_model *original, tconv_model *rewritten,
                                 const tc_rewrite_record *rec, const char **names, size_t cap) {
    const tconv_node *node = find_node(original->graph, rec->node_id);
    const tconv_node *first = rec->n_new ? find_node(rewritten->graph, rec->new_ids[0]) : NULL;
    if (!node || !first || node->graph != original->graph)
        return 0;
    size_t n = 0;
    bool unshaped = false;
    for (size_t i = 0; i < node->n_inputs; i++) {
        const tconv_value *v = node->inputs[i];
        if (!v || v->initializer)
            continue;
        const tconv_value *typed = tc_graph_find_value(first->graph, v->name);
        int64_t dims[TC_MAX_RANK];
        int rank;
        unshaped |= !tc_value_static_shape(typed ? typed : v, dims, &rank);
        if (n < cap)
            names[n++] = v->name;
    }
    return unshaped ? n : 0;
}

tconv_status tc_api_extract_rewrite(tconv_model *original, tconv_model *rewritten,
                                    const tc_rewrite_record *rec, tconv_model **before,
                                    tconv_model **after, tc_error *err) {
    *before = *after = NULL;
    const tconv_node *node = find_node(original->graph, rec->node_id);
    const tconv_node *first = rec->n_new ? find_node(rewritten->graph, rec->new_ids[0]) : NULL;
    if (!node || !first)
        return tc_error_set(err, TCONV_ERR_USAGE,
                            "the %s is not in the %s model given (node id %llu): give the model "
                            "the pipeline ran on and a copy of it made before "
                            "(tconv_model_clone or read from the same file)",
                            !node ? "original node" : "nodes that replaced it",
                            !node ? "original" : "rewritten",
                            (unsigned long long)(!node ? rec->node_id : rec->new_ids[0]));
    tconv_status st = build_before(original, node, first->graph, before, err);
    if (st == TCONV_OK)
        st = build_after(original, node, first->graph, rec, after, err);
    if (st == TCONV_OK && (st = tc_model_verify(*before, err)) == TCONV_OK)
        st = tc_model_verify(*after, err);
    if (st != TCONV_OK) {
        tconv_model_free(*before);
        tconv_model_free(*after);
        *before = *after = NULL;
    }
    return st;
}
