/* The phase (sub-pixel) form of ConvTranspose against the node it replaces, in tconv's runtime:
 * for each layer directory (bench/gen_layers.py --phase, lowered by passes.lower_phase into
 * model_{d2s,reshape}_{one,perphase}.onnx, see bench/phase.sh) the five models are checked
 * against the golden output (rtol 1e-3, atol 1e-4), then timed in alternating rounds (original,
 * then each lowered form, each round the median of ~20 ms of runs) on the same inputs;
 * each figure is the median over the rounds. others_cpu is the most cores other processes kept
 * busy during any round (bench_others_cpu): the busier the machine, the less a figure means.
 *
 *   bench_phase LAYERS_DIR THREADS [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define FORMS 5
static const char *const FORM_FILES[FORMS] = {"model.onnx", "model_d2s_one.onnx",
                                              "model_d2s_perphase.onnx", "model_reshape_one.onnx",
                                              "model_reshape_perphase.onnx"};
static const char *const FORM_KEYS[FORMS] = {"convtranspose", "d2s_one", "d2s_perphase",
                                             "reshape_one", "reshape_perphase"};

static tconv_runner *checked_runner(const char *dir, const char *file, int threads,
                                    tconv_model **model) {
    char path[8192], data_set[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(data_set, sizeof data_set, "%s/test_data_set_0", dir);
    *model = bench_read(path);
    tconv_runner *r = bench_runner(*model, threads);
    bench_check(tconv_runner_run_data_set(r, data_set, 1e-3, 1e-4, NULL, NULL), path,
                tconv_runner_last_error(r));
    return r; /* its inputs stay those of test_data_set_0 */
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_phase LAYERS_DIR THREADS [ROUNDS]\n");
        return 2;
    }
    int threads = atoi(argv[2]);
    int rounds = argc > 3 ? atoi(argv[3]) : 9;
    if (rounds < 3)
        rounds = 3;
    static const char *const layers[] = {
        "dcgan_k4s2", "unet_k2s2",      "k3s2",           "k5s4",       "k2s3_stride_above_kernel",
        "k3s2_d2",    "depthwise_k4s2", "audio_1d_k16s8", "vol_3d_k4s2"};
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", argv[1], layers[l]);
        tconv_model *models[FORMS];
        tconv_runner *runners[FORMS];
        double *times[FORMS];
        for (int f = 0; f < FORMS; f++) {
            runners[f] = checked_runner(dir, FORM_FILES[f], threads, &models[f]);
            times[f] = malloc((size_t)rounds * sizeof(double));
            if (!times[f])
                bench_check(TCONV_ERR_NOMEM, "timing", "");
        }
        double estimate = bench_median_ms(bench_run_runner, runners[0], 3, 5, 0.0);
        int runs = estimate > 0 ? (int)(20.0 / estimate) : 5;
        runs = runs < 5 ? 5 : (runs > 2000 ? 2000 : runs);
        double others = 0;
        for (int i = 0; i < rounds; i++) {
            for (int f = 0; f < FORMS; f++) {
                times[f][i] = bench_median_ms(bench_run_runner, runners[f], 2, runs, 0.0);
                if (times[f][i] < 0)
                    bench_check(TCONV_ERR_INVALID, "run", FORM_FILES[f]);
                if (bench_others_cpu() > others)
                    others = bench_others_cpu();
            }
        }
        double ms[FORMS];
        for (int f = 0; f < FORMS; f++) {
            ms[f] = bench_sorted_median(times[f], (size_t)rounds);
            free(times[f]);
            tconv_runner_free(runners[f]);
            tconv_model_free(models[f]);
        }
        printf("{\"bench\": \"phase\", \"layer\": \"%s\", \"threads\": %d, \"rounds\": %d",
               layers[l], threads, rounds);
        for (int f = 0; f < FORMS; f++)
            printf(", \"%s_ms\": %.4f", FORM_KEYS[f], ms[f]);
        for (int f = 1; f < FORMS; f++)
            printf(", \"ratio_%s\": %.3f", FORM_KEYS[f], ms[f] / ms[0]);
        printf(", \"others_cpu_max\": %.2f, \"load\": %.2f}\n", others, bench_load());
        fflush(stdout);
    }
    return 0;
}
