/* The target checker: whether each node of a graph meets a target. It reads the graph as it is
 * (attributes, declared shapes, which values are constants) and shares no code with the
 * rewrites, so that it can serve as their post-condition: the lint runs it on the model as
 * loaded, the pipeline on the model the rewrites made, and the tests on both. The only code it
 * shares is the IR's reading of ConvTranspose attributes (the one definition of their meaning). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/conv_transpose_geometry.h"
#include "ir/vec.h"
#include "ir/strbuf.h"
#include "passes/target.h"

void tc_target_violations_free(tc_target_violations *v) {
    free(v->items);
    memset(v, 0, sizeof *v);
}

typedef struct checker {
    const tc_target *target;
    tc_target_violations *out;
    char path[256]; /* subgraph path of the graph being walked: "" or "If 'n'/then_branch: " */
    tc_error *err;
} checker;

static tconv_status add_violation(checker *c, const char *where, tc_target_field field,
                                  const char *fmt, ...) TC_PRINTF(4, 5);

static tconv_status add_violation(checker *c, const char *where, tc_target_field field,
                                  const char *fmt, ...) {
    tc_target_violations *v = c->out;
    if (!TC_VEC_RESERVE(v->items, v->cap, v->count + 1))
        return tc_error_nomem(c->err, "the target check");
    tc_target_violation *item = &v->items[v->count++];
    snprintf(item->node, sizeof item->node, "%s%s", c->path, where);
    item->field = field;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(item->what, sizeof item->what, fmt, ap);
    va_end(ap);
    const char *source = c->target->source[field];
    snprintf(item->message, sizeof item->message, "%s (%s: %s)", item->what,
             tc_target_field_name(field), source[0] ? source : "issue 21");
    return TCONV_OK;
}

/* A constant: an initializer that is no graph input (a graph input may be fed), a Constant's
 * output, or a DequantizeLinear of such (QDQ models). */
static bool is_constant(const tconv_value *v) {
    if (!v)
        return true; /* absent optional input */
    if (v->initializer)
        return !v->is_graph_input;
    const tconv_node *p = v->producer;
    if (tc_node_is(p, TC_KIND_Constant))
        return true;
    if (tc_node_is(p, TC_KIND_DequantizeLinear) && p->n_inputs >= 1)
        return is_constant(p->inputs[0]) && (p->n_inputs < 2 || is_constant(p->inputs[1])) &&
               (p->n_inputs < 3 || is_constant(p->inputs[2]));
    return false;
}

