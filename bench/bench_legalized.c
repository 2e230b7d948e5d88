/* The cost of legalization at run time: each case runs the original graph and the legalized
 * one (VALID ConvTranspose + Slice [+ Pad + Add]) in tconv's runtime, single-thread, and reports
 * both medians and their ratio (goal: legalized within 5% of the original). The legalized graph
 * is checked against the original on the timed inputs first (rtol 1e-4, atol 1e-5).
 *
 *   bench_legalized MODELS_DIR [RUNS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

typedef struct legal_case {
    const char *name;
    const char *model_dir; /* NULL: built from spec */
    bench_conv_spec spec;
    tconv_policy policy;
} legal_case;

static tconv_model *load_case(const legal_case *c, const char *models_dir) {
    if (!c->model_dir)
        return bench_conv_model(&c->spec);
    char path[8192];
    snprintf(path, sizeof path, "%s/%s/model.onnx", models_dir, c->model_dir);
    return bench_read(path);
}

static size_t legalize(tconv_model *m, tconv_policy policy) {
    tconv_pipeline *p = NULL;
    tconv_report *report = NULL;
    bench_check(tconv_pipeline_new(&p), "pipeline", "");
    bench_check(tconv_pipeline_set_policy(p, policy), "policy", "");
    bench_check(tconv_pipeline_run(p, m, &report), "legalize", tconv_model_last_error(m));
    size_t n = tconv_report_rewrite_count(report);
    tconv_report_free(report);
    tconv_pipeline_free(p);
    return n;
}

static void check_equal(tconv_model *original, tconv_model *legal, const char *name) {
    tconv_comparison *cmp = NULL;
    bench_check(tconv_comparison_new(&cmp), "comparison", "");
    tconv_status st = tconv_comparison_run(cmp, original, legal);
    bench_check(st, name, tconv_comparison_last_error(cmp));
    tconv_comparison_free(cmp);
}

static tconv_runner *new_runner(tconv_model *m) {
    tconv_runner *r = bench_runner(m, 1);
    bench_check(tconv_runner_set_random_inputs(r, 3), "inputs", tconv_runner_last_error(r));
    return r;
}

/* Alternates rounds of the two models (the median of ~20 ms of runs each) so that load changes
 * hit both alike; the result is the median over the rounds. */
static void time_pair(tconv_model *a, tconv_model *b, int rounds, double *ms_a, double *ms_b) {
    tconv_runner *ra = new_runner(a), *rb = new_runner(b);
    double *ta = malloc((size_t)rounds * sizeof *ta), *tb = malloc((size_t)rounds * sizeof *tb);
    if (!ta || !tb)
        bench_check(TCONV_ERR_NOMEM, "timing", "");
    /* each round runs a model for about 20 ms (at least 5 runs) */
    double estimate = bench_median_ms(bench_run_runner, ra, 3, 5, 0.0);
    int runs = estimate > 0 ? (int)(20.0 / estimate) : 5;
    runs = runs < 5 ? 5 : (runs > 2000 ? 2000 : runs);
    for (int i = 0; i < rounds; i++) {
        ta[i] = bench_median_ms(bench_run_runner, ra, 2, runs, 0.0);
        tb[i] = bench_median_ms(bench_run_runner, rb, 2, runs, 0.0);
        if (ta[i] < 0 || tb[i] < 0)
            bench_check(TCONV_ERR_INVALID, "run", "");
    }
    *ms_a = bench_sorted_median(ta, (size_t)rounds);
    *ms_b = bench_sorted_median(tb, (size_t)rounds);
    free(ta);
    free(tb);
    tconv_runner_free(ra);
    tconv_runner_free(rb);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_legalized MODELS_DIR [RUNS]\n");
        return 2;
    }
    const legal_case cases[] = {
        {"workloadA_pads1_validonly",
         NULL,
         {"ConvTranspose", {1, 64, 64, 64}, {64, 32, 4, 4}, 2, 1, 0, 0},
         TCONV_POLICY_VALID_ONLY},
        {"workloadA_output_padding",
         NULL,
         {"ConvTranspose", {1, 64, 64, 64}, {64, 32, 4, 4}, 2, 1, 0, 1},
         TCONV_POLICY_SAME_OR_ASYMMETRIC},
        {"workloadA_asymmetric_pads",
         NULL,
         {"ConvTranspose", {1, 64, 64, 64}, {64, 32, 4, 4}, 2, 1, 1, 0},
         TCONV_POLICY_SAME_OR_ASYMMETRIC},
        {"dcgan_generator_validonly", "dcgan_generator", {0}, TCONV_POLICY_VALID_ONLY},
        {"keras_decoder", "keras_decoder", {0}, TCONV_POLICY_SAME_OR_ASYMMETRIC},
        {"tf2onnx_style", "tf2onnx_style", {0}, TCONV_POLICY_SAME_OR_ASYMMETRIC},
        {"decoder3d", "decoder3d", {0}, TCONV_POLICY_SAME_OR_ASYMMETRIC},
        {"grouped_upsampler", "grouped_upsampler", {0}, TCONV_POLICY_SAME_OR_ASYMMETRIC},
        {"audio_upsampler_validonly", "audio_upsampler", {0}, TCONV_POLICY_VALID_ONLY},
    };
    int rounds = argc > 2 ? atoi(argv[2]) : 15;
    if (rounds < 3)
        rounds = 3;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const legal_case *c = &cases[i];
        tconv_model *original = load_case(c, argv[1]), *legal = load_case(c, argv[1]);
        size_t rewritten = legalize(legal, c->policy);
        check_equal(original, legal, c->name);
        double ms_orig, ms_legal;
        time_pair(original, legal, rounds, &ms_orig, &ms_legal);
        printf("{\"bench\": \"legalized\", \"case\": \"%s\", \"rewritten\": %zu, "
               "\"original_ms\": %.4f, \"legalized_ms\": %.4f, \"ratio\": %.4f, "
               "\"load\": %.2f}\n",
               c->name, rewritten, ms_orig, ms_legal, ms_legal / ms_orig, bench_load());
        fflush(stdout);
        tconv_model_free(original);
        tconv_model_free(legal);
    }
    return 0;
}
