/* The executor: runs a planned graph step by step, keeps each value in a slot until its last
 * use, and runs subgraphs (If branches) with the enclosing scopes visible. */
#define _POSIX_C_SOURCE 200809L
#include "runtime/kernels/kernels.h"
#include "ir/check.h"
#include "runtime/session/session_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tensor bytes a session may hold at once unless told otherwise (session.h). */
#define TC_DEFAULT_MAX_MEMORY_BYTES ((uint64_t)16 << 30)

void tc_session_options_init(tc_session_options *options) {
    memset(options, 0, sizeof *options);
    uint64_t limit = TC_DEFAULT_MAX_MEMORY_BYTES;
    options->max_memory_bytes = limit > SIZE_MAX ? SIZE_MAX : (size_t)limit;
    options->max_work = TC_DEFAULT_MAX_WORK;
}

/* What the session's kernels may ask of it (kernel.h): kernels call the session only through
 * these, so that the kernels room calls nothing of this one. */
static const tc_kernel_host SESSION_HOST = {
    .input_is_constant = tc_session_input_is_constant,
    .run_subgraph = tc_session_run_subgraph,
};

static int default_thread_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n > 256 ? 256 : n) : 1;
}

tconv_status tc_session_create(tconv_model *model, const tc_session_options *options,
                               tc_session **out, tc_error *err) {
    *out = NULL;
    tc_error local;
    if (!err)
        err = &local;
    tc_error_clear(err);
    if (!model || !model->graph)
        return tc_error_set(err, TCONV_ERR_USAGE, "tc_session_create: no model");
    tc_session *s = calloc(1, sizeof *s);
    if (!s || !(s->arena = tc_arena_create())) {
        free(s);
        return tc_error_nomem(err, "a session");
    }
    s->model = model;
    if (options)
        s->options = *options;
    else
        tc_session_options_init(&s->options);
    s->budget.max_memory_bytes = s->options.max_memory_bytes;
    s->budget.max_work = s->options.max_work;
    s->host = &SESSION_HOST;
    s->n_threads = s->options.n_threads > 0 ? s->options.n_threads : default_thread_count();
    s->step_threads = s->n_threads;
    if (s->n_threads > 1 && !(s->own_pool = tc_thread_pool_create())) {
        s->options.types = NULL; /* the caller's again */
        tc_session_free(s);
        return tc_error_nomem(err, "the session's thread pool");
    }
    tconv_status st = tc_plan_build(s, model->graph, NULL, &s->main, err);
    s->options.refine_types = NULL; /* planning's alone: its context ends with the call */
    s->options.refine_ctx = NULL;
    if (st == TCONV_OK)
        st = tc_plan_check_memory(s, s->main, NULL, err);
    if (st == TCONV_OK)
        st = tc_plan_check_work(s, s->main, NULL, err);
    if (st != TCONV_OK) {
        s->options.types = NULL; /* the caller's again */
        tc_session_free(s);
        return st;
    }
    *out = s;
    return TCONV_OK;
}

static void env_free(tc_session *s, tc_run_env *env);

void tc_session_free(tc_session *session) {
    if (!session)
        return;
    if (session->main_env.slots)
        env_free(session, &session->main_env);
    tc_plan_free_all(session);
    tc_budget_free(&session->budget);
    tc_arena_destroy(session->arena);
    tc_thread_pool_destroy(session->own_pool);
    tc_tuning_free(session->tuning);
    if (session->options.types) {
        tc_type_table_free(session->options.types);
        free(session->options.types);
    }
    free(session);
}

void tc_session_set_pool(tc_session *session, tc_thread_pool *pool) {
    session->options.pool = pool;
}

void tc_session_set_thread_tuning(tc_session *session, bool enabled) {
    session->options.fixed_threads = !enabled;
    tc_tuning_free(session->tuning); /* measured anew when turned on again */
    session->tuning = NULL;
}

void tc_session_set_profile(tc_session *session, tc_profile *profile) {
    session->profile = profile;
}

void tc_session_recycle_output(tc_session *session, tc_rt_tensor *t) {
    tc_budget_recycle(tc_session_budget(session), t);
}

