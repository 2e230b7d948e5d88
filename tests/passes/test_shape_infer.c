/* shape-infer on graphs built by hand: ConvTranspose in every padding mode (static and dynamic
 * sizes), Conv and pooling, broadcasting, Slice/Pad in their attribute and input forms,
 * Reshape with 0 and -1 (also fed by a Shape chain), the other tensor ops, how results merge
 * into declared types (refine, keep, conflict), value_info, If branches and Loop bodies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir/verify.h"
#include "passes/pass.h"

#include "ir_builder.h"

static tconv_status run_shape_infer(tconv_model *m, tc_error *err) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    tc_error_clear(err);
    return tc_pass_shape_infer(m->graph, &options, err);
}

static void infer_ok(tconv_model *m) {
    tc_error err;
    if (run_shape_infer(m, &err) != TCONV_OK)
        fail_msg("shape-infer failed: %s", err.message);
    if (tc_model_verify(m, &err) != TCONV_OK)
        fail_msg("verify after shape-infer: %s", err.message);
}

static void infer_fails(tconv_model *m, const char *const *needles) {
    tc_error err;
    assert_int_equal(run_shape_infer(m, &err), TCONV_ERR_INVALID);
    for (; *needles; needles++)
        assert_contains(err.message, *needles);
}

/* ---------------------------------------------------------------- ConvTranspose */

/* X -> ConvTranspose(W [4,3,k,k]) -> Y -> Relu -> Z (graph output). */
static tconv_node *conv_transpose_model(tconv_model **out, const char *x_spec, int64_t k) {
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, x_spec);
    char w_spec[32];
    snprintf(w_spec, sizeof w_spec, "4,3,%lld,%lld", (long long)k, (long long)k);
    b_f32(g, "W", w_spec, NULL);
    tconv_node *ct = b_node(g, "ConvTranspose", "ct", "X,W", "Y");
    b_node(g, "Relu", "relu", "Y", "Z");
    b_output(g, "Z");
    *out = m;
    return ct;
}

static void test_conv_transpose_same_static(void **state) {
    (void)state;
    const char *modes[] = {"SAME_UPPER", "SAME_LOWER"};
    for (int i = 0; i < 2; i++) {
        tconv_model *m;
        tconv_node *ct = conv_transpose_model(&m, "1,4,5,7", 3);
        b_string(ct, "auto_pad", modes[i]);
        b_ints(ct, "strides", (int64_t[]){2, 2}, 2);
        infer_ok(m);
        assert_type(m->graph, "Y", "float[1,3,10,14]");
        assert_type(m->graph, "Z", "float[1,3,10,14]");
        /* Y is intermediate: it gets a value_info entry; Z is a graph output: it does not. */
        assert_true(tc_graph_has_value_info(m->graph, tc_graph_find_value(m->graph, "Y")));
        assert_false(tc_graph_has_value_info(m->graph, tc_graph_find_value(m->graph, "Z")));
        tconv_model_free(m);
    }
}

/* Odd totals only move the pads; with SAME the size is x*s even with output_padding. */
static void test_conv_transpose_same_odd_total_and_output_padding(void **state) {
    (void)state;
    tconv_model *m;
    tconv_node *ct = conv_transpose_model(&m, "2,4,7,5", 4); /* k4 s2: total 2; k4 s3: 1 */
    b_string(ct, "auto_pad", "SAME_UPPER");
    b_ints(ct, "strides", (int64_t[]){2, 3}, 2);
    b_ints(ct, "output_padding", (int64_t[]){1, 0}, 2);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[2,3,14,15]");
    tconv_model_free(m);
}

/* out = s*(x-1) + k - pb - pe + op. */
static void test_conv_transpose_explicit_pads(void **state) {
    (void)state;
    tconv_model *m;
    tconv_node *ct = conv_transpose_model(&m, "1,4,5,5", 3);
    b_ints(ct, "strides", (int64_t[]){2, 2}, 2);
    b_ints(ct, "pads", (int64_t[]){1, 0, 2, 1}, 4); /* F = 11 */
    b_ints(ct, "output_padding", (int64_t[]){1, 1}, 2);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[1,3,9,11]");
    tconv_model_free(m);

    ct = conv_transpose_model(&m, "1,4,5,5", 3);
    b_string(ct, "auto_pad", "VALID");
    b_ints(ct, "strides", (int64_t[]){3, 1}, 2);
    b_ints(ct, "output_padding", (int64_t[]){2, 0}, 2);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[1,3,17,7]");
    tconv_model_free(m);
}

