/* Hostile input (issue 16): subgraphs nested past what the stack holds, tensor data read past
 * the memory limit, and names whose bytes must not reach a terminal or a JSON report raw. */
#define _XOPEN_SOURCE 700

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "importer/importer.h"
#include "ir/strbuf.h"
#include "runtime/session/session.h"

#define BROKEN_DIR TCONV_SOURCE_DIR "/tests/broken"

/* ---------------------------------------------------------------- protobuf wire bytes */

typedef struct wire {
    uint8_t *data;
    size_t len, cap;
} wire;

static void put(wire *w, const void *p, size_t n) {
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2;
        w->data = realloc(w->data, w->cap);
        assert_non_null(w->data);
    }
    if (n) /* an empty sub-message has no data yet */
        memcpy(w->data + w->len, p, n);
    w->len += n;
}

static void put_varint(wire *w, uint64_t v) {
    do {
        uint8_t b = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        put(w, &b, 1);
        v >>= 7;
    } while (v);
}

static void put_bytes(wire *w, unsigned field, const void *p, size_t n) {
    put_varint(w, (uint64_t)field << 3 | 2);
    put_varint(w, n);
    put(w, p, n);
}

static void put_str(wire *w, unsigned field, const char *s) {
    put_bytes(w, field, s, strlen(s));
}

static void put_int(wire *w, unsigned field, uint64_t v) {
    put_varint(w, (uint64_t)field << 3);
    put_varint(w, v);
}

/* Moves `inner` into w as field `field` (a sub-message). */
static void put_message(wire *w, unsigned field, wire *inner) {
    put_bytes(w, field, inner->data, inner->len);
    free(inner->data);
    memset(inner, 0, sizeof *inner);
}

/* ValueInfoProto name: float [1] (elem_type 1) or bool scalar (9). */
static void put_value_info(wire *w, unsigned field, const char *name, bool is_bool) {
    wire vi = {0}, type = {0}, tensor = {0}, shape = {0}, dim = {0};
    put_int(&tensor, 1, is_bool ? 9 : 1);
    if (!is_bool) {
        put_int(&dim, 1, 1);
        put_message(&shape, 1, &dim);
    }
    put_message(&tensor, 2, &shape);
    put_message(&type, 1, &tensor);
    put_str(&vi, 1, name);
    put_message(&vi, 2, &type);
    put_message(w, field, &vi);
}

/* Graph "leaf": Y = Constant([1.0]). */
static wire leaf_graph(void) {
    wire g = {0}, node = {0}, attr = {0}, t = {0};
    float one = 1.0f;
    put_int(&t, 1, 1);          /* dims */
    put_int(&t, 2, 1);          /* data_type FLOAT */
    put_bytes(&t, 4, &one, 4);  /* float_data, packed */
    put_str(&attr, 1, "value"); /* name */
    put_int(&attr, 20, 4);      /* type TENSOR */
    put_message(&attr, 5, &t);  /* t */
    put_str(&node, 2, "Y");     /* output */
    put_str(&node, 4, "Constant");
    put_message(&node, 5, &attr);
    put_message(&g, 1, &node);
    put_str(&g, 2, "leaf");
    put_value_info(&g, 12, "Y", false);
    return g;
}

/* An If attribute holding `body` (consumed). */
static void put_branch(wire *node, const char *name, wire *body) {
    wire attr = {0};
    put_str(&attr, 1, name);
    put_int(&attr, 20, 5); /* GRAPH */
    put_message(&attr, 6, body);
    put_message(node, 5, &attr);
}

/* A model whose main graph is an If whose then_branch nests `depth` - 1 more levels of If:
 * subgraphs `depth` deep. Built as wire bytes, inside out: no recursion here either. */
static wire nested_if_model(int depth) {
    wire body = leaf_graph();
    for (int level = depth; level >= 1; level--) {
        wire node = {0}, g = {0}, leaf = leaf_graph();
        put_str(&node, 1, "C");
        put_str(&node, 2, "Y");
        put_str(&node, 4, "If");
        put_branch(&node, "then_branch", &body);
        put_branch(&node, "else_branch", &leaf);
        put_message(&g, 1, &node);
        put_str(&g, 2, level == 1 ? "main" : "level");
        if (level == 1)
            put_value_info(&g, 11, "C", true);
        put_value_info(&g, 12, "Y", false);
        body = g;
    }
    wire model = {0}, opset = {0};
    put_int(&model, 1, 8); /* ir_version */
    put_message(&model, 7, &body);
    put_str(&opset, 1, "");
    put_int(&opset, 2, 17);
    put_message(&model, 8, &opset);
    return model;
}

/* ---------------------------------------------------------------- nesting */

/* 3000 levels used to overflow the stack in protobuf-c's unpacker: a depth limit above
 * TCONV_GRAPH_DEPTH_MAX is held to it, and the model is refused with an error. */
static void test_nesting_past_the_cap_is_refused(void **state) {
    (void)state;
    wire m = nested_if_model(3000);
    tc_load_options options;
    tc_load_options_init(&options);
    options.max_graph_depth = 3000;
    tconv_model *model = NULL;
    tc_error err;
    tconv_status st = tc_model_load_buffer(m.data, m.len, NULL, &options, &model, NULL, &err);
    free(m.data);
    assert_int_equal(st, TCONV_ERR_LIMIT);
    assert_null(model);
    assert_non_null(strstr(err.message, "nested deeper than"));
}

