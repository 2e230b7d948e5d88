/* Helpers for runtime unit tests: build small IR graphs by hand and run them. Header-only
 * (static inline) so each test program takes what it uses. */
#ifndef TC_TESTS_RT_TEST_UTIL_H
#define TC_TESTS_RT_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "runtime/compute/rt_tensor.h"
#include "runtime/session/session.h"
#include "tconv/model.h"

/* models/<name>/model.onnx of the source tree, read; the test fails with the reader's message
 * if it does not load. */
static inline tconv_model *rtt_read_models_case(const char *name) {
    char path[512], message[512];
    snprintf(path, sizeof path, "%s/models/%s/model.onnx", TCONV_SOURCE_DIR, name);
    tconv_model *m = NULL;
    tconv_status st = tconv_model_read_file(path, NULL, &m, message, sizeof message);
    if (st != TCONV_OK)
        print_error("%s: %s\n", name, message);
    assert_int_equal(st, TCONV_OK);
    return m;
}

static inline tconv_model *rtt_model(int64_t opset) {
    tconv_model *m = NULL;
    tc_error err;
    assert_int_equal(tc_model_create(&m, &err), TCONV_OK);
    assert_int_equal(tc_model_set_opset(m, "", opset, &err), TCONV_OK);
    return m;
}

static inline tconv_value *rtt_value(tconv_graph *g, const char *name) {
    tconv_value *v = NULL;
    tc_error err;
    assert_int_equal(tc_graph_get_or_add_value(g, name, &v, &err), TCONV_OK);
    return v;
}

/* A graph input with a static shape (dims may be NULL for rank 0). A negative dim becomes a
 * symbolic dim named "d<axis>". */
static inline tconv_value *rtt_input(tconv_graph *g, const char *name, tconv_dtype dtype, int rank,
                                     const int64_t *dims) {
    tconv_value *v = rtt_value(g, name);
    tc_dim d[TC_MAX_RANK];
    static const char *const params[] = {"d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"};
    for (int i = 0; i < rank; i++) {
        memset(&d[i], 0, sizeof d[i]);
        if (dims[i] >= 0) {
            d[i].kind = TCONV_DIM_STATIC;
            d[i].value = dims[i];
        } else {
            d[i].kind = TCONV_DIM_SYMBOLIC;
            d[i].param = params[i];
        }
    }
    tc_error err;
    assert_int_equal(tc_value_set_tensor_type(v, dtype, rank, d, &err), TCONV_OK);
    assert_int_equal(tc_graph_add_input(g, v, NULL, &err), TCONV_OK);
    return v;
}

static inline tconv_value *rtt_init(tconv_graph *g, const char *name, tconv_dtype dtype, int rank,
                                    const int64_t *dims, const void *data, size_t nbytes) {
    tconv_tensor *t = NULL;
    tc_error err;
    assert_int_equal(tc_tensor_create(g->model, name, dtype, rank, dims, data, nbytes, &t, &err),
                     TCONV_OK);
    assert_int_equal(tc_graph_add_initializer(g, t, &err), TCONV_OK);
    return t->value;
}

static inline tconv_value *rtt_init_i64(tconv_graph *g, const char *name, size_t n,
                                        const int64_t *values) {
    int64_t dims[1] = {(int64_t)n};
    return rtt_init(g, name, TCONV_DTYPE_INT64, 1, dims, values, n * sizeof(int64_t));
}

/* A node with the given inputs (NULL entries: omitted) and outputs named by strings. */
static inline tconv_node *rtt_node(tconv_graph *g, const char *op, const char *name,
                                   tconv_value *const *inputs, size_t n_inputs,
                                   const char *const *outputs, size_t n_outputs) {
    tconv_node *n = NULL;
    tc_error err;
    assert_int_equal(tc_node_create(g, op, "", name, &n, &err), TCONV_OK);
    for (size_t i = 0; i < n_inputs; i++)
        assert_int_equal(tc_node_add_input(n, inputs[i], &err), TCONV_OK);
    for (size_t i = 0; i < n_outputs; i++)
        assert_int_equal(tc_node_add_output(n, outputs[i] ? rtt_value(g, outputs[i]) : NULL, &err),
                         TCONV_OK);
    tc_graph_append_node(g, n);
    return n;
}

static inline void rtt_output(tconv_graph *g, const char *name) {
    tc_error err;
    assert_int_equal(tc_graph_add_output(g, rtt_value(g, name), NULL, &err), TCONV_OK);
}

static inline tc_rt_tensor rtt_tensor(tconv_dtype dtype, int rank, const int64_t *dims,
                                      const void *data) {
    tc_rt_tensor t;
    tc_error err;
    assert_int_equal(tc_rt_tensor_alloc(&t, dtype, rank, dims, &err), TCONV_OK);
    if (data && t.nbytes)
        memcpy(t.data, data, t.nbytes);
    return t;
}

/* Creates a session, runs it and returns the status; err receives the message. */
static inline tconv_status rtt_run(tconv_model *m, const tc_rt_tensor *inputs, size_t n_inputs,
                                   tc_rt_tensor *outputs, tc_error *err) {
    tc_session *s = NULL;
    tconv_status st = tc_session_create(m, NULL, &s, err);
    if (st != TCONV_OK)
        return st;
    st = tc_session_run(s, inputs, n_inputs, outputs, err);
    tc_session_free(s);
    return st;
}

/* Creates a session with `options` (NULL: the defaults), runs it, asserting success (the message
 * printed otherwise), and returns the kernel calls it made. */
static inline uint64_t rtt_run_counted(tconv_model *m, const tc_session_options *options,
                                       const tc_rt_tensor *inputs, size_t n_inputs,
                                       tc_rt_tensor *outputs) {
    tc_session *s = NULL;
    tc_error err;
    assert_int_equal(tc_session_create(m, options, &s, &err), TCONV_OK);
    tconv_status st = tc_session_run(s, inputs, n_inputs, outputs, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    tc_session_stats stats;
    tc_session_get_stats(s, &stats);
    tc_session_free(s);
    return stats.n_kernel_calls;
}

static inline void rtt_assert_floats(const tc_rt_tensor *t, const float *expected, size_t n) {
    assert_int_equal(t->dtype, TCONV_DTYPE_FLOAT);
    assert_int_equal(t->n_elements, (int64_t)n);
    const float *got = t->data;
    for (size_t i = 0; i < n; i++) {
        if (got[i] != expected[i]) {
            print_error("element %zu: got %.9g, expected %.9g\n", i, (double)got[i],
                        (double)expected[i]);
            fail();
        }
    }
}

static inline void rtt_assert_dims(const tc_rt_tensor *t, int rank, const int64_t *dims) {
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(t->dims[i], dims[i]);
}

static inline void rtt_assert_contains(const char *haystack, const char *needle) {
    if (!strstr(haystack, needle)) {
        print_error("'%s' does not contain '%s'\n", haystack, needle);
        fail();
    }
}

#endif
