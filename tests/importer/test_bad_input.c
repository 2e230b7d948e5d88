/* The importer on broken input: every defect gives a status and a message that names the file,
 * graph, node and field; nothing crashes (run these under ASan/UBSan too). */
#define _XOPEN_SOURCE 700

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "importer/importer.h"
#include "onnx_builder.h"
#include "tmpdir.h"

#define SMALL_MODEL TCONV_ONNX_NODE_TESTS "/test_convtranspose/model.onnx"

static const int64_t DIMS_2x3[] = {2, 3};
static const float SIX[] = {1, 2, 3, 4, 5, 6};

/* Serializes m, loads it from memory and keeps the error; frees any model that loaded. */
static tconv_status load_message(const Onnx__ModelProto *m, const tc_load_options *options,
                                 tc_error *err) {
    size_t size;
    uint8_t *bytes = pbb_pack(&m->base, &size);
    tconv_model *model = NULL;
    tconv_status st = tc_model_load_buffer(bytes, size, NULL, options, &model, NULL, err);
    tconv_model_free(model);
    free(bytes);
    return st;
}

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        if (!strstr((haystack), (needle)))                                                         \
            fail_msg("message \"%s\" lacks \"%s\"", (haystack), (needle));                         \
    } while (0)

/* x (2x3) -> y, with an initializer w that a test can break. */
static Onnx__ModelProto *model_with_w(pbb *b, Onnx__TensorProto **w) {
    Onnx__ModelProto *m = pbb_model(b, 17);
    Onnx__GraphProto *g = m->graph;
    pbb_input(b, g, "x", 2, DIMS_2x3);
    pbb_output(b, g, "y", 2, DIMS_2x3);
    *w = pbb_tensor(b, "w", 2, DIMS_2x3, SIX, 6);
    pbb_push(b, &g->initializer, &g->n_initializer, *w);
    pbb_node(b, g, "Add", "add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    return m;
}

static void read_small_model(uint8_t **bytes, size_t *size) {
    tc_error err;
    if (tc_read_file(SMALL_MODEL, 0, (void **)bytes, size, &err) != TCONV_OK)
        fail_msg("%s", err.message);
}

/* ---------------------------------------------------------------- damaged bytes */

static void test_every_truncation_fails_cleanly(void **state) {
    (void)state;
    uint8_t *bytes;
    size_t size;
    read_small_model(&bytes, &size);
    size_t n_ok = 0;
    for (size_t len = 0; len < size; len++) {
        uint8_t *copy = malloc(len ? len : 1); /* exact size, so ASan sees any over-read */
        memcpy(copy, bytes, len);
        tconv_model *model = NULL;
        tc_error err;
        tconv_status st = tc_model_load_buffer(copy, len, NULL, NULL, &model, NULL, &err);
        if (st == TCONV_OK) {
            n_ok++; /* a prefix can end on a field boundary and still be a valid model */
            tconv_model_free(model);
        } else {
            assert_null(model);
            assert_contains(err.message, "<memory>: ");
        }
        free(copy);
    }
    assert_true(n_ok < size / 2);
    free(bytes);
}

static void test_truncated_file_is_a_parse_error_naming_the_file(void **state) {
    (void)state;
    uint8_t *bytes;
    size_t size;
    read_small_model(&bytes, &size);
    char *dir = tmpdir_create();
    assert_int_equal(tmpdir_write(dir, "model.onnx", bytes, size - 3), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    tconv_model *model;
    tc_error err;
    assert_int_equal(tc_model_load_file(path, NULL, &model, NULL, &err), TCONV_ERR_PARSE);
    assert_contains(err.message, path);
    assert_contains(err.message, "not a valid ONNX ModelProto (protobuf decoding failed)");
    tmpdir_free(dir);
    free(bytes);
}

static void test_bit_flips_fail_cleanly(void **state) {
    (void)state;
    uint8_t *bytes;
    size_t size;
    read_small_model(&bytes, &size);
    size_t n_failed = 0;
    for (size_t i = 0; i < size; i++) {
        for (int bit = 0; bit < 8; bit++) {
            bytes[i] ^= (uint8_t)(1u << bit);
            tconv_model *model = NULL;
            tc_error err;
            if (tc_model_load_buffer(bytes, size, NULL, NULL, &model, NULL, &err) == TCONV_OK)
                tconv_model_free(model); /* e.g. a flipped bit inside float data */
            else
                n_failed++;
            bytes[i] ^= (uint8_t)(1u << bit);
        }
    }
    assert_true(n_failed > 0);
    free(bytes);
}

static void test_garbage_is_a_parse_error(void **state) {
    (void)state;
    uint8_t garbage[512];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof garbage; i++) {
        x = x * 1103515245u + 12345u;
        garbage[i] = (uint8_t)(x >> 24);
    }
    memcpy(garbage, "this is not an ONNX model", 25);
    tconv_model *model;
    tc_error err;
    assert_int_equal(tc_model_load_buffer(garbage, sizeof garbage, NULL, NULL, &model, NULL, &err),
                     TCONV_ERR_PARSE);
    assert_null(model);
    assert_contains(err.message, "not a valid ONNX ModelProto (protobuf decoding failed)");
}

static void test_empty_and_missing_files(void **state) {
    (void)state;
    char *dir = tmpdir_create();
    assert_int_equal(tmpdir_write(dir, "empty.onnx", "", 0), 0);
    char path[4096];
    tconv_model *model;
    tc_error err;
    snprintf(path, sizeof path, "%s/empty.onnx", dir);
    assert_int_equal(tc_model_load_file(path, NULL, &model, NULL, &err), TCONV_ERR_PARSE);
    assert_contains(err.message, "empty.onnx: the file is empty");
    snprintf(path, sizeof path, "%s/missing.onnx", dir);
    assert_int_equal(tc_model_load_file(path, NULL, &model, NULL, &err), TCONV_ERR_IO);
    assert_contains(err.message, "missing.onnx: cannot open");
    tmpdir_free(dir);
}

/* Sub-message nesting far deeper than any graph: refused before protobuf-c's recursive
 * unpacker sees it. */
static void test_nesting_bomb_is_refused(void **state) {
    (void)state;
    size_t cap = 1 << 20, len = 0;
    uint8_t *buf = malloc(cap), *tmp = malloc(cap);
    /* graph { node { attribute { g { node { ... } } } } }, built inside out. */
    for (int level = 0; level < 3 * 6000 && len + 16 < cap; level++) {
        static const uint8_t tags[] = {0x32 /* attr.g=6 */, 0x2a /* node.attribute=5 */,
                                       0x0a /* graph.node=1 */};
        uint8_t tag = tags[level % 3];
        size_t n = 0;
        tmp[n++] = tag;
        for (size_t v = len;; v >>= 7) {
            tmp[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
            if (v < 0x80)
                break;
        }
        memcpy(tmp + n, buf, len);
        memcpy(buf, tmp, n + len);
        len += n;
    }
    uint8_t *model_bytes = malloc(len + 8);
    size_t n = 0;
    model_bytes[n++] = 0x3a; /* ModelProto.graph = 7 */
    for (size_t v = len;; v >>= 7) {
        model_bytes[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80)
            break;
    }
    memcpy(model_bytes + n, buf, len);
    tconv_model *model;
    tc_error err;
    tconv_status st = tc_model_load_buffer(model_bytes, n + len, NULL, NULL, &model, NULL, &err);
    assert_int_equal(st, TCONV_ERR_LIMIT);
    assert_contains(err.message, "nested deeper");
    free(buf);
    free(tmp);
    free(model_bytes);
}

/* ---------------------------------------------------------------- tensors */

static void test_raw_data_of_the_wrong_size(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__TensorProto *w;
    Onnx__ModelProto *m = model_with_w(&b, &w);
    w->raw_data.len = 5 * sizeof(float);
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "<memory>: graph 'main': initializer #0: tensor 'w': raw_data "
                                 "has 20 bytes, dims x float need 24");
    tc_arena_destroy(b.arena);
}

static void test_typed_data_of_the_wrong_count(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__TensorProto *w;
    Onnx__ModelProto *m = model_with_w(&b, &w);
    w->has_raw_data = 0;
    w->n_float_data = 5;
    w->float_data = (float *)SIX;
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "tensor 'w': float_data has 5 values");
    w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64; /* float_data on an int64 tensor */
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "float_data is set but a int64 tensor keeps its data in "
                                 "int64_data");
    tc_arena_destroy(b.arena);
}

