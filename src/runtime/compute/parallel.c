#include "runtime/compute/parallel.h"
#include "runtime/compute/test_hooks.h"

#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The fork/join probe (tc_thread_pool_measure): repetitions a worker count, the longest its
 * workers wait for one another in one repetition, and the whole measurement's budget, after
 * which the counts not yet measured take the cap (a pool that slow is not worth a thread for
 * a small node). */
#define TC_PARALLEL_PROBE_REPS 6
#define TC_PARALLEL_PROBE_CAP_NS 100000
#define TC_PARALLEL_PROBE_BUDGET_NS 1000000
/* The most a measured fork/join is taken to cost: base + per worker (2 workers: 4 us; 16: 18 us).
 * The one measurement of a process can catch its helper on the caller's own core: a thread the
 * scheduler has not yet moved to the idle one, which answers only when the caller yields. Here
 * that read 19 us at 2 workers in 5 of 8 processes (0.1-0.3 us in the others), and kept every
 * node of those processes on 1 thread for their whole life (erfnet at 2 threads ran as at 1).
 * A real fork/join on idle cores costs well under this; on loaded cores the oversubscription
 * guard below runs jobs in the calling thread anyway. */
#define TC_PARALLEL_FORK_JOIN_CEILING_NS 2000
#define TC_PARALLEL_FORK_JOIN_CEILING_WORKER_NS 1000
/* The fork/join cost assumed while the pool cannot be measured (busy with another job): more
 * than any measured here (2-5 us at 2 threads), so that a guess never adds threads. */
#define TC_PARALLEL_UNMEASURED_NS 50000

/* A cache line: fields that different threads write are kept on lines of their own. */
#define CACHE_LINE 64

/* How long an idle worker polls for the next job, and a caller for its workers to finish, before
 * sleeping on a condition variable. A model's kernels follow each other within tens of
 * microseconds, and waking a sleeping thread costs a futex call plus, in a virtual machine, an
 * interrupt to a halted vCPU: measured here, that made a 2-thread DCGAN generator at batch 1
 * 1.6x slower than 1 thread. OpenMP runtimes poll the same way (GOMP_SPINCOUNT). A worker's
 * polling time runs from the end of its last job (or its wake-up), not from the last job it saw:
 * jobs it may not join (fewer workers than its number) do not keep it polling. */
#define TC_PARALLEL_SPIN_NS 200000

/* The oversubscription guard. A helper that joined a job and was then descheduled (other
 * processes hold the cores) keeps its task, and the caller waits for it: a scheduler time slice,
 * far longer than the job. A wait past TC_PARALLEL_LATE_NS that is also longer than the
 * caller's own share of the job counts as a strike, a job without one takes a strike back; at
 * TC_PARALLEL_STRIKES the pool runs the next TC_PARALLEL_SERIAL_JOBS jobs in their calling
 * threads (which is always correct: the kernel's tasks just run in one thread), then tries its
 * helpers again. On an idle machine the waits stay within a task's length and nothing changes;
 * on a loaded one 2 threads then cost about what 1 does instead of much more. */
#define TC_PARALLEL_LATE_NS 100000
#define TC_PARALLEL_STRIKES 4
#define TC_PARALLEL_SERIAL_JOBS 256

/* Tasks claimed from each end of one home range (run_tasks): the low 32 bits count its owner's
 * claims from the front, the high bits the other workers' from the back. Every claim writes it:
 * on a line of its own, so that the job's fields, which every claim reads, stay in each worker's
 * cache, and an owner's claims on its own range touch no line the others write. */
typedef struct home_claims {
    alignas(CACHE_LINE) atomic_int_fast64_t claims;
} home_claims;

/* One parallel-for. It lives on the caller's stack: the caller does not return before every
 * worker that joined it has left (pool->active == 0). */
typedef struct parallel_job {
    tc_parallel_fn fn;
    void *ctx;
    int64_t n_tasks;
    int n_homes;        /* home ranges: one a worker the job asked for */
    home_claims *homes; /* the pool's (publish): one job uses a pool at a time */
} parallel_job;

#define CLAIM_BACK ((int_fast64_t)1 << 32)
/* Up to this many tasks both counts fit their 32 bits, failed claims included; a larger job is
 * one home range claimed from the front by everyone. */
#define CLAIM_MAX_TWO_ENDED ((int64_t)1 << 30)

/* What a pool thread is started with: its pool, and its number there, which makes it worker
 * id + 1 of every job it joins. */
typedef struct worker_arg {
    struct tc_thread_pool *pool;
    int id;
} worker_arg;

