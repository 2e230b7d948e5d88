/* Whole-model latency in tconv's runtime. One JSON object a line.
 *
 *   bench_models MODELS_DIR [RUNS] [NAME...]
 *       models/dcgan_generator and models/unet (or the names given) at batch 1 and 8,
 *       single-thread and with every core, on seeded random inputs (the rows beside PyTorch).
 *   bench_models --case DIR NAME THREADS [RUNS]
 *       the ONNX test directory DIR (model.onnx, test_data_set_0) as it is, with THREADS
 *       threads, on the inputs of test_data_set_0 (the rows beside onnxruntime, one process
 *       per model and thread count so that the peak RSS printed is that model's).
 *
 * Each model is first checked against its golden output (test_data_set_0, at
 * bench_golden_tolerance's tolerances). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static tconv_model *load_model(const char *dir) {
    char path[8192];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    return bench_read(path);
}

/* Runs test_data_set_0 and compares every output with the golden data. */
static double check_golden(const char *dir) {
    tconv_model *m = load_model(dir);
    tconv_runner *r = bench_runner(m, 1);
    char path[8192];
    double worst = 0, rtol, atol;
    bench_golden_tolerance(m, &rtol, &atol);
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    bench_check(tconv_runner_run_data_set(r, path, rtol, atol, &worst, NULL), path,
                tconv_runner_last_error(r));
    tconv_runner_free(r);
    tconv_model_free(m);
    return worst;
}

/* Gives every data input of the main graph batch size `batch` (dim 0). */
static void set_batch(tconv_model *m, int64_t batch) {
    tconv_graph *g = tconv_model_graph(m);
    for (size_t i = 0; i < tconv_graph_input_count(g); i++) {
        tconv_value *v = tconv_graph_input(g, i);
        if (tconv_value_initializer(v))
            continue;
        int rank = tconv_value_rank(v);
        int64_t dims[16];
        for (int a = 0; a < rank && a < 16; a++)
            dims[a] = tconv_value_dim(v, a);
        dims[0] = batch;
        bench_check(tconv_value_set_type(v, tconv_value_dtype(v), rank, dims), "batch",
                    tconv_model_last_error(m));
    }
    /* Output shapes carry the exported batch: forget them. */
    for (size_t i = 0; i < tconv_graph_output_count(g); i++) {
        tconv_value *v = tconv_graph_output(g, i);
        bench_check(tconv_value_set_type(v, tconv_value_dtype(v), -1, NULL), "output type",
                    tconv_model_last_error(m));
    }
}

static void time_model(const char *dir, const char *name, int64_t batch, int threads, int runs,
                       double golden_err) {
    tconv_model *m = load_model(dir);
    set_batch(m, batch);
    tconv_runner *r = bench_runner(m, threads);
    bench_check(tconv_runner_set_random_inputs(r, (uint64_t)batch), "inputs",
                tconv_runner_last_error(r));
    double ms = bench_median_ms(bench_run_runner, r, 5, runs, 8.0);
    if (ms < 0)
        bench_check(TCONV_ERR_INVALID, name, tconv_runner_last_error(r));
    printf("{\"bench\": \"model\", \"case\": \"%s_b%lld\", \"impl\": \"tconv\", \"threads\": %d, "
           "\"ms\": %.4f, \"golden_max_err\": %.3g, \"load\": %.2f, \"others_cpu\": %.2f}\n",
           name, (long long)batch, threads, ms, golden_err, bench_load(), bench_others_cpu());
    fflush(stdout);
    tconv_runner_free(r);
    tconv_model_free(m);
}

/* The row beside onnxruntime's (bench/ort_bench.js prints the same keys): the runner that
 * passed the golden check is timed on the same inputs. base_rss_kib is the process before the
 * model was read, peak_rss_kib its peak (VmHWM) after the golden run and the warm-up runs,
 * before timing: the timing loop's own list of times (megabytes for a model that runs in a
 * microsecond) is not the model's. */
static void time_case(const char *dir, const char *name, int threads, int runs) {
    long base_kib = bench_status_kib("VmRSS");
    char path[8192];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    tconv_model *m = bench_read(path);
    tconv_runner *r = bench_runner(m, threads);
    double worst = 0, rtol, atol;
    bench_golden_tolerance(m, &rtol, &atol);
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    bench_check(tconv_runner_run_data_set(r, path, rtol, atol, &worst, NULL), path,
                tconv_runner_last_error(r));
    /* at least 0.2 s, and the runs a multi-threaded runner measures its thread counts in: the
     * timed runs are its steady state, as onnxruntime's are after its warm-up */
    int warm_runs = bench_tuning_runs(threads);
    double warm_until = bench_now() + 0.2;
    for (int i = 0; i < warm_runs || bench_now() < warm_until; i++)
        bench_check(tconv_runner_run(r), "warm-up", tconv_runner_last_error(r));
    long peak_kib = bench_status_kib("VmHWM");
    double ms = bench_median_ms(bench_run_runner, r, 0, runs, 8.0);
    if (ms < 0)
        bench_check(TCONV_ERR_INVALID, name, tconv_runner_last_error(r));
    printf("{\"bench\": \"ort\", \"case\": \"%s\", \"impl\": \"tconv\", \"model\": "
           "\"original\", \"threads\": %d, \"ms\": %.4f, \"peak_rss_kib\": %ld, "
           "\"base_rss_kib\": %ld, \"golden_max_err\": %.3g, \"isa\": \"%s\", \"load\": %.2f, "
           "\"others_cpu\": %.2f}\n",
           name, threads, ms, peak_kib, base_kib, worst, tconv_runtime_gemm_isa(), bench_load(),
           bench_others_cpu());
    fflush(stdout);
    tconv_runner_free(r);
    tconv_model_free(m);
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "--case") == 0) {
        int threads = atoi(argv[4]), runs = argc > 5 ? atoi(argv[5]) : 100;
        if (threads < 1)
            threads = 1;
        time_case(argv[2], argv[3], threads, runs < 5 ? 5 : runs);
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: bench_models MODELS_DIR [RUNS] [NAME...]\n"
                        "       bench_models --case DIR NAME THREADS [RUNS]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 100;
    if (runs < 5)
        runs = 5;
    static const char *const default_names[] = {"dcgan_generator", "unet"};
    const char *const *names = argc > 3 ? (const char *const *)argv + 3 : default_names;
    int n_names = argc > 3 ? argc - 3 : 2;
    int cpus = bench_cpus();
    for (int i = 0; i < n_names; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", argv[1], names[i]);
        double err = check_golden(dir);
        static const int64_t batches[] = {1, 8};
        for (int b = 0; b < 2; b++) {
            time_model(dir, names[i], batches[b], 1, runs, err);
            if (cpus > 1)
                time_model(dir, names[i], batches[b], cpus, runs, err);
        }
    }
    return 0;
}
