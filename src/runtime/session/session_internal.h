/* Session internals shared by session.c (running), session_plan.c (planning) and the files they
 * call. The session's memory and work are its budget (runtime/budget): the allocator, the
 * scratch arena and kept node data live there and call nothing here. Kernels reach the budget
 * through their context, and the session's own services (constant inputs, subgraph runs)
 * through the host it gives them (tc_kernel_host), so that no kernel calls into this room. */
#ifndef TC_RUNTIME_SESSION_INTERNAL_H
#define TC_RUNTIME_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/name_map.h"
#include "runtime/kernels/kernels.h"
#include "runtime/session/profile.h"
#include "runtime/session/session.h"
#include "runtime/session/thread_tuning.h"

#define TC_NO_SLOT UINT32_MAX

/* Where a value lives while a graph runs: `up` scopes above the running graph (0: its own),
 * slot index within that scope's environment. */
typedef struct tc_slot_ref {
    uint32_t up;
    uint32_t slot;
} tc_slot_ref;

typedef struct tc_graph_plan tc_graph_plan;
typedef struct tc_shape_guard tc_shape_guard; /* session_constfold.c */

typedef struct tc_step_plan {
    const tconv_node *node;
    /* The kernel as prepared at planning (tc_kernel_prepare): its run, parameters and work.
     * node_free: a prepared kernel, run with ctx->node NULL. */
    tc_kernel_fn kernel;
    const void *params;
    tc_kernel_work_fn work;
    bool node_free;
    unsigned epilogues;             /* TC_EPILOGUE_* the kernel declared: what fusion may give it */
    const char *const *input_names; /* for the kernel's messages (tc_kernel_ctx.input_names) */
    int64_t opset;
    tc_slot_ref *inputs; /* slot TC_NO_SLOT: omitted optional input */
    size_t n_inputs;
    uint32_t *outputs; /* local slots; TC_NO_SLOT: omitted optional output */
    size_t n_outputs;
    uint32_t *releases; /* local slots whose last use is this step */
    size_t n_releases, cap_releases;
    uint32_t *captures; /* local slots read by this node's subgraphs */
    size_t n_captures, cap_captures;
    tc_graph_plan **subplans; /* one per subgraph attribute, in attribute order */
    size_t n_subplans, cap_subplans;
    /* Crop fusion (session_fuse.c): the producer computes the cropped result (crop passed to
     * its kernel) and the Slice step only moves it from its input slot to its output slot. */
    const tc_kernel_crop *crop;
    /* A Shape folded into a plan constant whose input's shape came from inference: the step
     * checks the actual shape against it (session_constfold.c). */
    const tc_shape_guard *shape_guard;
    /* Activation fusion (session_fuse.c): the producer applies it (passed to its kernel) and the
     * activation's step only moves the result along. */
    const tc_kernel_activation *activation;
    /* Residual fusion (session_fuse.c): the Add's other input, which the producer adds to its
     * result (before the activation, if one is fused too: tc_kernel_ctx.residual); the Add's
     * step only moves the result along. NULL: none. */
    const tc_slot_ref *residual;
    tc_node_cache *cache; /* the kernel's, through tc_kernel_cache_find/store */
    /* A node without a kernel that runs as an ONNX function body (session_function.c): the
     * bodies that fit it when planned, each with its subplan; the run takes the first whose
     * input types and shapes fit the inputs. */
    const tc_function **functions;
    size_t n_functions;
    bool half_native; /* tc_op_half_native: the kernel takes float16/bfloat16 itself */
    /* BatchNormalization folding (session_fold.c): NULL, or TC_FOLD_TENSORS plan-owned float
     * constants; the first TC_FOLD_INPUTS with a dtype replace the step's inputs (W and B of a
     * Conv or ConvTranspose that absorbed the BatchNormalization after it, which only moves
     * the result along: forwards_input). X must then come with W's original dtype. */
    tc_rt_tensor *folded;
    tconv_dtype folded_x_dtype;
    bool forwards_input;
    size_t forward_from; /* the input it moves (0, or 1 for an Add whose chain value is B) */
} tc_step_plan;

/* Runs the step's kernel; float16/bfloat16 inputs of an op that computes in float go through
 * float32 copies and its float outputs are rounded back (session_half.c). */
