/* GFLOP/s of each Conv shape of LinkNet (ResNet-18 encoder, 64-512 channels, 1x3x256x256 input)
 * and ERFNet (16/64/128 channels, 1x3x128x256 input), the paper widths of models/linknet and
 * models/erfnet (issue 28), one thread, against the core's peak. One JSON object a line.
 *
 *   bench_conv_shapes [RUNS] [CLOCK_GHZ] [FLOP_PER_CYCLE]
 *
 * TCONV_BENCH_SHAPES=TEXT runs only the shapes whose net or name contains TEXT (e.g.
 * "models/"). TCONV_BENCH_THREADS=T runs each Conv on T threads (default 1); above 1 the figure
 * is the best run's wall time (CLOCK_MONOTONIC), since the helpers' CPU time is not this
 * thread's, and the peak stays one core's: "of_peak" is then against T times it. With T above
 * 1 it also runs the peak loop on T threads at once ("fma_peak_threads"): on this 2-core KVM
 * machine the two vCPUs are two cores in some processes and one core's two hardware threads
 * (sharing its FMA units) in others, which every 2-thread figure depends on.
 *
 * Each shape is a one-Conv model (random weights and input, no bias), run RUNS times (default
 * 15) after one warm-up; the figure is the best run's thread CPU time (CLOCK_THREAD_CPUTIME_ID:
 * time this thread was on a core, so other processes' load shows less than in wall time, though
 * they still share caches and memory bandwidth).
 *
 * Peak: measured, by default: the best of 20 runs of a loop of independent FMAs on registers (12
 * chains of 16 floats with AVX-512, of 8 with AVX2), which no Conv can beat on this core at this
 * clock. A nominal peak (CLOCK_GHZ x FLOP_PER_CYCLE, e.g. 64 for two 512-bit FMA units) can be
 * given instead: it is wrong where the core splits 512-bit FMAs into 256-bit halves (AMD Zen 4:
 * 32 per cycle) or runs below /proc/cpuinfo's clock. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"

typedef struct conv_shape {
    const char *net, *name;
    int count; /* how many Convs of the net have this shape */
    int64_t c_in, c_out, h, w, kh, kw, stride, pad_h, pad_w, dil_h, dil_w;
} conv_shape;