static void test_negative_dims(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__TensorProto *w;
    Onnx__ModelProto *m = model_with_w(&b, &w);
    w->dims[1] = -3;
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "tensor 'w': dims[1] is negative (-3)");
    tc_arena_destroy(b.arena);
}

static void test_unknown_dtype(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__TensorProto *w;
    Onnx__ModelProto *m = model_with_w(&b, &w);
    w->data_type = 99;
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "tensor 'w': data_type 99 is not a known ONNX type");
    m->graph->input[0]->type->tensor_type->elem_type = 77;
    w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "input 'x': type: elem_type 77");
    tc_arena_destroy(b.arena);
}

static void test_tensor_limit(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__TensorProto *w;
    Onnx__ModelProto *m = model_with_w(&b, &w);
    tc_load_options options;
    tc_load_options_init(&options);
    options.max_tensor_bytes = 16;
    tc_error err;
    assert_int_equal(load_message(m, &options, &err), TCONV_ERR_LIMIT);
    assert_contains(err.message, "tensor 'w': 24 bytes of data, over the limit of 16");
    tc_arena_destroy(b.arena);
}

/* ---------------------------------------------------------------- nodes and attributes */

static Onnx__ModelProto *conv_transpose_model(pbb *b, Onnx__NodeProto **node) {
    Onnx__ModelProto *m = pbb_model(b, 17);
    Onnx__GraphProto *g = m->graph;
    const int64_t x_dims[] = {1, 1, 3, 3}, w_dims[] = {1, 1, 2, 2};
    pbb_input(b, g, "x", 4, x_dims);
    pbb_input(b, g, "w", 4, w_dims);
    pbb_output(b, g, "y", -1, NULL);
    pbb_node(b, g, "Relu", "relu0", (const char *[]){"x", NULL}, (const char *[]){"r", NULL});
    *node = pbb_node(b, g, "ConvTranspose", "conv1", (const char *[]){"r", "w", NULL},
                     (const char *[]){"y", NULL});
    return m;
}