tconv_status tc_step_run_kernel(const tc_step_plan *step, tc_kernel_ctx *ctx);
/* Fills *ctx with the context a kernel runs step with: the session's budget, host, threads and
 * convention, the step's fused crop and activation (session_half.c). No node cache: the caller
 * that runs the step for good sets ctx->cache (constant folding runs steps that then leave the
 * plan). Written in place, field by field: a context returned by value was built in a zeroed
 * temporary and copied out, its 8-byte stores read back 16 bytes at a time, which the store
 * buffer could not forward (a tenth of a 16-float Add's step). */
void tc_step_kernel_ctx(tc_kernel_ctx *ctx, tc_session *s, const tc_step_plan *step,
                        const tc_rt_tensor **inputs, tc_rt_tensor *outputs, tc_error *err);

struct tc_graph_plan {
    const tconv_graph *graph;
    tc_graph_plan *parent;
    tc_name_map slot_of; /* value name -> (void *)(slot + 1) */
    size_t n_slots;
    const tconv_value **slot_values;
    tc_rt_tensor *constants; /* per slot: initializer data, dtype UNDEFINED otherwise */
    /* NULL, or per slot: a float32 copy of a float16/bfloat16 initializer that a step widens
     * (session_half.c), dtype UNDEFINED otherwise. */
    tc_rt_tensor *wide_constants;
    int32_t *producer_step; /* per slot: producing step or -1 */
    tc_step_plan *steps;
    size_t n_steps;
    size_t max_inputs, max_outputs; /* over steps, for scratch arrays */
    uint32_t *inputs;               /* graph inputs that need data, in graph order */
    size_t n_inputs;
    tc_slot_ref *outputs;
    size_t n_outputs;
};

/* The values of one running graph. */
typedef struct tc_run_env {
    const tc_graph_plan *plan;
    const struct tc_run_env *parent;
    tc_rt_tensor *slots;
    const tc_rt_tensor **input_ptrs; /* scratch: max_inputs */
    tc_rt_tensor *outputs;           /* scratch: max_outputs */
} tc_run_env;

struct tc_session {
    tconv_model *model;
    tc_session_options options; /* options.pool: the borrowed pool, if any */
    int n_threads;
    tc_thread_pool *own_pool; /* NULL when single-threaded */
    tc_arena *arena;          /* plans live here */
    tc_graph_plan *main;
    tc_graph_plan **plans; /* every plan, for freeing name maps and constants */
    size_t n_plans, cap_plans;
    tc_budget budget;           /* memory and work: limits, counters, buffer cache, scratch arena */
    const tc_kernel_host *host; /* what kernels may ask of the session (session.c) */
    /* The graph environment and step running now (If looks its subgraph plan up here). */
    const tc_run_env *current_env;
    const tc_step_plan *current_step;
    /* The main graph's environment, kept from run to run (session.c): slots NULL until the
     * first run; between runs only the constants' slots hold anything. */
    tc_run_env main_env;
    int depth;
    int function_depth; /* function bodies being planned inside each other */
    /* A run binding no symbolic dim passed the memory and work replay holding these input,
     * constant and external bytes (session.c, bind_inputs). */
    bool run_checked;
    uint64_t run_checked_held[3];
    tc_profile *profile; /* borrowed; NULL: not profiling (tc_session_set_profile) */
    /* Measured thread caps (thread_tuning.h): made on the first run of a session that may use
     * several threads, unless options.fixed_threads; NULL: every step at n_threads. */
    tc_thread_tuning *tuning;
    /* The most threads the step running now may use (its cap; n_threads between runs): what
     * its kernel context gets, and what the subgraphs it runs get too. */
    int step_threads;
};

/* A node with no kernel as a function call (session_function.c): the model's own functions of
 * the node's domain, name and overload, else the bodies of the session's function library built
 * for exactly this node's context. Sets step->functions and step->kernel; TCONV_OK with no
 * kernel set when none fits (the caller says "no kernel"), an error when the model's function
 * of that name cannot run. */
tconv_status tc_plan_function_call(tc_session *session, tc_step_plan *step, tc_error *err);
/* The kernel of such a step: runs the first fitting body as a subgraph. */
tconv_status tc_run_function_call(tc_kernel_ctx *ctx);
/* Function bodies planned inside each other at most this deep (a function calling itself). */
#define TC_MAX_FUNCTION_DEPTH 16

/* Builds the plan of the main graph and, recursively, its subgraphs (session_plan.c). */
tconv_status tc_plan_build(tc_session *session, const tconv_graph *graph, tc_graph_plan *parent,
                           tc_graph_plan **out, tc_error *err);
