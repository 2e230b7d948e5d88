/* IR verification (SSA, scoping, order, use lists, and the arity and attributes the op table
 * gives known ops) and stable topological sorting. Both walk node lists iteratively; they recurse
 * only into subgraphs, which the loader bounds (max_graph_depth) and VERIFY_MAX_DEPTH bounds here.
 *
 * A node that holds subgraphs depends on every outer value its subgraphs capture: an If whose
 * branch reads %a must come after the producer of %a, exactly as if %a were an input. */
#include "ir/ir.h"
#include "ir/ptr_map.h"
#include "ir/vec.h"
#include "ir/index_heap.h"
#include "ir/verify.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VERIFY_MAX_DEPTH 1024

/* ---------------------------------------------------------------- pointer -> index map */

/* Pointer -> index maps (tc_ptr_map), the index stored as index + 1 so that 0 is never a value. */
typedef tc_ptr_map ptr_map;

static void ptr_map_free(ptr_map *m) {
    tc_ptr_map_free(m);
}

/* Inserts or replaces; false when out of memory. */
static bool ptr_map_put(ptr_map *m, const void *key, size_t value) {
    return tc_ptr_map_put(m, key, (void *)(uintptr_t)(value + 1));
}

static bool ptr_map_get(const ptr_map *m, const void *key, size_t *value) {
    if (!key)
        return false;
    uintptr_t stored = (uintptr_t)tc_ptr_map_get(m, key);
    if (!stored)
        return false;
    if (value)
        *value = (size_t)(stored - 1);
    return true;
}

/* ---------------------------------------------------------------- shared helpers */

static tconv_status prefix_graph(tc_error *err, tconv_status st, const tconv_graph *graph) {
    if (graph->function)
        return tc_error_prefix(
            err, st, "function '%s': ", graph->function->name ? graph->function->name : "");
    return tc_error_prefix(err, st, "graph '%s': ", graph->name ? graph->name : "");
}

static tconv_status prefix_node(tc_error *err, tconv_status st, const tconv_node *node) {
    char where[256];
    return tc_error_prefix(err, st, "%s: ", tc_node_describe(node, where, sizeof where));
}

static const char *value_name(const tconv_value *v) {
    return v->name ? v->name : "";
}

/* ---------------------------------------------------------------- op schema (ir/ops.def) */

static tconv_status check_attr_type(tc_op op, const tc_attr *attr, tc_error *err) {
    const tc_op_attr *schema = tc_op_attr_find(op, attr->name);
    if (!schema || schema->type == attr->type)
        return TCONV_OK;
    return tc_error_set(err, TCONV_ERR_INVALID, "attribute '%s': expected %s, got %s", attr->name,
                        tconv_attr_type_name(schema->type), tconv_attr_type_name(attr->type));
}

static tconv_status check_required_attrs(const tconv_node *node, tc_error *err) {
    const tc_op_def *d = &tc_ops[node->op];
    for (size_t i = 0; i < d->n_attrs; i++) {
        if (d->attrs[i].required && !tc_node_attr(node, d->attrs[i].name))
            return tc_error_set(err, TCONV_ERR_INVALID,
                                "attribute '%s' is missing, but %s-%d requires it",
                                d->attrs[i].name, d->name, d->since);
    }
    return TCONV_OK;
}

static tconv_status count_error(tc_error *err, const char *what, size_t n, const tc_op_def *d,
                                unsigned min, unsigned max) {
    if (max == TC_MANY)
        return tc_error_set(err, TCONV_ERR_INVALID, "%s: %zu given, %s takes at least %u", what, n,
                            d->name, min);
    if (min == max)
        return tc_error_set(err, TCONV_ERR_INVALID, "%s: %zu given, %s takes %u", what, n, d->name,
                            min);
    return tc_error_set(err, TCONV_ERR_INVALID, "%s: %zu given, %s takes %u to %u", what, n,
                        d->name, min, max);
}