/* Input sizes are the Conv's own input (after the stem, pools and strides before it). */
static const conv_shape SHAPES[] = {
    {"linknet", "stem 7x7 s2 3->64 @256x256", 1, 3, 64, 256, 256, 7, 7, 2, 3, 3, 1, 1},
    {"linknet", "layer1 3x3 64->64 @64x64", 4, 64, 64, 64, 64, 3, 3, 1, 1, 1, 1, 1},
    {"linknet", "layer2 3x3 s2 64->128 @64x64", 1, 64, 128, 64, 64, 3, 3, 2, 1, 1, 1, 1},
    {"linknet", "layer2 3x3 128->128 @32x32", 3, 128, 128, 32, 32, 3, 3, 1, 1, 1, 1, 1},
    {"linknet", "layer3 3x3 s2 128->256 @32x32", 1, 128, 256, 32, 32, 3, 3, 2, 1, 1, 1, 1},
    {"linknet", "layer3 3x3 256->256 @16x16", 3, 256, 256, 16, 16, 3, 3, 1, 1, 1, 1, 1},
    {"linknet", "layer4 3x3 s2 256->512 @16x16", 1, 256, 512, 16, 16, 3, 3, 2, 1, 1, 1, 1},
    {"linknet", "layer4 3x3 512->512 @8x8", 3, 512, 512, 8, 8, 3, 3, 1, 1, 1, 1, 1},
    {"linknet", "head 3x3 32->32 @256x256", 1, 32, 32, 256, 256, 3, 3, 1, 1, 1, 1, 1},
    {"erfnet", "down1 3x3 s2 3->13 @128x256", 1, 3, 13, 128, 256, 3, 3, 2, 1, 1, 1, 1},
    {"erfnet", "down2 3x3 s2 16->48 @64x128", 1, 16, 48, 64, 128, 3, 3, 2, 1, 1, 1, 1},
    {"erfnet", "3x1 64->64 @32x64", 14, 64, 64, 32, 64, 3, 1, 1, 1, 0, 1, 1},
    {"erfnet", "1x3 64->64 @32x64", 14, 64, 64, 32, 64, 1, 3, 1, 0, 1, 1, 1},
    {"erfnet", "down3 3x3 s2 64->64 @32x64", 1, 64, 64, 32, 64, 3, 3, 2, 1, 1, 1, 1},
    {"erfnet", "enc 3x1 128->128 @16x32", 8, 128, 128, 16, 32, 3, 1, 1, 1, 0, 1, 1},
    {"erfnet", "enc 1x3 128->128 @16x32", 8, 128, 128, 16, 32, 1, 3, 1, 0, 1, 1, 1},
    {"erfnet", "enc 3x1 d2 128->128 @16x32", 2, 128, 128, 16, 32, 3, 1, 1, 2, 0, 2, 1},
    {"erfnet", "enc 1x3 d2 128->128 @16x32", 2, 128, 128, 16, 32, 1, 3, 1, 0, 2, 1, 2},
    {"erfnet", "enc 3x1 d4 128->128 @16x32", 2, 128, 128, 16, 32, 3, 1, 1, 4, 0, 4, 1},
    {"erfnet", "enc 1x3 d4 128->128 @16x32", 2, 128, 128, 16, 32, 1, 3, 1, 0, 4, 1, 4},
    {"erfnet", "enc 3x1 d8 128->128 @16x32", 2, 128, 128, 16, 32, 3, 1, 1, 8, 0, 8, 1},
    {"erfnet", "enc 1x3 d8 128->128 @16x32", 2, 128, 128, 16, 32, 1, 3, 1, 0, 8, 1, 8},
    {"erfnet", "enc 3x1 d16 128->128 @16x32", 2, 128, 128, 16, 32, 3, 1, 1, 16, 0, 16, 1},
    {"erfnet", "enc 1x3 d16 128->128 @16x32", 2, 128, 128, 16, 32, 1, 3, 1, 0, 16, 1, 16},
    {"erfnet", "dec 3x1 16->16 @64x128", 4, 16, 16, 64, 128, 3, 1, 1, 1, 0, 1, 1},
    {"erfnet", "dec 1x3 16->16 @64x128", 4, 16, 16, 64, 128, 1, 3, 1, 0, 1, 1, 1},
    /* models/linknet and models/erfnet: the same architectures at the widths and input sizes of
     * the regression models (a quarter of LinkNet's, 1x3x64x64 inputs), where Convs have few
     * output positions and the per-call costs show; models/fcn_head's and models/unet's Convs
     * (issue 23) */
    {"models/linknet", "7x7 s2 3->16 @64x64", 1, 3, 16, 64, 64, 7, 7, 2, 3, 3, 1, 1},
    {"models/linknet", "3x3 16->16 @16x16", 4, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1, 1},
    {"models/linknet", "3x3 s2 16->32 @16x16", 1, 16, 32, 16, 16, 3, 3, 2, 1, 1, 1, 1},
    {"models/linknet", "3x3 32->32 @8x8", 3, 32, 32, 8, 8, 3, 3, 1, 1, 1, 1, 1},
    {"models/linknet", "3x3 s2 32->64 @8x8", 1, 32, 64, 8, 8, 3, 3, 2, 1, 1, 1, 1},
    {"models/linknet", "3x3 64->64 @4x4", 3, 64, 64, 4, 4, 3, 3, 1, 1, 1, 1, 1},
    {"models/linknet", "3x3 s2 64->128 @4x4", 1, 64, 128, 4, 4, 3, 3, 2, 1, 1, 1, 1},
    {"models/linknet", "3x3 128->128 @2x2", 3, 128, 128, 2, 2, 3, 3, 1, 1, 1, 1, 1},
    {"models/linknet", "1x1 128->32 @2x2", 1, 128, 32, 2, 2, 1, 1, 1, 0, 0, 1, 1},
    {"models/linknet", "3x3 8->8 @64x64", 1, 8, 8, 64, 64, 3, 3, 1, 1, 1, 1, 1},
    {"models/erfnet", "3x3 s2 3->13 @64x64", 1, 3, 13, 64, 64, 3, 3, 2, 1, 1, 1, 1},
    {"models/erfnet", "3x3 s2 16->16 @32x32", 1, 16, 16, 32, 32, 3, 3, 2, 1, 1, 1, 1},
    {"models/erfnet", "3x3 s2 32->32 @16x16", 1, 32, 32, 16, 16, 3, 3, 2, 1, 1, 1, 1},
    {"models/erfnet", "3x1 32->32 @16x16", 6, 32, 32, 16, 16, 3, 1, 1, 1, 0, 1, 1},
    {"models/erfnet", "1x3 32->32 @16x16", 6, 32, 32, 16, 16, 1, 3, 1, 0, 1, 1, 1},
    {"models/erfnet", "3x1 64->64 @8x8", 4, 64, 64, 8, 8, 3, 1, 1, 1, 0, 1, 1},
    {"models/erfnet", "1x3 64->64 @8x8", 4, 64, 64, 8, 8, 1, 3, 1, 0, 1, 1, 1},
    {"models/erfnet", "3x1 d4 64->64 @8x8", 1, 64, 64, 8, 8, 3, 1, 1, 4, 0, 4, 1},
    {"models/erfnet", "1x3 d4 64->64 @8x8", 1, 64, 64, 8, 8, 1, 3, 1, 0, 4, 1, 4},
    {"models/erfnet", "3x1 d16 64->64 @8x8", 1, 64, 64, 8, 8, 3, 1, 1, 16, 0, 16, 1},
    {"models/erfnet", "1x3 d16 64->64 @8x8", 1, 64, 64, 8, 8, 1, 3, 1, 0, 16, 1, 16},
    {"models/erfnet", "3x1 16->16 @32x32", 2, 16, 16, 32, 32, 3, 1, 1, 1, 0, 1, 1},
    {"models/erfnet", "1x3 16->16 @32x32", 2, 16, 16, 32, 32, 1, 3, 1, 0, 1, 1, 1},
    {"models/fcn_head", "3x3 3->16 @96x128", 1, 3, 16, 96, 128, 3, 3, 1, 1, 1, 1, 1},
    {"models/fcn_head", "3x3 16->32 @48x64", 1, 16, 32, 48, 64, 3, 3, 1, 1, 1, 1, 1},
    {"models/fcn_head", "3x3 32->64 @24x32", 1, 32, 64, 24, 32, 3, 3, 1, 1, 1, 1, 1},
    {"models/fcn_head", "3x3 64->128 @12x16", 1, 64, 128, 12, 16, 3, 3, 1, 1, 1, 1, 1},
    {"models/fcn_head", "3x3 128->128 @6x8", 1, 128, 128, 6, 8, 3, 3, 1, 1, 1, 1, 1},
    {"models/fcn_head", "3x3 128->192 @3x4", 1, 128, 192, 3, 4, 3, 3, 1, 1, 1, 1, 1},
    {"models/fcn_head", "1x1 192->192 @3x4", 1, 192, 192, 3, 4, 1, 1, 1, 0, 0, 1, 1},
    {"models/unet", "3x3 3->8 @64x96", 1, 3, 8, 64, 96, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 8->8 @64x96", 2, 8, 8, 64, 96, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 16->8 @64x96", 1, 16, 8, 64, 96, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 8->16 @32x48", 1, 8, 16, 32, 48, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 16->16 @32x48", 2, 16, 16, 32, 48, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 32->16 @32x48", 1, 32, 16, 32, 48, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 16->32 @16x24", 1, 16, 32, 16, 24, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 32->32 @16x24", 2, 32, 32, 16, 24, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 64->32 @16x24", 1, 64, 32, 16, 24, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 32->64 @8x12", 1, 32, 64, 8, 12, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 64->64 @8x12", 2, 64, 64, 8, 12, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 128->64 @8x12", 1, 128, 64, 8, 12, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 64->128 @4x6", 1, 64, 128, 4, 6, 3, 3, 1, 1, 1, 1, 1},
    {"models/unet", "3x3 128->128 @4x6", 1, 128, 128, 4, 6, 3, 3, 1, 1, 1, 1, 1},
};

