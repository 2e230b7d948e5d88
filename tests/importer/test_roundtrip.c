/* Load -> save round trips. "Equal" means: both files unpacked with protobuf-c and re-packed
 * give the same bytes (canonical form: the same message, whatever field order or packing the
 * writer used). A mismatch names the first differing field, walking into ModelProto, GraphProto,
 * NodeProto and FunctionProto. */
#define _XOPEN_SOURCE 700

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "importer/importer.h"
#include "onnx_builder.h"
#include "tmpdir.h"

#define NODE_TESTS_DIR TCONV_ONNX_NODE_TESTS
#define EXPECTED_NODE_TESTS 1765 /* all of ONNX v1.22.0 */
#define UNKNOWN_TAG 1000

/* ---------------------------------------------------------------- canonical comparison */

static uint8_t *pack_message(const ProtobufCMessage *m, size_t *size) {
    return pbb_pack(m, size);
}

static bool messages_equal(const ProtobufCMessage *a, const ProtobufCMessage *b) {
    if (!a || !b)
        return a == b;
    size_t na, nb;
    uint8_t *pa = pack_message(a, &na), *pb = pack_message(b, &nb);
    bool equal = na == nb && memcmp(pa, pb, na) == 0;
    free(pa);
    free(pb);
    return equal;
}

static size_t element_size(ProtobufCType type) {
    switch (type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    default:
        return 4;
    }
}

static const void *member(const ProtobufCMessage *m, unsigned offset) {
    return (const char *)m + offset;
}

static size_t field_count(const ProtobufCFieldDescriptor *f, const ProtobufCMessage *m) {
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return *(const size_t *)member(m, f->quantifier_offset);
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *(const uint32_t *)member(m, f->quantifier_offset) == f->id;
    if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE)
        return *(void *const *)member(m, f->offset) != NULL;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL)
        return *(const protobuf_c_boolean *)member(m, f->quantifier_offset) != 0;
    return 1;
}

static const void *field_element(const ProtobufCFieldDescriptor *f, const ProtobufCMessage *m,
                                 size_t i) {
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return *(const char *const *)member(m, f->offset) + i * element_size(f->type);
    return member(m, f->offset);
}

static bool elements_equal(const ProtobufCFieldDescriptor *f, const void *a, const void *b) {
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *sa = *(const char *const *)a, *sb = *(const char *const *)b;
        return (!sa && !sb) || (sa && sb && strcmp(sa, sb) == 0);
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *ba = a, *bb = b;
        return ba->len == bb->len && (ba->len == 0 || memcmp(ba->data, bb->data, ba->len) == 0);
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        return messages_equal(*(const ProtobufCMessage *const *)a,
                              *(const ProtobufCMessage *const *)b);
    default:
        return memcmp(a, b, element_size(f->type)) == 0;
    }
}

static bool walk_into(const ProtobufCMessageDescriptor *d) {
    return d == &onnx__model_proto__descriptor || d == &onnx__graph_proto__descriptor ||
           d == &onnx__node_proto__descriptor || d == &onnx__function_proto__descriptor;
}

/* Writes the path of the first difference into `where`; false if none was found. */
static bool first_difference(const ProtobufCMessage *a, const ProtobufCMessage *b, const char *path,
                             char *where, size_t size) {
    const ProtobufCMessageDescriptor *d = a->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        size_t ca = field_count(f, a), cb = field_count(f, b);
        if (ca != cb) {
            snprintf(where, size, "%s.%s (count %zu vs %zu)", path, f->name, ca, cb);
            return true;
        }
        for (size_t k = 0; k < ca; k++) {
            const void *ea = field_element(f, a, k), *eb = field_element(f, b, k);
            if (elements_equal(f, ea, eb))
                continue;
            char sub[512];
            snprintf(sub, sizeof sub, "%s.%s[%zu]", path, f->name, k);
            if (f->type == PROTOBUF_C_TYPE_MESSAGE && walk_into(f->descriptor) &&
                first_difference(*(const ProtobufCMessage *const *)ea,
                                 *(const ProtobufCMessage *const *)eb, sub, where, size))
                return true;
            snprintf(where, size, "%s", sub);
            return true;
        }
    }
    if (a->n_unknown_fields != b->n_unknown_fields) {
        snprintf(where, size, "%s: unknown fields (%u vs %u)", path, a->n_unknown_fields,
                 b->n_unknown_fields);
        return true;
    }
    return false;
}

