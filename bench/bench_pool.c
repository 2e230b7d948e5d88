/* What a session's idle pool threads cost (issue 23): a model run with THREADS threads, its
 * median time and the cores the process kept busy meanwhile.
 *
 *   bench_pool MODEL_DIR SECONDS THREADS...
 *
 * MODEL_DIR holds model.onnx and test_data_set_0 (checked against its golden outputs first).
 * For each thread count: a runner (measured thread caps on, the default) warmed up for as many
 * runs as the caps take to settle (bench_tuning_runs), then runs for SECONDS. One JSON line each:
 * the median ms a run, and cores_busy, the process's CPU time (every thread) over the wall time.
 * A small model's nodes take fewer workers than a 16-thread session has; threads that no job
 * uses should cost nothing, so cores_busy should stay near the workers the nodes use, not the
 * session's count (a pool that woke every thread for every job, or kept them polling while jobs
 * came, showed close to the full count). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"

enum { MAX_RUNS = 1 << 20 };

static void bench_threads(tconv_model *m, const char *data_set, int threads, double seconds,
                          double *times) {
    tconv_runner *r = bench_runner(m, threads);
    double worst = 0, rtol, atol;
    bench_golden_tolerance(m, &rtol, &atol);
    bench_check(tconv_runner_run_data_set(r, data_set, rtol, atol, &worst, NULL), data_set,
                tconv_runner_last_error(r));
    for (int i = bench_tuning_runs(threads); i > 0; i--)
        bench_check(tconv_runner_run(r), "run", tconv_runner_last_error(r));
    double cpu0 = bench_own_cpu_s(), start = bench_now();
    int n = 0;
    while (n < MAX_RUNS && (n < 10 || bench_now() - start < seconds)) {
        double t = bench_now();
        bench_check(tconv_runner_run(r), "run", tconv_runner_last_error(r));
        times[n++] = (bench_now() - t) * 1e3;
    }
    double wall = bench_now() - start, cpu = bench_own_cpu_s() - cpu0;
    double median = bench_sorted_median(times, (size_t)n);
    printf("{\"bench\": \"pool\", \"threads\": %d, \"runs\": %d, \"ms\": %.4f, \"cores_busy\": "
           "%.2f, \"cpus\": %d}\n",
           threads, n, median, cpu / wall, bench_cpus());
    fflush(stdout);
    tconv_runner_free(r);
}

int main(int argc, char **argv) {
    double seconds = argc > 2 ? atof(argv[2]) : 0;
    if (argc < 4 || !(seconds > 0)) {
        fprintf(stderr, "usage: bench_pool MODEL_DIR SECONDS THREADS...\n");
        return 2;
    }
    char path[4096], data_set[4096];
    snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
    snprintf(data_set, sizeof data_set, "%s/test_data_set_0", argv[1]);
    tconv_model *m = bench_read(path);
    double *times = malloc(MAX_RUNS * sizeof *times);
    if (!times) {
        fprintf(stderr, "bench_pool: out of memory\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        int threads = atoi(argv[i]);
        if (threads < 1) {
            fprintf(stderr, "bench_pool: bad thread count %s\n", argv[i]);
            return 2;
        }
        bench_threads(m, data_set, threads, seconds, times);
    }
    free(times);
    tconv_model_free(m);
    return 0;
}