#define N_SHAPES (sizeof SHAPES / sizeof SHAPES[0])

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
    return (in + 2 * p - (k - 1) * d - 1) / s + 1;
}

static double flop_of(const conv_shape *c) {
    int64_t oh = out_size(c->h, c->kh, c->stride, c->pad_h, c->dil_h);
    int64_t ow = out_size(c->w, c->kw, c->stride, c->pad_w, c->dil_w);
    return 2.0 * (double)(c->c_out * c->c_in * c->kh * c->kw) * (double)(oh * ow);
}

static tconv_model *conv_model(const conv_shape *c) {
    tconv_model *m = NULL;
    bench_check(tconv_model_new(&m), "model", "");
    bench_check(tconv_model_set_opset_version(m, "", 17), "opset", tconv_model_last_error(m));
    tconv_graph *g = tconv_model_graph(m);
    int64_t x_dims[4] = {1, c->c_in, c->h, c->w}, w_dims[4] = {c->c_out, c->c_in, c->kh, c->kw};
    int64_t w_count = c->c_out * c->c_in * c->kh * c->kw;
    float *w_data = malloc((size_t)w_count * sizeof(float));
    if (!w_data)
        bench_check(TCONV_ERR_NOMEM, "weights", "");
    bench_fill(w_data, w_count, 7);
    tconv_value *x, *w, *y;
    tconv_node *node;
    bench_check(tconv_graph_new_input(g, "x", TCONV_DTYPE_FLOAT, 4, x_dims, &x), "x",
                tconv_model_last_error(m));
    bench_check(tconv_graph_new_initializer(g, "w", TCONV_DTYPE_FLOAT, 4, w_dims, w_data,
                                            (size_t)w_count * sizeof(float), &w),
                "w", tconv_model_last_error(m));
    free(w_data);
    bench_check(tconv_graph_new_node(g, "Conv", NULL, "conv", NULL, &node), "node",
                tconv_model_last_error(m));
    bench_check(tconv_node_append_input(node, x), "input", tconv_model_last_error(m));
    bench_check(tconv_node_append_input(node, w), "input", tconv_model_last_error(m));
    bench_check(tconv_node_new_output(node, "y", &y), "output", tconv_model_last_error(m));
    int64_t strides[2] = {c->stride, c->stride}, kernel[2] = {c->kh, c->kw};
    int64_t pads[4] = {c->pad_h, c->pad_w, c->pad_h, c->pad_w}, dils[2] = {c->dil_h, c->dil_w};
    bench_check(tconv_attr_set_ints(node, "strides", strides, 2), "strides", "");
    bench_check(tconv_attr_set_ints(node, "pads", pads, 4), "pads", "");
    bench_check(tconv_attr_set_ints(node, "kernel_shape", kernel, 2), "kernel_shape", "");
    bench_check(tconv_attr_set_ints(node, "dilations", dils, 2), "dilations", "");
    bench_check(tconv_graph_append_output(g, y), "graph output", tconv_model_last_error(m));
    return m;
}

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FMA_CHAINS 12
#define FMA_STEPS 100000
/* read at run time, so that the compiler cannot fold the loop */
static volatile float fma_x = 0.999999f, fma_y = 1e-7f;
/* FLOP of one run of the FMA loop: chains x lanes x 2 x steps. */
__attribute__((target("avx512f"))) static double fma_loop_avx512(void) {
    __m512 acc[FMA_CHAINS], x = _mm512_set1_ps(fma_x), y = _mm512_set1_ps(fma_y);
    for (int c = 0; c < FMA_CHAINS; c++)
        acc[c] = _mm512_set1_ps((float)c * fma_x);
    for (int i = 0; i < FMA_STEPS; i++) {
        for (int c = 0; c < FMA_CHAINS; c++)
            acc[c] = _mm512_fmadd_ps(acc[c], x, y);
    }
    float sink = 0;
    for (int c = 0; c < FMA_CHAINS; c++)
        sink += _mm512_reduce_add_ps(acc[c]);
    return sink == 1e30f ? 0 : 2.0 * 16 * FMA_CHAINS * FMA_STEPS;
}

