/* Node attributes: typed getters that report a wrong type with the node and attribute name, and
 * setters that keep the attribute list free of duplicates. */
#include "ir/ir.h"

#include <string.h>

static const char *const ATTR_TYPE_NAMES[] = {
    "UNDEFINED",      "FLOAT",      "INT",        "STRING",  "TENSOR", "GRAPH",
    "FLOATS",         "INTS",       "STRINGS",    "TENSORS", "GRAPHS", "SPARSE_TENSOR",
    "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};

const char *tconv_attr_type_name(int type) {
    if (type < 0 || type > TCONV_ATTR_TYPE_PROTOS)
        return "UNKNOWN";
    return ATTR_TYPE_NAMES[type];
}

int tc_test_attr_watch = 0;
int64_t tc_test_attr_watched_reads = 0;

const tc_attr *tc_node_attr(const tconv_node *node, const char *name) {
    if (tc_test_attr_watch) /* tests only */
        tc_test_attr_watched_reads++;
    for (size_t i = 0; i < node->n_attrs; i++) {
        if (node->attrs[i].name && strcmp(node->attrs[i].name, name) == 0)
            return &node->attrs[i];
    }
    return NULL;
}

static tconv_status wrong_type(const tconv_node *node, const tc_attr *attr, tconv_attr_type want,
                               tc_error *err) {
    char where[256];
    return tc_error_set(err, TCONV_ERR_INVALID, "%s: attribute '%s': expected %s, got %s",
                        tc_node_describe(node, where, sizeof where), attr->name,
                        tconv_attr_type_name(want), tconv_attr_type_name(attr->type));
}

tconv_status tc_node_attr_int(const tconv_node *node, const char *name, int64_t fallback,
                              int64_t *out, tc_error *err) {
    const tc_attr *a = tc_node_attr(node, name);
    if (!a) {
        *out = fallback;
        return TCONV_OK;
    }
    if (a->type != TCONV_ATTR_INT)
        return wrong_type(node, a, TCONV_ATTR_INT, err);
    *out = a->i;
    return TCONV_OK;
}

tconv_status tc_node_attr_float(const tconv_node *node, const char *name, float fallback,
                                float *out, tc_error *err) {
    const tc_attr *a = tc_node_attr(node, name);
    if (!a) {
        *out = fallback;
        return TCONV_OK;
    }
    if (a->type != TCONV_ATTR_FLOAT)
        return wrong_type(node, a, TCONV_ATTR_FLOAT, err);
    *out = a->f;
    return TCONV_OK;
}

const tc_op_attr *tc_node_attr_default(const tconv_node *node, const char *name) {
    const tc_op_attr *a = tc_op_attr_find(node->op, name);
    return a && a->has_default ? a : tc_kind_attr_default(node->kind, name);
}

static tconv_status no_default(const tconv_node *node, const char *name, tc_error *err) {
    char where[256];
    return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                        "%s: the op table gives attribute '%s' no default",
                        tc_node_describe(node, where, sizeof where), name);
}

tconv_status tc_node_attr_float_or_default(const tconv_node *node, const char *name, float *out,
                                           tc_error *err) {
    if (tc_node_attr(node, name))
        return tc_node_attr_float(node, name, 0.0f, out, err);
    const tc_op_attr *d = tc_node_attr_default(node, name);
    if (!d || d->type != TCONV_ATTR_FLOAT)
        return no_default(node, name, err);
    *out = d->def_float;
    return TCONV_OK;
}

tconv_status tc_node_attr_int_or_default(const tconv_node *node, const char *name, int64_t *out,
                                         tc_error *err) {
    if (tc_node_attr(node, name))
        return tc_node_attr_int(node, name, 0, out, err);
    const tc_op_attr *d = tc_node_attr_default(node, name);
    if (!d || d->type != TCONV_ATTR_INT)
        return no_default(node, name, err);
    *out = d->def_int;
    return TCONV_OK;
}

tconv_status tc_node_attr_string(const tconv_node *node, const char *name, const char *fallback,
                                 const char **out, tc_error *err) {
    const tc_attr *a = tc_node_attr(node, name);
    if (!a) {
        *out = fallback;
        return TCONV_OK;
    }
    if (a->type != TCONV_ATTR_STRING)
        return wrong_type(node, a, TCONV_ATTR_STRING, err);
    /* STRING attributes are NUL-terminated where they are made (the importer, and
     * tc_node_set_attr_string): reading one writes nothing, not even the arena */
    *out = a->s.data ? (const char *)a->s.data : "";
    return TCONV_OK;
}

