#include "runtime/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* Below this much work a thread start (tens of microseconds) is not worth it. */
#define TCONV_PARALLEL_MIN_FLOPS 2.0e6

typedef struct parallel_job {
    tconv_parallel_fn fn;
    void *ctx;
    int64_t n_tasks;
    atomic_int_fast64_t next_task;
} parallel_job;

typedef struct parallel_worker {
    parallel_job *job;
    int index;
} parallel_worker;

static void run_tasks(parallel_job *job, int worker) {
    for (;;) {
        int64_t task = atomic_fetch_add(&job->next_task, 1);
        if (task >= job->n_tasks)
            return;
        job->fn(job->ctx, task, worker);
    }
}

static void *worker_main(void *arg) {
    parallel_worker *w = arg;
    run_tasks(w->job, w->index);
    return NULL;
}

int tconv_parallel_workers(int n_threads, int64_t n_tasks) {
    if (n_threads < 1 || n_tasks < 1)
        return 1;
    if (n_threads > TCONV_PARALLEL_MAX_THREADS)
        n_threads = TCONV_PARALLEL_MAX_THREADS;
    return n_tasks < n_threads ? (int)n_tasks : n_threads;
}

int tconv_parallel_threads_for_work(int n_threads, double flops) {
    if (n_threads < 1 || flops < TCONV_PARALLEL_MIN_FLOPS)
        return 1;
    return n_threads;
}

void tconv_parallel_for(int n_threads, int64_t n_tasks, tconv_parallel_fn fn, void *ctx) {
    if (n_tasks <= 0)
        return;
    int workers = tconv_parallel_workers(n_threads, n_tasks);
    parallel_job job = {.fn = fn, .ctx = ctx, .n_tasks = n_tasks};
    atomic_init(&job.next_task, 0);
    if (workers <= 1) {
        run_tasks(&job, 0);
        return;
    }
    pthread_t threads[TCONV_PARALLEL_MAX_THREADS];
    parallel_worker args[TCONV_PARALLEL_MAX_THREADS];
    bool started[TCONV_PARALLEL_MAX_THREADS] = {false};
    for (int i = 1; i < workers; i++) {
        args[i] = (parallel_worker){.job = &job, .index = i};
        started[i] = pthread_create(&threads[i], NULL, worker_main, &args[i]) == 0;
    }
    run_tasks(&job, 0);
    for (int i = 1; i < workers; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
    }
}
