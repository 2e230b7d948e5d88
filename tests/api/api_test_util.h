/* Helpers for the public API tests. They use include/tconv/ only (the api.*.shared variants are
 * built with nothing else on the include path). Include after cmocka.h. */
#ifndef TC_TESTS_API_TEST_UTIL_H
#define TC_TESTS_API_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tconv/tconv.h"

#define API_MODEL(name) TCONV_SOURCE_DIR "/models/" name "/model.onnx"

/* Fails the test with the model's message when st is not TCONV_OK. */
#define API_OK(model, call)                                                                        \
    do {                                                                                           \
        tconv_status api_ok_st_ = (call);                                                          \
        if (api_ok_st_ != TCONV_OK)                                                                \
            fail_msg("%s: %s: %s", #call, tconv_status_name(api_ok_st_),                           \
                     tconv_model_last_error(model));                                               \
    } while (0)

static inline tconv_model *api_read(const char *path) {
    tconv_model *model = NULL;
    char message[512];
    tconv_status st = tconv_model_read_file(path, NULL, &model, message, sizeof message);
    if (st != TCONV_OK)
        fail_msg("reading %s: %s", path, message);
    return model;
}

/* The first node of the main graph with this name; fails the test when there is none. */
static inline tconv_node *api_find_node(tconv_model *model, const char *name) {
    for (tconv_node *n = tconv_graph_first_node(tconv_model_graph(model)); n;
         n = tconv_node_next(n)) {
        if (tconv_node_name(n) && strcmp(tconv_node_name(n), name) == 0)
            return n;
    }
    fail_msg("no node '%s'", name);
    return NULL;
}

static inline size_t api_count_ops(tconv_model *model, const char *op_type) {
    size_t n = 0;
    for (tconv_node *node = tconv_graph_first_node(tconv_model_graph(model)); node;
         node = tconv_node_next(node))
        n += strcmp(tconv_node_op_type(node), op_type) == 0;
    return n;
}

/* Y = ConvTranspose(X[1,2,3,3], W[2,3,3,3], B[3]) {strides 2, `pads` (NULL: auto_pad SAME_UPPER)}
 * at opset 13, then `tail_op` (NULL: none) on Y; weights are a fixed pattern. */
static inline tconv_model *api_build_conv_transpose(const int64_t *pads, const char *tail_op) {
    tconv_model *m = NULL;
    assert_int_equal(tconv_model_new(&m), TCONV_OK);
    tconv_graph *g = tconv_model_graph(m);
    API_OK(m, tconv_model_set_opset_version(m, "", 13));
    static const int64_t x_dims[] = {1, 2, 3, 3}, w_dims[] = {2, 3, 3, 3}, b_dims[] = {3};
    float w[54], b[3] = {0.5f, -0.25f, 0.125f};
    for (int i = 0; i < 54; i++)
        w[i] = (float)((i * 7) % 11 - 5) / 8.0f;
    tconv_value *x, *wv, *bv, *y;
    API_OK(m, tconv_graph_new_input(g, "X", TCONV_DTYPE_FLOAT, 4, x_dims, &x));
    API_OK(m, tconv_graph_new_initializer(g, "W", TCONV_DTYPE_FLOAT, 4, w_dims, w, sizeof w, &wv));
    API_OK(m, tconv_graph_new_initializer(g, "B", TCONV_DTYPE_FLOAT, 1, b_dims, b, sizeof b, &bv));
    tconv_node *ct;
    API_OK(m, tconv_graph_new_node(g, "ConvTranspose", NULL, "up", NULL, &ct));
    API_OK(m, tconv_node_append_input(ct, x));
    API_OK(m, tconv_node_append_input(ct, wv));
    API_OK(m, tconv_node_append_input(ct, bv));
    API_OK(m, tconv_node_new_output(ct, "Y", &y));
    static const int64_t strides[] = {2, 2};
    API_OK(m, tconv_attr_set_ints(ct, "strides", strides, 2));
    if (pads)
        API_OK(m, tconv_attr_set_ints(ct, "pads", pads, 4));
    else
        API_OK(m, tconv_attr_set_string(ct, "auto_pad", "SAME_UPPER"));
    if (tail_op) {
        tconv_node *tail;
        API_OK(m, tconv_graph_new_node(g, tail_op, NULL, "tail", NULL, &tail));
        API_OK(m, tconv_node_append_input(tail, y));
        API_OK(m, tconv_node_new_output(tail, "Z", &y));
    }
    API_OK(m, tconv_graph_append_output(g, y));
    API_OK(m, tconv_model_validate(m));
    return m;
}

#endif
