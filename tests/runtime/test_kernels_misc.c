/* Kernel behaviour the ONNX conformance data does not reach: older opsets' attribute forms
 * (Upsample-7, Resize-10, Softmax-11, BatchNormalization-7 spatial=0, Clip-6, Squeeze-11),
 * Cast conversions, Constant's scalar attributes, Gather with int32 negative indices, Shape
 * start/end, Reshape allowzero, and attributes or modes a kernel must refuse. */
#include "rt_test_util.h"

#include <math.h>
#include <stdio.h>

/* One node fed by graph inputs in0..inN (data given) and initializers (added by the caller). */
typedef struct case1 {
    tconv_model *m;
    tconv_node *node;
    tc_rt_tensor data[6];
    size_t n_data;
} case1;

static void case_init(case1 *c, int64_t opset, const char *op) {
    memset(c, 0, sizeof *c);
    c->m = rtt_model(opset);
    tc_error err;
    assert_int_equal(tc_node_create(c->m->graph, op, "", "k", &c->node, &err), TCONV_OK);
}

/* Appends a fed input with data. */
static void case_input(case1 *c, tconv_dtype dtype, int rank, const int64_t *dims,
                       const void *data) {
    char name[16];
    snprintf(name, sizeof name, "in%zu", c->n_data);
    tconv_value *v = rtt_input(c->m->graph, name, dtype, rank, dims);
    tc_error err;
    assert_int_equal(tc_node_add_input(c->node, v, &err), TCONV_OK);
    c->data[c->n_data++] = rtt_tensor(dtype, rank, dims, data);
}

static void case_const(case1 *c, const char *name, tconv_dtype dtype, int rank, const int64_t *dims,
                       const void *data, size_t nbytes) {
    tconv_value *v = rtt_init(c->m->graph, name, dtype, rank, dims, data, nbytes);
    tc_error err;
    assert_int_equal(tc_node_add_input(c->node, v, &err), TCONV_OK);
}

static void case_absent(case1 *c) {
    tc_error err;
    assert_int_equal(tc_node_add_input(c->node, NULL, &err), TCONV_OK);
}

static tconv_status case_run(case1 *c, tc_rt_tensor *out, tc_error *err) {
    tconv_graph *g = c->m->graph;
    assert_int_equal(tc_node_add_output(c->node, rtt_value(g, "out"), err), TCONV_OK);
    tc_graph_append_node(g, c->node);
    rtt_output(g, "out");
    tconv_status st = rtt_run(c->m, c->data, c->n_data, out, err);
    for (size_t i = 0; i < c->n_data; i++)
        tc_rt_tensor_release(&c->data[i]);
    tconv_model_free(c->m);
    return st;
}

static void assert_near(const tc_rt_tensor *t, const float *e, size_t n, float tol) {
    assert_int_equal(t->n_elements, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        float got = ((const float *)t->data)[i];
        if (fabsf(got - e[i]) > tol) {
            print_error("element %zu: got %.9g, expected %.9g\n", i, (double)got, (double)e[i]);
            fail();
        }
    }
}

/* ---------------------------------------------------------------- Resize family */

static void test_upsample_7_nearest_and_linear(void **state) {
    (void)state;
    int64_t d[] = {1, 1, 2, 2};
    float x[] = {1, 2, 3, 4};
    float scales[] = {1, 1, 2, 3};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 7, "Upsample");
    case_input(&c, TCONV_DTYPE_FLOAT, 4, d, x);
    tc_attr a = {.name = "scales", .type = TCONV_ATTR_FLOATS, .floats = scales, .n = 4};
    assert_int_equal(tc_node_add_attr(c.node, &a, &err), TCONV_OK);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    int64_t yd[] = {1, 1, 4, 6};
    rtt_assert_dims(&y, 4, yd);
    float e[] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
    rtt_assert_floats(&y, e, 24);
    tc_rt_tensor_release(&y);

    /* linear, asymmetric: x_ori = x / 2, clamped at the end */
    int64_t d1[] = {1, 3};
    float x1[] = {0, 2, 4};
    float sc1[] = {1, 2};
    case_init(&c, 9, "Upsample");
    tc_node_set_attr_string(c.node, "mode", "linear", &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d1, x1);
    int64_t sd[] = {2};
    case_const(&c, "scales", TCONV_DTYPE_FLOAT, 1, sd, sc1, sizeof sc1);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    float e1[] = {0, 1, 2, 3, 4, 4};
    assert_near(&y, e1, 6, 1e-6f);
    tc_rt_tensor_release(&y);
}

