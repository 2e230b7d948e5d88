/* The exact graph legalize-conv-transpose emits for typical cases: which nodes, in which order,
 * with which names, attributes and constant inputs, per opset. Each case is also run against
 * the original on random inputs, so a structurally "right" but numerically wrong rewrite fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "passes/pass.h"
#include "testutil.h"

typedef struct ct_spec {
    int64_t opset;
    int64_t ir_version;
    int rank; /* full rank of X */
    int64_t x[5];
    const char *x_dim_params[5]; /* non-NULL: that X dim is symbolic */
    int64_t w[5];
    const char *auto_pad;
    int n_pads;
    int64_t pads[6];
    int n_strides;
    int64_t strides[3];
    int n_output_padding;
    int64_t output_padding[3];
    int n_output_shape;
    int64_t output_shape[5];
    bool bias, bias_is_input;
} ct_spec;

static tconv_value *add_input(tconv_model *m, const char *name, int rank, const int64_t *dims,
                              const char *const *params) {
    tconv_value *v;
    tc_dim d[5];
    memset(d, 0, sizeof d);
    for (int i = 0; i < rank; i++) {
        d[i].kind = params && params[i] ? TCONV_DIM_SYMBOLIC : TCONV_DIM_STATIC;
        d[i].value = dims[i];
        d[i].param = params ? params[i] : NULL;
    }
    assert_int_equal(tc_graph_get_or_add_value(m->graph, name, &v, NULL), TCONV_OK);
    assert_int_equal(tc_value_set_tensor_type(v, TCONV_DTYPE_FLOAT, rank, d, NULL), TCONV_OK);
    assert_int_equal(tc_graph_add_input(m->graph, v, NULL, NULL), TCONV_OK);
    return v;
}

static tconv_value *add_float_initializer(tconv_model *m, const char *name, int rank,
                                          const int64_t *dims) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    float data[4096];
    assert_true(n <= 4096);
    for (int64_t i = 0; i < n; i++)
        data[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
    tconv_tensor *t;
    assert_int_equal(tc_tensor_create(m, name, TCONV_DTYPE_FLOAT, rank, dims, data,
                                      (size_t)n * sizeof(float), &t, NULL),
                     TCONV_OK);
    assert_int_equal(tc_graph_add_initializer(m->graph, t, NULL), TCONV_OK);
    return t->value;
}

static void set_ints(tconv_node *n, const char *name, const int64_t *v, int count) {
    if (count)
        assert_int_equal(tc_node_set_attr_ints(n, name, v, (size_t)count, NULL), TCONV_OK);
}

static tconv_model *build(const ct_spec *s) {
    tconv_model *m;
    assert_int_equal(tc_model_create(&m, NULL), TCONV_OK);
    m->has_ir_version = true;
    m->ir_version = s->ir_version ? s->ir_version : 7;
    assert_int_equal(tc_model_set_opset(m, "", s->opset, NULL), TCONV_OK);
    tconv_value *x = add_input(m, "X", s->rank, s->x, s->x_dim_params);
    tconv_value *w = add_float_initializer(m, "W", s->rank, s->w);
    int64_t c_out = s->w[1];
    tconv_value *b = NULL;
    if (s->bias)
        b = s->bias_is_input ? add_input(m, "B", 1, &c_out, NULL)
                             : add_float_initializer(m, "B", 1, &c_out);
    tconv_node *n;
    assert_int_equal(tc_node_create(m->graph, "ConvTranspose", NULL, "ct", &n, NULL), TCONV_OK);
    assert_int_equal(tc_node_add_input(n, x, NULL), TCONV_OK);
    assert_int_equal(tc_node_add_input(n, w, NULL), TCONV_OK);
    if (b)
        assert_int_equal(tc_node_add_input(n, b, NULL), TCONV_OK);
    if (s->auto_pad)
        assert_int_equal(tc_node_set_attr_string(n, "auto_pad", s->auto_pad, NULL), TCONV_OK);
    set_ints(n, "pads", s->pads, s->n_pads);
    set_ints(n, "strides", s->strides, s->n_strides);
    set_ints(n, "output_padding", s->output_padding, s->n_output_padding);
    set_ints(n, "output_shape", s->output_shape, s->n_output_shape);
    tconv_value *y;
    assert_int_equal(tc_graph_get_or_add_value(m->graph, "Y", &y, NULL), TCONV_OK);
    assert_int_equal(tc_node_add_output(n, y, NULL), TCONV_OK);
    tc_graph_append_node(m->graph, n);
    assert_int_equal(tc_graph_add_output(m->graph, y, NULL, NULL), TCONV_OK);
    return m;
}

