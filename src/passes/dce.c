/* dce: dead code elimination.
 *
 * A node is dead when none of its outputs is used: no node uses it (uses by nodes inside
 * subgraphs, i.e. captured outer values, are ordinary uses in the IR) and no graph lists it as an
 * output (a subgraph output may name an outer value directly: that counts too). Dead nodes go
 * through a worklist, so a dead chain disappears in one pass in time linear in the graph: removing
 * a node can only make the producers of its inputs dead. Removing a node that holds subgraphs
 * removes their nodes too, which releases the outer values they captured. Afterwards
 * initializers nothing uses and value_info entries of values that no longer exist are dropped.
 * Graph inputs are never removed.
 *
 * Scratch marks: value->mark counts the graph outputs (of any graph in the tree) that name the
 * value; node->mark is LIVE, QUEUED or REMOVED. */
#include "passes/pass.h"
#include "ir/vec.h"

#include <stdlib.h>

enum { NODE_LIVE = 0, NODE_QUEUED = 1, NODE_REMOVED = 2 };

typedef struct dce_ctx {
    tconv_node **stack;
    size_t n, cap;
    bool out_of_memory;
} dce_ctx;

/* ---------------------------------------------------------------- marks */

static void mark_values(const tc_value_info *list, size_t n, uint32_t mark) {
    for (size_t i = 0; i < n; i++) {
        if (list[i].value)
            list[i].value->mark = mark;
    }
}

static tconv_status reset_marks(tconv_graph *graph, void *unused);

static tconv_status reset_node(tconv_node *node) {
    node->mark = NODE_LIVE;
    for (size_t i = 0; i < node->n_inputs; i++) {
        if (node->inputs[i])
            node->inputs[i]->mark = 0;
    }
    for (size_t i = 0; i < node->n_outputs; i++) {
        if (node->outputs[i])
            node->outputs[i]->mark = 0;
    }
    return tc_node_for_each_subgraph(node, reset_marks, NULL);
}

/* Zeroes the marks of every node and every value the graph tree mentions. */
static tconv_status reset_marks(tconv_graph *graph, void *unused) {
    (void)unused;
    mark_values(graph->inputs, graph->n_inputs, 0);
    mark_values(graph->outputs, graph->n_outputs, 0);
    mark_values(graph->value_info, graph->n_value_info, 0);
    for (size_t i = 0; i < graph->n_initializers; i++) {
        if (graph->initializers[i]->value)
            graph->initializers[i]->value->mark = 0;
    }
    for (tconv_node *node = graph->first; node; node = node->next)
        reset_node(node);
    return TCONV_OK;
}

/* value->mark += 1 for each graph output naming it, in the whole tree. */
static tconv_status count_output_refs(tconv_graph *graph, void *unused) {
    (void)unused;
    for (size_t i = 0; i < graph->n_outputs; i++) {
        if (graph->outputs[i].value)
            graph->outputs[i].value->mark++;
    }
    for (tconv_node *node = graph->first; node; node = node->next)
        tc_node_for_each_subgraph(node, count_output_refs, NULL);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- the worklist */

static bool value_needed(const tconv_value *value) {
    return value->n_uses > 0 || value->mark > 0;
}

static bool node_dead(const tconv_node *node) {
    for (size_t i = 0; i < node->n_outputs; i++) {
        if (node->outputs[i] && value_needed(node->outputs[i]))
            return false;
    }
    return true;
}

static void push(dce_ctx *ctx, tconv_node *node) {
    if (!TC_VEC_RESERVE(ctx->stack, ctx->cap, ctx->n + 1)) {
        ctx->out_of_memory = true;
        return;
    }
    node->mark = NODE_QUEUED;
    ctx->stack[ctx->n++] = node;
}

/* The producer of a value that just lost a use or an output reference may now be dead. */
static void reconsider(dce_ctx *ctx, const tconv_value *value) {
    tconv_node *producer = value ? value->producer : NULL;
    if (producer && producer->mark == NODE_LIVE && node_dead(producer))
        push(ctx, producer);
}

static void remove_node(dce_ctx *ctx, tconv_node *node);

/* The subgraph of a removed node: its outputs no longer keep values alive, its nodes go. */
static tconv_status release_subgraph(tconv_graph *sub, void *ctx) {
    for (size_t i = 0; i < sub->n_outputs; i++) {
        if (sub->outputs[i].value)
            sub->outputs[i].value->mark--;
    }
    tconv_node *next;
    for (tconv_node *inner = sub->first; inner; inner = next) {
        next = inner->next;
        if (inner->mark != NODE_REMOVED)
            remove_node(ctx, inner);
    }
    for (size_t i = 0; i < sub->n_outputs; i++)
        reconsider(ctx, sub->outputs[i].value);
    return TCONV_OK;
}

static void remove_node(dce_ctx *ctx, tconv_node *node) {
    node->mark = NODE_REMOVED;
    tc_node_for_each_subgraph(node, release_subgraph, ctx);
    tc_graph_remove_node(node->graph, node); /* drops the uses; inputs[] stays readable */
    for (size_t i = 0; i < node->n_inputs; i++)
        reconsider(ctx, node->inputs[i]);
}

static tconv_status queue_dead_nodes(tconv_graph *graph, void *ctx) {
    for (tconv_node *node = graph->last; node; node = node->prev) {
        tc_node_for_each_subgraph(node, queue_dead_nodes, ctx);
        if (node->mark == NODE_LIVE && node_dead(node))
            push(ctx, node);
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- initializers, value_info */

static bool initializer_used(const tconv_tensor *tensor, void *unused) {
    (void)unused;
    const tconv_value *v = tensor->value;
    return !v || v->is_graph_input || value_needed(v);
}

static bool value_exists(const tconv_value *v, void *unused) {
    (void)unused;
    return v && (v->producer || v->initializer || v->is_graph_input || value_needed(v));
}

static tconv_status prune_graph(tconv_graph *graph, void *unused) {
    tc_graph_retain_initializers(graph, initializer_used, NULL);
    tc_graph_retain_value_info(graph, value_exists, NULL);
    for (tconv_node *node = graph->first; node; node = node->next)
        tc_node_for_each_subgraph(node, prune_graph, unused);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- the pass */

tconv_status tc_pass_dce(tconv_graph *graph, const tc_pass_options *options, tc_error *err) {
    (void)options;
    dce_ctx ctx = {NULL, 0, 0, false};
    reset_marks(graph, NULL);
    count_output_refs(graph, NULL);
    queue_dead_nodes(graph, &ctx);
    while (ctx.n > 0 && !ctx.out_of_memory) {
        tconv_node *node = ctx.stack[--ctx.n];
        if (node->mark != NODE_REMOVED)
            remove_node(&ctx, node);
    }
    free(ctx.stack);
    if (ctx.out_of_memory)
        return tc_error_nomem(err, "the dead code worklist");
    prune_graph(graph, NULL);
    return TCONV_OK;
}