/* 0 when the two serialized models are the same message, else a message in `why`. */
static int compare_models(const uint8_t *original, size_t n_original, const uint8_t *saved,
                          size_t n_saved, char *why, size_t size) {
    Onnx__ModelProto *a = onnx__model_proto__unpack(NULL, n_original, original);
    Onnx__ModelProto *b = onnx__model_proto__unpack(NULL, n_saved, saved);
    int result = 0;
    if (!a || !b) {
        snprintf(why, size, "%s does not unpack", !a ? "original" : "saved");
        result = -1;
    } else if (!messages_equal(&a->base, &b->base)) {
        if (!first_difference(&a->base, &b->base, "model", why, size))
            snprintf(why, size, "packed bytes differ (no field difference found)");
        result = -1;
    }
    if (a)
        onnx__model_proto__free_unpacked(a, NULL);
    if (b)
        onnx__model_proto__free_unpacked(b, NULL);
    return result;
}

/* Loads bytes from memory, saves, compares. */
static void assert_round_trip(const uint8_t *bytes, size_t size, const char *dir) {
    tconv_model *model = NULL;
    tc_error err;
    tconv_status st = tc_model_load_buffer(bytes, size, dir, NULL, &model, NULL, &err);
    if (st != TCONV_OK)
        fail_msg("load failed: %s", err.message);
    void *saved;
    size_t n_saved;
    st = tc_model_save_buffer(model, &saved, &n_saved, &err);
    if (st != TCONV_OK)
        fail_msg("save failed: %s", err.message);
    char why[1024];
    if (compare_models(bytes, size, saved, n_saved, why, sizeof why) != 0)
        fail_msg("round trip differs at %s", why);
    free(saved);
    tconv_model_free(model);
}

/* ---------------------------------------------------------------- ONNX node tests */

static int round_trip_file(const char *path, char *why, size_t size) {
    tconv_model *model = NULL;
    tc_error err;
    void *original = NULL, *saved = NULL;
    size_t n_original, n_saved;
    int result = -1;
    if (tc_read_file(path, 0, &original, &n_original, &err) != TCONV_OK ||
        tc_model_load_file(path, NULL, &model, NULL, &err) != TCONV_OK ||
        tc_model_save_buffer(model, &saved, &n_saved, &err) != TCONV_OK)
        snprintf(why, size, "%s", err.message);
    else
        result = compare_models(original, n_original, saved, n_saved, why, size);
    free(original);
    free(saved);
    tconv_model_free(model);
    return result;
}

static void test_every_node_test_model_round_trips(void **state) {
    (void)state;
    DIR *dir = opendir(NODE_TESTS_DIR);
    assert_non_null(dir);
    size_t found = 0, failed = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s/model.onnx", NODE_TESTS_DIR, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) != 0)
            continue;
        found++;
        char why[1024];
        if (round_trip_file(path, why, sizeof why) != 0) {
            failed++;
            print_message("round trip failed: %s: %s\n", e->d_name, why);
        }
    }
    closedir(dir);
    print_message("node-test models: %zu found, %zu round-tripped exactly\n", found,
                  found - failed);
    assert_true(found >= EXPECTED_NODE_TESTS);
    assert_int_equal(failed, 0);
}

/* ---------------------------------------------------------------- unknown fields */

static ProtobufCMessageUnknownField *unknown_field(pbb *b, const char *payload) {
    ProtobufCMessageUnknownField *u = pbb_alloc(b, sizeof *u);
    u->tag = UNKNOWN_TAG;
    u->wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
    /* protobuf-c keeps the length prefix of a length-delimited unknown field in its data. */
    size_t n = strlen(payload);
    uint8_t *data = pbb_alloc(b, n + 1);
    data[0] = (uint8_t)n; /* payloads here are short: a one-byte varint */
    memcpy(data + 1, payload, n);
    u->len = n + 1;
    u->data = data;
    return u;
}

