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
    int64_t k, s, d, op, o;
    const char *auto_pad;
} sweep_node;

/* X[1,2,L] -> ConvTranspose (W 2x3xk initializer, B initializer) -> Y, L static or symbolic. */
static tconv_model *build(const sweep_node *n, int64_t x) {
    tconv_model *m = b_model(13);
    char dims[32];
    if (x > 0)
        snprintf(dims, sizeof dims, "1,2,%lld", (long long)x);
    else
        snprintf(dims, sizeof dims, "1,2,L");
    b_input(m->graph, "X", TCONV_DTYPE_FLOAT, dims);
    float w[2 * 3 * 4], b[3] = {0.5f, -0.25f, 1.0f};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        w[i] = (float)((i * 7) % 11) / 4.0f - 1.0f;
    char w_dims[32];
    snprintf(w_dims, sizeof w_dims, "2,3,%lld", (long long)n->k);
    b_f32(m->graph, "W", w_dims, w);
    b_f32(m->graph, "B", "3", b);
    tconv_node *node = b_node(m->graph, "ConvTranspose", "ct", "X,W,B", "Y");
    b_ints(node, "strides", &n->s, 1);
    b_ints(node, "dilations", &n->d, 1);
    b_ints(node, "output_padding", &n->op, 1);
    b_ints(node, "output_shape", &n->o, 1);
    if (n->auto_pad)
        b_string(node, "auto_pad", n->auto_pad);
    b_output(m->graph, "Y");
    return m;
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
                       int64_t x, int *compared) {
    tconv_model *fixed = build(n, x);
    tc_error err;
    tconv_status st = TCONV_OK;
    if (convention == TCONV_CONVENTION_ONNX) /* the runtime's ConvTranspose follows ONNX */
        st = tc_test_compare_models(fixed, dynamic, (uint64_t)x, 1e-5, 1e-5, &err);
    if (st != TCONV_OK)
        fail_msg("k%lld s%lld d%lld op%lld O%lld x=%lld: the original differs: %s", (long long)n->k,
                 (long long)n->s, (long long)n->d, (long long)n->op, (long long)n->o, (long long)x,
                 err.message);
    st = legalize(fixed, convention, &err);
    if (st == TCONV_OK) {
        assert_false(has_op(fixed, "Shape")); /* static: constant crop */
        st = tc_test_compare_models(fixed, dynamic, (uint64_t)(x * 131 + n->o), 1e-5, 1e-5, &err);
        if (st != TCONV_OK)
            fail_msg("k%lld s%lld d%lld op%lld O%lld %s x=%lld convention %s: %s", (long long)n->k,
                     (long long)n->s, (long long)n->d, (long long)n->op, (long long)n->o,
                     n->auto_pad ? n->auto_pad : "NOTSET", (long long)x,
                     tconv_convention_name(convention), err.message);
        (*compared)++;
    }
    tconv_model_free(fixed);
}

static void test_dynamic_crop_matches_the_static_rewrite_at_every_size(void **state) {
    (void)state;
    static const char *const pads[] = {NULL, "SAME_UPPER", "SAME_LOWER"};
    static const tconv_convention conventions[] = {TCONV_CONVENTION_ONNX, TCONV_CONVENTION_ORT,
                                                   TCONV_CONVENTION_ORT_LEGACY};
    static const int64_t outputs[] = {1, 3, 6, 10, 17};
    int compared = 0;
    for (int64_t k = 1; k <= 3; k++)
        for (int64_t s = 1; s <= 3; s++)
            for (int64_t d = 1; d <= 5; d += 2) /* d 5: windows past a short F */
                for (int64_t op = 0; op < (s > d ? s : d); op++)
                    for (size_t p = 0; p < 3; p++)
                        for (size_t oi = 0; oi < sizeof outputs / sizeof outputs[0]; oi++)
                            for (size_t c = 0; c < 3; c++) {
                                sweep_node n = {k, s, d, op, outputs[oi], pads[p]};
                                tconv_model *dynamic = build(&n, 0);
                                tc_error err;
                                if (legalize(dynamic, conventions[c], &err) != TCONV_OK)
                                    fail_msg("%s", err.message);
                                assert_true(has_op(dynamic, "Shape"));
                                for (int64_t x = 1; x <= 6; x++)
                                    check_size(&n, conventions[c], dynamic, x, &compared);
                                tconv_model_free(dynamic);
                            }
    print_message("compared %d (node, convention, size) triples\n", compared);
    assert_true(compared > 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynamic_crop_matches_the_static_rewrite_at_every_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
