/* Hand-built ONNX messages for the importer tests: small models assembled with protobuf-c
 * (everything in one arena), so a test can put exactly the defect or the rare field it needs
 * into a file. Header-only (static inline) because each test is its own program. */
#ifndef TC_TESTS_ONNX_BUILDER_H
#define TC_TESTS_ONNX_BUILDER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#include "ir/arena.h"

typedef struct pbb {
    tc_arena *arena;
} pbb;

static inline void *pbb_alloc(pbb *b, size_t size) {
    return tc_arena_alloc(b->arena, size);
}

static inline char *pbb_str(pbb *b, const char *s) {
    return tc_arena_strdup(b->arena, s);
}

/* Appends item to a protobuf-c repeated field (array + count). */
static inline void pbb_push(pbb *b, void *array_field, size_t *count, void *item) {
    void ***array = array_field;
    void **grown = tc_arena_calloc(b->arena, *count + 1, sizeof(void *));
    if (*count)
        memcpy(grown, *array, *count * sizeof(void *));
    grown[(*count)++] = item;
    *array = grown;
}

static inline Onnx__TypeProto *pbb_tensor_type(pbb *b, int dtype, int rank, const int64_t *dims) {
    Onnx__TypeProto *t = pbb_alloc(b, sizeof *t);
    Onnx__TypeProto__Tensor *tt = pbb_alloc(b, sizeof *tt);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = dtype;
    if (rank >= 0) {
        Onnx__TensorShapeProto *s = pbb_alloc(b, sizeof *s);
        onnx__tensor_shape_proto__init(s);
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = pbb_alloc(b, sizeof *d);
            onnx__tensor_shape_proto__dimension__init(d);
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
            pbb_push(b, &s->dim, &s->n_dim, d);
        }
        tt->shape = s;
    }
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    return t;
}

