/* Public API, graphs: walking nodes, values, attributes, initializers and subgraphs of real
 * models; editing (new nodes and values, attributes, replacing uses, removing, sorting) with the
 * IR staying valid; misuse that must fail cleanly with a message in the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api_test_util.h"

#define KERAS API_MODEL("keras_decoder")

static void test_walk_nodes_and_values(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_graph *g = tconv_model_graph(m);
    assert_ptr_equal(tconv_graph_model(g), m);
    assert_string_equal(tconv_graph_name(g), "keras_decoder");
    assert_null(tconv_graph_parent(g));
    assert_null(tconv_graph_owner(g));
    assert_int_equal(api_count_ops(m, "ConvTranspose"), 4);
    assert_int_equal(api_count_ops(m, "Relu"), 3);

    /* Every node input is defined, and the node is among its value's users. */
    size_t n = 0;
    for (tconv_node *node = tconv_graph_first_node(g); node; node = tconv_node_next(node), n++) {
        assert_ptr_equal(tconv_node_graph(node), g);
        assert_string_equal(tconv_node_domain(node), "");
        for (size_t i = 0; i < tconv_node_input_count(node); i++) {
            tconv_value *v = tconv_node_input(node, i);
            assert_true(tconv_value_producer(v) || tconv_value_is_graph_input(v) ||
                        tconv_value_initializer(v));
            bool found = false;
            for (size_t u = 0; u < tconv_value_use_count(v); u++) {
                size_t slot = 99;
                found |= tconv_value_user(v, u, &slot) == node && slot == i;
            }
            assert_true(found);
        }
        for (size_t i = 0; i < tconv_node_output_count(node); i++)
            assert_ptr_equal(tconv_value_producer(tconv_node_output(node, i)), node);
    }
    assert_int_equal(n, tconv_graph_node_count(g));
    assert_string_equal(tconv_node_name(tconv_graph_last_node(g)), "deconv4_sigmoid");
    assert_string_equal(tconv_node_name(tconv_node_prev(tconv_graph_last_node(g))), "deconv4");
    assert_null(tconv_node_input(tconv_graph_first_node(g), 99));

    /* Inputs and outputs with their types. */
    assert_int_equal(tconv_graph_input_count(g), 1);
    tconv_value *z = tconv_graph_input(g, 0);
    assert_string_equal(tconv_value_name(z), "z");
    assert_true(tconv_value_is_graph_input(z));
    assert_int_equal(tconv_value_dtype(z), TCONV_DTYPE_FLOAT);
    assert_int_equal(tconv_value_rank(z), 4);
    assert_int_equal(tconv_value_dim(z, 1), 128);
    assert_int_equal(tconv_value_dim(z, 4), -1);
    assert_null(tconv_value_dim_param(z, 0));
    tconv_value *image = tconv_graph_output(g, 0);
    assert_true(tconv_value_is_graph_output(image));
    assert_false(tconv_value_is_graph_output(z));
    assert_ptr_equal(tconv_graph_lookup(g, "image"), image);
    assert_null(tconv_graph_lookup(g, "no such value"));
    assert_ptr_equal(tconv_value_graph(image), g);
    tconv_model_free(m);
}

static void test_initializers(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_graph *g = tconv_model_graph(m);
    assert_int_equal(tconv_graph_initializer_count(g), 8);
    tconv_tensor *w = tconv_graph_initializer(g, 0);
    assert_string_equal(tconv_tensor_name(w), "deconv1.weight");
    assert_int_equal(tconv_tensor_dtype(w), TCONV_DTYPE_FLOAT);
    assert_int_equal(tconv_tensor_rank(w), 4);
    assert_int_equal(tconv_tensor_dim(w, 0), 128);
    assert_int_equal(tconv_tensor_dim(w, 7), -1);
    assert_int_equal(tconv_tensor_element_count(w), 128 * 64 * 9);
    const void *data = NULL;
    size_t nbytes = 0;
    API_OK(m, tconv_tensor_get_data(w, &data, &nbytes));
    assert_non_null(data);
    assert_int_equal(nbytes, 128 * 64 * 9 * sizeof(float));
    tconv_value *v = tconv_tensor_value(w);
    assert_ptr_equal(tconv_value_initializer(v), w);
    assert_ptr_equal(tconv_graph_lookup(g, "deconv1.weight"), v);
    assert_null(tconv_graph_initializer(g, 8));
    assert_int_equal(tconv_tensor_get_data(w, NULL, &nbytes), TCONV_ERR_USAGE);
    tconv_model_free(m);
}