/* A pool of persistent workers, started on first use and grown on demand, owned by whoever
 * created it (a session by default; the caller when it shares one between runners). A
 * parallel-for publishes its job and wakes the pool; its threads 0 .. workers - 2 join it while
 * it is open, each claiming the tasks of its home range first (run_tasks). The caller works too
 * and, once every task is claimed, closes the job and waits only for the workers that joined: a
 * worker that has not been scheduled yet (another process holds the core) is not waited for, it
 * simply finds the job closed. One parallel-for at a time uses a pool; a concurrent or nested one
 * runs in its calling thread. */
struct tc_thread_pool {
    pthread_mutex_t mutex;
    pthread_cond_t idle;  /* the last joined worker left */
    int n_threads;        /* workers started */
    bool busy;            /* a parallel-for owns the pool */
    bool open;            /* the job takes new workers */
    bool stopping;        /* tc_thread_pool_destroy: workers exit */
    int joined, max_join; /* workers that joined the job; how many may */
    parallel_job *job;
    int peak_workers; /* the most workers (caller included) of a job since the last take */
    pthread_t threads[TC_PARALLEL_MAX_THREADS];
    worker_arg args[TC_PARALLEL_MAX_THREADS]; /* thread t's: the pool and t */
    /* Thread t sleeps on wake[t] (asleep[t] set) and is woken only for a job it may join, or to
     * stop. One condition for all, broadcast by every job, woke every sleeping thread for
     * every job: a 16-thread session whose nodes take 2-8 workers kept its other threads
     * waking and polling through the whole run, each on a core (or a sibling hardware thread)
     * that the workers needed. */
    pthread_cond_t wake[TC_PARALLEL_MAX_THREADS];
    bool asleep[TC_PARALLEL_MAX_THREADS];
    int64_t wakeups[TC_PARALLEL_MAX_THREADS];   /* times thread t woke from sleep */
    home_claims homes[TC_PARALLEL_MAX_THREADS]; /* the published job's (publish) */
    /* Written under the mutex; atomic so that polling threads may read them without it. Each on
     * a cache line of its own: every idle helper polls `generation` (written once a job), the
     * caller polls `active` (written by every helper joining and leaving), and the caller
     * writes the guard's counters every job. On one line, every join or leave at 16 threads
     * invalidated the line that 15 pollers were reading. */
    alignas(CACHE_LINE) _Atomic uint64_t generation;     /* of the job published last */
    alignas(CACHE_LINE) atomic_int active;               /* joined workers still running tasks */
    alignas(CACHE_LINE) atomic_int strikes, serial_left; /* the oversubscription guard */
};

tc_thread_pool *tc_thread_pool_create(void) {
    /* aligned, so that the fields kept apart above are on separate lines */
    size_t size = (sizeof(tc_thread_pool) + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
    tc_thread_pool *pool = aligned_alloc(CACHE_LINE, size);
    if (!pool)
        return NULL;
    memset(pool, 0, size);
    if (pthread_mutex_init(&pool->mutex, NULL) != 0) {
        free(pool);
        return NULL;
    }
    if (pthread_cond_init(&pool->idle, NULL) != 0) {
        pthread_mutex_destroy(&pool->mutex);
        free(pool);
        return NULL;
    }
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->active, 0);
    atomic_init(&pool->strikes, 0);
    atomic_init(&pool->serial_left, 0);
    return pool;
}

void tc_thread_pool_destroy(tc_thread_pool *pool) {
    if (!pool)
        return;
    pthread_mutex_lock(&pool->mutex);
    pool->stopping = true;
    for (int i = 0; i < pool->n_threads; i++)
        pthread_cond_signal(&pool->wake[i]);
    pthread_mutex_unlock(&pool->mutex);
    for (int i = 0; i < pool->n_threads; i++) {
        pthread_join(pool->threads[i], NULL);
        pthread_cond_destroy(&pool->wake[i]);
    }
    pthread_cond_destroy(&pool->idle);
    pthread_mutex_destroy(&pool->mutex);
    free(pool);
}

int tc_thread_pool_size(tc_thread_pool *pool) {
    if (!pool)
        return 0;
    pthread_mutex_lock(&pool->mutex);
    int n = pool->n_threads;
    pthread_mutex_unlock(&pool->mutex);
    return n;
}

/* Home ranges. Kernels number their tasks in data order (column blocks, output-channel chunks,
 * element ranges), and worker w of a job of W workers owns the w-th of W equal runs of them: it
 * takes its own from the front, then helps the others from the back of theirs. A worker is the
 * same thread in every job (the caller is worker 0, pool thread t is worker t + 1: can_join), so
 * a chain of kernels split alike has each thread work on the part of the data it wrote in the
 * one before, and a node run again has each thread read the weights it read the last time, still
 * in its core's cache. Handing tasks out in arrival order makes them travel: on 2 cores a chain
 * of small 1-D Convs (audio_upsampler) ran slower with 2 threads than with 1, each node reading
 * the other core's output, until the caller took the front and the helper the back (which is
 * what home ranges are at 2 workers); at 16, where the helpers still took the back in the order
 * they came, ERFNet's 15-25 us Convs gained nothing from a split. A claim is valid while front +
 * back < the range's length; the two ends never meet on one task, and every task is claimed
 * once. A range whose owner never joins (not scheduled, or its thread could not start) is done
 * by the others. */