static void test_conv_transpose_output_shape(void **state) {
    (void)state;
    tconv_model *m;
    tconv_node *ct = conv_transpose_model(&m, "1,4,5,6", 3);
    b_ints(ct, "strides", (int64_t[]){2, 2}, 2);
    b_ints(ct, "output_shape", (int64_t[]){10, 12}, 2);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[1,3,10,12]");
    tconv_model_free(m);

    /* N,C in front; one axis with a negative total (output extends past F). */
    ct = conv_transpose_model(&m, "1,4,5,6", 4);
    b_string(ct, "auto_pad", "SAME_UPPER");
    b_ints(ct, "strides", (int64_t[]){2, 2}, 2);
    b_ints(ct, "output_shape", (int64_t[]){1, 3, 11, 15}, 4);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[1,3,11,15]");
    tconv_model_free(m);

    /* output_shape is static even when the input size is not. */
    ct = conv_transpose_model(&m, "N,4,H,W", 3);
    b_ints(ct, "strides", (int64_t[]){2, 2}, 2);
    b_ints(ct, "output_shape", (int64_t[]){10, 12}, 2);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[N,3,10,12]");
    tconv_model_free(m);
}

static void test_conv_transpose_dynamic(void **state) {
    (void)state;
    tconv_model *m;
    /* Dynamic batch, static spatial: everything but N static. */
    tconv_node *ct = conv_transpose_model(&m, "N,4,5,5", 3);
    b_string(ct, "auto_pad", "SAME_UPPER");
    b_ints(ct, "strides", (int64_t[]){2, 2}, 2);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[N,3,10,10]");
    tconv_model_free(m);

    /* Symbolic spatial with stride 2: H*2 is not a symbol we can name: unknown. */
    ct = conv_transpose_model(&m, "N,4,H,W", 3);
    b_string(ct, "auto_pad", "SAME_UPPER");
    b_ints(ct, "strides", (int64_t[]){2, 2}, 2);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[N,3,?,?]");
    tconv_model_free(m);

    /* Stride 1 SAME keeps the size: the same symbol. */
    ct = conv_transpose_model(&m, "N,4,H,W", 3);
    b_string(ct, "auto_pad", "SAME_LOWER");
    infer_ok(m);
    assert_type(m->graph, "Y", "float[N,3,H,W]");
    tconv_model_free(m);

    /* Stride 1, pads (1,1) cancel k=3: same size; pads (0,0) grow it: unknown. */
    ct = conv_transpose_model(&m, "N,4,H,W", 3);
    b_ints(ct, "pads", (int64_t[]){1, 0, 1, 0}, 4);
    infer_ok(m);
    assert_type(m->graph, "Y", "float[N,3,H,?]");
    tconv_model_free(m);
}

static void test_conv_transpose_group_and_invalid(void **state) {
    (void)state;
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "1,4,3");
    b_f32(g, "W", "4,2,3", NULL);
    tconv_node *ct = b_node(g, "ConvTranspose", "ct", "X,W", "Y");
    b_int(ct, "group", 2);
    b_output(g, "Y");
    infer_ok(m);
    assert_type(g, "Y", "float[1,4,5]");
    /* output_padding must be below the stride: an error naming the node. */
    b_ints(ct, "output_padding", (int64_t[]){1}, 1);
    infer_fails(m, (const char *[]){"node 'ct'", "output_padding", NULL});
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- Conv and pooling */

static void test_conv_and_pooling(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3,32,H");
    b_f32(g, "W", "8,3,3,3", NULL);
    tconv_node *conv = b_node(g, "Conv", "conv", "X,W", "C");
    b_ints(conv, "pads", (int64_t[]){1, 1, 1, 1}, 4);
    tconv_node *strided = b_node(g, "Conv", "strided", "X,W", "S");
    b_ints(strided, "strides", (int64_t[]){2, 2}, 2);
    tconv_node *pool = b_node(g, "MaxPool", "pool", "C", "P,I");
    b_ints(pool, "kernel_shape", (int64_t[]){3, 3}, 2);
    b_ints(pool, "strides", (int64_t[]){2, 2}, 2);
    b_int(pool, "ceil_mode", 1);
    tconv_node *avg = b_node(g, "AveragePool", "avg", "C", "A");
    b_ints(avg, "kernel_shape", (int64_t[]){2, 2}, 2);
    b_ints(avg, "strides", (int64_t[]){2, 2}, 2);
    b_string(avg, "auto_pad", "SAME_UPPER");
    b_node(g, "GlobalAveragePool", "gap", "C", "G");
    b_output(g, "G");
    infer_ok(m);
    assert_type(g, "C", "float[N,8,32,H]");
    assert_type(g, "S", "float[N,8,15,?]");
    assert_type(g, "P", "float[N,8,16,?]"); /* ceil((32-3)/2)+1 = 16 */
    assert_type(g, "I", "int64[N,8,16,?]");
    assert_type(g, "A", "float[N,8,16,?]");
    assert_type(g, "G", "float[N,8,1,1]");
    tconv_model_free(m);
}

