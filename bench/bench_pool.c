/* The worker pool on its own (issue 23): jobs of a few workers on pools of more threads, as a
 * session of n threads runs a model whose nodes take fewer.
 *
 *   bench_pool [SECONDS]     (default 1 a configuration)
 *
 * For each pool size P and job width W (W <= P): a pool started by one job of P workers, then W-
 * worker jobs back to back for SECONDS, each task some 2 us of arithmetic. Prints a JSON line
 * each: microseconds a job, and the cores the process kept busy meanwhile (its CPU time over the
 * wall time): the W workers' share, plus what the pool's other P - W threads burn. A pool whose
 * unused threads sleep keeps that near W (or the cores there are); one that wakes every thread
 * for every job, or keeps them polling while jobs come, near P. The one program of bench/ on an
 * internal API (parallel.h): a job's worker count is the cost model's choice, not the caller's. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "runtime/compute/parallel.h"

static void arithmetic_task(void *ctx, int64_t task, int worker) {
    (void)task;
    (void)worker;
    volatile double *sink = ctx;
    double v = 1.0;
    for (int i = 0; i < 2000; i++)
        v = v * 1.0000001 + 1e-9;
    *sink = v;
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static void run_config(int pool_threads, int job_workers, double seconds) {
    tc_thread_pool *pool = tc_thread_pool_create();
    if (!pool) {
        fprintf(stderr, "bench_pool: out of memory\n");
        exit(2);
    }
    volatile double sink = 0.0;
    tc_parallel_for(pool, pool_threads, pool_threads, arithmetic_task, (void *)&sink);
    double cpu0 = cpu_seconds();
    int64_t t0 = tc_parallel_clock_ns(), jobs = 0;
    while ((double)(tc_parallel_clock_ns() - t0) < seconds * 1e9) {
        tc_parallel_for(pool, job_workers, job_workers, arithmetic_task, (void *)&sink);
        jobs++;
    }
    double wall = 1e-9 * (double)(tc_parallel_clock_ns() - t0), cpu = cpu_seconds() - cpu0;
    printf("{\"bench\": \"pool\", \"pool_threads\": %d, \"job_workers\": %d, \"jobs\": %lld, "
           "\"us_per_job\": %.2f, \"cores_busy\": %.2f}\n",
           pool_threads, job_workers, (long long)jobs, 1e6 * wall / (double)jobs, cpu / wall);
    fflush(stdout);
    tc_thread_pool_destroy(pool);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(seconds > 0)) {
        fprintf(stderr, "usage: bench_pool [SECONDS]\n");
        return 2;
    }
    static const int pools[] = {2, 4, 8, 16};
    static const int widths[] = {1, 2, 4, 8, 16};
    for (size_t p = 0; p < sizeof pools / sizeof pools[0]; p++)
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
            if (widths[w] >= 2 && widths[w] <= pools[p])
                run_config(pools[p], widths[w], seconds);
    return 0;
}
