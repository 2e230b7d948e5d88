/* The budget room's door: what a run may spend, kept in one object (tc_budget) that the session
 * owns and every kernel reaches through its context (tc_kernel_ctx.budget), not through the
 * session. Memory: every byte a session holds goes through the allocator here (session_memory.c),
 * which keeps the limit, the statistics and a cache of released buffers; the scratch arena
 * (session_scratch.c) and kept node data are counted by it. Work: each op's cost (op_work.c,
 * declared with the op in ir/ops.def) and the run's work limit.
 *
 * Below the kernels and the session, above compute: this room calls nothing of either. */
#ifndef TC_RUNTIME_BUDGET_H
#define TC_RUNTIME_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/error.h"
#include "runtime/budget/op_work.h"
#include "runtime/compute/compute.h"

/* Memory and work counters, e.g. to check that buffers are freed after their last use. */
typedef struct tc_session_stats {
    size_t live_bytes;       /* intermediate tensor bytes alive now (0 between runs) */
    size_t peak_live_bytes;  /* the most intermediate bytes alive at once during the last run */
    size_t constant_bytes;   /* initializer data the session holds, and its nodes' kept blocks */
    uint64_t n_allocations;  /* tensors allocated during the last run */
    uint64_t n_kernel_calls; /* kernels run during the last run (subgraphs included) */
    uint64_t work;           /* work units of the last run (max_work's unit) */
    /* work units constant folding did when the session was planned, within max_work: the
     * session's work checks count them beside each run's */
    uint64_t fold_work;
    /* float16/bfloat16 tensors widened to float for a float kernel since the session was
     * made (constant ones are widened once, when it is made, and not counted here) */
    uint64_t n_half_widenings;
} tc_session_stats;

/* Intermediate buffers released during a run, kept for the next allocation of the same size
 * (the same graph allocates the same sizes every run): large buffers would otherwise go back to
 * the system and come back as fresh zero pages, a page fault each 4 KiB. */
#define TC_BUFFER_CACHE_SLOTS 32
#define TC_BUFFER_CACHE_MIN_BYTES ((size_t)64 * 1024)
typedef struct tc_buffer_cache {
    void *data[TC_BUFFER_CACHE_SLOTS];
    size_t nbytes[TC_BUFFER_CACHE_SLOTS];
    size_t n;
    size_t bytes; /* sum of nbytes */
} tc_buffer_cache;

/* Kernel scratch memory (tc_kernel_scratch): one buffer handed out as a stack and kept across
 * kernel calls and runs. Reusing the same bytes keeps them in cache from one kernel to the next,
 * and never unmapping them avoids page faults and, with pool threads running, TLB shootdowns. A
 * request that does not fit gets its own allocation, and the buffer grows to the high-water
 * mark the next time it is empty. */
typedef struct tc_scratch_arena {
    unsigned char *base;
    size_t capacity, used, high_water;
    size_t own_bytes; /* pieces of their own alive now: they count against the limit too */
} tc_scratch_arena;

/* The key of a kernel's kept block (kernel.h: tc_kernel_cache_find/store). */
typedef struct tc_kernel_cache_key {
    const void *source; /* the constant input's data */
    int64_t layout[6];  /* whatever else the block depends on */
} tc_kernel_cache_key;

/* What a kernel keeps for its node across runs: one block derived from constant inputs, e.g.
 * packed weights, and the key it was made for; and one table derived from the run's shapes
 * alone (tc_kernel_shape_table), which begins with the int64 values it was made for. Their
 * bytes count as constant bytes. */
typedef struct tc_node_cache {
    tc_kernel_cache_key key;
    void *data;
    size_t nbytes;
    void *shape_table;
    size_t shape_table_bytes;
} tc_node_cache;

typedef struct tc_budget {
    size_t max_memory_bytes; /* tensor bytes held at once; 0: no limit */
    uint64_t max_work;       /* work units of one run; 0: no limit */
    tc_session_stats stats;  /* the memory counters and the run's work */
    tc_buffer_cache cache;
    tc_scratch_arena scratch;
    size_t input_bytes;    /* the caller's inputs of the run in progress: held, so counted */
    size_t external_bytes; /* held beside this session (tc_session_yield_to): counted too */
    size_t fold_max_bytes; /* while constants are folded: the largest tensor allowed, else 0 */
} tc_budget;

/* Frees the cached buffers and the scratch arena (the budget's own memory). */
void tc_budget_free(tc_budget *budget);

/* ---- memory (session_memory.c). A NULL budget: no limit and no statistics. */

/* Frees the buffers a cache holds. */
void tc_buffer_cache_drop(tc_buffer_cache *cache);

/* Refuses a new tensor of dtype and dims past the memory limit (tensors, constants, scratch);
 * cached buffers are dropped first to make room. */
tconv_status tc_budget_check_limit(tc_budget *budget, tconv_dtype dtype, int rank,
                                   const int64_t *dims, tc_error *err);

/* Alignment of tc_budget_alloc_bytes blocks. */
#define TC_SESSION_ALIGN ((size_t)64)

/* `bytes` (rounded up to TC_SESSION_ALIGN) aligned, uninitialized bytes within the memory
 * limit, for what the caller accounts itself (scratch, kept node data); the caller frees them.
 * Errors name `what`. */
tconv_status tc_budget_alloc_bytes(tc_budget *budget, size_t bytes, const char *what, void **out,
                                   tc_error *err);

/* A tensor within the limit, counted in the live bytes and the statistics; zeroed. */
tconv_status tc_budget_alloc(tc_budget *budget, tc_rt_tensor *t, tconv_dtype dtype, int rank,
                             const int64_t *dims, tc_error *err);
/* The same, but a reused buffer is not zeroed first: for a kernel that writes every element. */
tconv_status tc_budget_alloc_uninit(tc_budget *budget, tc_rt_tensor *t, tconv_dtype dtype, int rank,
                                    const int64_t *dims, tc_error *err);
/* Gives t back: it leaves the live bytes, its buffer is kept for reuse or freed. */
void tc_budget_release(tc_budget *budget, tc_rt_tensor *t);
/* Keeps the buffer of a tensor that is no longer counted as live (an output handed out). */
void tc_budget_recycle(tc_budget *budget, tc_rt_tensor *t);

/* Frees one block of a node cache, *data NULL or not (its bytes leave the constant bytes). */
void tc_node_block_free(tc_budget *budget, void **data, size_t *nbytes);
/* Frees both of a node cache's blocks. */
void tc_node_cache_free(tc_budget *budget, tc_node_cache *cache);

/* ---- scratch (session_scratch.c) */

void tc_scratch_arena_free(tc_scratch_arena *arena);
/* Scratch memory for one kernel call (kernel.h: tc_kernel_scratch says the rules). */
tconv_status tc_budget_scratch(tc_budget *budget, size_t bytes, tc_rt_tensor *buf, tc_error *err);
void tc_budget_scratch_release(tc_budget *budget, tc_rt_tensor *buf);

/* ---- work (session_memory.c) */

/* Adds `work` units to the run's work, refusing the run once it passes max_work. */
tconv_status tc_budget_charge_work(tc_budget *budget, uint64_t work, tc_error *err);

#endif