/* ceil_mode: a last window that would start in the end padding is dropped. */
static void test_pool_ceil_mode_last_window(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "1,1,5,5");
    tconv_node *pool = b_node(g, "MaxPool", "pool", "X", "P");
    b_ints(pool, "kernel_shape", (int64_t[]){2, 2}, 2);
    b_ints(pool, "strides", (int64_t[]){2, 2}, 2);
    b_ints(pool, "pads", (int64_t[]){1, 0, 1, 0}, 4);
    b_int(pool, "ceil_mode", 1);
    b_output(g, "P");
    infer_ok(m);
    /* axis 0: (5+2-2)/2 = 2.5 -> 4 windows, the 4th starts at 6 >= 5+1: 3. axis 1: 2 -> 3. */
    assert_type(g, "P", "float[1,1,3,3]");
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- broadcasting */

static void test_broadcasting(void **state) {
    (void)state;
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "A", TCONV_DTYPE_FLOAT, "N,3,1,W");
    b_input(g, "B", TCONV_DTYPE_FLOAT, "3,H,1");
    b_input(g, "S1", TCONV_DTYPE_FLOAT, "N");
    b_input(g, "S2", TCONV_DTYPE_FLOAT, "M");
    b_input(g, "ONE", TCONV_DTYPE_FLOAT, "1");
    b_input(g, "FIVE", TCONV_DTYPE_FLOAT, "5");
    b_input(g, "UNK", TCONV_DTYPE_FLOAT, "?");
    b_input(g, "SCALAR", TCONV_DTYPE_FLOAT, "");
    b_node(g, "Add", "add", "A,B", "AB");
    b_node(g, "Sub", "same", "S1,S1", "NN");
    b_node(g, "Mul", "diff", "S1,S2", "NM");
    b_node(g, "Div", "one", "ONE,S2", "OM");
    b_node(g, "Add", "five", "FIVE,S2", "FM");
    b_node(g, "Add", "unknown", "UNK,ONE", "U1");
    b_node(g, "Mul", "scalar", "SCALAR,A", "SA");
    b_node(g, "Greater", "cmp", "A,B", "CMP");
    b_node(g, "Where", "where", "CMP,SCALAR,B", "WH");
    b_output(g, "WH");
    infer_ok(m);
    assert_type(g, "AB", "float[N,3,H,W]");
    assert_type(g, "NN", "float[N]");
    assert_type(g, "NM", "float[?]");
    assert_type(g, "OM", "float[M]");
    assert_type(g, "FM", "float[5]");
    assert_type(g, "U1", "float[?]");
    assert_type(g, "SA", "float[N,3,1,W]");
    assert_type(g, "CMP", "bool[N,3,H,W]");
    assert_type(g, "WH", "float[N,3,H,W]");
    tconv_model_free(m);

    m = b_model(17);
    g = m->graph;
    b_input(g, "A", TCONV_DTYPE_FLOAT, "2,3");
    b_input(g, "B", TCONV_DTYPE_FLOAT, "4,3");
    b_node(g, "Add", "bad_add", "A,B", "Y");
    b_output(g, "Y");
    infer_fails(m, (const char *[]){"node 'bad_add'", "broadcast", "axis 0", NULL});
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- Slice and Pad */

static void test_slice_attribute_form(void **state) {
    (void)state;
    tconv_model *m = b_model(9);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "1,21,104,H");
    tconv_node *s = b_node(g, "Slice", "crop", "X", "Y");
    b_ints(s, "starts", (int64_t[]){4, 0}, 2);
    b_ints(s, "ends", (int64_t[]){100, INT64_MAX}, 2);
    b_ints(s, "axes", (int64_t[]){2, 3}, 2);
    tconv_node *s2 = b_node(g, "Slice", "tail", "X", "Z");
    b_ints(s2, "starts", (int64_t[]){-5}, 1);
    b_ints(s2, "ends", (int64_t[]){1000}, 1);
    b_ints(s2, "axes", (int64_t[]){1}, 1);
    b_output(g, "Z");
    infer_ok(m);
    assert_type(g, "Y", "float[1,21,96,H]");
    assert_type(g, "Z", "float[1,5,104,H]");
    tconv_model_free(m);
}

static void test_slice_input_form(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,8,20,30");
    b_input(g, "DYN", TCONV_DTYPE_INT64, "1");
    b_i64(g, "starts", (int64_t[]){1, -1}, 2);
    b_i64(g, "ends", (int64_t[]){-1, -31}, 2);
    b_i64(g, "axes", (int64_t[]){2, -1}, 2);
    b_i64(g, "steps", (int64_t[]){3, -2}, 2);
    b_i64(g, "ax1", (int64_t[]){1}, 1);
    b_node(g, "Slice", "sliced", "X,starts,ends,axes,steps", "Y");
    b_node(g, "Slice", "no_axes", "X,starts,ends", "Y2");
    b_node(g, "Slice", "dyn_starts", "X,DYN,DYN,ax1", "Y3");
    b_node(g, "Slice", "all_dynamic", "X,DYN,DYN", "Y4");
    b_output(g, "Y4");
    infer_ok(m);
    /* axis 2: 1..19 step 3 -> 1,4,...,16: 6; axis 3: 29 down to -1 (exclusive) step -2: 15. */
    assert_type(g, "Y", "float[N,8,6,15]");
    /* axes default to 0, 1: N sliced 1..-1 is unknown; 8: from 7 down past 0 (clamped): 0. */
    assert_type(g, "Y2", "float[?,0,20,30]");
    /* starts/ends unknown but axes known: only axis 1 changes. */
    assert_type(g, "Y3", "float[N,?,20,30]");
    /* Nothing known: rank only. */
    assert_type(g, "Y4", "float[?,?,?,?]");
    tconv_model_free(m);
}