static void test_resize_10_nearest_floors(void **state) {
    (void)state;
    int64_t d[] = {1, 4};
    float x[] = {10, 20, 30, 40}, sc[] = {1, 0.6f};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 10, "Resize");
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d, x);
    int64_t sd[] = {2};
    case_const(&c, "scales", TCONV_DTYPE_FLOAT, 1, sd, sc, sizeof sc);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    /* out = floor(4 * 0.6) = 2; x_ori = x / 0.6 = 0, 1.67 -> floor 0, 1 */
    float e[] = {10, 20};
    rtt_assert_floats(&y, e, 2);
    tc_rt_tensor_release(&y);

    case_init(&c, 10, "Resize");
    tc_node_set_attr_string(c.node, "mode", "cubic", &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d, x);
    case_const(&c, "scales", TCONV_DTYPE_FLOAT, 1, sd, sc, sizeof sc);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "mode = 'cubic'");
}

static void test_resize_11_modes_by_opset(void **state) {
    (void)state;
    int64_t d[] = {1, 2};
    float x[] = {1, 2}, sc[] = {1, 2};
    int64_t sd[] = {2};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    /* tf_half_pixel_for_nn: x_ori = (x + 0.5) / 2 = 0.25, 0.75, 1.25, 1.75, rounded (prefer
     * floor) and clamped: 0, 1, 1, 1 (half_pixel would give 0, 0, 1, 1) */
    case_init(&c, 13, "Resize");
    tc_node_set_attr_string(c.node, "coordinate_transformation_mode", "tf_half_pixel_for_nn", &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d, x);
    case_absent(&c);
    case_const(&c, "scales", TCONV_DTYPE_FLOAT, 1, sd, sc, sizeof sc);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    float e[] = {1, 2, 2, 2};
    rtt_assert_floats(&y, e, 4);
    tc_rt_tensor_release(&y);

    /* ...which Resize-18 removed */
    case_init(&c, 18, "Resize");
    tc_node_set_attr_string(c.node, "coordinate_transformation_mode", "tf_half_pixel_for_nn", &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d, x);
    case_absent(&c);
    case_const(&c, "scales", TCONV_DTYPE_FLOAT, 1, sd, sc, sizeof sc);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "tf_half_pixel_for_nn");

    /* antialias is a Resize-18 attribute: at opset 13 it is refused, not ignored */
    case_init(&c, 13, "Resize");
    tc_node_set_attr_int(c.node, "antialias", 1, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d, x);
    case_absent(&c);
    case_const(&c, "scales", TCONV_DTYPE_FLOAT, 1, sd, sc, sizeof sc);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "unsupported attribute 'antialias'");

    /* scales and sizes both given */
    case_init(&c, 13, "Resize");
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d, x);
    case_absent(&c);
    case_const(&c, "scales", TCONV_DTYPE_FLOAT, 1, sd, sc, sizeof sc);
    int64_t sizes[] = {1, 4};
    case_const(&c, "sizes", TCONV_DTYPE_INT64, 1, sd, sizes, sizeof sizes);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "exactly one of scales and sizes");
}

/* ---------------------------------------------------------------- nn */

