/* NonMaxSuppression, RoiAlign and GridSample kernels on the cases ONNX's node tests leave out:
 * the semantics the reference implementation fixes (ties, strict thresholds, zero-area boxes,
 * coordinate modes) on hand-computed values, and hostile values (negative and huge counts, NaN
 * and infinite boxes, rois and grids, rois far outside the image, bad indices), which must give
 * a defined result or a clear error, never a crash, a hang or an out-of-bounds read. */
#include <math.h>

#include "kernel_harness.h"
#include "rt_test_util.h"

/* ---------------------------------------------------------------- NonMaxSuppression */

/* boxes [1, n, 4] (y1, x1, y2, x2), scores [1, 1, n], then the optional scalars (NULL: omitted). */
static void nms_setup(kernel_harness *h, int64_t n, const float *boxes, const float *scores,
                      const int64_t *max_out, const float *iou, const float *score_threshold) {
    kh_init(h, "NonMaxSuppression", 1);
    h->opset = 11;
    int64_t bd[3] = {1, n, 4}, sd[3] = {1, 1, n}, one[1] = {1};
    kh_input(h, 3, bd, boxes);
    kh_input(h, 3, sd, scores);
    if (max_out)
        kh_input_typed(h, TCONV_DTYPE_INT64, 1, one, max_out);
    else
        kh_skip_input(h);
    if (iou)
        kh_input(h, 1, one, iou);
    else
        kh_skip_input(h);
    if (score_threshold)
        kh_input(h, 1, one, score_threshold);
}

/* The selected box indices (column 2), in order. */
static void nms_expect(kernel_harness *h, int64_t n, const int64_t *boxes) {
    kh_run_ok(h);
    int64_t dims[2] = {n, 3};
    kh_expect_shape(&h->outputs[0], 2, dims);
    const int64_t *y = h->outputs[0].data;
    for (int64_t i = 0; i < n; i++) {
        assert_int_equal(y[i * 3], 0);
        assert_int_equal(y[i * 3 + 1], 0);
        assert_int_equal(y[i * 3 + 2], boxes[i]);
    }
}

static const float nms_boxes[4 * 4] = {
    0, 0,    1, 1,    /* 0 */
    0, 0.1f, 1, 1.1f, /* 1: IoU 0.818 with box 0 */
    0, 5,    1, 6,    /* 2: apart */
    1, 1,    0, 0,    /* 3: box 0 with its corners swapped */
};

static void test_nms_counts(void **state) {
    (void)state;
    kernel_harness h;
    const float scores[4] = {0.9f, 0.8f, 0.7f, 0.6f}, iou = 0.5f;
    const int64_t negative = -5, huge = INT64_MAX, two = 2;
    /* a negative count keeps nothing; INT64_MAX (what exporters write) keeps every survivor */
    nms_setup(&h, 4, nms_boxes, scores, &negative, &iou, NULL);
    nms_expect(&h, 0, NULL);
    kh_free(&h);
    nms_setup(&h, 4, nms_boxes, scores, &huge, &iou, NULL);
    nms_expect(&h, 2, (const int64_t[]){0, 2});
    kh_free(&h);
    nms_setup(&h, 4, nms_boxes, scores, &two, &iou, NULL);
    nms_expect(&h, 2, (const int64_t[]){0, 2});
    kh_free(&h);
    /* max_output_boxes_per_class omitted: 0, nothing selected (ONNX's default) */
    nms_setup(&h, 4, nms_boxes, scores, NULL, &iou, NULL);
    nms_expect(&h, 0, NULL);
    kh_free(&h);
    /* iou threshold omitted: 0, so any overlap suppresses (box 3 is box 0 swapped) */
    nms_setup(&h, 4, nms_boxes, scores, &huge, NULL, NULL);
    nms_expect(&h, 2, (const int64_t[]){0, 2});
    kh_free(&h);
}

