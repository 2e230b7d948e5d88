/* A small pthread parallel-for for kernels. Each worker first takes the tasks of its home range
 * (its share of the job's tasks, in data order: the same thread and the same part of the data
 * in every job), then helps the others from the back of theirs, so uneven tasks balance; the
 * calling thread works too. Each task learns which worker runs it (0 .. n_threads-1) so that
 * kernels can give every worker its own scratch buffers.
 *
 * Helpers come from a tc_thread_pool of persistent threads (started on first use, never more
 * than a parallel-for asked for), so a kernel call costs a wake-up, not a thread start. A pool
 * is an object, not process state: each session owns one by default, and the caller may share
 * one between sessions (tconv_threadpool). The caller never waits for a helper that has not
 * started on its job yet: on a loaded machine the caller just does more of the tasks. One
 * parallel-for uses a pool at a time; a concurrent or nested one runs in its calling thread.
 * Waiting threads offer their core every few microseconds, and a pool whose helpers keep making
 * the caller wait (descheduled mid-task: the cores are oversubscribed) runs its next jobs in the
 * calling thread for a while (parallel.c, the oversubscription guard).
 *
 * How many threads a kernel uses is the cost model's answer (tc_parallel_threads_for_work):
 * its work split over t threads against what a fork/join at t costs on this machine, measured
 * by a pool on first need and kept for the process. */
#ifndef TC_RUNTIME_PARALLEL_H
#define TC_RUNTIME_PARALLEL_H

#include <stdbool.h>
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

/* Pool thread `thread` (worker thread + 1 of every job): whether it sleeps now, and how many
 * times it has woken from sleep (false and 0 for a thread not started). A job wakes only the
 * sleeping threads it may use; a thread that no job uses sleeps once it has polled
 * TC_PARALLEL_SPIN_NS (parallel.c), however many jobs the others run meanwhile. */
void tc_thread_pool_thread_state(tc_thread_pool *pool, int thread, bool *asleep, int64_t *wakeups);

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

/* The first task of worker w's home range when n_tasks tasks go to `workers` workers (w up to
 * workers: the end of the last range): equal runs in task order, the first n_tasks % workers
 * one task longer. Worker 0 is the caller, worker t + 1 the pool's thread t in every job. */
int64_t tc_parallel_home_begin(int64_t n_tasks, int workers, int w);

/* A thread count for work of `flops` (GEMM floating point operations; a streamed element is
 * TC_PARALLEL_COST_STREAM of them): the count in [1, n_threads] that the cost model
 * (tc_parallel_choose_threads) finds quickest, with the fork/join costs and the compute the
 * workers deliver together measured on `pool` (tc_thread_pool_fork_join_ns,
 * tc_thread_pool_compute_scale). 1 for a NULL pool or n_threads <= 1. */
int tc_parallel_threads_for_work(tc_thread_pool *pool, int n_threads, double flops);

/* How fast one core does that work, in flops a nanosecond: a documented constant, not a
 * measurement (a kernel's speed depends on its shapes more than on the machine). The Conv and
 * ConvTranspose nodes of models/ ran at 40-106 GFLOP/s on one core of the 2-core AMD EPYC
 * (Zen 4, AVX-512) these figures come from, median 69 for nodes of 1e6-1e7 flops; the model
 * takes the fast end, so it never counts on more time than a node takes (fewer threads when in
 * doubt). A 16-core Xeon with two 512-bit FMA ports may run the large nodes faster still. */
#define TC_PARALLEL_WORK_PER_NS 100.0

/* Tasks a thread gets in an even split (tc_parallel_ranges): with tasks handed out dynamically,
 * the last one finishes on average half a task after the others, which the cost model charges
 * as an imbalance of 1/(2 * TC_PARALLEL_TASKS_PER_THREAD) of the parallel part. */
#define TC_PARALLEL_TASKS_PER_THREAD 4

/* Work shorter than this in one thread (ns) is never split, whatever the fork/join costs: a
 * helper on it would spend more on moving the node's data between the cores' caches than it
 * saves (costs the probe does not see), and a pool of such nodes need not start a thread. It
 * also bounds what a late helper can cost such a node: on this 2-core KVM machine a helper that
 * was descheduled or shares the caller's core answers after some 19 us, and at a 2 us floor
 * encodec_decoder's 6 us Elu nodes went to 2 threads and the model ran 15% slower at 2 threads
 * than at 1 (7-round side by side); at 8 us a split can lose at most what it could gain. */