int64_t tc_parallel_home_begin(int64_t n_tasks, int workers, int w) {
    int64_t base = n_tasks / workers, extra = n_tasks % workers;
    return base * w + (w < extra ? w : extra);
}

/* The claims made on a range: from the front and from the back, or all from the front where the
 * job is one range too large for the two 32-bit counts. */
static int64_t claims_made(int_fast64_t c, bool two_ended, int64_t *front) {
    *front = two_ended ? (int64_t)(c & (CLAIM_BACK - 1)) : (int64_t)c;
    return *front + (two_ended ? (int64_t)(c >> 32) : 0);
}

/* Claims and runs tasks of home range h, from the front (its owner) or the back. */
static void run_home(parallel_job *job, int h, bool owner, int worker) {
    int64_t begin = tc_parallel_home_begin(job->n_tasks, job->n_homes, h);
    int64_t length = tc_parallel_home_begin(job->n_tasks, job->n_homes, h + 1) - begin;
    bool two_ended = job->n_tasks <= CLAIM_MAX_TWO_ENDED;
    int_fast64_t step = owner || !two_ended ? 1 : CLAIM_BACK;
    home_claims *home = &job->homes[h];
    int64_t front;
    for (;;) {
        /* a range done is only read: at 16 workers each finishing worker visits 15 of them, and
         * a claim would take each one's line from its owner */
        if (!owner && claims_made(atomic_load_explicit(&home->claims, memory_order_relaxed),
                                  two_ended, &front) >= length)
            return;
        int64_t made = claims_made(atomic_fetch_add(&home->claims, step), two_ended, &front);
        if (made >= length)
            return;
        job->fn(job->ctx, begin + (step == 1 ? front : length - 1 - (made - front)), worker);
    }
}

static void run_tasks(parallel_job *job, int worker) {
    int own = worker % job->n_homes;
    run_home(job, own, true, worker);
    for (int k = 1; k < job->n_homes; k++)
        run_home(job, (own + k) % job->n_homes, false, worker);
}

int tc_test_absent_helper = 0;

/* Whether pool thread `id`, which last saw generation `seen`, may join the published job: the
 * job's helpers are threads 0 .. max_join - 1, always the same ones for the same count (home
 * ranges, above). */