static void add_unknown(pbb *b, ProtobufCMessage *m, const char *payload) {
    m->n_unknown_fields = 1;
    m->unknown_fields = unknown_field(b, payload);
}

static bool has_unknown(const ProtobufCMessage *m) {
    return m->n_unknown_fields == 1 && m->unknown_fields[0].tag == UNKNOWN_TAG;
}

/* y = LeakyRelu(x + w) with an unknown field at model, graph, node and tensor level, plus
 * fields the IR does not model: a dim denotation and node metadata. */
static uint8_t *build_unknown_fields_model(size_t *size) {
    pbb b = {tc_arena_create()};
    Onnx__ModelProto *m = pbb_model(&b, 17);
    Onnx__GraphProto *g = m->graph;
    const int64_t dims[] = {2, 3};
    const float w[] = {1, 2, 3, 4, 5, 6};
    pbb_input(&b, g, "x", 2, dims);
    pbb_output(&b, g, "y", 2, dims);
    g->input[0]->type->tensor_type->shape->dim[0]->denotation = pbb_str(&b, "DATA_BATCH");
    Onnx__TensorProto *t = pbb_tensor(&b, "w", 2, dims, w, 6);
    pbb_push(&b, &g->initializer, &g->n_initializer, t);
    pbb_node(&b, g, "Add", "add", (const char *[]){"x", "w", NULL}, (const char *[]){"s", NULL});
    Onnx__NodeProto *relu = pbb_node(&b, g, "LeakyRelu", "relu", (const char *[]){"s", NULL},
                                     (const char *[]){"y", NULL});
    pbb_attr_float(&b, relu, "alpha", 0.5f);
    pbb_push(&b, &relu->metadata_props, &relu->n_metadata_props, pbb_entry(&b, "k", "v"));
    add_unknown(&b, &m->base, "model");
    add_unknown(&b, &g->base, "graph");
    add_unknown(&b, &relu->base, "node");
    add_unknown(&b, &t->base, "tensor");
    uint8_t *bytes = pbb_pack(&m->base, size);
    tc_arena_destroy(b.arena);
    return bytes;
}

static void test_unknown_fields_survive(void **state) {
    (void)state;
    size_t size;
    uint8_t *bytes = build_unknown_fields_model(&size);
    assert_round_trip(bytes, size, NULL);
    free(bytes);
}

/* Editing a node rebuilds only what changed: the node keeps its unknown field and metadata. */
static void test_unknown_fields_survive_an_edit(void **state) {
    (void)state;
    size_t size, n_saved;
    uint8_t *bytes = build_unknown_fields_model(&size);
    tconv_model *model;
    tc_error err;
    assert_int_equal(tc_model_load_buffer(bytes, size, NULL, NULL, &model, NULL, &err), TCONV_OK);
    tconv_node *relu = model->graph->last;
    assert_int_equal(tc_node_set_attr_float(relu, "alpha", 0.25f, &err), TCONV_OK);
    void *saved;
    assert_int_equal(tc_model_save_buffer(model, &saved, &n_saved, &err), TCONV_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n_saved, saved);
    assert_non_null(m);
    assert_true(has_unknown(&m->base));
    assert_true(has_unknown(&m->graph->base));
    assert_true(has_unknown(&m->graph->node[1]->base));
    assert_true(has_unknown(&m->graph->initializer[0]->base));
    assert_int_equal(m->graph->node[1]->n_metadata_props, 1);
    assert_true(m->graph->node[1]->attribute[0]->f == 0.25f);
    assert_string_equal(m->graph->input[0]->type->tensor_type->shape->dim[0]->denotation,
                        "DATA_BATCH");
    onnx__model_proto__free_unpacked(m, NULL);
    free(saved);
    free(bytes);
    tconv_model_free(model);
}

/* ---------------------------------------------------------------- external data */

