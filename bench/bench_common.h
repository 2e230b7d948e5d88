/* Shared helpers of the tconv benchmark programs: timing (median of many runs after warm-up),
 * small models built through the public API, and one JSON object per result line on stdout
 * (bench/report.py joins them with the PyTorch figures into the table). */
#ifndef TCONV_BENCH_COMMON_H
#define TCONV_BENCH_COMMON_H

#include <stdint.h>

#include "tconv/tconv.h"

/* Seconds on a monotonic clock. */
double tconv_bench_now(void);

/* Median wall time in milliseconds of at least `runs` calls of fn(ctx) after `warmup` calls,
 * timed for at least half a second (more calls when they are quick); the call returns false on
 * failure (then the result is negative). When `budget_s` > 0, stops early (after at least 5
 * runs) once that many seconds are spent. */
typedef int (*tconv_bench_fn)(void *ctx);
double tconv_bench_median_ms(tconv_bench_fn fn, void *ctx, int warmup, int runs, double budget_s);

/* A runner's tconv_runner_run as a tconv_bench_fn (ctx is the runner). */
int tconv_bench_run_runner(void *runner);

/* Exits with a message naming `what` when st is not TCONV_OK. */
void tconv_bench_check(tconv_status st, const char *what, const char *detail);

/* Fills n floats with a fixed-seed pseudo-random sequence in [-1, 1). */
void tconv_bench_fill(float *data, int64_t n, uint64_t seed);

/* A model with one ConvTranspose (or Conv) node: input "x" of x_dims (rank 4), weight w_dims,
 * stride and symmetric pads per spatial axis, no bias, optional output_padding (0: absent) and
 * end-pad extra (added to the end pads only, for asymmetric cases). Opset 17. */
typedef struct tconv_bench_conv_spec {
    const char *op; /* "ConvTranspose" or "Conv" */
    int64_t x_dims[4];
    int64_t w_dims[4];
    int64_t stride, pad, pad_end_extra, output_padding;
} tconv_bench_conv_spec;
tconv_model *tconv_bench_conv_model(const tconv_bench_conv_spec *spec);

/* A runner for m with `threads` threads (exits on failure). */
tconv_runner *tconv_bench_runner(tconv_model *m, int threads);
/* Reads path/model.onnx-style files (exits on failure). */
tconv_model *tconv_bench_read(const char *path);

/* The number of this machine's online CPUs and its 1-minute load average (-1 when unknown). */
int tconv_bench_cpus(void);
double tconv_bench_load(void);
/* Cores that other processes kept busy while the last tconv_bench_median_ms ran: the busy time
 * of all CPUs (/proc/stat, steal included) minus this process's CPU time (all its threads), over
 * the wall time; -1 when unknown. A multi-thread figure means something only when this is near
 * 0. The load average cannot tell: it counts the benchmark's own threads. */
double tconv_bench_others_cpu(void);

#endif
