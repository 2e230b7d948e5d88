/* A small pthread parallel-for for kernels. Tasks are handed out dynamically (an atomic counter),
 * so uneven tasks balance; the calling thread works too. Each task learns which worker runs it
 * (0 .. n_threads-1) so that kernels can give every worker its own scratch buffers.
 *
 * Helpers come from a process-wide pool of persistent threads (started on first use, never
 * more than a parallel-for asked for), so a kernel call costs a wake-up, not a thread start. The
 * caller never waits for a helper that has not started on its job yet: on a loaded machine the
 * caller just does more of the tasks. One parallel-for uses the pool at a time; a concurrent or
 * nested one runs in its calling thread. */
#ifndef TCONV_RUNTIME_PARALLEL_H
#define TCONV_RUNTIME_PARALLEL_H

#include <stdint.h>

/* Upper bound on the workers of one parallel-for (callers may size arrays with it). */
#define TCONV_PARALLEL_MAX_THREADS 64

/* Runs one task. `worker` is in [0, workers used) and no two concurrent calls share it. */
typedef void (*tc_parallel_fn)(void *ctx, int64_t task, int worker);

/* Runs fn(ctx, task, worker) for every task in [0, n_tasks), on at most n_threads threads (the
 * caller included). n_threads <= 1 or n_tasks <= 1 runs everything in the calling thread. If a
 * thread cannot be started, the remaining workers (at least the caller) do its share: the call
 * never fails. Returns when all tasks are done. */
void tc_parallel_for(int n_threads, int64_t n_tasks, tc_parallel_fn fn, void *ctx);

/* How many workers tc_parallel_for will use for n_tasks tasks (for sizing scratch). */
int tc_parallel_workers(int n_threads, int64_t n_tasks);

/* A thread count for work of `flops` floating point operations: 1 below a size where starting
 * threads costs more than it saves, else n_threads (at least 1). */
int tc_parallel_threads_for_work(int n_threads, double flops);

#endif
