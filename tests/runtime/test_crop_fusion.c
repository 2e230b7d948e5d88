/* Crop fusion in the executor (src/runtime/session/session_fuse.c): a ConvTranspose -> Slice -> Pad
 * -> Add chain runs as one ConvTranspose kernel call that writes the chain's result. Each case runs
 * the same graph twice, once fusable and once with the ConvTranspose output also a graph output (a
 * second reader, so nothing may be fused), and requires identical results; the kernel-call counts
 * show which ran fused. */
#include "rt_test_util.h"

#define N_X 18  /* X 1x2x3x3 */
#define N_W 36  /* W 2x2x3x3 */
#define N_Y 512 /* room for any output here */

typedef struct chain_spec {
    int64_t slice_starts[2], slice_ends[2];
    bool slice, pad, add;
    int64_t pads[8];       /* Pad-11 pads, rank 4 */
    int64_t slice_axes[2]; /* with split_slice: each Slice's one axis (default 2, 3) */
    bool split_slice;      /* one Slice per axis (exporters write a crop so) */
} chain_spec;

/* The crop as one Slice over axes 2 and 3, or (split_slice) as two one-axis Slices. */
static const char *add_slices(tconv_graph *g, const chain_spec *c, const char *current) {
    if (!c->split_slice) {
        tconv_value *in[4] = {rtt_value(g, current), rtt_init_i64(g, "starts", 2, c->slice_starts),
                              rtt_init_i64(g, "ends", 2, c->slice_ends),
                              rtt_init_i64(g, "axes", 2, (int64_t[]){2, 3})};
        rtt_node(g, "Slice", "crop", in, 4, (const char *[]){"u"}, 1);
        return "u";
    }
    static const char *const names[2][4] = {{"crop0", "starts0", "ends0", "axes0"},
                                            {"crop1", "starts1", "ends1", "axes1"}};
    static const char *const outs[2] = {"u0", "u"};
    for (int i = 0; i < 2; i++) {
        int64_t axis = c->slice_axes[0] || c->slice_axes[1] ? c->slice_axes[i] : 2 + i;
        tconv_value *in[4] = {rtt_value(g, current),
                              rtt_init_i64(g, names[i][1], 1, &c->slice_starts[i]),
                              rtt_init_i64(g, names[i][2], 1, &c->slice_ends[i]),
                              rtt_init_i64(g, names[i][3], 1, &axis)};
        rtt_node(g, "Slice", names[i][0], in, 4, &outs[i], 1);
        current = outs[i];
    }
    return current;
}

/* X -> ConvTranspose(stride 2) -> [Slice] -> [Pad] -> [Add bias] -> "y"; with `expose`, the
 * ConvTranspose output "t" is a graph output too. */
static tconv_model *chain_model(const chain_spec *c, bool expose) {
    tconv_model *m = rtt_model(13);
    tconv_graph *g = m->graph;
    int64_t x_dims[4] = {1, 2, 3, 3}, w_dims[4] = {2, 2, 3, 3}, b_dims[3] = {2, 1, 1};
    float w[N_W], b[2] = {0.5f, -0.25f};
    for (int i = 0; i < N_W; i++)
        w[i] = (float)((i * 7) % 11) / 8.0f - 0.5f;
    tconv_value *x = rtt_input(g, "x", TCONV_DTYPE_FLOAT, 4, x_dims);
    tconv_value *wv = rtt_init(g, "w", TCONV_DTYPE_FLOAT, 4, w_dims, w, sizeof w);
    const char *t_name[] = {"t"};
    tconv_node *ct = rtt_node(g, "ConvTranspose", "ct", (tconv_value *[]){x, wv}, 2, t_name, 1);
    tc_error err;
    assert_int_equal(tc_node_set_attr_ints(ct, "strides", (int64_t[]){2, 2}, 2, &err), TCONV_OK);
    const char *current = "t";
    if (c->slice)
        current = add_slices(g, c, current);
    if (c->pad) {
        tconv_value *in[2] = {rtt_value(g, current), rtt_init_i64(g, "pads", 8, c->pads)};
        rtt_node(g, "Pad", "extend", in, 2, (const char *[]){"v"}, 1);
        current = "v";
    }
    if (c->add) {
        tconv_value *in[2] = {rtt_value(g, current),
                              rtt_init(g, "b", TCONV_DTYPE_FLOAT, 3, b_dims, b, sizeof b)};
        rtt_node(g, "Add", "bias", in, 2, (const char *[]){"y"}, 1);
        current = "y";
    }
    rtt_output(g, current);
    if (expose)
        rtt_output(g, "t");
    return m;
}

