/* lower_weights: finding a constant weight (initializer, Constant, DequantizeLinear of them, and
 * the reasons when it is not one), each element move checked against its index formula, and the
 * emitted initializers and DequantizeLinear (scales and zero points following the new axis). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir_builder.h"
#include "passes/lower_weights.h"

#define W_OK(call)                                                                                 \
    do {                                                                                           \
        tc_error w_err_;                                                                           \
        tc_error_clear(&w_err_);                                                                   \
        tconv_status w_st_ = (call);                                                               \
        if (w_st_ != TCONV_OK)                                                                     \
            fail_msg("%s failed: %s", #call, w_err_.message);                                      \
    } while (0)

static tconv_value *tensor_init(tconv_graph *g, const char *name, tconv_dtype dtype, int rank,
                                const int64_t *dims, const void *data, size_t nbytes) {
    tconv_tensor *t;
    B_OK(tc_tensor_create(g->model, name, dtype, rank, dims, data, nbytes, &t, &b_err_));
    B_OK(tc_graph_add_initializer(g, t, &b_err_));
    return t->value;
}

/* W (C_in=4, C_out/g=3, 2, 3) float, element = its flat index. */
static tconv_value *index_weight(tconv_graph *g) {
    int64_t dims[4] = {4, 3, 2, 3};
    float data[72];
    for (int i = 0; i < 72; i++)
        data[i] = (float)i;
    return tensor_init(g, "W", TCONV_DTYPE_FLOAT, 4, dims, data, sizeof data);
}

static float at_f(const tc_weight *w, int64_t flat) {
    float v;
    memcpy(&v, w->data + (size_t)flat * 4, 4);
    return v;
}

static void test_finds_initializer_constant_and_reasons(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    tconv_value *w = index_weight(g);
    tc_weight_source src;
    char why[256];
    assert_true(tc_weight_source_find(w, &src, why, sizeof why));
    assert_ptr_equal(src.tensor, w->initializer);
    assert_null(src.dequantize);
    assert_int_equal(src.axis, -1);

    /* a Constant node */
    tconv_node *c = b_node(g, "Constant", "const_w", "", "CW");
    B_OK(tc_node_set_attr_tensor(c, "value", w->initializer, &b_err_));
    assert_true(tc_weight_source_find(tc_graph_find_value(g, "CW"), &src, why, sizeof why));
    assert_ptr_equal(src.constant, c);

    /* a graph input */
    tconv_value *x = b_input(g, "X", TCONV_DTYPE_FLOAT, "4,3,2,3");
    assert_false(tc_weight_source_find(x, &src, why, sizeof why));
    assert_contains(why, "'X' is a graph input");

    /* computed */
    b_node(g, "Relu", "relu_w", "X", "RW");
    assert_false(tc_weight_source_find(tc_graph_find_value(g, "RW"), &src, why, sizeof why));
    assert_contains(why, "relu_w");

    /* an initializer that is also a graph input (IR >= 4): overridable */
    int64_t one = 1;
    tconv_value *ov = b_i64(g, "OV", &one, 1);
    B_OK(tc_graph_add_input(g, ov, NULL, &b_err_));
    assert_false(tc_weight_source_find(ov, &src, why, sizeof why));
    assert_contains(why, "override");
    tconv_model_free(m);
}

/* ConvTranspose (C_in, C_out/g, kh, kw) -> Conv (C_out, C_in/g, kh, kw) flipped, group 2. */
static void test_conv_transpose_to_conv(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tc_weight_source src;
    char why[256];
    assert_true(tc_weight_source_find(index_weight(m->graph), &src, why, sizeof why));
    tc_weight w;
    W_OK(tc_weight_load(&src, &w, &w_err_));
    W_OK(tc_weight_conv_transpose_to_conv(&w, 2, &w_err_));
    assert_int_equal(w.rank, 4);
    int64_t expect_dims[4] = {6, 2, 2, 3};
    assert_memory_equal(w.dims, expect_dims, sizeof expect_dims);
    /* out[gi*3 + co][ci][h][x] = in[gi*2 + ci][co][1-h][2-x] */
    for (int gi = 0; gi < 2; gi++)
        for (int co = 0; co < 3; co++)
            for (int ci = 0; ci < 2; ci++)
                for (int h = 0; h < 2; h++)
                    for (int x = 0; x < 3; x++) {
                        int64_t o = (((gi * 3 + co) * 2 + ci) * 2 + h) * 3 + x;
                        int64_t i = (((gi * 2 + ci) * 3 + co) * 2 + (1 - h)) * 3 + (2 - x);
                        assert_float_equal(at_f(&w, o), (float)i, 0);
                    }
    tc_weight_free(&w);
    tconv_model_free(m);
}