static void test_pad_forms(void **state) {
    (void)state;
    /* Pad-2: pads attribute. */
    tconv_model *m = b_model(10);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3,10,H");
    tconv_node *p = b_node(g, "Pad", "pad2", "X", "Y");
    b_ints(p, "pads", (int64_t[]){0, 0, 1, 0, 0, 0, 2, 0}, 8);
    tconv_node *crop = b_node(g, "Pad", "negative", "X", "Z");
    b_ints(crop, "pads", (int64_t[]){0, 0, -1, 1, 0, 0, -2, 0}, 8);
    b_output(g, "Z");
    infer_ok(m);
    assert_type(g, "Y", "float[N,3,13,H]");
    assert_type(g, "Z", "float[N,3,7,?]");
    tconv_model_free(m);

    /* Pad-11+: pads input; Pad-18 axes input; unknown pads: rank only. */
    m = b_model(18);
    g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3,10,12");
    b_input(g, "DYN", TCONV_DTYPE_INT64, "8");
    b_i64(g, "pads", (int64_t[]){0, 0, 1, 2, 0, 0, 3, 4}, 8);
    b_i64(g, "pads2", (int64_t[]){1, 2, 3, 4}, 4);
    b_i64(g, "axes", (int64_t[]){-1, 2}, 2);
    b_node(g, "Pad", "pad11", "X,pads", "Y");
    b_node(g, "Pad", "pad18", "X,pads2,,axes", "Y2");
    b_node(g, "Pad", "dyn", "X,DYN", "Y3");
    b_output(g, "Y3");
    infer_ok(m);
    assert_type(g, "Y", "float[N,3,14,18]");
    assert_type(g, "Y2", "float[N,3,16,16]"); /* axis 3: 1+3, axis 2: 2+4 */
    assert_type(g, "Y3", "float[?,?,?,?]");
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- Reshape */

static void test_reshape(void **state) {
    (void)state;
    tconv_model *m = b_model(14);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "2,3,4,5");
    b_input(g, "D", TCONV_DTYPE_FLOAT, "N,3,4,5");
    b_input(g, "E", TCONV_DTYPE_FLOAT, "0,4");
    b_input(g, "SHAPE", TCONV_DTYPE_INT64, "3");
    b_i64(g, "s1", (int64_t[]){0, -1}, 2);
    b_i64(g, "s2", (int64_t[]){-1, 10}, 2);
    b_i64(g, "s3", (int64_t[]){0, 0, 0}, 3);
    b_i64(g, "s4", (int64_t[]){0, 4}, 2);
    b_node(g, "Reshape", "copy_and_infer", "X,s1", "R1");
    b_node(g, "Reshape", "infer_first", "X,s2", "R2");
    b_node(g, "Reshape", "symbolic_copy", "D,s1", "R3");
    b_node(g, "Reshape", "dynamic_shape", "X,SHAPE", "R4");
    tconv_node *az = b_node(g, "Reshape", "allowzero", "E,s4", "R5");
    b_int(az, "allowzero", 1);
    b_node(g, "Reshape", "copy_all", "D,s3", "R6");
    b_output(g, "R6");
    infer_ok(m);
    assert_type(g, "R1", "float[2,60]");
    assert_type(g, "R2", "float[12,10]");
    assert_type(g, "R3", "float[N,60]"); /* N cancels on both sides */
    assert_type(g, "R4", "float[?,?,?]");
    assert_type(g, "R5", "float[0,4]");
    assert_type(g, "R6", "float[N,3,4]");
    tconv_model_free(m);

    m = b_model(14);
    g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "2,3,4,5");
    b_i64(g, "s", (int64_t[]){7, -1}, 2);
    b_node(g, "Reshape", "bad_reshape", "X,s", "R");
    b_output(g, "R");
    infer_fails(m, (const char *[]){"node 'bad_reshape'", "120", NULL});
    tconv_model_free(m);
}

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as torch exports a dynamic flatten. */
static void test_reshape_from_shape_chain(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,16,H,W");
    b_i64(g, "zero", (int64_t[]){0}, -1);
    b_i64(g, "axes0", (int64_t[]){0}, 1);
    tconv_node *k = b_node(g, "Constant", "minus_one", "", "m1");
    b_ints(k, "value_ints", (int64_t[]){-1}, 1);
    b_node(g, "Shape", "shape", "X", "shp");
    b_node(g, "Gather", "batch", "shp,zero", "n");
    b_node(g, "Unsqueeze", "unsq", "n,axes0", "n1");
    b_node(g, "Concat", "cat", "n1,m1", "target");
    b_int(g->last, "axis", 0);
    b_node(g, "Reshape", "flatten", "X,target", "Y");
    b_output(g, "Y");
    infer_ok(m);
    assert_type(g, "shp", "int64[4]");
    assert_type(g, "n", "int64[]");
    assert_type(g, "n1", "int64[1]");
    assert_type(g, "target", "int64[2]");
    assert_type(g, "Y", "float[N,?]"); /* 16*H*W is not static */
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- other tensor ops */

static void test_tensor_ops(void **state) {
    (void)state;
    tconv_model *m = b_model(11);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3,4,5");
    b_input(g, "Y", TCONV_DTYPE_FLOAT, "N,2,4,5");
    b_input(g, "M", TCONV_DTYPE_FLOAT, "5,7");
    b_input(g, "IDX", TCONV_DTYPE_INT64, "2,6");
    b_node(g, "Concat", "cat", "X,Y", "cat");
    b_int(g->last, "axis", 1);
    b_node(g, "Transpose", "tr", "X", "tr");
    b_ints(g->last, "perm", (int64_t[]){0, 2, 3, 1}, 4);
    b_node(g, "Transpose", "rev", "X", "rev");
    b_node(g, "Unsqueeze", "unsq", "X", "unsq"); /* opset 11: attribute axes */
    b_ints(g->last, "axes", (int64_t[]){0, -1}, 2);
    b_node(g, "Squeeze", "sq", "unsq", "sq");
    b_ints(g->last, "axes", (int64_t[]){0, 5}, 2);
    b_node(g, "Flatten", "flat", "X", "flat");
    b_node(g, "Flatten", "flat0", "X", "flat0");
    b_int(g->last, "axis", 0);
    b_node(g, "MatMul", "mm", "X,M", "mm");
    b_node(g, "Gather", "gather", "X,IDX", "gather");
    b_int(g->last, "axis", 2);
    b_node(g, "Cast", "cast", "X", "cast");
    b_int(g->last, "to", TCONV_DTYPE_FLOAT16);
    b_node(g, "Softmax", "softmax", "X", "softmax");
    b_node(g, "Shape", "shape", "X", "shape");
    b_output(g, "shape");
    infer_ok(m);
    assert_type(g, "cat", "float[N,5,4,5]");
    assert_type(g, "tr", "float[N,4,5,3]");
    assert_type(g, "rev", "float[5,4,3,N]");
    assert_type(g, "unsq", "float[1,N,3,4,5,1]");
    assert_type(g, "sq", "float[N,3,4,5]");
    assert_type(g, "flat", "float[N,60]");
    assert_type(g, "flat0", "float[1,?]");
    assert_type(g, "mm", "float[N,3,4,7]");
    assert_type(g, "gather", "float[N,3,2,6,5]");
    assert_type(g, "cast", "float16[N,3,4,5]");
    assert_type(g, "softmax", "float[N,3,4,5]");
    assert_type(g, "shape", "int64[4]");
    tconv_model_free(m);
}

static void test_unsqueeze_squeeze_input_form_and_gemm(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "B,1,8");
    b_input(g, "A", TCONV_DTYPE_FLOAT, "6,B");
    b_input(g, "W", TCONV_DTYPE_FLOAT, "10,6");
    b_input(g, "DYN", TCONV_DTYPE_INT64, "2");
    b_i64(g, "ax", (int64_t[]){1, 3}, 2);
    b_i64(g, "ax1", (int64_t[]){1}, 1);
    b_node(g, "Unsqueeze", "unsq", "X,ax", "U");
    b_node(g, "Unsqueeze", "unsq_dyn", "X,DYN", "U2");
    b_node(g, "Squeeze", "sq", "X,ax1", "S");
    tconv_node *gemm = b_node(g, "Gemm", "gemm", "A,W", "G");
    b_int(gemm, "transA", 1);
    b_int(gemm, "transB", 1);
    b_output(g, "G");
    infer_ok(m);
    assert_type(g, "U", "float[B,1,1,1,8]");
    assert_type(g, "U2", "float[?,?,?,?,?]");
    assert_type(g, "S", "float[B,8]");
    assert_type(g, "G", "float[B,10]");
    tconv_model_free(m);
}