static void test_read_attributes(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_node *d1 = api_find_node(m, "deconv1");
    assert_int_equal(tconv_attr_count(d1), 3);
    assert_string_equal(tconv_attr_name(d1, 0), "auto_pad");
    assert_null(tconv_attr_name(d1, 3));
    assert_int_equal(tconv_attr_type_of(d1, "strides"), TCONV_ATTR_INTS);
    assert_int_equal(tconv_attr_type_of(d1, "pads"), TCONV_ATTR_UNDEFINED);

    const char *auto_pad = NULL;
    API_OK(m, tconv_attr_get_string(d1, "auto_pad", &auto_pad));
    assert_string_equal(auto_pad, "SAME_UPPER");
    const int64_t *kernel = NULL;
    size_t count = 0;
    API_OK(m, tconv_attr_get_ints(d1, "kernel_shape", &kernel, &count));
    assert_int_equal(count, 2);
    assert_int_equal(kernel[0], 3);

    /* Absent or of another type: TCONV_ERR_INVALID naming the node and the attribute. */
    int64_t group = 0;
    assert_int_equal(tconv_attr_get_int(d1, "group", &group), TCONV_ERR_INVALID);
    assert_non_null(strstr(tconv_model_last_error(m), "deconv1"));
    assert_non_null(strstr(tconv_model_last_error(m), "group"));
    float f;
    assert_int_equal(tconv_attr_get_float(d1, "strides", &f), TCONV_ERR_INVALID);
    assert_non_null(strstr(tconv_model_last_error(m), "INTS"));
    assert_int_equal(tconv_attr_get_int(d1, NULL, &group), TCONV_ERR_USAGE);
    assert_int_equal(tconv_attr_get_int(d1, "strides", NULL), TCONV_ERR_USAGE);
    tconv_model_free(m);
}

static void test_set_and_remove_attributes(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_node *d1 = api_find_node(m, "deconv1");
    API_OK(m, tconv_attr_set_int(d1, "group", 1));
    API_OK(m, tconv_attr_set_float(d1, "my_scale", 0.5f));
    static const float floats[] = {1.5f, 2.5f};
    API_OK(m, tconv_attr_set_floats(d1, "my_floats", floats, 2));
    static const int64_t strides[] = {1, 1};
    API_OK(m, tconv_attr_set_ints(d1, "strides", strides, 2)); /* replaced in place */
    assert_string_equal(tconv_attr_name(d1, 2), "strides");
    static const int64_t dims[] = {2};
    static const int32_t ints[] = {7, 8};
    API_OK(m,
           tconv_attr_set_tensor(d1, "my_tensor", TCONV_DTYPE_INT32, 1, dims, ints, sizeof ints));
    API_OK(m, tconv_attr_set_floats(d1, "my_floats", floats, 1));
    assert_int_equal(tconv_attr_count(d1), 7);

    int64_t group = 0;
    API_OK(m, tconv_attr_get_int(d1, "group", &group));
    assert_int_equal(group, 1);
    float scale = 0;
    API_OK(m, tconv_attr_get_float(d1, "my_scale", &scale));
    assert_true(scale == 0.5f);
    const float *fl = NULL;
    size_t count = 0;
    API_OK(m, tconv_attr_get_floats(d1, "my_floats", &fl, &count));
    assert_int_equal(count, 1);
    assert_true(fl[0] == 1.5f);
    tconv_tensor *t = NULL;
    API_OK(m, tconv_attr_get_tensor(d1, "my_tensor", &t));
    const void *data;
    size_t nbytes;
    API_OK(m, tconv_tensor_get_data(t, &data, &nbytes));
    assert_int_equal(nbytes, sizeof ints);
    assert_memory_equal(data, ints, sizeof ints);
    assert_null(tconv_tensor_value(t));

    /* Wrong byte count for the tensor: rejected with a message. */
    assert_int_equal(tconv_attr_set_tensor(d1, "bad", TCONV_DTYPE_INT32, 1, dims, ints, 3),
                     TCONV_ERR_INVALID);
    assert_true(strlen(tconv_model_last_error(m)) > 0);
    assert_int_equal(tconv_attr_set_ints(d1, "x", NULL, 2), TCONV_ERR_USAGE);
    assert_int_equal(tconv_attr_set_string(d1, "x", NULL), TCONV_ERR_USAGE);

    API_OK(m, tconv_attr_remove(d1, "my_scale"));
    API_OK(m, tconv_attr_remove(d1, "my_scale")); /* absent: fine */
    assert_int_equal(tconv_attr_type_of(d1, "my_scale"), TCONV_ATTR_UNDEFINED);
    tconv_model_free(m);
}