/* Arity and required attributes of the node's table entry (none for ops tconv does not know). */
static tconv_status check_schema(const tconv_node *node, tc_error *err) {
    if (node->op == TC_OP_NONE)
        return TCONV_OK;
    const tc_op_def *d = &tc_ops[node->op];
    if (node->n_inputs < d->min_in || (d->max_in != TC_MANY && node->n_inputs > d->max_in))
        return count_error(err, "inputs", node->n_inputs, d, d->min_in, d->max_in);
    if (node->n_outputs < d->min_out || (d->max_out != TC_MANY && node->n_outputs > d->max_out))
        return count_error(err, "outputs", node->n_outputs, d, d->min_out, d->max_out);
    for (size_t k = 0; k < d->min_in; k++) {
        if (!node->inputs[k])
            return tc_error_set(err, TCONV_ERR_INVALID, "input %zu is empty, but %s requires it", k,
                                d->name);
    }
    if (d->min_out > 0 && !node->outputs[0])
        return tc_error_set(err, TCONV_ERR_INVALID, "output 0 is empty, but %s requires it",
                            d->name);
    return check_required_attrs(node, err);
}

/* ---------------------------------------------------------------- verification */

/* The values visible at a point of a graph: its own definitions so far plus its parents'.
 * `open` scopes stand for enclosing graphs that are not being walked (a subgraph verified on
 * its own): there any defined value of the graph counts, since the order is not known. */
typedef struct scope {
    const tconv_graph *graph;
    const struct scope *parent;
    ptr_map defined;
    bool open;
} scope;

typedef struct verify_ctx {
    tc_error *err;
    size_t n_inputs; /* node inputs whose value belongs to a walked graph */
    size_t n_uses;   /* use-list entries of values of walked graphs */
} verify_ctx;

static bool value_has_definition(const tconv_value *v) {
    return v->producer || v->is_graph_input || v->initializer;
}

static const scope *scope_lookup(const scope *s, const tconv_value *v) {
    for (; s; s = s->parent) {
        if (s->open ? v->graph == s->graph && value_has_definition(v)
                    : ptr_map_get(&s->defined, v, NULL))
            return s;
    }
    return NULL;
}

static tconv_status verify_graph(verify_ctx *ctx, const tconv_graph *graph, const scope *parent,
                                 int depth);

static tconv_status undefined_input(verify_ctx *ctx, const tconv_node *node, size_t index,
                                    const tconv_value *v) {
    char where[256];
    const tconv_node *p = v->producer;
    if (p && p->graph == node->graph)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "input %zu '%s' is used before %s produces it: the nodes are not "
                            "in topological order",
                            index, value_name(v), tc_node_describe(p, where, sizeof where));
    if (p)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "input %zu '%s' is produced by %s of graph '%s', which is not "
                            "visible here (or comes later)",
                            index, value_name(v), tc_node_describe(p, where, sizeof where),
                            p->graph && p->graph->name ? p->graph->name : "");
    return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                        "input %zu '%s' is not defined (no node output, graph input or "
                        "initializer of this or an enclosing graph has that name)",
                        index, value_name(v));
}

static tconv_status verify_inputs(verify_ctx *ctx, const tconv_node *node, const scope *s) {
    for (size_t i = 0; i < node->n_inputs; i++) {
        const tconv_value *v = node->inputs[i];
        if (!v)
            continue;
        const scope *found = scope_lookup(s, v);
        if (!found)
            return undefined_input(ctx, node, i, v);
        if (!found->open)
            ctx->n_inputs++;
    }
    return TCONV_OK;
}

static tconv_status verify_subgraph(verify_ctx *ctx, const tconv_node *node, const tc_attr *attr,
                                    const tconv_graph *sub, const scope *s, int depth) {
    if (!sub)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "attribute '%s' has no graph", attr->name);
    if (sub->parent != node->graph || sub->owner != node)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "attribute '%s': subgraph's parent/owner do not point back at "
                            "this node",
                            attr->name);
    tconv_status st = verify_graph(ctx, sub, s, depth + 1);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "attribute '%s': ", attr->name);
    return TCONV_OK;
}