static tconv_status legalize(tconv_model *m, tconv_policy policy, tc_error *err) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    options.policy = policy;
    return tc_run_passes(m, "legalize-conv-transpose,dce", &options, NULL, NULL, err);
}

/* Asserts the node list is exactly `expected` ("ConvTranspose:ct/valid", ...). */
static void assert_nodes(const tconv_model *m, const char *const *expected, size_t n) {
    size_t i = 0;
    for (tconv_node *node = m->graph->first; node; node = node->next, i++) {
        char got[128];
        snprintf(got, sizeof got, "%s:%s", node->op_type, node->name ? node->name : "");
        assert_true(i < n);
        assert_string_equal(got, expected[i]);
    }
    assert_int_equal(i, n);
    /* The original output name ends the chain. */
    assert_ptr_equal(m->graph->last->outputs[0], m->graph->outputs[0].value);
    assert_string_equal(m->graph->last->outputs[0]->name, "Y");
}

static tconv_node *find_node(const tconv_model *m, const char *op_type) {
    for (tconv_node *n = m->graph->first; n; n = n->next) {
        if (strcmp(n->op_type, op_type) == 0)
            return n;
    }
    fail_msg("no %s node", op_type);
    return NULL;
}

static void assert_ints_attr(const tconv_node *n, const char *name, const int64_t *want,
                             size_t count) {
    const tc_attr *a = tc_node_attr(n, name);
    assert_non_null(a);
    assert_int_equal(a->type, TCONV_ATTR_INTS);
    assert_int_equal(a->n, count);
    assert_memory_equal(a->ints, want, count * sizeof(int64_t));
}

/* Input `index` of n is an int64 initializer holding `want`. */
static void assert_const_input(const tconv_node *n, size_t index, const int64_t *want,
                               size_t count) {
    assert_true(index < n->n_inputs);
    tconv_tensor *t = n->inputs[index]->initializer;
    assert_non_null(t);
    assert_int_equal(t->dtype, TCONV_DTYPE_INT64);
    const void *data;
    size_t nbytes;
    assert_int_equal(tc_tensor_data(t, &data, &nbytes, NULL), TCONV_OK);
    assert_int_equal(nbytes, count * sizeof(int64_t));
    assert_memory_equal(data, want, nbytes);
}

static void assert_no_padding_attrs(const tconv_node *n) {
    assert_null(tc_node_attr(n, "auto_pad"));
    assert_null(tc_node_attr(n, "pads"));
    assert_null(tc_node_attr(n, "output_shape"));
    assert_null(tc_node_attr(n, "output_padding"));
}

/* Legalizes a copy and checks it computes what the original does. */
static void assert_same_numbers(const ct_spec *spec, tconv_policy policy) {
    tconv_model *original = build(spec), *converted = build(spec);
    tc_error err;
    assert_int_equal(legalize(converted, policy, &err), TCONV_OK);
    tconv_status st = tc_test_compare_models(original, converted, 3, 1e-5, 1e-6, &err);
    if (st != TCONV_OK)
        fail_msg("%s", err.message);
    tconv_model_free(original);
    tconv_model_free(converted);
}