static void test_wrong_attribute_type(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__NodeProto *conv;
    Onnx__ModelProto *m = conv_transpose_model(&b, &conv);
    pbb_attr_float(&b, conv, "pads", 1.0f); /* well-formed, but pads must be INTS */
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "<memory>: graph 'main': node 'conv1' (#1, ConvTranspose): "
                                 "attribute 'pads': expected INTS, got FLOAT");
    /* Declared INTS but holding a float: the attribute itself is inconsistent. */
    conv->attribute[0]->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "node 'conv1' (#1, ConvTranspose): attribute 'pads': expected "
                                 "INTS, got FLOAT");
    tc_arena_destroy(b.arena);
}

static void test_duplicate_producer(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__NodeProto *conv;
    Onnx__ModelProto *m = conv_transpose_model(&b, &conv);
    pbb_node(&b, m->graph, "Abs", "abs2", (const char *[]){"x", NULL}, (const char *[]){"r", NULL});
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "node 'abs2' (#2, Abs): output 'r' is already produced by node "
                                 "'relu0' (#0, Relu)");
    tc_arena_destroy(b.arena);
}

static void test_cycle(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__ModelProto *m = pbb_model(&b, 17);
    Onnx__GraphProto *g = m->graph;
    pbb_input(&b, g, "x", 2, DIMS_2x3);
    pbb_output(&b, g, "y", 2, DIMS_2x3);
    pbb_node(&b, g, "Add", "add", (const char *[]){"x", "u", NULL}, (const char *[]){"t", NULL});
    pbb_node(&b, g, "Relu", "relu", (const char *[]){"t", NULL}, (const char *[]){"u", NULL});
    pbb_node(&b, g, "Abs", "abs", (const char *[]){"t", NULL}, (const char *[]){"y", NULL});
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "<memory>: graph 'main': cycle through node '");
    assert_true(strstr(err.message, "'add'") || strstr(err.message, "'relu'"));
    tc_arena_destroy(b.arena);
}