static void test_reduce_split_expand_tile(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3,4");
    b_input(g, "C", TCONV_DTYPE_FLOAT, "3,1");
    b_i64(g, "last", (int64_t[]){-1}, 1);
    b_i64(g, "split", (int64_t[]){1, 2}, 2);
    b_i64(g, "shape", (int64_t[]){2, 1, 4}, 3);
    b_i64(g, "reps", (int64_t[]){1, 2, 3}, 3);
    b_node(g, "ReduceMean", "mean", "X", "mean"); /* opset 13: axes is an attribute */
    b_ints(g->last, "axes", (int64_t[]){1}, 1);
    b_node(g, "ReduceSum", "sum", "X,last", "sum"); /* opset 13: axes is an input */
    b_int(g->last, "keepdims", 0);
    b_node(g, "ReduceMax", "max_all", "X", "max_all");
    b_node(g, "Split", "split", "X,split", "s1,s2");
    b_int(g->last, "axis", 1);
    b_node(g, "Split", "halves", "X", "h1,h2");
    b_int(g->last, "axis", -1);
    b_node(g, "Expand", "expand", "C,shape", "expanded");
    b_node(g, "Tile", "tile", "X,reps", "tiled");
    b_node(g, "Shape", "shape_of", "X", "shp");
    b_node(g, "ConstantOfShape", "zeros", "shp", "zeros");
    b_node(g, "Size", "size", "C", "size");
    b_output(g, "size");
    infer_ok(m);
    assert_type(g, "mean", "float[N,1,4]");
    assert_type(g, "sum", "float[N,3]");
    assert_type(g, "max_all", "float[1,1,1]");
    assert_type(g, "s1", "float[N,1,4]");
    assert_type(g, "s2", "float[N,2,4]");
    assert_type(g, "h1", "float[N,3,2]");
    assert_type(g, "h2", "float[N,3,2]");
    assert_type(g, "expanded", "float[2,3,4]");
    assert_type(g, "tiled", "float[N,6,12]");
    assert_type(g, "zeros", "float[N,3,4]");
    assert_type(g, "size", "int64[]");
    tconv_model_free(m);
}