static void test_same_upper_crops_the_end(void **state) {
    (void)state;
    /* k3 s2: total = 3 - 2 = 1 -> pads (0, 1): only the end is cropped; bias stays put. */
    ct_spec s = {.opset = 13,
                 .rank = 4,
                 .x = {1, 2, 5, 5},
                 .w = {2, 3, 3, 3},
                 .auto_pad = "SAME_UPPER",
                 .n_strides = 2,
                 .strides = {2, 2},
                 .bias = true};
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    const char *nodes[] = {"ConvTranspose:ct/valid", "Slice:ct/crop"};
    assert_nodes(m, nodes, 2);
    tconv_node *ct = find_node(m, "ConvTranspose"), *slice = find_node(m, "Slice");
    assert_no_padding_attrs(ct);
    assert_int_equal(ct->n_inputs, 3);
    assert_ints_attr(ct, "strides", (int64_t[]){2, 2}, 2);
    assert_const_input(slice, 1, (int64_t[]){0, 0}, 2);
    assert_const_input(slice, 2, (int64_t[]){-1, -1}, 2);
    assert_const_input(slice, 3, (int64_t[]){2, 3}, 2);
    tconv_model_free(m);
    assert_same_numbers(&s, TCONV_POLICY_SAME_OR_ASYMMETRIC);
}

static void test_same_lower_crops_the_beginning(void **state) {
    (void)state;
    ct_spec s = {.opset = 17,
                 .rank = 3,
                 .x = {2, 2, 6},
                 .w = {2, 1, 3},
                 .auto_pad = "SAME_LOWER",
                 .n_strides = 1,
                 .strides = {2}};
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    const char *nodes[] = {"ConvTranspose:ct/valid", "Slice:ct/crop"};
    assert_nodes(m, nodes, 2);
    tconv_node *slice = find_node(m, "Slice");
    assert_const_input(slice, 1, (int64_t[]){1}, 1);
    assert_const_input(slice, 2, (int64_t[]){INT64_MAX}, 1);
    tconv_model_free(m);
    assert_same_numbers(&s, TCONV_POLICY_SAME_OR_ASYMMETRIC);
}

/* output_padding past F: the last row holds bias only, so the bias moves behind a Pad. */
static ct_spec output_padding_past_full(int64_t opset) {
    ct_spec s = {.opset = opset,
                 .rank = 3,
                 .x = {1, 2, 4},
                 .w = {2, 2, 3},
                 .n_pads = 2,
                 .pads = {1, 0},
                 .n_strides = 1,
                 .strides = {2},
                 .n_output_padding = 1,
                 .output_padding = {1},
                 .bias = true};
    return s;
}

static void test_output_padding_moves_bias_behind_pad(void **state) {
    (void)state;
    ct_spec s = output_padding_past_full(13);
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    const char *nodes[] = {"ConvTranspose:ct/valid", "Slice:ct/crop", "Pad:ct/extend",
                           "Add:ct/bias"};
    assert_nodes(m, nodes, 4);
    tconv_node *ct = find_node(m, "ConvTranspose"), *pad = find_node(m, "Pad");
    tconv_node *add = find_node(m, "Add");
    assert_int_equal(ct->n_inputs, 2);
    assert_const_input(find_node(m, "Slice"), 1, (int64_t[]){1}, 1);
    assert_const_input(pad, 1, (int64_t[]){0, 0, 0, 0, 0, 1}, 6);
    tconv_tensor *bias = add->inputs[1]->initializer;
    assert_non_null(bias);
    assert_int_equal(bias->rank, 2);
    assert_int_equal(bias->dims[0], 2);
    assert_int_equal(bias->dims[1], 1);
    /* dce removed the original 1-D bias, which nothing uses any more. */
    assert_null(tc_graph_find_value(m->graph, "B")->initializer);
    tconv_model_free(m);
    assert_same_numbers(&s, TCONV_POLICY_SAME_OR_ASYMMETRIC);
}

