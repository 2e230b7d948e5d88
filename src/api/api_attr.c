/* Public API: node attributes and constant tensors (initializers, TENSOR attributes). */
#include "api/api_internal.h"

#include <string.h>

/* ---------------------------------------------------------------- walking attributes */

size_t tconv_attr_count(const tconv_node *node) {
    return node ? node->n_attrs : 0;
}

const char *tconv_attr_name(const tconv_node *node, size_t index) {
    return node && index < node->n_attrs ? node->attrs[index].name : NULL;
}

tconv_attr_type tconv_attr_type_of(const tconv_node *node, const char *name) {
    const tc_attr *a = node && name ? tc_node_attr(node, name) : NULL;
    return a ? a->type : TCONV_ATTR_UNDEFINED;
}

/* ---------------------------------------------------------------- getters */

/* The attribute `name` of type `want`, or NULL with the error recorded in the model. */
static const tc_attr *find_typed(tconv_node *node, const char *name, const void *out,
                                 tconv_attr_type want, tconv_status *st) {
    tconv_model *model = tc_api_node_model(node);
    *st = TCONV_ERR_USAGE;
    if (!model)
        return NULL;
    if (!name || !out) {
        tc_api_usage(model, "attribute getter: name and out must not be NULL");
        return NULL;
    }
    tc_error *err = tc_api_begin(model);
    const tc_attr *a = tc_node_attr(node, name);
    char where[256];
    if (!a || a->type != want) {
        *st = tc_error_set(err, TCONV_ERR_INVALID, "%s: attribute '%s': expected %s, %s%s",
                           tc_node_describe(node, where, sizeof where), name,
                           tconv_attr_type_name(want), a ? "got " : "it is absent",
                           a ? tconv_attr_type_name(a->type) : "");
        return NULL;
    }
    *st = TCONV_OK;
    return a;
}

tconv_status tconv_attr_get_int(tconv_node *node, const char *name, int64_t *out) {
    tconv_status st;
    const tc_attr *a = find_typed(node, name, out, TCONV_ATTR_INT, &st);
    if (a)
        *out = a->i;
    return st;
}

tconv_status tconv_attr_get_float(tconv_node *node, const char *name, float *out) {
    tconv_status st;
    const tc_attr *a = find_typed(node, name, out, TCONV_ATTR_FLOAT, &st);
    if (a)
        *out = a->f;
    return st;
}

tconv_status tconv_attr_get_string(tconv_node *node, const char *name, const char **out) {
    tconv_status st;
    const tc_attr *a = find_typed(node, name, out, TCONV_ATTR_STRING, &st);
    if (!a)
        return st;
    tconv_model *model = node->graph->model;
    return tc_api_end(model, tc_node_attr_string(node, name, NULL, out, &model->last_error));
}

tconv_status tconv_attr_get_ints(tconv_node *node, const char *name, const int64_t **values,
                                 size_t *count) {
    tconv_status st;
    const tc_attr *a =
        find_typed(node, name, values && count ? values : NULL, TCONV_ATTR_INTS, &st);
    if (a) {
        *values = a->ints;
        *count = a->n;
    }
    return st;
}

tconv_status tconv_attr_get_floats(tconv_node *node, const char *name, const float **values,
                                   size_t *count) {
    tconv_status st;
    const tc_attr *a =
        find_typed(node, name, values && count ? values : NULL, TCONV_ATTR_FLOATS, &st);
    if (a) {
        *values = a->floats;
        *count = a->n;
    }
    return st;
}

tconv_status tconv_attr_get_tensor(tconv_node *node, const char *name, tconv_tensor **out) {
    tconv_status st;
    const tc_attr *a = find_typed(node, name, out, TCONV_ATTR_TENSOR, &st);
    if (a)
        *out = a->t;
    return st;
}

tconv_status tconv_attr_get_graph(tconv_node *node, const char *name, tconv_graph **out) {
    tconv_status st;
    const tc_attr *a = find_typed(node, name, out, TCONV_ATTR_GRAPH, &st);
    if (a)
        *out = a->g;
    return st;
}

/* ---------------------------------------------------------------- setters */

/* The checks every setter shares; on success *model is the node's model with its error reset. */
static tconv_status begin_set(tconv_node *node, const char *name, const void *values, size_t count,
                              tconv_model **model) {
    *model = tc_api_node_model(node);
    if (!*model)
        return TCONV_ERR_USAGE;
    if (!name || !*name)
        return tc_api_usage(*model, "attribute setter: the name is NULL or empty");
    if (count > 0 && !values)
        return tc_api_usage(*model, "attribute '%s': %zu values but the array is NULL", name,
                            count);
    tc_api_begin(*model);
    return TCONV_OK;
}