static tconv_status verify_attrs(verify_ctx *ctx, const tconv_node *node, const scope *s,
                                 int depth) {
    for (size_t i = 0; i < node->n_attrs; i++) {
        const tc_attr *a = &node->attrs[i];
        tconv_status st = check_attr_type(node->op, a, ctx->err);
        if (st == TCONV_OK && a->type == TCONV_ATTR_GRAPH)
            st = verify_subgraph(ctx, node, a, a->g, s, depth);
        for (size_t k = 0; st == TCONV_OK && a->type == TCONV_ATTR_GRAPHS && k < a->n; k++)
            st = verify_subgraph(ctx, node, a, a->graphs[k], s, depth);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

static tconv_status verify_outputs(verify_ctx *ctx, const tconv_node *node, scope *s) {
    for (size_t i = 0; i < node->n_outputs; i++) {
        const tconv_value *v = node->outputs[i];
        if (!v)
            continue;
        if (v->producer != node || v->producer_index != i)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "output %zu '%s' does not name this node as its producer", i,
                                value_name(v));
        if (v->graph != node->graph)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "output %zu '%s' belongs to another graph's scope", i,
                                value_name(v));
        if (ptr_map_get(&s->defined, v, NULL))
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "output %zu '%s' is already defined (SSA: one definition per "
                                "value)",
                                i, value_name(v));
        if (!ptr_map_put(&s->defined, v, 0))
            return tc_error_nomem(ctx->err, "the verifier");
    }
    return TCONV_OK;
}

static tconv_status verify_node(verify_ctx *ctx, const tconv_node *node, scope *s, int depth) {
    tconv_status st = TCONV_OK;
    if (!node->op_type || !*node->op_type)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "op_type is empty");
    if (st == TCONV_OK)
        st = check_schema(node, ctx->err);
    if (st == TCONV_OK)
        st = verify_inputs(ctx, node, s);
    if (st == TCONV_OK)
        st = verify_attrs(ctx, node, s, depth);
    if (st == TCONV_OK)
        st = verify_outputs(ctx, node, s);
    return st == TCONV_OK ? TCONV_OK : prefix_node(ctx->err, st, node);
}

static tconv_status define(verify_ctx *ctx, scope *s, const tconv_value *v, const char *what,
                           bool unique) {
    if (!v || v->graph != s->graph)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s '%s' is not a value of this graph",
                            what, v ? value_name(v) : "(null)");
    if (unique && ptr_map_get(&s->defined, v, NULL))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s '%s' is listed twice", what,
                            value_name(v));
    return ptr_map_put(&s->defined, v, 0) ? TCONV_OK : tc_error_nomem(ctx->err, "the verifier");
}

static tconv_status define_graph_inputs(verify_ctx *ctx, scope *s) {
    const tconv_graph *g = s->graph;
    for (size_t i = 0; i < g->n_inputs; i++) {
        tconv_status st = define(ctx, s, g->inputs[i].value, "input", true);
        if (st != TCONV_OK)
            return st;
    }
    for (size_t i = 0; i < g->n_initializers; i++) {
        const tconv_tensor *t = g->initializers[i];
        if (!t->value || t->value->initializer != t)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "initializer '%s' is not bound to its value",
                                t->name ? t->name : "");
        tconv_status st = define(ctx, s, t->value, "initializer", false);
        if (st != TCONV_OK)
            return st;
    }
    /* Values bound to data outside the initializer list (sparse initializers). */
    for (size_t i = 0; i < g->values.capacity; i++) {
        const tconv_value *v = g->values.slots[i].key ? g->values.slots[i].value : NULL;
        if (v && v->initializer && !ptr_map_put(&s->defined, v, 0))
            return tc_error_nomem(ctx->err, "the verifier");
    }
    return TCONV_OK;
}