static void test_opset9_uses_attribute_forms(void **state) {
    (void)state;
    ct_spec s = output_padding_past_full(9);
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    tconv_node *slice = find_node(m, "Slice"), *pad = find_node(m, "Pad");
    assert_int_equal(slice->n_inputs, 1);
    assert_ints_attr(slice, "starts", (int64_t[]){1}, 1);
    assert_ints_attr(slice, "ends", (int64_t[]){INT64_MAX}, 1);
    assert_ints_attr(slice, "axes", (int64_t[]){2}, 1);
    assert_int_equal(pad->n_inputs, 1);
    assert_ints_attr(pad, "pads", (int64_t[]){0, 0, 0, 0, 0, 1}, 6);
    tconv_model_free(m);
    assert_same_numbers(&s, TCONV_POLICY_SAME_OR_ASYMMETRIC);
}

static void test_opset10_slice_inputs_pad_attributes(void **state) {
    (void)state;
    ct_spec s = output_padding_past_full(10);
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    assert_int_equal(find_node(m, "Slice")->n_inputs, 4);
    tconv_node *pad = find_node(m, "Pad");
    assert_int_equal(pad->n_inputs, 1);
    assert_non_null(tc_node_attr(pad, "pads"));
    tconv_model_free(m);
    assert_same_numbers(&s, TCONV_POLICY_SAME_OR_ASYMMETRIC);
}

static void test_negative_output_shape_total_extends_at_end(void **state) {
    (void)state;
    /* ONNX test_convtranspose_output_shape: F = (9, 7), output_shape (10, 8): totals -1, split
     * with floor to (0, -1): a zero row and column after F; nothing is cropped. */
    ct_spec s = {.opset = 11,
                 .rank = 4,
                 .x = {1, 1, 3, 3},
                 .w = {1, 2, 3, 3},
                 .n_strides = 2,
                 .strides = {3, 2},
                 .n_output_shape = 2,
                 .output_shape = {10, 8}};
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    const char *nodes[] = {"ConvTranspose:ct/valid", "Pad:ct/extend"};
    assert_nodes(m, nodes, 2);
    assert_const_input(find_node(m, "Pad"), 1, (int64_t[]){0, 0, 0, 0, 0, 0, 1, 1}, 8);
    tconv_model_free(m);
    assert_same_numbers(&s, TCONV_POLICY_SAME_OR_ASYMMETRIC);
}

static void test_symmetric_pads_follow_the_policy(void **state) {
    (void)state;
    ct_spec s = {.opset = 13,
                 .rank = 4,
                 .x = {1, 2, 4, 4},
                 .w = {2, 2, 4, 4},
                 .n_pads = 4,
                 .pads = {1, 1, 1, 1},
                 .n_strides = 2,
                 .strides = {2, 2},
                 .bias = true};
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    const char *kept[] = {"ConvTranspose:ct"};
    assert_nodes(m, kept, 1);
    tconv_model_free(m);
    m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_VALID_ONLY, NULL), TCONV_OK);
    const char *rewritten[] = {"ConvTranspose:ct/valid", "Slice:ct/crop"};
    assert_nodes(m, rewritten, 2);
    assert_const_input(find_node(m, "Slice"), 2, (int64_t[]){-1, -1}, 2);
    tconv_model_free(m);
    assert_same_numbers(&s, TCONV_POLICY_VALID_ONLY);
}

static void test_bias_input_is_unsqueezed_per_opset(void **state) {
    (void)state;
    ct_spec s = output_padding_past_full(11);
    s.bias_is_input = true;
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    tconv_node *unsqueeze = find_node(m, "Unsqueeze");
    assert_ints_attr(unsqueeze, "axes", (int64_t[]){1}, 1);
    tconv_model_free(m);
    s.opset = 13;
    m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    assert_const_input(find_node(m, "Unsqueeze"), 1, (int64_t[]){1}, 1);
    tconv_model_free(m);
}

