/* Pass scaling: a generated graph of N nodes is legalized with the default pipeline. Prints, per
 * N, the milliseconds of each pass and of the whole pipeline, and the microseconds per node (flat
 * per-node cost = linear scaling). Goal: 100k nodes in under 1 s. Graph shapes:
 *   chain   ConvTranspose with SAME_UPPER padding (which the default policy rewrites)
 *           alternating with Relu, one shared weight;
 *   fanout  N Relu nodes all reading the input, only the last one's output used (dce removes
 *           N-1 uses of one value);
 *   outputs a chain of N Relu nodes, every value a graph output.
 *
 *   bench_passes [--shape chain|fanout|outputs] [N...]   (default chain 1000 10000 100000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

typedef enum graph_shape { SHAPE_CHAIN, SHAPE_FANOUT, SHAPE_OUTPUTS } graph_shape;

static const char *const shape_names[] = {"chain", "fanout", "outputs"};

static graph_shape g_shape = SHAPE_CHAIN;

static tconv_model *chain_model(int64_t n_nodes) {
    tconv_model *m = NULL;
    bench_check(tconv_model_new(&m), "model", "");
    bench_check(tconv_model_set_opset_version(m, "", 17), "opset", tconv_model_last_error(m));
    tconv_graph *g = tconv_model_graph(m);
    int64_t x_dims[4] = {1, 4, 8, 8}, w_dims[4] = {4, 4, 2, 2}, kernel[2] = {2, 2};
    tconv_value *v, *w;
    bench_check(tconv_graph_new_input(g, "x", TCONV_DTYPE_FLOAT, 4, x_dims, &v), "x",
                tconv_model_last_error(m));
    bench_check(tconv_graph_new_initializer(g, "w", TCONV_DTYPE_FLOAT, 4, w_dims, NULL, 64 * 4, &w),
                "w", tconv_model_last_error(m));
    tconv_value *x = v;
    for (int64_t i = 0; i < n_nodes; i++) {
        bool deconv = g_shape == SHAPE_CHAIN && i % 2 == 0;
        tconv_node *node;
        tconv_value *out;
        bench_check(
            tconv_graph_new_node(g, deconv ? "ConvTranspose" : "Relu", NULL, NULL, NULL, &node),
            "node", tconv_model_last_error(m));
        bench_check(tconv_node_append_input(node, g_shape == SHAPE_FANOUT ? x : v), "input",
                    tconv_model_last_error(m));
        if (deconv) {
            bench_check(tconv_node_append_input(node, w), "input", tconv_model_last_error(m));
            bench_check(tconv_attr_set_string(node, "auto_pad", "SAME_UPPER"), "attr",
                        tconv_model_last_error(m));
            bench_check(tconv_attr_set_ints(node, "kernel_shape", kernel, 2), "attr",
                        tconv_model_last_error(m));
        }
        bench_check(tconv_node_new_output(node, "v", &out), "output", tconv_model_last_error(m));
        v = out;
        if (g_shape == SHAPE_OUTPUTS)
            bench_check(tconv_graph_append_output(g, v), "graph output", tconv_model_last_error(m));
    }
    if (g_shape != SHAPE_OUTPUTS)
        bench_check(tconv_graph_append_output(g, v), "graph output", tconv_model_last_error(m));
    return m;
}

/* Runs one pass list on m; returns milliseconds. */
static double run_passes(tconv_model *m, const char *passes, size_t *rewritten) {
    tconv_pipeline *p = NULL;
    tconv_report *report = NULL;
    bench_check(tconv_pipeline_new(&p), "pipeline", "");
    bench_check(tconv_pipeline_set_passes(p, passes), "passes", passes);
    double t0 = bench_now();
    bench_check(tconv_pipeline_run(p, m, &report), passes, tconv_model_last_error(m));
    double ms = (bench_now() - t0) * 1e3;
    if (rewritten)
        *rewritten = tconv_report_rewrite_count(report);
    tconv_report_free(report);
    tconv_pipeline_free(p);
    return ms;
}

/* Each figure is the median of this many measurements, each on freshly built models: one
 * measurement of a 100k-node graph varies by +-30% here (page faults in fresh arenas, and the
 * machine's neighbours). */
#define REPEATS 3

typedef struct pass_times {
    double build, shape, legalize, dce, pipeline;
} pass_times;

static pass_times measure_once(int64_t n, size_t *rewritten) {
    pass_times t;
    double t0 = bench_now();
    tconv_model *m = chain_model(n);
    t.build = (bench_now() - t0) * 1e3;
    t.shape = run_passes(m, "shape-infer", NULL);
    t.legalize = run_passes(m, "legalize-conv-transpose", rewritten);
    t.dce = run_passes(m, "dce", NULL);
    tconv_model_free(m);
    m = chain_model(n);
    t.pipeline = run_passes(m, TCONV_DEFAULT_PASSES, NULL);
    tconv_model_free(m);
    return t;
}

static double median3(double a, double b, double c) {
    double lo = a < b ? a : b, hi = a < b ? b : a;
    return c < lo ? lo : (c > hi ? hi : c);
}

static void measure(int64_t n) {
    size_t rewritten = 0;
    pass_times r[REPEATS];
    /* BENCH_PASSES_ONCE=1: one measurement (for graphs where a pass is still slow) */
    const char *once = getenv("BENCH_PASSES_ONCE");
    int repeats = once && *once == '1' ? 1 : REPEATS;
    for (int i = 0; i < repeats; i++)
        r[i] = measure_once(n, &rewritten);
    for (int i = repeats; i < REPEATS; i++)
        r[i] = r[0];
    pass_times t = {
        median3(r[0].build, r[1].build, r[2].build), median3(r[0].shape, r[1].shape, r[2].shape),
        median3(r[0].legalize, r[1].legalize, r[2].legalize), median3(r[0].dce, r[1].dce, r[2].dce),
        median3(r[0].pipeline, r[1].pipeline, r[2].pipeline)};
    printf("{\"bench\": \"passes\", \"case\": \"%s_%lld\", \"nodes\": %lld, \"rewritten\": %zu, "
           "\"build_ms\": %.2f, \"shape_infer_ms\": %.2f, \"legalize_ms\": %.2f, \"dce_ms\": %.2f, "
           "\"pipeline_ms\": %.2f, \"us_per_node\": %.3f, \"repeats\": %d, \"load\": %.2f}\n",
           shape_names[g_shape], (long long)n, (long long)n, rewritten, t.build, t.shape,
           t.legalize, t.dce, t.pipeline, t.pipeline * 1e3 / (double)n, REPEATS, bench_load());
    fflush(stdout);
}

int main(int argc, char **argv) {
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--shape") == 0) {
        for (size_t k = 0; k < sizeof shape_names / sizeof shape_names[0]; k++) {
            if (strcmp(argv[2], shape_names[k]) == 0)
                g_shape = (graph_shape)k;
        }
        if (strcmp(argv[2], shape_names[g_shape]) != 0) {
            fprintf(stderr, "bench_passes: unknown shape '%s'\n", argv[2]);
            return 2;
        }
        first = 3;
    }
    if (argc > first) {
        for (int i = first; i < argc; i++)
            measure(atoll(argv[i]));
        return 0;
    }
    static const int64_t sizes[] = {1000, 10000, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        measure(sizes[i]);
    return 0;
}
