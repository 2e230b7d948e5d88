/* ConvTranspose and Conv kernels called directly: hand-computed corner cases (negative totals,
 * output_padding inside and past the full output with bias, Conv SAME with odd totals,
 * depthwise), randomized comparisons with textbook loops (scatter for ConvTranspose, direct
 * sums for Conv) over ranks, groups, dilations, pads and thread counts, error reporting, and
 * the ONNX conformance node tests for both ops through a session. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "importer/importer.h"
#include "ir/conv_transpose_geometry.h"
#include "kernel_harness.h"
#include "rt_test_util.h"
#include "runtime/compute/cpu_features.h"
#include "runtime/compute/gemm.h"
#include "runtime/compute/test_hooks.h"
#include "runtime/kernels/conv_lattice.h"
#include "testutil.h"

/* ---------------------------------------------------------------- hand-computed cases */

/* X = [1, 2, 3] (1x1x3), W = ones(1x1xk); per-case attributes; expect y (1x1xn). */
typedef struct ct_1d_case {
    const char *name;
    int64_t k, stride;
    const char *auto_pad; /* NULL: absent */
    int64_t output_shape; /* 0: absent */
    int64_t pads[2];      /* used when has_pads */
    bool has_pads;
    int64_t output_padding; /* 0: absent */
    float bias;             /* NAN: no bias input */
    int64_t n_out;
    float want[12];
} ct_1d_case;

static void run_ct_1d_case(const ct_1d_case *c) {
    kernel_harness h;
    kh_init(&h, "ConvTranspose", 1);
    float x[3] = {1, 2, 3}, w[4] = {1, 1, 1, 1};
    int64_t x_dims[3] = {1, 1, 3}, w_dims[3] = {1, 1, c->k}, b_dims[1] = {1};
    kh_input(&h, 3, x_dims, x);
    kh_input(&h, 3, w_dims, w);
    if (!isnan(c->bias))
        kh_input(&h, 1, b_dims, &c->bias);
    kh_attr_ints(&h, "strides", 1, &c->stride);
    if (c->auto_pad)
        kh_attr_string(&h, "auto_pad", c->auto_pad);
    if (c->output_shape)
        kh_attr_ints(&h, "output_shape", 1, &c->output_shape);
    if (c->has_pads)
        kh_attr_ints(&h, "pads", 2, c->pads);
    if (c->output_padding)
        kh_attr_ints(&h, "output_padding", 1, &c->output_padding);
    tconv_status st = kh_run(&h);
    if (st != TCONV_OK)
        print_error("%s: %s\n", c->name, h.err.message);
    assert_int_equal(st, TCONV_OK);
    int64_t y_dims[3] = {1, 1, c->n_out};
    kh_expect_shape(&h.outputs[0], 3, y_dims);
    kh_expect_close(h.outputs[0].data, c->want, c->n_out, 0, 1e-6);
    kh_free(&h);
}

