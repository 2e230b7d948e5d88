/* The benchmark programs' clock and median (bench_common.h): apart from bench_common.c because
 * they need no tconv, and bench_ab, which loads its libraries with dlopen, links no tconv. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

#include "bench_common.h"

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *v, size_t n) {
    qsort(v, n, sizeof *v, compare_doubles);
}

double bench_sorted_median(double *v, size_t n) {
    bench_sort(v, n);
    return v[n / 2];
}
