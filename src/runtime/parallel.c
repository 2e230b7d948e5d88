#include "runtime/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

/* Below this much work a parallel-for is not worth it. */
#define TCONV_PARALLEL_MIN_FLOPS 2.0e6

/* How long an idle worker polls for the next job, and a caller for its workers to finish, before
 * sleeping on a condition variable. A model's kernels follow each other within tens of
 * microseconds, and waking a sleeping thread costs a futex call plus, in a virtual machine, an
 * interrupt to a halted vCPU: measured here, that made a 2-thread DCGAN generator at batch 1
 * 1.6x slower than 1 thread. OpenMP runtimes poll the same way (GOMP_SPINCOUNT). */
#define TCONV_PARALLEL_SPIN_NS 200000

/* One parallel-for. It lives on the caller's stack: the caller does not return before every
 * worker that joined it has left (pool.active == 0). */
typedef struct parallel_job {
    tc_parallel_fn fn;
    void *ctx;
    int64_t n_tasks;
    atomic_int_fast64_t next_task;
} parallel_job;

/* A process-wide pool of persistent workers, started on first use and grown on demand. A
 * parallel-for publishes its job and wakes the pool; workers that wake while the job is still
 * open join it (up to workers - 1 of them) and claim tasks from a shared counter. The caller
 * works too and, once every task is claimed, closes the job and waits only for the workers that
 * joined: a worker that has not been scheduled yet (another process holds the core) is not
 * waited for, it simply finds the job closed. One parallel-for at a time uses the pool; a
 * concurrent or nested one runs in its calling thread. */
typedef struct worker_pool {
    pthread_mutex_t mutex;
    pthread_cond_t work; /* a job was published */
    pthread_cond_t idle; /* the last joined worker left */
    int n_threads;       /* workers started */
    bool busy;           /* a parallel-for owns the pool */
    bool open;           /* the job takes new workers */
    /* Written under the mutex; atomic so that polling threads may read them without it. */
    _Atomic uint64_t generation; /* of the job published last */
    atomic_int active;           /* joined workers still running tasks */
    int joined, max_join;        /* workers that joined the job; how many may */
    parallel_job *job;
} worker_pool;

static worker_pool pool = {
    .mutex = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
    .idle = PTHREAD_COND_INITIALIZER,
};

static void run_tasks(parallel_job *job, int worker) {
    for (;;) {
        int64_t task = atomic_fetch_add(&job->next_task, 1);
        if (task >= job->n_tasks)
            return;
        job->fn(job->ctx, task, worker);
    }
}

/* Whether a worker that last saw generation `seen` may join the published job. */
static bool can_join(uint64_t seen) {
    return pool.open && pool.generation != seen && pool.joined < pool.max_join;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Polls until ready(arg) (true) or the spin time is up (false). */
static bool poll_until(bool (*ready)(uint64_t arg), uint64_t arg) {
    int64_t start = now_ns();
    for (unsigned i = 1;; i++) {
        if (ready(arg))
            return true;
        cpu_relax();
        if (i % 256 == 0 && now_ns() - start > TCONV_PARALLEL_SPIN_NS)
            return false;
    }
}

/* A job other than generation `seen` was published. */
static bool generation_changed(uint64_t seen) {
    return atomic_load_explicit(&pool.generation, memory_order_relaxed) != seen;
}

/* No joined worker is active. */
static bool workers_idle(uint64_t unused) {
    (void)unused;
    return atomic_load_explicit(&pool.active, memory_order_relaxed) == 0;
}

/* Waits (mutex held) until the worker may join a job it has not seen: polls first, then sleeps.
 * A job it cannot join (closed, or full) is marked seen, so polling waits for the next one. */
static void wait_for_job(uint64_t *seen) {
    while (!can_join(*seen)) {
        *seen = pool.generation;
        pthread_mutex_unlock(&pool.mutex);
        bool published = poll_until(generation_changed, *seen);
        pthread_mutex_lock(&pool.mutex);
        if (!published && pool.generation == *seen)
            pthread_cond_wait(&pool.work, &pool.mutex);
    }
}

static void *worker_main(void *arg) {
    (void)arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool.mutex);
    for (;;) {
        wait_for_job(&seen);
        seen = pool.generation;
        int index = ++pool.joined;
        pool.active++;
        parallel_job *job = pool.job;
        pthread_mutex_unlock(&pool.mutex);
        run_tasks(job, index);
        pthread_mutex_lock(&pool.mutex);
        if (--pool.active == 0)
            pthread_cond_signal(&pool.idle);
    }
    return NULL;
}

/* Starts workers until the pool has `wanted` (called with the mutex held). A worker that
 * cannot be started is simply missing: the others and the caller do its share. */
static void grow_pool(int wanted) {
    while (pool.n_threads < wanted) {
        pthread_t thread;
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0)
            return;
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&thread, &attr, worker_main, NULL);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            return;
        pool.n_threads++;
    }
}

int tc_parallel_workers(int n_threads, int64_t n_tasks) {
    if (n_threads < 1 || n_tasks < 1)
        return 1;
    if (n_threads > TCONV_PARALLEL_MAX_THREADS)
        n_threads = TCONV_PARALLEL_MAX_THREADS;
    return n_tasks < n_threads ? (int)n_tasks : n_threads;
}

int tc_parallel_threads_for_work(int n_threads, double flops) {
    if (n_threads < 1 || flops < TCONV_PARALLEL_MIN_FLOPS)
        return 1;
    return n_threads;
}

/* Publishes job to the pool for up to workers - 1 helpers; false when the pool is in use. */
static bool publish(parallel_job *job, int workers) {
    pthread_mutex_lock(&pool.mutex);
    if (pool.busy) {
        pthread_mutex_unlock(&pool.mutex);
        return false;
    }
    pool.busy = true;
    grow_pool(workers - 1);
    pool.job = job;
    pool.generation++;
    pool.joined = 0;
    pool.max_join = workers - 1;
    pool.active = 0;
    pool.open = true;
    pthread_cond_broadcast(&pool.work);
    pthread_mutex_unlock(&pool.mutex);
    return true;
}

/* Closes the job to new workers and waits for the ones that joined. */
static void finish(void) {
    pthread_mutex_lock(&pool.mutex);
    pool.open = false;
    if (pool.active > 0) {
        pthread_mutex_unlock(&pool.mutex);
        poll_until(workers_idle, 0);
        pthread_mutex_lock(&pool.mutex);
    }
    while (pool.active > 0)
        pthread_cond_wait(&pool.idle, &pool.mutex);
    pool.job = NULL;
    pool.busy = false;
    pthread_mutex_unlock(&pool.mutex);
}

void tc_parallel_for(int n_threads, int64_t n_tasks, tc_parallel_fn fn, void *ctx) {
    if (n_tasks <= 0)
        return;
    int workers = tc_parallel_workers(n_threads, n_tasks);
    parallel_job job = {.fn = fn, .ctx = ctx, .n_tasks = n_tasks};
    atomic_init(&job.next_task, 0);
    if (workers <= 1 || !publish(&job, workers)) {
        run_tasks(&job, 0);
        return;
    }
    run_tasks(&job, 0);
    finish();
}