tconv_status tconv_attr_set_int(tconv_node *node, const char *name, int64_t value) {
    tconv_model *model;
    tconv_status st = begin_set(node, name, NULL, 0, &model);
    if (st != TCONV_OK)
        return st;
    return tc_api_end(model, tc_node_set_attr_int(node, name, value, &model->last_error));
}

tconv_status tconv_attr_set_float(tconv_node *node, const char *name, float value) {
    tconv_model *model;
    tconv_status st = begin_set(node, name, NULL, 0, &model);
    if (st != TCONV_OK)
        return st;
    return tc_api_end(model, tc_node_set_attr_float(node, name, value, &model->last_error));
}

tconv_status tconv_attr_set_string(tconv_node *node, const char *name, const char *value) {
    tconv_model *model;
    tconv_status st = begin_set(node, name, value, 1, &model);
    if (st != TCONV_OK)
        return st;
    return tc_api_end(model, tc_node_set_attr_string(node, name, value, &model->last_error));
}

tconv_status tconv_attr_set_ints(tconv_node *node, const char *name, const int64_t *values,
                                 size_t count) {
    tconv_model *model;
    tconv_status st = begin_set(node, name, values, count, &model);
    if (st != TCONV_OK)
        return st;
    return tc_api_end(model, tc_node_set_attr_ints(node, name, values, count, &model->last_error));
}

tconv_status tconv_attr_set_floats(tconv_node *node, const char *name, const float *values,
                                   size_t count) {
    tconv_model *model;
    tconv_status st = begin_set(node, name, values, count, &model);
    if (st != TCONV_OK)
        return st;
    return tc_api_end(model,
                      tc_node_set_attr_floats(node, name, values, count, &model->last_error));
}

tconv_status tconv_attr_set_tensor(tconv_node *node, const char *name, tconv_dtype dtype, int rank,
                                   const int64_t *dims, const void *data, size_t nbytes) {
    tconv_model *model;
    tconv_status st = begin_set(node, name, NULL, 0, &model);
    if (st == TCONV_OK)
        st = tc_api_check_dims(model, "tconv_attr_set_tensor", rank, dims, false, false);
    if (st != TCONV_OK)
        return st;
    tconv_tensor *t = NULL;
    st = tc_tensor_create(model, NULL, dtype, rank, dims, data, nbytes, &t, &model->last_error);
    if (st == TCONV_OK)
        st = tc_node_set_attr_tensor(node, name, t, &model->last_error);
    return tc_api_end(model, st);
}

tconv_status tconv_attr_remove(tconv_node *node, const char *name) {
    tconv_model *model;
    tconv_status st = begin_set(node, name, NULL, 0, &model);
    if (st != TCONV_OK)
        return st;
    tc_node_remove_attr(node, name);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- tensors */

const char *tconv_tensor_name(const tconv_tensor *tensor) {
    return tensor ? tensor->name : NULL;
}

tconv_dtype tconv_tensor_dtype(const tconv_tensor *tensor) {
    return tensor ? tensor->dtype : TCONV_DTYPE_UNDEFINED;
}

int tconv_tensor_rank(const tconv_tensor *tensor) {
    return tensor ? tensor->rank : -1;
}

int64_t tconv_tensor_dim(const tconv_tensor *tensor, int axis) {
    return tensor && axis >= 0 && axis < tensor->rank ? tensor->dims[axis] : -1;
}

int64_t tconv_tensor_element_count(const tconv_tensor *tensor) {
    int64_t n;
    return tensor && tc_tensor_elements(tensor, &n) ? n : -1;
}

tconv_value *tconv_tensor_value(const tconv_tensor *tensor) {
    return tensor ? tensor->value : NULL;
}

tconv_status tconv_tensor_get_data(tconv_tensor *tensor, const void **data, size_t *nbytes) {
    tconv_model *model = tensor ? tensor->model : NULL;
    if (data)
        *data = NULL;
    if (nbytes)
        *nbytes = 0;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!data || !nbytes)
        return tc_api_usage(model, "tconv_tensor_get_data: data and nbytes must not be NULL");
    if (tensor->dtype == TCONV_DTYPE_STRING)
        return tc_api_usage(model, "tensor '%s': STRING tensors have no byte form",
                            tensor->name ? tensor->name : "");
    return tc_api_end(model, tc_tensor_data(tensor, data, nbytes, tc_api_begin(model)));
}