static void test_constant_and_resize(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3,10,15");
    b_f32(g, "scales", "4", (float[]){1.0f, 1.0f, 2.0f, 0.5f});
    b_f32(g, "empty", "0", NULL);
    b_i64(g, "sizes", (int64_t[]){1, 3, 20, 31}, 4);
    tconv_node *k = b_node(g, "Constant", "k", "", "K");
    tconv_tensor *t;
    B_OK(tc_tensor_create(m, "k", TCONV_DTYPE_INT32, 2, (int64_t[]){2, 3}, NULL, 0, &t, &b_err_));
    B_OK(tc_node_set_attr_tensor(k, "value", t, &b_err_));
    b_input(g, "DYN_SCALES", TCONV_DTYPE_FLOAT, "4");
    b_node(g, "Resize", "by_scales", "X,,scales", "R1");
    b_node(g, "Resize", "by_sizes", "X,,empty,sizes", "R2");
    b_node(g, "Resize", "dynamic", "X,,DYN_SCALES", "R3");
    b_output(g, "R3");
    infer_ok(m);
    assert_type(g, "K", "int32[2,3]");
    assert_type(g, "R1", "float[N,3,20,7]");
    assert_type(g, "R2", "float[1,3,20,31]");
    assert_type(g, "R3", "float[?,?,?,?]");
    tconv_model_free(m);

    m = b_model(9);
    g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "1,2,3,4");
    b_f32(g, "scales", "4", (float[]){1.0f, 1.0f, 2.0f, 3.0f});
    b_node(g, "Upsample", "up", "X,scales", "U");
    b_output(g, "U");
    infer_ok(m);
    assert_type(g, "U", "float[1,2,6,12]");
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- merging with declared types */

static void test_declared_types_refined_kept_or_conflicting(void **state) {
    (void)state;
    tconv_model *m;
    conv_transpose_model(&m, "1,4,5,5", 3);
    tconv_graph *g = m->graph;
    tconv_value *y = tc_graph_find_value(g, "Y"), *z = tc_graph_find_value(g, "Z");
    b_type(y, TCONV_DTYPE_FLOAT, "batch,3,H,?"); /* symbolic and unknown: refined */
    B_OK(tc_graph_add_value_info(g, y, NULL, &b_err_));
    b_type(z, TCONV_DTYPE_FLOAT, "1,3,7,7"); /* matches: kept, not dirty */
    tconv_value *r;
    B_OK(tc_graph_get_or_add_value(g, "R", &r, &b_err_));
    b_node(g, "Relu", "relu_y", "Y", "R");
    b_output(g, "R");
    b_type(r, TCONV_DTYPE_FLOAT, "1,3,7,7");
    r->type.dims[3].value = -1; /* dim_value -1, as some exporters write "dynamic" */
    infer_ok(m);
    assert_type(g, "Y", "float[1,3,7,7]");
    assert_type(g, "R", "float[1,3,7,7]");
    assert_true(y->type_dirty);
    assert_false(z->type_dirty);
    size_t n_value_info = g->n_value_info;
    infer_ok(m); /* a second run changes nothing */
    assert_int_equal(g->n_value_info, n_value_info);
    assert_int_equal(n_value_info, 1);
    tconv_model_free(m);

    conv_transpose_model(&m, "1,4,5,5", 3);
    b_type(tc_graph_find_value(m->graph, "Z"), TCONV_DTYPE_FLOAT, "1,3,7,8");
    infer_fails(m, (const char *[]){"node 'relu'", "'Z'", "axis 3", "declared 8", "gives 7", NULL});
    tconv_model_free(m);

    conv_transpose_model(&m, "1,4,5,5", 3);
    b_type(tc_graph_find_value(m->graph, "Y"), TCONV_DTYPE_FLOAT, "1,3,7");
    infer_fails(m, (const char *[]){"node 'ct'", "'Y'", "rank 3", "rank 4", NULL});
    tconv_model_free(m);

    conv_transpose_model(&m, "1,4,5,5", 3);
    b_type(tc_graph_find_value(m->graph, "Y"), TCONV_DTYPE_INT32, NULL);
    infer_fails(m, (const char *[]){"node 'ct'", "'Y'", "int32", "float", NULL});
    tconv_model_free(m);
}

