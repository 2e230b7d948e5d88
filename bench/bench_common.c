#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double tconv_bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tconv_bench_median_ms(tconv_bench_fn fn, void *ctx, int warmup, int runs, double budget_s) {
    for (int i = 0; i < warmup; i++) {
        if (!fn(ctx))
            return -1.0;
    }
    double *times = malloc((size_t)runs * sizeof *times);
    if (!times)
        return -1.0;
    double start = tconv_bench_now();
    int done = 0;
    for (; done < runs; done++) {
        double t0 = tconv_bench_now();
        if (!fn(ctx)) {
            free(times);
            return -1.0;
        }
        double t1 = tconv_bench_now();
        times[done] = (t1 - t0) * 1e3;
        if (budget_s > 0 && done >= 4 && t1 - start > budget_s) {
            done++;
            break;
        }
    }
    qsort(times, (size_t)done, sizeof *times, compare_doubles);
    double median = done % 2 ? times[done / 2] : 0.5 * (times[done / 2 - 1] + times[done / 2]);
    free(times);
    return median;
}

int tconv_bench_run_runner(void *runner) {
    return tconv_runner_run(runner) == TCONV_OK;
}

void tconv_bench_check(tconv_status st, const char *what, const char *detail) {
    if (st == TCONV_OK)
        return;
    fprintf(stderr, "bench: %s failed (status %d): %s\n", what, (int)st, detail ? detail : "");
    exit(2);
}

void tconv_bench_fill(float *data, int64_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        data[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

static int64_t product(const int64_t *dims, int rank) {
    int64_t p = 1;
    for (int i = 0; i < rank; i++)
        p *= dims[i];
    return p;
}

static void set_conv_attrs(tconv_model *m, tconv_node *node, const tconv_bench_conv_spec *spec) {
    int64_t strides[2] = {spec->stride, spec->stride};
    int64_t pads[4] = {spec->pad, spec->pad, spec->pad + spec->pad_end_extra,
                       spec->pad + spec->pad_end_extra};
    int64_t kernel[2] = {spec->w_dims[2], spec->w_dims[3]};
    tconv_bench_check(tconv_attr_set_ints(node, "strides", strides, 2), "strides",
                      tconv_model_last_error(m));
    tconv_bench_check(tconv_attr_set_ints(node, "pads", pads, 4), "pads",
                      tconv_model_last_error(m));
    tconv_bench_check(tconv_attr_set_ints(node, "kernel_shape", kernel, 2), "kernel_shape",
                      tconv_model_last_error(m));
    if (spec->output_padding) {
        int64_t op[2] = {spec->output_padding, spec->output_padding};
        tconv_bench_check(tconv_attr_set_ints(node, "output_padding", op, 2), "output_padding",
                          tconv_model_last_error(m));
    }
}

tconv_model *tconv_bench_conv_model(const tconv_bench_conv_spec *spec) {
    tconv_model *m = NULL;
    tconv_bench_check(tconv_model_new(&m), "model", "");
    tconv_bench_check(tconv_model_set_opset_version(m, "", 17), "opset", tconv_model_last_error(m));
    tconv_graph *g = tconv_model_graph(m);
    tconv_value *x, *w, *y;
    tconv_node *node;
    int64_t w_count = product(spec->w_dims, 4);
    float *w_data = malloc((size_t)w_count * sizeof(float));
    if (!w_data)
        tconv_bench_check(TCONV_ERR_NOMEM, "weights", "");
    tconv_bench_fill(w_data, w_count, 7);
    for (int64_t i = 0; i < w_count; i++)
        w_data[i] *= 0.05f;
    tconv_bench_check(tconv_graph_new_input(g, "x", TCONV_DTYPE_FLOAT, 4, spec->x_dims, &x), "x",
                      tconv_model_last_error(m));
    tconv_bench_check(tconv_graph_new_initializer(g, "w", TCONV_DTYPE_FLOAT, 4, spec->w_dims,
                                                  w_data, (size_t)w_count * sizeof(float), &w),
                      "w", tconv_model_last_error(m));
    free(w_data);
    tconv_bench_check(tconv_graph_new_node(g, spec->op, NULL, "layer", NULL, &node), "node",
                      tconv_model_last_error(m));
    tconv_bench_check(tconv_node_append_input(node, x), "input", tconv_model_last_error(m));
    tconv_bench_check(tconv_node_append_input(node, w), "input", tconv_model_last_error(m));
    tconv_bench_check(tconv_node_new_output(node, "y", &y), "output", tconv_model_last_error(m));
    set_conv_attrs(m, node, spec);
    tconv_bench_check(tconv_graph_append_output(g, y), "graph output", tconv_model_last_error(m));
    return m;
}

int tconv_bench_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

double tconv_bench_load(void) {
    FILE *f = fopen("/proc/loadavg", "r");
    double load = -1.0;
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1.0;
        fclose(f);
    }
    return load;
}

tconv_runner *tconv_bench_runner(tconv_model *m, int threads) {
    tconv_limits *limits = NULL;
    tconv_runner *r = NULL;
    tconv_bench_check(tconv_limits_new(&limits), "limits", "");
    tconv_bench_check(tconv_limits_set(limits, TCONV_LIMIT_THREADS, (uint64_t)threads), "limits",
                      tconv_limits_last_error(limits));
    tconv_bench_check(tconv_runner_new(m, limits, &r), "runner", tconv_model_last_error(m));
    tconv_limits_free(limits);
    return r;
}

tconv_model *tconv_bench_read(const char *path) {
    char message[512] = "";
    tconv_model *m = NULL;
    tconv_bench_check(tconv_model_read_file(path, NULL, &m, message, sizeof message), path,
                      message);
    return m;
}