static void test_dynamic_dims_same_needs_no_static_size(void **state) {
    (void)state;
    ct_spec s = {.opset = 13,
                 .rank = 4,
                 .x = {0, 2, 0, 0},
                 .x_dim_params = {"N", NULL, "H", "W"},
                 .w = {2, 3, 3, 3},
                 .auto_pad = "SAME_UPPER",
                 .n_strides = 2,
                 .strides = {2, 2}};
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    assert_const_input(find_node(m, "Slice"), 2, (int64_t[]){-1, -1}, 2);
    tconv_model_free(m);
}

static ct_spec output_shape_dynamic_h(int64_t opset) {
    ct_spec s = {.opset = opset,
                 .rank = 4,
                 .x = {1, 1, 0, 3},
                 .x_dim_params = {NULL, NULL, "H", NULL},
                 .w = {1, 2, 3, 3},
                 .n_strides = 2,
                 .strides = {3, 2},
                 .n_output_shape = 2,
                 .output_shape = {10, 8}};
    return s;
}

/* The crop depends on H: it is computed at run time from Shape(X), and Slice reads it. The
 * numbers at several sizes are proven by tests/golden/dynamic_output_shape (cli tests). */
static void test_output_shape_with_dynamic_input_computes_the_crop(void **state) {
    (void)state;
    ct_spec s = output_shape_dynamic_h(13);
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    tconv_node *shape = find_node(m, "Shape");
    assert_string_equal(shape->inputs[0]->name, "X");
    tconv_node *slice = find_node(m, "Slice");
    assert_int_equal(slice->n_inputs, 4);
    assert_null(slice->inputs[1]->initializer); /* starts and ends are computed */
    assert_null(slice->inputs[2]->initializer);
    tconv_node *pad = find_node(m, "Pad");
    assert_null(pad->inputs[1]->initializer);
    assert_string_equal(pad->outputs[0]->name, "Y");
    tconv_model_free(m);
}

static void test_output_shape_with_dynamic_input_below_opset11_is_a_clear_error(void **state) {
    (void)state;
    ct_spec s = output_shape_dynamic_h(10);
    tconv_model *m = build(&s);
    tc_error err;
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, &err), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "node 'ct'"));
    assert_non_null(strstr(err.message, "output_shape"));
    assert_non_null(strstr(err.message, "opset 11"));
    assert_non_null(strstr(err.message, "has opset 10"));
    tconv_model_free(m);
}

static void test_ir3_initializers_are_also_inputs(void **state) {
    (void)state;
    /* IR version 3 requires every initializer to be listed as a graph input too. */
    ct_spec s = output_padding_past_full(8);
    s.ir_version = 3;
    tconv_model *m = build(&s);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    tconv_value *bias = find_node(m, "Add")->inputs[1];
    assert_non_null(bias->initializer);
    bool listed = false;
    for (size_t i = 0; i < m->graph->n_inputs; i++)
        listed |= m->graph->inputs[i].value == bias;
    assert_true(listed);
    tconv_model_free(m);
}

static void test_new_names_never_collide(void **state) {
    (void)state;
    ct_spec s = {.opset = 13,
                 .rank = 3,
                 .x = {1, 2, 6},
                 .w = {2, 1, 3},
                 .auto_pad = "SAME_UPPER",
                 .n_strides = 1,
                 .strides = {2}};
    tconv_model *m = build(&s);
    tconv_value *taken;
    assert_int_equal(tc_graph_add_unique_value(m->graph, "ct/crop", &taken, NULL), TCONV_OK);
    assert_non_null(tc_model_unique_node_name(m, "ct/valid"));
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    const char *nodes[] = {"ConvTranspose:ct/valid_1", "Slice:ct/crop_1"};
    assert_nodes(m, nodes, 2);
    tconv_model_free(m);
}

/* Layers with the same crop read the same starts/ends/axes initializers; another crop shares
 * what is equal (ends, axes) and gets its own starts. */