static void test_softmax_11_coerces_to_2d(void **state) {
    (void)state;
    int64_t d[] = {2, 2, 2};
    float x[] = {0, 1, 2, 3, 0, 0, 0, 0};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 11, "Softmax"); /* axis 1: rows of 4 */
    case_input(&c, TCONV_DTYPE_FLOAT, 3, d, x);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    double s = exp(0) + exp(1) + exp(2) + exp(3);
    float e[] = {(float)(1 / s),
                 (float)(exp(1) / s),
                 (float)(exp(2) / s),
                 (float)(exp(3) / s),
                 0.25f,
                 0.25f,
                 0.25f,
                 0.25f};
    assert_near(&y, e, 8, 1e-6f);
    tc_rt_tensor_release(&y);

    case_init(&c, 13, "Softmax"); /* axis -1: pairs */
    case_input(&c, TCONV_DTYPE_FLOAT, 3, d, x);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    float p = (float)(1 / (1 + exp(1)));
    float e13[] = {p, 1 - p, p, 1 - p, 0.5f, 0.5f, 0.5f, 0.5f};
    assert_near(&y, e13, 8, 1e-6f);
    tc_rt_tensor_release(&y);
}

static void test_batchnorm_7_per_activation(void **state) {
    (void)state;
    int64_t d[] = {1, 2, 2};
    float x[] = {1, 2, 3, 4};
    int64_t pd[] = {2, 2};
    float scale[] = {1, 2, 3, 4}, bias[] = {0, 1, 0, 1}, mean[] = {1, 1, 1, 1},
          var[] = {1, 1, 4, 4};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 7, "BatchNormalization");
    tc_node_set_attr_int(c.node, "spatial", 0, &err);
    tc_node_set_attr_float(c.node, "epsilon", 0.0f, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 3, d, x);
    case_const(&c, "s", TCONV_DTYPE_FLOAT, 2, pd, scale, sizeof scale);
    case_const(&c, "b", TCONV_DTYPE_FLOAT, 2, pd, bias, sizeof bias);
    case_const(&c, "m", TCONV_DTYPE_FLOAT, 2, pd, mean, sizeof mean);
    case_const(&c, "v", TCONV_DTYPE_FLOAT, 2, pd, var, sizeof var);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    float e[] = {0, 3, 3, 7};
    assert_near(&y, e, 4, 1e-6f);
    tc_rt_tensor_release(&y);

    /* spatial is an opset-7 attribute only */
    int64_t cd[] = {2};
    case_init(&c, 9, "BatchNormalization");
    tc_node_set_attr_int(c.node, "spatial", 0, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 3, d, x);
    case_const(&c, "s", TCONV_DTYPE_FLOAT, 1, cd, scale, 8);
    case_const(&c, "b", TCONV_DTYPE_FLOAT, 1, cd, bias, 8);
    case_const(&c, "m", TCONV_DTYPE_FLOAT, 1, cd, mean, 8);
    case_const(&c, "v", TCONV_DTYPE_FLOAT, 1, cd, var, 8);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "'spatial'");
}

static void test_clip_6_attributes(void **state) {
    (void)state;
    int64_t d[] = {4};
    float x[] = {-5, 0.5f, 5, NAN};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 6, "Clip");
    tc_node_set_attr_float(c.node, "min", -1.0f, &err);
    tc_node_set_attr_float(c.node, "max", 1.0f, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 1, d, x);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    const float *o = y.data;
    assert_true(o[0] == -1.0f && o[1] == 0.5f && o[2] == 1.0f && isnan(o[3]));
    tc_rt_tensor_release(&y);
}

/* ---------------------------------------------------------------- tensor */

