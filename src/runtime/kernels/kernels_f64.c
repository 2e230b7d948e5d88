/* float64 paths of Conv, ConvTranspose, Gemm and MatMul (kernels_f64.h): direct loops over the
 * same lattice the float32 kernels use, so the geometry (pads, auto_pad, output_shape,
 * output_padding, dilations, groups, fused crops) is resolved once, in one place. */
#include "runtime/kernels/kernels_f64.h"

/* Fine (linear) index of coarse position `c` through tap `t`, or -1 when it falls outside the
 * window (Conv: outside X, i.e. a padding zero; ConvTranspose: cropped away). */
static int64_t fine_index(const tc_lattice *lat, int64_t c, int64_t t) {
    int64_t fine = 0, c_rest = c, t_rest = t, scale = 1;
    for (int i = lat->rank - 1; i >= 0; i--) {
        int64_t cu = c_rest % lat->coarse[i], tu = t_rest % lat->kernel[i];
        c_rest /= lat->coarse[i];
        t_rest /= lat->kernel[i];
        int64_t f = cu * lat->strides[i] + tu * lat->dilations[i] - lat->pad_begin[i];
        if (f < lat->window_lo[i] || f >= lat->window_hi[i])
            return -1;
        fine += f * scale;
        scale *= lat->fine[i];
    }
    return fine;
}

tconv_status tc_f64_index_map(tc_kernel_ctx *ctx, const tc_lattice *lat, tc_rt_tensor *buf) {
    int64_t n;
    if (!tc_mul_i64(lat->coarse_size, lat->kernel_size, &n) || n > INT64_MAX / 8)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "the float64 index map is too large");
    tconv_status st = tc_kernel_scratch(ctx, (size_t)(n ? n : 1) * sizeof(int64_t), buf);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "the float64 index map: ");
    int64_t *map = buf->data;
    for (int64_t c = 0; c < lat->coarse_size; c++) {
        for (int64_t t = 0; t < lat->kernel_size; t++)
            map[c * lat->kernel_size + t] = fine_index(lat, c, t);
    }
    return TCONV_OK;
}

void tc_conv_f64(const tc_lattice *lat, const int64_t *map, int64_t batch, int64_t c_in,
                 int64_t c_out, int64_t group, const double *x, const double *w, const double *bias,
                 double *y) {
    int64_t cin_g = c_in / group, cout_g = c_out / group, K = lat->kernel_size;
    for (int64_t n = 0; n < batch; n++) {
        for (int64_t co = 0; co < c_out; co++) {
            int64_t g = co / cout_g;
            double *yp = y + (n * c_out + co) * lat->coarse_size;
            for (int64_t c = 0; c < lat->coarse_size; c++)
                yp[c] = bias ? bias[co] : 0.0;
            for (int64_t ci = 0; ci < cin_g; ci++) {
                const double *xp = x + (n * c_in + g * cin_g + ci) * lat->fine_size;
                const double *wp = w + (co * cin_g + ci) * K;
                for (int64_t c = 0; c < lat->coarse_size; c++) {
                    const int64_t *m = map + c * K;
                    double sum = 0.0;
                    for (int64_t t = 0; t < K; t++)
                        sum += m[t] < 0 ? 0.0 : xp[m[t]] * wp[t];
                    yp[c] += sum;
                }
            }
        }
    }
}

void tc_conv_transpose_f64(const tc_lattice *lat, const int64_t *map, int64_t batch, int64_t c_in,
                           int64_t c_out, int64_t group, const double *x, const double *w,
                           const double *bias, double *y) {
    int64_t cin_g = c_in / group, cout_g = c_out / group, K = lat->kernel_size;
    for (int64_t n = 0; n < batch; n++) {
        for (int64_t co = 0; co < c_out; co++) {
            int64_t g = co / cout_g;
            double *yp = y + (n * c_out + co) * lat->fine_size;
            for (int64_t f = 0; f < lat->fine_size; f++)
                yp[f] = bias ? bias[co] : 0.0;
            for (int64_t ci = 0; ci < cin_g; ci++) {
                const double *xp = x + (n * c_in + g * cin_g + ci) * lat->coarse_size;
                const double *wp = w + ((g * cin_g + ci) * cout_g + co % cout_g) * K;
                for (int64_t c = 0; c < lat->coarse_size; c++) {
                    const int64_t *m = map + c * K;
                    for (int64_t t = 0; t < K; t++) {
                        if (m[t] >= 0)
                            yp[m[t]] += xp[c] * wp[t];
                    }
                }
            }
        }
    }
}

void tc_dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
              const double *a, int64_t lda, const double *b, int64_t ldb, bool accumulate,
              double *c, int64_t ldc) {
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            double sum = 0.0;
            for (int64_t p = 0; p < k; p++)
                sum += (trans_a ? a[p * lda + i] : a[i * lda + p]) *
                       (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
            c[i * ldc + j] = alpha * sum + (accumulate ? c[i * ldc + j] : 0.0);
        }
    }
}