/* take with a stride (phase taps, flipped, zero-padded), spread, repeat, axes. */
static void test_take_spread_repeat_axes(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    int64_t dims[2] = {2, 5};
    float data[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    tconv_value *v = tensor_init(m->graph, "K", TCONV_DTYPE_FLOAT, 2, dims, data, sizeof data);
    tc_weight_source src;
    assert_true(tc_weight_source_find(v, &src, NULL, 0));
    tc_weight w;
    W_OK(tc_weight_load(&src, &w, &w_err_));
    /* phase 1 of stride 2 flipped to 3 taps: taps 5,3,1 -> positions 5 (past 4: 0), 3, 1 */
    W_OK(tc_weight_take(&w, 1, 5, -2, 3, &w_err_));
    float expect_take[6] = {0, 3, 1, 0, 8, 6};
    assert_int_equal(w.dims[1], 3);
    for (int i = 0; i < 6; i++)
        assert_float_equal(at_f(&w, i), expect_take[i], 0);
    W_OK(tc_weight_spread(&w, 1, 2, &w_err_)); /* 3 -> 5: zeros between */
    float expect_spread[10] = {0, 0, 3, 0, 1, 0, 0, 8, 0, 6};
    assert_int_equal(w.dims[1], 5);
    for (int i = 0; i < 10; i++)
        assert_float_equal(at_f(&w, i), expect_spread[i], 0);
    W_OK(tc_weight_repeat(&w, 0, 2, &w_err_)); /* rows a,a,b,b */
    assert_int_equal(w.dims[0], 4);
    assert_float_equal(at_f(&w, 5 + 2), 3, 0);
    assert_float_equal(at_f(&w, 15 + 4), 6, 0);
    W_OK(tc_weight_insert_axis(&w, 1, &w_err_));
    assert_int_equal(w.rank, 3);
    assert_int_equal(w.dims[1], 1);
    int perm[3] = {2, 1, 0};
    W_OK(tc_weight_permute(&w, perm, &w_err_));
    assert_int_equal(w.dims[0], 5);
    assert_int_equal(w.dims[2], 4);
    assert_float_equal(at_f(&w, 4 * 4 + 3), 6, 0); /* [4][0][3] = old [3][0][4] */
    W_OK(tc_weight_merge_axes(&w, 0, 2, &w_err_));
    assert_int_equal(w.rank, 2);
    tc_weight parts[2] = {w, w}, joined;
    assert_int_equal(w.dims[0], 5);
    assert_int_equal(w.dims[1], 4);
    W_OK(tc_weight_concat(parts, 2, 1, &joined, &w_err_)); /* (5, 4) (5, 4) -> (5, 8) */
    assert_int_equal(joined.dims[1], 8);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 8; c++)
            assert_float_equal(at_f(&joined, r * 8 + c), at_f(&w, r * 4 + c % 4), 0);
    tc_weight_free(&joined);
    W_OK(tc_weight_concat(parts, 2, 0, &joined, &w_err_)); /* (10, 4) */
    assert_int_equal(joined.dims[0], 10);
    assert_memory_equal(joined.data + 20 * 4, w.data, 20 * 4);
    tc_weight_free(&joined);
    W_OK(tc_weight_split_axis(&w, 1, 2, &w_err_));
    assert_int_equal(w.rank, 3);
    assert_int_equal(w.dims[1], 2);
    assert_int_equal(w.dims[2], 2);
    W_OK(tc_weight_slice(&w, 0, 2, 2, &w_err_));
    assert_int_equal(w.dims[0], 2);
    assert_float_equal(at_f(&w, 0), 3, 0); /* old [2][0][0] = row 0, tap 2 of the spread */
    tc_error err;
    assert_int_not_equal(tc_weight_slice(&w, 0, 1, 5, &err), TCONV_OK);
    assert_int_not_equal(tc_weight_split_axis(&w, 0, 3, &err), TCONV_OK);
    tc_weight_free(&w);
    tconv_model_free(m);
}

/* Float64 and float16 elements move as bytes. */
static void test_other_dtypes(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    int64_t dims[3] = {1, 1, 3};
    double d[3] = {1.5, -2.25, 3.0};
    uint16_t h[3] = {0x3c00, 0xc000, 0x4200};
    tc_weight_source src;
    tc_weight w;
    assert_true(tc_weight_source_find(
        tensor_init(m->graph, "D", TCONV_DTYPE_DOUBLE, 3, dims, d, sizeof d), &src, NULL, 0));
    W_OK(tc_weight_load(&src, &w, &w_err_));
    W_OK(tc_weight_flip(&w, 2, &w_err_));
    double got[3];
    memcpy(got, w.data, sizeof got);
    assert_true(got[0] == 3.0 && got[1] == -2.25 && got[2] == 1.5);
    tc_weight_free(&w);
    assert_true(tc_weight_source_find(
        tensor_init(m->graph, "H", TCONV_DTYPE_FLOAT16, 3, dims, h, sizeof h), &src, NULL, 0));
    W_OK(tc_weight_load(&src, &w, &w_err_));
    W_OK(tc_weight_spread(&w, 2, 3, &w_err_));
    uint16_t goth[7];
    assert_int_equal(w.count, 7);
    memcpy(goth, w.data, sizeof goth);
    uint16_t expect[7] = {0x3c00, 0, 0, 0xc000, 0, 0, 0x4200};
    assert_memory_equal(goth, expect, sizeof expect);
    tc_weight_free(&w);
    tconv_model_free(m);
}