static void test_undefined_input(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__NodeProto *conv;
    Onnx__ModelProto *m = conv_transpose_model(&b, &conv);
    conv->input[1] = pbb_str(&b, "nowhere");
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "graph 'main': node 'conv1' (#1, ConvTranspose): input 1 "
                                 "'nowhere' is not defined");
    tc_arena_destroy(b.arena);
}

/* Many tiny sub-messages unpack to ~100x their size: the file-size limit bounds that too. */
static void test_decoding_amplification_is_bounded(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__TensorProto *w;
    Onnx__ModelProto *m = model_with_w(&b, &w);
    for (int i = 0; i < 20000; i++) {
        Onnx__NodeProto *empty = pbb_alloc(&b, sizeof *empty);
        onnx__node_proto__init(empty);
        pbb_push(&b, &m->graph->node, &m->graph->n_node, empty);
    }
    tc_load_options options;
    tc_load_options_init(&options);
    options.max_file_bytes = 256 * 1024; /* the file is ~40 kB, unpacked ~3 MB */
    tc_error err;
    assert_int_equal(load_message(m, &options, &err), TCONV_ERR_LIMIT);
    assert_contains(err.message, "<memory>: decoding would allocate more than 262144 bytes");
    options.max_file_bytes = 64 << 20;
    assert_int_equal(load_message(m, &options, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "op_type is empty");
    tc_arena_destroy(b.arena);
}

static void test_wrong_input_arity(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__NodeProto *conv;
    Onnx__ModelProto *m = conv_transpose_model(&b, &conv);
    conv->n_input = 1; /* X only: W is required */
    tc_error err;
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "graph 'main': node 'conv1' (#1, ConvTranspose): inputs: 1 "
                                 "given, ConvTranspose takes 2 to 3");
    conv->n_input = 2;
    conv->input[1] = pbb_str(&b, ""); /* present but empty */
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "node 'conv1' (#1, ConvTranspose): input 1 is empty, but "
                                 "ConvTranspose requires it");
    tc_arena_destroy(b.arena);

    b.arena = tc_arena_create();
    m = pbb_model(&b, 17);
    pbb_input(&b, m->graph, "x", 2, DIMS_2x3);
    pbb_output(&b, m->graph, "y", 2, DIMS_2x3);
    pbb_node(&b, m->graph, "Add", "add", (const char *[]){"x", "x", "x", NULL},
             (const char *[]){"y", NULL});
    assert_int_equal(load_message(m, NULL, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "node 'add' (#0, Add): inputs: 3 given, Add takes 2");
    tc_arena_destroy(b.arena);
}