static void test_alike_layers_share_constants(void **state) {
    (void)state;
    tconv_model *m;
    assert_int_equal(tc_model_create(&m, NULL), TCONV_OK);
    m->has_ir_version = true;
    m->ir_version = 7;
    assert_int_equal(tc_model_set_opset(m, "", 13, NULL), TCONV_OK);
    const int64_t x_dims[] = {1, 2, 6}, w_dims[] = {2, 2, 3};
    tconv_value *v = add_input(m, "X", 3, x_dims, NULL);
    tconv_value *w = add_float_initializer(m, "W", 3, w_dims);
    /* SAME_UPPER, kernel 3: stride 2 crops 0 at the start and 1 at the end at every size,
     * stride 1 crops 1 and 1 */
    const int64_t strides[] = {2, 2, 2, 1};
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "ct%d", i);
        tconv_node *n;
        assert_int_equal(tc_node_create(m->graph, "ConvTranspose", NULL, name, &n, NULL), TCONV_OK);
        assert_int_equal(tc_node_add_input(n, v, NULL), TCONV_OK);
        assert_int_equal(tc_node_add_input(n, w, NULL), TCONV_OK);
        assert_int_equal(tc_node_set_attr_string(n, "auto_pad", "SAME_UPPER", NULL), TCONV_OK);
        set_ints(n, "strides", &strides[i], 1);
        snprintf(name, sizeof name, "y%d", i);
        assert_int_equal(tc_graph_get_or_add_value(m->graph, name, &v, NULL), TCONV_OK);
        assert_int_equal(tc_node_add_output(n, v, NULL), TCONV_OK);
        tc_graph_append_node(m->graph, n);
    }
    assert_int_equal(tc_graph_add_output(m->graph, v, NULL, NULL), TCONV_OK);
    assert_int_equal(legalize(m, TCONV_POLICY_SAME_OR_ASYMMETRIC, NULL), TCONV_OK);
    tconv_node *slices[4];
    size_t n_slices = 0;
    for (tconv_node *n = m->graph->first; n; n = n->next) {
        if (strcmp(n->op_type, "Slice") == 0 && n_slices < 4)
            slices[n_slices++] = n;
    }
    assert_int_equal(n_slices, 4);
    for (size_t k = 1; k < 4; k++) {
        assert_ptr_equal(slices[1]->inputs[k], slices[0]->inputs[k]);
        assert_ptr_equal(slices[2]->inputs[k], slices[0]->inputs[k]);
    }
    assert_string_equal(slices[0]->inputs[1]->name, "ct0/crop_starts");
    const int64_t starts_0[] = {0}, starts_1[] = {1}, ends[] = {-1}, axes[] = {2};
    assert_const_input(slices[0], 1, starts_0, 1);
    assert_const_input(slices[3], 1, starts_1, 1);
    assert_ptr_equal(slices[3]->inputs[2], slices[0]->inputs[2]);
    assert_ptr_equal(slices[3]->inputs[3], slices[0]->inputs[3]);
    assert_const_input(slices[3], 2, ends, 1);
    assert_const_input(slices[3], 3, axes, 1);
    /* W, starts [0] and [1], ends [-1], axes [2] */
    assert_int_equal(m->graph->n_initializers, 5);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_upper_crops_the_end),
        cmocka_unit_test(test_same_lower_crops_the_beginning),
        cmocka_unit_test(test_output_padding_moves_bias_behind_pad),
        cmocka_unit_test(test_opset9_uses_attribute_forms),
        cmocka_unit_test(test_opset10_slice_inputs_pad_attributes),
        cmocka_unit_test(test_negative_output_shape_total_extends_at_end),
        cmocka_unit_test(test_symmetric_pads_follow_the_policy),
        cmocka_unit_test(test_bias_input_is_unsqueezed_per_opset),
        cmocka_unit_test(test_dynamic_dims_same_needs_no_static_size),
        cmocka_unit_test(test_output_shape_with_dynamic_input_computes_the_crop),
        cmocka_unit_test(test_output_shape_with_dynamic_input_below_opset11_is_a_clear_error),
        cmocka_unit_test(test_ir3_initializers_are_also_inputs),
        cmocka_unit_test(test_new_names_never_collide),
        cmocka_unit_test(test_alike_layers_share_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