/* DequantizeLinear(int8 W (C_in=2, C_out=3, 3), per-channel scales on axis 1, zero points):
 * the Conv form moves the scales to axis 0, inserted taps hold the channel's zero point, and the
 * emitted DequantizeLinear reads new initializers. */
static void test_qdq_per_channel(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    int64_t wd[3] = {2, 3, 3};
    int8_t q[18];
    for (int i = 0; i < 18; i++)
        q[i] = (int8_t)(i - 9);
    tensor_init(g, "Wq", TCONV_DTYPE_INT8, 3, wd, q, sizeof q);
    int64_t sd[1] = {3};
    float scales[3] = {0.5f, 0.25f, 2.0f};
    int8_t zps[3] = {1, -2, 3};
    tensor_init(g, "Ws", TCONV_DTYPE_FLOAT, 1, sd, scales, sizeof scales);
    tensor_init(g, "Wz", TCONV_DTYPE_INT8, 1, sd, zps, sizeof zps);
    tconv_node *dq = b_node(g, "DequantizeLinear", "dq_w", "Wq,Ws,Wz", "W");
    b_int(dq, "axis", 1);
    tconv_node *user = b_node(g, "Identity", "user", "W", "Y");
    tc_weight_source src;
    char why[256];
    assert_true(tc_weight_source_find(tc_graph_find_value(g, "W"), &src, why, sizeof why));
    assert_ptr_equal(src.dequantize, dq);
    assert_int_equal(src.axis, 1);
    tc_weight w;
    W_OK(tc_weight_load(&src, &w, &w_err_));
    W_OK(tc_weight_conv_transpose_to_conv(&w, 1, &w_err_)); /* (3, 2, 3), scales on axis 0 */
    assert_int_equal(w.qaxis, 0);
    /* stride-2 phase 0 taps flipped into 2 slots: taps 2, 0 */
    W_OK(tc_weight_take(&w, 2, 0, 2, 2, &w_err_)); /* of the flipped kernel: taps 0, 2 */
    W_OK(tc_weight_take(&w, 2, 1, 1, 3, &w_err_)); /* shift: [tap2, pad, pad] */
    for (int co = 0; co < 3; co++)
        for (int ci = 0; ci < 2; ci++) {
            int8_t *row = (int8_t *)w.data + (co * 2 + ci) * 3;
            /* flipped kernel position 2 = original tap 0 */
            assert_int_equal(row[0], q[(ci * 3 + co) * 3 + 0]);
            assert_int_equal(row[1], zps[co]);
            assert_int_equal(row[2], zps[co]);
        }
    tconv_value *out;
    tconv_node *new_dq;
    W_OK(tc_weight_emit(&w, g, user, "W_conv", &out, &new_dq, &w_err_));
    assert_non_null(new_dq);
    assert_ptr_equal(new_dq->next, user);
    assert_ptr_equal(out->producer, new_dq);
    const tc_attr *axis = tc_node_attr(new_dq, "axis");
    assert_non_null(axis);
    assert_int_equal(axis->i, 0);
    tconv_tensor *ns = new_dq->inputs[1]->initializer, *nz = new_dq->inputs[2]->initializer;
    assert_non_null(ns);
    assert_non_null(nz);
    assert_int_equal(ns->dims[0], 3);
    const void *data;
    size_t n;
    W_OK(tc_tensor_data(ns, &data, &n, &w_err_));
    assert_memory_equal(data, scales, sizeof scales);
    W_OK(tc_tensor_data(nz, &data, &n, &w_err_));
    assert_memory_equal(data, zps, sizeof zps);
    tconv_tensor *nq = new_dq->inputs[0]->initializer;
    assert_int_equal(nq->dtype, TCONV_DTYPE_INT8);
    assert_int_equal(nq->rank, 3);
    W_OK(tc_tensor_data(nq, &data, &n, &w_err_));
    assert_memory_equal(data, w.data, 18);

    /* merging the quantized axis with a phase axis repeats the scales: (3, 2, 3) -> (3, 2)(...)
     * with a repeat of 2 on axis 0 -> scales s0 s0 s1 s1 s2 s2 */
    W_OK(tc_weight_insert_axis(&w, 1, &w_err_));
    W_OK(tc_weight_repeat(&w, 1, 2, &w_err_));
    W_OK(tc_weight_merge_axes(&w, 0, 2, &w_err_));
    assert_int_equal(w.qaxis, 0);
    assert_int_equal(w.dims[0], 6);
    int64_t expect_qmap[6] = {0, 0, 1, 1, 2, 2};
    assert_memory_equal(w.qmap, expect_qmap, sizeof expect_qmap);
    /* zeros cannot be inserted along the quantized axis (they would need a scale) */
    tc_error err;
    assert_int_equal(tc_weight_take(&w, 0, 0, 1, 7, &err), TCONV_ERR_UNSUPPORTED);
    assert_int_equal(tc_weight_spread(&w, 0, 2, &err), TCONV_ERR_UNSUPPORTED);
    tc_weight_free(&w);
    assert_true(tc_model_verify(m, &err) == TCONV_OK);
    tconv_model_free(m);
}