/* Full outputs: k=2 s=2 -> F = [1,1,2,2,3,3]; k=2 s=3 -> F = [1,1,0,2,2,0,3,3]. */
static void test_conv_transpose_negative_totals(void **state) {
    (void)state;
    static const ct_1d_case cases[] = {
        /* output_shape 8: total -2, pb = pe = -1: one zero each side, then bias */
        {"oshape_even_negative",
         2,
         2,
         NULL,
         8,
         {0},
         false,
         0,
         0.5f,
         8,
         {0.5f, 1.5f, 1.5f, 2.5f, 2.5f, 3.5f, 3.5f, 0.5f}},
        /* output_shape 7: total -1, pb = 0, pe = -1 (ONNX: the extra zero goes at the end) */
        {"oshape_odd_negative", 2, 2, NULL, 7, {0}, false, 0, NAN, 7, {1, 1, 2, 2, 3, 3, 0}},
        /* SAME_UPPER k=2 s=3: total = ke - s = -1, pb = floor(-1/2) = -1, pe = 0 */
        {"same_upper_negative",
         2,
         3,
         "SAME_UPPER",
         0,
         {0},
         false,
         0,
         NAN,
         9,
         {0, 1, 1, 0, 2, 2, 0, 3, 3}},
        /* SAME_LOWER: pe = -1, pb = 0 */
        {"same_lower_negative",
         2,
         3,
         "SAME_LOWER",
         0,
         {0},
         false,
         0,
         1.0f,
         9,
         {2, 2, 1, 3, 3, 1, 4, 4, 1}},
        /* output_shape with SAME_UPPER, total -1: pb = -1 (odd extra at the begin side) */
        {"oshape_same_upper_negative",
         2,
         2,
         "SAME_UPPER",
         7,
         {0},
         false,
         0,
         NAN,
         7,
         {0, 1, 1, 2, 2, 3, 3}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_ct_1d_case(&cases[i]);
}

static void test_conv_transpose_output_padding(void **state) {
    (void)state;
    static const ct_1d_case cases[] = {
        /* VALID + output_padding 1: out = F + 1; the extra position lies past F: bias only */
        {"past_full_bias",
         2,
         2,
         "VALID",
         0,
         {0},
         false,
         1,
         0.5f,
         7,
         {1.5f, 1.5f, 2.5f, 2.5f, 3.5f, 3.5f, 0.5f}},
        /* pads 1,1 + output_padding 1: out = 6 - 2 + 1 = 5 = F[1..5]: the op position holds
         * the computed value F[5] = 3 */
        {"inside_full", 2, 2, NULL, 0, {1, 1}, true, 1, NAN, 5, {1, 2, 2, 3, 3}},
        /* pads 0,1 + op 1 with k=2 s=3: F has 8 entries, out = 8: F itself */
        {"inside_full_s3", 2, 3, NULL, 0, {0, 1}, true, 1, 2.0f, 8, {3, 3, 2, 4, 4, 2, 5, 5}},
        /* SAME_UPPER + output_padding: out = x*s = 6, total = op + ke - s = 1: pb 0, pe 1 */
        {"same_upper_op", 2, 2, "SAME_UPPER", 0, {0}, false, 1, NAN, 6, {1, 1, 2, 2, 3, 3}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_ct_1d_case(&cases[i]);
}

/* 2-D, group 2, dilation 2, asymmetric pads, batch 2, computed by hand on small numbers. */
static void test_conv_transpose_grouped_2d_hand(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "ConvTranspose", 1);
    /* X: N=2, C=2, 1x2. W: (2, 1, 1, 2) -> group 2, 1 output channel per group. */
    float x[8] = {1, 2, 3, 4, /* batch 1 */ 5, 6, 7, 8};
    float w[4] = {1, 10, /* group 1 */ 100, 1000};
    float b[2] = {0.25f, -0.25f};
    int64_t x_dims[4] = {2, 2, 1, 2}, w_dims[4] = {2, 1, 1, 2}, b_dims[1] = {2};
    kh_input(&h, 4, x_dims, x);
    kh_input(&h, 4, w_dims, w);
    kh_input(&h, 1, b_dims, b);
    kh_attr_int(&h, "group", 2);
    kh_attr_ints(&h, "dilations", 2, (const int64_t[]){1, 2});
    kh_attr_ints(&h, "pads", 4, (const int64_t[]){0, 1, 0, 0});
    /* F along W: positions i + 2k for i in {0,1}, k in {0,1}: F = [x0 w0, x1 w0, x0 w1, x1 w1],
     * crop 1 at the begin: [x1 w0, x0 w1, x1 w1]. */
    kh_run_ok(&h);
    int64_t y_dims[4] = {2, 2, 1, 3};
    kh_expect_shape(&h.outputs[0], 4, y_dims);
    float want[12] = {2 + 0.25f, 10 + 0.25f, 20 + 0.25f, 400 - 0.25f, 3000 - 0.25f, 4000 - 0.25f,
                      6 + 0.25f, 50 + 0.25f, 60 + 0.25f, 800 - 0.25f, 7000 - 0.25f, 8000 - 0.25f};
    kh_expect_close(h.outputs[0].data, want, 12, 0, 1e-4);
    kh_free(&h);
}

/* Conv 1-D, W = ones: x = [1..5]. */
typedef struct conv_1d_case {
    const char *name;
    int64_t k, stride;
    const char *auto_pad;
    int64_t n_out;
    float want[6];
} conv_1d_case;

static void test_conv_same_odd(void **state) {
    (void)state;
    static const conv_1d_case cases[] = {
        /* k=2 s=1: total 1 -> UPPER pads (0,1), LOWER (1,0) */
        {"upper_k2", 2, 1, "SAME_UPPER", 5, {3, 5, 7, 9, 5}},
        {"lower_k2", 2, 1, "SAME_LOWER", 5, {1, 3, 5, 7, 9}},
        /* k=4 s=2: out 3, total (3-1)*2 + 4 - 5 = 3 -> UPPER (1,2), LOWER (2,1) */
        {"upper_k4_s2", 4, 2, "SAME_UPPER", 3, {6, 14, 9}},
        {"lower_k4_s2", 4, 2, "SAME_LOWER", 3, {3, 10, 12}},
        /* k=1 s=2: total max(0, 4 + 1 - 5) = 0 */
        {"upper_k1_s2", 1, 2, "SAME_UPPER", 3, {1, 3, 5}},
        {"valid_k2_s2", 2, 2, "VALID", 2, {3, 7}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const conv_1d_case *c = &cases[i];
        kernel_harness h;
        kh_init(&h, "Conv", 1);
        float x[5] = {1, 2, 3, 4, 5}, w[4] = {1, 1, 1, 1};
        int64_t x_dims[3] = {1, 1, 5}, w_dims[3] = {1, 1, c->k};
        kh_input(&h, 3, x_dims, x);
        kh_input(&h, 3, w_dims, w);
        kh_attr_ints(&h, "strides", 1, &c->stride);
        kh_attr_string(&h, "auto_pad", c->auto_pad);
        kh_run_ok(&h);
        int64_t y_dims[3] = {1, 1, c->n_out};
        kh_expect_shape(&h.outputs[0], 3, y_dims);
        kh_expect_close(h.outputs[0].data, c->want, c->n_out, 0, 1e-6);
        kh_free(&h);
    }
}

static void test_conv_depthwise_hand(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "Conv", 1);
    float x[18], w[8] = {1, 1, 1, 1, /* channel 1 */ 1, 0, 0, -1}, b[2] = {1, 2};
    for (int i = 0; i < 18; i++)
        x[i] = (float)(i + 1);
    int64_t x_dims[4] = {1, 2, 3, 3}, w_dims[4] = {2, 1, 2, 2}, b_dims[1] = {2};
    kh_input(&h, 4, x_dims, x);
    kh_input(&h, 4, w_dims, w);
    kh_input(&h, 1, b_dims, b);
    kh_attr_int(&h, "group", 2);
    kh_attr_ints(&h, "kernel_shape", 2, (const int64_t[]){2, 2});
    kh_run_ok(&h);
    int64_t y_dims[4] = {1, 2, 2, 2};
    kh_expect_shape(&h.outputs[0], 4, y_dims);
    float want[8] = {13, 17, 25, 29, -2, -2, -2, -2};
    kh_expect_close(h.outputs[0].data, want, 8, 0, 1e-5);
    kh_free(&h);
}

/* ---------------------------------------------------------------- references */

static void decode(int64_t flat, const int64_t *dims, int rank, int64_t *coords) {
    for (int i = rank - 1; i >= 0; i--) {
        coords[i] = flat % dims[i];
        flat /= dims[i];
    }
}

/* Textbook scatter: y[n, co, i*s + k*d - pb] += x[n, ci, i] * w[ci, co_local, k], then bias. */
static void conv_transpose_reference(const tc_conv_transpose_geometry *g, int64_t batch,
                                     const float *x, const float *w, const float *b, float *y) {
    int r = g->spatial_rank;
    /* zeros: GCC cannot see that a failed assert_true does not return */
    int64_t in_size = 0, out_size = 0, k_size = 0;
    assert_true(tc_shape_elements(g->in, r, &in_size));
    assert_true(tc_shape_elements(g->out, r, &out_size));
    assert_true(tc_shape_elements(g->kernel, r, &k_size));
    int64_t cin_g = g->c_in / g->group, cout_g = g->c_out / g->group;
    memset(y, 0, (size_t)(batch * g->c_out * out_size) * sizeof(float));
    for (int64_t n = 0; n < batch; n++)
        for (int64_t ci = 0; ci < g->c_in; ci++)
            for (int64_t p = 0; p < in_size; p++)
                for (int64_t t = 0; t < k_size; t++) {
                    int64_t xi[TC_MAX_SPATIAL], kt[TC_MAX_SPATIAL], off = 0;
                    decode(p, g->in, r, xi);
                    decode(t, g->kernel, r, kt);
                    bool inside = true;
                    for (int a = 0; a < r; a++) {
                        int64_t o =
                            xi[a] * g->strides[a] + kt[a] * g->dilations[a] - g->pad_begin[a];
                        inside = inside && o >= 0 && o < g->out[a];
                        off = off * g->out[a] + o;
                    }
                    if (!inside)
                        continue;
                    int64_t grp = ci / cin_g;
                    for (int64_t co = 0; co < cout_g; co++)
                        y[(n * g->c_out + grp * cout_g + co) * out_size + off] +=
                            x[(n * g->c_in + ci) * in_size + p] *
                            w[(ci * cout_g + co) * k_size + t];
                }
    for (int64_t n = 0; b && n < batch; n++)
        for (int64_t c = 0; c < g->c_out; c++)
            for (int64_t q = 0; q < out_size; q++)
                y[(n * g->c_out + c) * out_size + q] += b[c];
}

/* ---------------------------------------------------------------- random ConvTranspose */

typedef struct ct_draw {
    int rank;
    int64_t group, cin_g, cout_g, batch;
    int64_t k[3], s[3], d[3], x[3], op[3], pads[6], oshape[3];
    int mode; /* 0 pads, 1 VALID, 2 SAME_UPPER, 3 SAME_LOWER, 4..6 output_shape
                 (+NOTSET/UPPER/LOWER) */
    bool bias, has_op;
    int threads;
    bool leaky; /* a fused LeakyRelu (alpha 0.1), as the executor fuses one */
} ct_draw;

static void draw_conv_transpose(uint64_t *rng, ct_draw *c) {
    memset(c, 0, sizeof *c);
    c->rank = (int)kh_rand_range(rng, 1, 3);
    c->group = kh_rand_range(rng, 1, 3);
    c->cin_g = kh_rand_range(rng, 1, 3);
    c->cout_g = kh_rand_range(rng, 1, 3);
    c->batch = kh_rand_range(rng, 1, 2);
    c->mode = (int)kh_rand_range(rng, 0, 6);
    c->bias = kh_rand_range(rng, 0, 1);
    c->has_op = kh_rand_range(rng, 0, 2) == 0;
    c->threads = (int)kh_rand_range(rng, 1, 3);
    for (int i = 0; i < c->rank; i++) {
        c->k[i] = kh_rand_range(rng, 1, 4);
        c->s[i] = kh_rand_range(rng, 1, 3);
        c->d[i] = kh_rand_range(rng, 1, 2);
        c->x[i] = kh_rand_range(rng, 1, c->rank == 3 ? 3 : 6);
        int64_t ke = (c->k[i] - 1) * c->d[i] + 1, lim = c->s[i] > c->d[i] ? c->s[i] : c->d[i];
        c->op[i] = c->has_op ? kh_rand_range(rng, 0, lim - 1) : 0;
        c->pads[i] = kh_rand_range(rng, 0, ke - 1);
        c->pads[i + c->rank] = kh_rand_range(rng, 0, ke - 1);
        int64_t full = c->s[i] * (c->x[i] - 1) + ke;
        c->oshape[i] = full + c->op[i] - kh_rand_range(rng, -3, ke);
        if (c->oshape[i] < 1)
            c->oshape[i] = 1;
    }
}

static void set_conv_transpose_attrs(kernel_harness *h, const ct_draw *c) {
    static const char *const modes[] = {NULL, "VALID",      "SAME_UPPER", "SAME_LOWER",
                                        NULL, "SAME_UPPER", "SAME_LOWER"};
    size_t r = (size_t)c->rank;
    kh_attr_ints(h, "strides", r, c->s);
    kh_attr_ints(h, "dilations", r, c->d);
    kh_attr_ints(h, "kernel_shape", r, c->k);
    kh_attr_int(h, "group", c->group);
    if (c->has_op)
        kh_attr_ints(h, "output_padding", r, c->op);
    if (modes[c->mode])
        kh_attr_string(h, "auto_pad", modes[c->mode]);
    if (c->mode == 0)
        kh_attr_ints(h, "pads", 2 * r, c->pads);
    if (c->mode >= 4)
        kh_attr_ints(h, "output_shape", r, c->oshape);
}

/* Sets a fixed geometry (rank entries of each array; pads: 2 * rank). */
static void ct_geometry(ct_draw *c, const int64_t *k, const int64_t *s, const int64_t *d,
                        const int64_t *x, const int64_t *pads) {
    size_t r = (size_t)c->rank;
    memcpy(c->k, k, r * sizeof *k);
    memcpy(c->s, s, r * sizeof *s);
    memcpy(c->d, d, r * sizeof *d);
    memcpy(c->x, x, r * sizeof *x);
    memcpy(c->pads, pads, 2 * r * sizeof *pads);
}

/* Builds and runs one drawn case; false when the draw is invalid (output size <= 0). */
static bool run_random_conv_transpose(const ct_draw *c, uint64_t *rng) {
    kernel_harness h;
    kh_init(&h, "ConvTranspose", 1);
    h.n_threads = c->threads;
    int r = c->rank;
    int64_t x_dims[5] = {c->batch, c->group * c->cin_g},
            w_dims[5] = {c->group * c->cin_g, c->cout_g};
    for (int i = 0; i < r; i++) {
        x_dims[2 + i] = c->x[i];
        w_dims[2 + i] = c->k[i];
    }
    set_conv_transpose_attrs(&h, c);
    tc_conv_transpose_attrs attrs;
    tc_conv_transpose_geometry g;
    assert_int_equal(tc_conv_transpose_read_attrs(h.node, r, &attrs, &h.err), TCONV_OK);
    if (tc_conv_transpose_resolve(&attrs, x_dims, w_dims, TCONV_CONVENTION_ONNX, &g, &h.err) !=
        TCONV_OK) {
        kh_free(&h);
        return false;
    }
    tc_rt_tensor *x = kh_input(&h, r + 2, x_dims, NULL);
    tc_rt_tensor *w = kh_input(&h, r + 2, w_dims, NULL);
    kh_fill_random(x->data, x->n_elements, rng);
    kh_fill_random(w->data, w->n_elements, rng);
    const float *bias = NULL;
    if (c->bias) {
        int64_t b_dims[1] = {g.c_out};
        tc_rt_tensor *b = kh_input(&h, 1, b_dims, NULL);
        kh_fill_random(b->data, b->n_elements, rng);
        bias = b->data;
    }
    tc_kernel_activation leaky = {.kind = TC_ACTIVATION_leaky_relu, .alpha = 0.1f};
    h.activation = c->leaky ? &leaky : NULL;
    kh_run_ok(&h);
    const tc_rt_tensor *y = &h.outputs[0];
    float *want = malloc((size_t)y->n_elements * sizeof(float));
    assert_non_null(want);
    conv_transpose_reference(&g, c->batch, x->data, w->data, bias, want);
    for (int64_t i = 0; c->leaky && i < y->n_elements; i++)
        want[i] = want[i] < 0.0f ? 0.1f * want[i] : want[i];
    assert_int_equal(y->dims[1], g.c_out);
    for (int i = 0; i < r; i++)
        assert_int_equal(y->dims[2 + i], g.out[i]);
    kh_expect_close(y->data, want, y->n_elements, 1e-4, 1e-5);
    free(want);
    kh_free(&h);
    return true;
}

static void test_conv_transpose_random_vs_scatter(void **state) {
    (void)state;
    uint64_t rng = 11;
    int ran = 0;
    for (int trial = 0; trial < 600; trial++) {
        ct_draw c;
        draw_conv_transpose(&rng, &c);
        ran += run_random_conv_transpose(&c, &rng);
    }
    assert_true(ran > 300);
}

/* Strides of 4 and up with kernels a multiple of them: the sub-pixel form (one stride-1
 * correlation per phase), against the scatter loops, over every padding mode, groups, batches,
 * output_padding and output_shape past the computed span (bias-only positions). Some kernels
 * are not multiples (the col2im form, side by side). */
/* Few input positions (kernels_conv_transpose.c: the whole batch in one swapped GEMM, X^T
 * gathered, W read in place, each item's rows transposed for col2im) with many channels, batch up
 * to 4 and threads, every mode of the random draw. */
static void test_conv_transpose_few_positions_random(void **state) {
    (void)state;
    uint64_t rng = 12;
    int ran = 0;
    for (int trial = 0; trial < 150; trial++) {
        ct_draw c;
        draw_conv_transpose(&rng, &c);
        c.cin_g = kh_rand_range(&rng, 1, 40);
        c.cout_g = kh_rand_range(&rng, 1, 24);
        c.batch = kh_rand_range(&rng, 1, 4);
        ran += run_random_conv_transpose(&c, &rng);
    }
    assert_true(ran > 75);
}

static void test_conv_transpose_random_subpixel(void **state) {
    (void)state;
    uint64_t rng = 13;
    int ran = 0;
    for (int trial = 0; trial < 300; trial++) {
        ct_draw c;
        draw_conv_transpose(&rng, &c);
        for (int i = 0; i < c.rank; i++) {
            c.s[i] = kh_rand_range(&rng, i == c.rank - 1 ? 4 : 1, 8);
            c.k[i] =
                trial % 5 == 4 ? kh_rand_range(&rng, 1, 17) : c.s[i] * kh_rand_range(&rng, 1, 3);
            c.d[i] = 1;
            c.op[i] = c.has_op ? kh_rand_range(&rng, 0, c.s[i] - 1) : 0;
            c.pads[i] = kh_rand_range(&rng, 0, c.k[i] - 1);
            c.pads[i + c.rank] = kh_rand_range(&rng, 0, c.k[i] - 1);
            int64_t full = c.s[i] * (c.x[i] - 1) + c.k[i];
            c.oshape[i] = full + c.op[i] - kh_rand_range(&rng, -3, c.k[i]);
            if (c.oshape[i] < 1)
                c.oshape[i] = 1;
        }
        ran += run_random_conv_transpose(&c, &rng);
    }
    assert_true(ran > 150);
    /* FCN's k16 s8 over a 12x16 input, several column blocks and channel chunks */
    ct_draw f = {.rank = 2, .group = 1, .cin_g = 21, .cout_g = 21, .batch = 2, .bias = true};
    int64_t k[2] = {16, 16}, st[2] = {8, 8}, one[2] = {1, 1}, x[2] = {12, 16};
    int64_t pads[4] = {4, 4, 4, 4};
    ct_geometry(&f, k, st, one, x, pads);
    for (int threads = 1; threads <= 3; threads++) {
        f.threads = threads;
        assert_true(run_random_conv_transpose(&f, &rng));
    }
    /* audio_upsampler's k16 s8 over 24 positions: a grid too small to split, so the threads
     * split the output channels (33 of them: uneven chunks; work enough for threads), with and
     * without covering blocks */
    ct_draw a = {.rank = 1, .group = 1, .cin_g = 96, .cout_g = 33, .batch = 1, .bias = true};
    int64_t ka[1] = {16}, sa[1] = {8}, xa[1] = {24};
    for (int covering = 0; covering < 2; covering++) {
        int64_t pads_a[2] = {4, covering ? 4 : 1};
        ct_geometry(&a, ka, sa, one, xa, pads_a);
        for (int threads = 1; threads <= 3; threads++) {
            a.threads = threads;
            assert_true(run_random_conv_transpose(&a, &rng));
        }
    }
}

/* Large enough for several column blocks and output-channel chunks per thread. */
/* A fused activation (the executor's, kernel.h): each task applies it to the output-channel
 * chunk it finished, the sub-pixel form after its blocks, over every path and 1-3 threads, with
 * enough work to split: col2im (k3 s2, 16 channels), few positions (X 3x3), sub-pixel (k4 s2 on
 * 4 input channels, and k8 s4), the direct 1x1, groups and a batch. */
static void test_conv_transpose_fused_activation(void **state) {
    (void)state;
    uint64_t rng = 29;
    /* clang-format off */
    static const struct { int64_t group, cin_g, cout_g, batch, k, s, x; } shapes[] = {
        {1, 16, 16, 1, 3, 2, 16}, {1, 64, 40, 2, 4, 2, 3}, {1, 4, 24, 1, 4, 2, 24},
        {1, 8, 12, 1, 8, 4, 12}, {1, 48, 40, 1, 1, 1, 24}, {2, 8, 20, 2, 3, 2, 12},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int threads = 1; threads <= 3; threads++) {
            ct_draw c = {.rank = 2,
                         .group = shapes[i].group,
                         .cin_g = shapes[i].cin_g,
                         .cout_g = shapes[i].cout_g,
                         .batch = shapes[i].batch,
                         .bias = true,
                         .threads = threads,
                         .leaky = true};
            for (int a = 0; a < 2; a++) {
                c.k[a] = shapes[i].k;
                c.s[a] = shapes[i].s;
                c.d[a] = 1;
                c.x[a] = shapes[i].x;
                c.pads[a] = c.pads[a + 2] = shapes[i].k > shapes[i].s ? 1 : 0;
            }
            assert_true(run_random_conv_transpose(&c, &rng));
        }
    }
}

/* The instruction sets a kernel test runs under, in turn: what the CPU has, AVX2 alone (its
 * GEMM's row form and packing, on a CPU with AVX-512 too) and none (the portable paths). A leg
 * ends with tc_cpu_features_restore(). */
enum { ISA_LEGS = 3 };
static void isa_leg_enter(int leg) {
    if (leg == 1)
        tc_cpu_features_override(TC_CPU_AVX2 | TC_CPU_F16C);
    else if (leg == 2)
        tc_cpu_features_override(0);
}

/* Few input positions with more than 1024 columns a chunk (output channels x taps), where the
 * AVX2 GEMM would pack W on every run and the node packs it once instead (few_packed_weights):
 * DCGAN's first layer (100 -> 128 channels, k4 on 1x1, batch 2), and 70 channels of k4 on 2x2
 * with 2 groups and a batch of 3 (uneven chunks at 2 and 3 threads), against the scatter
 * reference, with the detected ISA, AVX2 alone and none. */
static void test_conv_transpose_few_positions_packed_w(void **state) {
    (void)state;
    uint64_t rng = 14;
    int64_t k[2] = {4, 4}, s[2] = {1, 1}, one[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
    int64_t s2[2] = {2, 2}, pads2[4] = {1, 1, 1, 1}, x1[2] = {1, 1}, x2[2] = {2, 2};
    ct_draw dcgan = {.rank = 2, .group = 1, .cin_g = 100, .cout_g = 128, .batch = 2, .bias = true};
    ct_draw grouped = {.rank = 2, .group = 2, .cin_g = 9, .cout_g = 70, .batch = 3, .bias = false};
    ct_geometry(&dcgan, k, s, one, x1, pads);
    ct_geometry(&grouped, k, s2, one, x2, pads2);
    for (int leg = 0; leg < ISA_LEGS; leg++) {
        isa_leg_enter(leg);
        for (int threads = 1; threads <= 3; threads++) {
            dcgan.threads = grouped.threads = threads;
            assert_true(run_random_conv_transpose(&dcgan, &rng));
            assert_true(run_random_conv_transpose(&grouped, &rng));
        }
        tc_cpu_features_restore();
    }
}

/* The phase form (kernels_conv_transpose.c: one masked GEMM per output phase, stored to Y):
 * drawn where it applies, an output s times X (output_padding = s - k + the pads), kernels at
 * least the strides, 3 or more output channels (PHASE_MIN_CHANNELS; the fewest leave 1-2 rows a
 * thread, which read two column panels at a time) and 32 or more positions: every rank, strides 1
 * to 4 (up to 16 phases), pads from 0 to k - 1 split every way (so each phase's taps start at
 * every offset), groups, a batch, bias, a fused activation, 1-3 threads, kernels equal to the
 * strides (a tap a phase), against the scatter reference; and the same draws with AVX2 alone (its
 * row-form GEMM, packed a vector at a time) and with no vector ISA (the col2im and sub-pixel
 * forms). */
static void test_conv_transpose_phase_form(void **state) {
    (void)state;
    uint64_t rng = 41;
    for (int leg = 0; leg < ISA_LEGS; leg++) {
        isa_leg_enter(leg);
        for (int trial = 0; trial < 60; trial++) {
            ct_draw c = {.rank = (int)kh_rand_range(&rng, 1, 3)};
            c.group = kh_rand_range(&rng, 1, 2);
            c.cin_g = kh_rand_range(&rng, 1, 12);
            c.cout_g = trial % 4 == 0 ? kh_rand_range(&rng, 3, 7) : kh_rand_range(&rng, 8, 40);
            c.batch = kh_rand_range(&rng, 1, 2);
            c.bias = kh_rand_range(&rng, 0, 1);
            c.leaky = kh_rand_range(&rng, 0, 1);
            c.threads = (int)kh_rand_range(&rng, 1, 3);
            c.has_op = true;
            int64_t phases = 1;
            for (int i = 0; i < c.rank; i++) {
                c.s[i] = kh_rand_range(&rng, 1, phases * 4 <= 16 ? 4 : 16 / phases);
                phases *= c.s[i];
                c.k[i] = c.s[i] + kh_rand_range(&rng, 0, 3);
                c.d[i] = 1;
                /* grids down to the form's least (PHASE_MIN_POSITIONS) and below it */
                c.x[i] = kh_rand_range(&rng,
                                       c.rank == 1   ? 6
                                       : c.rank == 2 ? 2
                                                     : 2,
                                       c.rank == 1   ? 80
                                       : c.rank == 2 ? 14
                                                     : 6);
                int64_t total = kh_rand_range(&rng, c.k[i] - c.s[i], c.k[i] - 1);
                c.pads[i] = kh_rand_range(&rng, 0, total);
                c.pads[i + c.rank] = total - c.pads[i];
                c.op[i] = c.s[i] - c.k[i] + total;
            }
            assert_true(run_random_conv_transpose(&c, &rng));
        }
        /* kernels equal to the strides on every axis (U-Net's k2 s2, 3-D's, a 1-D k4 s4): one
         * tap a phase; and a stride-1 axis beside a strided one */
        static const int64_t ks[4][3] = {{2, 2, 0}, {2, 2, 2}, {4, 0, 0}, {1, 3, 0}};
        static const int ranks[4] = {2, 3, 1, 2};
        for (int shape = 0; shape < 4; shape++) {
            ct_draw c = {.rank = ranks[shape],
                         .group = 1,
                         .cin_g = 5,
                         .cout_g = 9,
                         .batch = 2,
                         .bias = true,
                         .leaky = shape % 2 == 1,
                         .threads = shape % 3 + 1};
            for (int i = 0; i < c.rank; i++) {
                c.k[i] = c.s[i] = ks[shape][i];
                c.d[i] = 1;
                c.x[i] = c.rank == 1 ? 37 : c.rank == 2 ? 7 : 3;
            }
            assert_true(run_random_conv_transpose(&c, &rng));
        }
        tc_cpu_features_restore();
    }
}

static void test_conv_transpose_large_blocks(void **state) {
    (void)state;
    uint64_t rng = 12;
    ct_draw c = {.rank = 2,
                 .group = 1,
                 .cin_g = 5,
                 .cout_g = 17,
                 .batch = 2,
                 .mode = 0,
                 .bias = true,
                 .has_op = true};
    int64_t k[2] = {4, 3}, s[2] = {2, 3}, d[2] = {1, 2}, x[2] = {37, 29}, op[2] = {1, 2};
    int64_t pads[4] = {1, 3, 2, 0};
    ct_geometry(&c, k, s, d, x, pads);
    memcpy(c.op, op, sizeof op);
    for (int threads = 1; threads <= 3; threads++) {
        c.threads = threads;
        assert_true(run_random_conv_transpose(&c, &rng));
    }
    /* 1x1, stride 1, no pads: the direct GEMM path (group 2). */
    ct_draw d1 = {.rank = 2,
                  .group = 2,
                  .cin_g = 3,
                  .cout_g = 5,
                  .batch = 2,
                  .mode = 0,
                  .bias = true,
                  .threads = 2};
    int64_t ones[2] = {1, 1}, xs[2] = {9, 13};
    memcpy(d1.k, ones, sizeof ones);
    memcpy(d1.s, ones, sizeof ones);
    memcpy(d1.d, ones, sizeof ones);
    memcpy(d1.x, xs, sizeof xs);
    assert_true(run_random_conv_transpose(&d1, &rng));
    /* A 1x1 input (a generator's first layer): row updates up to batch 4, a GEMM above; grouped,
     * with output-channel chunks for the threads. */
    static const int64_t batches[] = {1, 3, 4, 5, 9};
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
        ct_draw p = {.rank = 2,
                     .group = 2,
                     .cin_g = 7,
                     .cout_g = 6,
                     .batch = batches[b],
                     .mode = 0,
                     .bias = b % 2 == 0,
                     .threads = 1 + (int)(b % 2)};
        int64_t k4[2] = {4, 3}, one[2] = {1, 1};
        memcpy(p.k, k4, sizeof k4);
        memcpy(p.s, one, sizeof one);
        memcpy(p.d, one, sizeof one);
        memcpy(p.x, one, sizeof one);
        assert_true(run_random_conv_transpose(&p, &rng));
    }
}

/* ---------------------------------------------------------------- random Conv */

typedef struct conv_draw {
    int rank;
    int64_t group, cin_g, cout_g, batch;
    int64_t k[4], s[4], d[4], x[4], pads[8]; /* up to 4 spatial axes */
    int mode; /* 0 pads, 1 VALID, 2 SAME_UPPER, 3 SAME_LOWER, 4 no pads at all */
    bool bias;
    int threads;
    bool nan_dead_taps; /* W is NaN at every tap that reads only padding */
} conv_draw;

/* Output size and begin pad per axis, computed independently of the kernel. */
static int64_t conv_reference_axis(const conv_draw *c, int i, int64_t *pb) {
    int64_t ke = (c->k[i] - 1) * c->d[i] + 1, x = c->x[i], s = c->s[i];
    if (c->mode == 2 || c->mode == 3) {
        int64_t out = (x + s - 1) / s;
        int64_t total = (out - 1) * s + ke - x;
        total = total < 0 ? 0 : total;
        *pb = c->mode == 2 ? total / 2 : (total + 1) / 2;
        return out;
    }
    int64_t pbeg = c->mode == 0 ? c->pads[i] : 0, pend = c->mode == 0 ? c->pads[i + c->rank] : 0;
    *pb = pbeg;
    int64_t span = x + pbeg + pend - ke;
    return span < 0 ? 0 : span / s + 1;
}

static void conv_reference(const conv_draw *c, const int64_t *out, const int64_t *pb,
                           const float *x, const float *w, const float *b, float *y) {
    int r = c->rank;
    int64_t in_size = 1, out_size = 1, k_size = 1;
    for (int i = 0; i < r; i++) {
        in_size *= c->x[i];
        out_size *= out[i];
        k_size *= c->k[i];
    }
    int64_t c_in = c->group * c->cin_g, c_out = c->group * c->cout_g;
    for (int64_t n = 0; n < c->batch; n++)
        for (int64_t co = 0; co < c_out; co++)
            for (int64_t q = 0; q < out_size; q++) {
                int64_t oi[TC_MAX_SPATIAL], kt[TC_MAX_SPATIAL];
                decode(q, out, r, oi);
                double sum = b ? b[co] : 0.0;
                int64_t grp = co / c->cout_g;
                for (int64_t ci = 0; ci < c->cin_g; ci++)
                    for (int64_t t = 0; t < k_size; t++) {
                        decode(t, c->k, r, kt);
                        int64_t off = 0;
                        bool inside = true;
                        for (int a = 0; a < r; a++) {
                            int64_t v = oi[a] * c->s[a] + kt[a] * c->d[a] - pb[a];
                            inside = inside && v >= 0 && v < c->x[a];
                            off = off * c->x[a] + v;
                        }
                        if (inside)
                            sum += (double)x[(n * c_in + grp * c->cin_g + ci) * in_size + off] *
                                   w[(co * c->cin_g + ci) * k_size + t];
                    }
                y[(n * c_out + co) * out_size + q] = (float)sum;
            }
}

/* Whether tap t of axis i reads X for some output position (the reference's inside test). */
static bool reference_tap_reads_x(const conv_draw *c, int i, int64_t out, int64_t pb, int64_t t) {
    for (int64_t o = 0; o < out; o++) {
        int64_t v = o * c->s[i] + t * c->d[i] - pb;
        if (v >= 0 && v < c->x[i])
            return true;
    }
    return false;
}

/* NaN in W wherever a tap reads only padding on some axis: the reference never multiplies it,
 * and a Conv that drops those taps never reads it (one that multiplies padding zeros by it
 * makes NaN). */
static void poison_dead_taps(const conv_draw *c, const int64_t *out, const int64_t *pb, float *w) {
    int64_t k_size = 1, kt[TC_MAX_SPATIAL];
    for (int i = 0; i < c->rank; i++)
        k_size *= c->k[i];
    int64_t rows = c->group * c->cout_g * c->cin_g;
    for (int64_t t = 0; t < k_size; t++) {
        decode(t, c->k, c->rank, kt);
        bool dead = false;
        for (int i = 0; i < c->rank; i++)
            dead = dead || !reference_tap_reads_x(c, i, out[i], pb[i], kt[i]);
        for (int64_t r = 0; dead && r < rows; r++)
            w[r * k_size + t] = NAN;
    }
}

static bool run_random_conv(const conv_draw *c, uint64_t *rng) {
    int r = c->rank;
    int64_t out[TC_MAX_SPATIAL], pb[TC_MAX_SPATIAL];
    for (int i = 0; i < r; i++) {
        out[i] = conv_reference_axis(c, i, &pb[i]);
        if (out[i] < 1)
            return false;
    }
    static const char *const modes[] = {NULL, "VALID", "SAME_UPPER", "SAME_LOWER", NULL};
    kernel_harness h;
    kh_init(&h, "Conv", 1);
    h.n_threads = c->threads;
    int64_t x_dims[6] = {c->batch, c->group * c->cin_g};
    int64_t w_dims[6] = {c->group * c->cout_g, c->cin_g};
    for (int i = 0; i < r; i++) {
        x_dims[2 + i] = c->x[i];
        w_dims[2 + i] = c->k[i];
    }
    kh_attr_ints(&h, "strides", (size_t)r, c->s);
    kh_attr_ints(&h, "dilations", (size_t)r, c->d);
    kh_attr_int(&h, "group", c->group);
    if (modes[c->mode])
        kh_attr_string(&h, "auto_pad", modes[c->mode]);
    if (c->mode == 0)
        kh_attr_ints(&h, "pads", 2 * (size_t)r, c->pads);
    tc_rt_tensor *x = kh_input(&h, r + 2, x_dims, NULL);
    tc_rt_tensor *w = kh_input(&h, r + 2, w_dims, NULL);
    kh_fill_random(x->data, x->n_elements, rng);
    kh_fill_random(w->data, w->n_elements, rng);
    if (c->nan_dead_taps)
        poison_dead_taps(c, out, pb, w->data);
    const float *bias = NULL;
    if (c->bias) {
        int64_t b_dims[1] = {w_dims[0]};
        tc_rt_tensor *b = kh_input(&h, 1, b_dims, NULL);
        kh_fill_random(b->data, b->n_elements, rng);
        bias = b->data;
    }
    kh_run_ok(&h);
    const tc_rt_tensor *y = &h.outputs[0];
    for (int i = 0; i < r; i++)
        assert_int_equal(y->dims[2 + i], out[i]);
    float *want = malloc((size_t)y->n_elements * sizeof(float));
    assert_non_null(want);
    conv_reference(c, out, pb, x->data, w->data, bias, want);
    kh_expect_close(y->data, want, y->n_elements, 1e-4, 1e-5);
    free(want);
    kh_free(&h);
    return true;
}

/* run_random_conv at 1 to max_threads threads; every draw must run (an output of positive size). */
static void run_conv_at_thread_counts(conv_draw *c, int max_threads, uint64_t *rng) {
    for (int threads = 1; threads <= max_threads; threads++) {
        c->threads = threads;
        assert_true(run_random_conv(c, rng));
    }
}

/* Each draw at 1 and 2 threads under each ISA leg (isa_leg_enter). */
static void run_draws_both_isas(conv_draw *draws, size_t n, uint64_t *rng) {
    for (int leg = 0; leg < ISA_LEGS; leg++) {
        isa_leg_enter(leg);
        for (size_t i = 0; i < n; i++)
            run_conv_at_thread_counts(&draws[i], 2, rng);
        tc_cpu_features_restore();
    }
}

static void test_conv_random_vs_direct(void **state) {
    (void)state;
    uint64_t rng = 21;
    int ran = 0;
    for (int trial = 0; trial < 500; trial++) {
        conv_draw c = {.rank = (int)kh_rand_range(&rng, 1, 3)};
        c.group = kh_rand_range(&rng, 1, 3);
        c.cin_g = kh_rand_range(&rng, 1, 3);
        c.cout_g = kh_rand_range(&rng, 1, 3);
        c.batch = kh_rand_range(&rng, 1, 2);
        c.mode = (int)kh_rand_range(&rng, 0, 4);
        c.bias = kh_rand_range(&rng, 0, 1);
        c.threads = (int)kh_rand_range(&rng, 1, 3);
        for (int i = 0; i < c.rank; i++) {
            c.k[i] = kh_rand_range(&rng, 1, 4);
            c.s[i] = kh_rand_range(&rng, 1, 3);
            c.d[i] = kh_rand_range(&rng, 1, 2);
            c.x[i] = kh_rand_range(&rng, 1, c.rank == 3 ? 5 : 9);
            c.pads[i] = kh_rand_range(&rng, 0, c.k[i]);
            c.pads[i + c.rank] = kh_rand_range(&rng, 0, c.k[i]);
        }
        ran += run_random_conv(&c, &rng);
    }
    assert_true(ran > 250);
}

/* X of no channels (W of no input rows): no sum, so Y is the bias (leaky-activated for
 * ConvTranspose, as the executor fuses one), planned by both kernels' usual geometry; each path
 * used to offset X's and W's NULL data (clang's UBSan, fuzz_plan_proof). Groups 1 and 2, pads,
 * strides, output_padding, 1 and 2 threads, against the references. */
static void test_no_input_channels(void **state) {
    (void)state;
    uint64_t rng = 37;
    for (int threads = 1; threads <= 2; threads++) {
        for (int64_t group = 1; group <= 2; group++) {
            conv_draw c = {.rank = 2, .group = group, .cout_g = 3, .batch = 2, .bias = true};
            c.threads = threads;
            ct_draw t = {.rank = 2, .group = group, .cout_g = 3, .batch = 2, .bias = true};
            t.threads = threads;
            t.leaky = true;
            t.has_op = true;
            for (int a = 0; a < 2; a++) {
                c.k[a] = t.k[a] = 3;
                c.s[a] = t.s[a] = 2;
                c.d[a] = t.d[a] = 1;
                c.x[a] = t.x[a] = 5;
                c.pads[a] = t.pads[a] = 1;
                t.op[a] = 1;
            }
            assert_true(run_random_conv(&c, &rng));
            assert_true(run_random_conv_transpose(&t, &rng));
            c.bias = t.bias = false;
            assert_true(run_random_conv(&c, &rng));
            assert_true(run_random_conv_transpose(&t, &rng));
        }
    }
}

/* Few output positions and many output channels (kernels_conv.c's narrow path: positions as the
 * GEMM's rows, A gathered from a padded X, W^T read in place; up to 128 positions where im2col
 * would be used, and the wide path beside it): every rank, groups, batch,
 * strides, dilations, pads (explicit, SAME, none), a plain 1x1 read in place, 1-3 threads, with
 * and without bias. */
static void test_conv_few_positions_random(void **state) {
    (void)state;
    uint64_t rng = 23;
    for (int leg = 0; leg < ISA_LEGS; leg++) {
        isa_leg_enter(leg); /* AVX2: W^T packed once beyond 2 row panels */
        int ran = 0;
        for (int trial = 0; trial < 120; trial++) {
            conv_draw c = {.rank = (int)kh_rand_range(&rng, 1, 3)};
            c.group = kh_rand_range(&rng, 1, 2);
            c.cin_g = kh_rand_range(&rng, 1, 40);
            c.cout_g = kh_rand_range(&rng, 16, 70);
            c.batch = kh_rand_range(&rng, 1, 2);
            c.mode = (int)kh_rand_range(&rng, 0, 4);
            c.bias = kh_rand_range(&rng, 0, 1);
            c.threads = (int)kh_rand_range(&rng, 1, 3);
            for (int i = 0; i < c.rank; i++) {
                c.k[i] = kh_rand_range(&rng, 1, 3);
                c.s[i] = kh_rand_range(&rng, 1, 2);
                c.d[i] = kh_rand_range(&rng, 1, 3);
                c.x[i] = kh_rand_range(&rng, 1, c.rank == 1 ? 100 : c.rank == 2 ? 10 : 4);
                c.pads[i] = kh_rand_range(&rng, 0, c.k[i]);
                c.pads[i + c.rank] = kh_rand_range(&rng, 0, c.k[i]);
            }
            ran += run_random_conv(&c, &rng);
        }
        tc_cpu_features_restore();
        assert_true(ran > 60);
    }
}

/* The stride-2 split (tc_floats_deinterleave_lines), bit for bit against the plain loop, in
 * every instruction set's copy: counts below, at and past the 16-float AVX-512 copy's threshold,
 * several lines with strides that skip source lines and leave gaps between output lines. */
static void test_deinterleave_lines_exact(void **state) {
    (void)state;
    enum { LINES = 3, SRC_LD = 2 * 40 + 24, DST_LD = 40 + 5 };
    float src[LINES * SRC_LD], a[LINES * DST_LD], b[LINES * DST_LD];
    uint64_t rng = 31;
    kh_fill_random(src, LINES * SRC_LD, &rng);
    for (int leg = 0; leg < ISA_LEGS; leg++) {
        isa_leg_enter(leg);
        for (int64_t count = 0; count <= 40; count++) {
            for (int64_t lines = 1; lines <= LINES; lines++) {
                for (int64_t i = 0; i < LINES * DST_LD; i++)
                    a[i] = b[i] = -7.0f; /* what the split must leave alone */
                tc_floats_deinterleave_lines(a, b, DST_LD, src, SRC_LD, count, lines);
                for (int64_t l = 0; l < LINES; l++) {
                    for (int64_t j = 0; j < DST_LD; j++) {
                        bool written = l < lines && j < count;
                        float want_a = written ? src[l * SRC_LD + 2 * j] : -7.0f;
                        float want_b = written ? src[l * SRC_LD + 2 * j + 1] : -7.0f;
                        assert_memory_equal(&a[l * DST_LD + j], &want_a, sizeof(float));
                        assert_memory_equal(&b[l * DST_LD + j], &want_b, sizeof(float));
                    }
                }
            }
        }
        tc_cpu_features_restore();
    }
}

/* Stride-2 Convs whose phase-plane lines are 16 floats and more (erfnet's downsamplers: the
 * planes split a run of lines at a time), with the detected instruction sets (AVX-512: the
 * masked path's unpadded planes) and without (the wide path's padded planes): rank 2 and 3
 * (where a run of lines breaks at each plane of the leading axes), stride 2 on every axis or on
 * the last only, pads that keep both last-axis phases inside X and pads that do not, an odd
 * width, 1 and 2 threads. */
static void test_conv_stride2_long_lines(void **state) {
    (void)state;
    uint64_t rng = 33;
    /* clang-format off */
    conv_draw draws[] = {
        {.rank = 2, .group = 1, .cin_g = 16, .cout_g = 16, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {2, 2}, .d = {1, 1}, .x = {32, 32}, .pads = {1, 1, 1, 1}},
        {.rank = 2, .group = 1, .cin_g = 3, .cout_g = 13, .batch = 2, .bias = false,
         .k = {3, 3}, .s = {2, 2}, .d = {1, 1}, .x = {20, 64}, .pads = {1, 1, 1, 1}},
        {.rank = 2, .group = 1, .cin_g = 5, .cout_g = 7, .batch = 1, .bias = true,
         .k = {2, 4}, .s = {1, 2}, .d = {1, 1}, .x = {9, 71}, .pads = {0, 0, 1, 2}},
        {.rank = 2, .group = 2, .cin_g = 4, .cout_g = 9, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {2, 2}, .d = {2, 1}, .x = {19, 48}, .pads = {2, 0, 2, 0}},
        {.rank = 3, .group = 1, .cin_g = 3, .cout_g = 8, .batch = 1, .bias = true,
         .k = {3, 3, 3}, .s = {2, 2, 2}, .d = {1, 1, 1}, .x = {6, 5, 40}, .pads = {1, 1, 1, 1, 1, 1}},
        {.rank = 3, .group = 1, .cin_g = 2, .cout_g = 5, .batch = 2, .bias = false,
         .k = {1, 2, 3}, .s = {1, 1, 2}, .d = {1, 1, 1}, .x = {3, 4, 36}, .pads = {0, 0, 1, 0, 1, 0}},
        /* planes past CONV_MIN_PARALLEL_PLANE_FLOATS, built in ranges over the threads (13 and
         * 10 of them: the last range short), without pads and with uneven ones */
        {.rank = 2, .group = 1, .cin_g = 13, .cout_g = 8, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {2, 2}, .d = {1, 1}, .x = {64, 64}, .pads = {1, 1, 1, 1}},
        {.rank = 3, .group = 1, .cin_g = 5, .cout_g = 6, .batch = 2, .bias = false,
         .k = {3, 3, 3}, .s = {2, 2, 2}, .d = {1, 1, 1}, .x = {10, 12, 40},
         .pads = {1, 0, 2, 2, 1, 1}},
    };
    /* clang-format on */
    run_draws_both_isas(draws, sizeof draws / sizeof draws[0], &rng);
}

/* Dilations that put the outer taps wholly in the padding (ERFNet's dilation 8 and 16 on an
 * 8x8 map, DeepLab's atrous rates on small maps): the Conv drops those taps (kernels_conv.c
 * conv_drop_dead_taps). Random draws of every rank with large dilations, pads and strides
 * against the direct reference, in both instruction sets and at 1-2 threads; then SAME-padded
 * cases whose dead taps hold NaN, which must not reach Y: proof that they are dropped, on the
 * masked, wide, im2col, narrow and direct 1x1 paths. */
static void test_conv_dead_taps(void **state) {
    (void)state;
    uint64_t rng = 37;
    int ran = 0;
    for (int leg = 0; leg < ISA_LEGS; leg++) {
        isa_leg_enter(leg);
        for (int trial = 0; trial < 150; trial++) {
            conv_draw c = {.rank = (int)kh_rand_range(&rng, 1, 3)};
            c.group = kh_rand_range(&rng, 1, 2);
            c.cin_g = kh_rand_range(&rng, 1, 6);
            c.cout_g = kh_rand_range(&rng, 1, 20);
            c.batch = kh_rand_range(&rng, 1, 2);
            c.mode = (int)kh_rand_range(&rng, 0, 3);
            c.bias = kh_rand_range(&rng, 0, 1);
            c.threads = (int)kh_rand_range(&rng, 1, 2);
            for (int i = 0; i < c.rank; i++) {
                c.k[i] = kh_rand_range(&rng, 1, 4);
                c.s[i] = kh_rand_range(&rng, 1, 2);
                c.d[i] = kh_rand_range(&rng, 2, 17);
                c.x[i] = kh_rand_range(&rng, 1, c.rank == 3 ? 5 : 9);
                c.pads[i] = kh_rand_range(&rng, 0, c.d[i] * (c.k[i] - 1));
                c.pads[i + c.rank] = kh_rand_range(&rng, 0, c.d[i] * (c.k[i] - 1));
            }
            ran += run_random_conv(&c, &rng);
        }
        tc_cpu_features_restore();
    }
    assert_true(ran > 150);
    /* clang-format off */
    conv_draw poisoned[] = {
        /* ERFNet: 3x1 and 1x3 at dilation 16 and 8 on an 8x8 map, 64 channels */
        {.rank = 2, .group = 1, .cin_g = 64, .cout_g = 64, .batch = 1, .bias = true,
         .k = {3, 1}, .s = {1, 1}, .d = {16, 1}, .x = {8, 8}, .pads = {16, 0, 16, 0}},
        {.rank = 2, .group = 1, .cin_g = 64, .cout_g = 64, .batch = 1, .bias = true,
         .k = {1, 3}, .s = {1, 1}, .d = {1, 8}, .x = {8, 8}, .pads = {0, 8, 0, 8}},
        /* DeepLab's ASPP: 3x3 at rate 12 on a 5x7 map (only the centre tap lives) and rate 6
         * on 8x8 (every tap lives somewhere: nothing is dropped, nothing is NaN) */
        {.rank = 2, .group = 1, .cin_g = 12, .cout_g = 24, .batch = 2, .bias = false,
         .k = {3, 3}, .s = {1, 1}, .d = {12, 12}, .x = {5, 7}, .pads = {12, 12, 12, 12}},
        {.rank = 2, .group = 1, .cin_g = 12, .cout_g = 24, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {1, 1}, .d = {6, 6}, .x = {8, 8}, .pads = {6, 6, 6, 6}},
        /* one axis cut, the other not; groups; a wide map (im2col / wide paths) */
        {.rank = 2, .group = 2, .cin_g = 3, .cout_g = 5, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {1, 1}, .d = {9, 1}, .x = {6, 40}, .pads = {9, 1, 9, 1}},
        /* 1-D (a dilated audio Conv) and 3-D, the kernel 5 cut to its middle 3 */
        {.rank = 1, .group = 1, .cin_g = 8, .cout_g = 16, .batch = 1, .bias = true,
         .k = {5}, .s = {1}, .d = {4}, .x = {6}, .pads = {8, 8}},
        {.rank = 3, .group = 1, .cin_g = 4, .cout_g = 6, .batch = 1, .bias = false,
         .k = {3, 3, 3}, .s = {1, 1, 1}, .d = {5, 1, 5}, .x = {3, 4, 5}, .pads = {5, 1, 5, 5, 1, 5}},
        /* stride 2 with the dead taps past X's end */
        {.rank = 2, .group = 1, .cin_g = 6, .cout_g = 32, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {2, 2}, .d = {7, 7}, .x = {7, 7}, .pads = {7, 7, 7, 7}},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof poisoned / sizeof poisoned[0]; i++)
        poisoned[i].nan_dead_taps = true;
    run_draws_both_isas(poisoned, sizeof poisoned / sizeof poisoned[0], &rng);
}

/* Dilated Convs whose outer taps read only padding for whole panels of positions (the first
 * or last lines of the plane: runs of B rows whose lane masks are all off in those panels), and
 * kernels the dead-tap cut cannot describe, against the reference at 1 to 3 threads. */
static void test_conv_padding_runs(void **state) {
    (void)state;
    uint64_t rng = 43;
    /* clang-format off */
    conv_draw draws[] = {
        {.rank = 2, .group = 1, .cin_g = 8, .cout_g = 16, .batch = 1, .bias = true,
         .k = {3, 1}, .s = {1, 1}, .d = {8, 1}, .x = {16, 32}, .pads = {8, 0, 8, 0}},
        {.rank = 2, .group = 1, .cin_g = 8, .cout_g = 16, .batch = 2, .bias = false,
         .k = {3, 1}, .s = {1, 1}, .d = {4, 1}, .x = {16, 32}, .pads = {4, 0, 4, 0}},
        {.rank = 2, .group = 1, .cin_g = 4, .cout_g = 24, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {1, 1}, .d = {5, 5}, .x = {12, 40}, .pads = {5, 5, 5, 5}},
        {.rank = 1, .group = 1, .cin_g = 6, .cout_g = 16, .batch = 1, .bias = true,
         .k = {3}, .s = {1}, .d = {64}, .x = {256}, .pads = {64, 64}},
        /* kernels the dead-tap cut leaves whole (its key has 3 axes of 10-bit digits): 4 axes,
         * and an axis of 1030 taps after one whose outer taps are dead (each output still reads
         * X through at most 8 of the 1030) */
        {.rank = 4, .group = 1, .cin_g = 3, .cout_g = 10, .batch = 1, .bias = true,
         .k = {2, 3, 2, 3}, .s = {1, 1, 1, 1}, .d = {1, 1, 1, 2}, .x = {3, 4, 3, 20},
         .pads = {0, 1, 1, 2, 1, 1, 0, 2}},
        {.rank = 2, .group = 1, .cin_g = 3, .cout_g = 9, .batch = 1, .bias = true,
         .k = {3, 1030}, .s = {1, 1}, .d = {5, 1}, .x = {4, 8}, .pads = {5, 1029, 5, 0}},
        {.rank = 2, .group = 1, .cin_g = 3, .cout_g = 9, .batch = 1, .bias = false,
         .k = {1030, 3}, .s = {1, 1}, .d = {1, 5}, .x = {8, 4}, .pads = {1029, 5, 0, 5}},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof draws / sizeof draws[0]; i++)
        run_conv_at_thread_counts(&draws[i], 3, &rng);
}

static void test_conv_large_and_depthwise(void **state) {
    (void)state;
    uint64_t rng = 22;
    /* Many column blocks, several threads. */
    conv_draw big = {.rank = 2,
                     .group = 1,
                     .cin_g = 7,
                     .cout_g = 9,
                     .batch = 2,
                     .mode = 0,
                     .bias = true,
                     .k = {3, 2},
                     .s = {1, 2},
                     .d = {2, 1},
                     .x = {45, 61},
                     .pads = {2, 1, 1, 0}};
    run_conv_at_thread_counts(&big, 3, &rng);
    /* Few columns and many channels (over 2 MFLOP, so threads are used): the output channels
     * are split across threads, in chunks that are not all multiples of the GEMM's row tile.
     * Stride 1 and 2 read the padded input's phase planes in place (wide columns), grouped
     * too; a 5x5 kernel on a 3x3 output (too many dropped wide columns) shares one im2col; a
     * direct 1x1 Conv reads X. */
    /* clang-format off */
    conv_draw few_columns[] = {
        {.rank = 2, .group = 1, .cin_g = 64, .cout_g = 50, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {2, 2}, .d = {1, 1}, .x = {12, 13}, .pads = {1, 1, 1, 1}},
        {.rank = 2, .group = 1, .cin_g = 128, .cout_g = 64, .batch = 1, .bias = false,
         .k = {5, 5}, .s = {1, 1}, .d = {1, 1}, .x = {3, 3}, .pads = {2, 2, 2, 2}},
        {.rank = 2, .group = 1, .cin_g = 64, .cout_g = 50, .batch = 1, .bias = true,
         .k = {3, 3}, .s = {1, 1}, .d = {1, 1}, .x = {6, 7}, .pads = {1, 1, 1, 1}},
        {.rank = 2, .group = 2, .cin_g = 48, .cout_g = 30, .batch = 2, .bias = false,
         .k = {3, 2}, .s = {1, 1}, .d = {1, 2}, .x = {6, 7}, .pads = {1, 0, 2, 1}},
        {.rank = 2, .group = 1, .cin_g = 256, .cout_g = 100, .batch = 1, .bias = true,
         .k = {1, 1}, .s = {1, 1}, .d = {1, 1}, .x = {8, 8}, .pads = {0, 0, 0, 0}},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof few_columns / sizeof few_columns[0]; i++) {
        run_conv_at_thread_counts(&few_columns[i], 3, &rng);
    }
    /* Depthwise with channel multiplier 2, SAME_UPPER. */
    conv_draw dw = {.rank = 2,
                    .group = 6,
                    .cin_g = 1,
                    .cout_g = 2,
                    .batch = 1,
                    .mode = 2,
                    .bias = true,
                    .k = {3, 3},
                    .s = {2, 1},
                    .d = {1, 1},
                    .x = {11, 8},
                    .threads = 2};
    assert_true(run_random_conv(&dw, &rng));
    /* 1x1 stride 1: the direct GEMM path. */
    conv_draw pw = {.rank = 2,
                    .group = 2,
                    .cin_g = 4,
                    .cout_g = 3,
                    .batch = 2,
                    .mode = 4,
                    .bias = true,
                    .k = {1, 1},
                    .s = {1, 1},
                    .d = {1, 1},
                    .x = {17, 19},
                    .threads = 2};
    assert_true(run_random_conv(&pw, &rng));
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void **state) {
    (void)state;
    kernel_harness h;
    int64_t x_dims[4] = {1, 2, 3, 3}, w_dims[4] = {2, 3, 2, 2}, bad_b[1] = {5};
    /* double input: unsupported, naming the dtype */
    kh_init(&h, "ConvTranspose", 1);
    kh_input_typed(&h, TCONV_DTYPE_DOUBLE, 4, x_dims, NULL);
    kh_input(&h, 4, w_dims, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(h.err.message, "double"));
    kh_free(&h);
    /* bias length != C_out */
    kh_init(&h, "ConvTranspose", 1);
    kh_input(&h, 4, x_dims, NULL);
    kh_input(&h, 4, w_dims, NULL);
    kh_input(&h, 1, bad_b, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "B"));
    kh_free(&h);
    /* output_padding >= max(stride, dilation) */
    kh_init(&h, "ConvTranspose", 1);
    kh_input(&h, 4, x_dims, NULL);
    kh_input(&h, 4, w_dims, NULL);
    kh_attr_ints(&h, "output_padding", 2, (const int64_t[]){1, 0});
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "output_padding"));
    kh_free(&h);
    /* W rank differs from X */
    kh_init(&h, "Conv", 1);
    kh_input(&h, 4, x_dims, NULL);
    kh_input(&h, 3, w_dims, NULL);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    /* Conv channels do not match group */
    kh_init(&h, "Conv", 1);
    kh_input(&h, 4, x_dims, NULL);
    kh_input(&h, 4, (const int64_t[]){4, 2, 2, 2}, NULL);
    kh_attr_int(&h, "group", 2);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    /* an attribute the kernel does not know */
    kh_init(&h, "Conv", 1);
    kh_input(&h, 4, x_dims, NULL);
    kh_input(&h, 4, (const int64_t[]){4, 2, 2, 2}, NULL);
    kh_attr_int(&h, "bogus", 1);
    assert_int_equal(kh_run(&h), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(h.err.message, "bogus"));
    kh_free(&h);
    /* pads that overflow int64 */
    kh_init(&h, "Conv", 1);
    kh_input(&h, 4, x_dims, NULL);
    kh_input(&h, 4, (const int64_t[]){4, 2, 2, 2}, NULL);
    kh_attr_ints(&h, "pads", 4, (const int64_t[]){INT64_MAX, 0, INT64_MAX, 0});
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    assert_non_null(strstr(h.err.message, "overflow"));
    kh_free(&h);
}