/* Where inference cannot tell (unknown op, other domain, unknown input), declared types stay
 * exactly as they are and are not marked dirty; untyped outputs stay untyped. */
static void test_unknown_ops_leave_types_alone(void **state) {
    (void)state;
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,3");
    b_input(g, "NOSHAPE", TCONV_DTYPE_FLOAT, NULL);
    b_node(g, "FancyOp", "fancy", "X", "A");
    tconv_node *custom;
    B_OK(tc_node_create(g, "Relu", "com.example", "custom", &custom, &b_err_));
    B_OK(tc_node_add_input(custom, tc_graph_find_value(g, "X"), &b_err_));
    B_OK(tc_node_add_output(custom, b_value(g, "B"), &b_err_));
    tc_graph_append_node(g, custom);
    b_node(g, "Relu", "relu", "A", "C");
    b_node(g, "Relu", "relu2", "NOSHAPE", "D");
    b_type(tc_graph_find_value(g, "C"), TCONV_DTYPE_FLOAT, "N,?");
    b_type(tc_graph_find_value(g, "D"), TCONV_DTYPE_FLOAT, "7");
    b_output(g, "B");
    b_output(g, "C");
    b_output(g, "D");
    infer_ok(m);
    assert_type(g, "A", "none");
    assert_type(g, "B", "none");
    assert_type(g, "C", "float[N,?]");
    assert_type(g, "D", "float[7]");
    assert_false(tc_graph_find_value(g, "C")->type_dirty);
    assert_false(tc_graph_find_value(g, "D")->type_dirty);
    assert_int_equal(g->n_value_info, 0);
    tconv_model_free(m);
}

/* ---------------------------------------------------------------- subgraphs */

/* If: each branch is inferred inside (using outer values), and the If output keeps the dims
 * both branches agree on. */
static void test_if_branches(void **state) {
    (void)state;
    tconv_model *m = b_model(11);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "2,4,10");
    b_input(g, "cond", TCONV_DTYPE_BOOL, "");
    b_f32(g, "W", "4,3,3", NULL);
    tconv_node *if_node = b_node(g, "If", "if", "cond", "Y");
    tconv_graph *then_g = b_subgraph(g, "then");
    tconv_node *ct = b_node(then_g, "ConvTranspose", "then_ct", "X,W", "then_y");
    b_ints(ct, "strides", (int64_t[]){2}, 1);
    b_ints(ct, "pads", (int64_t[]){1, 1}, 2);
    b_ints(ct, "output_padding", (int64_t[]){1}, 1);
    b_output(then_g, "then_y");
    tconv_graph *else_g = b_subgraph(g, "else");
    ct = b_node(else_g, "ConvTranspose", "else_ct", "X,W", "else_y");
    b_ints(ct, "strides", (int64_t[]){2}, 1);
    b_string(ct, "auto_pad", "SAME_LOWER");
    b_i64(else_g, "s", (int64_t[]){1}, 1);
    b_i64(else_g, "e", (int64_t[]){-1}, 1);
    b_i64(else_g, "a", (int64_t[]){1}, 1);
    b_node(else_g, "Slice", "else_crop", "else_y,s,e,a", "else_z");
    b_output(else_g, "else_z");
    b_graph_attr(if_node, "then_branch", then_g);
    b_graph_attr(if_node, "else_branch", else_g);
    b_output(g, "Y");
    infer_ok(m);
    assert_type(then_g, "then_y", "float[2,3,20]"); /* 2*9+3-2+1 */
    assert_type(else_g, "else_y", "float[2,3,20]");
    assert_type(else_g, "else_z", "float[2,1,20]");
    assert_type(g, "Y", "float[2,?,20]");
    /* else_y is intermediate in the else branch: its value_info goes there. */
    assert_true(tc_graph_has_value_info(else_g, tc_graph_find_value(else_g, "else_y")));
    tconv_model_free(m);
}

static void test_loop_body_is_inferred(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "N,8");
    b_input(g, "trips", TCONV_DTYPE_INT64, "");
    tconv_node *loop = b_node(g, "Loop", "loop", "trips,,X", "out");
    tconv_graph *body = b_subgraph(g, "body");
    b_input(body, "i", TCONV_DTYPE_INT64, "");
    b_input(body, "c", TCONV_DTYPE_BOOL, "");
    b_input(body, "acc", TCONV_DTYPE_FLOAT, "N,8");
    b_node(body, "Add", "acc_plus_x", "acc,X", "next");
    b_node(body, "Identity", "keep_going", "c", "c_out");
    b_output(body, "c_out");
    b_output(body, "next");
    b_graph_attr(loop, "body", body);
    b_output(g, "out");
    infer_ok(m);
    assert_type(body, "next", "float[N,8]");
    assert_type(body, "c_out", "bool[]");
    assert_type(g, "out", "float[N,8]"); /* the loop-carried value: X and next agree */
    tconv_model_free(m);
}