static tconv_status verify_node_list(verify_ctx *ctx, scope *s, int depth) {
    const tconv_graph *g = s->graph;
    size_t count = 0;
    const tconv_node *prev = NULL;
    for (const tconv_node *n = g->first; n; prev = n, n = n->next) {
        if (++count > g->n_nodes || n->prev != prev || n->graph != g)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "node list is corrupt at #%zu (n_nodes %zu)", count - 1,
                                g->n_nodes);
        tconv_status st = verify_node(ctx, n, s, depth);
        if (st != TCONV_OK)
            return st;
    }
    if (count != g->n_nodes || g->last != prev)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "node list has %zu nodes, n_nodes says %zu", count, g->n_nodes);
    return TCONV_OK;
}

static tconv_status verify_graph_outputs(verify_ctx *ctx, const scope *s) {
    const tconv_graph *g = s->graph;
    for (size_t i = 0; i < g->n_outputs; i++) {
        const tconv_value *v = g->outputs[i].value;
        if (!v)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "output #%zu has no value", i);
        if (!scope_lookup(s, v))
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "output '%s' is not defined (no node, input or initializer "
                                "produces it)",
                                value_name(v));
    }
    return TCONV_OK;
}

/* Every use must point back at a node input holding the value; the count check in
 * verify_tree then proves there is no input without its use. */
static tconv_status verify_use_lists(verify_ctx *ctx, const tconv_graph *g) {
    for (size_t i = 0; i < g->values.capacity; i++) {
        const tconv_value *v = g->values.slots[i].key ? g->values.slots[i].value : NULL;
        if (!v)
            continue;
        for (size_t k = 0; k < v->n_uses; k++) {
            const tc_use *u = &v->uses[k];
            if (!u->node || u->input_index >= u->node->n_inputs ||
                u->node->inputs[u->input_index] != v)
                return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                    "value '%s': use #%zu does not match a node input",
                                    value_name(v), k);
            if (u->node->use_pos[u->input_index] != k)
                return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                    "value '%s': use #%zu is recorded at position %zu in its "
                                    "node",
                                    value_name(v), k, u->node->use_pos[u->input_index]);
        }
        ctx->n_uses += v->n_uses;
    }
    return TCONV_OK;
}

static tconv_status verify_graph(verify_ctx *ctx, const tconv_graph *graph, const scope *parent,
                                 int depth) {
    if (depth > VERIFY_MAX_DEPTH)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "subgraphs nested deeper than %d",
                            VERIFY_MAX_DEPTH);
    scope s = {graph, parent, {0}, false};
    tconv_status st = define_graph_inputs(ctx, &s);
    if (st == TCONV_OK)
        st = verify_node_list(ctx, &s, depth);
    if (st == TCONV_OK)
        st = verify_graph_outputs(ctx, &s);
    if (st == TCONV_OK)
        st = verify_use_lists(ctx, graph);
    ptr_map_free(&s.defined);
    return st == TCONV_OK ? TCONV_OK : prefix_graph(ctx->err, st, graph);
}