static bool can_join(const tc_thread_pool *pool, uint64_t seen, int id) {
    return pool->open && pool->generation != seen && id < pool->max_join &&
           id != tc_test_absent_helper - 1; /* tests only */
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int64_t tc_parallel_clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Polls until ready(pool, arg) (true) or the clock passes deadline_ns (false). Every 256 polls
 * (some 10 us) it offers the core to another thread: when other processes hold the cores, the
 * thread this one waits for (the caller, or a helper with a task) may be queued behind it on this
 * very core, and without the offer would wait for the scheduler's tick, milliseconds. On an idle
 * core the offer returns at once. */
static bool poll_until(tc_thread_pool *pool, bool (*ready)(tc_thread_pool *pool, uint64_t arg),
                       uint64_t arg, int64_t deadline_ns) {
    for (unsigned i = 1;; i++) {
        if (ready(pool, arg))
            return true;
        cpu_relax();
        if (i % 256 == 0) {
            if (tc_parallel_clock_ns() > deadline_ns)
                return false;
            sched_yield();
        }
    }
}

/* A job other than generation `seen` was published. */
static bool generation_changed(tc_thread_pool *pool, uint64_t seen) {
    return atomic_load_explicit(&pool->generation, memory_order_relaxed) != seen;
}

/* No joined worker is active. */
static bool workers_idle(tc_thread_pool *pool, uint64_t unused) {
    (void)unused;
    return atomic_load_explicit(&pool->active, memory_order_relaxed) == 0;
}

/* Waits (mutex held) until the worker may join a job it has not seen: polls until
 * poll_deadline_ns, then sleeps until a job wakes it (publish). A job it cannot join (closed, or
 * with fewer helpers than its number) is marked seen, so polling waits for the next one within
 * the same deadline. False when the pool is stopping (checked under the mutex before every
 * sleep, so the destroyer's signal is never missed). */
static bool wait_for_job(tc_thread_pool *pool, int id, uint64_t *seen, int64_t poll_deadline_ns) {
    while (!pool->stopping && !can_join(pool, *seen, id)) {
        if (pool->generation != *seen && id < pool->max_join) /* wanted, but came too late */
            poll_deadline_ns = tc_parallel_clock_ns() + TC_PARALLEL_SPIN_NS;
        *seen = pool->generation;
        bool published = false;
        if (tc_parallel_clock_ns() < poll_deadline_ns) {
            pthread_mutex_unlock(&pool->mutex);
            published = poll_until(pool, generation_changed, *seen, poll_deadline_ns);
            pthread_mutex_lock(&pool->mutex);
        }
        if (!published && pool->generation == *seen && !pool->stopping) {
            pool->asleep[id] = true;
            pthread_cond_wait(&pool->wake[id], &pool->mutex);
            pool->asleep[id] = false;
            pool->wakeups[id]++;
            /* woken for a job: if it closed before this thread came, poll for the next one */
            poll_deadline_ns = tc_parallel_clock_ns() + TC_PARALLEL_SPIN_NS;
        }
    }
    return !pool->stopping;
}

/* A joined worker is done with its job. Without the mutex: only the last one takes it, to wake
 * a caller that went to sleep waiting (finish checks `active` under the mutex before it
 * sleeps, so this signal cannot come between its check and its sleep). At 16 threads, a
 * mutex taken by every leaving helper was a convoy at the end of every job. */
static void leave(tc_thread_pool *pool) {
    if (atomic_fetch_sub(&pool->active, 1) == 1) {
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_signal(&pool->idle);
        pthread_mutex_unlock(&pool->mutex);
    }
}

static void *worker_main(void *arg) {
    const worker_arg *self = arg;
    tc_thread_pool *pool = self->pool;
    uint64_t seen = 0;
    int64_t deadline = tc_parallel_clock_ns() + TC_PARALLEL_SPIN_NS;
    pthread_mutex_lock(&pool->mutex);
    while (wait_for_job(pool, self->id, &seen, deadline)) {
        seen = pool->generation;
        pool->joined++;
        pool->active++;
        parallel_job *job = pool->job;
        pthread_mutex_unlock(&pool->mutex);
        run_tasks(job, self->id + 1);
        leave(pool);
        /* the next job is usually some microseconds away: poll for it before taking the mutex */
        deadline = tc_parallel_clock_ns() + TC_PARALLEL_SPIN_NS;
        poll_until(pool, generation_changed, seen, deadline);
        pthread_mutex_lock(&pool->mutex);
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

/* Starts workers until the pool has `wanted` (called with the mutex held). A worker that
 * cannot be started is simply missing: the others and the caller do its share. */
static void grow_pool(tc_thread_pool *pool, int wanted) {
    while (pool->n_threads < wanted && pool->n_threads < TC_PARALLEL_MAX_THREADS) {
        int t = pool->n_threads;
        worker_arg *arg = &pool->args[t];
        arg->pool = pool;
        arg->id = t;
        if (pthread_cond_init(&pool->wake[t], NULL) != 0)
            return;
        if (pthread_create(&pool->threads[t], NULL, worker_main, arg) != 0) {
            pthread_cond_destroy(&pool->wake[t]);
            return;
        }
        pool->n_threads++;
    }
}

void tc_thread_pool_thread_state(tc_thread_pool *pool, int thread, bool *asleep, int64_t *wakeups) {
    *asleep = false;
    *wakeups = 0;
    if (!pool || thread < 0)
        return;
    pthread_mutex_lock(&pool->mutex);
    if (thread < pool->n_threads) {
        *asleep = pool->asleep[thread];
        *wakeups = pool->wakeups[thread];
    }
    pthread_mutex_unlock(&pool->mutex);
}

int tc_thread_pool_take_peak(tc_thread_pool *pool) {
    if (!pool)
        return 0;
    pthread_mutex_lock(&pool->mutex);
    int peak = pool->peak_workers;
    pool->peak_workers = 0;
    pthread_mutex_unlock(&pool->mutex);
    return peak;
}

int tc_parallel_workers(int n_threads, int64_t n_tasks) {
    if (n_threads < 1 || n_tasks < 1)
        return 1;
    if (n_threads > TC_PARALLEL_MAX_THREADS)
        n_threads = TC_PARALLEL_MAX_THREADS;
    return n_tasks < n_threads ? (int)n_tasks : n_threads;
}

typedef struct range_job {
    tc_range_fn fn;
    void *ctx;
    int64_t n_items, chunk;
} range_job;

static void range_task(void *vjob, int64_t task, int worker) {
    (void)worker;
    const range_job *job = vjob;
    int64_t begin = task * job->chunk, end = begin + job->chunk;
    job->fn(job->ctx, begin, end < job->n_items ? end : job->n_items);
}

void tc_parallel_ranges(tc_thread_pool *pool, int n_threads, int64_t n_items, double cost,
                        int64_t granule, int64_t min_items, tc_range_fn fn, void *ctx) {
    if (n_items <= 0)
        return;
    int threads = tc_parallel_threads_for_work(pool, n_threads, (double)n_items * cost);
    if (threads <= 1) {
        fn(ctx, 0, n_items);
        return;
    }
    int64_t tasks = (int64_t)threads * TC_PARALLEL_TASKS_PER_THREAD, g = granule > 0 ? granule : 1;
    int64_t chunk = (n_items + tasks - 1) / tasks;
    chunk = chunk < min_items ? min_items : chunk;
    range_job job = {.fn = fn, .ctx = ctx, .n_items = n_items, .chunk = (chunk + g - 1) / g * g};
    tc_parallel_for(pool, threads, (n_items + job.chunk - 1) / job.chunk, range_task, &job);
}

/* Publishes a job of n_tasks tasks to the pool for up to workers - 1 helpers, its home ranges'
 * claims in the pool; false when the pool is in use. */
static bool publish(tc_thread_pool *pool, parallel_job *job, tc_parallel_fn fn, void *ctx,
                    int64_t n_tasks, int workers) {
    pthread_mutex_lock(&pool->mutex);
    if (pool->busy || pool->stopping) {
        pthread_mutex_unlock(&pool->mutex);
        return false;
    }
    pool->busy = true;
    job->fn = fn;
    job->ctx = ctx;
    job->n_tasks = n_tasks;
    job->n_homes = n_tasks > CLAIM_MAX_TWO_ENDED ? 1 : workers;
    job->homes = pool->homes;
    for (int h = 0; h < job->n_homes; h++)
        atomic_init(&pool->homes[h].claims, 0);
    grow_pool(pool, workers - 1);
    pool->job = job;
    pool->generation++;
    pool->joined = 0;
    pool->max_join = workers - 1; /* `active` is 0: the job before waited for its helpers */
    pool->open = true;
    for (int t = 0; t < pool->max_join && t < pool->n_threads; t++)
        if (pool->asleep[t])
            pthread_cond_signal(&pool->wake[t]);
    pthread_mutex_unlock(&pool->mutex);
    return true;
}

/* Closes the job to new workers and waits for the ones that joined; counts its workers for
 * tc_thread_pool_take_peak unless it was the pool's own measurement. */
static void finish(tc_thread_pool *pool, bool count_peak) {
    pthread_mutex_lock(&pool->mutex);
    pool->open = false;
    if (pool->active > 0) {
        pthread_mutex_unlock(&pool->mutex);
        poll_until(pool, workers_idle, 0, tc_parallel_clock_ns() + TC_PARALLEL_SPIN_NS);
        pthread_mutex_lock(&pool->mutex);
    }
    while (pool->active > 0)
        pthread_cond_wait(&pool->idle, &pool->mutex);
    if (count_peak && pool->joined + 1 > pool->peak_workers)
        pool->peak_workers = pool->joined + 1;
    pool->job = NULL;
    pool->busy = false;
    pthread_mutex_unlock(&pool->mutex);
}

/* Whether the guard has the pool run this job in its calling thread. */
static bool guard_serial(tc_thread_pool *pool) {
    int left = atomic_load_explicit(&pool->serial_left, memory_order_relaxed);
    while (left > 0) {
        if (atomic_compare_exchange_weak(&pool->serial_left, &left, left - 1))
            return true;
    }
    return false;
}

/* The caller worked `own_ns` on the job, then waited `wait_ns` for its helpers. */
static void guard_note(tc_thread_pool *pool, int64_t own_ns, int64_t wait_ns) {
    if (wait_ns > TC_PARALLEL_LATE_NS && wait_ns > own_ns) {
        if (atomic_fetch_add(&pool->strikes, 1) + 1 >= TC_PARALLEL_STRIKES) {
            atomic_store(&pool->strikes, 0);
            atomic_store(&pool->serial_left, TC_PARALLEL_SERIAL_JOBS);
        }
        return;
    }
    int s = atomic_load_explicit(&pool->strikes, memory_order_relaxed);
    while (s > 0 && !atomic_compare_exchange_weak(&pool->strikes, &s, s - 1)) {
    }
}

void tc_parallel_for(tc_thread_pool *pool, int n_threads, int64_t n_tasks, tc_parallel_fn fn,
                     void *ctx) {
    if (n_tasks <= 0)
        return;
    int workers = pool ? tc_parallel_workers(n_threads, n_tasks) : 1;
    parallel_job job;
    if (workers <= 1 || guard_serial(pool) || !publish(pool, &job, fn, ctx, n_tasks, workers)) {
        for (int64_t t = 0; t < n_tasks; t++) /* every task in order, in this thread */
            fn(ctx, t, 0);
        return;
    }
    int64_t start = tc_parallel_clock_ns();
    run_tasks(&job, 0);
    int64_t own_done = tc_parallel_clock_ns();
    finish(pool, true);
    guard_note(pool, own_done - start, tc_parallel_clock_ns() - own_done);
}

/* ---------------------------------------------------------------- the cost model */

/* What a parallel-for costs at t workers (tc_thread_pool_measure); 0: not measured yet. Kept
 * for the process, not for each pool: it is the machine's figure (every pool's helpers are
 * alike), so every session of a process starts from the same thread counts. The counts never
 * change the bits: every kernel splits its outputs, never a sum (tests/runtime/
 * test_thread_caps.c runs models/ and the node tests split over 4 threads against 1). */
static _Atomic int64_t fork_join_figures[TC_PARALLEL_MAX_THREADS + 1];
/* tc_thread_pool_compute_scale's figures, in thousandths of one core; 0: not measured yet. */
static _Atomic int64_t scale_figures[TC_PARALLEL_MAX_THREADS + 1];
static atomic_bool measuring; /* one measurement at a time */

int tc_parallel_choose_threads(const int64_t *fork_join_ns, const double *scale, int n_threads,
                               double work, double work_per_ns) {
    if (n_threads <= 1 || !(work > 0) || !(work_per_ns > 0))
        return 1;
    if (n_threads > TC_PARALLEL_MAX_THREADS)
        n_threads = TC_PARALLEL_MAX_THREADS;
    double serial_ns = work / work_per_ns;
    if (serial_ns < TC_PARALLEL_MIN_SPLIT_NS)
        return 1;
    double imbalance = 1.0 + 1.0 / (2.0 * TC_PARALLEL_TASKS_PER_THREAD);
    int best = 1;
    double best_ns = serial_ns;
    for (int t = 2; t <= n_threads; t++) {
        double cores = scale ? scale[t] : (double)t;
        if (!(cores > 1.0)) /* no more compute than one core: the split only adds its costs */
            continue;
        double ns = serial_ns / cores * imbalance + (double)fork_join_ns[t];
        if (ns < best_ns) {
            best = t;
            best_ns = ns;
        }
    }
    return best;
}

/* The probe: a job of one task a worker, each of which waits until every worker has started
 * one (or the cap is up), so that its time is the fork/join of `workers` workers: publishing,
 * the slowest helper joining, every helper leaving. */
typedef struct probe {
    atomic_int arrived;
    atomic_bool gave_up; /* a helper did not come within the cap: no more waiting */
    int workers;
    int64_t deadline_ns;
} probe;

static void probe_task(void *ctx, int64_t task, int worker) {
    (void)task;
    (void)worker;
    probe *p = ctx;
    atomic_fetch_add(&p->arrived, 1);
    /* offers the core now and then, as poll_until does: the helper waited for may be queued
     * behind this very thread */
    for (unsigned i = 1; atomic_load(&p->arrived) < p->workers && !atomic_load(&p->gave_up); i++) {
        cpu_relax();
        if (tc_parallel_clock_ns() > p->deadline_ns)
            atomic_store(&p->gave_up, true);
        if (i % 256 == 0)
            sched_yield();
    }
}

/* Runs a probe job of one task a worker, fn(ctx, ...), whose tasks first wait at `arrival` for
 * one another (probe_task, within the cap from now); false when the pool is busy. Bypasses the
 * oversubscription guard (it measures the helpers, whatever the guard thinks of them), and its
 * workers count for no job (tc_thread_pool_take_peak). */
static bool run_probe(tc_thread_pool *pool, int workers, probe *arrival, tc_parallel_fn fn,
                      void *ctx) {
    arrival->workers = workers;
    atomic_init(&arrival->arrived, 0);
    atomic_init(&arrival->gave_up, false);
    arrival->deadline_ns = tc_parallel_clock_ns() + TC_PARALLEL_PROBE_CAP_NS;
    parallel_job job;
    if (!publish(pool, &job, fn, ctx, workers, workers))
        return false;
    run_tasks(&job, 0);
    finish(pool, false);
    return true;
}

/* One fork/join probe at `workers` workers, in ns; -1 when the pool is busy. */
static int64_t probe_once(tc_thread_pool *pool, int workers) {
    probe p;
    int64_t start = tc_parallel_clock_ns();
    if (!run_probe(pool, workers, &p, probe_task, &p))
        return -1;
    return tc_parallel_clock_ns() - start;
}

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The second lowest of TC_PARALLEL_PROBE_REPS probes (the first also starts threads and wakes
 * sleeping ones; the lowest alone could be a lucky one); -1 when the pool is busy. */
static int64_t probe_workers(tc_thread_pool *pool, int workers) {
    int64_t ns[TC_PARALLEL_PROBE_REPS];
    for (int i = 0; i < TC_PARALLEL_PROBE_REPS; i++) {
        if ((ns[i] = probe_once(pool, workers)) < 0)
            return -1;
    }
    qsort(ns, TC_PARALLEL_PROBE_REPS, sizeof ns[0], compare_i64);
    return ns[1] > 0 ? ns[1] : 1;
}

/* The compute probe: every worker runs the same loop of independent multiply-adds (enough of
 * them to keep the floating-point units busy, not bound by one chain's latency) once all have
 * arrived, and times itself. The loop's steps are set once so that it takes about
 * TC_PARALLEL_SCALE_NS alone (some 2000 steps optimized, far fewer in a debug or sanitizer
 * build, where a fixed count took milliseconds and ran the measurement out of its budget). */
#define TC_PARALLEL_SCALE_NS 4000
#define TC_PARALLEL_SCALE_MAX_STEPS 65536
#define TC_PARALLEL_SCALE_LANES 32
static volatile float scale_seed = 0.999999f; /* read at run time: the loop cannot be folded */

static float scale_loop(int steps) {
    float acc[TC_PARALLEL_SCALE_LANES], m = scale_seed, a = 1e-7f * scale_seed;
    for (int i = 0; i < TC_PARALLEL_SCALE_LANES; i++)
        acc[i] = (float)i * m;
    for (int k = 0; k < steps; k++) {
        for (int i = 0; i < TC_PARALLEL_SCALE_LANES; i++)
            acc[i] = acc[i] * m + a;
    }
    float sum = 0.0f;
    for (int i = 0; i < TC_PARALLEL_SCALE_LANES; i++)
        sum += acc[i];
    return sum;
}

/* The loop's time in this thread, in ns. */
static int64_t timed_scale_loop(int steps) {
    int64_t start = tc_parallel_clock_ns();
    volatile float sink = scale_loop(steps);
    (void)sink;
    return tc_parallel_clock_ns() - start;
}

/* Steps that take about TC_PARALLEL_SCALE_NS here (doubling from 64). */
static int scale_steps(void) {
    int steps = 64;
    while (steps < TC_PARALLEL_SCALE_MAX_STEPS && timed_scale_loop(steps) < TC_PARALLEL_SCALE_NS)
        steps *= 2;
    return steps;
}

typedef struct scale_probe {
    probe arrival; /* probe_task's barrier: every worker has started */
    int steps;
    int64_t ns[TC_PARALLEL_MAX_THREADS];
} scale_probe;

static void scale_probe_task(void *ctx, int64_t task, int worker) {
    scale_probe *p = ctx;
    probe_task(&p->arrival, task, worker);
    p->ns[task] = atomic_load(&p->arrival.gave_up) ? -1 : timed_scale_loop(p->steps);
}

/* The cores' worth of compute of `workers` workers at once: the sum of each one's speed against
 * the loop alone in this thread (`alone_ns`); `workers` when a helper did not come within the
 * cap (other processes hold the cores now: that says nothing of what the helpers add once they
 * run, and the oversubscription guard already runs jobs in the caller while the cores are
 * held), -1 when the pool is busy. */
static double scale_once(tc_thread_pool *pool, int workers, int steps, int64_t alone_ns) {
    scale_probe p = {.steps = steps};
    if (!run_probe(pool, workers, &p.arrival, scale_probe_task, &p))
        return -1;
    double cores = 0;
    for (int i = 0; i < workers; i++) {
        if (p.ns[i] <= 0)
            return (double)workers;
        cores += (double)alone_ns / (double)p.ns[i];
    }
    return cores;
}

/* The best of TC_PARALLEL_PROBE_REPS scale probes, in [1, workers] (-1: the pool was busy);
 * the loop alone timed before each (its best). A disturbed repetition reads low, none reads
 * high. */
static double scale_workers(tc_thread_pool *pool, int workers) {
    int64_t alone = INT64_MAX;
    double best = 1.0;
    int steps = scale_steps();
    for (int i = 0; i < TC_PARALLEL_PROBE_REPS; i++) {
        int64_t ns = timed_scale_loop(steps);
        alone = ns > 0 && ns < alone ? ns : alone;
        double cores = scale_once(pool, workers, steps, alone);
        if (cores < 0)
            return -1;
        best = cores > best ? cores : best;
    }
    return best > workers ? (double)workers : best;
}

/* The worker counts measured: 2, 4, 8, ... and max. */
static int next_probe(int workers, int max) {
    return workers < max && workers * 2 > max ? max : workers * 2;
}

bool tc_thread_pool_measure(tc_thread_pool *pool, int max_workers) {
    if (!pool)
        return false;
    if (max_workers > TC_PARALLEL_MAX_THREADS)
        max_workers = TC_PARALLEL_MAX_THREADS;
    if (max_workers < 2)
        return true;
    bool idle = false;
    if (!atomic_compare_exchange_strong(&measuring, &idle, true))
        return false;
    /* the fork/join probes and the scale probes each have the budget (a loaded machine's
     * waits at the cap spend it) */
    int64_t ns[TC_PARALLEL_MAX_THREADS + 1] = {0}, fork_join_spent = 0, scale_spent = 0;
    double scale[TC_PARALLEL_MAX_THREADS + 1] = {0};
    int last = 0;
    for (int t = 2; t <= max_workers; t = next_probe(t, max_workers)) {
        int64_t start = tc_parallel_clock_ns();
        bool over_budget = fork_join_spent > TC_PARALLEL_PROBE_BUDGET_NS;
        if ((ns[t] = over_budget ? TC_PARALLEL_PROBE_CAP_NS : probe_workers(pool, t)) < 0)
            break;
        int64_t middle = tc_parallel_clock_ns();
        fork_join_spent += middle - start;
        /* over budget: unknown, so t (as while unmeasured) */
        scale[t] = scale_spent > TC_PARALLEL_PROBE_BUDGET_NS ? (double)t : scale_workers(pool, t);
        scale_spent += tc_parallel_clock_ns() - middle;
        if (scale[t] < 0)
            break;
        /* never less compute with more workers: the cost model's more-work-more-threads */
        scale[t] = scale[t] < scale[last] ? scale[last] : scale[t];
        /* the counts between the last probe and this one: on the line between the two */
        for (int u = last + 1; last >= 2 && u < t; u++) {
            ns[u] = ns[last] + (ns[t] - ns[last]) * (u - last) / (t - last);
            scale[u] = scale[last] + (scale[t] - scale[last]) * (u - last) / (t - last);
        }
        last = t;
    }
    bool done = last == max_workers;
    for (int t = 2; done && t <= max_workers; t++) {
        atomic_store(&fork_join_figures[t], ns[t]);
        atomic_store(&scale_figures[t], (int64_t)(scale[t] * 1000.0 + 0.5));
    }
    atomic_store(&measuring, false);
    return done;
}

/* The kept figure at `workers` (2 .. TC_PARALLEL_MAX_THREADS), or the stand-in. */
static int64_t kept_fork_join_ns(int workers) {
    int64_t ns = atomic_load(&fork_join_figures[workers]);
    if (ns <= 0)
        return TC_PARALLEL_UNMEASURED_NS;
    int64_t ceiling = TC_PARALLEL_FORK_JOIN_CEILING_NS +
                      TC_PARALLEL_FORK_JOIN_CEILING_WORKER_NS * (int64_t)workers;
    return ns < ceiling ? ns : ceiling;
}

int64_t tc_thread_pool_fork_join_ns(tc_thread_pool *pool, int workers) {
    if (!pool || workers <= 1)
        return 0;
    if (workers > TC_PARALLEL_MAX_THREADS)
        workers = TC_PARALLEL_MAX_THREADS;
    if (atomic_load(&fork_join_figures[workers]) == 0 && !tc_thread_pool_measure(pool, workers)) {
        /* another session is measuring: its figures, not the stand-in, so that both choose
         * alike (a measurement ends within its budget and caps) */
        while (atomic_load(&measuring))
            sched_yield();
    }
    return kept_fork_join_ns(workers);
}

/* The kept scale at `workers` (2 .. TC_PARALLEL_MAX_THREADS), or `workers` while unmeasured. */
static double kept_scale(int workers) {
    int64_t milli = atomic_load(&scale_figures[workers]);
    return milli > 0 ? (double)milli / 1000.0 : (double)workers;
}

double tc_thread_pool_compute_scale(tc_thread_pool *pool, int workers) {
    if (!pool || workers <= 1)
        return 1.0;
    if (workers > TC_PARALLEL_MAX_THREADS)
        workers = TC_PARALLEL_MAX_THREADS;
    tc_thread_pool_fork_join_ns(pool, workers); /* measures both, once */
    return kept_scale(workers);
}

int tc_test_split_threads = 0;

int tc_parallel_threads_for_work(tc_thread_pool *pool, int n_threads, double flops) {
    if (tc_test_split_threads > 0 && pool && n_threads > 1) /* tests only */
        return n_threads < tc_test_split_threads ? n_threads : tc_test_split_threads;
    /* below the floor, without measuring the pool (a model of tiny nodes starts no thread) */
    if (!pool || n_threads <= 1 || !(flops / TC_PARALLEL_WORK_PER_NS >= TC_PARALLEL_MIN_SPLIT_NS))
        return 1;
    if (n_threads > TC_PARALLEL_MAX_THREADS)
        n_threads = TC_PARALLEL_MAX_THREADS;
    int64_t fork_join_ns[TC_PARALLEL_MAX_THREADS + 1] = {0};
    double scale[TC_PARALLEL_MAX_THREADS + 1] = {0};
    fork_join_ns[n_threads] = tc_thread_pool_fork_join_ns(pool, n_threads); /* measures 2 .. n */
    for (int t = 2; t < n_threads; t++)
        fork_join_ns[t] = kept_fork_join_ns(t);
    for (int t = 2; t <= n_threads; t++)
        scale[t] = kept_scale(t);
    return tc_parallel_choose_threads(fork_join_ns, scale, n_threads, flops,
                                      TC_PARALLEL_WORK_PER_NS);
}