tconv_status tc_session_check_inputs(const tc_session *session, const tc_dim_binding *bindings,
                                     size_t n_bindings, tc_error *err) {
    tc_plan_dim_values bound = {bindings, n_bindings, false, 0};
    tconv_status st = tc_plan_check_memory(session, session->main, &bound, err);
    return st == TCONV_OK ? tc_plan_check_work(session, session->main, &bound, err) : st;
}

void tc_session_get_stats(const tc_session *session, tc_session_stats *stats) {
    *stats = session->budget.stats;
}

size_t tc_session_input_count(const tc_session *session) {
    return session->main->n_inputs;
}

const tconv_value *tc_session_input(const tc_session *session, size_t index) {
    const tc_graph_plan *p = session->main;
    return index < p->n_inputs ? p->slot_values[p->inputs[index]] : NULL;
}

size_t tc_session_output_count(const tc_session *session) {
    return session->main->n_outputs;
}

const tconv_value *tc_session_output(const tc_session *session, size_t index) {
    const tconv_graph *g = session->main->graph;
    return index < g->n_outputs ? g->outputs[index].value : NULL;
}

/* ---------------------------------------------------------------- environments */

static tconv_status env_init(tc_run_env *env, const tc_graph_plan *plan, const tc_run_env *parent,
                             tc_error *err) {
    memset(env, 0, sizeof *env);
    env->plan = plan;
    env->parent = parent;
    env->slots = calloc(plan->n_slots ? plan->n_slots : 1, sizeof *env->slots);
    env->input_ptrs = calloc(plan->max_inputs ? plan->max_inputs : 1, sizeof *env->input_ptrs);
    env->outputs = calloc(plan->max_outputs ? plan->max_outputs : 1, sizeof *env->outputs);
    if (!env->slots || !env->input_ptrs || !env->outputs) {
        free(env->slots);
        free(env->input_ptrs);
        free(env->outputs);
        return tc_error_nomem(err, "a graph environment");
    }
    for (size_t i = 0; i < plan->n_slots; i++) {
        if (plan->constants[i].dtype != TCONV_DTYPE_UNDEFINED) {
            env->slots[i] = plan->constants[i];
            env->slots[i].owns_data = false; /* a view of the session's copy */
        }
    }
    return TCONV_OK;
}

static void env_free(tc_session *s, tc_run_env *env) {
    for (size_t i = 0; env->slots && i < env->plan->n_slots; i++)
        tc_session_release(s, &env->slots[i]);
    free(env->slots);
    free(env->input_ptrs);
    free(env->outputs);
    memset(env, 0, sizeof *env);
}

/* Empties every slot but the constants' (views, as env_init left them): the main graph's
 * environment is kept from run to run, so a run pays for the slots its steps fill, not for the
 * whole graph's (an export of 751 nodes whose 689 folded values stay constants). */
static void env_clear(tc_session *s, tc_run_env *env) {
    const tc_graph_plan *plan = env->plan;
    for (size_t i = 0; i < plan->n_slots; i++) {
        if (env->slots[i].dtype != TCONV_DTYPE_UNDEFINED &&
            plan->constants[i].dtype == TCONV_DTYPE_UNDEFINED)
            tc_session_release(s, &env->slots[i]);
    }
}

static tc_rt_tensor *env_at(const tc_run_env *env, tc_slot_ref ref) {
    for (uint32_t i = 0; i < ref.up && env; i++)
        env = env->parent;
    /* the planner resolved `up` against the same nesting the runs build */
    if (TC_NEVER(!env) || TC_NEVER(ref.slot >= env->plan->n_slots))
        return NULL;
    return &env->slots[ref.slot];
}

/* ---------------------------------------------------------------- steps */

static tconv_status gather_inputs(const tc_run_env *env, const tc_step_plan *step, tc_error *err) {
    for (size_t i = 0; i < step->n_inputs; i++) {
        env->input_ptrs[i] = NULL;
        if (step->inputs[i].slot == TC_NO_SLOT)
            continue;
        const tc_rt_tensor *t = env_at(env, step->inputs[i]);
        if (!t || t->dtype == TCONV_DTYPE_UNDEFINED)
            return tc_error_set(err, TCONV_ERR_INVALID, "input %zu ('%s') has no value", i,
                                step->node->inputs[i]->name);
        env->input_ptrs[i] = t;
    }
    return TCONV_OK;
}