static void test_cast(void **state) {
    (void)state;
    int64_t d[] = {6};
    float x[] = {1.9f, -1.9f, 300.0f, NAN, 0.0f, 65504.0f};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 13, "Cast");
    tc_node_set_attr_int(c.node, "to", TCONV_DTYPE_INT8, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 1, d, x);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    const int8_t *i8 = y.data;
    assert_int_equal(i8[0], 1); /* truncation */
    assert_int_equal(i8[1], -1);
    assert_int_equal(i8[2], 127); /* saturation, no UB */
    assert_int_equal(i8[3], 0);
    tc_rt_tensor_release(&y);

    case_init(&c, 13, "Cast");
    tc_node_set_attr_int(c.node, "to", TCONV_DTYPE_BOOL, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 1, d, x);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    const uint8_t *b = y.data;
    assert_true(b[0] == 1 && b[3] == 1 && b[4] == 0);
    tc_rt_tensor_release(&y);

    /* float -> float16 -> float round trip of representable values */
    case_init(&c, 13, "Cast");
    tc_node_set_attr_int(c.node, "to", TCONV_DTYPE_FLOAT16, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 1, d, x);
    tc_rt_tensor h;
    assert_int_equal(case_run(&c, &h, &err), TCONV_OK);
    case_init(&c, 13, "Cast");
    tc_node_set_attr_int(c.node, "to", TCONV_DTYPE_FLOAT, &err);
    case_input(&c, TCONV_DTYPE_FLOAT16, 1, d, h.data);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    const float *f = y.data;
    assert_true(fabsf(f[0] - 1.9f) < 1e-3f && f[2] == 300.0f && isnan(f[3]) && f[5] == 65504.0f);
    tc_rt_tensor_release(&y);
    tc_rt_tensor_release(&h);

    /* int64 -> double is exact for 2^53 */
    int64_t big[] = {INT64_C(9007199254740992)};
    int64_t d1[] = {1};
    case_init(&c, 13, "Cast");
    tc_node_set_attr_int(c.node, "to", TCONV_DTYPE_DOUBLE, &err);
    case_input(&c, TCONV_DTYPE_INT64, 1, d1, big);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    assert_true(((double *)y.data)[0] == 9007199254740992.0);
    tc_rt_tensor_release(&y);

    case_init(&c, 13, "Cast");
    tc_node_set_attr_int(c.node, "to", TCONV_DTYPE_STRING, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 1, d, x);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "unsupported output dtype string");
}

static void test_constant_forms(void **state) {
    (void)state;
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 13, "Constant");
    int64_t ints[] = {3, -1, 7};
    tc_node_set_attr_ints(c.node, "value_ints", ints, 3, &err);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    assert_int_equal(y.dtype, TCONV_DTYPE_INT64);
    assert_int_equal(y.rank, 1);
    assert_memory_equal(y.data, ints, sizeof ints);
    tc_rt_tensor_release(&y);

    case_init(&c, 13, "Constant");
    tc_node_set_attr_float(c.node, "value_float", 2.5f, &err);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    assert_int_equal(y.rank, 0);
    assert_true(((float *)y.data)[0] == 2.5f);
    tc_rt_tensor_release(&y);

    case_init(&c, 13, "Constant");
    tc_attr sparse = {.name = "sparse_value", .type = TCONV_ATTR_SPARSE_TENSOR};
    assert_int_equal(tc_node_add_attr(c.node, &sparse, &err), TCONV_OK);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "sparse_value");
}

static void test_gather_int32_negative(void **state) {
    (void)state;
    int64_t d[] = {2, 3}, id[] = {2};
    float x[] = {0, 1, 2, 3, 4, 5};
    int32_t idx[] = {-1, 0};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 13, "Gather");
    tc_node_set_attr_int(c.node, "axis", 1, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d, x);
    case_const(&c, "idx", TCONV_DTYPE_INT32, 1, id, idx, sizeof idx);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    float e[] = {2, 0, 5, 3};
    rtt_assert_floats(&y, e, 4);
    tc_rt_tensor_release(&y);

    int32_t bad[] = {3, 0};
    case_init(&c, 13, "Gather");
    tc_node_set_attr_int(c.node, "axis", 1, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d, x);
    case_const(&c, "idx", TCONV_DTYPE_INT32, 1, id, bad, sizeof bad);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "index 3 is out of range");
}