/* A subgraph verified on its own sees its enclosing graphs as open scopes. */
static tconv_status verify_tree(const tconv_graph *graph, tc_error *err) {
    tc_error local;
    verify_ctx ctx = {err ? err : &local, 0, 0};
    size_t n_outer = 0;
    for (const tconv_graph *g = graph->parent; g; g = g->parent)
        if (++n_outer > VERIFY_MAX_DEPTH)
            return tc_error_set(ctx.err, TCONV_ERR_LIMIT, "subgraphs nested deeper than %d",
                                VERIFY_MAX_DEPTH);
    scope *outer = calloc(n_outer + 1, sizeof(scope));
    if (!outer)
        return tc_error_nomem(ctx.err, "the verifier");
    /* outer[0] is the outermost graph; each scope's parent is the one before it. */
    size_t k = n_outer;
    for (const tconv_graph *g = graph->parent; g; g = g->parent)
        outer[--k].graph = g;
    for (size_t i = 0; i < n_outer; i++) {
        outer[i].parent = i ? &outer[i - 1] : NULL;
        outer[i].open = true;
    }
    tconv_status st = verify_graph(&ctx, graph, n_outer ? &outer[n_outer - 1] : NULL, (int)n_outer);
    free(outer);
    if (st == TCONV_OK && ctx.n_inputs != ctx.n_uses)
        st = tc_error_set(ctx.err, TCONV_ERR_INVALID,
                          "graph '%s': use lists are out of sync with node inputs (%zu "
                          "inputs, %zu uses)",
                          graph->name ? graph->name : "", ctx.n_inputs, ctx.n_uses);
    return st;
}

tconv_status tc_graph_verify(const tconv_graph *graph, tc_error *err) {
    return verify_tree(graph, err);
}

tconv_status tc_model_verify(const tconv_model *model, tc_error *err) {
    tconv_status st = verify_tree(model->graph, err);
    for (size_t i = 0; st == TCONV_OK && i < model->n_functions; i++) {
        const tc_function *fn = model->functions[i];
        if (!fn->body || fn->body->function != fn)
            return tc_error_set(err, TCONV_ERR_INVALID,
                                "function '%s': body does not point back at it",
                                fn->name ? fn->name : "");
        st = verify_tree(fn->body, err);
    }
    return st;
}

/* ---------------------------------------------------------------- topological sort */

typedef struct edge {
    size_t from, to;
} edge;

typedef struct sort_state {
    const tconv_graph *graph;
    size_t n;
    tconv_node **nodes;
    ptr_map index;
    edge *edges;
    size_t n_edges, cap_edges;
    bool nomem;
} sort_state;

static void add_edge(sort_state *s, size_t from, size_t to) {
    if (!TC_VEC_RESERVE(s->edges, s->cap_edges, s->n_edges + 1)) {
        s->nomem = true;
        return;
    }
    s->edges[s->n_edges++] = (edge){from, to};
}

static void add_dependency(sort_state *s, const tconv_value *v, size_t to) {
    size_t from;
    if (v && v->producer && v->producer->graph == s->graph &&
        ptr_map_get(&s->index, v->producer, &from))
        add_edge(s, from, to);
}

/* Outer values read anywhere inside `sub` (at any depth) make node `to` depend on them. */
static void add_captures(sort_state *s, const tconv_graph *sub, size_t to, int depth) {
    if (depth > VERIFY_MAX_DEPTH)
        return;
    for (const tconv_node *n = sub->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_inputs; i++)
            add_dependency(s, n->inputs[i], to);
        for (size_t a = 0; a < n->n_attrs; a++) {
            const tc_attr *attr = &n->attrs[a];
            if (attr->type == TCONV_ATTR_GRAPH && attr->g)
                add_captures(s, attr->g, to, depth + 1);
            for (size_t k = 0; attr->type == TCONV_ATTR_GRAPHS && k < attr->n; k++) {
                if (attr->graphs[k])
                    add_captures(s, attr->graphs[k], to, depth + 1);
            }
        }
    }
    for (size_t i = 0; i < sub->n_outputs; i++)
        add_dependency(s, sub->outputs[i].value, to);
}

static void collect_edges(sort_state *s) {
    for (size_t i = 0; i < s->n; i++) {
        const tconv_node *node = s->nodes[i];
        for (size_t k = 0; k < node->n_inputs; k++)
            add_dependency(s, node->inputs[k], i);
        for (size_t a = 0; a < node->n_attrs; a++) {
            const tc_attr *attr = &node->attrs[a];
            if (attr->type == TCONV_ATTR_GRAPH && attr->g)
                add_captures(s, attr->g, i, 1);
            for (size_t k = 0; attr->type == TCONV_ATTR_GRAPHS && k < attr->n; k++) {
                if (attr->graphs[k])
                    add_captures(s, attr->graphs[k], i, 1);
            }
        }
    }
}