void tc_plan_free_all(tc_session *session);

/* Fuses ConvTranspose -> [Slice] -> [Pad] -> [Add] chains (constant parameters, spatial crops
 * and zero pads, a per-channel bias; each value read only by the next step) into the
 * ConvTranspose kernel (session_fuse.c). Runs on a finished plan (after lifetimes). Fails only
 * for memory. */
tconv_status tc_plan_fuse_crops(tc_session *session, tc_graph_plan *plan, tc_error *err);
/* Whether slot is read by anything but input `input` of step `reader`: another input, another
 * step, a subgraph, a graph output (session_fuse.c). */
bool tc_plan_read_elsewhere(const tc_graph_plan *plan, uint32_t slot, size_t reader, size_t input);
/* Whether node is `op` of the default domain (session_fuse.c). */
/* Input k of a step as a constant of the same graph (an initializer: a graph input never has
 * one in the plan), or NULL (session_fuse.c). */
const tc_rt_tensor *tc_plan_const_input(const tc_graph_plan *plan, const tc_step_plan *step,
                                        size_t k);

/* Folds each BatchNormalization (inference, constant parameters) that alone reads a Conv's or
 * ConvTranspose's output (constant W and B) into per-plan copies of that W and B, the
 * BatchNormalization step then only moving the result along (session_fold.c). Runs after
 * tc_plan_fuse_crops. Fails only for memory. */
#define TC_FOLD_INPUTS 3
#define TC_FOLD_TENSORS (TC_FOLD_INPUTS + 1) /* the inputs, then a fused crop's new bias */
tconv_status tc_plan_fold_batchnorms(tc_session *session, tc_graph_plan *plan, tc_error *err);

/* Makes the float32 copies of the float16/bfloat16 initializers that the plan's widening steps
 * read (session_half.c), once per session, counted as constant bytes. */
tconv_status tc_plan_widen_constants(tc_session *session, tc_graph_plan *plan, tc_error *err);

/* The plan's float32 copy of input `index` of the running step when that input is a
 * float16/bfloat16 initializer widened once (tc_plan_widen_constants), else NULL. */
const tc_rt_tensor *tc_step_wide_constant(const tc_kernel_ctx *ctx, size_t index);

/* A constant tensor a plan owns (uninitialized data, within the memory limit, counted in the
 * session's constant bytes; tc_rt_tensor_release frees it): session_cache.c. */
tconv_status tc_plan_constant_alloc(tc_session *session, tconv_dtype dtype, int rank,
                                    const int64_t *dims, const char *what, tc_rt_tensor *out,
                                    tc_error *err);

/* Runs, once, the steps whose inputs are all constants (and Shapes of statically shaped values)
 * and makes their outputs plan constants; those steps leave the plan (session_constfold.c).
 * Runs on an ordered plan before lifetimes. Fails only for memory. */
tconv_status tc_plan_fold_constants(tc_session *session, tc_graph_plan *plan, tc_error *err);

/* Makes t (owned, allocated through the session and counted in its live bytes) the constant
 * of plan's `slot`: its bytes move from live to constant bytes, and the session frees it with
 * the plan. Any plan-time computed constant goes through here (session_constfold.c). */
tconv_status tc_plan_adopt_constant(tc_session *session, tc_graph_plan *plan, uint32_t slot,
                                    tc_rt_tensor *t);
/* Fuses an elementwise activation (an op with ACT(fn, cost) in ops.def; Clip with constant
 * bounds) that alone reads the float32 result of an op with TC_OPF_EPILOGUE (Conv,
 * ConvTranspose; after its fused crop chain) into that kernel (session_fuse.c); a Relu
 * (TC_OPF_ROUNDING_COMMUTES) also a float16/bfloat16 one. Runs after tc_plan_fuse_crops. Fails
 * only for memory. */
tconv_status tc_plan_fuse_activations(tc_session *session, tc_graph_plan *plan, tc_error *err);
/* Fuses an Add that alone reads the float32 result of a kernel declaring TC_EPILOGUE_RESIDUAL
 * (Conv; after its folded BatchNormalization) and adds a value of the same static declared
 * shape computed before it (a residual block's sum) into that kernel (session_fuse.c). Runs
 * after tc_plan_fold_batchnorms, before tc_plan_fuse_activations (the activation after the sum
 * then fuses too). Fails only for memory. */