tconv_status tc_node_attr_ints(const tconv_node *node, const char *name, bool *present,
                               const int64_t **values, size_t *count, tc_error *err) {
    const tc_attr *a = tc_node_attr(node, name);
    *present = false;
    *values = NULL;
    *count = 0;
    if (!a)
        return TCONV_OK;
    if (a->type != TCONV_ATTR_INTS)
        return wrong_type(node, a, TCONV_ATTR_INTS, err);
    *present = true;
    *values = a->ints;
    *count = a->n;
    return TCONV_OK;
}

tconv_status tc_node_attr_floats(const tconv_node *node, const char *name, bool *present,
                                 const float **values, size_t *count, tc_error *err) {
    const tc_attr *a = tc_node_attr(node, name);
    *present = false;
    *values = NULL;
    *count = 0;
    if (!a)
        return TCONV_OK;
    if (a->type != TCONV_ATTR_FLOATS)
        return wrong_type(node, a, TCONV_ATTR_FLOATS, err);
    *present = true;
    *values = a->floats;
    *count = a->n;
    return TCONV_OK;
}

tconv_status tc_node_add_attr(tconv_node *node, const tc_attr *attr, tc_error *err) {
    tc_arena *arena = node->graph->model->arena;
    if (!tc_arena_grow_array(arena, (void **)&node->attrs, &node->cap_attrs, sizeof(tc_attr),
                             node->n_attrs + 1))
        return tc_error_nomem(err, "an attribute");
    node->attrs[node->n_attrs++] = *attr;
    return TCONV_OK;
}

void tc_node_remove_attr(tconv_node *node, const char *name) {
    size_t k = 0;
    for (size_t i = 0; i < node->n_attrs; i++) {
        if (!node->attrs[i].name || strcmp(node->attrs[i].name, name) != 0)
            node->attrs[k++] = node->attrs[i];
    }
    node->n_attrs = k;
}

/* Replaces an attribute of the same name in place (keeping attribute order) or appends. */
static tconv_status put_attr(tconv_node *node, tc_attr *attr, tc_error *err) {
    attr->name = tc_arena_strdup(node->graph->model->arena, attr->name);
    if (!attr->name)
        return tc_error_nomem(err, "an attribute name");
    for (size_t i = 0; i < node->n_attrs; i++) {
        if (node->attrs[i].name && strcmp(node->attrs[i].name, attr->name) == 0) {
            node->attrs[i] = *attr;
            return TCONV_OK;
        }
    }
    return tc_node_add_attr(node, attr, err);
}

tconv_status tc_node_set_attr_int(tconv_node *node, const char *name, int64_t value,
                                  tc_error *err) {
    tc_attr a = {.name = name, .type = TCONV_ATTR_INT, .i = value};
    return put_attr(node, &a, err);
}

tconv_status tc_node_set_attr_float(tconv_node *node, const char *name, float value,
                                    tc_error *err) {
    tc_attr a = {.name = name, .type = TCONV_ATTR_FLOAT, .f = value};
    return put_attr(node, &a, err);
}

tconv_status tc_node_set_attr_string(tconv_node *node, const char *name, const char *value,
                                     tc_error *err) {
    size_t len = strlen(value);
    const uint8_t *copy = tc_arena_memdup(node->graph->model->arena, value, len + 1);
    if (!copy)
        return tc_error_nomem(err, "a string attribute");
    tc_attr a = {.name = name, .type = TCONV_ATTR_STRING, .s = {copy, len}};
    return put_attr(node, &a, err);
}

/* Sets a list attribute (INTS or FLOATS) to an arena copy of count elements of `size` bytes. */
static tconv_status put_list_attr(tconv_node *node, const char *name, tconv_attr_type type,
                                  const void *values, size_t count, size_t size, tc_error *err) {
    void *copy = tc_arena_calloc(node->graph->model->arena, count ? count : 1, size);
    if (!copy)
        return tc_error_nomem(err,
                              type == TCONV_ATTR_INTS ? "an INTS attribute" : "a FLOATS attribute");
    if (count)
        memcpy(copy, values, count * size);
    tc_attr a = {.name = name, .type = type, .n = count};
    if (type == TCONV_ATTR_INTS)
        a.ints = copy;
    else
        a.floats = copy;
    return put_attr(node, &a, err);
}

tconv_status tc_node_set_attr_ints(tconv_node *node, const char *name, const int64_t *values,
                                   size_t count, tc_error *err) {
    return put_list_attr(node, name, TCONV_ATTR_INTS, values, count, sizeof *values, err);
}

tconv_status tc_node_set_attr_floats(tconv_node *node, const char *name, const float *values,
                                     size_t count, tc_error *err) {
    return put_list_attr(node, name, TCONV_ATTR_FLOATS, values, count, sizeof *values, err);
}

tconv_status tc_node_set_attr_tensor(tconv_node *node, const char *name, tconv_tensor *tensor,
                                     tc_error *err) {
    tc_attr a = {.name = name, .type = TCONV_ATTR_TENSOR, .t = tensor};
    return put_attr(node, &a, err);
}
