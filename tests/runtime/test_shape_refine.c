/* Shapes sharpened while constants are folded (tc_session_options.refine_types, set by the API to
 * shape inference: src/api/api_session.c, src/runtime/session/session_constfold.c). A value whose
 * shape only a folded constant tells (a Pad whose pads a Reshape/Transpose chain computes:
 * inference tracks no 2-D contents) used to keep every Shape after it, and all they feed, as
 * run-time steps. Each case runs the graph through the API's session (refined), through a plain
 * session (the model's types only) and as written (options.unfused), and requires the same results.
 */
#include "api/api_internal.h"
#include "rt_test_util.h"

#include <stdio.h>

typedef struct counted_run {
    tc_rt_tensor out;
    uint64_t kernel_calls;
} counted_run;

static counted_run run_session(tc_session *s, const tc_rt_tensor *inputs, size_t n) {
    counted_run r;
    memset(&r, 0, sizeof r);
    tc_error err;
    tconv_status st = tc_session_run(s, inputs, n, &r.out, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    r.kernel_calls = stats.n_kernel_calls;
    return r;
}

/* mode 0: the API's session (refined); 1: a plain session; 2: unfused. */
static counted_run run_mode(tconv_model *m, int mode, const tc_rt_tensor *inputs, size_t n) {
    tc_session_options options;
    tc_session_options_init(&options);
    options.n_threads = 1;
    options.unfused = mode == 2;
    tc_session *s = NULL;
    tc_error err;
    tconv_status st = mode == 0 ? tc_api_session_create(m, &options, &s, &err)
                                : tc_session_create(m, &options, &s, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    counted_run r = run_session(s, inputs, n);
    tc_session_free(s);
    return r;
}

/* x[1,2,5] -> Pad(x, pads) -> y; pads = Reshape(Transpose(Reshape(p, [2,3])), [6]) (constants,
 * but 2-D on the way: inference cannot tell them); then
 * out = Reshape(y, Concat(Unsqueeze(Gather(Shape(y), 1)), [-1])). */
static tconv_model *computed_pads_model(void) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    tc_error err;
    int64_t x_dims[3] = {1, 2, 5};
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 3, x_dims);
    /* [[0, 0, 1], [0, 0, 2]] transposed, flattened: pads begin (0, 0, 0), end (0, 1, 2) */
    tconv_value *p = rtt_init_i64(g, "p", 6, (int64_t[]){0, 0, 1, 0, 0, 2});
    tconv_value *shape23 = rtt_init_i64(g, "shape23", 2, (int64_t[]){2, 3});
    tconv_value *flat = rtt_init_i64(g, "flat", 1, (int64_t[]){-1});
    tconv_value *axes0 = rtt_init_i64(g, "axes0", 1, (int64_t[]){0});
    tconv_value *one =
        rtt_init(g, "one", TCONV_DTYPE_INT64, 0, NULL, (int64_t[]){1}, sizeof(int64_t));
    rtt_node(g, "Reshape", "p2", (tconv_value *[]){p, shape23}, 2, (const char *[]){"p2"}, 1);
    tconv_node *t = rtt_node(g, "Transpose", "pt", (tconv_value *[]){rtt_value(g, "p2")}, 1,
                             (const char *[]){"pt"}, 1);
    assert_int_equal(tc_node_set_attr_ints(t, "perm", (int64_t[]){1, 0}, 2, &err), TCONV_OK);
    rtt_node(g, "Reshape", "pads", (tconv_value *[]){rtt_value(g, "pt"), flat}, 2,
             (const char *[]){"pads"}, 1);
    rtt_node(g, "Pad", "pad", (tconv_value *[]){x, rtt_value(g, "pads")}, 2, (const char *[]){"y"},
             1);
    rtt_node(g, "Shape", "shape", (tconv_value *[]){rtt_value(g, "y")}, 1, (const char *[]){"s"},
             1);
    rtt_node(g, "Gather", "dim1", (tconv_value *[]){rtt_value(g, "s"), one}, 2,
             (const char *[]){"d1"}, 1);
    rtt_node(g, "Unsqueeze", "dim1_1d", (tconv_value *[]){rtt_value(g, "d1"), axes0}, 2,
             (const char *[]){"u"}, 1);
    rtt_node(g, "Concat", "target", (tconv_value *[]){rtt_value(g, "u"), flat}, 2,
             (const char *[]){"c"}, 1);
    tconv_node *cat = g->last;
    assert_int_equal(tc_node_set_attr_int(cat, "axis", 0, &err), TCONV_OK);
    rtt_node(g, "Reshape", "out", (tconv_value *[]){rtt_value(g, "y"), rtt_value(g, "c")}, 2,
             (const char *[]){"out"}, 1);
    rtt_output(g, "out");
    return m;
}

