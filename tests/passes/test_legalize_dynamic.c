/* output_shape on a dynamic input: the rewrite computes the crop in the graph. For a sweep of
 * 1-D nodes (kernel, stride, dilation, output_padding, auto_pad, output_shape) under every
 * convention, the rewrite of the dynamic model run at each input size must equal the rewrite of
 * the same node with that size static (whose crop the geometry resolves in C). With totals from
 * very negative to large, onnxruntime's refusal window and crops that start past F included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir_builder.h"
#include "passes/pass.h"
#include "testutil.h"

typedef struct sweep_node {
    int rank; /* spatial axes, 1 or 2 */
    int64_t k[2], s[2], d[2], op[2], o[2];
    const char *auto_pad;
} sweep_node;

/* X[1,2,spatial] -> ConvTranspose (W 2x3xk initializer, B initializer) -> Y; x[i] 0: that axis
 * is symbolic. */
static tconv_model *build(const sweep_node *n, const int64_t *x) {
    tconv_model *m = b_model(13);
    char dims[64] = "1,2", w_dims[64] = "2,3";
    int64_t w_count = 6;
    for (int i = 0; i < n->rank; i++) {
        size_t used = strlen(dims);
        if (x[i] > 0)
            snprintf(dims + used, sizeof dims - used, ",%lld", (long long)x[i]);
        else
            snprintf(dims + used, sizeof dims - used, ",L%d", i);
        used = strlen(w_dims);
        snprintf(w_dims + used, sizeof w_dims - used, ",%lld", (long long)n->k[i]);
        w_count *= n->k[i];
    }
    b_input(m->graph, "X", TCONV_DTYPE_FLOAT, dims);
    float w[2 * 3 * 4 * 4], b[3] = {0.5f, -0.25f, 1.0f};
    assert_true(w_count <= (int64_t)(sizeof w / sizeof w[0]));
    for (int64_t i = 0; i < w_count; i++)
        w[i] = (float)((i * 7) % 11) / 4.0f - 1.0f;
    b_f32(m->graph, "W", w_dims, w);
    b_f32(m->graph, "B", "3", b);
    tconv_node *node = b_node(m->graph, "ConvTranspose", "ct", "X,W,B", "Y");
    b_ints(node, "strides", n->s, (size_t)n->rank);
    b_ints(node, "dilations", n->d, (size_t)n->rank);
    b_ints(node, "output_padding", n->op, (size_t)n->rank);
    b_ints(node, "output_shape", n->o, (size_t)n->rank);
    if (n->auto_pad)
        b_string(node, "auto_pad", n->auto_pad);
    b_output(m->graph, "Y");
    return m;
}

static void describe(const sweep_node *n, const int64_t *x, tconv_convention convention, char *buf,
                     size_t size) {
    size_t used = (size_t)snprintf(buf, size, "%s %s:", n->auto_pad ? n->auto_pad : "NOTSET",
                                   tconv_convention_name(convention));
    for (int i = 0; i < n->rank && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, " [k%lld s%lld d%lld op%lld O%lld x%lld]",
                                 (long long)n->k[i], (long long)n->s[i], (long long)n->d[i],
                                 (long long)n->op[i], (long long)n->o[i], (long long)x[i]);
}

static tconv_status legalize(tconv_model *m, tconv_convention convention, tc_error *err) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    options.convention = convention;
    return tc_run_passes(m, "legalize-conv-transpose,dce", &options, NULL, NULL, err);
}

static bool has_op(const tconv_model *m, const char *op_type) {
    for (tconv_node *n = m->graph->first; n; n = n->next) {
        if (strcmp(n->op_type, op_type) == 0)
            return true;
    }
    return false;
}

/* The dynamic rewrite at size x against the static rewrite at x (and, under ONNX, against the
 * original node run by the runtime's ConvTranspose). */