static void test_node_and_depth_limits(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__NodeProto *conv;
    Onnx__ModelProto *m = conv_transpose_model(&b, &conv);
    tc_load_options options;
    tc_load_options_init(&options);
    options.max_nodes = 1;
    tc_error err;
    assert_int_equal(load_message(m, &options, &err), TCONV_ERR_LIMIT);
    assert_contains(err.message, "node 'conv1' (#1, ConvTranspose): more than 1 nodes");

    /* If inside If inside If ...: 5 levels against a limit of 3. */
    Onnx__GraphProto *inner = NULL;
    for (int level = 0; level < 5; level++) {
        Onnx__GraphProto *g = pbb_graph(&b, "branch");
        Onnx__NodeProto *n = pbb_node(&b, g, inner ? "If" : "Identity", NULL,
                                      (const char *[]){"x", NULL}, (const char *[]){"o", NULL});
        pbb_output(&b, g, "o", -1, NULL);
        if (inner) {
            pbb_attr_graph(&b, n, "then_branch", inner);
            pbb_attr_graph(&b, n, "else_branch", inner);
        }
        inner = g;
    }
    Onnx__NodeProto *top = pbb_node(&b, m->graph, "If", "top", (const char *[]){"x", NULL},
                                    (const char *[]){"z", NULL});
    pbb_attr_graph(&b, top, "then_branch", inner);
    pbb_attr_graph(&b, top, "else_branch", inner);
    options.max_nodes = 0;
    options.max_graph_depth = 3;
    assert_int_equal(load_message(m, &options, &err), TCONV_ERR_LIMIT);
    assert_contains(err.message, "node 'top' (#2, If): attribute 'then_branch': graph 'branch'");
    assert_contains(err.message, "nested deeper than the limit of 3");
    tc_arena_destroy(b.arena);
}

/* ---------------------------------------------------------------- external data */

static Onnx__ModelProto *external_model(pbb *b, const char *location) {
    Onnx__TensorProto *w;
    Onnx__ModelProto *m = model_with_w(b, &w);
    w->has_raw_data = 0;
    w->has_data_location = 1;
    w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    pbb_push(b, &w->external_data, &w->n_external_data, pbb_entry(b, "location", location));
    return m;
}

/* Writes the model into dir/model.onnx and loads it from there. */
static tconv_status load_in_dir(const char *dir, const Onnx__ModelProto *m, tconv_model **model,
                                tc_error *err) {
    size_t size;
    uint8_t *bytes = pbb_pack(&m->base, &size);
    assert_int_equal(tmpdir_write(dir, "model.onnx", bytes, size), 0);
    free(bytes);
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    return tc_model_load_file(path, NULL, model, NULL, err);
}

static void test_external_paths_escaping_the_folder(void **state) {
    (void)state;
    char *dir = tmpdir_create(), *outside = tmpdir_create();
    pbb b = {tc_arena_create()};
    tconv_model *model;
    tc_error err;
    assert_int_equal(load_in_dir(dir, external_model(&b, "../secret.bin"), &model, &err),
                     TCONV_ERR_INVALID);
    assert_contains(err.message, "model.onnx: graph 'main': initializer #0: tensor 'w': "
                                 "external_data 'location' '../secret.bin' has a '..' component");
    assert_int_equal(load_in_dir(dir, external_model(&b, "/etc/passwd"), &model, &err),
                     TCONV_ERR_INVALID);
    assert_contains(err.message, "'/etc/passwd' is an absolute path");

    /* A symlink inside the folder that points out of it is caught at load time (the file is
     * resolved then, not read), and again if it appears only when the data is read. */
    assert_int_equal(tmpdir_write(outside, "secret.bin", SIX, sizeof SIX), 0);
    char target[4096], link[4096];
    snprintf(target, sizeof target, "%s/secret.bin", outside);
    snprintf(link, sizeof link, "%s/w.bin", dir);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(load_in_dir(dir, external_model(&b, "w.bin"), &model, &err),
                     TCONV_ERR_INVALID);
    assert_contains(err.message, "initializer #0: tensor 'w': external data file 'w.bin' "
                                 "resolves to");
    assert_contains(err.message, "outside the model's folder");
    assert_int_equal(unlink(link), 0);
    assert_int_equal(tmpdir_write(dir, "w.bin", SIX, sizeof SIX), 0);
    assert_int_equal(load_in_dir(dir, external_model(&b, "w.bin"), &model, &err), TCONV_OK);
    assert_int_equal(unlink(link), 0);
    assert_int_equal(symlink(target, link), 0);
    const void *data;
    size_t nbytes;
    assert_int_equal(tc_tensor_data(model->graph->initializers[0], &data, &nbytes, &err),
                     TCONV_ERR_INVALID);
    assert_contains(err.message, "tensor 'w': external data file 'w.bin' resolves to");
    tconv_model_free(model);

    /* A missing file is an error at load time too. */
    assert_int_equal(load_in_dir(dir, external_model(&b, "missing.bin"), &model, &err),
                     TCONV_ERR_IO);
    assert_contains(err.message, "tensor 'w': external data file 'missing.bin'");

    /* External data from memory without a folder is refused. */
    assert_int_equal(load_message(external_model(&b, "w.bin"), NULL, &err), TCONV_ERR_UNSUPPORTED);
    assert_contains(err.message, "tensor 'w': external data needs a folder");
    tc_arena_destroy(b.arena);
    tmpdir_free(dir);
    tmpdir_free(outside);
}

