/* Two builds of libtconv side by side in one process (issue 23): whether a change made a model
 * faster, on a host whose speed moves between periods of minutes, where separate processes
 * compare the periods instead of the code.
 *
 *   bench_ab OLD.so NEW.so MODEL_DIR THREADS [ROUNDS [BLOCK]]
 *
 * Each library is loaded with dlopen (its own symbols first: RTLD_DEEPBIND), reads
 * MODEL_DIR/model.onnx into a runner of THREADS threads and runs test_data_set_0, checked
 * against its golden outputs (bench_golden_tolerance's rtol and atol). Then both runners run
 * 200 times in turn, and ROUNDS rounds (default 20) of BLOCK runs each (default 30) alternate
 * between them, the first of each round changing every round; each side's figures are the
 * median and the least of its runs.
 *
 * The comparison runs twice, each time in a process of its own: once loading OLD first, once
 * NEW. Where a library lies in the process moved its times: two copies of one file, compared
 * so, differed by up to 5% on some models, always to the second one's cost. The figure to read
 * is new_over_old, the geometric mean of the two orders' ratios of medians (below 1: NEW is
 * faster). To see the harness's own noise, pass two copies of one build (one path twice loads
 * one library).
 *
 * It needs only the public API, through dlsym, and links no tconv (of bench_common.h only the
 * inline tolerance rule and bench_time.c's clock and sort). One JSON line. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"

enum { WARMUP_RUNS = 200, PATH_MAX_CHARS = 4096 };

/* The calls a side makes, from its own library. */
typedef struct side_api {
    tconv_status (*limits_new)(tconv_limits **);
    tconv_status (*limits_set)(tconv_limits *, tconv_limit, uint64_t);
    tconv_status (*read_file)(const char *, const tconv_limits *, tconv_model **, char *, size_t);
    tconv_graph *(*model_graph)(tconv_model *);
    size_t (*output_count)(const tconv_graph *);
    tconv_value *(*graph_output)(const tconv_graph *, size_t);
    tconv_dtype (*value_dtype)(const tconv_value *);
    tconv_status (*runner_new)(tconv_model *, const tconv_limits *, tconv_runner **);
    tconv_status (*run_data_set)(tconv_runner *, const char *, double, double, double *, double *);
    tconv_status (*run)(tconv_runner *);
    const char *(*last_error)(const tconv_runner *);
} side_api;

typedef struct side {
    side_api api;
    tconv_runner *runner;
    double *times; /* ms of each timed run */
} side;

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "bench_ab: %s: %s\n", what, detail);
    exit(2);
}

static void *symbol(void *lib, const char *so, const char *name) {
    void *p = dlsym(lib, name);
    if (!p)
        fail(so, name);
    return p;
}

/* Function pointers from dlsym: POSIX guarantees the conversion. */
#define BENCH_AB_BIND(field, name) *(void **)&api->field = symbol(lib, so, name)

static void bind_api(void *lib, const char *so, side_api *api) {
    BENCH_AB_BIND(limits_new, "tconv_limits_new");
    BENCH_AB_BIND(limits_set, "tconv_limits_set");
    BENCH_AB_BIND(read_file, "tconv_model_read_file");
    BENCH_AB_BIND(model_graph, "tconv_model_graph");
    BENCH_AB_BIND(output_count, "tconv_graph_output_count");
    BENCH_AB_BIND(graph_output, "tconv_graph_output");
    BENCH_AB_BIND(value_dtype, "tconv_value_dtype");
    BENCH_AB_BIND(runner_new, "tconv_runner_new");
    BENCH_AB_BIND(run_data_set, "tconv_runner_run_data_set");
    BENCH_AB_BIND(run, "tconv_runner_run");
    BENCH_AB_BIND(last_error, "tconv_runner_last_error");
}

/* bench_golden_tolerance, through the side's own library. */
static void golden_tolerance(const side_api *api, tconv_model *m, double *rtol, double *atol) {
    tconv_graph *g = api->model_graph(m);
    bench_tolerance_for(api->output_count(g) ? api->value_dtype(api->graph_output(g, 0))
                                             : TCONV_DTYPE_FLOAT,
                        rtol, atol);
}

/* Loads `so`, builds its runner for the model and checks test_data_set_0. The process ends
 * with it, so nothing is freed. */
static void open_side(side *s, const char *so, const char *dir, int threads, size_t runs) {
    void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!lib)
        fail(so, dlerror());
    bind_api(lib, so, &s->api);
    char path[PATH_MAX_CHARS], data_set[PATH_MAX_CHARS], message[512];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    snprintf(data_set, sizeof data_set, "%s/test_data_set_0", dir);
    tconv_limits *limits;
    tconv_model *model;
    if (s->api.limits_new(&limits) != TCONV_OK ||
        s->api.limits_set(limits, TCONV_LIMIT_THREADS, (uint64_t)threads) != TCONV_OK)
        fail(so, "limits");
    if (s->api.read_file(path, limits, &model, message, sizeof message) != TCONV_OK)
        fail(path, message);
    if (s->api.runner_new(model, limits, &s->runner) != TCONV_OK)
        fail(so, "runner");
    double rtol, atol, worst = 0;
    golden_tolerance(&s->api, model, &rtol, &atol);
    if (s->api.run_data_set(s->runner, data_set, rtol, atol, &worst, NULL) != TCONV_OK)
        fail(data_set, s->api.last_error(s->runner));
    s->times = malloc(runs * sizeof(double));
    if (!s->times)
        fail(so, "out of memory");
}