/* Runs the model; returns output 0 (caller releases) and the kernel calls made. */
static tc_rt_tensor run_chain(tconv_model *m, uint64_t *kernel_calls) {
    int64_t x_dims[4] = {1, 2, 3, 3};
    float x[N_X];
    for (int i = 0; i < N_X; i++)
        x[i] = (float)((i * 5) % 7) / 4.0f - 0.75f;
    tc_rt_tensor in = rtt_tensor(TCONV_DTYPE_FLOAT, 4, x_dims, x);
    tc_rt_tensor out[2];
    memset(out, 0, sizeof out);
    *kernel_calls = rtt_run_counted(m, NULL, &in, 1, out);
    tc_rt_tensor_release(&in);
    tc_rt_tensor_release(&out[1]);
    return out[0];
}

/* steps: kernel calls unfused; fused_steps: kernel calls when the chain fuses. */
static void check_chain_calls(const chain_spec *c, int steps, int fused_steps) {
    tconv_model *fusable = chain_model(c, false), *plain = chain_model(c, true);
    uint64_t fused_calls, plain_calls;
    tc_rt_tensor got = run_chain(fusable, &fused_calls);
    tc_rt_tensor want = run_chain(plain, &plain_calls);
    assert_int_equal(plain_calls, (uint64_t)steps);
    assert_int_equal(fused_calls, (uint64_t)fused_steps);
    rtt_assert_dims(&got, want.rank, want.dims);
    rtt_assert_floats(&got, want.data, (size_t)want.n_elements);
    tc_rt_tensor_release(&got);
    tc_rt_tensor_release(&want);
    tconv_model_free(fusable);
    tconv_model_free(plain);
}

static void check_chain(const chain_spec *c, int steps) {
    check_chain_calls(c, steps, 1);
}

/* The legalization's crop: drop the first row and column, and the last ones. */
static void test_slice_only(void **state) {
    (void)state;
    chain_spec c = {.slice = true, .slice_starts = {1, 1}, .slice_ends = {-1, -1}};
    check_chain(&c, 2);
}

/* Crop then extension past the VALID output, bias after the Pad (output_shape beyond F). */
static void test_slice_pad_add(void **state) {
    (void)state;
    chain_spec c = {.slice = true,
                    .slice_starts = {1, 0},
                    .slice_ends = {INT64_MAX, 5},
                    .pad = true,
                    .pads = {0, 0, 0, 0, 0, 0, 2, 1},
                    .add = true};
    check_chain(&c, 4);
}

/* Zeros added where the crop removed computed values (not a legalization form): the zeros
 * must stay zeros, not come back as computed values. */
static void test_pad_inside_cropped_region(void **state) {
    (void)state;
    chain_spec c = {.slice = true,
                    .slice_starts = {2, 3},
                    .slice_ends = {5, 6},
                    .pad = true,
                    .pads = {0, 0, 2, 1, 0, 0, 1, 2},
                    .add = true};
    check_chain(&c, 4);
}

/* Pad and Add without a crop (negative pads everywhere: extension only). */
static void test_pad_add_only(void **state) {
    (void)state;
    chain_spec c = {.pad = true, .pads = {0, 0, 1, 0, 0, 0, 0, 1}, .add = true};
    check_chain(&c, 3);
}

/* An exporter's crop, one Slice per axis (FCN's [:, :, 1:-1, 1:-1]), then the Pad and bias:
 * both Slices fuse. */
static void test_split_slices_pad_add(void **state) {
    (void)state;
    chain_spec c = {.slice = true,
                    .split_slice = true,
                    .slice_starts = {1, 2},
                    .slice_ends = {-1, -2},
                    .pad = true,
                    .pads = {0, 0, 1, 0, 0, 0, 0, 2},
                    .add = true};
    check_chain_calls(&c, 5, 1);
    chain_spec one_sided = {
        .slice = true, .split_slice = true, .slice_starts = {-4, 0}, .slice_ends = {INT64_MAX, 3}};
    check_chain_calls(&one_sided, 3, 1);
}

/* Two Slices of the same axis: only the first fuses (the second is relative to the first's
 * output), and the second still runs. */
static void test_same_axis_slices(void **state) {
    (void)state;
    chain_spec c = {.slice = true,
                    .split_slice = true,
                    .slice_axes = {3, 3},
                    .slice_starts = {1, 1},
                    .slice_ends = {-1, -1},
                    .add = true};
    check_chain_calls(&c, 4, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_only),
        cmocka_unit_test(test_slice_pad_add),
        cmocka_unit_test(test_pad_inside_cropped_region),
        cmocka_unit_test(test_pad_add_only),
        cmocka_unit_test(test_split_slices_pad_add),
        cmocka_unit_test(test_same_axis_slices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