static void test_nms_thresholds_and_ties(void **state) {
    (void)state;
    kernel_harness h;
    const int64_t huge = INT64_MAX;
    const float iou = 0.5f, threshold = 0.7f;
    /* score_threshold is strict: box 2's 0.7 is dropped */
    const float scores[4] = {0.9f, 0.8f, 0.7f, 0.6f};
    nms_setup(&h, 4, nms_boxes, scores, &huge, &iou, &threshold);
    nms_expect(&h, 1, (const int64_t[]){0});
    kh_free(&h);
    /* equal scores: the lower index first, so box 3 (swapped corners) loses to box 0... */
    const float tied[4] = {0.5f, 0.1f, 0.2f, 0.5f};
    nms_setup(&h, 4, nms_boxes, tied, &huge, &iou, NULL);
    nms_expect(&h, 2, (const int64_t[]){0, 2});
    kh_free(&h);
    /* ...and IoU exactly at the threshold does not suppress (strictly greater): boxes 0 and 1
     * overlap 9/11 = 0.8181..; at that threshold (as float) both stay */
    const float at = 0.9f / 1.1f, two_scores[2] = {0.9f, 0.8f};
    nms_setup(&h, 2, nms_boxes, two_scores, &huge, &at, NULL);
    kh_run_ok(&h);
    assert_int_equal(h.outputs[0].dims[0], 2);
    kh_free(&h);
}

static void test_nms_hostile_values(void **state) {
    (void)state;
    kernel_harness h;
    const int64_t huge = INT64_MAX;
    const float iou = 0.0f;
    /* zero-area boxes never suppress nor are suppressed (IoU is not computed), even identical */
    const float flat[3 * 4] = {0, 0, 0, 1, 0, 0, 0, 1, 2, 2, 2, 2};
    const float scores3[3] = {0.3f, 0.2f, 0.1f};
    nms_setup(&h, 3, flat, scores3, &huge, &iou, NULL);
    nms_expect(&h, 3, (const int64_t[]){0, 1, 2});
    kh_free(&h);
    /* NaN scores are never selected; a box with a NaN corner is kept on its score and, being
     * degenerate, suppresses nothing; an infinite box's IoU with a finite one is 0 */
    const float odd[4 * 4] = {0, 0, 1, 1, NAN, 0, 1, 1, 0, 0, INFINITY, INFINITY, 0, 0, 1, 1};
    const float scores4[4] = {NAN, 0.9f, 0.8f, 0.7f};
    nms_setup(&h, 4, odd, scores4, &huge, &iou, NULL);
    nms_expect(&h, 3, (const int64_t[]){1, 2, 3});
    kh_free(&h);
    /* shapes that do not agree, a center_point_box other than 0/1, a max count not int64 */
    const float s2[2] = {1, 1};
    nms_setup(&h, 2, nms_boxes, s2, &huge, &iou, NULL);
    h.inputs[1].dims[2] = 1;
    h.inputs[1].n_elements = 1;
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    nms_setup(&h, 2, nms_boxes, s2, &huge, &iou, NULL);
    kh_attr_int(&h, "center_point_box", 2);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    /* no boxes at all */
    nms_setup(&h, 0, NULL, NULL, &huge, &iou, NULL);
    nms_expect(&h, 0, NULL);
    kh_free(&h);
}

/* A NonMaxSuppression node over n disjoint boxes (every box survives: n^2/2 IoU comparisons),
 * its inputs initializers, in a session with the given work limit: the status of creating and
 * running it, and the rows selected. */
static tconv_status nms_session(int64_t n, uint64_t max_work, int64_t *rows, tc_error *err) {
    tconv_model *m = rtt_model(11);
    tconv_graph *g = m->graph;
    float *boxes = malloc((size_t)n * 4 * sizeof(float)),
          *scores = malloc((size_t)n * sizeof(float));
    assert_non_null(boxes);
    assert_non_null(scores);
    for (int64_t i = 0; i < n; i++) {
        float b[4] = {0, (float)(2 * i), 1, (float)(2 * i + 1)};
        memcpy(boxes + i * 4, b, sizeof b);
        scores[i] = 1.0f - (float)i / (float)n;
    }
    int64_t bd[3] = {1, n, 4}, sd[3] = {1, 1, n}, one[1] = {1}, huge = INT64_MAX;
    float iou = 0.5f;
    tconv_value *in[4] = {
        rtt_init(g, "boxes", TCONV_DTYPE_FLOAT, 3, bd, boxes, (size_t)n * 4 * sizeof(float)),
        rtt_init(g, "scores", TCONV_DTYPE_FLOAT, 3, sd, scores, (size_t)n * sizeof(float)),
        rtt_init_i64(g, "max", 1, &huge),
        rtt_init(g, "iou", TCONV_DTYPE_FLOAT, 1, one, &iou, sizeof iou)};
    free(boxes);
    free(scores);
    const char *outs[] = {"selected"};
    rtt_node(g, "NonMaxSuppression", "nms", in, 4, outs, 1);
    rtt_output(g, "selected");
    tc_session_options o;
    tc_session_options_init(&o);
    o.n_threads = 1;
    o.max_work = max_work;
    tc_session *s = NULL;
    tconv_status st = tc_session_create(m, &o, &s, err);
    tc_rt_tensor out[1];
    memset(out, 0, sizeof out);
    if (st == TCONV_OK)
        st = tc_session_run(s, NULL, 0, out, err);
    *rows = st == TCONV_OK ? out[0].dims[0] : -1;
    tc_rt_tensor_release(&out[0]);
    tc_session_free(s);
    tconv_model_free(m);
    return st;
}