/* ---------------------------------------------------------------- ONNX conformance */

/* Runs every ONNX node test whose name starts with prefix, with the tolerances of ONNX's own
 * backend test runner (rtol 1e-3, atol 1e-7: some expected values are written rounded). */
static void run_node_tests(const char *prefix) {
    size_t count;
    assert_int_equal(tc_test_run_node_tests(prefix, 1e-3, 1e-7, &count), 0);
    assert_true(count > 0);
}

static void test_onnx_conformance_conv_transpose(void **state) {
    (void)state;
    run_node_tests("test_convtranspose");
}

static void test_onnx_conformance_conv(void **state) {
    (void)state;
    run_node_tests("test_basic_conv");
    run_node_tests("test_conv_with");
}

/* The masked GEMM's tap masks (tc_lattice_masked_taps) against their definition: bit o of tap
 * t's mask is set exactly where output position o reads inside X on every axis (o*s + t*d - pad
 * in [0, fine)), the bits past the last position are clear, and a word is `full` exactly where
 * every tap's word is all ones. Random lattices of rank 1-3 with strides, dilations and pads,
 * both plane layouts; 2-D grids whose taps cover whole lines take the one-run path. */
static void test_lattice_masked_taps_reference(void **state) {
    (void)state;
    uint64_t rng = 97;
    for (int trial = 0; trial < 3000; trial++) {
        tc_lattice lat;
        memset(&lat, 0, sizeof lat);
        lat.rank = (int)kh_rand_range(&rng, 1, 3);
        for (int i = 0; i < lat.rank; i++) {
            lat.coarse[i] = kh_rand_range(&rng, 1, lat.rank == 1 ? 100 : 20);
            lat.kernel[i] = kh_rand_range(&rng, 1, 4);
            lat.strides[i] = kh_rand_range(&rng, 1, 3);
            lat.dilations[i] = kh_rand_range(&rng, 1, 2);
            lat.pad_begin[i] = kh_rand_range(&rng, 0, 3);
            int64_t reach = (lat.coarse[i] - 1) * lat.strides[i] +
                            (lat.kernel[i] - 1) * lat.dilations[i] + 1 - lat.pad_begin[i];
            lat.fine[i] = tc_max_i64(1, reach - kh_rand_range(&rng, 0, 3));
        }
        assert_true(tc_lattice_finish(&lat));
        int64_t words = (lat.coarse_size + 15) / 16, taps = lat.kernel_size;
        int64_t *shifts = malloc((size_t)taps * sizeof *shifts);
        uint16_t *masks = malloc((size_t)(taps * words) * sizeof *masks);
        uint8_t *full = malloc((size_t)words);
        assert_true(shifts && masks && full);
        tc_lattice_masked_taps(&lat, trial % 2 == 1, shifts, masks, full);
        int64_t tap[TC_MAX_SPATIAL] = {0};
        for (int64_t t = 0; t < taps; t++, tc_lattice_next_tap(&lat, tap)) {
            for (int64_t q = 0; q < words * 16; q++) {
                bool inside = q < lat.coarse_size;
                for (int64_t i = lat.rank - 1, rest = q; i >= 0 && inside; i--) {
                    int64_t o = rest % lat.coarse[i], at;
                    rest /= lat.coarse[i];
                    at = o * lat.strides[i] + tap[i] * lat.dilations[i] - lat.pad_begin[i];
                    inside = at >= 0 && at < lat.fine[i];
                }
                bool bit = (masks[t * words + q / 16] >> (q % 16)) & 1u;
                if (bit != inside) {
                    print_error("trial %d tap %lld position %lld: mask %d, reads inside X %d\n",
                                trial, (long long)t, (long long)q, bit, inside);
                    fail();
                }
            }
        }
        for (int64_t w = 0; w < words; w++) {
            bool all = true;
            for (int64_t t = 0; t < taps; t++)
                all = all && masks[t * words + w] == 0xFFFF;
            assert_int_equal(full[w], all);
        }
        free(shifts);
        free(masks);
        free(full);
    }
}