/* Per-tensor uint8 with a scalar zero point: inserted positions hold it; the emitted
 * DequantizeLinear has no axis and scalar parameters. */
static void test_qdq_per_tensor(void **state) {
    (void)state;
    tconv_model *m = b_model(10);
    tconv_graph *g = m->graph;
    int64_t wd[3] = {1, 1, 2};
    uint8_t q[2] = {200, 7};
    tensor_init(g, "Wq", TCONV_DTYPE_UINT8, 3, wd, q, sizeof q);
    float s = 0.1f;
    uint8_t z = 128;
    tensor_init(g, "Ws", TCONV_DTYPE_FLOAT, 0, NULL, &s, sizeof s);
    tensor_init(g, "Wz", TCONV_DTYPE_UINT8, 0, NULL, &z, sizeof z);
    b_node(g, "DequantizeLinear", "dq_w", "Wq,Ws,Wz", "W");
    tc_weight_source src;
    char why[256];
    assert_true(tc_weight_source_find(tc_graph_find_value(g, "W"), &src, why, sizeof why));
    assert_int_equal(src.axis, -1);
    tc_weight w;
    W_OK(tc_weight_load(&src, &w, &w_err_));
    W_OK(tc_weight_spread(&w, 2, 3, &w_err_));
    uint8_t expect[4] = {200, 128, 128, 7};
    assert_memory_equal(w.data, expect, 4);
    tconv_value *out;
    tconv_node *new_dq;
    W_OK(tc_weight_emit(&w, g, NULL, "W2", &out, &new_dq, &w_err_));
    assert_null(tc_node_attr(new_dq, "axis"));
    assert_int_equal(new_dq->inputs[1]->initializer->rank, 0);
    assert_int_equal(new_dq->inputs[2]->initializer->rank, 0);
    tc_weight_free(&w);
    tconv_model_free(m);
}

static void test_qdq_refusals(void **state) {
    (void)state;
    tconv_model *m = b_model(21);
    tconv_graph *g = m->graph;
    int64_t wd[3] = {2, 4, 1};
    int8_t q[8] = {0};
    tensor_init(g, "Wq", TCONV_DTYPE_INT8, 3, wd, q, sizeof q);
    int64_t sd[3] = {2, 2, 1};
    float scales[4] = {1, 1, 1, 1};
    tensor_init(g, "Ws", TCONV_DTYPE_FLOAT, 3, sd, scales, sizeof scales);
    tconv_node *dq = b_node(g, "DequantizeLinear", "dq_blocked", "Wq,Ws", "W");
    b_int(dq, "block_size", 2);
    tc_weight_source src;
    char why[256];
    assert_false(tc_weight_source_find(tc_graph_find_value(g, "W"), &src, why, sizeof why));
    assert_contains(why, "block");
    /* scales that are a graph input */
    b_input(g, "S", TCONV_DTYPE_FLOAT, "");
    b_node(g, "DequantizeLinear", "dq_input_scale", "Wq,S", "W2");
    assert_false(tc_weight_source_find(tc_graph_find_value(g, "W2"), &src, why, sizeof why));
    assert_contains(why, "'S' is a graph input");
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_initializer_constant_and_reasons),
        cmocka_unit_test(test_conv_transpose_to_conv),
        cmocka_unit_test(test_take_spread_repeat_axes),
        cmocka_unit_test(test_other_dtypes),
        cmocka_unit_test(test_qdq_per_channel),
        cmocka_unit_test(test_qdq_per_tensor),
        cmocka_unit_test(test_qdq_refusals),
    };
    return cmocka_run_group_tests_name("passes.lower_weights", tests, NULL, NULL);
}