/* Inserts y2 = Identity(y) after the node defining y, moves y's other uses to y2, then folds the
 * Identity away again: the compiler-pass pattern. */
static void test_insert_and_fold_identity(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_graph *g = tconv_model_graph(m);
    tconv_node *d2 = api_find_node(m, "deconv2");
    tconv_value *y = tconv_node_output(d2, 0);
    tconv_node *id = NULL;
    tconv_value *y2 = NULL;
    API_OK(m, tconv_graph_new_node(g, "Identity", NULL, "copy", tconv_node_next(d2), &id));
    API_OK(m, tconv_graph_new_value(g, "deconv2_copy", &y2));
    /* Before the Identity reads y, or it would be redirected too. */
    API_OK(m, tconv_value_replace_all_uses(y, y2));
    /* y2 has no producer yet: the IR is invalid until the Identity defines it. */
    assert_int_equal(tconv_model_validate(m), TCONV_ERR_INVALID);
    assert_true(strlen(tconv_model_last_error(m)) > 0);
    API_OK(m, tconv_node_append_input(id, y));
    API_OK(m, tconv_node_append_output(id, y2));
    API_OK(m, tconv_model_validate(m));
    assert_int_equal(tconv_graph_node_count(g), 9);
    assert_int_equal(tconv_value_use_count(y), 1);
    assert_ptr_equal(tconv_value_producer(y2), id);

    /* Fold it: uses of the Identity's output read its input, the node goes. */
    API_OK(m, tconv_value_replace_all_uses(y2, y));
    API_OK(m, tconv_node_remove(id));
    API_OK(m, tconv_model_validate(m));
    assert_int_equal(tconv_graph_node_count(g), 8);
    assert_int_equal(api_count_ops(m, "Identity"), 0);
    tconv_model_free(m);
}

/* A rewrite that keeps the output name: remove the old node, give its value to a new one. */
static void test_replace_node_keeping_its_output(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_graph *g = tconv_model_graph(m);
    tconv_node *sigmoid = api_find_node(m, "deconv4_sigmoid");
    tconv_value *x = tconv_node_input(sigmoid, 0);
    tconv_value *image = tconv_node_output(sigmoid, 0);
    tconv_node *relu = NULL;
    API_OK(m, tconv_graph_new_node(g, "Relu", "", "as_relu", sigmoid, &relu));
    API_OK(m, tconv_node_append_input(relu, x));
    /* Still defined by the Sigmoid: refused. */
    assert_int_equal(tconv_node_append_output(relu, image), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_model_last_error(m), "image"));
    API_OK(m, tconv_node_remove(sigmoid));
    assert_null(tconv_value_producer(image));
    API_OK(m, tconv_node_append_output(relu, image));
    API_OK(m, tconv_model_validate(m));
    assert_true(tconv_value_is_graph_output(image));
    assert_ptr_equal(tconv_graph_last_node(g), relu);
    assert_string_equal(tconv_node_name(relu), "as_relu");
    API_OK(m, tconv_node_set_name(relu, "renamed"));
    assert_string_equal(tconv_node_name(relu), "renamed");

    /* Written and read back, the edit is there. */
    tconv_model *copy = NULL;
    API_OK(m, tconv_model_clone(m, &copy));
    assert_int_equal(api_count_ops(copy, "Sigmoid"), 0);
    assert_string_equal(tconv_node_op_type(api_find_node(copy, "renamed")), "Relu");
    tconv_model_free(copy);
    tconv_model_free(m);
}