#define TC_PARALLEL_MIN_SPLIT_NS 8000.0

/* The cost model, a pure function. Work of `work` flops at `work_per_ns` a core takes
 *   time(1) = work / work_per_ns,
 *   time(t) = work / (work_per_ns * scale[t]) * (1 + imbalance) + fork_join_ns[t]   (t >= 2),
 * and the answer is the smallest t in [1, n_threads] with the least time; 1 when time(1) is
 * under TC_PARALLEL_MIN_SPLIT_NS. fork_join_ns[t] (t in
 * [2, n_threads]; [0] and [1] are not read) is what a parallel-for at t workers costs beyond its
 * tasks; scale[t] how many cores' compute t workers deliver together (t itself on separate
 * cores; about 1 where the helpers share the caller's core: two vCPUs that are one core's two
 * hardware threads), or NULL for t. Where scale does not fall as t grows (tc_thread_pool_
 * compute_scale keeps it so), more work never gets fewer threads. */
int tc_parallel_choose_threads(const int64_t *fork_join_ns, const double *scale, int n_threads,
                               double work, double work_per_ns);

/* What a nearly empty parallel-for costs on `pool` at `workers` workers (the caller included),
 * in nanoseconds: publish, every helper joining, every helper leaving. Measured on first need
 * (tc_thread_pool_measure up to `workers`) and kept in the pool; 0 for workers <= 1. When it
 * cannot be measured now (the pool is running a job: a nested or concurrent call), a
 * pessimistic stand-in, not kept. */
int64_t tc_thread_pool_fork_join_ns(tc_thread_pool *pool, int workers);

/* How many cores' arithmetic `workers` workers of `pool` deliver when they compute at once, in
 * [1, workers] and never less than at fewer workers: measured with the fork/join cost (each
 * worker times the same loop of independent multiply-adds, alone and all together; the best of
 * a few repetitions) and kept for the process; `workers` itself while not measured, 1 for
 * workers <= 1. On this 2-core KVM machine the two vCPUs are, from one process to the next,
 * two cores (about 1.9) or one core's two hardware threads (about 1.0: both share its FMA
 * units, and a Conv split over them ran slower than on one). */
double tc_thread_pool_compute_scale(tc_thread_pool *pool, int workers);

/* (Re)measures the pool's fork/join cost at 2 .. max_workers workers (at most
 * TC_PARALLEL_MAX_THREADS): at 2, 4, 8, ... and max_workers, each the second lowest of a few
 * repetitions whose helpers spin at most TC_PARALLEL_PROBE_CAP_NS for one another (so it never
 * hangs, and a loaded machine measures as costly), within about a millisecond in all, and the
 * compute the workers deliver together (tc_thread_pool_compute_scale), within another; the
 * counts between are interpolated. Starts the helpers it needs. False when the pool was busy
 * (nothing kept). */
bool tc_thread_pool_measure(tc_thread_pool *pool, int max_workers);

/* The work of one element of a streamed (memory-bound) pass, in the GEMM flops that
 * tc_parallel_threads_for_work weighs, at TC_PARALLEL_WORK_PER_NS: 0.16 ns. Measured on
 * models/erfnet's 16384-element nodes on one core here: Relu 0.09 ns an element, Add 0.12,
 * BatchNormalization 0.17 (64, "about a cycle", had the cost model see 7 times the time and
 * split nodes of a microsecond). A libm call (expf, logf) is some 10 ns. */
#define TC_PARALLEL_COST_STREAM 16.0
#define TC_PARALLEL_COST_LIBM 1024.0

/* The monotonic clock, in nanoseconds: what the pool times itself with, and the session its
 * steps (the profiler, measured thread caps). */
int64_t tc_parallel_clock_ns(void);

/* Items [begin, end) of a job split into ranges. */
typedef void (*tc_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Runs fn over items [0, n_items) of `cost` operations each: in the calling thread, as one
 * range, when the work is too small for threads (tc_parallel_threads_for_work), else in about
 * TC_PARALLEL_TASKS_PER_THREAD ranges per thread (dynamic, so a late or slow thread takes fewer),
 * each a multiple of `granule` items and at least min_items. The split every elementwise-style
 * kernel uses. */
void tc_parallel_ranges(tc_thread_pool *pool, int n_threads, int64_t n_items, double cost,
                        int64_t granule, int64_t min_items, tc_range_fn fn, void *ctx);

#endif
