#include "bench_common.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* CPU seconds all CPUs spent busy since boot (user, nice, system, irq, softirq, steal). */
static double busy_cpu_s(void) {
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    int got = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                         &v[3], &v[4], &v[5], &v[6], &v[7])
                : 0;
    if (f)
        fclose(f);
    if (got != 8)
        return -1.0;
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

double bench_own_cpu_s(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1.0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double others_cpu = -1.0;

double bench_others_cpu(void) {
    return others_cpu;
}

/* Every figure is timed for at least this long, more runs than asked for if need be: /proc/stat
 * counts in 10 ms ticks per CPU, so the others-CPU meter needs a long enough window. */
#define MIN_WINDOW_S 0.5

int bench_tuning_runs(int threads) {
    if (threads < 2)
        return 5;
    int levels = 1;
    for (int n = threads < 64 ? threads : 64; n > 1 && levels < 7; n >>= 1)
        levels++;
    return 5 + 6 * levels + 12;
}

double bench_median_ms(bench_fn fn, void *ctx, int warmup, int runs, double budget_s) {
    for (int i = 0; i < warmup; i++) {
        if (!fn(ctx))
            return -1.0;
    }
    size_t cap = (size_t)(runs > 16 ? runs : 16);
    double *times = malloc(cap * sizeof *times);
    if (!times)
        return -1.0;
    double busy0 = busy_cpu_s(), own0 = bench_own_cpu_s();
    double start = bench_now();
    int done = 0;
    for (;;) {
        double t0 = bench_now();
        if (!fn(ctx)) {
            free(times);
            return -1.0;
        }
        double t1 = bench_now();
        if ((size_t)done == cap) {
            double *grown = realloc(times, 2 * cap * sizeof *times);
            if (!grown) {
                free(times);
                return -1.0;
            }
            times = grown;
            cap *= 2;
        }
        times[done++] = (t1 - t0) * 1e3;
        bool over_budget = budget_s > 0 && done >= 5 && t1 - start > budget_s;
        if (over_budget || (done >= runs && t1 - start >= MIN_WINDOW_S))
            break;
    }
    double wall = bench_now() - start, busy1 = busy_cpu_s(), own1 = bench_own_cpu_s();
    others_cpu = -1.0;
    if (wall > 0 && busy0 >= 0 && busy1 >= 0 && own0 >= 0 && own1 >= 0) {
        double others = (busy1 - busy0) - (own1 - own0);
        others_cpu = others > 0 ? others / wall : 0.0;
    }
    bench_sort(times, (size_t)done);
    double median = done % 2 ? times[done / 2] : 0.5 * (times[done / 2 - 1] + times[done / 2]);
    free(times);
    return median;
}

int bench_run_runner(void *runner) {
    return tconv_runner_run(runner) == TCONV_OK;
}

void bench_check(tconv_status st, const char *what, const char *detail) {
    if (st == TCONV_OK)
        return;
    fprintf(stderr, "bench: %s failed (status %d): %s\n", what, (int)st, detail ? detail : "");
    exit(2);
}

void bench_fill(float *data, int64_t n, uint64_t seed) {
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

static void set_conv_attrs(tconv_model *m, tconv_node *node, const bench_conv_spec *spec) {
    int64_t strides[2] = {spec->stride, spec->stride};
    int64_t pads[4] = {spec->pad, spec->pad, spec->pad + spec->pad_end_extra,
                       spec->pad + spec->pad_end_extra};
    int64_t kernel[2] = {spec->w_dims[2], spec->w_dims[3]};
    bench_check(tconv_attr_set_ints(node, "strides", strides, 2), "strides",
                tconv_model_last_error(m));
    bench_check(tconv_attr_set_ints(node, "pads", pads, 4), "pads", tconv_model_last_error(m));
    bench_check(tconv_attr_set_ints(node, "kernel_shape", kernel, 2), "kernel_shape",
                tconv_model_last_error(m));
    if (spec->output_padding) {
        int64_t op[2] = {spec->output_padding, spec->output_padding};
        bench_check(tconv_attr_set_ints(node, "output_padding", op, 2), "output_padding",
                    tconv_model_last_error(m));
    }
}

tconv_model *bench_conv_model(const bench_conv_spec *spec) {
    tconv_model *m = NULL;
    bench_check(tconv_model_new(&m), "model", "");
    bench_check(tconv_model_set_opset_version(m, "", 17), "opset", tconv_model_last_error(m));
    tconv_graph *g = tconv_model_graph(m);
    tconv_value *x, *w, *y;
    tconv_node *node;
    int64_t w_count = product(spec->w_dims, 4);
    float *w_data = malloc((size_t)w_count * sizeof(float));
    if (!w_data)
        bench_check(TCONV_ERR_NOMEM, "weights", "");
    bench_fill(w_data, w_count, 7);
    for (int64_t i = 0; i < w_count; i++)
        w_data[i] *= 0.05f;
    bench_check(tconv_graph_new_input(g, "x", TCONV_DTYPE_FLOAT, 4, spec->x_dims, &x), "x",
                tconv_model_last_error(m));
    bench_check(tconv_graph_new_initializer(g, "w", TCONV_DTYPE_FLOAT, 4, spec->w_dims, w_data,
                                            (size_t)w_count * sizeof(float), &w),
                "w", tconv_model_last_error(m));
    free(w_data);
    bench_check(tconv_graph_new_node(g, spec->op, NULL, "layer", NULL, &node), "node",
                tconv_model_last_error(m));
    bench_check(tconv_node_append_input(node, x), "input", tconv_model_last_error(m));
    bench_check(tconv_node_append_input(node, w), "input", tconv_model_last_error(m));
    bench_check(tconv_node_new_output(node, "y", &y), "output", tconv_model_last_error(m));
    set_conv_attrs(m, node, spec);
    bench_check(tconv_graph_append_output(g, y), "graph output", tconv_model_last_error(m));
    return m;
}

int bench_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

double bench_load(void) {
    FILE *f = fopen("/proc/loadavg", "r");
    double load = -1.0;
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1.0;
        fclose(f);
    }
    return load;
}

long bench_status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t len = strlen(field);
    long kib = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            kib = strtol(line + len + 1, NULL, 10);
            break;
        }
    }
    if (f)
        fclose(f);
    return kib;
}

tconv_runner *bench_runner(tconv_model *m, int threads) {
    tconv_limits *limits = NULL;
    tconv_runner *r = NULL;
    bench_check(tconv_limits_new(&limits), "limits", "");
    bench_check(tconv_limits_set(limits, TCONV_LIMIT_THREADS, (uint64_t)threads), "limits",
                tconv_limits_last_error(limits));
    bench_check(tconv_runner_new(m, limits, &r), "runner", tconv_model_last_error(m));
    tconv_limits_free(limits);
    return r;
}

tconv_model *bench_read(const char *path) {
    char message[512] = "";
    tconv_model *m = NULL;
    bench_check(tconv_model_read_file(path, NULL, &m, message, sizeof message), path, message);
    return m;
}

void bench_golden_tolerance(tconv_model *m, double *rtol, double *atol) {
    tconv_graph *g = tconv_model_graph(m);
    bench_tolerance_for(tconv_graph_output_count(g) ? tconv_value_dtype(tconv_graph_output(g, 0))
                                                    : TCONV_DTYPE_FLOAT,
                        rtol, atol);
}
