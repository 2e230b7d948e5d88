/* shape-infer helpers: side tables, dims, broadcasting, inputs, and the known contents of small
 * integer tensors (the shape/axes/pads arguments that decide output shapes). */
#include "passes/shape_infer.h"
#include "ir/shape_rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- errors */

tconv_status tc_si_fail(tc_si_ctx *ctx, const tconv_node *node, const char *fmt, ...) {
    char what[TC_ERROR_MESSAGE_MAX];
    char where[256];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s: %s",
                        tc_node_describe(node, where, sizeof where), what);
}

/* ---------------------------------------------------------------- dims and shapes */

tc_dim tc_si_dim_static(int64_t value) {
    tc_dim d = {TCONV_DIM_STATIC, value, NULL, NULL};
    return d;
}

tc_dim tc_si_dim_unknown(void) {
    tc_dim d = {TCONV_DIM_UNKNOWN, 0, NULL, NULL};
    return d;
}

bool tc_si_dim_is(const tc_dim *dim, int64_t value) {
    return dim->kind == TCONV_DIM_STATIC && dim->value == value;
}

bool tc_si_dim_same(const tc_dim *a, const tc_dim *b) {
    if (a->kind != b->kind)
        return false;
    if (a->kind == TCONV_DIM_STATIC)
        return a->value == b->value;
    if (a->kind == TCONV_DIM_SYMBOLIC)
        return a->param && b->param && strcmp(a->param, b->param) == 0;
    return false;
}

tc_dim tc_si_dim_agree(const tc_dim *a, const tc_dim *b) {
    if (tc_si_dim_same(a, b)) {
        tc_dim d = *a;
        d.origin = NULL;
        return d;
    }
    return tc_si_dim_unknown();
}

void tc_si_shape_unknown(tc_si_shape *shape, int rank) {
    shape->rank = rank;
    for (int i = 0; i < rank; i++)
        shape->dims[i] = tc_si_dim_unknown();
}

bool tc_si_shape_product(const tc_si_shape *shape, int begin, int end, int64_t *out) {
    int64_t product = 1;
    for (int i = begin; i < end; i++) {
        if (shape->dims[i].kind != TCONV_DIM_STATIC || shape->dims[i].value < 0 ||
            !tc_mul_i64(product, shape->dims[i].value, &product))
            return false;
    }
    *out = product;
    return true;
}

