/* Kernel helpers: input checks with messages, parameter tensors, axes, dtype conversions. */
#include "runtime/kernels/kernel_util.h"
#include "ir/shape_rules.h"
#include "runtime/compute/compute.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

const char *tc_kernel_input_name(const tc_kernel_ctx *ctx, size_t index) {
    const tconv_node *node = ctx->node;
    if (!node) /* a prepared kernel's run: the executor's copy of the names */
        return ctx->input_names && index < ctx->n_inputs && ctx->input_names[index]
                   ? ctx->input_names[index]
                   : "";
    if (index >= node->n_inputs || !node->inputs[index] || !node->inputs[index]->name)
        return "";
    return node->inputs[index]->name;
}

static const char *op_name(const tc_kernel_ctx *ctx) {
    if (ctx->op_type)
        return ctx->op_type;
    return ctx->node && ctx->node->op_type ? ctx->node->op_type : "?";
}

tconv_status tc_kernel_require_input(const tc_kernel_ctx *ctx, size_t index,
                                     const tc_rt_tensor **out) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, index);
    if (!t)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s: required input %zu is missing",
                            op_name(ctx), index);
    *out = t;
    return TCONV_OK;
}

static void format_dtype_mask(uint32_t mask, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d <= TC_DTYPE_MAX && d < 32; d++) {
        if (!(mask & TC_DTYPE_BIT(d)))
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", tconv_dtype_name(d));
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
}

tconv_status tc_kernel_check_dtype(const tc_kernel_ctx *ctx, size_t index, uint32_t mask) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, index);
    if (!t)
        return TCONV_OK;
    if (t->dtype > 0 && t->dtype < 32 && (mask & TC_DTYPE_BIT(t->dtype)))
        return TCONV_OK;
    char supported[256];
    format_dtype_mask(mask, supported, sizeof supported);
    return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                        "unsupported dtype %s for input %zu ('%s') of %s (supported: %s)",
                        tconv_dtype_name(t->dtype), index, tc_kernel_input_name(ctx, index),
                        op_name(ctx), supported);
}

tconv_status tc_kernel_check_output_dtype(const tc_kernel_ctx *ctx, int dtype, uint32_t mask) {
    if (dtype > 0 && dtype < 32 && (mask & TC_DTYPE_BIT(dtype)))
        return TCONV_OK;
    char supported[256];
    format_dtype_mask(mask, supported, sizeof supported);
    return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                        "unsupported output dtype %s (%d) for %s (supported: %s)",
                        tconv_dtype_name(dtype), dtype, op_name(ctx), supported);
}

static tconv_status unsupported_attr(tc_error *err, const char *attr, const char *value,
                                     const char *op_type, int64_t opset) {
    return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "unsupported %s = '%s' for %s at opset %lld",
                        attr, value, op_type, (long long)opset);
}

tconv_status tc_kernel_unsupported_attr(const tc_kernel_ctx *ctx, const char *attr,
                                        const char *value) {
    return unsupported_attr(ctx->err, attr, value, op_name(ctx), ctx->opset);
}

tconv_status tc_prepare_unsupported_attr(const tc_kernel_prepare_ctx *pc, const char *attr,
                                         const char *value) {
    return unsupported_attr(pc->err, attr, value, pc->node->op_type ? pc->node->op_type : "?",
                            pc->opset);
}

static tconv_status check_vector(const tc_kernel_ctx *ctx, size_t index, const tc_rt_tensor *t,
                                 size_t cap) {
    if (t->rank > 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "input %zu ('%s') must be 1-D, has rank %d", index,
                            tc_kernel_input_name(ctx, index), t->rank);
    if ((uint64_t)t->n_elements > (uint64_t)cap)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "input %zu ('%s') has %lld elements, at most %zu are supported", index,
                            tc_kernel_input_name(ctx, index), (long long)t->n_elements, cap);
    return TCONV_OK;
}