/* Scan: the state keeps its type; a scan output is the body's per-step type stacked along
 * scan_output_axes with the scan input's length (axis 1 of X here). */
static void test_scan_outputs_are_stacked(void **state) {
    (void)state;
    tconv_model *m = b_model(11);
    tconv_graph *g = m->graph;
    b_input(g, "S", TCONV_DTYPE_FLOAT, "4");
    b_input(g, "X", TCONV_DTYPE_FLOAT, "4,T");
    tconv_node *scan = b_node(g, "Scan", "scan", "S,X", "S_final,Y");
    tconv_graph *body = b_subgraph(g, "body");
    b_input(body, "s", TCONV_DTYPE_FLOAT, "4");
    b_input(body, "x", TCONV_DTYPE_FLOAT, "4");
    b_node(body, "Add", "step", "s,x", "s_next");
    b_node(body, "Relu", "out", "x", "y");
    b_output(body, "s_next");
    b_output(body, "y");
    b_graph_attr(scan, "body", body);
    assert_int_equal(tc_node_set_attr_int(scan, "num_scan_inputs", 1, NULL), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(scan, "scan_input_axes", (int64_t[]){1}, 1, NULL),
                     TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(scan, "scan_output_axes", (int64_t[]){-1}, 1, NULL),
                     TCONV_OK);
    b_output(g, "S_final");
    b_output(g, "Y");
    infer_ok(m);
    assert_type(g, "S_final", "float[4]");
    assert_type(g, "Y", "float[4,T]");
    tconv_model_free(m);
}

/* A long chain is one linear walk (and every intermediate gets its value_info). */
static void test_long_chain(void **state) {
    (void)state;
    enum { N = 100000 };
    tconv_model *m = b_model(17);
    tconv_graph *g = m->graph;
    b_input(g, "v0", TCONV_DTYPE_FLOAT, "N,3,8");
    b_input(g, "bias", TCONV_DTYPE_FLOAT, "8");
    for (int i = 0; i < N; i++) {
        char in[32], out[32];
        snprintf(in, sizeof in, "v%d", i);
        snprintf(out, sizeof out, "v%d", i + 1);
        tconv_node *n;
        tconv_value *y;
        B_OK(tc_node_create(g, i % 2 ? "Relu" : "Add", NULL, NULL, &n, &b_err_));
        B_OK(tc_node_add_input(n, tc_graph_find_value(g, in), &b_err_));
        if (i % 2 == 0)
            B_OK(tc_node_add_input(n, tc_graph_find_value(g, "bias"), &b_err_));
        B_OK(tc_graph_get_or_add_value(g, out, &y, &b_err_));
        B_OK(tc_node_add_output(n, y, &b_err_));
        tc_graph_append_node(g, n);
    }
    char last[32];
    snprintf(last, sizeof last, "v%d", N);
    b_output(g, last);
    infer_ok(m);
    assert_type(g, last, "float[N,3,8]");
    assert_int_equal(g->n_value_info, N - 1);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_transpose_same_static),
        cmocka_unit_test(test_conv_transpose_same_odd_total_and_output_padding),
        cmocka_unit_test(test_conv_transpose_explicit_pads),
        cmocka_unit_test(test_conv_transpose_output_shape),
        cmocka_unit_test(test_conv_transpose_dynamic),
        cmocka_unit_test(test_conv_transpose_group_and_invalid),
        cmocka_unit_test(test_conv_and_pooling),
        cmocka_unit_test(test_pool_ceil_mode_last_window),
        cmocka_unit_test(test_broadcasting),
        cmocka_unit_test(test_slice_attribute_form),
        cmocka_unit_test(test_slice_input_form),
        cmocka_unit_test(test_pad_forms),
        cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_reshape_from_shape_chain),
        cmocka_unit_test(test_tensor_ops),
        cmocka_unit_test(test_unsqueeze_squeeze_input_form_and_gemm),
        cmocka_unit_test(test_reduce_split_expand_tile),
        cmocka_unit_test(test_constant_and_resize),
        cmocka_unit_test(test_declared_types_refined_kept_or_conflicting),
        cmocka_unit_test(test_unknown_ops_leave_types_alone),
        cmocka_unit_test(test_if_branches),
        cmocka_unit_test(test_loop_body_is_inferred),
        cmocka_unit_test(test_scan_outputs_are_stacked),
        cmocka_unit_test(test_long_chain),
    };
    return cmocka_run_group_tests_name("passes.shape_infer", tests, NULL, NULL);
}
