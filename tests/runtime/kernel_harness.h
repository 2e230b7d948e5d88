/* Test harness for calling one kernel directly: a node with attributes (in a scratch model),
 * runtime input tensors and an empty output array, run through the op table's kernel without a
 * session (attributes checked as the executor's plan does). Everything is checked with cmocka
 * asserts. */
#ifndef TC_TESTS_RUNTIME_KERNEL_HARNESS_H
#define TC_TESTS_RUNTIME_KERNEL_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "runtime/kernels/kernel.h"
#include "runtime/compute/rt_tensor.h"

#define KH_MAX_INPUTS 8
#define KH_MAX_OUTPUTS 4

typedef struct kernel_harness {
    tconv_model *model;
    tconv_node *node;
    tc_rt_tensor inputs[KH_MAX_INPUTS];
    bool present[KH_MAX_INPUTS];
    const tc_rt_tensor *input_ptrs[KH_MAX_INPUTS];
    size_t n_inputs;
    tc_rt_tensor outputs[KH_MAX_OUTPUTS];
    size_t n_outputs;
    int64_t opset;
    int n_threads;
    tc_thread_pool *pool;                   /* made on the first run with n_threads > 1 */
    const tc_kernel_activation *activation; /* as the executor fuses one (NULL: none) */
    tc_error err;
} kernel_harness;

static inline void kh_init(kernel_harness *h, const char *op_type, size_t n_outputs) {
    memset(h, 0, sizeof *h);
    assert_int_equal(tc_model_create(&h->model, &h->err), TCONV_OK);
    assert_int_equal(tc_node_create(h->model->graph, op_type, "", "test_node", &h->node, &h->err),
                     TCONV_OK);
    h->n_outputs = n_outputs;
    h->opset = 17;
    h->n_threads = 1;
}

static inline void kh_free(kernel_harness *h) {
    for (size_t i = 0; i < KH_MAX_INPUTS; i++)
        tc_rt_tensor_release(&h->inputs[i]);
    for (size_t i = 0; i < KH_MAX_OUTPUTS; i++)
        tc_rt_tensor_release(&h->outputs[i]);
    tc_thread_pool_destroy(h->pool);
    tconv_model_free(h->model);
}

static inline void kh_attr_ints(kernel_harness *h, const char *name, size_t n,
                                const int64_t *values) {
    assert_int_equal(tc_node_set_attr_ints(h->node, name, values, n, &h->err), TCONV_OK);
}

static inline void kh_attr_int(kernel_harness *h, const char *name, int64_t value) {
    assert_int_equal(tc_node_set_attr_int(h->node, name, value, &h->err), TCONV_OK);
}

static inline void kh_attr_float(kernel_harness *h, const char *name, float value) {
    assert_int_equal(tc_node_set_attr_float(h->node, name, value, &h->err), TCONV_OK);
}

static inline void kh_attr_string(kernel_harness *h, const char *name, const char *value) {
    assert_int_equal(tc_node_set_attr_string(h->node, name, value, &h->err), TCONV_OK);
}

/* Appends an input of the given dtype and shape; data (may be NULL: zeros) is copied. */
static inline tc_rt_tensor *kh_input_typed(kernel_harness *h, tconv_dtype dtype, int rank,
                                           const int64_t *dims, const void *data) {
    assert_true(h->n_inputs < KH_MAX_INPUTS);
    tc_rt_tensor *t = &h->inputs[h->n_inputs];
    assert_int_equal(tc_rt_tensor_alloc(t, dtype, rank, dims, &h->err), TCONV_OK);
    if (data && t->nbytes)
        memcpy(t->data, data, t->nbytes);
    h->present[h->n_inputs++] = true;
    return t;
}

static inline tc_rt_tensor *kh_input(kernel_harness *h, int rank, const int64_t *dims,
                                     const float *data) {
    return kh_input_typed(h, TCONV_DTYPE_FLOAT, rank, dims, data);
}

/* An omitted optional input. */
static inline void kh_skip_input(kernel_harness *h) {
    assert_true(h->n_inputs < KH_MAX_INPUTS);
    h->present[h->n_inputs++] = false;
}

/* Runs the node's kernel; returns its status (message in h->err). */
static inline tconv_status kh_run(kernel_harness *h) {
    tc_op op = tc_op_find("", h->node->op_type, h->opset);
    tc_kernel_fn kernel = tc_kernel_for(op);
    assert_non_null(kernel);
    for (size_t i = 0; i < h->n_inputs; i++)
        h->input_ptrs[i] = h->present[i] ? &h->inputs[i] : NULL;
    for (size_t i = 0; i < KH_MAX_OUTPUTS; i++)
        tc_rt_tensor_release(&h->outputs[i]);
    tc_error_clear(&h->err);
    if (h->n_threads > 1 && !h->pool)
        assert_non_null(h->pool = tc_thread_pool_create());
    tc_kernel_ctx ctx = {
        .node = h->node,
        .opset = h->opset,
        .inputs = h->input_ptrs,
        .n_inputs = h->n_inputs,
        .outputs = h->outputs,
        .n_outputs = h->n_outputs,
        .session = NULL,
        .n_threads = h->n_threads,
        .pool = h->pool,
        .err = &h->err,
        .activation = h->activation,
    };
    tconv_status st = tc_kernel_check_node_attrs(h->node, op, h->opset, &h->err);
    return st == TCONV_OK ? kernel(&ctx) : st;
}

/* Runs and expects success, printing the kernel's message otherwise. */
static inline void kh_run_ok(kernel_harness *h) {
    tconv_status st = kh_run(h);
    if (st != TCONV_OK)
        print_error("kernel failed: %s\n", h->err.message);
    assert_int_equal(st, TCONV_OK);
}

static inline void kh_expect_shape(const tc_rt_tensor *t, int rank, const int64_t *dims) {
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(t->dims[i], dims[i]);
}

/* |got - want| <= atol + rtol*|want| elementwise; names the first bad index. */
static inline void kh_expect_close(const float *got, const float *want, int64_t n, double rtol,
                                   double atol) {
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        double diff = g > w ? g - w : w - g;
        double mag = w < 0 ? -w : w;
        if (!(diff <= atol + rtol * mag)) {
            print_error("element %lld: got %.9g, want %.9g\n", (long long)i, g, w);
            fail();
        }
    }
}

/* Deterministic pseudo-random floats in [-1, 1). */
static inline uint64_t kh_rng_next(uint64_t *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 33;
}

static inline void kh_fill_random(float *data, int64_t n, uint64_t *state) {
    for (int64_t i = 0; i < n; i++)
        data[i] = (float)((double)kh_rng_next(state) / (double)(1ULL << 31) * 2.0 - 1.0);
}

static inline int64_t kh_rand_range(uint64_t *state, int64_t lo, int64_t hi) {
    return lo + (int64_t)(kh_rng_next(state) % (uint64_t)(hi - lo + 1));
}

#endif