/* CSR adjacency: for node i, list[start[i] .. start[i+1]) holds the other end of its edges. */
static bool build_adjacency(const sort_state *s, bool by_from, size_t **start_out,
                            size_t **list_out) {
    size_t *start = calloc(s->n + 1, sizeof(size_t));
    size_t *list = malloc((s->n_edges + 1) * sizeof(size_t));
    size_t *fill = calloc(s->n + 1, sizeof(size_t));
    if (!start || !list || !fill) {
        free(start);
        free(list);
        free(fill);
        return false;
    }
    for (size_t e = 0; e < s->n_edges; e++)
        start[(by_from ? s->edges[e].from : s->edges[e].to) + 1]++;
    for (size_t i = 0; i < s->n; i++)
        start[i + 1] += start[i];
    for (size_t e = 0; e < s->n_edges; e++) {
        size_t key = by_from ? s->edges[e].from : s->edges[e].to;
        list[start[key] + fill[key]++] = by_from ? s->edges[e].to : s->edges[e].from;
    }
    free(fill);
    *start_out = start;
    *list_out = list;
    return true;
}

/* Every node left after Kahn's algorithm has an unemitted predecessor; walking back through
 * them must revisit a node, and that node is on a cycle. */
static size_t find_cycle_node(const sort_state *s, const bool *emitted) {
    size_t *pred_start, *preds;
    size_t cur = 0;
    while (cur < s->n && emitted[cur])
        cur++;
    if (!build_adjacency(s, false, &pred_start, &preds))
        return cur;
    bool *seen = calloc(s->n, sizeof(bool));
    while (seen && !seen[cur]) {
        seen[cur] = true;
        size_t next = cur;
        for (size_t k = pred_start[cur]; k < pred_start[cur + 1]; k++) {
            if (!emitted[preds[k]]) {
                next = preds[k];
                break;
            }
        }
        cur = next;
    }
    free(seen);
    free(pred_start);
    free(preds);
    return cur;
}

static void relink(tconv_graph *graph, tconv_node **nodes, const size_t *order, size_t n) {
    tconv_node *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        tconv_node *node = nodes[order[i]];
        node->prev = prev;
        node->next = NULL;
        if (prev)
            prev->next = node;
        else
            graph->first = node;
        prev = node;
    }
    graph->last = prev;
}

static tconv_status kahn(sort_state *s, tconv_graph *graph, bool *reordered, tc_error *err) {
    size_t *succ_start = NULL, *succ = NULL;
    size_t *indegree = calloc(s->n, sizeof(size_t));
    size_t *heap = malloc(s->n * sizeof(size_t));
    size_t *order = malloc(s->n * sizeof(size_t));
    bool *emitted = calloc(s->n, sizeof(bool));
    tconv_status st = TCONV_OK;
    if (!indegree || !heap || !order || !emitted || !build_adjacency(s, true, &succ_start, &succ)) {
        st = tc_error_nomem(err, "the topological sort");
        goto done;
    }
    for (size_t e = 0; e < s->n_edges; e++)
        indegree[s->edges[e].to]++;
    size_t n_heap = 0, n_order = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (indegree[i] == 0)
            tc_index_heap_push(heap, &n_heap, i);
    }
    while (n_heap > 0) {
        size_t i = tc_index_heap_pop(heap, &n_heap);
        emitted[i] = true;
        order[n_order++] = i;
        for (size_t k = succ_start[i]; k < succ_start[i + 1]; k++) {
            if (--indegree[succ[k]] == 0)
                tc_index_heap_push(heap, &n_heap, succ[k]);
        }
    }
    if (n_order < s->n) {
        char where[256];
        st = tc_error_set(
            err, TCONV_ERR_INVALID, "cycle through %s",
            tc_node_describe(s->nodes[find_cycle_node(s, emitted)], where, sizeof where));
        goto done;
    }
    for (size_t i = 0; i < s->n && !*reordered; i++)
        *reordered = order[i] != i;
    if (*reordered)
        relink(graph, s->nodes, order, s->n);