static void test_sort_after_appending_out_of_order(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_graph *g = tconv_model_graph(m);
    /* Scale the input at the end of the list, feed the first node with it: out of order. */
    tconv_node *first = tconv_graph_first_node(g);
    tconv_node *id = NULL;
    tconv_value *z2 = NULL;
    API_OK(m, tconv_graph_new_node(g, "Identity", NULL, NULL, NULL, &id));
    assert_null(tconv_node_name(id));
    API_OK(m, tconv_node_append_input(id, tconv_graph_input(g, 0)));
    API_OK(m, tconv_node_new_output(id, "z", &z2));
    assert_string_equal(tconv_value_name(z2), "z_1"); /* "z" is taken */
    API_OK(m, tconv_node_replace_input(first, 0, z2));
    assert_int_equal(tconv_model_validate(m), TCONV_ERR_INVALID);
    API_OK(m, tconv_graph_sort(g));
    API_OK(m, tconv_model_validate(m));
    assert_ptr_equal(tconv_graph_first_node(g), id);
    assert_int_equal(tconv_node_replace_input(first, 5, z2), TCONV_ERR_USAGE);
    tconv_model_free(m);
}

static void test_subgraphs(void **state) {
    (void)state;
    tconv_model *m = api_read(API_MODEL("if_branch"));
    tconv_node *branch = api_find_node(m, "branch");
    assert_int_equal(tconv_node_subgraph_count(branch), 2);
    tconv_graph *then_branch = NULL;
    API_OK(m, tconv_attr_get_graph(branch, "then_branch", &then_branch));
    assert_ptr_equal(tconv_graph_parent(then_branch), tconv_model_graph(m));
    assert_ptr_equal(tconv_graph_owner(then_branch), branch);
    bool seen = false;
    for (size_t i = 0; i < tconv_node_subgraph_count(branch); i++)
        seen |= tconv_node_subgraph(branch, i) == then_branch;
    assert_true(seen);
    assert_null(tconv_node_subgraph(branch, 2));
    /* Outer values are visible from the subgraph. */
    assert_non_null(tconv_graph_lookup(then_branch, "h"));
    assert_non_null(tconv_graph_lookup(then_branch, "then.weight"));
    assert_null(tconv_graph_lookup(tconv_model_graph(m), "then.weight"));
    tconv_node *deconv = tconv_graph_first_node(then_branch);
    assert_string_equal(tconv_node_op_type(deconv), "ConvTranspose");
    assert_ptr_equal(tconv_node_graph(deconv), then_branch);
    tconv_model_free(m);
}

static void test_symbolic_dims_and_set_type(void **state) {
    (void)state;
    tconv_model *m = api_read(API_MODEL("dynamic_same"));
    tconv_value *x = tconv_graph_input(tconv_model_graph(m), 0);
    assert_string_equal(tconv_value_dim_param(x, 0), "N");
    assert_int_equal(tconv_value_dim(x, 0), -1);
    assert_int_equal(tconv_value_dim(x, 1), 8);
    static const int64_t dims[] = {1, 8, -1, 16};
    API_OK(m, tconv_value_set_type(x, TCONV_DTYPE_FLOAT, 4, dims));
    assert_int_equal(tconv_value_dim(x, 0), 1);
    assert_int_equal(tconv_value_dim(x, 2), -1);
    assert_null(tconv_value_dim_param(x, 0));
    API_OK(m, tconv_value_set_type(x, TCONV_DTYPE_FLOAT, -1, NULL));
    assert_int_equal(tconv_value_rank(x), -1);
    static const int64_t bad[] = {-2};
    assert_int_equal(tconv_value_set_type(x, TCONV_DTYPE_FLOAT, 1, bad), TCONV_ERR_USAGE);
    assert_int_equal(tconv_value_set_type(x, TCONV_DTYPE_FLOAT, 17, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_value_set_type(x, (tconv_dtype)999, 1, dims), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_model_last_error(m), "999"));
    tconv_model_free(m);
}