/* The IoU comparisons depend on the data: they are charged to the work limit as they are made,
 * so 8,000 surviving boxes (3.2e7 comparisons) are refused under a limit of 1e6 rather than run,
 * and run under the default. */
static void test_nms_work_limit(void **state) {
    (void)state;
    tc_error err;
    int64_t rows;
    assert_int_equal(nms_session(8000, 1000000, &rows, &err), TCONV_ERR_LIMIT);
    rtt_assert_contains(err.message, "work limit");
    assert_int_equal(nms_session(8000, 0, &rows, &err), TCONV_OK);
    assert_int_equal(rows, 8000);
}

/* ---------------------------------------------------------------- RoiAlign */

static const float roi_x[4] = {1, 2, 3, 4}; /* [1, 1, 2, 2] */

static void roi_setup(kernel_harness *h, int64_t opset, const float *roi, int64_t batch) {
    kh_init(h, "RoiAlign", 1);
    h->opset = opset;
    int64_t xd[4] = {1, 1, 2, 2}, rd[2] = {1, 4}, bd[1] = {1};
    kh_input(h, 4, xd, roi_x);
    kh_input(h, 2, rd, roi);
    kh_input_typed(h, TCONV_DTYPE_INT64, 1, bd, &batch);
}

static float roi_run_one(kernel_harness *h) {
    kh_run_ok(h);
    int64_t dims[4] = {1, 1, 1, 1};
    kh_expect_shape(&h->outputs[0], 4, dims);
    return ((const float *)h->outputs[0].data)[0];
}

static void test_roi_align_values(void **state) {
    (void)state;
    kernel_harness h;
    const float roi[4] = {0, 0, 1, 1};
    /* RoiAlign-10 (no offset): one sample at (0.5, 0.5) -> the mean of the four pixels */
    roi_setup(&h, 10, roi, 0);
    kh_attr_int(&h, "sampling_ratio", 1);
    assert_float_equal(roi_run_one(&h), 2.5f, 1e-6f);
    kh_free(&h);
    /* RoiAlign-16's default half_pixel: the roi moves by -0.5, the sample lands on pixel (0, 0) */
    roi_setup(&h, 16, roi, 0);
    kh_attr_int(&h, "sampling_ratio", 1);
    assert_float_equal(roi_run_one(&h), 1.0f, 1e-6f);
    kh_free(&h);
    /* max mode: the largest weighted corner (ONNX's reference), here 0.25 * 4 */
    roi_setup(&h, 16, roi, 0);
    kh_attr_int(&h, "sampling_ratio", 1);
    kh_attr_string(&h, "mode", "max");
    kh_attr_string(&h, "coordinate_transformation_mode", "output_half_pixel");
    assert_float_equal(roi_run_one(&h), 1.0f, 1e-6f);
    kh_free(&h);
}