/* The deepest nesting the cap allows loads, verifies and runs. */
static void test_nesting_at_the_cap_loads_and_runs(void **state) {
    (void)state;
    wire m = nested_if_model(TCONV_GRAPH_DEPTH_MAX - 1); /* plus the leaf: the cap */
    tc_load_options options;
    tc_load_options_init(&options);
    options.max_graph_depth = TCONV_GRAPH_DEPTH_MAX;
    tconv_model *model = NULL;
    tc_error err;
    tconv_status st = tc_model_load_buffer(m.data, m.len, NULL, &options, &model, NULL, &err);
    free(m.data);
    if (st != TCONV_OK)
        fail_msg("%s", err.message);
    tc_session *s = NULL;
    if (tc_session_create(model, NULL, &s, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    tc_rt_tensor cond, out;
    memset(&out, 0, sizeof out);
    assert_int_equal(tc_rt_tensor_alloc(&cond, TCONV_DTYPE_BOOL, 0, NULL, &err), TCONV_OK);
    /* false: the else branch; true: the runtime refuses to run subgraphs this deep */
    ((uint8_t *)cond.data)[0] = 0;
    if (tc_session_run(s, &cond, 1, &out, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_int_equal(out.n_elements, 1);
    assert_true(((const float *)out.data)[0] == 1.0f);
    tc_rt_tensor_release(&out);
    ((uint8_t *)cond.data)[0] = 1;
    assert_int_equal(tc_session_run(s, &cond, 1, &out, &err), TCONV_ERR_LIMIT);
    tc_rt_tensor_release(&cond);
    tc_rt_tensor_release(&out);
    tc_session_free(s);
    tconv_model_free(model);
}

/* ---------------------------------------------------------------- memory */

static tconv_tensor *load_external_weight(size_t max_memory_bytes, tconv_model **model) {
    tc_load_options options;
    tc_load_options_init(&options);
    options.max_memory_bytes = max_memory_bytes;
    tc_error err;
    if (tc_model_load_file(BROKEN_DIR "/external_memory/model.onnx", &options, model, NULL, &err) !=
        TCONV_OK)
        fail_msg("%s", err.message);
    tconv_tensor *w = (*model)->graph->initializers[0];
    assert_int_equal(w->storage, TCONV_STORAGE_EXTERNAL);
    return w;
}

/* 2 MiB of external data against a 1 MiB limit: refused before anything is read. */
static void test_external_data_counts_against_the_memory_limit(void **state) {
    (void)state;
    tconv_model *model;
    tconv_tensor *w = load_external_weight((size_t)1 << 20, &model);
    const void *data;
    size_t nbytes;
    tc_error err;
    assert_int_equal(tc_tensor_data(w, &data, &nbytes, &err), TCONV_ERR_LIMIT);
    assert_non_null(strstr(err.message, "tensor 'W': reading its 2096704 bytes"));
    assert_null(w->decoded);
    assert_int_equal(model->decoded_bytes, 0);
    tconv_model_free(model);
}

/* The runtime's copy of an external initializer is the only one: it is read straight into the
 * copy the session counts, not cached in the model as well (that doubled the memory). */
static void test_runtime_reads_external_data_once(void **state) {
    (void)state;
    tconv_model *model;
    tconv_tensor *w = load_external_weight(0, &model);
    tc_session *s = NULL;
    tc_error err;
    if (tc_session_create(model, NULL, &s, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_null(w->decoded);
    assert_int_equal(model->decoded_bytes, 0);
    tc_session_free(s);
    tconv_model_free(model);
}

/* ---------------------------------------------------------------- escaping */

static void test_messages_escape_control_bytes_and_bad_utf8(void **state) {
    (void)state;
    tc_error err;
    tc_error_set(&err, TCONV_ERR_INVALID, "node '%s'", "a\x1b[31m\a\n\xff\xc3\xa9\xc2\x9b");
    assert_string_equal(err.message, "node 'a\\x1b[31m\\x07\\x0a\\xff\xc3\xa9\\xc2\\x9b'");
    tc_error_prefix(&err, TCONV_ERR_INVALID, "graph '%s': ", "g\x7f");
    assert_string_equal(err.message,
                        "graph 'g\\x7f': node 'a\\x1b[31m\\x07\\x0a\\xff\xc3\xa9\\xc2\\x9b'");
    char twice[64];
    tc_escape_cstr(twice, sizeof twice, "a\\x1b\xe2\x82\xac"); /* escaping is idempotent */
    assert_string_equal(twice, "a\\x1b\xe2\x82\xac");
    tc_escape_cstr(twice, 6, "abcd\x01");
    assert_string_equal(twice, "abcd"); /* no half escape at the end */
}

static void test_json_strings_are_valid_for_any_bytes(void **state) {
    (void)state;
    tc_strbuf sb;
    tc_strbuf_init(&sb);
    static const char name[] = "n\"\\\x1b\x7f\xff\xc3\xa9\xed\xa0\x80\xf0\x9f\x98\x80";
    tc_strbuf_append_json_string(&sb, name, sizeof name - 1);
    assert_string_equal(tc_strbuf_str(&sb), "\"n\\\"\\\\\\u001b\\u007f\\ufffd\xc3\xa9"
                                            "\\ufffd\\ufffd\\ufffd\xf0\x9f\x98\x80\"");
    tc_strbuf_free(&sb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting_past_the_cap_is_refused),
        cmocka_unit_test(test_nesting_at_the_cap_loads_and_runs),
        cmocka_unit_test(test_external_data_counts_against_the_memory_limit),
        cmocka_unit_test(test_runtime_reads_external_data_once),
        cmocka_unit_test(test_messages_escape_control_bytes_and_bad_utf8),
        cmocka_unit_test(test_json_strings_are_valid_for_any_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