/* Objects of two models must not be mixed; the graph refuses foreign nodes and values. */
static void test_misuse_is_refused(void **state) {
    (void)state;
    tconv_model *a = api_read(KERAS);
    tconv_model *b = api_build_conv_transpose(NULL, NULL);
    tconv_node *node_a = tconv_graph_first_node(tconv_model_graph(a));
    tconv_value *value_b = tconv_graph_input(tconv_model_graph(b), 0);
    assert_int_equal(tconv_node_append_input(node_a, value_b), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_model_last_error(a), "another model"));
    assert_int_equal(tconv_value_replace_all_uses(tconv_node_output(node_a, 0), value_b),
                     TCONV_ERR_USAGE);
    assert_int_equal(tconv_graph_append_output(tconv_model_graph(a), value_b), TCONV_ERR_USAGE);
    tconv_node *out = NULL;
    assert_int_equal(tconv_graph_new_node(tconv_model_graph(b), "Relu", NULL, NULL, node_a, &out),
                     TCONV_ERR_USAGE);
    assert_null(out);
    assert_int_equal(tconv_graph_new_node(tconv_model_graph(a), "", NULL, NULL, NULL, &out),
                     TCONV_ERR_USAGE);
    tconv_value *v = NULL;
    assert_int_equal(tconv_graph_new_value(tconv_model_graph(a), "", &v), TCONV_ERR_USAGE);
    assert_int_equal(
        tconv_graph_new_input(tconv_model_graph(a), "in", TCONV_DTYPE_FLOAT, 2, NULL, &v),
        TCONV_ERR_USAGE);
    static const int64_t dims[] = {2};
    assert_int_equal(tconv_graph_new_initializer(tconv_model_graph(a), "c", TCONV_DTYPE_FLOAT, 1,
                                                 dims, "abc", 3, &v),
                     TCONV_ERR_INVALID);
    assert_int_equal(tconv_node_append_output(node_a, NULL), TCONV_ERR_USAGE);
    /* The models are untouched by the refused calls. */
    API_OK(a, tconv_model_validate(a));
    API_OK(b, tconv_model_validate(b));
    tconv_model_free(a);
    tconv_model_free(b);
}

static void test_null_handles(void **state) {
    (void)state;
    assert_null(tconv_graph_model(NULL));
    assert_null(tconv_graph_first_node(NULL));
    assert_int_equal(tconv_graph_node_count(NULL), 0);
    assert_null(tconv_graph_input(NULL, 0));
    assert_null(tconv_graph_lookup(NULL, "x"));
    assert_int_equal(tconv_graph_new_value(NULL, "x", NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_graph_new_node(NULL, "Relu", NULL, NULL, NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_graph_sort(NULL), TCONV_ERR_USAGE);
    assert_null(tconv_node_op_type(NULL));
    assert_null(tconv_node_next(NULL));
    assert_int_equal(tconv_node_input_count(NULL), 0);
    assert_int_equal(tconv_node_append_input(NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_node_new_output(NULL, "x", NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_node_remove(NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_node_set_name(NULL, "x"), TCONV_ERR_USAGE);
    assert_int_equal(tconv_node_subgraph_count(NULL), 0);
    assert_null(tconv_value_name(NULL));
    assert_int_equal(tconv_value_dtype(NULL), TCONV_DTYPE_UNDEFINED);
    assert_int_equal(tconv_value_rank(NULL), -1);
    assert_int_equal(tconv_value_dim(NULL, 0), -1);
    assert_null(tconv_value_user(NULL, 0, NULL));
    assert_false(tconv_value_is_graph_output(NULL));
    assert_int_equal(tconv_value_replace_all_uses(NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_value_set_type(NULL, TCONV_DTYPE_FLOAT, 0, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_attr_count(NULL), 0);
    assert_int_equal(tconv_attr_type_of(NULL, "x"), TCONV_ATTR_UNDEFINED);
    assert_int_equal(tconv_attr_get_int(NULL, "x", NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_attr_set_int(NULL, "x", 1), TCONV_ERR_USAGE);
    assert_int_equal(tconv_attr_remove(NULL, "x"), TCONV_ERR_USAGE);
    assert_null(tconv_tensor_name(NULL));
    assert_int_equal(tconv_tensor_rank(NULL), -1);
    assert_int_equal(tconv_tensor_element_count(NULL), -1);
    assert_int_equal(tconv_tensor_get_data(NULL, NULL, NULL), TCONV_ERR_USAGE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_nodes_and_values),
        cmocka_unit_test(test_initializers),
        cmocka_unit_test(test_read_attributes),
        cmocka_unit_test(test_set_and_remove_attributes),
        cmocka_unit_test(test_insert_and_fold_identity),
        cmocka_unit_test(test_replace_node_keeping_its_output),
        cmocka_unit_test(test_sort_after_appending_out_of_order),
        cmocka_unit_test(test_subgraphs),
        cmocka_unit_test(test_symbolic_dims_and_set_type),
        cmocka_unit_test(test_misuse_is_refused),
        cmocka_unit_test(test_null_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
