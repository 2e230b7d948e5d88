/* Measured thread caps against fixed thread counts, in one process (issue 23).
 *
 *   bench_thread_caps MODELS_DIR THREADS ROUNDS [BLOCK] [NAME...]
 *
 * For each model (models/<NAME>/model.onnx, on the inputs of its test_data_set_0, checked
 * against the golden outputs first, as bench_models does): three runners in one process on one
 * shared pool, so that they see the same machine at the same moments: "tuned" (THREADS
 * threads, measured thread caps on: the default), "fixed" (THREADS threads,
 * tconv_runner_set_thread_tuning off: every node on the cost model's count) and "one" (1
 * thread). Each first runs 0.5 s and as many runs as the tuned one measures in
 * (bench_tuning_runs), then ROUNDS rounds of BLOCK runs each (default 25), the three in turn,
 * each first in a third of the rounds. Each model is measured twice, the tuned runner made
 * first and then last. Prints a JSON line for each: the median over the rounds of each runner's
 * block medians (ms), the least block median, and fixed/tuned (above 1: the caps are quicker);
 * then a line with the geometric mean of the two fixed/tuned.
 *
 * Why one process: the 2-core KVM machine these figures come from has minutes-long periods in
 * which 2-thread runs take twice as long; separate processes, run one after another, land in
 * different periods and compare those instead of the code. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define MAX_ROUNDS 256
#define MAX_BLOCK 1024

static tconv_runner *runner_for(tconv_model *m, const char *data_set, tconv_threadpool *pool,
                                int threads, bool tuned) {
    tconv_runner *r = bench_runner(m, threads);
    if (!tuned)
        bench_check(tconv_runner_set_thread_tuning(r, false), "thread tuning", "");
    bench_check(tconv_runner_set_threadpool(r, pool), "pool", "");
    double worst = 0, rtol, atol;
    bench_golden_tolerance(m, &rtol, &atol);
    bench_check(tconv_runner_run_data_set(r, data_set, rtol, atol, &worst, NULL), data_set,
                tconv_runner_last_error(r));
    return r;
}

/* The median of `n` runs, ms. */
static double block_ms(tconv_runner *r, int n) {
    double t[MAX_BLOCK];
    for (int i = 0; i < n; i++) {
        double start = bench_now();
        bench_check(tconv_runner_run(r), "run", tconv_runner_last_error(r));
        t[i] = (bench_now() - start) * 1e3;
    }
    return bench_sorted_median(t, (size_t)n);
}

/* One measurement of a model; returns fixed/tuned. */
static double bench_model(const char *dir, const char *name, int threads, int rounds, int block,
                          bool tuned_first) {
    char path[4096], data_set[4096];
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
    snprintf(data_set, sizeof data_set, "%s/%s/test_data_set_0", dir, name);
    tconv_model *m = bench_read(path);
    tconv_threadpool *pool = NULL;
    bench_check(tconv_threadpool_new(&pool), "pool", "");
    /* made first, or last: the runner made first in a process ran slower here, whatever its
     * settings (two fixed runners: 30.4 against 20.8 ms on erfnet_paper), so each model is
     * measured both ways */
    tconv_runner *r[3];
    for (int i = 0; i < 3; i++) {
        int k = tuned_first ? i : 2 - i;
        r[k] = runner_for(m, data_set, pool, k == 2 ? 1 : threads, k == 0);
    }
    for (int k = 0; k < 3; k++) { /* 0.5 s, and the tuned runner's measuring */
        double until = bench_now() + 0.5;
        for (int i = 0; i < bench_tuning_runs(threads) || bench_now() < until; i++)
            block_ms(r[k], 1);
    }
    static double ms[3][MAX_ROUNDS];
    for (int q = 0; q < rounds; q++) { /* each runner first in a third of the rounds */
        for (int i = 0; i < 3; i++) {
            int k = (q + i) % 3;
            ms[k][q] = block_ms(r[k], block);
        }
    }
    double med[3], least[3];
    for (int k = 0; k < 3; k++) {
        med[k] = bench_sorted_median(ms[k], (size_t)rounds);
        least[k] = ms[k][0];
    }
    printf("{\"bench\": \"thread_caps\", \"case\": \"%s\", \"threads\": %d, \"rounds\": %d, "
           "\"block\": %d, \"tuned_made\": \"%s\", \"tuned_ms\": %.4f, \"fixed_ms\": %.4f, "
           "\"one_ms\": %.4f, \"tuned_min_ms\": %.4f, \"fixed_min_ms\": %.4f, "
           "\"one_min_ms\": %.4f, \"fixed_over_tuned\": %.3f, \"load\": %.2f}\n",
           name, threads, rounds, block, tuned_first ? "first" : "last", med[0], med[1], med[2],
           least[0], least[1], least[2], med[1] / med[0], bench_load());
    fflush(stdout);
    for (int k = 0; k < 3; k++)
        tconv_runner_free(r[k]);
    tconv_threadpool_free(pool);
    tconv_model_free(m);
    return med[1] / med[0];
}

/* Both ways, then their geometric mean. */
static void bench_both(const char *dir, const char *name, int threads, int rounds, int block) {
    double a = bench_model(dir, name, threads, rounds, block, true);
    double b = bench_model(dir, name, threads, rounds, block, false);
    printf("{\"bench\": \"thread_caps\", \"case\": \"%s\", \"threads\": %d, "
           "\"fixed_over_tuned_both\": %.3f}\n",
           name, threads, sqrt(a * b));
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_thread_caps MODELS_DIR THREADS ROUNDS [BLOCK] [NAME...]\n");
        return 2;
    }
    int threads = atoi(argv[2]), rounds = atoi(argv[3]);
    int block = argc > 4 ? atoi(argv[4]) : 25;
    if (threads < 2 || rounds < 1 || rounds > MAX_ROUNDS || block < 1 || block > MAX_BLOCK) {
        fprintf(stderr, "bench_thread_caps: THREADS >= 2, ROUNDS in [1, %d], BLOCK in [1, %d]\n",
                MAX_ROUNDS, MAX_BLOCK);
        return 2;
    }
    if (argc > 5) {
        for (int i = 5; i < argc; i++)
            bench_both(argv[1], argv[i], threads, rounds, block);
        return 0;
    }
    /* every model of models.tsv */
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s/models.tsv", argv[1]);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_thread_caps: cannot open %s\n", path);
        return 2;
    }
    while (fgets(line, sizeof line, f)) {
        char name[256];
        if (strncmp(line, "name\t", 5) != 0 && sscanf(line, "%255[^\t\n]", name) == 1)
            bench_both(argv[1], name, threads, rounds, block);
    }
    fclose(f);
    return 0;
}
