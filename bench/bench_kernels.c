/* Kernel throughput of tconv's runtime on reference workload A (a DCGAN/U-Net upsampling layer:
 * X 1x64x64x64, W 64x32x4x4, stride 2, pads 1) and on the forward Conv of the same FLOPs
 * (X 1x32x128x128, W 64x32x4x4, stride 2, pads 1: the adjoint of workload A). One JSON object a
 * line: median milliseconds and GFLOP/s, single-thread and with every core.
 *
 *   bench_kernels [RUNS] */
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"

typedef struct kernel_case {
    const char *name;
    bench_conv_spec spec;
    double flops;
} kernel_case;

static void run_case(const kernel_case *kc, int threads, int runs) {
    tconv_model *m = bench_conv_model(&kc->spec);
    tconv_runner *r = bench_runner(m, threads);
    bench_check(tconv_runner_set_random_inputs(r, 1), "inputs", tconv_runner_last_error(r));
    double ms = bench_median_ms(bench_run_runner, r, 5, runs, 5.0);
    if (ms < 0)
        bench_check(TCONV_ERR_INVALID, kc->name, tconv_runner_last_error(r));
    printf(
        "{\"bench\": \"kernel\", \"case\": \"%s\", \"impl\": \"tconv\", \"isa\": \"%s\", "
        "\"threads\": %d, \"ms\": %.4f, \"gflops\": %.2f, \"load\": %.2f, \"others_cpu\": %.2f}\n",
        kc->name, tconv_runtime_gemm_isa(), threads, ms, kc->flops / (ms * 1e6), bench_load(),
        bench_others_cpu());
    fflush(stdout);
    tconv_runner_free(r);
    tconv_model_free(m);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    if (runs < 5)
        runs = 5;
    /* 2 * C_in * C_out * k*k * H_in*W_in multiply-adds for both. */
    double flops = 2.0 * 64 * 32 * 16 * 64 * 64;
    const kernel_case cases[] = {
        {"workloadA_convtranspose",
         {"ConvTranspose", {1, 64, 64, 64}, {64, 32, 4, 4}, 2, 1, 0, 0},
         flops},
        {"workloadA_forward_conv", {"Conv", {1, 32, 128, 128}, {64, 32, 4, 4}, 2, 1, 0, 0}, flops},
    };
    int cpus = bench_cpus();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i], 1, runs);
        if (cpus > 1)
            run_case(&cases[i], cpus, runs);
    }
    return 0;
}
