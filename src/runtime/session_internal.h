/* Executor internals shared by session.c (running), session_plan.c (planning) and the control
 * flow kernels (If runs a subgraph through tconv_session_run_subgraph). */
#ifndef TCONV_RUNTIME_SESSION_INTERNAL_H
#define TCONV_RUNTIME_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/name_map.h"
#include "runtime/kernel.h"
#include "runtime/session.h"

#define TCONV_NO_SLOT UINT32_MAX

/* Where a value lives while a graph runs: `up` scopes above the running graph (0: its own),
 * slot index within that scope's environment. */
typedef struct tconv_slot_ref {
    uint32_t up;
    uint32_t slot;
} tconv_slot_ref;

typedef struct tconv_graph_plan tconv_graph_plan;

/* What a kernel keeps for its node across runs (session_cache.c): one block derived from
 * constant inputs, e.g. packed weights, and the key it was made for. */
typedef struct tconv_node_cache {
    tconv_kernel_cache_key key;
    void *data;
    size_t nbytes;
} tconv_node_cache;

typedef struct tconv_step_plan {
    const tconv_node *node;
    const tconv_kernel_def *kernel;
    int64_t opset;
    tconv_slot_ref *inputs; /* slot TCONV_NO_SLOT: omitted optional input */
    size_t n_inputs;
    uint32_t *outputs; /* local slots; TCONV_NO_SLOT: omitted optional output */
    size_t n_outputs;
    uint32_t *releases; /* local slots whose last use is this step */
    size_t n_releases, cap_releases;
    uint32_t *captures; /* local slots read by this node's subgraphs */
    size_t n_captures, cap_captures;
    tconv_graph_plan **subplans; /* one per subgraph attribute, in attribute order */
    size_t n_subplans, cap_subplans;
    /* Crop fusion (session_fuse.c): the producer computes the cropped result (crop passed to
     * its kernel) and the Slice step only moves it from its input slot to its output slot. */
    const tconv_kernel_crop *crop;
    tconv_node_cache *cache; /* the kernel's, through tconv_kernel_cache_find/store */
    bool forwards_input;
    size_t forward_from; /* the input it moves (0, or 1 for an Add whose chain value is B) */
} tconv_step_plan;

struct tconv_graph_plan {
    const tconv_graph *graph;
    tconv_graph_plan *parent;
    tconv_name_map slot_of; /* value name -> (void *)(slot + 1) */
    size_t n_slots;
    const tconv_value **slot_values;
    tconv_rt_tensor *constants; /* per slot: initializer data, dtype UNDEFINED otherwise */
    int32_t *producer_step;     /* per slot: producing step or -1 */
    tconv_step_plan *steps;
    size_t n_steps;
    size_t max_inputs, max_outputs; /* over steps, for scratch arrays */
    uint32_t *inputs;               /* graph inputs that need data, in graph order */
    size_t n_inputs;
    tconv_slot_ref *outputs;
    size_t n_outputs;
};

/* The values of one running graph. */
typedef struct tconv_run_env {
    const tconv_graph_plan *plan;
    const struct tconv_run_env *parent;
    tconv_rt_tensor *slots;
    const tconv_rt_tensor **input_ptrs; /* scratch: max_inputs */
    tconv_rt_tensor *outputs;           /* scratch: max_outputs */
} tconv_run_env;

/* Intermediate buffers released during a run, kept for the next allocation of the same size
 * (the same graph allocates the same sizes every run): large buffers would otherwise go back to
 * the system and come back as fresh zero pages, a page fault each 4 KiB. */
#define TCONV_BUFFER_CACHE_SLOTS 32
#define TCONV_BUFFER_CACHE_MIN_BYTES ((size_t)64 * 1024)
typedef struct tconv_buffer_cache {
    void *data[TCONV_BUFFER_CACHE_SLOTS];
    size_t nbytes[TCONV_BUFFER_CACHE_SLOTS];
    size_t n;
    size_t bytes; /* sum of nbytes */
} tconv_buffer_cache;

/* Kernel scratch memory (tconv_kernel_scratch): one buffer handed out as a stack and kept across
 * kernel calls and runs. Reusing the same bytes keeps them in cache from one kernel to the next,
 * and never unmapping them avoids page faults and, with pool threads running, TLB shootdowns. A
 * request that does not fit gets its own allocation, and the buffer grows to the high-water
 * mark the next time it is empty. */
typedef struct tconv_scratch_arena {
    unsigned char *base;
    size_t capacity, used, high_water;
} tconv_scratch_arena;