static const float EXTERNAL_W[] = {1.5f, -2, 3, 4, 5, 6.25f};

static int write_weights(const char *dir, float first) {
    uint8_t data[8 + sizeof EXTERNAL_W];
    memset(data, 0xAB, 8);
    memcpy(data + 8, EXTERNAL_W, sizeof EXTERNAL_W);
    memcpy(data + 8, &first, sizeof first);
    return tmpdir_write(dir, "weights.bin", data, sizeof data);
}

static void assert_external_weights(const char *model_path) {
    tconv_model *model;
    tc_error err;
    if (tc_model_load_file(model_path, NULL, &model, NULL, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    tconv_tensor *w = model->graph->initializers[0];
    assert_int_equal(w->storage, TCONV_STORAGE_EXTERNAL);
    const void *data;
    size_t nbytes;
    if (tc_tensor_data(w, &data, &nbytes, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_int_equal(nbytes, sizeof EXTERNAL_W);
    assert_memory_equal(data, EXTERNAL_W, sizeof EXTERNAL_W);
    tconv_model_free(model);
}

static void test_external_data_round_trip(void **state) {
    (void)state;
    char *src = tmpdir_create(), *dst = tmpdir_create(), *clash = tmpdir_create();
    assert_non_null(src);
    assert_non_null(dst);
    assert_non_null(clash);
    size_t size;
    uint8_t *bytes = pbb_external_model("weights.bin", &size);
    assert_int_equal(write_weights(src, EXTERNAL_W[0]), 0);
    assert_int_equal(tmpdir_write(src, "model.onnx", bytes, size), 0);
    char path[4096], out[4096];
    snprintf(path, sizeof path, "%s/model.onnx", src);
    assert_external_weights(path);
    assert_round_trip(bytes, size, src); /* the reference is written back as it was */

    /* Saving elsewhere brings the data along, in a file named after the output. */
    tconv_model *model;
    tc_error err;
    assert_int_equal(tc_model_load_file(path, NULL, &model, NULL, &err), TCONV_OK);
    snprintf(out, sizeof out, "%s/out.onnx", dst);
    if (tc_model_save_file(model, out, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_external_weights(out);

    snprintf(path, sizeof path, "%s/out.onnx.data", dst);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/weights.bin", dst);
    assert_int_equal(access(path, F_OK), -1);

    /* A folder holding another model's weights.bin: left alone; a stale out.onnx.data belongs to
     * the output and is replaced with it. */
    assert_int_equal(write_weights(clash, 99.0f), 0);
    assert_int_equal(tmpdir_write(clash, "out.onnx.data", "stale", 5), 0);
    snprintf(out, sizeof out, "%s/out.onnx", clash);
    if (tc_model_save_file(model, out, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_external_weights(out);
    float first;
    void *data;
    size_t n;
    snprintf(path, sizeof path, "%s/weights.bin", clash);
    assert_int_equal(tc_read_file(path, 0, &data, &n, &err), TCONV_OK);
    memcpy(&first, (uint8_t *)data + 8, sizeof first);
    assert_true(first == 99.0f);
    free(data);

    tconv_model_free(model);
    free(bytes);
    tmpdir_free(src);
    tmpdir_free(dst);
    tmpdir_free(clash);
}

/* ---------------------------------------------------------------- node order */

/* y = Relu(Abs(x)) with the Relu listed first. */
static uint8_t *build_out_of_order_model(size_t *size) {
    pbb b = {tc_arena_create()};
    Onnx__ModelProto *m = pbb_model(&b, 17);
    Onnx__GraphProto *g = m->graph;
    const int64_t dims[] = {4};
    pbb_input(&b, g, "x", 1, dims);
    pbb_output(&b, g, "y", 1, dims);
    pbb_node(&b, g, "Relu", "relu", (const char *[]){"t", NULL}, (const char *[]){"y", NULL});
    pbb_node(&b, g, "Abs", "abs", (const char *[]){"x", NULL}, (const char *[]){"t", NULL});
    uint8_t *bytes = pbb_pack(&m->base, size);
    tc_arena_destroy(b.arena);
    return bytes;
}

/* Out-of-order nodes load, the load info says a graph was reordered, and the saved file lists
 * the nodes sorted: the one place where a plain load/save changes the file, on purpose, since
 * ONNX requires topological order. */
static void test_out_of_order_nodes_are_sorted(void **state) {
    (void)state;
    size_t size, n_saved;
    uint8_t *bytes = build_out_of_order_model(&size);
    tconv_model *model;
    tc_load_info info;
    tc_error err;
    if (tc_model_load_buffer(bytes, size, NULL, NULL, &model, &info, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_int_equal(info.n_graphs_reordered, 1);
    assert_int_equal(info.n_nodes, 2);
    assert_string_equal(model->graph->first->op_type, "Abs");
    void *saved;
    assert_int_equal(tc_model_save_buffer(model, &saved, &n_saved, &err), TCONV_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n_saved, saved);
    assert_non_null(m);
    assert_string_equal(m->graph->node[0]->op_type, "Abs");
    assert_string_equal(m->graph->node[1]->op_type, "Relu");
    onnx__model_proto__free_unpacked(m, NULL);
    free(saved);
    tconv_model_free(model);

    /* With sorting turned off the same file is an error naming the misplaced input. */
    tc_load_options options;
    tc_load_options_init(&options);
    options.sort_nodes = false;
    assert_int_equal(tc_model_load_buffer(bytes, size, NULL, &options, &model, NULL, &err),
                     TCONV_ERR_INVALID);
    assert_non_null(strstr(err.message, "node 'relu'"));
    assert_non_null(strstr(err.message, "topological order"));
    free(bytes);
}

/* An If whose branch reads %t, produced by a node listed after the If: the If depends on that
 * node through its subgraph, so sorting moves the producer first. */
static void test_subgraph_capture_orders_outer_nodes(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__ModelProto *m = pbb_model(&b, 17);
    Onnx__GraphProto *g = m->graph;
    const int64_t dims[] = {4};
    pbb_push(&b, &g->input, &g->n_input,
             pbb_value_info(&b, "cond", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL));
    pbb_input(&b, g, "x", 1, dims);
    pbb_output(&b, g, "y", 1, dims);
    Onnx__NodeProto *if_node =
        pbb_node(&b, g, "If", "if", (const char *[]){"cond", NULL}, (const char *[]){"y", NULL});
    pbb_node(&b, g, "Abs", "abs", (const char *[]){"x", NULL}, (const char *[]){"t", NULL});
    const char *branch_names[] = {"then", "else"};
    const char *branch_ops[] = {"Identity", "Neg"};
    for (int i = 0; i < 2; i++) {
        Onnx__GraphProto *branch = pbb_graph(&b, branch_names[i]);
        char out[16];
        snprintf(out, sizeof out, "%s_out", branch_names[i]);
        pbb_node(&b, branch, branch_ops[i], NULL, (const char *[]){"t", NULL},
                 (const char *[]){out, NULL});
        pbb_output(&b, branch, out, 1, dims);
        pbb_attr_graph(&b, if_node, i == 0 ? "then_branch" : "else_branch", branch);
    }
    size_t size;
    uint8_t *bytes = pbb_pack(&m->base, &size);
    tc_arena_destroy(b.arena);

    tconv_model *model;
    tc_load_info info;
    tc_error err;
    if (tc_model_load_buffer(bytes, size, NULL, NULL, &model, &info, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_int_equal(info.n_graphs_reordered, 1);
    assert_string_equal(model->graph->first->op_type, "Abs");
    tconv_graph *then_branch = model->graph->last->attrs[0].g;
    assert_ptr_equal(then_branch->parent, model->graph);
    assert_ptr_equal(then_branch->owner, model->graph->last);
    assert_ptr_equal(then_branch->first->inputs[0], model->graph->first->outputs[0]);
    tconv_model_free(model);
    free(bytes);
}

/* ---------------------------------------------------------------- IR without origins */

/* A model built through the IR API (no origin anywhere) saves from scratch and loads back. */
static void test_model_built_in_memory_saves_and_loads(void **state) {
    (void)state;
    tconv_model *model;
    tc_error err;
    assert_int_equal(tc_model_create(&model, &err), TCONV_OK);
    model->has_ir_version = true;
    model->ir_version = 8;
    assert_int_equal(tc_model_set_opset(model, "", 17, &err), TCONV_OK);
    tconv_graph *g = model->graph;
    g->name = "built";
    tconv_value *x, *y;
    assert_int_equal(tc_graph_get_or_add_value(g, "x", &x, &err), TCONV_OK);
    tc_dim dims[] = {{TCONV_DIM_STATIC, 2, NULL, NULL}, {TCONV_DIM_SYMBOLIC, 0, "n", NULL}};
    assert_int_equal(tc_value_set_tensor_type(x, TCONV_DTYPE_FLOAT, 2, dims, &err), TCONV_OK);
    assert_int_equal(tc_graph_add_input(g, x, NULL, &err), TCONV_OK);
    tconv_tensor *w;
    const float w_data[] = {1, 2};
    assert_int_equal(tc_tensor_create(model, "w", TCONV_DTYPE_FLOAT, 2, (int64_t[]){2, 1}, w_data,
                                      sizeof w_data, &w, &err),
                     TCONV_OK);
    assert_int_equal(tc_graph_add_initializer(g, w, &err), TCONV_OK);
    tconv_node *node;
    assert_int_equal(tc_node_create(g, "Add", NULL, "add", &node, &err), TCONV_OK);
    assert_int_equal(tc_node_add_input(node, x, &err), TCONV_OK);
    assert_int_equal(tc_node_add_input(node, w->value, &err), TCONV_OK);
    assert_int_equal(tc_graph_get_or_add_value(g, "y", &y, &err), TCONV_OK);
    assert_int_equal(tc_node_add_output(node, y, &err), TCONV_OK);
    assert_int_equal(tc_node_set_attr_ints(node, "note", (int64_t[]){7}, 1, &err), TCONV_OK);
    tc_graph_append_node(g, node);
    assert_int_equal(tc_graph_add_output(g, y, NULL, &err), TCONV_OK);

    void *saved;
    size_t n_saved;
    if (tc_model_save_buffer(model, &saved, &n_saved, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    tconv_model_free(model);
    if (tc_model_load_buffer(saved, n_saved, NULL, NULL, &model, NULL, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_string_equal(model->graph->name, "built");
    assert_int_equal(tc_model_opset(model, ""), 17);
    const tc_type *xt = &model->graph->inputs[0].value->type;
    assert_int_equal(xt->rank, 2);
    assert_int_equal(xt->dims[0].value, 2);
    assert_string_equal(xt->dims[1].param, "n");
    const void *data;
    size_t nbytes;
    assert_int_equal(tc_tensor_data(model->graph->initializers[0], &data, &nbytes, &err), TCONV_OK);
    assert_memory_equal(data, w_data, sizeof w_data);
    assert_int_equal(tc_node_attr(model->graph->first, "note")->ints[0], 7);
    assert_round_trip(saved, n_saved, NULL);
    free(saved);
    tconv_model_free(model);
}

/* ---------------------------------------------------------------- functions, sparse data */

/* A model-local function (body listed out of order) called from the main graph, and a node
 * that reads a sparse initializer, which the IR keeps only in the origin. */
static void test_functions_and_sparse_initializers(void **state) {
    (void)state;
    pbb b = {tc_arena_create()};
    Onnx__ModelProto *m = pbb_model(&b, 17);
    Onnx__OperatorSetIdProto *local = pbb_alloc(&b, sizeof *local);
    onnx__operator_set_id_proto__init(local);
    local->domain = pbb_str(&b, "local");
    local->has_version = 1;
    local->version = 1;
    pbb_push(&b, &m->opset_import, &m->n_opset_import, local);
    Onnx__FunctionProto *f = pbb_alloc(&b, sizeof *f);
    onnx__function_proto__init(f);
    f->name = pbb_str(&b, "AbsNeg");
    f->domain = pbb_str(&b, "local");
    pbb_push(&b, &f->input, &f->n_input, pbb_str(&b, "a"));
    pbb_push(&b, &f->output, &f->n_output, pbb_str(&b, "c"));
    pbb_push(&b, &f->attribute, &f->n_attribute, pbb_str(&b, "unused"));
    pbb_push(&b, &f->opset_import, &f->n_opset_import, m->opset_import[0]);
    pbb_push(
        &b, &f->node, &f->n_node,
        pbb_node(&b, NULL, "Neg", NULL, (const char *[]){"t", NULL}, (const char *[]){"c", NULL}));
    pbb_push(
        &b, &f->node, &f->n_node,
        pbb_node(&b, NULL, "Abs", NULL, (const char *[]){"a", NULL}, (const char *[]){"t", NULL}));
    pbb_push(&b, &m->functions, &m->n_functions, f);

    Onnx__GraphProto *g = m->graph;
    const int64_t dims[] = {4};
    pbb_input(&b, g, "x", 1, dims);
    pbb_output(&b, g, "y", 1, dims);
    Onnx__SparseTensorProto *sp = pbb_alloc(&b, sizeof *sp);
    onnx__sparse_tensor_proto__init(sp);
    const float one = 1.0f;
    sp->values = pbb_tensor(&b, "s", 1, (const int64_t[]){1}, &one, 1);
    sp->indices = pbb_tensor(&b, "s_idx", 1, (const int64_t[]){1}, NULL, 0);
    sp->indices->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    sp->indices->n_int64_data = 1;
    sp->indices->int64_data = pbb_alloc(&b, sizeof(int64_t));
    sp->n_dims = 1;
    sp->dims = (int64_t *)dims;
    pbb_push(&b, &g->sparse_initializer, &g->n_sparse_initializer, sp);
    pbb_node(&b, g, "Add", "add", (const char *[]){"x", "s", NULL}, (const char *[]){"u", NULL});
    Onnx__NodeProto *call =
        pbb_node(&b, g, "AbsNeg", "call", (const char *[]){"u", NULL}, (const char *[]){"y", NULL});
    call->domain = pbb_str(&b, "local");
    size_t size;
    uint8_t *bytes = pbb_pack(&m->base, &size);
    tc_arena_destroy(b.arena);

    tconv_model *model;
    tc_load_info info;
    tc_error err;
    if (tc_model_load_buffer(bytes, size, NULL, NULL, &model, &info, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_int_equal(model->n_functions, 1);
    tconv_graph *body = model->functions[0]->body;
    assert_ptr_equal(body->function, model->functions[0]);
    assert_string_equal(body->first->op_type, "Abs"); /* the body was sorted too */
    assert_int_equal(info.n_graphs_reordered, 1);
    assert_int_equal(info.n_nodes, 4);
    tconv_model_free(model);
    /* The saved file lists the function's nodes sorted; everything else is as it was. */
    Onnx__ModelProto *sorted = onnx__model_proto__unpack(NULL, size, bytes);
    Onnx__NodeProto *first = sorted->functions[0]->node[0];
    sorted->functions[0]->node[0] = sorted->functions[0]->node[1];
    sorted->functions[0]->node[1] = first;
    size_t n_sorted;
    uint8_t *sorted_bytes = pbb_pack(&sorted->base, &n_sorted);
    onnx__model_proto__free_unpacked(sorted, NULL);
    assert_round_trip(sorted_bytes, n_sorted, NULL);
    free(sorted_bytes);
    free(bytes);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_node_test_model_round_trips),
        cmocka_unit_test(test_unknown_fields_survive),
        cmocka_unit_test(test_unknown_fields_survive_an_edit),
        cmocka_unit_test(test_external_data_round_trip),
        cmocka_unit_test(test_out_of_order_nodes_are_sorted),
        cmocka_unit_test(test_subgraph_capture_orders_outer_nodes),
        cmocka_unit_test(test_model_built_in_memory_saves_and_loads),
        cmocka_unit_test(test_functions_and_sparse_initializers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