static void test_external_range_past_the_end(void **state) {
    (void)state;
    char *dir = tmpdir_create();
    pbb b = {tc_arena_create()};
    assert_int_equal(tmpdir_write(dir, "w.bin", SIX, 4 * sizeof(float)), 0); /* 16 of 24 bytes */
    tconv_model *model;
    tc_error err;
    /* Checked at load time, naming the initializer... */
    assert_int_equal(load_in_dir(dir, external_model(&b, "w.bin"), &model, &err),
                     TCONV_ERR_INVALID);
    assert_contains(err.message, "initializer #0: tensor 'w': external data has 16 bytes, dims x "
                                 "float need 24");

    Onnx__ModelProto *m = external_model(&b, "w.bin");
    Onnx__TensorProto *w = m->graph->initializer[0];
    pbb_push(&b, &w->external_data, &w->n_external_data, pbb_entry(&b, "offset", "8"));
    pbb_push(&b, &w->external_data, &w->n_external_data, pbb_entry(&b, "length", "24"));
    assert_int_equal(load_in_dir(dir, m, &model, &err), TCONV_ERR_INVALID);
    assert_contains(err.message, "range [8, +24) is past the end of 'w.bin' (16 bytes)");

    /* ...and again when the data is read: the file may have shrunk since. */
    assert_int_equal(tmpdir_write(dir, "w.bin", SIX, sizeof SIX), 0);
    assert_int_equal(load_in_dir(dir, external_model(&b, "w.bin"), &model, &err), TCONV_OK);
    assert_int_equal(tmpdir_write(dir, "w.bin", SIX, 4 * sizeof(float)), 0);
    const void *data;
    size_t nbytes;
    assert_int_equal(tc_tensor_data(model->graph->initializers[0], &data, &nbytes, &err),
                     TCONV_ERR_INVALID);
    assert_contains(err.message, "tensor 'w': external data has 16 bytes, dims x float need 24");
    tconv_model_free(model);
    tc_arena_destroy(b.arena);
    tmpdir_free(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_truncation_fails_cleanly),
        cmocka_unit_test(test_truncated_file_is_a_parse_error_naming_the_file),
        cmocka_unit_test(test_bit_flips_fail_cleanly),
        cmocka_unit_test(test_garbage_is_a_parse_error),
        cmocka_unit_test(test_empty_and_missing_files),
        cmocka_unit_test(test_nesting_bomb_is_refused),
        cmocka_unit_test(test_raw_data_of_the_wrong_size),
        cmocka_unit_test(test_typed_data_of_the_wrong_count),
        cmocka_unit_test(test_negative_dims),
        cmocka_unit_test(test_unknown_dtype),
        cmocka_unit_test(test_tensor_limit),
        cmocka_unit_test(test_wrong_attribute_type),
        cmocka_unit_test(test_duplicate_producer),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_undefined_input),
        cmocka_unit_test(test_decoding_amplification_is_bounded),
        cmocka_unit_test(test_wrong_input_arity),
        cmocka_unit_test(test_node_and_depth_limits),
        cmocka_unit_test(test_external_paths_escaping_the_folder),
        cmocka_unit_test(test_external_range_past_the_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