static void test_roi_align_hostile(void **state) {
    (void)state;
    kernel_harness h;
    /* far outside the image: 0, whatever the adaptive grid */
    const float far[4] = {1e6f, 1e6f, 2e6f, 2e6f};
    roi_setup(&h, 16, far, 0);
    assert_float_equal(roi_run_one(&h), 0.0f, 0);
    kh_free(&h);
    /* a roi of 1e30 pixels: its grid is ~1e30 samples a bin, of which only those inside the
     * image are visited; the mean is ~0 and computed at once */
    const float huge[4] = {-1e30f, -1e30f, 1e30f, 1e30f};
    roi_setup(&h, 16, huge, 0);
    float v = roi_run_one(&h);
    assert_true(isfinite(v) && fabsf(v) < 1e-6f);
    kh_free(&h);
    /* non-finite coordinates: 0 */
    const float nan_roi[4] = {NAN, 0, 1, 1}, inf_roi[4] = {0, 0, INFINITY, 1};
    roi_setup(&h, 16, nan_roi, 0);
    assert_float_equal(roi_run_one(&h), 0.0f, 0);
    kh_free(&h);
    roi_setup(&h, 16, inf_roi, 0);
    assert_float_equal(roi_run_one(&h), 0.0f, 0);
    kh_free(&h);
    /* a reversed half_pixel roi has no samples: 0 */
    const float reversed[4] = {2, 2, 0, 0};
    roi_setup(&h, 16, reversed, 0);
    assert_float_equal(roi_run_one(&h), 0.0f, 0);
    kh_free(&h);
    /* batch index outside X's batch, negative or past it */
    const float roi[4] = {0, 0, 1, 1};
    roi_setup(&h, 16, roi, 1);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    roi_setup(&h, 16, roi, -1);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    /* attributes out of range */
    roi_setup(&h, 16, roi, 0);
    kh_attr_int(&h, "output_height", 0);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    roi_setup(&h, 16, roi, 0);
    kh_attr_int(&h, "sampling_ratio", -3);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    roi_setup(&h, 16, roi, 0);
    kh_attr_string(&h, "mode", "median");
    assert_int_equal(kh_run(&h), TCONV_ERR_UNSUPPORTED);
    kh_free(&h);
    /* a sampling_ratio no memory holds: refused, not attempted */
    roi_setup(&h, 16, roi, 0);
    kh_attr_int(&h, "sampling_ratio", INT64_MAX / 2);
    assert_int_not_equal(kh_run(&h), TCONV_OK);
    kh_free(&h);
}

/* ---------------------------------------------------------------- GridSample */

static const float gs_x[2] = {1, 3}; /* [1, 1, 1, 2] */

static float gs_run_point(int64_t opset, const char *mode, const char *padding, int64_t align,
                          float gx, float gy) {
    kernel_harness h;
    kh_init(&h, "GridSample", 1);
    h.opset = opset;
    int64_t xd[4] = {1, 1, 1, 2}, gd[4] = {1, 1, 1, 2};
    float grid[2] = {gx, gy};
    kh_input(&h, 4, xd, gs_x);
    kh_input(&h, 4, gd, grid);
    if (mode)
        kh_attr_string(&h, "mode", mode);
    if (padding)
        kh_attr_string(&h, "padding_mode", padding);
    kh_attr_int(&h, "align_corners", align);
    kh_run_ok(&h);
    int64_t dims[4] = {1, 1, 1, 1};
    kh_expect_shape(&h.outputs[0], 4, dims);
    float v = ((const float *)h.outputs[0].data)[0];
    kh_free(&h);
    return v;
}

static void test_grid_sample_values(void **state) {
    (void)state;
    /* x = 0 is the middle of the two pixels: 2; y = 0 the middle of the one row */
    assert_float_equal(gs_run_point(16, "bilinear", NULL, 0, 0, 0), 2.0f, 1e-6f);
    assert_float_equal(gs_run_point(20, "linear", NULL, 0, 0, 0), 2.0f, 1e-6f);
    /* align_corners: -1 and 1 are the pixel centres */
    assert_float_equal(gs_run_point(20, "linear", NULL, 1, 1, 0), 3.0f, 1e-6f);
    /* nearest rounds half to even: x = 0.5 -> pixel 0 */
    assert_float_equal(gs_run_point(20, "nearest", NULL, 0, 0, 0), 1.0f, 1e-6f);
    /* zeros padding past the edge, border clamps */
    assert_float_equal(gs_run_point(20, "linear", "zeros", 0, 3, 0), 0.0f, 0);
    assert_float_equal(gs_run_point(20, "linear", "border", 0, 3, 0), 3.0f, 1e-6f);
    /* cubic on two pixels with border padding: Keys weights sum to 1 at the middle */
    assert_float_equal(gs_run_point(20, "cubic", "border", 0, 0, 0), 2.0f, 1e-6f);
}