static void check_size(const sweep_node *n, tconv_convention convention, tconv_model *dynamic,
                       const int64_t *x, int *compared) {
    tconv_model *fixed = build(n, x);
    tc_error err;
    char what[256];
    describe(n, x, convention, what, sizeof what);
    uint64_t seed = (uint64_t)(x[0] * 131 + x[n->rank - 1] * 7 + n->o[0]);
    tconv_status st = TCONV_OK;
    if (convention == TCONV_CONVENTION_ONNX) /* the runtime's ConvTranspose follows ONNX */
        st = tc_test_compare_models(fixed, dynamic, seed, 1e-5, 1e-5, &err);
    if (st != TCONV_OK)
        fail_msg("%s: the original differs: %s", what, err.message);
    st = legalize(fixed, convention, &err);
    if (st == TCONV_OK) {
        assert_false(has_op(fixed, "Shape")); /* static: constant crop */
        st = tc_test_compare_models(fixed, dynamic, seed, 1e-5, 1e-5, &err);
        if (st != TCONV_OK)
            fail_msg("%s: %s", what, err.message);
        (*compared)++;
    }
    tconv_model_free(fixed);
}

static tconv_model *legalized_dynamic(const sweep_node *n, tconv_convention convention) {
    static const int64_t symbolic[2] = {0, 0};
    tconv_model *dynamic = build(n, symbolic);
    tc_error err;
    if (legalize(dynamic, convention, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_true(has_op(dynamic, "Shape"));
    return dynamic;
}

static const char *const PADS[] = {NULL, "SAME_UPPER", "SAME_LOWER"};
static const tconv_convention CONVENTIONS[] = {TCONV_CONVENTION_ONNX, TCONV_CONVENTION_ORT,
                                               TCONV_CONVENTION_ORT_LEGACY};

static void test_dynamic_crop_matches_the_static_rewrite_1d(void **state) {
    (void)state;
    static const int64_t outputs[] = {1, 3, 6, 10, 17};
    int compared = 0;
    for (int64_t k = 1; k <= 3; k++)
        for (int64_t s = 1; s <= 3; s++)
            for (int64_t d = 1; d <= 5; d += 2) /* d 5: windows past a short F */
                for (int64_t op = 0; op < (s > d ? s : d); op++)
                    for (size_t p = 0; p < 3; p++)
                        for (size_t oi = 0; oi < sizeof outputs / sizeof outputs[0]; oi++)
                            for (size_t c = 0; c < 3; c++) {
                                sweep_node n = {1, {k}, {s}, {d}, {op}, {outputs[oi]}, PADS[p]};
                                tconv_model *dynamic = legalized_dynamic(&n, CONVENTIONS[c]);
                                for (int64_t x = 1; x <= 6; x++)
                                    check_size(&n, CONVENTIONS[c], dynamic, &x, &compared);
                                tconv_model_free(dynamic);
                            }
    print_message("1-D: compared %d (node, convention, size) triples\n", compared);
    assert_true(compared > 1000);
}

/* Two axes: onnxruntime refuses the node when either axis is refused, so its clamp on the other
 * axis must not apply then. */
static void test_dynamic_crop_matches_the_static_rewrite_2d(void **state) {
    (void)state;
    static const int64_t axes[][4] = {{2, 3, 1, 1}, {3, 2, 1, 0}, {1, 4, 1, 2}, {2, 1, 3, 1}};
    static const int64_t outputs[] = {4, 11};
    int compared = 0;
    for (size_t a0 = 0; a0 < 4; a0++)
        for (size_t a1 = 0; a1 < 4; a1++)
            for (size_t o0 = 0; o0 < 2; o0++)
                for (size_t o1 = 0; o1 < 2; o1++)
                    for (size_t p = 0; p < 3; p++)
                        for (size_t c = 0; c < 3; c++) {
                            const int64_t *u = axes[a0], *v = axes[a1];
                            sweep_node n = {2,
                                            {u[0], v[0]},
                                            {u[1], v[1]},
                                            {u[2], v[2]},
                                            {u[3], v[3]},
                                            {outputs[o0], outputs[o1]},
                                            PADS[p]};
                            tconv_model *dynamic = legalized_dynamic(&n, CONVENTIONS[c]);
                            for (int64_t x0 = 1; x0 <= 4; x0++)
                                for (int64_t x1 = 1; x1 <= 4; x1++) {
                                    int64_t x[2] = {x0, x1};
                                    check_size(&n, CONVENTIONS[c], dynamic, x, &compared);
                                }
                            tconv_model_free(dynamic);
                        }
    print_message("2-D: compared %d (node, convention, size) triples\n", compared);
    assert_true(compared > 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynamic_crop_matches_the_static_rewrite_1d),
        cmocka_unit_test(test_dynamic_crop_matches_the_static_rewrite_2d),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