static tconv_status check_outputs_produced(const tc_run_env *env, const tc_step_plan *step,
                                           tc_error *err) {
    for (size_t i = 0; i < step->n_outputs; i++) {
        if (step->outputs[i] != TC_NO_SLOT && env->outputs[i].dtype == TCONV_DTYPE_UNDEFINED)
            return tc_error_set(err, TCONV_ERR_INVALID, "the kernel did not produce output %zu", i);
    }
    return TCONV_OK;
}

static tconv_status prefix_node(const tc_step_plan *step, tconv_status st, tc_error *err) {
    if (err->message[0] == '\0')
        tc_error_set(err, st, "kernel failed (%s)", tconv_status_name(st));
    err->status = st;
    char where[256];
    const tconv_node *node = step->node;
    const char *domain = node->domain && *node->domain ? node->domain : "ai.onnx";
    tc_node_describe(node, where, sizeof where);
    size_t len = strlen(where);
    if (strncmp(err->message, where, len) == 0 && strncmp(err->message + len, ": ", 2) == 0)
        memmove(err->message, err->message + len + 2, strlen(err->message + len + 2) + 1);
    tc_error_prefix(err, st, "%s [%s %s-%lld]: ", where, domain, node->op_type,
                    (long long)step->opset);
    return st;
}

/* The step's outputs are in their slots: the profiler notes them, then the values whose last
 * use this step was are released. */
static void finish_step(tc_session *s, tc_run_env *env, const tc_step_plan *step) {
    if (s->profile)
        tc_profile_note_outputs(s->profile, env->slots, step->outputs, step->n_outputs);
    for (size_t i = 0; i < step->n_releases; i++) {
        TC_ASSERT(step->releases[i] < env->plan->n_slots);
        tc_session_release(s, &env->slots[step->releases[i]]);
    }
}

/* A Slice fused into its producer: the producer's output already is the Slice's result. */
static void forward_input(tc_session *s, tc_run_env *env, const tc_step_plan *step) {
    TC_ASSERT(step->forward_from < step->n_inputs && step->inputs[step->forward_from].up == 0);
    TC_ASSERT(step->inputs[step->forward_from].slot < env->plan->n_slots &&
              step->outputs[0] < env->plan->n_slots);
    tc_rt_tensor *from = &env->slots[step->inputs[step->forward_from].slot];
    tc_rt_tensor *to = &env->slots[step->outputs[0]];
    tc_session_release(s, to);
    *to = *from;
    memset(from, 0, sizeof *from);
    finish_step(s, env, step);
}

/* Input 0's slot when nothing reads it after this step (it is released here, and no other input
 * of the step is the same value) and it owns its buffer: the kernel may take that buffer. */
static tc_rt_tensor *donor_slot(const tc_run_env *env, const tc_step_plan *step) {
    if (step->n_inputs == 0 || step->inputs[0].up != 0 || step->inputs[0].slot == TC_NO_SLOT)
        return NULL;
    uint32_t slot = step->inputs[0].slot;
    for (size_t k = 1; k < step->n_inputs; k++) {
        if (step->inputs[k].up == 0 && step->inputs[k].slot == slot)
            return NULL;
    }
    for (size_t i = 0; i < step->n_releases; i++) {
        if (step->releases[i] == slot)
            return env->slots[slot].owns_data ? &env->slots[slot] : NULL;
    }
    return NULL;
}

static tconv_status run_step(tc_session *s, tc_run_env *env, const tc_step_plan *step,
                             tc_error *err) {
    if (step->forwards_input) {
        forward_input(s, env, step);
        return TCONV_OK;
    }
    tconv_status st = gather_inputs(env, step, err);
    if (st != TCONV_OK)
        return prefix_node(step, st, err);
    memset(env->outputs, 0, step->n_outputs * sizeof *env->outputs);
    tc_kernel_ctx ctx;
    tc_step_kernel_ctx(&ctx, s, step, env->input_ptrs, env->outputs, err);
    ctx.donor = donor_slot(env, step);
    ctx.residual = step->residual ? env_at(env, *step->residual) : NULL;
    ctx.cache = step->cache;
    const tc_run_env *saved_env = s->current_env;
    const tc_step_plan *saved_step = s->current_step;
    s->current_env = env;
    s->current_step = step;
    err->message[0] = '\0';
    st = tc_step_run_kernel(step, &ctx);
    s->current_env = saved_env;
    s->current_step = saved_step;
    s->budget.stats.n_kernel_calls++;
    if (st == TCONV_OK)
        st = check_outputs_produced(env, step, err);
    if (st != TCONV_OK) {
        for (size_t i = 0; i < step->n_outputs; i++)
            tc_session_release(s, &env->outputs[i]);
        return prefix_node(step, st, err);
    }
    for (size_t i = 0; i < step->n_outputs; i++) {
        if (step->outputs[i] == TC_NO_SLOT) {
            tc_session_release(s, &env->outputs[i]);
            continue;
        }
        tc_rt_tensor *slot = &env->slots[step->outputs[i]];
        tc_session_release(s, slot);
        *slot = env->outputs[i];
        memset(&env->outputs[i], 0, sizeof env->outputs[i]);
    }
    finish_step(s, env, step);
    return TCONV_OK;
}

