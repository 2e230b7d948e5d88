/* Execution planning: value slots, kernels, a topological step order and buffer lifetimes
 * (each intermediate value is released after its last use, counting uses by subgraphs that
 * read it from the enclosing scope). */
#include "runtime/session/session_internal.h"
#include "ir/index_heap.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- small helpers */

static bool grow(tc_session *s, void **array, size_t *cap, size_t elem, size_t need) {
    return tc_arena_grow_array(s->arena, array, cap, elem, need);
}

static void *alloc_array(tc_session *s, size_t count, size_t elem) {
    return tc_arena_calloc(s->arena, count ? count : 1, elem);
}

static const char *describe(const tconv_node *node, char *buf, size_t size) {
    return tc_node_describe(node, buf, size);
}

static bool plan_slot(const tc_graph_plan *plan, const char *name, uint32_t *slot) {
    void *v = tc_name_map_get(&plan->slot_of, name);
    if (!v)
        return false;
    *slot = (uint32_t)((uintptr_t)v - 1);
    return true;
}

/* ---------------------------------------------------------------- slots */

static tconv_status add_slot(tc_session *s, tc_graph_plan *plan, size_t *cap,
                             const tconv_value *value, tc_error *err) {
    if (!value || tc_name_map_contains(&plan->slot_of, value->name))
        return TCONV_OK;
    if (plan->n_slots >= UINT32_MAX - 1)
        return tc_error_set(err, TCONV_ERR_LIMIT, "too many values in one graph");
    if (!grow(s, (void **)&plan->slot_values, cap, sizeof *plan->slot_values, plan->n_slots + 1) ||
        !tc_name_map_put(&plan->slot_of, value->name, (void *)(uintptr_t)(plan->n_slots + 1)))
        return tc_error_nomem(err, "an execution plan");
    plan->slot_values[plan->n_slots++] = value;
    return TCONV_OK;
}

/* One slot for every value the graph defines: inputs, initializers, node outputs. */
static tconv_status assign_slots(tc_session *s, tc_graph_plan *plan, tc_error *err) {
    const tconv_graph *g = plan->graph;
    size_t cap = 0;
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < g->n_inputs; i++)
        st = add_slot(s, plan, &cap, g->inputs[i].value, err);
    for (size_t i = 0; st == TCONV_OK && i < g->n_initializers; i++)
        st = add_slot(s, plan, &cap, g->initializers[i]->value, err);
    for (const tconv_node *n = g->first; st == TCONV_OK && n; n = n->next) {
        for (size_t k = 0; st == TCONV_OK && k < n->n_outputs; k++)
            st = add_slot(s, plan, &cap, n->outputs[k], err);
    }
    if (st != TCONV_OK)
        return st;
    plan->constants = alloc_array(s, plan->n_slots, sizeof *plan->constants);
    plan->producer_step = alloc_array(s, plan->n_slots, sizeof *plan->producer_step);
    if (!plan->constants || !plan->producer_step)
        return tc_error_nomem(err, "an execution plan");
    for (size_t i = 0; i < plan->n_slots; i++)
        plan->producer_step[i] = -1;
    return TCONV_OK;
}

static tconv_status load_constants(tc_session *s, tc_graph_plan *plan, tc_error *err) {
    const tconv_graph *g = plan->graph;
    for (size_t i = 0; i < g->n_initializers; i++) {
        tconv_tensor *t = g->initializers[i];
        uint32_t slot;
        if (!t->value || !plan_slot(plan, t->value->name, &slot))
            continue;
        tc_rt_tensor_release(&plan->constants[slot]);
        tconv_status st = tc_plan_check_constant(s, t, err);
        if (st == TCONV_OK)
            st = tc_rt_tensor_from_ir(t, &plan->constants[slot], err);
        if (st != TCONV_OK)
            return tc_error_prefix(err, st, "initializer '%s': ", t->name ? t->name : "");
        s->budget.stats.constant_bytes += plan->constants[slot].nbytes;
    }
    return TCONV_OK;
}

/* Sequences, maps, optionals and sparse tensors (TCONV_TYPE_OTHER) as graph inputs or outputs:
 * refused up front, with a message that says so (their data files are no TensorProto). */
static tconv_status refuse_non_tensors(const tconv_graph *g, tc_error *err) {
    for (size_t i = 0; i < g->n_inputs + g->n_outputs; i++) {
        bool input = i < g->n_inputs;
        const tconv_value *v = input ? g->inputs[i].value : g->outputs[i - g->n_inputs].value;
        if (v && v->type.kind == TCONV_TYPE_OTHER)
            return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                                "graph %s '%s' is a sequence, map, optional or sparse tensor: "
                                "the runtime runs dense tensors only",
                                input ? "input" : "output", v->name);
    }
    return TCONV_OK;
}

