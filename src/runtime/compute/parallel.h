/* A small pthread parallel-for for kernels. Tasks are handed out dynamically (an atomic counter),
 * so uneven tasks balance; the calling thread works too. Each task learns which worker runs it
 * (0 .. n_threads-1) so that kernels can give every worker its own scratch buffers.
 *
 * Helpers come from a tc_thread_pool of persistent threads (started on first use, never more
 * than a parallel-for asked for), so a kernel call costs a wake-up, not a thread start. A pool
 * is an object, not process state: each session owns one by default, and the caller may share
 * one between sessions (tconv_threadpool). The caller never waits for a helper that has not
 * started on its job yet: on a loaded machine the caller just does more of the tasks. One
 * parallel-for uses a pool at a time; a concurrent or nested one runs in its calling thread.
 * Waiting threads offer their core every few microseconds, and a pool whose helpers keep making
 * the caller wait (descheduled mid-task: the cores are oversubscribed) runs its next jobs in the
 * calling thread for a while (parallel.c, the oversubscription guard). */
#ifndef TC_RUNTIME_PARALLEL_H
#define TC_RUNTIME_PARALLEL_H

#include <stdint.h>

/* Upper bound on the workers of one parallel-for (callers may size arrays with it). */
#define TC_PARALLEL_MAX_THREADS 64

typedef struct tc_thread_pool tc_thread_pool;

/* A pool with no thread yet (they start on first use); NULL when out of memory. */
tc_thread_pool *tc_thread_pool_create(void);
/* Stops and joins the pool's threads and frees it (NULL is ignored). No parallel-for may be
 * running on it, and nothing may use it afterwards. */
void tc_thread_pool_destroy(tc_thread_pool *pool);
/* Threads the pool has started (0 for NULL). */
int tc_thread_pool_size(tc_thread_pool *pool);

/* The most workers (the calling thread included) that one job of the pool had since the last
 * call, and starts counting anew; 0 when no job ran on helpers (or pool is NULL). The profiler
 * reads it around a kernel: what its parallel-fors used. */
int tc_thread_pool_take_peak(tc_thread_pool *pool);

/* Runs one task. `worker` is in [0, workers used) and no two concurrent calls share it. */
typedef void (*tc_parallel_fn)(void *ctx, int64_t task, int worker);

/* Runs fn(ctx, task, worker) for every task in [0, n_tasks), on at most n_threads threads (the
 * caller included) taken from `pool`. A NULL pool, n_threads <= 1 or n_tasks <= 1 runs
 * everything in the calling thread. If a thread cannot be started, the remaining workers (at
 * least the caller) do its share: the call never fails. Returns when all tasks are done. */
void tc_parallel_for(tc_thread_pool *pool, int n_threads, int64_t n_tasks, tc_parallel_fn fn,
                     void *ctx);

/* How many workers tc_parallel_for will use for n_tasks tasks (for sizing scratch). */
int tc_parallel_workers(int n_threads, int64_t n_tasks);

/* A thread count for work of `flops` floating point operations: 1 below a size where starting
 * threads costs more than it saves, else n_threads (at least 1). */
int tc_parallel_threads_for_work(int n_threads, double flops);

/* The work of one element of a streamed (memory-bound) pass, in the GEMM flops that
 * tc_parallel_threads_for_work weighs: about a cycle, in which the GEMM does some 64 flops. A
 * libm call (expf, logf) is some 16 of these. */
#define TC_PARALLEL_COST_STREAM 64.0
#define TC_PARALLEL_COST_LIBM (16.0 * TC_PARALLEL_COST_STREAM)

/* Items [begin, end) of a job split into ranges. */
typedef void (*tc_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Runs fn over items [0, n_items) of `cost` operations each: in the calling thread, as one
 * range, when the work is too small for threads (tc_parallel_threads_for_work), else in about
 * 4 ranges per thread (dynamic, so a late or slow thread takes fewer), each a multiple of
 * `granule` items and at least min_items. The split every elementwise-style kernel uses. */
void tc_parallel_ranges(tc_thread_pool *pool, int n_threads, int64_t n_items, double cost,
                        int64_t granule, int64_t min_items, tc_range_fn fn, void *ctx);

#endif