tconv_status tc_plan_fuse_residuals(tc_session *session, tc_graph_plan *plan, tc_error *err);

/* What the memory plan knows about one run: values of symbolic dims (dim_param) that the
 * caller's inputs or bindings fixed, and, once the caller's inputs exist, their bytes. */
typedef struct tc_plan_dim_values {
    const tc_dim_binding *items;
    size_t n;
    bool inputs_given;    /* input_bytes is what the caller's inputs hold */
    uint64_t input_bytes; /* else the inputs count at their declared (or bound) shapes */
} tc_plan_dim_values;

/* Replays plan's buffer lifetimes over the values' declared shapes (static dims, symbolic dims
 * from `bound`, which may be NULL) plus the initializer copies the session holds and, for the
 * main graph, the graph inputs (held for the whole run), and refuses with TCONV_ERR_LIMIT,
 * naming the node where the peak falls, when that exceeds options.max_memory_bytes
 * (session_memory.c). */
tconv_status tc_plan_check_memory(const tc_session *session, const tc_graph_plan *plan,
                                  const tc_plan_dim_values *bound, tc_error *err);
/* A value's dims when its rank and every dim are known (static, or symbolic and bound). */
bool tc_plan_value_dims(const tc_session *session, const tconv_value *v,
                        const tc_plan_dim_values *bound, int64_t *dims, int *rank);
/* A value's type as planning sees it: the session's inferred-type table first
 * (options.types), else the model's. */
static inline const tc_type *tc_session_type(const tc_session *session, const tconv_value *v) {
    return tc_type_seen(session ? session->options.types : NULL, v);
}

/* The same replay for work (session_work.c): refuses with TCONV_ERR_LIMIT, naming the node
 * with the most work, a plan whose nodes of known shape add up to more than options.max_work. */
tconv_status tc_plan_check_work(const tc_session *session, const tc_graph_plan *plan,
                                const tc_plan_dim_values *bound, tc_error *err);
/* Refuses to copy initializer t when the session's initializer bytes would exceed the limit. */
tconv_status tc_plan_check_constant(const tc_session *session, const tconv_tensor *t,
                                    tc_error *err);

/* ---- the executor (session.c) */

/* Runs `graph`, a subgraph held by ctx->node, with the enclosing scopes' values visible, its
 * declared inputs bound to inputs[0 .. n_inputs) (borrowed, checked against the declared dtypes;
 * n_inputs must equal the subgraph's input count: 0 for If branches, Loop and Scan bodies pass
 * their iteration's values), and fills outputs[0 .. n_outputs) (n_outputs must equal the
 * subgraph's output count). The tensors stay accounted in the session; the caller moves them
 * into its own outputs or gives them back with tc_session_release. */
tconv_status tc_session_run_subgraph(tc_kernel_ctx *ctx, const tconv_graph *graph,
                                     const tc_rt_tensor *inputs, size_t n_inputs,
                                     tc_rt_tensor *outputs, size_t n_outputs);

/* tc_kernel_input_is_constant for a step the session runs (session_cache.c). */
bool tc_session_input_is_constant(const tc_kernel_ctx *ctx, size_t index);

/* ---- the session's memory: its budget's allocator (budget.h), for a session that may be NULL */

static inline tc_budget *tc_session_budget(tc_session *session) {
    return session ? &session->budget : NULL;
}
static inline tconv_status tc_session_alloc(tc_session *session, tc_rt_tensor *t, tconv_dtype dtype,
                                            int rank, const int64_t *dims, tc_error *err) {
    return tc_budget_alloc(tc_session_budget(session), t, dtype, rank, dims, err);
}
static inline tconv_status tc_session_alloc_uninit(tc_session *session, tc_rt_tensor *t,
                                                   tconv_dtype dtype, int rank, const int64_t *dims,
                                                   tc_error *err) {
    return tc_budget_alloc_uninit(tc_session_budget(session), t, dtype, rank, dims, err);
}
static inline tconv_status tc_session_alloc_bytes(tc_session *session, size_t bytes,
                                                  const char *what, void **out, tc_error *err) {
    return tc_budget_alloc_bytes(tc_session_budget(session), bytes, what, out, err);
}
static inline void tc_session_release(tc_session *session, tc_rt_tensor *t) {
    tc_budget_release(tc_session_budget(session), t);
}

#endif