/* The node whose kernel computed a forwarding step's result: the producer of the value it
 * moves, through the steps that only move it too; NULL for a step that computes. */
static const tconv_node *fused_producer(const tc_graph_plan *plan, const tc_step_plan *step) {
    const tc_step_plan *at = step;
    while (at->forwards_input) {
        tc_slot_ref from = at->inputs[at->forward_from];
        int32_t p = from.up == 0 && from.slot != TC_NO_SLOT ? plan->producer_step[from.slot] : -1;
        if (p < 0)
            return NULL;
        at = &plan->steps[p];
    }
    return at == step ? NULL : at->node;
}

/* run_step timed, with the step's shapes and the threads its kernel used (profile.h). */
static tconv_status run_step_profiled(tc_session *s, tc_run_env *env, const tc_step_plan *step,
                                      tc_error *err) {
    tc_thread_pool *pool = s->options.pool ? s->options.pool : s->own_pool;
    for (size_t i = 0; i < step->n_inputs; i++)
        env->input_ptrs[i] =
            step->inputs[i].slot == TC_NO_SLOT ? NULL : env_at(env, step->inputs[i]);
    int64_t outer = tc_profile_current(s->profile);
    int64_t event = tc_profile_step_begin(s->profile, step->node, fused_producer(env->plan, step),
                                          env->input_ptrs, step->n_inputs);
    tc_profile_set_current(s->profile, event);
    tc_thread_pool_take_peak(pool);
    tconv_status st = run_step(s, env, step, err);
    tc_profile_step_end(s->profile, event, tc_thread_pool_take_peak(pool));
    tc_profile_set_current(s->profile, outer);
    return st;
}

static tconv_status run_any_step(tc_session *s, tc_run_env *env, const tc_step_plan *step,
                                 tc_error *err) {
    return s->profile ? run_step_profiled(s, env, step, err) : run_step(s, env, step, err);
}