tconv_status tc_kernel_read_ints(const tc_kernel_ctx *ctx, size_t index, int64_t *values,
                                 size_t cap, size_t *count) {
    const tc_rt_tensor *t;
    tconv_status st = tc_kernel_require_input(ctx, index, &t);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, index, TC_DTYPES_INDEX);
    if (st == TCONV_OK)
        st = check_vector(ctx, index, t, cap);
    if (st != TCONV_OK)
        return st;
    for (int64_t i = 0; i < t->n_elements; i++)
        values[i] = tc_rt_get_i64(t, i);
    *count = (size_t)t->n_elements;
    return TCONV_OK;
}

tconv_status tc_kernel_read_floats(const tc_kernel_ctx *ctx, size_t index, double *values,
                                   size_t cap, size_t *count) {
    const tc_rt_tensor *t;
    tconv_status st = tc_kernel_require_input(ctx, index, &t);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, index, TC_DTYPES_FLOAT);
    if (st == TCONV_OK)
        st = check_vector(ctx, index, t, cap);
    if (st != TCONV_OK)
        return st;
    for (int64_t i = 0; i < t->n_elements; i++)
        values[i] = tc_rt_get_f64(t, i);
    *count = (size_t)t->n_elements;
    return TCONV_OK;
}

tconv_status tc_kernel_normalize_axis(const tc_kernel_ctx *ctx, const char *what, int64_t axis,
                                      int rank, int *out) {
    if (!tc_axis_normalize(axis, rank, out))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s %lld is out of range for rank %d",
                            what, (long long)axis, rank);
    return TCONV_OK;
}

tconv_status tc_kernel_normalize_index(const tc_kernel_ctx *ctx, int64_t k, int64_t dim,
                                       int64_t *out) {
    if (k < -dim || k >= dim)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "index %lld is out of range for an axis of size %lld", (long long)k,
                            (long long)dim);
    *out = k < 0 ? k + dim : k;
    return TCONV_OK;
}

int tc_ranked_largest_first(const void *a, const void *b) {
    const tc_ranked *x = a, *y = b;
    if (x->value != y->value)
        return x->value > y->value ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

int tc_ranked_smallest_first(const void *a, const void *b) {
    const tc_ranked *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

tconv_status tc_kernel_require_typed(const tc_kernel_ctx *ctx, size_t index, uint32_t mask,
                                     const tc_rt_tensor **out) {
    tconv_status st = tc_kernel_require_input(ctx, index, out);
    return st != TCONV_OK ? st : tc_kernel_check_dtype(ctx, index, mask);
}

tconv_status tc_rank_attrs_read(const tc_kernel_prepare_ctx *pc, tc_rank_attr_reader read,
                                size_t size, int only, tc_rank_attrs *out) {
    memset(out, 0, sizeof *out);
    void *attrs = malloc(size); /* kept only where the read succeeds */
    if (!attrs)
        return tc_error_nomem(pc->err, "a kernel's parameters");
    tconv_status st = TCONV_OK;
    for (int r = 1; r <= TC_MAX_SPATIAL && st == TCONV_OK; r++) {
        if (only > 0 && r != only)
            continue;
        tc_error err;
        tc_error_clear(&err);
        memset(attrs, 0, size);
        out->status[r] = read(pc->node, r, attrs, &err);
        if (out->status[r] == TCONV_OK)
            out->attrs[r] = tc_arena_memdup(pc->arena, attrs, size);
        else
            out->message[r] = tc_arena_strdup(pc->arena, err.message);
        if (!out->attrs[r] && !out->message[r])
            st = tc_error_nomem(pc->err, "a kernel's parameters");
    }
    free(attrs);
    return st;
}

tconv_status tc_rank_attrs_get(const tc_kernel_ctx *ctx, const tc_rank_attrs *r, int spatial_rank,
                               const void **out) {
    if (spatial_rank < 1 || spatial_rank > TC_MAX_SPATIAL)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "%d spatial axes: 1 to %d are supported", spatial_rank, TC_MAX_SPATIAL);
    if (r->message[spatial_rank])
        return tc_error_set(ctx->err, r->status[spatial_rank], "%s", r->message[spatial_rank]);
    if (!r->attrs[spatial_rank]) /* prepare read one rank only: the operands' checks broke */
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "%d spatial axes, which the node's constant W excludes", spatial_rank);
    *out = r->attrs[spatial_rank];
    return TCONV_OK;
}