static tconv_status collect_graph_inputs(tc_session *s, tc_graph_plan *plan, tc_error *err) {
    const tconv_graph *g = plan->graph;
    plan->inputs = alloc_array(s, g->n_inputs, sizeof *plan->inputs);
    if (!plan->inputs)
        return tc_error_nomem(err, "an execution plan");
    for (size_t i = 0; i < g->n_inputs; i++) {
        const tconv_value *v = g->inputs[i].value;
        uint32_t slot;
        if (v && !v->initializer && plan_slot(plan, v->name, &slot))
            plan->inputs[plan->n_inputs++] = slot;
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- resolving values */

/* Finds the scope that defines value and its slot there. */
static tconv_status resolve_value(const tc_graph_plan *plan, const tconv_value *value,
                                  const tconv_node *user, tc_slot_ref *out, tc_error *err) {
    uint32_t up = 0;
    for (const tc_graph_plan *p = plan; p; p = p->parent, up++) {
        if (value->graph != p->graph)
            continue;
        uint32_t slot;
        if (plan_slot(p, value->name, &slot)) {
            out->up = up;
            out->slot = slot;
            return TCONV_OK;
        }
        break;
    }
    char where[256];
    if (user)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "%s: input '%s' is not defined (no producer, graph input or "
                            "initializer in this graph or an enclosing one)",
                            describe(user, where, sizeof where), value->name);
    return tc_error_set(err, TCONV_ERR_INVALID,
                        "graph output '%s' is not defined by a node, input or initializer",
                        value->name);
}

/* ---------------------------------------------------------------- captures */

typedef struct capture_ctx {
    tc_session *session;
    const tc_graph_plan *plan;
    tc_step_plan *step;
    tc_error *err;
} capture_ctx;

static tconv_status add_capture(capture_ctx *c, const tconv_value *v) {
    uint32_t slot;
    if (!v || v->graph != c->plan->graph || !plan_slot(c->plan, v->name, &slot))
        return TCONV_OK;
    tc_step_plan *step = c->step;
    if (!grow(c->session, (void **)&step->captures, &step->cap_captures, sizeof(uint32_t),
              step->n_captures + 1))
        return tc_error_nomem(c->err, "an execution plan");
    step->captures[step->n_captures++] = slot;
    return TCONV_OK;
}

/* Values of the plan's graph read anywhere inside subgraph `sub` (nested ones included). */
static tconv_status collect_captures(tconv_graph *sub, void *vctx) {
    capture_ctx *c = vctx;
    for (tconv_node *n = sub->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_inputs; i++) {
            tconv_status st = add_capture(c, n->inputs[i]);
            if (st != TCONV_OK)
                return st;
        }
        tconv_status st = tc_node_for_each_subgraph(n, collect_captures, c);
        if (st != TCONV_OK)
            return st;
    }
    for (size_t i = 0; i < sub->n_outputs; i++) {
        tconv_status st = add_capture(c, sub->outputs[i].value);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- topological order */

typedef struct order_state {
    const tconv_node **nodes; /* graph order */
    size_t n;
    size_t *remaining; /* unmet dependencies per node */
    size_t **succ;     /* successor node indices */
    size_t *n_succ, *cap_succ;
} order_state;

static tconv_status add_edge(tc_session *s, order_state *o, size_t from, size_t to, tc_error *err) {
    if (!grow(s, (void **)&o->succ[from], &o->cap_succ[from], sizeof(size_t), o->n_succ[from] + 1))
        return tc_error_nomem(err, "an execution plan");
    o->succ[from][o->n_succ[from]++] = to;
    o->remaining[to]++;
    return TCONV_OK;
}

/* Kahn's algorithm over data dependencies (inputs and captured values), taking the earliest
 * ready node first (tc_index_heap) so a sorted graph keeps its order. */
static tconv_status order_steps(tc_session *s, tc_graph_plan *plan, const tc_step_plan *unordered,
                                order_state *o, tc_error *err) {
    size_t *node_of_slot = alloc_array(s, plan->n_slots, sizeof(size_t));
    size_t *ready = alloc_array(s, o->n, sizeof(size_t));
    if (!node_of_slot || !ready)
        return tc_error_nomem(err, "an execution plan");
    for (size_t i = 0; i < plan->n_slots; i++)
        node_of_slot[i] = SIZE_MAX;
    for (size_t i = 0; i < o->n; i++) {
        for (size_t k = 0; k < unordered[i].n_outputs; k++) {
            if (unordered[i].outputs[k] != TC_NO_SLOT)
                node_of_slot[unordered[i].outputs[k]] = i;
        }
    }
    for (size_t i = 0; i < o->n; i++) {
        const tc_step_plan *st = &unordered[i];
        for (size_t k = 0; k < st->n_inputs + st->n_captures; k++) {
            uint32_t slot;
            if (k < st->n_inputs) {
                if (st->inputs[k].slot == TC_NO_SLOT || st->inputs[k].up != 0)
                    continue;
                slot = st->inputs[k].slot;
            } else {
                slot = st->captures[k - st->n_inputs];
            }
            size_t from = node_of_slot[slot];
            if (from == SIZE_MAX)
                continue;
            tconv_status status = add_edge(s, o, from, i, err);
            if (status != TCONV_OK)
                return status;
        }
    }
    size_t n_ready = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (o->remaining[i] == 0)
            tc_index_heap_push(ready, &n_ready, i);
    }
    size_t placed = 0;
    while (n_ready > 0) {
        size_t i = tc_index_heap_pop(ready, &n_ready);
        plan->steps[placed++] = unordered[i];
        for (size_t k = 0; k < o->n_succ[i]; k++) {
            size_t j = o->succ[i][k];
            if (--o->remaining[j] == 0)
                tc_index_heap_push(ready, &n_ready, j);
        }
    }
    if (placed != o->n) {
        for (size_t i = 0; i < o->n; i++) {
            if (o->remaining[i] != 0) {
                char where[256];
                return tc_error_set(err, TCONV_ERR_INVALID,
                                    "%s is on a dependency cycle (or depends on one)",
                                    describe(o->nodes[i], where, sizeof where));
            }
        }
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- steps */

/* A prepare that refuses its node: the node fails when it runs, as it did before it was
 * prepared (a branch never taken still plans), with prepare's status and message. */
typedef struct refused_kernel {
    tconv_status status;
    char message[TC_ERROR_MESSAGE_MAX];
} refused_kernel;

static tconv_status run_refused(tc_kernel_ctx *ctx) {
    const refused_kernel *r = ctx->params;
    return tc_error_set(ctx->err, r->status, "%s", r->message);
}

/* The step's kernel prepared once (kernel.h), its input names kept for messages. */
static tconv_status prepare_kernel(tc_session *s, tc_step_plan *step, tc_error *err) {
    const tconv_node *node = step->node;
    const char **names = alloc_array(s, node->n_inputs, sizeof *names);
    if (!names)
        return tc_error_nomem(err, "an execution plan");
    for (size_t i = 0; i < node->n_inputs; i++)
        names[i] = node->inputs[i] && node->inputs[i]->name ? node->inputs[i]->name : "";
    step->input_names = names;
    tc_error local;
    tc_error_clear(&local);
    tc_kernel_prepare_ctx pc = {
        .node = node, .op = node->op, .opset = step->opset, .arena = s->arena, .err = &local};
    tc_kernel_prepared prepared;
    tconv_status st = tc_kernel_prepare(&pc, &prepared);
    if (st == TCONV_ERR_NOMEM)
        return tc_error_set(err, st, "%s", local.message);
    if (st != TCONV_OK) {
        refused_kernel *r = tc_arena_calloc(s->arena, 1, sizeof *r);
        if (!r)
            return tc_error_nomem(err, "an execution plan");
        r->status = st;
        memcpy(r->message, local.message, sizeof r->message);
        prepared = (tc_kernel_prepared){.run = run_refused, .params = r};
    }
    step->kernel = prepared.run;
    step->params = prepared.params;
    step->work = prepared.work;
    step->node_free = !prepared.reads_node;
    step->epilogues = prepared.epilogues;
    return TCONV_OK;
}

static tconv_status plan_kernel(tc_session *s, tc_step_plan *step, tc_error *err) {
    const tconv_node *node = step->node;
    const char *domain = node->domain && *node->domain ? node->domain : "ai.onnx";
    step->opset = tc_graph_opset(node->graph, node->domain); /* a function body's own */
    char where[256];
    if (step->opset <= 0)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                            "%s: op %s of domain '%s' (opset not imported by the model): no "
                            "kernel",
                            describe(node, where, sizeof where), node->op_type, domain);
    step->half_native = tc_op_half_native(node->op);
    if (tc_kernel_for(node->op)) {
        tconv_status st = tc_kernel_check_node_attrs(node, node->op, step->opset, err);
        if (st == TCONV_OK)
            st = prepare_kernel(s, step, err);
        return st == TCONV_OK
                   ? TCONV_OK
                   : tc_error_prefix(err, st, "%s: ", describe(node, where, sizeof where));
    }
    tconv_status fst = tc_plan_function_call(s, step, err);
    if (fst != TCONV_OK)
        return tc_error_prefix(err, fst, "%s: ", describe(node, where, sizeof where));
    if (step->kernel)
        return TCONV_OK;
    int first, last;
    if (tc_op_kernel_span(node->domain, node->op_type, &first, &last))
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                            "%s: unsupported op %s (domain '%s', opset %lld): tconv has "
                            "kernels for opsets %d to %d only",
                            describe(node, where, sizeof where), node->op_type, domain,
                            (long long)step->opset, first, last);
    return tc_error_set(
        err, TCONV_ERR_UNSUPPORTED, "%s: unsupported op %s (domain '%s', opset %lld): no kernel",
        describe(node, where, sizeof where), node->op_type, domain, (long long)step->opset);
}

static tconv_status plan_io(tc_session *s, tc_graph_plan *plan, tc_step_plan *step, tc_error *err) {
    const tconv_node *node = step->node;
    step->n_inputs = node->n_inputs;
    step->n_outputs = node->n_outputs;
    step->inputs = alloc_array(s, node->n_inputs, sizeof *step->inputs);
    step->outputs = alloc_array(s, node->n_outputs, sizeof *step->outputs);
    if (!step->inputs || !step->outputs)
        return tc_error_nomem(err, "an execution plan");
    for (size_t i = 0; i < node->n_inputs; i++) {
        step->inputs[i].up = 0;
        step->inputs[i].slot = TC_NO_SLOT;
        if (!node->inputs[i])
            continue;
        tconv_status st = resolve_value(plan, node->inputs[i], node, &step->inputs[i], err);
        if (st != TCONV_OK)
            return st;
    }
    for (size_t i = 0; i < node->n_outputs; i++) {
        step->outputs[i] = TC_NO_SLOT;
        if (node->outputs[i] && !plan_slot(plan, node->outputs[i]->name, &step->outputs[i]))
            return tc_error_nomem(err, "an execution plan");
    }
    if (node->n_inputs > plan->max_inputs)
        plan->max_inputs = node->n_inputs;
    if (node->n_outputs > plan->max_outputs)
        plan->max_outputs = node->n_outputs;
    return TCONV_OK;
}

typedef struct subplan_ctx {
    tc_session *session;
    tc_graph_plan *plan;
    tc_step_plan *step;
    tc_error *err;
} subplan_ctx;

static tconv_status build_subplan(tconv_graph *sub, void *vctx) {
    subplan_ctx *c = vctx;
    tc_graph_plan *subplan;
    tconv_status st = tc_plan_build(c->session, sub, c->plan, &subplan, c->err);
    if (st != TCONV_OK)
        return st;
    tc_step_plan *step = c->step;
    if (!grow(c->session, (void **)&step->subplans, &step->cap_subplans, sizeof subplan,
              step->n_subplans + 1))
        return tc_error_nomem(c->err, "an execution plan");
    step->subplans[step->n_subplans++] = subplan;
    return TCONV_OK;
}

/* A function body's plan: a scope of its own (no outer values), kept with the step's subplans
 * (tc_session_run_subgraph finds it there). */
static tconv_status build_function_subplan(tc_session *s, tc_step_plan *step, tconv_graph *body,
                                           tc_error *err) {
    tc_graph_plan *subplan;
    s->function_depth++;
    tconv_status st = tc_plan_build(s, body, NULL, &subplan, err);
    s->function_depth--;
    if (st != TCONV_OK) {
        char where[256];
        return tc_error_prefix(
            err, st, "%s: function body '%s': ", describe(step->node, where, sizeof where),
            body->name ? body->name : "");
    }
    if (!grow(s, (void **)&step->subplans, &step->cap_subplans, sizeof subplan,
              step->n_subplans + 1))
        return tc_error_nomem(err, "an execution plan");
    step->subplans[step->n_subplans++] = subplan;
    return TCONV_OK;
}

static tconv_status plan_step(tc_session *s, tc_graph_plan *plan, tc_step_plan *step,
                              tc_error *err) {
    tconv_status st = plan_kernel(s, step, err);
    if (st == TCONV_OK)
        st = plan_io(s, plan, step, err);
    if (st != TCONV_OK)
        return st;
    tconv_node *node = (tconv_node *)step->node;
    subplan_ctx sc = {s, plan, step, err};
    st = tc_node_for_each_subgraph(node, build_subplan, &sc);
    if (st != TCONV_OK) {
        char where[256];
        if (strncmp(err->message, "node ", 5) != 0)
            tc_error_prefix(err, st, "%s: subgraph: ", describe(node, where, sizeof where));
        return st;
    }
    capture_ctx cc = {s, plan, step, err};
    st = tc_node_for_each_subgraph(node, collect_captures, &cc);
    for (size_t i = 0; st == TCONV_OK && i < step->n_functions; i++)
        st = build_function_subplan(s, step, step->functions[i]->body, err);
    return st;
}

static tconv_status plan_steps(tc_session *s, tc_graph_plan *plan, tc_error *err) {
    const tconv_graph *g = plan->graph;
    size_t n = 0;
    for (const tconv_node *node = g->first; node; node = node->next)
        n++;
    tc_step_plan *unordered = alloc_array(s, n, sizeof *unordered);
    plan->steps = alloc_array(s, n, sizeof *plan->steps);
    order_state o = {0};
    o.n = n;
    o.nodes = alloc_array(s, n, sizeof *o.nodes);
    o.remaining = alloc_array(s, n, sizeof *o.remaining);
    o.succ = alloc_array(s, n, sizeof *o.succ);
    o.n_succ = alloc_array(s, n, sizeof *o.n_succ);
    o.cap_succ = alloc_array(s, n, sizeof *o.cap_succ);
    if (!unordered || !plan->steps || !o.nodes || !o.remaining || !o.succ || !o.n_succ ||
        !o.cap_succ)
        return tc_error_nomem(err, "an execution plan");
    size_t i = 0;
    for (const tconv_node *node = g->first; node; node = node->next, i++) {
        o.nodes[i] = node;
        unordered[i].node = node;
        tconv_status st = plan_step(s, plan, &unordered[i], err);
        if (st != TCONV_OK)
            return st;
    }
    plan->n_steps = n;
    tconv_status st = order_steps(s, plan, unordered, &o, err);
    tc_node_cache *caches = alloc_array(s, n, sizeof *caches);
    if (st == TCONV_OK && !caches)
        st = tc_error_nomem(err, "an execution plan");
    for (size_t k = 0; st == TCONV_OK && k < n; k++)
        plan->steps[k].cache = &caches[k];
    return st;
}

/* ---------------------------------------------------------------- outputs and lifetimes */

static tconv_status plan_outputs(tc_session *s, tc_graph_plan *plan, tc_error *err) {
    const tconv_graph *g = plan->graph;
    plan->outputs = alloc_array(s, g->n_outputs, sizeof *plan->outputs);
    if (!plan->outputs)
        return tc_error_nomem(err, "an execution plan");
    for (size_t i = 0; i < g->n_outputs; i++) {
        const tconv_value *v = g->outputs[i].value;
        if (!v)
            return tc_error_set(err, TCONV_ERR_INVALID, "graph output %zu has no value", i);
        tconv_status st = resolve_value(plan, v, NULL, &plan->outputs[i], err);
        if (st != TCONV_OK)
            return st;
    }
    plan->n_outputs = g->n_outputs;
    return TCONV_OK;
}

static tconv_status add_release(tc_session *s, tc_step_plan *step, uint32_t slot, tc_error *err) {
    if (!grow(s, (void **)&step->releases, &step->cap_releases, sizeof(uint32_t),
              step->n_releases + 1))
        return tc_error_nomem(err, "an execution plan");
    step->releases[step->n_releases++] = slot;
    return TCONV_OK;
}

static void note_use(int32_t *last_use, uint32_t slot, int32_t step) {
    if (last_use[slot] < step)
        last_use[slot] = step;
}

/* A value produced by a step is released after the last step that reads it (directly or from
 * a subgraph), or right after it is produced when nothing reads it. Graph outputs are kept. */
static tconv_status plan_lifetimes(tc_session *s, tc_graph_plan *plan, tc_error *err) {
    int32_t *last_use = alloc_array(s, plan->n_slots, sizeof *last_use);
    bool *keep = alloc_array(s, plan->n_slots, sizeof *keep);
    if (!last_use || !keep)
        return tc_error_nomem(err, "an execution plan");
    for (size_t i = 0; i < plan->n_slots; i++)
        last_use[i] = -1;
    for (size_t i = 0; i < plan->n_steps; i++) {
        tc_step_plan *step = &plan->steps[i];
        for (size_t k = 0; k < step->n_inputs; k++) {
            if (step->inputs[k].slot != TC_NO_SLOT && step->inputs[k].up == 0)
                note_use(last_use, step->inputs[k].slot, (int32_t)i);
        }
        for (size_t k = 0; k < step->n_captures; k++)
            note_use(last_use, step->captures[k], (int32_t)i);
        for (size_t k = 0; k < step->n_outputs; k++) {
            if (step->outputs[k] != TC_NO_SLOT)
                plan->producer_step[step->outputs[k]] = (int32_t)i;
        }
    }
    for (size_t i = 0; i < plan->n_outputs; i++) {
        if (plan->outputs[i].up == 0)
            keep[plan->outputs[i].slot] = true;
    }
    for (uint32_t slot = 0; slot < plan->n_slots; slot++) {
        int32_t p = plan->producer_step[slot];
        if (p < 0 || keep[slot])
            continue;
        int32_t at = last_use[slot] > p ? last_use[slot] : p;
        tconv_status st = add_release(s, &plan->steps[at], slot, err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- entry points */

static tconv_status register_plan(tc_session *s, tc_graph_plan *plan, tc_error *err) {
    if (!grow(s, (void **)&s->plans, &s->cap_plans, sizeof plan, s->n_plans + 1))
        return tc_error_nomem(err, "an execution plan");
    s->plans[s->n_plans++] = plan;
    return TCONV_OK;
}

tconv_status tc_plan_build(tc_session *session, const tconv_graph *graph, tc_graph_plan *parent,
                           tc_graph_plan **out, tc_error *err) {
    tc_graph_plan *plan = tc_arena_alloc(session->arena, sizeof *plan);
    if (!plan)
        return tc_error_nomem(err, "an execution plan");
    plan->graph = graph;
    plan->parent = parent;
    tc_name_map_init(&plan->slot_of);
    tconv_status st = register_plan(session, plan, err);
    if (st == TCONV_OK)
        st = assign_slots(session, plan, err);
    if (st == TCONV_OK)
        st = load_constants(session, plan, err);
    if (st == TCONV_OK)
        st = refuse_non_tensors(graph, err);
    if (st == TCONV_OK)
        st = collect_graph_inputs(session, plan, err);
    if (st == TCONV_OK)
        st = plan_steps(session, plan, err);
    if (st == TCONV_OK)
        st = plan_outputs(session, plan, err);
    if (st == TCONV_OK && !session->options.unfused)
        st = tc_plan_fold_constants(session, plan, err);
    if (st == TCONV_OK)
        st = plan_lifetimes(session, plan, err);
    if (st == TCONV_OK && !session->options.unfused)
        st = tc_plan_fuse_crops(session, plan, err);
    if (st == TCONV_OK && !session->options.unfused)
        st = tc_plan_fold_batchnorms(session, plan, err);
    if (st == TCONV_OK && !session->options.unfused)
        st = tc_plan_fuse_residuals(session, plan, err);
    if (st == TCONV_OK && !session->options.unfused)
        st = tc_plan_fuse_activations(session, plan, err);
    if (st == TCONV_OK)
        st = tc_plan_widen_constants(session, plan, err);
    if (st != TCONV_OK)
        return st;
    *out = plan;
    return TCONV_OK;
}

void tc_plan_free_all(tc_session *session) {
    for (size_t i = 0; i < session->n_plans; i++) {
        tc_graph_plan *plan = session->plans[i];
        tc_name_map_free(&plan->slot_of);
        for (size_t k = 0; plan->steps && k < plan->n_steps; k++)
            tc_node_cache_free(&session->budget, plan->steps[k].cache);
        for (size_t k = 0; plan->constants && k < plan->n_slots; k++)
            tc_rt_tensor_release(&plan->constants[k]);
        for (size_t k = 0; plan->wide_constants && k < plan->n_slots; k++)
            tc_rt_tensor_release(&plan->wide_constants[k]);
        for (size_t k = 0; plan->steps && k < plan->n_steps; k++) {
            for (size_t t = 0; plan->steps[k].folded && t < TC_FOLD_TENSORS; t++)
                tc_rt_tensor_release(&plan->steps[k].folded[t]);
        }
    }
    session->n_plans = 0;
}
