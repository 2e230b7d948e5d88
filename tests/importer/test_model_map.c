/* Zero-copy loading (model_map.h): large raw_data payloads are borrowed from the mapped file,
 * the message unpacked from the hollowed copy is the message protobuf-c unpacks from the file,
 * saving an unchanged model reproduces the file byte for byte, and damaged inputs give the
 * same message (or the same failure) as plain protobuf-c, without crashing. */
#define _XOPEN_SOURCE 700

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "importer/importer.h"
#include "importer/model_map.h"
#include "onnx_builder.h"
#include "tmpdir.h"

#define BIG 1024 /* floats: 4 KiB payloads, hollowed */
#define SMALL 4  /* floats: 16 bytes, below TC_HOLLOW_MIN_BYTES: copied */

static float *ramp(pbb *b, size_t n, float start) {
    float *v = pbb_alloc(b, n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = start + (float)i;
    return v;
}

static ProtobufCMessageUnknownField *unknown_bytes(pbb *b, uint32_t tag, const uint8_t *payload,
                                                   uint8_t len) {
    ProtobufCMessageUnknownField *u = pbb_alloc(b, sizeof *u);
    uint8_t *data = pbb_alloc(b, (size_t)len + 1);
    data[0] = len; /* protobuf-c keeps the length prefix in the data */
    memcpy(data + 1, payload, len);
    u->tag = tag;
    u->wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
    u->len = (size_t)len + 1;
    u->data = data;
    return u;
}

/* y = x + w; a Constant with a tensor attribute; a custom op whose graph attribute holds an
 * initializer; a TENSORS attribute; a sparse initializer; an unknown field after raw_data. */
static uint8_t *build_model(size_t *size) {
    pbb b = {tc_arena_create()};
    Onnx__ModelProto *m = pbb_model(&b, 17);
    Onnx__GraphProto *g = m->graph;
    const int64_t big[] = {BIG}, small[] = {SMALL};
    pbb_input(&b, g, "x", 1, big);
    pbb_output(&b, g, "y", 1, big);
    pbb_output(&b, g, "c", 1, big);
    Onnx__TensorProto *w = pbb_tensor(&b, "w", 1, big, ramp(&b, BIG, 1), BIG);
    w->base.n_unknown_fields = 1;
    w->base.unknown_fields = unknown_bytes(&b, 1000, (const uint8_t *)"after", 5);
    pbb_push(&b, &g->initializer, &g->n_initializer, w);
    pbb_push(&b, &g->initializer, &g->n_initializer,
             pbb_tensor(&b, "s", 1, small, ramp(&b, SMALL, 7), SMALL));
    pbb_node(&b, g, "Add", "add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    Onnx__NodeProto *k =
        pbb_node(&b, g, "Constant", "k", (const char *[]){NULL}, (const char *[]){"c", NULL});
    pbb_attr(&b, k, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t =
        pbb_tensor(&b, "", 1, big, ramp(&b, BIG, 2), BIG);
    Onnx__GraphProto *body = pbb_graph(&b, "body");
    pbb_push(&b, &body->initializer, &body->n_initializer,
             pbb_tensor(&b, "inner", 1, big, ramp(&b, BIG, 3), BIG));
    pbb_output(&b, body, "inner", 1, big);
    Onnx__NodeProto *custom = pbb_node(&b, g, "Custom", "custom", (const char *[]){"x", NULL},
                                       (const char *[]){"z", NULL});
    custom->domain = pbb_str(&b, "test.domain");
    pbb_attr_graph(&b, custom, "body", body);
    Onnx__AttributeProto *list =
        pbb_attr(&b, custom, "list", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS);
    pbb_push(&b, &list->tensors, &list->n_tensors,
             pbb_tensor(&b, "", 1, big, ramp(&b, BIG, 4), BIG));
    pbb_push(&b, &list->tensors, &list->n_tensors,
             pbb_tensor(&b, "", 1, big, ramp(&b, BIG, 5), BIG));
    Onnx__SparseTensorProto *sp = pbb_alloc(&b, sizeof *sp);
    onnx__sparse_tensor_proto__init(sp);
    sp->values = pbb_tensor(&b, "sparse", 1, big, ramp(&b, BIG, 6), BIG);
    sp->n_dims = 1;
    sp->dims = tc_arena_memdup(b.arena, (const int64_t[]){2 * BIG}, sizeof(int64_t));
    pbb_push(&b, &g->sparse_initializer, &g->n_sparse_initializer, sp);
    uint8_t *bytes = pbb_pack(&m->base, size);
    tc_arena_destroy(b.arena);
    return bytes;
}

static char *write_temp(const char *dir, const char *name, const uint8_t *bytes, size_t size) {
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
    return path;
}

static uint8_t *read_all(const char *path, size_t *size) {
    void *data;
    tc_error err;
    assert_int_equal(tc_read_file(path, 0, &data, size, &err), TCONV_OK);
    return data;
}

static bool borrowed(const tconv_model *model, const tconv_tensor *t) {
    return t->storage == TCONV_STORAGE_RAW &&
           tc_onnx_loaded_contains(tc_onnx_model_loaded(model), t->raw, t->raw_size);
}

static void test_large_payloads_are_borrowed_and_saved_unchanged(void **state) {
    (void)state;
    size_t size, n_saved;
    uint8_t *bytes = build_model(&size);
    char *dir = tmpdir_create();
    char *in = write_temp(dir, "in.onnx", bytes, size);
    tconv_model *model;
    tc_error err;
    assert_int_equal(tc_model_load_file(in, NULL, &model, NULL, &err), TCONV_OK);
    tconv_graph *g = model->graph;
    assert_true(borrowed(model, g->initializers[0]));  /* w, with an unknown field after it */
    assert_false(borrowed(model, g->initializers[1])); /* s: small, copied */
    const tconv_node *k = g->first->next, *custom = k->next;
    assert_true(borrowed(model, tc_node_attr(k, "value")->t));
    const tc_attr *list = tc_node_attr(custom, "list");
    assert_true(borrowed(model, list->tensors[0]) && borrowed(model, list->tensors[1]));
    assert_true(borrowed(model, tc_node_attr(custom, "body")->g->initializers[0]));
    const void *data;
    size_t nbytes;
    assert_int_equal(tc_tensor_data(g->initializers[0], &data, &nbytes, &err), TCONV_OK);
    float first, last;
    memcpy(&first, data, sizeof first);
    memcpy(&last, (const uint8_t *)data + nbytes - sizeof last, sizeof last);
    assert_true(nbytes == BIG * sizeof(float) && first == 1.0f && last == (float)BIG);

    char *out = malloc(strlen(dir) + 16);
    sprintf(out, "%s/out.onnx", dir);
    assert_int_equal(tc_model_save_file(model, out, &err), TCONV_OK);
    uint8_t *saved = read_all(out, &n_saved);
    assert_int_equal(n_saved, size); /* protobuf-c wrote the input: the same bytes come back */
    assert_memory_equal(saved, bytes, size);
    /* Saving over the model's own input file: the mapping keeps the old contents alive. */
    assert_int_equal(tc_model_save_file(model, in, &err), TCONV_OK);
    free(saved);
    saved = read_all(in, &n_saved);
    assert_int_equal(n_saved, size);
    assert_memory_equal(saved, bytes, size);
    tconv_model_free(model);
    free(saved);
    free(out);
    free(in);
    tmpdir_remove_tree(dir);
    free(dir);
    free(bytes);
}

/* A buffer is copied once: the model stays valid after the caller's buffer is gone. */
static void test_buffer_is_copied_once(void **state) {
    (void)state;
    size_t size, n_saved;
    uint8_t *bytes = build_model(&size);
    uint8_t *mine = malloc(size);
    memcpy(mine, bytes, size);
    tconv_model *model;
    tc_error err;
    assert_int_equal(tc_model_load_buffer(mine, size, NULL, NULL, &model, NULL, &err), TCONV_OK);
    memset(mine, 0xAB, size);
    free(mine);
    assert_true(borrowed(model, model->graph->initializers[0]));
    void *saved;
    assert_int_equal(tc_model_save_buffer(model, &saved, &n_saved, &err), TCONV_OK);
    assert_int_equal(n_saved, size);
    assert_memory_equal(saved, bytes, size);
    free(saved);
    tconv_model_free(model);
    free(bytes);
}

/* ---------------------------------------------------------------- against plain protobuf-c */

/* Unpacks `data` both ways; both fail, or both give messages that pack to the same bytes. */
static void assert_same_as_protobuf_c(const uint8_t *data, size_t size) {
    Onnx__ModelProto *plain = onnx__model_proto__unpack(NULL, size, data);
    tc_onnx_loaded *loaded;
    tc_error err;
    assert_int_equal(tc_onnx_loaded_copy(data, size, &loaded, &err), TCONV_OK);
    Onnx__ModelProto *hollowed = NULL;
    tconv_status st = tc_onnx_loaded_unpack(loaded, &hollowed, &err);
    assert_int_equal(st == TCONV_OK, plain != NULL);
    if (plain) {
        size_t na, nb;
        uint8_t *a = pbb_pack(&plain->base, &na), *b = pbb_pack(&hollowed->base, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na);
        free(a);
        free(b);
        protobuf_c_message_free_unpacked(&plain->base, NULL);
    }
    tc_onnx_loaded_free(loaded);
}

/* raw_data given twice in one TensorProto (here: the second as an "unknown" field 9, which
 * protobuf-c reads as raw_data again): protobuf-c keeps the last, so must the loader. */
static void test_repeated_raw_data_keeps_the_last(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__ModelProto *m = pbb_model(&b, 17);
    const int64_t dims[] = {25}; /* 100 bytes: a one-byte length prefix */
    Onnx__TensorProto *t = pbb_tensor(&b, "w", 1, dims, ramp(&b, 25, 0), 25);
    uint8_t second[100];
    memset(second, 0x3f, sizeof second);
    t->base.n_unknown_fields = 1;
    t->base.unknown_fields = unknown_bytes(&b, 9, second, sizeof second);
    pbb_push(&b, &m->graph->initializer, &m->graph->n_initializer, t);
    size_t size;
    uint8_t *bytes = pbb_pack(&m->base, &size);
    assert_same_as_protobuf_c(bytes, size);
    tconv_model *model;
    tc_error err;
    tconv_status st = tc_model_load_buffer(bytes, size, NULL, NULL, &model, NULL, &err);
    if (st != TCONV_OK)
        fail_msg("%s", err.message);
    const tconv_tensor *w = model->graph->initializers[0];
    assert_int_equal(w->raw_size, sizeof second);
    assert_memory_equal(w->raw, second, sizeof second);
    tconv_model_free(model);
    free(bytes);
    tc_arena_destroy(b.arena);
}

/* Truncations and byte flips anywhere (length prefixes, tags, payloads): the same result as
 * protobuf-c, never a crash or a read outside the buffer (run under ASan). */
static void test_damaged_inputs_match_protobuf_c(void **state) {
    (void)state;
    size_t size;
    uint8_t *bytes = build_model(&size);
    assert_same_as_protobuf_c(bytes, size);
    uint8_t *copy = malloc(size);
    for (size_t cut = 0; cut < size; cut += 1 + cut / 64)
        assert_same_as_protobuf_c(bytes, cut);
    static const uint8_t flips[] = {0x00, 0xff, 0x80, 0x7f, 0x01, 0x0a};
    for (size_t i = 0; i < size; i += 1 + (i > 512 ? 97 : 0)) {
        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(copy, bytes, size);
            copy[i] = flips[f];
            assert_same_as_protobuf_c(copy, size);
        }
    }
    free(copy);
    free(bytes);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_payloads_are_borrowed_and_saved_unchanged),
        cmocka_unit_test(test_buffer_is_copied_once),
        cmocka_unit_test(test_repeated_raw_data_keeps_the_last),
        cmocka_unit_test(test_damaged_inputs_match_protobuf_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