__attribute__((target("avx2,fma"))) static double fma_loop_avx2(void) {
    __m256 acc[FMA_CHAINS], x = _mm256_set1_ps(fma_x), y = _mm256_set1_ps(fma_y);
    for (int c = 0; c < FMA_CHAINS; c++)
        acc[c] = _mm256_set1_ps((float)c * fma_x);
    for (int i = 0; i < FMA_STEPS; i++) {
        for (int c = 0; c < FMA_CHAINS; c++)
            acc[c] = _mm256_fmadd_ps(acc[c], x, y);
    }
    float lanes[8], sink = 0;
    for (int c = 0; c < FMA_CHAINS; c++) {
        _mm256_storeu_ps(lanes, acc[c]);
        for (int l = 0; l < 8; l++)
            sink += lanes[l];
    }
    return sink == 1e30f ? 0 : 2.0 * 8 * FMA_CHAINS * FMA_STEPS;
}
#endif

static double thread_cpu_s(void);

/* The measured single-core FMA peak in GFLOP/s for the GEMM's instruction set (0: unknown). */
static double measured_peak_gflops(const char *isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    bool avx512 = strncmp(isa, "avx512", 6) == 0, avx2 = strcmp(isa, "avx2") == 0;
    if (!avx512 && !avx2)
        return 0;
    double best = 0;
    for (int run = 0; run < 20; run++) {
        double t0 = thread_cpu_s();
        double flop = avx512 ? fma_loop_avx512() : fma_loop_avx2();
        double t = thread_cpu_s() - t0;
        if (t > 0 && flop / t > best)
            best = flop / t;
    }
    return best * 1e-9;
#else
    (void)isa;
    return 0;
#endif
}