/* ---------------------------------------------------------------- tables kept by a session */

/* The tables a session keeps with a Conv and a ConvTranspose for their shapes (conv_common.c:
 * tc_conv_lattice_table) belong to the run's shapes: X's spatial dims (symbolic in the model)
 * change from run to run and back, and every run's Y must equal the references. A 3x3 Conv with
 * pads 1 (the masked path above 128 positions, the narrow path at 24) and a k2 s2 ConvTranspose
 * (the phase form), 16 -> 16 channels, both on X, at 2 threads. With the row-form GEMM (AVX2,
 * AVX-512) both take tables: made for each new shape, found kept when a shape repeats. */
static void test_session_tables_follow_shapes(void **state) {
    (void)state;
    tconv_model *m = rtt_model(17);
    tconv_graph *g = m->graph;
    tc_error err;
    enum { C = 16 };
    static float w1[C * C * 9], w2[C * C * 4], b1[C];
    uint64_t rng = 5;
    kh_fill_random(w1, C * C * 9, &rng);
    kh_fill_random(w2, C * C * 4, &rng);
    kh_fill_random(b1, C, &rng);
    int64_t x_dims[4] = {1, C, -1, -1}, w1_dims[4] = {C, C, 3, 3}, w2_dims[4] = {C, C, 2, 2};
    int64_t b_dims[1] = {C};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, x_dims);
    tconv_node *conv = rtt_node(
        g, "Conv", "conv",
        (tconv_value *[]){x, rtt_init(g, "w1", TCONV_DTYPE_FLOAT, 4, w1_dims, w1, sizeof w1),
                          rtt_init(g, "b1", TCONV_DTYPE_FLOAT, 1, b_dims, b1, sizeof b1)},
        3, (const char *[]){"y1"}, 1);
    assert_int_equal(tc_node_set_attr_ints(conv, "pads", (int64_t[]){1, 1, 1, 1}, 4, &err),
                     TCONV_OK);
    tconv_node *ct = rtt_node(
        g, "ConvTranspose", "ct",
        (tconv_value *[]){x, rtt_init(g, "w2", TCONV_DTYPE_FLOAT, 4, w2_dims, w2, sizeof w2)}, 2,
        (const char *[]){"y2"}, 1);
    assert_int_equal(tc_node_set_attr_ints(ct, "strides", (int64_t[]){2, 2}, 2, &err), TCONV_OK);
    rtt_output(g, "y1");
    rtt_output(g, "y2");
    tc_session_options options;
    tc_session_options_init(&options);
    options.n_threads = 2;
    tc_session *s = NULL;
    tconv_status st = tc_session_create(m, &options, &s, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    /* 4 x 6 and 6 x 4: 24 positions, the Conv's narrow path (its tap offsets kept instead);
     * 240 x 248: the Conv's masks above TC_CONV_TABLE_KEEP_MAX_BYTES, made in scratch (the
     * ConvTranspose's, a tap a phase, still kept) */
    static const int64_t shapes[9][2] = {{12, 14}, {9, 21}, {12, 14}, {12, 14},  {14, 12},
                                         {4, 6},   {4, 6},  {6, 4},   {240, 248}};
    /* tables made (kept) by each run, with the row form */
    static const int made[9] = {2, 2, 2, 0, 2, 2, 0, 2, 1};
    for (int run = 0; run < 9; run++) {
        int64_t h = shapes[run][0], w = shapes[run][1];
        tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 4, (int64_t[]){1, C, h, w}, NULL);
        kh_fill_random(in.data, in.n_elements, &rng);
        tc_rt_tensor out[2];
        memset(out, 0, sizeof out);
        long long before = atomic_load(&tc_test_shape_tables_made);
        st = tc_session_run(s, &in, 1, out, &err);
        if (st != TCONV_OK)
            print_error("%s\n", err.message);
        assert_int_equal(st, TCONV_OK);
        long long tables = atomic_load(&tc_test_shape_tables_made) - before;
        printf("run %d, X %lld x %lld: %lld shape tables made\n", run, (long long)h, (long long)w,
               tables);
        if (tc_gemm_has_row_form())
            assert_int_equal(tables, made[run]);
        /* the Conv against the direct reference */
        conv_draw c = {.rank = 2, .group = 1, .cin_g = C, .cout_g = C, .batch = 1, .bias = true};
        int64_t out_dims[2] = {h, w}, pb[2] = {1, 1};
        c.k[0] = c.k[1] = 3;
        c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
        c.x[0] = h;
        c.x[1] = w;
        c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 1;
        float *want = malloc((size_t)(C * 4 * h * w) * sizeof(float));
        assert_non_null(want);
        rtt_assert_dims(&out[0], 4, (int64_t[]){1, C, h, w});
        conv_reference(&c, out_dims, pb, in.data, w1, b1, want);
        kh_expect_close(out[0].data, want, out[0].n_elements, 1e-4, 1e-5);
        /* the ConvTranspose against the scatter reference */
        tc_conv_transpose_geometry geo;
        memset(&geo, 0, sizeof geo);
        geo.spatial_rank = 2;
        geo.c_in = geo.c_out = C;
        geo.group = 1;
        geo.in[0] = h;
        geo.in[1] = w;
        for (int i = 0; i < 2; i++) {
            geo.out[i] = 2 * geo.in[i];
            geo.kernel[i] = geo.strides[i] = 2;
            geo.dilations[i] = 1;
        }
        rtt_assert_dims(&out[1], 4, (int64_t[]){1, C, 2 * h, 2 * w});
        conv_transpose_reference(&geo, 1, in.data, w2, NULL, want);
        kh_expect_close(out[1].data, want, out[1].n_elements, 1e-4, 1e-5);
        free(want);
        for (int k = 0; k < 2; k++)
            tc_rt_tensor_release(&out[k]);
        tc_rt_tensor_release(&in);
    }
    tc_session_free(s);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lattice_masked_taps_reference),
        cmocka_unit_test(test_session_tables_follow_shapes),
        cmocka_unit_test(test_conv_transpose_negative_totals),
        cmocka_unit_test(test_conv_transpose_output_padding),
        cmocka_unit_test(test_conv_transpose_grouped_2d_hand),
        cmocka_unit_test(test_conv_same_odd),
        cmocka_unit_test(test_conv_depthwise_hand),
        cmocka_unit_test(test_conv_transpose_random_vs_scatter),
        cmocka_unit_test(test_conv_transpose_large_blocks),
        cmocka_unit_test(test_conv_transpose_fused_activation),
        cmocka_unit_test(test_conv_transpose_phase_form),
        cmocka_unit_test(test_conv_transpose_few_positions_random),
        cmocka_unit_test(test_conv_transpose_few_positions_packed_w),
        cmocka_unit_test(test_conv_transpose_random_subpixel),
        cmocka_unit_test(test_conv_random_vs_direct),
        cmocka_unit_test(test_conv_few_positions_random),
        cmocka_unit_test(test_no_input_channels),
        cmocka_unit_test(test_conv_large_and_depthwise),
        cmocka_unit_test(test_deinterleave_lines_exact),
        cmocka_unit_test(test_conv_stride2_long_lines),
        cmocka_unit_test(test_conv_dead_taps),
        cmocka_unit_test(test_conv_padding_runs),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_onnx_conformance_conv_transpose),
        cmocka_unit_test(test_onnx_conformance_conv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