static void run_once(side *s, double *ms) {
    double t = bench_now();
    if (s->api.run(s->runner) != TCONV_OK)
        fail("run", s->api.last_error(s->runner));
    if (ms)
        *ms = (bench_now() - t) * 1e3;
}

/* One order: `first` loaded first. out: OLD's median and least, NEW's median and least. */
static void compare(const char *first, const char *second, bool new_first, const char *dir,
                    int threads, int rounds, int block, double out[4]) {
    size_t runs = (size_t)rounds * (size_t)block;
    side sides[2];
    open_side(&sides[0], first, dir, threads, runs);
    open_side(&sides[1], second, dir, threads, runs);
    for (int i = 0; i < WARMUP_RUNS; i++)
        run_once(&sides[i % 2], NULL);
    for (int round = 0; round < rounds; round++) {
        for (int turn = 0; turn < 2; turn++) {
            side *s = &sides[round % 2 ? 1 - turn : turn];
            for (int j = 0; j < block; j++)
                run_once(s, &s->times[round * block + j]);
        }
    }
    for (int k = 0; k < 2; k++) {
        bench_sort(sides[k].times, runs);
        int slot = (k == 1) != new_first ? 2 : 0; /* NEW's figures go to out[2..3] */
        out[slot] = sides[k].times[runs / 2];
        out[slot + 1] = sides[k].times[0];
    }
}

/* compare() in a child process; its four figures come back through a pipe. */
static void compare_in_child(const char *old_so, const char *new_so, bool new_first,
                             const char *dir, int threads, int rounds, int block, double out[4]) {
    int fds[2];
    if (pipe(fds) != 0)
        fail("pipe", "cannot create");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork", "cannot start the comparison's process");
    if (pid == 0) {
        close(fds[0]);
        compare(new_first ? new_so : old_so, new_first ? old_so : new_so, new_first, dir, threads,
                rounds, block, out);
        _exit(write(fds[1], out, 4 * sizeof(double)) == (ssize_t)(4 * sizeof(double)) ? 0 : 2);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], out, 4 * sizeof(double));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)(4 * sizeof(double)) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        exit(2); /* the child said why */
}

int main(int argc, char **argv) {
    if (argc < 5 || argc > 7) {
        fprintf(stderr, "usage: bench_ab OLD.so NEW.so MODEL_DIR THREADS [ROUNDS [BLOCK]]\n");
        return 2;
    }
    int threads = atoi(argv[4]);
    int rounds = argc > 5 ? atoi(argv[5]) : 20, block = argc > 6 ? atoi(argv[6]) : 30;
    if (threads < 1 || rounds < 1 || block < 1 || rounds > 100000 || block > 100000) {
        fprintf(stderr, "bench_ab: THREADS, ROUNDS and BLOCK must be positive\n");
        return 2;
    }
    double old_first[4], new_first[4];
    compare_in_child(argv[1], argv[2], false, argv[3], threads, rounds, block, old_first);
    compare_in_child(argv[1], argv[2], true, argv[3], threads, rounds, block, new_first);
    double ratio_old_first = old_first[2] / old_first[0];
    double ratio_new_first = new_first[2] / new_first[0];
    char name[256]; /* MODEL_DIR's last component, trailing slashes dropped */
    size_t end = strlen(argv[3]);
    while (end > 1 && argv[3][end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && argv[3][start - 1] != '/')
        start--;
    snprintf(name, sizeof name, "%.*s", (int)(end - start), argv[3] + start);
    printf("{\"bench\": \"ab\", \"model\": \"%s\", \"threads\": %d, \"runs_each\": %d, "
           "\"old_first\": {\"old_ms\": %.4f, \"old_min_ms\": %.4f, \"new_ms\": %.4f, "
           "\"new_min_ms\": %.4f, \"new_over_old\": %.3f}, "
           "\"new_first\": {\"old_ms\": %.4f, \"old_min_ms\": %.4f, \"new_ms\": %.4f, "
           "\"new_min_ms\": %.4f, \"new_over_old\": %.3f}, \"new_over_old\": %.3f}\n",
           name, threads, rounds * block, old_first[0], old_first[1], old_first[2], old_first[3],
           ratio_old_first, new_first[0], new_first[1], new_first[2], new_first[3], ratio_new_first,
           sqrt(ratio_old_first * ratio_new_first));
    return 0;
}