static inline Onnx__ValueInfoProto *pbb_value_info(pbb *b, const char *name, int dtype, int rank,
                                                   const int64_t *dims) {
    Onnx__ValueInfoProto *v = pbb_alloc(b, sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = pbb_str(b, name);
    v->type = pbb_tensor_type(b, dtype, rank, dims);
    return v;
}

static inline Onnx__GraphProto *pbb_graph(pbb *b, const char *name) {
    Onnx__GraphProto *g = pbb_alloc(b, sizeof *g);
    onnx__graph_proto__init(g);
    g->name = pbb_str(b, name);
    return g;
}

/* A model with IR version 8, one opset import ("" at `opset`) and an empty graph "main". */
static inline Onnx__ModelProto *pbb_model(pbb *b, int64_t opset) {
    Onnx__ModelProto *m = pbb_alloc(b, sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = 8;
    m->producer_name = pbb_str(b, "tconv-tests");
    Onnx__OperatorSetIdProto *op = pbb_alloc(b, sizeof *op);
    onnx__operator_set_id_proto__init(op);
    op->domain = pbb_str(b, "");
    op->has_version = 1;
    op->version = opset;
    pbb_push(b, &m->opset_import, &m->n_opset_import, op);
    m->graph = pbb_graph(b, "main");
    return m;
}

static inline void pbb_input(pbb *b, Onnx__GraphProto *g, const char *name, int rank,
                             const int64_t *dims) {
    pbb_push(b, &g->input, &g->n_input,
             pbb_value_info(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims));
}

static inline void pbb_output(pbb *b, Onnx__GraphProto *g, const char *name, int rank,
                              const int64_t *dims) {
    pbb_push(b, &g->output, &g->n_output,
             pbb_value_info(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims));
}

/* Appends a node; inputs/outputs are NULL-terminated name lists. */
static inline Onnx__NodeProto *pbb_node(pbb *b, Onnx__GraphProto *g, const char *op,
                                        const char *name, const char *const *inputs,
                                        const char *const *outputs) {
    Onnx__NodeProto *n = pbb_alloc(b, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = pbb_str(b, op);
    n->name = name ? pbb_str(b, name) : NULL;
    for (; inputs && *inputs; inputs++)
        pbb_push(b, &n->input, &n->n_input, pbb_str(b, *inputs));
    for (; outputs && *outputs; outputs++)
        pbb_push(b, &n->output, &n->n_output, pbb_str(b, *outputs));
    if (g)
        pbb_push(b, &g->node, &g->n_node, n);
    return n;
}

static inline Onnx__AttributeProto *pbb_attr(pbb *b, Onnx__NodeProto *n, const char *name,
                                             int type) {
    Onnx__AttributeProto *a = pbb_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pbb_str(b, name);
    a->has_type = 1;
    a->type = (Onnx__AttributeProto__AttributeType)type;
    pbb_push(b, &n->attribute, &n->n_attribute, a);
    return a;
}

static inline Onnx__AttributeProto *pbb_attr_ints(pbb *b, Onnx__NodeProto *n, const char *name,
                                                  size_t count, const int64_t *values) {
    Onnx__AttributeProto *a = pbb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = count;
    a->ints = tc_arena_memdup(b->arena, values, count * sizeof(int64_t));
    return a;
}

static inline Onnx__AttributeProto *pbb_attr_float(pbb *b, Onnx__NodeProto *n, const char *name,
                                                   float value) {
    Onnx__AttributeProto *a = pbb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = value;
    return a;
}

static inline Onnx__AttributeProto *pbb_attr_graph(pbb *b, Onnx__NodeProto *n, const char *name,
                                                   Onnx__GraphProto *g) {
    Onnx__AttributeProto *a = pbb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    a->g = g;
    return a;
}

/* A float tensor with raw_data (little-endian host assumed, as in ONNX's own tests). */
static inline Onnx__TensorProto *pbb_tensor(pbb *b, const char *name, int rank, const int64_t *dims,
                                            const float *data, size_t count) {
    Onnx__TensorProto *t = pbb_alloc(b, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = pbb_str(b, name);
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->n_dims = (size_t)rank;
    t->dims = tc_arena_memdup(b->arena, dims, (size_t)rank * sizeof(int64_t));
    if (data) {
        t->has_raw_data = 1;
        t->raw_data.len = count * sizeof(float);
        t->raw_data.data = tc_arena_memdup(b->arena, data, count * sizeof(float));
    }
    return t;
}

static inline Onnx__StringStringEntryProto *pbb_entry(pbb *b, const char *key, const char *value) {
    Onnx__StringStringEntryProto *e = pbb_alloc(b, sizeof *e);
    onnx__string_string_entry_proto__init(e);
    e->key = pbb_str(b, key);
    e->value = pbb_str(b, value);
    return e;
}

/* Serializes a message; malloc'd bytes, caller frees. */
static inline uint8_t *pbb_pack(const ProtobufCMessage *m, size_t *size) {
    *size = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(*size ? *size : 1);
    protobuf_c_message_pack(m, buf);
    return buf;
}

/* y = x + w, w (2x3 float, 24 bytes) stored in `location` at offset 8. */
static inline uint8_t *pbb_external_model(const char *location, size_t *size) {
    pbb b = {tc_arena_create()};
    Onnx__ModelProto *m = pbb_model(&b, 17);
    Onnx__GraphProto *g = m->graph;
    const int64_t dims[] = {2, 3};
    pbb_input(&b, g, "x", 2, dims);
    pbb_output(&b, g, "y", 2, dims);
    Onnx__TensorProto *t = pbb_tensor(&b, "w", 2, dims, NULL, 0);
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    pbb_push(&b, &t->external_data, &t->n_external_data, pbb_entry(&b, "location", location));
    pbb_push(&b, &t->external_data, &t->n_external_data, pbb_entry(&b, "offset", "8"));
    pbb_push(&b, &t->external_data, &t->n_external_data, pbb_entry(&b, "length", "24"));
    pbb_push(&b, &g->initializer, &g->n_initializer, t);
    pbb_node(&b, g, "Add", "add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    uint8_t *bytes = pbb_pack(&m->base, size);
    tc_arena_destroy(b.arena);
    return bytes;
}

#endif