/* The peak loop on `threads` threads at once (each timed by its own CPU time), the best of 5
 * rounds by the sum; writes each thread's GFLOP/s of that round to `each`. */
typedef struct fma_thread {
    bool avx512;
    double gflops;
} fma_thread;

static void *fma_thread_main(void *arg) {
    fma_thread *f = arg;
    double t0 = thread_cpu_s();
#if defined(__x86_64__) && defined(__GNUC__)
    double flop = f->avx512 ? fma_loop_avx512() : fma_loop_avx2();
#else
    double flop = 0;
#endif
    double t = thread_cpu_s() - t0;
    f->gflops = t > 0 ? flop / t * 1e-9 : 0;
    return NULL;
}

static double fma_peak_threads(const char *isa, int threads, double *each) {
    fma_thread f[64];
    pthread_t ids[64];
    double best = 0;
    threads = threads > 64 ? 64 : threads;
    for (int round = 0; round < 5; round++) {
        int started = 0;
        for (int i = 0; i < threads; i++) {
            f[i] = (fma_thread){.avx512 = strncmp(isa, "avx512", 6) == 0};
            started += pthread_create(&ids[i], NULL, fma_thread_main, &f[i]) == 0;
        }
        double sum = 0;
        for (int i = 0; i < started; i++) {
            pthread_join(ids[i], NULL);
            sum += f[i].gflops;
        }
        if (sum > best) {
            best = sum;
            for (int i = 0; i < started; i++)
                each[i] = f[i].gflops;
        }
    }
    return best;
}