tconv_status tc_si_broadcast(tc_si_ctx *ctx, const tconv_node *node, const tc_si_shape *a,
                             const tc_si_shape *b, tc_si_shape *out) {
    int rank = a->rank > b->rank ? a->rank : b->rank;
    tc_dim one = tc_si_dim_static(1);
    for (int i = 0; i < rank; i++) {
        int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
        const tc_dim *da = ia >= 0 ? &a->dims[ia] : &one;
        const tc_dim *db = ib >= 0 ? &b->dims[ib] : &one;
        if (!tc_dim_broadcast(da, db, &out->dims[i]))
            return tc_si_fail(ctx, node,
                              "inputs cannot be broadcast: axis %d (from the right %d) is %lld "
                              "in one and %lld in the other",
                              i, rank - i, (long long)da->value, (long long)db->value);
    }
    out->rank = rank;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- inputs */

void tc_si_value_tensor(const tc_si_ctx *ctx, const tconv_value *value, tc_si_tensor *out) {
    out->dtype = TCONV_DTYPE_UNDEFINED;
    out->shape.rank = -1;
    const tc_type *t = tc_si_type(ctx, value);
    if (t->kind != TCONV_TYPE_TENSOR)
        return;
    out->dtype = t->dtype;
    if (t->rank < 0 || t->rank > TC_MAX_RANK)
        return;
    out->shape.rank = t->rank;
    for (int i = 0; i < t->rank; i++) {
        out->shape.dims[i] = t->dims[i];
        out->shape.dims[i].origin = NULL;
    }
}

const tc_type *tc_si_type(const tc_si_ctx *ctx, const tconv_value *value) {
    return tc_type_seen(ctx->types, value);
}

bool tc_si_input(const tc_si_ctx *ctx, const tconv_node *node, size_t index, tc_si_tensor *out) {
    out->dtype = TCONV_DTYPE_UNDEFINED;
    out->shape.rank = -1;
    if (index >= node->n_inputs || !node->inputs[index])
        return false;
    tc_si_value_tensor(ctx, node->inputs[index], out);
    return true;
}

void tc_si_same_as_input(const tc_si_ctx *ctx, const tconv_node *node, size_t index,
                         tc_si_out *out) {
    tc_si_tensor in;
    tc_si_input(ctx, node, index, &in);
    out->dtype = in.dtype;
    out->shape = in.shape;
}

tconv_status tc_si_normalize_axis(tc_si_ctx *ctx, const tconv_node *node, const char *what,
                                  int64_t axis, int rank, int *out) {
    if (!tc_axis_normalize(axis, rank, out))
        return tc_si_fail(ctx, node, "%s %lld is out of range for rank %d", what, (long long)axis,
                          rank);
    return TCONV_OK;
}

int64_t tc_si_input_elements(const tc_si_ctx *ctx, const tconv_node *node, size_t index) {
    tc_si_tensor in;
    int64_t n;
    if (!tc_si_input(ctx, node, index, &in) || in.shape.rank < 0 ||
        !tc_si_shape_product(&in.shape, 0, in.shape.rank, &n))
        return -1;
    return n;
}

/* ---------------------------------------------------------------- known contents */

tc_si_data *tc_si_data_new(tc_si_ctx *ctx) {
    tc_si_data *data = calloc(1, sizeof *data);
    if (!data)
        tc_error_nomem(ctx->err, "shape inference data");
    return data;
}

/* bool counts: 0/1 are the conditions of exporters' pad arithmetic (Where, Not). */
static bool is_integer_dtype(tconv_dtype dtype) {
    const tc_dtype_traits *traits = tc_dtype_traits_of(dtype);
    return traits->get_bits && !traits->subbyte;
}

/* Unreadable data makes inference unable to tell; the runtime or saver reports it. */
tc_si_data *tc_si_data_from_tensor(tconv_tensor *tensor) {
    int64_t n;
    if (!is_integer_dtype(tensor->dtype) || tensor->rank > 2 || !tc_tensor_elements(tensor, &n) ||
        n > TC_SI_MAX_DATA || (tensor->rank == 2 && tensor->dims[1] == 0))
        return NULL;
    tc_si_data *data = calloc(1, sizeof *data);
    if (!data)
        return NULL;
    data->rank = tensor->rank;
    data->cols = tensor->rank == 2 ? (int)tensor->dims[1] : 0;
    data->count = (int)n;
    for (int i = 0; i < data->count; i++) {
        int64_t v;
        tc_error scratch;
        if (tc_tensor_get_i64(tensor, i, &v, &scratch) != TCONV_OK) {
            free(data);
            return NULL;
        }
        data->elems[i] = tc_si_dim_static(v);
    }
    return data;
}

const tc_si_data *tc_si_value_data(tc_si_ctx *ctx, tconv_value *value) {
    if (!value)
        return NULL;
    tc_si_data *data = tc_ptr_map_get(&ctx->data, value);
    if (data)
        return data;
    /* An initializer that is also a graph input is only a default: the caller may override it. */
    if (!value->initializer || value->is_graph_input)
        return NULL;
    data = tc_si_data_from_tensor(value->initializer);
    if (data && !tc_ptr_map_put(&ctx->data, value, data)) {
        free(data);
        return NULL;
    }
    return data;
}

const tc_si_data *tc_si_input_data(tc_si_ctx *ctx, const tconv_node *node, size_t index) {
    return index < node->n_inputs ? tc_si_value_data(ctx, node->inputs[index]) : NULL;
}

bool tc_si_input_ints(tc_si_ctx *ctx, const tconv_node *node, size_t index, int64_t *values,
                      int *count) {
    const tc_si_data *data = tc_si_input_data(ctx, node, index);
    if (!data)
        return false;
    for (int i = 0; i < data->count; i++) {
        if (data->elems[i].kind != TCONV_DIM_STATIC)
            return false;
        values[i] = data->elems[i].value;
    }
    *count = data->count;
    return true;
}

static bool tensor_floats(tconv_tensor *tensor, float *values, int max, int *count) {
    int64_t n;
    const void *bytes;
    size_t nbytes;
    tc_error scratch;
    if (tensor->dtype != TCONV_DTYPE_FLOAT || !tc_tensor_elements(tensor, &n) || n > max ||
        tc_tensor_data(tensor, &bytes, &nbytes, &scratch) != TCONV_OK)
        return false;
    if (n > 0)
        memcpy(values, bytes, (size_t)n * sizeof(float));
    *count = (int)n;
    return true;
}

static bool constant_floats(const tconv_node *constant, float *values, int max, int *count) {
    const tc_attr *a = tc_node_attr(constant, "value");
    if (a && a->type == TCONV_ATTR_TENSOR && a->t)
        return tensor_floats(a->t, values, max, count);
    a = tc_node_attr(constant, "value_floats");
    if (a && a->type == TCONV_ATTR_FLOATS && a->n <= (size_t)max) {
        if (a->n > 0)
            memcpy(values, a->floats, a->n * sizeof(float));
        *count = (int)a->n;
        return true;
    }
    a = tc_node_attr(constant, "value_float");
    if (a && a->type == TCONV_ATTR_FLOAT && max >= 1) {
        values[0] = a->f;
        *count = 1;
        return true;
    }
    return false;
}

bool tc_si_input_floats(tc_si_ctx *ctx, const tconv_node *node, size_t index, float *values,
                        int max, int *count) {
    (void)ctx;
    if (index >= node->n_inputs || !node->inputs[index])
        return false;
    tconv_value *v = node->inputs[index];
    if (v->initializer && !v->is_graph_input)
        return tensor_floats(v->initializer, values, max, count);
    if (tc_node_is(v->producer, TC_KIND_Constant))
        return constant_floats(v->producer, values, max, count);
    return false;
}

static tconv_status ints_from_attr(tc_si_ctx *ctx, const tconv_node *node, const char *attr,
                                   tc_si_ints *out) {
    bool present;
    const int64_t *values;
    size_t n;
    tconv_status st = tc_node_attr_ints(node, attr, &present, &values, &n, ctx->err);
    if (st != TCONV_OK || !present)
        return st;
    if (n > TC_SI_MAX_DATA) {
        out->state = TCONV_SI_ARG_UNKNOWN;
        out->count = (int)(n > INT32_MAX ? -1 : (int64_t)n);
        return TCONV_OK;
    }
    out->state = TCONV_SI_ARG_KNOWN;
    out->count = (int)n;
    if (n)
        memcpy(out->values, values, n * sizeof(int64_t));
    return TCONV_OK;
}

tconv_status tc_si_ints_arg(tc_si_ctx *ctx, const tconv_node *node, const char *attr, size_t input,
                            tc_si_ints *out) {
    out->state = TCONV_SI_ARG_ABSENT;
    out->count = -1;
    if (attr)
        return ints_from_attr(ctx, node, attr, out);
    if (input >= node->n_inputs || !node->inputs[input])
        return TCONV_OK;
    if (tc_si_input_ints(ctx, node, input, out->values, &out->count)) {
        out->state = TCONV_SI_ARG_KNOWN;
        return TCONV_OK;
    }
    out->state = TCONV_SI_ARG_UNKNOWN;
    int64_t n = tc_si_input_elements(ctx, node, input);
    out->count = n >= 0 && n <= INT32_MAX ? (int)n : -1;
    return TCONV_OK;
}