static tconv_status run_steps(tc_session *s, tc_run_env *env, tc_error *err) {
    for (size_t i = 0; i < env->plan->n_steps; i++) {
        tconv_status st = run_any_step(s, env, &env->plan->steps[i], err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- measured thread caps */

/* The tuning for this run's input shapes, made on the first run that may use threads; NULL:
 * every step at n_threads (one thread, fixed_threads, or no memory for the figures). */
static tc_thread_tuning *run_tuning(tc_session *s, const tc_rt_tensor *inputs, size_t n_inputs,
                                    bool *timed) {
    *timed = false;
    if (s->options.fixed_threads || s->n_threads < 2 || s->main->n_steps == 0)
        return NULL;
    if (!s->tuning && !(s->tuning = tc_tuning_create(s->main->n_steps, s->n_threads)))
        return NULL;
    uint64_t key = TC_TUNING_NO_SHAPES;
    for (size_t i = 0; i < n_inputs; i++)
        key = tc_tuning_shapes_add(key, inputs[i].rank, inputs[i].dims);
    *timed = tc_tuning_run_begin(s->tuning, key);
    return s->tuning;
}

/* The main graph's steps, each with the cap its tuning gives it, timed while it measures. */
static tconv_status run_tuned_steps(tc_session *s, tc_run_env *env, tc_thread_tuning *tuning,
                                    bool timed, tc_error *err) {
    tconv_status st = TCONV_OK;
    int64_t run_start = tc_parallel_clock_ns();
    for (size_t i = 0; st == TCONV_OK && i < env->plan->n_steps; i++) {
        s->step_threads = tc_tuning_step_threads(tuning, i);
        int64_t start = timed ? tc_parallel_clock_ns() : 0;
        st = run_any_step(s, env, &env->plan->steps[i], err);
        if (timed && st == TCONV_OK)
            tc_tuning_step_time(tuning, i, tc_parallel_clock_ns() - start);
    }
    s->step_threads = s->n_threads;
    tc_tuning_run_end(tuning, st == TCONV_OK, tc_parallel_clock_ns() - run_start);
    return st;
}

/* ---------------------------------------------------------------- graph outputs */

static bool slot_used_by_later_output(const tc_graph_plan *plan, size_t index) {
    for (size_t k = index + 1; k < plan->n_outputs; k++) {
        if (plan->outputs[k].up == plan->outputs[index].up &&
            plan->outputs[k].slot == plan->outputs[index].slot)
            return true;
    }
    return false;
}

/* Output i: moved out of its slot when the graph owns it, else copied. `keep_accounted`: the
 * tensor stays inside the session (a subgraph's result), else it leaves to the caller. */
static tconv_status take_output(tc_session *s, tc_run_env *env, size_t index, bool keep_accounted,
                                tc_rt_tensor *dst, tc_error *err) {
    const tc_graph_plan *plan = env->plan;
    tc_rt_tensor *src = env_at(env, plan->outputs[index]);
    const char *name = plan->graph->outputs[index].value->name;
    if (!src || src->dtype == TCONV_DTYPE_UNDEFINED)
        return tc_error_set(err, TCONV_ERR_INVALID, "graph output '%s' was not computed", name);
    if (plan->outputs[index].up == 0 && src->owns_data && !slot_used_by_later_output(plan, index)) {
        *dst = *src;
        memset(src, 0, sizeof *src);
        if (!keep_accounted) {
            TC_ASSERT(s->budget.stats.live_bytes >= dst->nbytes);
            s->budget.stats.live_bytes -= dst->nbytes;
        }
        return TCONV_OK;
    }
    tconv_status st = keep_accounted
                          ? tc_session_alloc(s, dst, src->dtype, src->rank, src->dims, err)
                          : tc_rt_tensor_alloc(dst, src->dtype, src->rank, src->dims, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "graph output '%s': ", name);
    if (src->nbytes)
        memcpy(dst->data, src->data, src->nbytes);
    return TCONV_OK;
}

static tconv_status take_outputs(tc_session *s, tc_run_env *env, bool keep_accounted,
                                 tc_rt_tensor *outputs, tc_error *err) {
    size_t n = env->plan->n_outputs;
    for (size_t i = 0; i < n; i++)
        memset(&outputs[i], 0, sizeof outputs[i]);
    for (size_t i = 0; i < n; i++) {
        tconv_status st = take_output(s, env, i, keep_accounted, &outputs[i], err);
        if (st != TCONV_OK) {
            for (size_t k = 0; k < i; k++) {
                if (keep_accounted)
                    tc_session_release(s, &outputs[k]);
                else
                    tc_rt_tensor_release(&outputs[k]);
            }
            return st;
        }
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- checking caller inputs */

typedef struct dim_binding_set {
    tc_dim_binding items[64];
    size_t n;
} dim_binding_set;

static tconv_status bind_symbolic_dim(dim_binding_set *set, const char *input, int axis,
                                      const char *param, int64_t value, tc_error *err) {
    for (size_t i = 0; i < set->n; i++) {
        if (strcmp(set->items[i].name, param) != 0)
            continue;
        if (set->items[i].value != value)
            return tc_error_set(err, TCONV_ERR_INVALID,
                                "input '%s': dim %d ('%s') is %lld but another input gives "
                                "'%s' = %lld",
                                input, axis, param, (long long)value, param,
                                (long long)set->items[i].value);
        return TCONV_OK;
    }
    if (set->n < 64) {
        set->items[set->n].name = param;
        set->items[set->n++].value = value;
    }
    return TCONV_OK;
}

static tconv_status check_input(const tconv_value *v, const tc_rt_tensor *t,
                                dim_binding_set *bindings, tc_error *err) {
    const tc_type *type = &v->type;
    if (t->dtype == TCONV_DTYPE_UNDEFINED || (t->n_elements > 0 && !t->data))
        return tc_error_set(err, TCONV_ERR_USAGE, "input '%s': no data given", v->name);
    if (type->kind != TCONV_TYPE_TENSOR)
        return TCONV_OK;
    if (type->dtype != TCONV_DTYPE_UNDEFINED && type->dtype != t->dtype)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "input '%s': dtype %s given, the graph declares %s", v->name,
                            tconv_dtype_name(t->dtype), tconv_dtype_name(type->dtype));
    if (type->rank < 0)
        return TCONV_OK;
    if (type->rank != t->rank)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "input '%s': rank %d given, the graph declares rank %d", v->name,
                            t->rank, type->rank);
    for (int i = 0; i < t->rank; i++) {
        const tc_dim *d = &type->dims[i];
        if (d->kind == TCONV_DIM_STATIC && d->value != t->dims[i])
            return tc_error_set(err, TCONV_ERR_INVALID,
                                "input '%s': dim %d is %lld, the graph declares %lld", v->name, i,
                                (long long)t->dims[i], (long long)d->value);
        if (d->kind == TCONV_DIM_SYMBOLIC && d->param) {
            tconv_status st = bind_symbolic_dim(bindings, v->name, i, d->param, t->dims[i], err);
            if (st != TCONV_OK)
                return st;
        }
    }
    return TCONV_OK;
}

static tconv_status bind_inputs(tc_session *s, tc_run_env *env, const tc_rt_tensor *inputs,
                                size_t n_inputs, tc_error *err) {
    const tc_graph_plan *plan = env->plan;
    if (n_inputs != plan->n_inputs)
        return tc_error_set(err, TCONV_ERR_USAGE, "%zu inputs given, the graph needs %zu", n_inputs,
                            plan->n_inputs);
    dim_binding_set bindings = {0};
    uint64_t given = 0;
    for (size_t i = 0; i < n_inputs; i++) {
        uint32_t slot = plan->inputs[i];
        tconv_status st = check_input(plan->slot_values[slot], &inputs[i], &bindings, err);
        if (st != TCONV_OK)
            return st;
        env->slots[slot] = inputs[i];
        env->slots[slot].owns_data = false; /* borrowed from the caller */
        given += inputs[i].nbytes;
    }
    /* The inputs are held for the whole run: they count, and now that they fix the symbolic
     * dims, the plan is checked again before the first allocation. */
    s->budget.input_bytes = given > SIZE_MAX ? SIZE_MAX : (size_t)given;
    /* The replay depends only on the bound dims and the bytes held beside the plan: a run that
     * binds no symbolic dim and holds what the last one passed with needs none (run_checked). */
    uint64_t held[3] = {given, s->budget.stats.constant_bytes, s->budget.external_bytes};
    if (bindings.n == 0 && s->run_checked && memcmp(held, s->run_checked_held, sizeof held) == 0)
        return TCONV_OK;
    tc_plan_dim_values bound = {bindings.items, bindings.n, true, given};
    tconv_status st = tc_plan_check_memory(s, plan, &bound, err);
    if (st == TCONV_OK)
        st = tc_plan_check_work(s, plan, &bound, err);
    s->run_checked = st == TCONV_OK && bindings.n == 0;
    memcpy(s->run_checked_held, held, sizeof held);
    return st;
}

/* ---------------------------------------------------------------- running */

tconv_status tc_session_run(tc_session *session, const tc_rt_tensor *inputs, size_t n_inputs,
                            tc_rt_tensor *outputs, tc_error *err) {
    tc_error local;
    if (!err)
        err = &local;
    tc_error_clear(err);
    tconv_status st = TCONV_OK;
    if (!session->main_env.slots && (st = env_init(&session->main_env, session->main, NULL, err)))
        return st;
    tc_run_env *env = &session->main_env;
    session->budget.stats.live_bytes = 0;
    session->budget.stats.peak_live_bytes = 0;
    session->budget.stats.n_allocations = 0;
    session->budget.stats.n_kernel_calls = 0;
    session->budget.stats.work = 0;
    session->depth = 0;
    st = bind_inputs(session, env, inputs, n_inputs, err);
    if (st == TCONV_OK && session->profile)
        tc_profile_run_begin(session->profile);
    if (st == TCONV_OK) {
        bool timed;
        tc_thread_tuning *tuning = run_tuning(session, inputs, n_inputs, &timed);
        st = tuning ? run_tuned_steps(session, env, tuning, timed, err)
                    : run_steps(session, env, err);
    }
    if (session->profile)
        tc_profile_run_end(session->profile);
    if (st == TCONV_OK)
        st = take_outputs(session, env, false, outputs, err);
    env_clear(session, env);
    session->current_env = NULL;
    session->current_step = NULL;
    session->budget.input_bytes = 0;
    return st;
}

/* A body input's dtype must be the declared one; its shape is not checked: exporters declare
 * the first iteration's shape on loop-carried values whose shape changes (torch does, for a
 * tensor a loop grows by Concat), and onnxruntime runs those models. */
static tconv_status check_body_input(const tconv_value *v, const tc_rt_tensor *t, tc_error *err) {
    const tc_type *type = &v->type;
    if (type->kind == TCONV_TYPE_TENSOR && type->dtype != TCONV_DTYPE_UNDEFINED &&
        type->dtype != t->dtype)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "input '%s': dtype %s given, the graph declares %s", v->name,
                            tconv_dtype_name(t->dtype), tconv_dtype_name(type->dtype));
    return TCONV_OK;
}

static const tc_graph_plan *find_subplan(const tc_session *s, const tconv_graph *graph) {
    const tc_step_plan *step = s->current_step;
    for (size_t i = 0; step && i < step->n_subplans; i++) {
        if (step->subplans[i]->graph == graph)
            return step->subplans[i];
    }
    return NULL;
}

#define TC_MAX_SUBGRAPH_DEPTH 64
#define TC_SUBGRAPH_RUN_WORK 1024

tconv_status tc_session_run_subgraph(tc_kernel_ctx *ctx, const tconv_graph *graph,
                                     const tc_rt_tensor *inputs, size_t n_inputs,
                                     tc_rt_tensor *outputs, size_t n_outputs) {
    tc_session *s = ctx->session;
    const tc_graph_plan *plan = s ? find_subplan(s, graph) : NULL;
    if (!plan)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "subgraph '%s' has no execution plan",
                            graph->name ? graph->name : "");
    if (n_inputs != plan->n_inputs)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "subgraph '%s' declares %zu inputs, the node gives %zu",
                            graph->name ? graph->name : "", plan->n_inputs, n_inputs);
    if (n_outputs != plan->n_outputs)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "subgraph '%s' has %zu outputs, the node has %zu",
                            graph->name ? graph->name : "", plan->n_outputs, n_outputs);
    if (s->depth >= TC_MAX_SUBGRAPH_DEPTH)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "subgraphs nest deeper than %d",
                            TC_MAX_SUBGRAPH_DEPTH);
    /* A body run costs its dispatch whatever it computes (slots set up, steps visited, values
     * handed in and out): about a microsecond a step, counted as the elementwise work of that
     * time, so that a Loop over an empty body with a trip count of 2^62 meets the work limit. */
    tconv_status st = tc_budget_charge_work(
        &s->budget, TC_SUBGRAPH_RUN_WORK * (1 + (uint64_t)plan->n_steps + plan->n_slots), ctx->err);
    if (st != TCONV_OK)
        return st;
    tc_run_env env;
    st = env_init(&env, plan, s->current_env, ctx->err);
    if (st != TCONV_OK)
        return st;
    for (size_t i = 0; st == TCONV_OK && i < n_inputs; i++) {
        uint32_t slot = plan->inputs[i];
        st = check_body_input(plan->slot_values[slot], &inputs[i], ctx->err);
        env.slots[slot] = inputs[i];
        env.slots[slot].owns_data = false; /* borrowed from the control-flow kernel */
    }
    if (st != TCONV_OK) {
        env_free(s, &env);
        return tc_error_prefix(ctx->err, st, "in subgraph '%s': ", graph->name ? graph->name : "");
    }
    const tc_run_env *saved_env = s->current_env;
    const tc_step_plan *saved_step = s->current_step;
    s->depth++;
    st = run_steps(s, &env, ctx->err);
    if (st == TCONV_OK)
        st = take_outputs(s, &env, true, outputs, ctx->err);
    s->depth--;
    s->current_env = saved_env;
    s->current_step = saved_step;
    env_free(s, &env);
    if (st != TCONV_OK)
        tc_error_prefix(ctx->err, st, "in subgraph '%s': ", graph->name ? graph->name : "");
    return st;
}
