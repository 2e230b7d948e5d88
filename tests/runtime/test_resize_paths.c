/* tc_resize_float's plane path (only the two last axes change: one plane and one output row at a
 * time) against its axis-by-axis path (tc_resize_float_by_axes): the same bits on random shapes
 * (rank 2 to 5), every mode, nearest_mode and coordinate_transformation_mode, antialias,
 * exclude_outside, tf_crop_and_resize with roi values outside [0, 1] and an extrapolation
 * value, float32 or float64 scales, identity axes, data with infinities, NaNs and -0, on 1 and
 * 3 threads (any NaN matches a NaN: expect_same_bits); and the plane path really runs (it needs
 * no whole-tensor buffers). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_harness.h"
#include "runtime/budget/budget.h"
#include "runtime/kernels/resize.h"

typedef tconv_status (*resize_fn)(tc_kernel_ctx *, const tc_resize_params *, const tc_rt_tensor *,
                                  tc_rt_tensor *);

/* Runs fn on x into a fresh y of p's output dims; returns the scratch high water in *scratch. */
static tconv_status run_resize(resize_fn fn, const tc_resize_params *p, const tc_rt_tensor *x,
                               int n_threads, tc_thread_pool *pool, tc_rt_tensor *y,
                               size_t *scratch) {
    tc_error err;
    tc_error_clear(&err);
    tc_budget budget;
    memset(&budget, 0, sizeof budget);
    assert_int_equal(tc_rt_tensor_alloc(y, TCONV_DTYPE_FLOAT, x->rank, p->out_dims, &err),
                     TCONV_OK);
    tc_kernel_ctx ctx = {.n_threads = n_threads, .pool = pool, .err = &err, .budget = &budget};
    tconv_status st = fn(&ctx, p, x, y);
    if (st != TCONV_OK)
        print_message("resize: %s\n", err.message);
    *scratch = budget.scratch.high_water;
    tc_budget_free(&budget);
    return st;
}

static float edgy_value(uint64_t *rng) {
    switch (kh_rand_range(rng, 0, 39)) {
    case 0:
        return INFINITY;
    case 1:
        return -INFINITY;
    case 2:
        return NAN;
    case 3:
        return -0.0f;
    default:
        return (float)((double)kh_rng_next(rng) / (double)(1ULL << 31) * 8.0 - 4.0);
    }
}

/* A random scale for an axis of length `in` and the output length it gives (at least 1). */
static void random_axis_scale(uint64_t *rng, int64_t in, bool f32, double *scale, int64_t *out) {
    static const double scales[] = {0.25, 0.5, 0.6, 0.75, 1.0, 1.0, 1.5, 2.0, 2.0, 3.0, 1.7};
    double s = scales[kh_rng_next(rng) % (sizeof scales / sizeof scales[0])];
    if (f32)
        s = (double)(float)s;
    int64_t n = (int64_t)floor(s * (double)in);
    if (n < 1 || kh_rand_range(rng, 0, 4) == 0) { /* sizes: scale = out / in */
        n = kh_rand_range(rng, 1, 2 * in + 1);
        s = (double)n / (double)in;
    }
    *scale = s;
    *out = n;
}

static void random_params(uint64_t *rng, int rank, const int64_t *in, tc_resize_params *p) {
    memset(p, 0, sizeof *p);
    p->mode = (tc_resize_mode)kh_rand_range(rng, 0, 2);
    p->ctm = (tc_resize_ctm)kh_rand_range(rng, 0, 6);
    p->nearest = (tc_nearest_mode)kh_rand_range(rng, 0, 3);
    p->cubic_a = kh_rand_range(rng, 0, 1) ? -0.75 : -0.5;
    p->exclude_outside = kh_rand_range(rng, 0, 3) == 0;
    p->antialias = p->mode != TCONV_RESIZE_NEAREST && kh_rand_range(rng, 0, 3) == 0;
    p->extrapolation_value = kh_rand_range(rng, 0, 1) ? 0.0 : -2.5;
    p->scales_f32 = kh_rand_range(rng, 0, 1);
    for (int a = 0; a < rank; a++) {
        p->scales[a] = 1.0;
        p->out_dims[a] = in[a];
        p->roi_start[a] = (double)kh_rand_range(rng, -2, 6) / 10.0;
        p->roi_end[a] = (double)kh_rand_range(rng, 5, 12) / 10.0;
    }
    for (int a = rank - 2; a < rank; a++)
        random_axis_scale(rng, in[a], p->scales_f32, &p->scales[a], &p->out_dims[a]);
}