done:
    free(indegree);
    free(heap);
    free(order);
    free(emitted);
    free(succ_start);
    free(succ);
    return st;
}

static tconv_status sort_one(tconv_graph *graph, bool *reordered, tc_error *err) {
    *reordered = false;
    sort_state s = {.graph = graph};
    s.nodes = malloc((graph->n_nodes + 1) * sizeof(tconv_node *));
    if (!s.nodes)
        return tc_error_nomem(err, "the topological sort");
    tconv_status st = TCONV_OK;
    for (tconv_node *n = graph->first; n && st == TCONV_OK; n = n->next) {
        if (s.n == graph->n_nodes)
            st = tc_error_set(err, TCONV_ERR_INVALID, "node list is longer than n_nodes");
        else if (!ptr_map_put(&s.index, n, s.n))
            st = tc_error_nomem(err, "the topological sort");
        else
            s.nodes[s.n++] = n;
    }
    if (st == TCONV_OK) {
        collect_edges(&s);
        st =
            s.nomem ? tc_error_nomem(err, "the topological sort") : kahn(&s, graph, reordered, err);
    }
    free(s.nodes);
    free(s.edges);
    ptr_map_free(&s.index);
    return st;
}

static tconv_status sort_tree(tconv_graph *graph, size_t *n_reordered, int depth, tc_error *err);

static tconv_status sort_node_subgraphs(tconv_node *node, size_t *n_reordered, int depth,
                                        tc_error *err) {
    for (size_t a = 0; a < node->n_attrs; a++) {
        tc_attr *attr = &node->attrs[a];
        tconv_status st = TCONV_OK;
        if (attr->type == TCONV_ATTR_GRAPH && attr->g)
            st = sort_tree(attr->g, n_reordered, depth + 1, err);
        for (size_t k = 0; st == TCONV_OK && attr->type == TCONV_ATTR_GRAPHS && k < attr->n; k++)
            st = attr->graphs[k] ? sort_tree(attr->graphs[k], n_reordered, depth + 1, err)
                                 : TCONV_OK;
        if (st != TCONV_OK) {
            tc_error_prefix(err, st, "attribute '%s': ", attr->name ? attr->name : "");
            return prefix_node(err, st, node);
        }
    }
    return TCONV_OK;
}

static tconv_status sort_tree(tconv_graph *graph, size_t *n_reordered, int depth, tc_error *err) {
    if (depth > VERIFY_MAX_DEPTH)
        return tc_error_set(err, TCONV_ERR_LIMIT, "subgraphs nested deeper than %d",
                            VERIFY_MAX_DEPTH);
    bool reordered;
    tconv_status st = sort_one(graph, &reordered, err);
    if (st == TCONV_OK && reordered)
        (*n_reordered)++;
    for (tconv_node *n = graph->first; st == TCONV_OK && n; n = n->next)
        st = sort_node_subgraphs(n, n_reordered, depth, err);
    return st == TCONV_OK ? TCONV_OK : prefix_graph(err, st, graph);
}

tconv_status tc_graph_sort_count(tconv_graph *graph, size_t *n_graphs_reordered, tc_error *err) {
    tc_error local;
    return sort_tree(graph, n_graphs_reordered, 0, err ? err : &local);
}

tconv_status tc_graph_sort_topologically(tconv_graph *graph, bool *reordered, tc_error *err) {
    size_t count = 0;
    tconv_status st = tc_graph_sort_count(graph, &count, err);
    if (reordered)
        *reordered = count > 0;
    return st;
}