static void test_shape_reshape_squeeze(void **state) {
    (void)state;
    int64_t d[] = {2, 1, 3, 1};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 15, "Shape");
    tc_node_set_attr_int(c.node, "start", -3, &err);
    tc_node_set_attr_int(c.node, "end", -1, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 4, d, NULL);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    assert_int_equal(y.n_elements, 2);
    assert_true(((int64_t *)y.data)[0] == 1 && ((int64_t *)y.data)[1] == 3);
    tc_rt_tensor_release(&y);

    /* Shape-13 has no start/end */
    case_init(&c, 13, "Shape");
    tc_node_set_attr_int(c.node, "start", 1, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 4, d, NULL);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_UNSUPPORTED);

    /* Squeeze-11: no axes squeezes every 1 */
    case_init(&c, 11, "Squeeze");
    case_input(&c, TCONV_DTYPE_FLOAT, 4, d, NULL);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    int64_t e[] = {2, 3};
    rtt_assert_dims(&y, 2, e);
    tc_rt_tensor_release(&y);

    /* Unsqueeze-11 attribute form */
    case_init(&c, 11, "Unsqueeze");
    int64_t ax[] = {0, -1};
    tc_node_set_attr_ints(c.node, "axes", ax, 2, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 4, d, NULL);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    int64_t e2[] = {1, 2, 1, 3, 1, 1};
    rtt_assert_dims(&y, 6, e2);
    tc_rt_tensor_release(&y);

    /* Reshape allowzero: 0 is a real zero (a zero-element input) */
    int64_t dz[] = {0, 3}, shape[] = {3, 0}, sd[] = {2};
    case_init(&c, 14, "Reshape");
    tc_node_set_attr_int(c.node, "allowzero", 1, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, dz, NULL);
    case_const(&c, "shape", TCONV_DTYPE_INT64, 1, sd, shape, sizeof shape);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    int64_t e3[] = {3, 0};
    rtt_assert_dims(&y, 2, e3);
    tc_rt_tensor_release(&y);

    /* without allowzero, 0 copies the input dim */
    int64_t d23[] = {2, 3}, shape2[] = {0, -1};
    case_init(&c, 13, "Reshape");
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d23, NULL);
    case_const(&c, "shape", TCONV_DTYPE_INT64, 1, sd, shape2, sizeof shape2);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    rtt_assert_dims(&y, 2, d23);
    tc_rt_tensor_release(&y);

    /* allowzero exists from Reshape-14 on */
    case_init(&c, 13, "Reshape");
    tc_node_set_attr_int(c.node, "allowzero", 1, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, d23, NULL);
    case_const(&c, "shape", TCONV_DTYPE_INT64, 1, sd, shape2, sizeof shape2);
    assert_int_equal(case_run(&c, &y, &err), TCONV_ERR_UNSUPPORTED);
    rtt_assert_contains(err.message, "'allowzero'");
}

static void test_concat_with_empty_input(void **state) {
    (void)state;
    int64_t a[] = {2, 1}, b[] = {2, 0}, e[] = {2, 2};
    float av[] = {1, 2}, cv[] = {3, 4};
    case1 c;
    tc_rt_tensor y;
    tc_error err;
    case_init(&c, 13, "Concat");
    tc_node_set_attr_int(c.node, "axis", -1, &err);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, a, av);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, b, NULL);
    case_input(&c, TCONV_DTYPE_FLOAT, 2, a, cv);
    assert_int_equal(case_run(&c, &y, &err), TCONV_OK);
    rtt_assert_dims(&y, 2, e);
    float ev[] = {1, 3, 2, 4};
    rtt_assert_floats(&y, ev, 4);
    tc_rt_tensor_release(&y);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upsample_7_nearest_and_linear),
        cmocka_unit_test(test_resize_10_nearest_floors),
        cmocka_unit_test(test_resize_11_modes_by_opset),
        cmocka_unit_test(test_softmax_11_coerces_to_2d),
        cmocka_unit_test(test_batchnorm_7_per_activation),
        cmocka_unit_test(test_clip_6_attributes),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_constant_forms),
        cmocka_unit_test(test_gather_int32_negative),
        cmocka_unit_test(test_shape_reshape_squeeze),
        cmocka_unit_test(test_concat_with_empty_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
