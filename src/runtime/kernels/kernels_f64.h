/* float64 paths of the float kernels: plain loops in double, correct for every attribute the
 * float32 kernels take, not tuned (the float32 paths stay untouched). The float32 kernels call
 * them after validating their operands and allocating the output as double. The convolutions
 * read every (coarse position, tap)'s fine index (-1 outside the window) from `map`, made once
 * per call by tc_f64_index_map in kernel scratch (coarse x kernel int64s, within the session's
 * memory limit); the caller releases it. */
#ifndef TC_RUNTIME_KERNELS_F64_H
#define TC_RUNTIME_KERNELS_F64_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/kernels/conv_lattice.h"
#include "runtime/kernels/kernel.h"

tconv_status tc_f64_index_map(tc_kernel_ctx *ctx, const tc_lattice *lat, tc_rt_tensor *buf);

/* Conv: coarse = Y positions, fine = X positions. x [N, C_in, fine], w [C_out, C_in/group,
 * kernel], bias NULL or [C_out], y [N, C_out, coarse]. */
void tc_conv_f64(const tc_lattice *lat, const int64_t *map, int64_t batch, int64_t c_in,
                 int64_t c_out, int64_t group, const double *x, const double *w, const double *bias,
                 double *y);

/* ConvTranspose: coarse = X positions, fine = Y positions; only fine positions inside the
 * lattice's window take sums, every position starts at bias[c] (0 without bias). x [N, C_in,
 * coarse], w [C_in, C_out/group, kernel], y [N, C_out, fine]. */
void tc_conv_transpose_f64(const tc_lattice *lat, const int64_t *map, int64_t batch, int64_t c_in,
                           int64_t c_out, int64_t group, const double *x, const double *w,
                           const double *bias, double *y);

/* c (m x n, row stride ldc) = alpha * op(a) * op(b) + (accumulate ? c : 0); op transposes when
 * asked; lda/ldb are the stored row strides. */
void tc_dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
              const double *a, int64_t lda, const double *b, int64_t ldb, bool accumulate,
              double *c, int64_t ldc);

#endif