void tconv_scratch_arena_free(tconv_scratch_arena *arena);
/* Frees a node cache's block (its bytes leave the session's constant bytes). */
void tconv_node_cache_free(tconv_session *session, tconv_node_cache *cache);

struct tconv_session {
    tconv_model *model;
    tconv_session_options options;
    int n_threads;
    tconv_arena *arena; /* plans live here */
    tconv_graph_plan *main;
    tconv_graph_plan **plans; /* every plan, for freeing name maps and constants */
    size_t n_plans, cap_plans;
    tconv_session_stats stats;
    tconv_buffer_cache cache;
    tconv_scratch_arena scratch;
    /* The graph environment and step running now (If looks its subgraph plan up here). */
    const tconv_run_env *current_env;
    const tconv_step_plan *current_step;
    int depth;
};

/* Builds the plan of the main graph and, recursively, its subgraphs (session_plan.c). */
tconv_status tconv_plan_build(tconv_session *session, const tconv_graph *graph,
                              tconv_graph_plan *parent, tconv_graph_plan **out, tconv_error *err);
void tconv_plan_free_all(tconv_session *session);

/* Fuses ConvTranspose -> [Slice] -> [Pad] -> [Add] chains (constant parameters, spatial crops
 * and zero pads, a per-channel bias; each value read only by the next step) into the
 * ConvTranspose kernel (session_fuse.c). Runs on a finished plan (after lifetimes). Fails only
 * for memory. */
tconv_status tconv_plan_fuse_crops(tconv_session *session, tconv_graph_plan *plan,
                                   tconv_error *err);

/* Values of symbolic dims (dim_param) that the caller's inputs fixed. */
typedef struct tconv_plan_dim_values {
    const char *const *names;
    const int64_t *values;
    size_t n;
} tconv_plan_dim_values;

/* Replays plan's buffer lifetimes over the values' declared shapes (static dims, symbolic dims
 * from `bound`, which may be NULL) plus the initializer copies the session holds, and refuses
 * with TCONV_ERR_LIMIT, naming the node where the peak falls, when that exceeds
 * options.max_memory_bytes (session_memory.c). */
tconv_status tconv_plan_check_memory(const tconv_session *session, const tconv_graph_plan *plan,
                                     const tconv_plan_dim_values *bound, tconv_error *err);
/* Refuses to copy initializer t when the session's initializer bytes would exceed the limit. */
tconv_status tconv_plan_check_constant(const tconv_session *session, const tconv_tensor *t,
                                       tconv_error *err);

/* Frees the buffers a cache holds. */
void tconv_buffer_cache_drop(tconv_buffer_cache *cache);

/* Refuses a new tensor of dtype and dims past the session's memory limit (tensors, constants,
 * scratch); cached buffers are dropped first to make room. */
tconv_status tconv_session_check_limit(tconv_session *session, tconv_dtype dtype, int rank,
                                       const int64_t *dims, tconv_error *err);

/* Alignment of tconv_session_alloc_bytes blocks. */
#define TCONV_SESSION_ALIGN ((size_t)64)

/* `bytes` (rounded up to TCONV_SESSION_ALIGN) aligned, uninitialized bytes within the session's
 * memory limit (no limit when session is NULL), for what the caller accounts itself (scratch,
 * kept node data); the caller frees them. Errors name `what`. */
tconv_status tconv_session_alloc_bytes(tconv_session *session, size_t bytes, const char *what,
                                       void **out, tconv_error *err);

/* Allocation through the session: memory limit, live/peak statistics. session may be NULL. */
tconv_status tconv_session_alloc(tconv_session *session, tconv_rt_tensor *t, tconv_dtype dtype,
                                 int rank, const int64_t *dims, tconv_error *err);
void tconv_session_release(tconv_session *session, tconv_rt_tensor *t);

/* Runs `graph`, a subgraph held by ctx->node, with the enclosing scopes' values visible, and
 * fills outputs[0 .. n_outputs) (n_outputs must equal the subgraph's output count). The tensors
 * stay accounted in the session; the caller moves them into its own outputs. */
tconv_status tconv_session_run_subgraph(tconv_kernel_ctx *ctx, const tconv_graph *graph,
                                        tconv_rt_tensor *outputs, size_t n_outputs);

/* The opsets for which (domain, op_type) has kernels; false when it has none at all. */
bool tconv_kernel_opset_span(const char *domain, const char *op_type, int *first, int *last);

#endif
