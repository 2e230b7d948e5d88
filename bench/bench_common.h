/* Shared helpers of the tconv benchmark programs: timing (median of many runs after warm-up),
 * small models built through the public API, and one JSON object per result line on stdout
 * (bench/report.py joins them with the PyTorch figures into the table). */
#ifndef TC_BENCH_COMMON_H
#define TC_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tconv/tconv.h"

/* Seconds on a monotonic clock (bench_time.c, as the two below: they need no tconv). */
double bench_now(void);

/* Sorts v (n values) in place, ascending. */
void bench_sort(double *v, size_t n);

/* Sorts v (n values) in place and returns v[n / 2]: the median of an odd count, the upper of
 * the two middle values of an even one. */
double bench_sorted_median(double *v, size_t n);

/* CPU seconds this process has used, all its threads (getrusage); -1 when unknown. */
double bench_own_cpu_s(void);

/* Median wall time in milliseconds of at least `runs` calls of fn(ctx) after `warmup` calls,
 * timed for at least half a second (more calls when they are quick); the call returns false on
 * failure (then the result is negative). When `budget_s` > 0, stops early (after at least 5
 * runs) once that many seconds are spent. */
typedef int (*bench_fn)(void *ctx);
double bench_median_ms(bench_fn fn, void *ctx, int warmup, int runs, double budget_s);

/* The runs a runner of `threads` threads takes to measure its thread caps (tconv/runtime.h,
 * tconv_runner_set_thread_tuning: a warm-up of 5 runs and 10 ms, then 6 runs a level of n,
 * n/2, ... 1 threads and 12 to check); 5 for one thread. Warming up for as many makes the timed
 * runs its steady state. */
int bench_tuning_runs(int threads);

/* A runner's tconv_runner_run as a bench_fn (ctx is the runner). */
int bench_run_runner(void *runner);

/* Exits with a message naming `what` when st is not TCONV_OK. */
void bench_check(tconv_status st, const char *what, const char *detail);

/* Fills n floats with a fixed-seed pseudo-random sequence in [-1, 1). */
void bench_fill(float *data, int64_t n, uint64_t seed);

/* A model with one ConvTranspose (or Conv) node: input "x" of x_dims (rank 4), weight w_dims,
 * stride and symmetric pads per spatial axis, no bias, optional output_padding (0: absent) and
 * end-pad extra (added to the end pads only, for asymmetric cases). Opset 17. */
typedef struct bench_conv_spec {
    const char *op; /* "ConvTranspose" or "Conv" */
    int64_t x_dims[4];
    int64_t w_dims[4];
    int64_t stride, pad, pad_end_extra, output_padding;
} bench_conv_spec;
tconv_model *bench_conv_model(const bench_conv_spec *spec);

/* A runner for m with `threads` threads (exits on failure). */
tconv_runner *bench_runner(tconv_model *m, int threads);
/* Reads path/model.onnx-style files (exits on failure). */
tconv_model *bench_read(const char *path);
/* Tolerances of the golden check before timing: rtol 1e-3, atol 1e-4; a model whose first output
 * is float16 or bfloat16 rounds after every op (tests/models/tests.cmake): rtol 1e-2, atol 8e-3,
 * as scripts/ort-check.sh and bench/ort_bench.js use for it. */
void bench_golden_tolerance(tconv_model *m, double *rtol, double *atol);
/* The rule itself, by the first output's dtype (bench_ab applies it through each library's own
 * calls). */
static inline void bench_tolerance_for(tconv_dtype first_output, double *rtol, double *atol) {
    bool half = first_output == TCONV_DTYPE_FLOAT16 || first_output == TCONV_DTYPE_BFLOAT16;
    *rtol = half ? 1e-2 : 1e-3;
    *atol = half ? 8e-3 : 1e-4;
}

/* The number of this machine's online CPUs and its 1-minute load average (-1 when unknown). */
int bench_cpus(void);
double bench_load(void);
/* Cores that other processes kept busy while the last bench_median_ms ran: the busy time
 * of all CPUs (/proc/stat, steal included) minus this process's CPU time (all its threads), over
 * the wall time; -1 when unknown. A multi-thread figure means something only when this is near
 * 0. The load average cannot tell: it counts the benchmark's own threads. */
double bench_others_cpu(void);
/* A field of /proc/self/status in KiB ("VmHWM": the peak resident set so far, "VmRSS": the
 * current one); -1 when unknown. */
long bench_status_kib(const char *field);

#endif