/* "[a,b,c]" of n values. */
static const char *list_text(const int64_t *v, int n, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)v[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

static int declared_rank(const tconv_value *v, int64_t *dims) {
    if (!v || v->type.kind != TCONV_TYPE_TENSOR || v->type.rank < 0 || v->type.rank > TC_MAX_RANK)
        return -1;
    for (int i = 0; i < v->type.rank; i++)
        dims[i] = v->type.dims[i].kind == TCONV_DIM_STATIC ? v->type.dims[i].value : -1;
    return v->type.rank;
}

/* The node's kernel sizes: kernel_shape, else W's declared dims; false when unknown. */
static bool kernel_sizes(const tc_conv_transpose_attrs *a, const int64_t *w_dims, int w_rank,
                         int64_t *k) {
    for (int i = 0; i < a->spatial_rank; i++) {
        k[i] = a->has_kernel_shape             ? a->kernel_shape[i]
               : w_rank == a->spatial_rank + 2 ? w_dims[2 + i]
                                               : -1;
        if (k[i] < 1)
            return false;
    }
    return true;
}

static tconv_status check_pads(checker *c, const char *where, const tc_conv_transpose_attrs *a,
                               const int64_t *k, bool k_known) {
    const tc_target *t = c->target;
    int r = a->spatial_rank;
    tconv_status st = TCONV_OK;
    char buf[128];
    if (a->has_output_shape)
        st = add_violation(c, where, TC_TF_PADS, "has output_shape, which no target takes");
    if (st == TCONV_OK && a->auto_pad == TCONV_AUTO_PAD_SAME_LOWER)
        st = add_violation(c, where, TC_TF_PADS, "has auto_pad SAME_LOWER, which no target takes");
    if (st != TCONV_OK || a->auto_pad == TCONV_AUTO_PAD_SAME_LOWER)
        return st;
    if (a->auto_pad == TCONV_AUTO_PAD_SAME_UPPER) {
        if (!(t->pads & TC_PADS_SAME_UPPER))
            return add_violation(c, where, TC_TF_PADS,
                                 "has auto_pad SAME_UPPER; target %s "
                                 "takes no SAME padding",
                                 t->name);
        for (int i = 0; i < r && k_known; i++) {
            int64_t total = a->output_padding[i] + (k[i] - 1) * a->dilations[i] + 1 - a->strides[i];
            if (total < 0)
                return add_violation(c, where, TC_TF_PADS,
                                     "SAME_UPPER with a negative total on axis %d (%lld): not "
                                     "exact, backends clamp it",
                                     i, (long long)total);
        }
        if (!k_known)
            return add_violation(c, where, TC_TF_PADS,
                                 "SAME_UPPER whose kernel size is unknown: exactness unproven");
        return TCONV_OK;
    }
    bool zero = true, uniform = true, symmetric = true, negative = false;
    int64_t max = 0;
    for (int i = 0; i < 2 * r; i++) {
        int64_t p = a->auto_pad == TCONV_AUTO_PAD_VALID ? 0 : a->pads[i];
        zero &= p == 0;
        uniform &= p == a->pads[0] || a->auto_pad == TCONV_AUTO_PAD_VALID;
        negative |= p < 0;
        max = p > max ? p : max;
    }
    for (int i = 0; i < r && a->auto_pad != TCONV_AUTO_PAD_VALID; i++)
        symmetric &= a->pads[i] == a->pads[r + i];
    list_text(a->pads, 2 * r, buf, sizeof buf);
    if (negative)
        return add_violation(c, where, TC_TF_PADS, "has negative pads %s, which no target takes",
                             buf);
    unsigned need = zero        ? TC_PADS_ZERO | TC_PADS_UNIFORM | TC_PADS_SYMMETRIC
                    : uniform   ? TC_PADS_UNIFORM | TC_PADS_SYMMETRIC
                    : symmetric ? TC_PADS_SYMMETRIC
                                : 0;
    need |= TC_PADS_ASYMMETRIC;
    if (!(t->pads & need))
        st = add_violation(c, where, TC_TF_PADS, "has %s pads %s; target %s takes other forms",
                           zero        ? "zero"
                           : uniform   ? "uniform"
                           : symmetric ? "symmetric"
                                       : "asymmetric",
                           buf, t->name);
    if (st == TCONV_OK && t->pad_max >= 0 && max > t->pad_max)
        st = add_violation(c, where, TC_TF_PAD_MAX, "has pads %s above %lld", buf,
                           (long long)t->pad_max);
    if (st == TCONV_OK && zero && t->valid_kernel_ge_stride && k_known) {
        for (int i = 0; i < r && st == TCONV_OK; i++) {
            if ((k[i] - 1) * a->dilations[i] + 1 < a->strides[i])
                st = add_violation(c, where, TC_TF_VALID_KERNEL_GE_STRIDE,
                                   "VALID with kernel %lld below stride %lld on axis %d",
                                   (long long)k[i], (long long)a->strides[i], i);
        }
    }
    return st;
}

static tconv_status check_shape_limits(checker *c, const char *where,
                                       const tc_conv_transpose_attrs *a, const int64_t *k,
                                       bool k_known) {
    const tc_target *t = c->target;
    int r = a->spatial_rank;
    char buf[128];
    tconv_status st = TCONV_OK;
    if (!tc_target_list_allows(&t->strides, a->strides, r))
        st = add_violation(c, where, TC_TF_STRIDES, "has strides %s",
                           list_text(a->strides, r, buf, sizeof buf));
    bool limits =
        t->kernels.count || t->kernel_max >= 0 || t->kernel_h_max >= 0 || t->kernel_area_max >= 0;
    if (st != TCONV_OK || !limits)
        return st;
    if (!k_known)
        return add_violation(c, where, TC_TF_KERNELS, "has a kernel of unknown size");
    list_text(k, r, buf, sizeof buf);
    if (!tc_target_list_allows(&t->kernels, k, r))
        st = add_violation(c, where, TC_TF_KERNELS, "has kernel %s", buf);
    int64_t area = 1, kmax = 0;
    for (int i = 0; i < r; i++) {
        area *= k[i];
        kmax = k[i] > kmax ? k[i] : kmax;
    }
    if (st == TCONV_OK && t->kernel_max >= 0 && kmax > t->kernel_max)
        st = add_violation(c, where, TC_TF_KERNEL_MAX, "has kernel %s above %lld", buf,
                           (long long)t->kernel_max);
    if (st == TCONV_OK && t->kernel_h_max >= 0 && k[0] > t->kernel_h_max)
        st = add_violation(c, where, TC_TF_KERNEL_H_MAX, "has kernel height %lld above %lld",
                           (long long)k[0], (long long)t->kernel_h_max);
    if (st == TCONV_OK && t->kernel_area_max >= 0 && area > t->kernel_area_max)
        st = add_violation(c, where, TC_TF_KERNEL_AREA_MAX, "has kernel %s, area above %lld", buf,
                           (long long)t->kernel_area_max);
    return st;
}

static tconv_status check_conv_transpose(checker *c, const tconv_node *node, const char *where) {
    const tc_target *t = c->target;
    if (!t->conv_transpose)
        return add_violation(c, where, TC_TF_CONV_TRANSPOSE,
                             "is a ConvTranspose; target %s has none", t->name);
    int64_t x_dims[TC_MAX_RANK], w_dims[TC_MAX_RANK];
    int x_rank = node->n_inputs > 0 ? declared_rank(node->inputs[0], x_dims) : -1;
    int w_rank = node->n_inputs > 1 ? declared_rank(node->inputs[1], w_dims) : -1;
    int rank = x_rank >= 0 ? x_rank : w_rank;
    tc_conv_transpose_attrs a;
    tc_error local;
    tc_error_clear(&local);
    if (tc_conv_transpose_read_attrs(node, rank >= 2 ? rank - 2 : -1, &a, &local) != TCONV_OK)
        return add_violation(c, where, TC_TF_RANKS, "attributes unreadable: %s", local.message);
    int r = a.spatial_rank;
    tconv_status st = TCONV_OK;
    if (!tc_target_rank_ok(t, r))
        st = add_violation(c, where, TC_TF_RANKS, "is %d-D", r);
    int64_t k[TC_MAX_SPATIAL];
    bool k_known = kernel_sizes(&a, w_dims, w_rank, k);
    if (st == TCONV_OK)
        st = check_pads(c, where, &a, k, k_known);
    bool op = false, dilated = false;
    for (int i = 0; i < r; i++) {
        op |= a.output_padding[i] != 0;
        dilated |= a.dilations[i] != 1;
    }
    char buf[128];
    if (st == TCONV_OK && op && !t->output_padding)
        st = add_violation(c, where, TC_TF_OUTPUT_PADDING, "has output_padding %s",
                           list_text(a.output_padding, r, buf, sizeof buf));
    if (st == TCONV_OK && dilated && !t->dilation)
        st = add_violation(c, where, TC_TF_DILATION, "has dilations %s",
                           list_text(a.dilations, r, buf, sizeof buf));
    if (st == TCONV_OK && a.group != 1 && t->group != TC_GROUPS_ANY) {
        bool depthwise = w_rank >= 1 && w_dims[0] == a.group;
        if (t->group == TC_GROUPS_ONE || !depthwise)
            st = add_violation(c, where, TC_TF_GROUP, "has group %lld%s", (long long)a.group,
                               t->group == TC_GROUPS_DEPTHWISE ? " (not depthwise)" : "");
    }
    if (st == TCONV_OK)
        st = check_shape_limits(c, where, &a, k, k_known);
    if (st == TCONV_OK && t->weights_constant) {
        if (node->n_inputs > 1 && !is_constant(node->inputs[1]))
            st = add_violation(c, where, TC_TF_WEIGHTS, "has weights W that are no constant");
        if (st == TCONV_OK && node->n_inputs > 2 && !is_constant(node->inputs[2]))
            st = add_violation(c, where, TC_TF_WEIGHTS, "has a bias B that is no constant");
    }
    return st;
}

static tconv_status check_graph(tconv_graph *graph, void *ctx);

static tconv_status check_node(checker *c, tconv_node *node, size_t index) {
    char where[256];
    tc_node_describe_at(node, index, where, sizeof where);
    tconv_status st = TCONV_OK;
    /* by name: a target description lists the ops it lacks as words of its file */
    if (tc_node_is_onnx_domain(node) && tc_target_lacks_op(c->target, node->op_type))
        st = add_violation(c, where, TC_TF_MISSING_OPS, "is a %s; target %s has none",
                           node->op_type, c->target->name);
    if (st == TCONV_OK && tc_node_is(node, TC_KIND_ConvTranspose))
        st = check_conv_transpose(c, node, where);
    if (st != TCONV_OK)
        return st;
    char saved[sizeof c->path];
    memcpy(saved, c->path, sizeof saved);
    size_t used = strlen(c->path);
    snprintf(c->path + used, sizeof c->path - used, "%s > ", where);
    st = tc_node_for_each_subgraph(node, check_graph, c);
    memcpy(c->path, saved, sizeof saved);
    return st;
}

static tconv_status check_graph(tconv_graph *graph, void *ctx) {
    checker *c = ctx;
    size_t index = 0;
    tconv_status st = TCONV_OK;
    for (tconv_node *n = graph->first; n && st == TCONV_OK; n = n->next)
        st = check_node(c, n, index++);
    return st;
}

tconv_status tc_target_check_model(const tc_target *target, const tconv_model *model,
                                   tc_target_violations *out, tc_error *err) {
    memset(out, 0, sizeof *out);
    checker c = {target, out, "", err};
    tconv_status st = check_graph(model->graph, &c);
    if (st != TCONV_OK)
        tc_target_violations_free(out);
    return st;
}

static char *violations_text(const tc_target *target, const tc_target_violations *v,
                             const char *sep, bool sources) {
    tc_strbuf b;
    tc_strbuf_init(&b);
    tc_strbuf_appendf(&b, "%zu constraint(s) of target %s broken:", v->count, target->name);
    for (size_t i = 0; i < v->count; i++) {
        const tc_target_violation *item = &v->items[i];
        if (sources)
            tc_strbuf_appendf(&b, "%s%s: %s", sep, item->node, item->message);
        else
            tc_strbuf_appendf(&b, "%s%s: %s (%s)", sep, item->node, item->what,
                              tc_target_field_name(item->field));
    }
    return tc_strbuf_take(&b);
}

char *tc_target_violations_text(const tc_target *target, const tc_target_violations *v,
                                const char *sep) {
    return violations_text(target, v, sep, true);
}

char *tc_target_violations_brief(const tc_target *target, const tc_target_violations *v,
                                 const char *sep) {
    return violations_text(target, v, sep, false);
}