static void test_grid_sample_hostile(void **state) {
    (void)state;
    const char *paddings[3] = {"zeros", "border", "reflection"};
    const char *modes[3] = {"nearest", "linear", "cubic"};
    for (int p = 0; p < 3; p++)
        for (int m = 0; m < 3; m++)
            for (int a = 0; a < 2; a++) {
                /* NaN anywhere in a point: 0 */
                assert_float_equal(gs_run_point(20, modes[m], paddings[p], a, NAN, 0), 0.0f, 0);
                assert_float_equal(gs_run_point(20, modes[m], paddings[p], a, 0, NAN), 0.0f, 0);
                /* infinite and huge: a defined, finite value (never an index outside X) */
                float values[4] = {INFINITY, -INFINITY, 1e30f, -3e38f};
                for (int k = 0; k < 4; k++) {
                    float v = gs_run_point(20, modes[m], paddings[p], a, values[k], values[k]);
                    assert_true(isfinite(v));
                    if (p == 1 && isfinite(values[k])) /* border: the edge pixel */
                        assert_float_equal(v, values[k] > 0 ? 3.0f : 1.0f, 1e-5f);
                }
            }
    /* the mode names of each version only */
    kernel_harness h;
    int64_t xd[4] = {1, 1, 1, 2}, gd[4] = {1, 1, 1, 2};
    float grid[2] = {0, 0};
    const struct {
        int64_t opset;
        const char *mode;
    } wrong[2] = {{16, "linear"}, {20, "bicubic"}};
    for (int i = 0; i < 2; i++) {
        kh_init(&h, "GridSample", 1);
        h.opset = wrong[i].opset;
        kh_input(&h, 4, xd, gs_x);
        kh_input(&h, 4, gd, grid);
        kh_attr_string(&h, "mode", wrong[i].mode);
        assert_int_equal(kh_run(&h), TCONV_ERR_UNSUPPORTED);
        kh_free(&h);
    }
    /* grid's last dim must be X's spatial rank; GridSample-16 is 4-D only */
    kh_init(&h, "GridSample", 1);
    h.opset = 20;
    int64_t bad_gd[4] = {1, 1, 2, 1};
    kh_input(&h, 4, xd, gs_x);
    kh_input(&h, 4, bad_gd, grid);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
    kh_init(&h, "GridSample", 1);
    h.opset = 16;
    int64_t x3[3] = {1, 1, 2}, g3[3] = {1, 1, 1};
    kh_input(&h, 3, x3, gs_x);
    kh_input(&h, 3, g3, grid);
    assert_int_equal(kh_run(&h), TCONV_ERR_INVALID);
    kh_free(&h);
}

/* GridSample-20's N-D form: a 3-D constant volume sampled cubically with border padding stays
 * constant (each axis' weights sum to 1), a 1-D signal linearly. */
static void test_grid_sample_nd(void **state) {
    (void)state;
    kernel_harness h;
    kh_init(&h, "GridSample", 1);
    h.opset = 20;
    float x[2 * 3 * 4];
    for (int i = 0; i < 24; i++)
        x[i] = 5;
    int64_t xd[5] = {1, 1, 2, 3, 4}, gd[5] = {1, 1, 1, 2, 3};
    float grid[6] = {-0.9f, 0.3f, 1.7f, 0.2f, -1.4f, 0.0f};
    kh_input(&h, 5, xd, x);
    kh_input(&h, 5, gd, grid);
    kh_attr_string(&h, "mode", "cubic");
    kh_attr_string(&h, "padding_mode", "border");
    kh_run_ok(&h);
    int64_t yd[5] = {1, 1, 1, 1, 2};
    kh_expect_shape(&h.outputs[0], 5, yd);
    const float want[2] = {5, 5};
    kh_expect_close(h.outputs[0].data, want, 2, 1e-6, 1e-6);
    kh_free(&h);
    kh_init(&h, "GridSample", 1);
    h.opset = 20;
    int64_t x1d[3] = {1, 1, 2}, g1d[3] = {1, 1, 1};
    float g1 = 0.5f; /* ((0.5 + 1) * 2 - 1) / 2 = 1: the second pixel */
    kh_input(&h, 3, x1d, gs_x);
    kh_input(&h, 3, g1d, &g1);
    kh_run_ok(&h);
    assert_float_equal(((const float *)h.outputs[0].data)[0], 3.0f, 1e-6f);
    kh_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nms_counts),         cmocka_unit_test(test_nms_thresholds_and_ties),
        cmocka_unit_test(test_nms_hostile_values), cmocka_unit_test(test_nms_work_limit),
        cmocka_unit_test(test_roi_align_values),   cmocka_unit_test(test_roi_align_hostile),
        cmocka_unit_test(test_grid_sample_values), cmocka_unit_test(test_grid_sample_hostile),
        cmocka_unit_test(test_grid_sample_nd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