static double cpuinfo_ghz(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz = -1.0;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu MHz", 7) == 0) {
            char *colon = strchr(line, ':');
            if (colon)
                mhz = strtod(colon + 1, NULL);
            break;
        }
    }
    if (f)
        fclose(f);
    return mhz / 1000.0;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 15;
    double ghz = argc > 2 ? atof(argv[2]) : cpuinfo_ghz();
    double per_cycle = argc > 3 ? atof(argv[3]) : 0.0;
    double peak = argc > 3 ? ghz * per_cycle : measured_peak_gflops(tconv_runtime_gemm_isa());
    if (argc <= 3)
        printf(
            "{\"bench\": \"fma_peak\", \"isa\": \"%s\", \"gflops\": %.1f, \"cpuinfo_ghz\": %.3f, "
            "\"flop_per_cycle_at_that_clock\": %.1f}\n",
            tconv_runtime_gemm_isa(), peak, ghz, ghz > 0 ? peak / ghz : 0.0);
    if (runs < 1 || ghz <= 0 || (argc > 3 && per_cycle <= 0) || peak <= 0) {
        fprintf(stderr, "usage: bench_conv_shapes [RUNS] [CLOCK_GHZ] [FLOP_PER_CYCLE]\n");
        return 2;
    }
    const char *only =
        getenv("TCONV_BENCH_SHAPES"); /* run only the shapes whose net or name holds it */
    const char *threads_env = getenv("TCONV_BENCH_THREADS");
    int threads = threads_env ? atoi(threads_env) : 1;
    if (threads < 1) {
        fprintf(stderr, "bench_conv_shapes: TCONV_BENCH_THREADS must be at least 1\n");
        return 2;
    }
    double (*clock_s)(void) = threads > 1 ? wall_s : thread_cpu_s;
    if (threads > 1 && argc <= 3) {
        double each[64] = {0};
        double sum = fma_peak_threads(tconv_runtime_gemm_isa(), threads, each);
        printf("{\"bench\": \"fma_peak_threads\", \"threads\": %d, \"gflops_sum\": %.1f, "
               "\"of_one_core\": %.2f, \"gflops_first_two\": [%.1f, %.1f]}\n",
               threads, sum, peak > 0 ? sum / peak : 0.0, each[0], each[1]);
    }
    const char *nets[N_SHAPES];
    double total_flop[N_SHAPES] = {0}, total_s[N_SHAPES] = {0};
    int n_nets = 0;
    for (size_t i = 0; i < N_SHAPES; i++) {
        const conv_shape *c = &SHAPES[i];
        if (only && !strstr(c->net, only) && !strstr(c->name, only))
            continue;
        tconv_model *m = conv_model(c);
        tconv_runner *r = bench_runner(m, threads);
        bench_check(tconv_runner_set_random_inputs(r, 11), "inputs", tconv_runner_last_error(r));
        bench_check(tconv_runner_run(r), "warm-up", tconv_runner_last_error(r));
        double best = 1e30;
        for (int k = 0; k < runs; k++) {
            double t0 = clock_s();
            bench_check(tconv_runner_run(r), "run", tconv_runner_last_error(r));
            double t = clock_s() - t0;
            best = t < best ? t : best;
        }
        double flop = flop_of(c), gflops = flop / best * 1e-9;
        int net = 0;
        while (net < n_nets && strcmp(nets[net], c->net) != 0)
            net++;
        if (net == n_nets)
            nets[n_nets++] = c->net;
        total_flop[net] += c->count * flop;
        total_s[net] += c->count * best;
        printf("{\"bench\": \"conv_shape\", \"net\": \"%s\", \"shape\": \"%s\", \"count\": %d, "
               "\"mflop\": %.1f, \"best_ms\": %.4f, \"gflops\": %.1f, \"peak_gflops\": %.1f, "
               "\"of_peak\": %.3f, \"isa\": \"%s\", \"threads\": %d, \"load\": %.2f}\n",
               c->net, c->name, c->count, flop * 1e-6, best * 1e3, gflops, peak,
               gflops / (peak * threads), tconv_runtime_gemm_isa(), threads, bench_load());
        fflush(stdout);
        tconv_runner_free(r);
        tconv_model_free(m);
    }
    for (int net = 0; net < n_nets; net++)
        printf("{\"bench\": \"conv_shape_total\", \"net\": \"%s\", \"gflop\": %.3f, \"ms\": %.3f, "
               "\"gflops\": %.1f, \"of_peak\": %.3f}\n",
               nets[net], total_flop[net] * 1e-9, total_s[net] * 1e3,
               total_flop[net] / total_s[net] * 1e-9,
               total_flop[net] / total_s[net] * 1e-9 / (peak * threads));
    return 0;
}