static void test_shape_after_computed_pads_folds(void **state) {
    (void)state;
    tconv_model *m = computed_pads_model();
    int64_t dims[3] = {1, 2, 5};
    float xs[10];
    for (int i = 0; i < 10; i++)
        xs[i] = (float)i - 4.5f;
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 3, dims, xs);
    tconv_value *y = rtt_value(m->graph, "y");
    int y_rank_before = y->type.rank;

    counted_run refined = run_mode(m, 0, &x, 1);
    counted_run plain = run_mode(m, 1, &x, 1);
    counted_run written = run_mode(m, 2, &x, 1);
    assert_int_equal(written.kernel_calls, 9);
    /* the pads chain folds either way; without y's shape, Shape..Concat run every time */
    assert_int_equal(plain.kernel_calls, 6);
    /* Pad, the Shape as a guard of y's planned shape, Reshape */
    assert_int_equal(refined.kernel_calls, 3);
    rtt_assert_dims(&written.out, 2, (int64_t[]){3, 7});
    rtt_assert_dims(&refined.out, 2, (int64_t[]){3, 7});
    rtt_assert_floats(&refined.out, written.out.data, 21);
    rtt_assert_floats(&plain.out, written.out.data, 21);
    /* the caller's model keeps the types it had */
    assert_int_equal(y->type.rank, y_rank_before);
    tc_rt_tensor_release(&refined.out);
    tc_rt_tensor_release(&plain.out);
    tc_rt_tensor_release(&written.out);
    tc_rt_tensor_release(&x);
    tconv_model_free(m);
}

/* models/encodec_decoder: EnCodec's padding, computed from the length at run time, is 751
 * nodes as exported; the static export runs only its tensor ops (and the Shape guards). */
static void test_encodec_decoder_runs_its_tensor_ops(void **state) {
    (void)state;
    tconv_model *m = NULL;
    char message[512];
    tconv_status st = tconv_model_read_file(TCONV_SOURCE_DIR "/models/encodec_decoder/model.onnx",
                                            NULL, &m, message, sizeof message);
    if (st != TCONV_OK)
        print_error("%s\n", message);
    assert_int_equal(st, TCONV_OK);
    int64_t dims[3] = {1, 32, 20};
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 3, dims, NULL);
    float *xs = x.data;
    for (int i = 0; i < 640; i++)
        xs[i] = (float)((i * 7) % 13) / 6.0f - 1.0f;
    counted_run refined = run_mode(m, 0, &x, 1);
    counted_run written = run_mode(m, 2, &x, 1);
    assert_int_equal(written.kernel_calls, 751);
    /* 11 Pad, 11 Conv, 3 ConvTranspose, 3 Slice, 10 Elu, 4 Add, 2 LSTM, 2 Squeeze, 2 Transpose
     * (48 tensor ops) and 14 Shape guards; 377 before sharpened types */
    printf("encodec_decoder: %llu kernel calls (751 as written)\n",
           (unsigned long long)refined.kernel_calls);
    assert_true(refined.kernel_calls <= 62);
    rtt_assert_dims(&refined.out, written.out.rank, written.out.dims);
    const float *a = refined.out.data, *b = written.out.data;
    for (int64_t i = 0; i < written.out.n_elements; i++)
        assert_true(a[i] == b[i]);
    tc_rt_tensor_release(&refined.out);
    tc_rt_tensor_release(&written.out);
    tc_rt_tensor_release(&x);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_after_computed_pads_folds),
        cmocka_unit_test(test_encodec_decoder_runs_its_tensor_ops),
    };
    return cmocka_run_group_tests_name("runtime.shape_refine", tests, NULL, NULL);
}