/* The same bits, but any NaN for a NaN: which of two NaN operands an addition returns follows
 * the operand order the compiler picked for that loop, and ONNX leaves NaN payloads open. */
static void expect_same_bits(const tc_rt_tensor *a, const tc_rt_tensor *b, int c) {
    assert_int_equal(a->n_elements, b->n_elements);
    const float *f = a->data, *g = b->data;
    for (int64_t i = 0; i < a->n_elements; i++) {
        if (isnan(f[i]) && isnan(g[i]))
            continue;
        uint32_t u, v;
        memcpy(&u, &f[i], sizeof u);
        memcpy(&v, &g[i], sizeof v);
        if (u != v) {
            print_error("case %d element %lld: plane 0x%08x, by axes 0x%08x\n", c, (long long)i, u,
                        v);
            fail();
        }
    }
}

static void test_plane_path_matches_axes(void **state) {
    (void)state;
    uint64_t rng = 11;
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    int compared = 0;
    for (int c = 0; c < 1500; c++) {
        int rank = (int)kh_rand_range(&rng, 2, 5);
        int64_t dims[TC_MAX_RANK];
        for (int a = 0; a < rank; a++)
            dims[a] = a < rank - 2 ? kh_rand_range(&rng, 1, 3) : kh_rand_range(&rng, 1, 9);
        tc_resize_params p;
        random_params(&rng, rank, dims, &p);
        tc_rt_tensor x, plane, axes;
        tc_error err;
        assert_int_equal(tc_rt_tensor_alloc(&x, TCONV_DTYPE_FLOAT, rank, dims, &err), TCONV_OK);
        for (int64_t i = 0; i < x.n_elements; i++)
            ((float *)x.data)[i] = edgy_value(&rng);
        int threads = c % 3 == 0 ? 3 : 1;
        size_t plane_scratch, axes_scratch;
        tconv_status st =
            run_resize(tc_resize_float, &p, &x, threads, pool, &plane, &plane_scratch);
        assert_int_equal(
            run_resize(tc_resize_float_by_axes, &p, &x, threads, pool, &axes, &axes_scratch), st);
        if (st == TCONV_OK) {
            expect_same_bits(&plane, &axes, c);
            compared++;
        }
        tc_rt_tensor_release(&plane);
        tc_rt_tensor_release(&axes);
        tc_rt_tensor_release(&x);
    }
    tc_thread_pool_destroy(pool);
    assert_true(compared > 1400);
}

/* stylegan2's bilinear 2x upsampling (2x3x16x16 -> 2x3x32x32, half_pixel): the plane path runs
 * (far less scratch than the two whole-tensor double buffers), with the same bits. */
static void test_plane_path_runs(void **state) {
    (void)state;
    int64_t dims[4] = {2, 3, 16, 16};
    tc_resize_params p;
    memset(&p, 0, sizeof p);
    p.mode = TCONV_RESIZE_LINEAR;
    p.ctm = TCONV_CTM_HALF_PIXEL;
    p.scales_f32 = true;
    for (int a = 0; a < 4; a++) {
        p.scales[a] = a < 2 ? 1.0 : 2.0;
        p.out_dims[a] = a < 2 ? dims[a] : 32;
        p.roi_end[a] = 1.0;
    }
    tc_rt_tensor x, plane, axes;
    tc_error err;
    assert_int_equal(tc_rt_tensor_alloc(&x, TCONV_DTYPE_FLOAT, 4, dims, &err), TCONV_OK);
    uint64_t rng = 5;
    kh_fill_random(x.data, x.n_elements, &rng);
    size_t plane_scratch, axes_scratch;
    assert_int_equal(run_resize(tc_resize_float, &p, &x, 1, NULL, &plane, &plane_scratch),
                     TCONV_OK);
    assert_int_equal(run_resize(tc_resize_float_by_axes, &p, &x, 1, NULL, &axes, &axes_scratch),
                     TCONV_OK);
    expect_same_bits(&plane, &axes, 0);
    /* the axes path holds two double copies of the output (6144 elements) */
    assert_true(axes_scratch >= 2 * 6144 * sizeof(double));
    assert_true(plane_scratch < 8192);
    tc_rt_tensor_release(&plane);
    tc_rt_tensor_release(&axes);
    tc_rt_tensor_release(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plane_path_matches_axes),
        cmocka_unit_test(test_plane_path_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
