/* lower-for-target: after legalize-conv-transpose, every ConvTranspose of the model (subgraphs
 * included) is rewritten into a form the pipeline's target takes, composing the lowerings of
 * target_lower.h per node; then the independent checker (target_check.c) must find nothing, or
 * the pass fails naming each node left and the constraint it breaks. Without a target the pass
 * does nothing. */
#include "passes/target_lower.h"
#include "ir/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/strbuf.h"
#include "passes/lower_phase.h"

/* ---------------------------------------------------------------- helpers of the lowerings */

tconv_dtype tc_lower_node_dtype(const tconv_node *node) {
    const tconv_value *y = node->n_outputs ? node->outputs[0] : NULL;
    const tconv_value *x = node->n_inputs ? node->inputs[0] : NULL;
    if (y && y->type.kind == TCONV_TYPE_TENSOR && y->type.dtype != TCONV_DTYPE_UNDEFINED)
        return y->type.dtype;
    return x && x->type.kind == TCONV_TYPE_TENSOR ? x->type.dtype : TCONV_DTYPE_UNDEFINED;
}

tconv_status tc_lower_copy_attrs(const tconv_node *from, tconv_node *to, tc_error *err) {
    tconv_status st = TCONV_OK;
    for (size_t i = 0; i < from->n_attrs && st == TCONV_OK; i++) {
        const tc_attr *a = &from->attrs[i];
        switch (a->type) {
        case TCONV_ATTR_INT:
            st = tc_node_set_attr_int(to, a->name, a->i, err);
            break;
        case TCONV_ATTR_INTS:
            st = tc_node_set_attr_ints(to, a->name, a->ints, a->n, err);
            break;
        case TCONV_ATTR_FLOAT:
            st = tc_node_set_attr_float(to, a->name, a->f, err);
            break;
        case TCONV_ATTR_FLOATS:
            st = tc_node_set_attr_floats(to, a->name, a->floats, a->n, err);
            break;
        case TCONV_ATTR_STRING: {
            char buf[256];
            size_t len = a->s.len < sizeof buf - 1 ? a->s.len : sizeof buf - 1;
            memcpy(buf, a->s.data, len);
            buf[len] = '\0';
            st = tc_node_set_attr_string(to, a->name, buf, err);
            break;
        }
        default:
            st = tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                              "attribute '%s' of a kind a lowering cannot copy", a->name);
        }
    }
    return st;
}

tconv_status tc_lower_declare_like(tc_emitter *e, tconv_value *value, const tconv_value *like,
                                   int axis, int64_t size, int insert) {
    if (!like || like->type.kind != TCONV_TYPE_TENSOR || like->type.rank < 0 ||
        like->type.rank >= TC_MAX_RANK)
        return TCONV_OK;
    int64_t dims[TC_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < like->type.rank; i++) {
        if (i == insert)
            dims[rank++] = 1;
        const tc_dim *d = &like->type.dims[i];
        dims[rank++] = i == axis ? size : d->kind == TCONV_DIM_STATIC ? d->value : -1;
    }
    if (insert == like->type.rank)
        dims[rank++] = 1;
    return tc_emit_declare(e, value, like->type.dtype, rank, dims);
}

tconv_status tc_lower_constant_weight(tc_emitter *e, tconv_value *value, const char *suffix,
                                      tc_weight_edit_fn edit, const void *ctx, tconv_value **out,
                                      bool *constant) {
    tc_weight_source source;
    char why[256];
    *constant = tc_weight_source_find(value, &source, why, sizeof why);
    if (!*constant)
        return TCONV_OK;
    tc_weight weight;
    tconv_status st = tc_weight_load(&source, &weight, e->err);
    if (st != TCONV_OK)
        return st;
    st = edit(&weight, ctx, e->err);
    char *base = tc_arena_sprintf(e->model->arena, "%s/%s", e->base, suffix);
    tconv_node *dequantize = NULL;
    tconv_node *before = e->before ? e->before : e->last->next;
    if (st == TCONV_OK && !base)
        st = tc_error_nomem(e->err, "a weight name");
    if (st == TCONV_OK)
        st = tc_weight_emit(&weight, e->graph, before, base, out, &dequantize, e->err);
    if (st == TCONV_OK && dequantize)
        st = tc_emitter_record(e, dequantize);
    tc_weight_free(&weight);
    return st;
}

tconv_status tc_lower_set_2d_attrs(tconv_node *node, const tc_conv_transpose_attrs *a,
                                   const int64_t values[4][2], const int64_t pads[4],
                                   tc_error *err) {
    tconv_status st;
    if ((st = tc_node_set_attr_ints(node, "kernel_shape", values[0], 2, err)) ||
        (st = tc_node_set_attr_ints(node, "strides", values[1], 2, err)) ||
        (st = tc_node_set_attr_ints(node, "dilations", values[2], 2, err)))
        return st;
    if (a->has_pads && (st = tc_node_set_attr_ints(node, "pads", pads, 4, err)))
        return st;
    if (a->has_output_padding)
        st = tc_node_set_attr_ints(node, "output_padding", values[3], 2, err);
    return st;
}

/* ---------------------------------------------------------------- what a node needs */

/* The node as the target will see it once dilation is folded and 1-D lifted: kernel (extent),
 * strides and rank. */
typedef struct seen_form {
    int rank;
    int64_t kernel[TC_MAX_SPATIAL], strides[TC_MAX_SPATIAL];
} seen_form;

static void form_after_lowerings(const tc_target *t, const tc_conv_transpose_match *m,
                                 seen_form *f) {
    const tc_conv_transpose_geometry *g = &m->geometry;
    f->rank = g->spatial_rank;
    for (int i = 0; i < f->rank; i++) {
        f->kernel[i] = t->dilation ? g->kernel[i] : (g->kernel[i] - 1) * g->dilations[i] + 1;
        f->strides[i] = g->strides[i];
    }
    if (f->rank == 3 && !tc_target_rank_ok(t, 3) && tc_target_rank_ok(t, 2) &&
        tc_lower_depth_foldable(m)) {
        f->rank = 2;
        for (int i = 0; i < 2; i++) {
            f->kernel[i] = f->kernel[i + 1];
            f->strides[i] = f->strides[i + 1];
        }
    }
    if (f->rank == 1 && !tc_target_rank_ok(t, 1) && tc_target_rank_ok(t, 2)) {
        f->rank = 2;
        f->kernel[1] = f->kernel[0];
        f->kernel[0] = 1;
        f->strides[1] = f->strides[0];
        f->strides[0] = tc_auto_pad_is_same(m->attrs.auto_pad) ? 1 : f->strides[0];
    }
}

bool tc_target_needs_phase(const tc_target *t, const tc_conv_transpose_match *m) {
    if (!t->conv_transpose)
        return true;
    seen_form f;
    form_after_lowerings(t, m, &f);
    if (!tc_target_list_allows(&t->strides, f.strides, f.rank) ||
        !tc_target_list_allows(&t->kernels, f.kernel, f.rank))
        return true;
    int64_t area = 1;
    for (int i = 0; i < f.rank; i++) {
        area *= f.kernel[i];
        if ((t->kernel_max >= 0 && f.kernel[i] > t->kernel_max) ||
            (t->valid_kernel_ge_stride && f.kernel[i] < f.strides[i]))
            return true;
    }
    return (t->kernel_h_max >= 0 && f.kernel[0] > t->kernel_h_max) ||
           (t->kernel_area_max >= 0 && area > t->kernel_area_max);
}

bool tc_target_keeps_pads(const tc_target *t, const tc_conv_transpose_match *m) {
    const tc_conv_transpose_attrs *a = &m->attrs;
    const tc_conv_transpose_geometry *g = &m->geometry;
    int r = g->spatial_rank;
    bool op = false, zero = true, uniform = true, symmetric = true;
    int64_t max = 0;
    for (int i = 0; i < r; i++) {
        op |= a->output_padding[i] != 0;
        symmetric &= g->pad_begin[i] == g->pad_end[i];
    }
    for (int i = 0; i < r; i++) {
        int64_t sides[2] = {g->pad_begin[i], g->pad_end[i]};
        for (int k = 0; k < 2; k++) {
            if (sides[k] < 0)
                return false;
            zero &= sides[k] == 0;
            uniform &= sides[k] == g->pad_begin[0];
            max = sides[k] > max ? sides[k] : max;
        }
    }
    if (a->has_output_shape || a->auto_pad == TCONV_AUTO_PAD_SAME_LOWER ||
        (op && !t->output_padding))
        return false;
    if (tc_target_needs_phase(t, m)) /* the phase form starts from pads 0 */
        return zero && !op && !tc_auto_pad_is_same(a->auto_pad);
    if (a->auto_pad == TCONV_AUTO_PAD_SAME_UPPER) {
        bool exact = true;
        for (int i = 0; i < r; i++)
            exact &=
                a->output_padding[i] + (g->kernel[i] - 1) * g->dilations[i] + 1 - g->strides[i] >=
                0;
        return exact && (t->pads & TC_PADS_SAME_UPPER);
    }
    if (t->pad_max >= 0 && max > t->pad_max)
        return false;
    unsigned takes = zero        ? TC_PADS_ZERO | TC_PADS_UNIFORM | TC_PADS_SYMMETRIC
                     : uniform   ? TC_PADS_UNIFORM | TC_PADS_SYMMETRIC
                     : symmetric ? TC_PADS_SYMMETRIC
                                 : 0;
    return (t->pads & (takes | TC_PADS_ASYMMETRIC)) != 0;
}

/* ---------------------------------------------------------------- the pass */

static const tc_lowering *const LOWERINGS[] = {&tc_lower_dilation, &tc_lower_rank, &tc_lower_depth,
                                               &tc_lower_groups};

typedef struct lower_walk {
    const tc_pass_options *options;
    const tc_target *target;
    tc_strbuf reasons; /* why a needed lowering did not apply, per node */
    tc_error *err;
} lower_walk;

typedef struct worklist {
    tconv_node **items;
    size_t count, cap;
} worklist;

static tconv_status push(worklist *w, tconv_node *node, tc_error *err) {
    if (!TC_VEC_RESERVE(w->items, w->cap, w->count + 1))
        return tc_error_nomem(err, "a lowering");
    w->items[w->count++] = node;
    return TCONV_OK;
}

static void note_reason(lower_walk *w, const tconv_node *node, const char *lowering,
                        const char *why) {
    char where[256];
    tc_strbuf_appendf(&w->reasons, " %s: %s: %s;", tc_node_describe(node, where, sizeof where),
                      lowering, why);
}

/* (a)/(b) from branch phase: the node becomes Convs (stride 1: one Conv; else the phases,
 * interleaved by DepthToSpace or, where the target lacks it, Reshape/Transpose/Reshape). Its
 * nodes join the emitter's list (the rewrite is recorded as one with the earlier lowerings). */
static tconv_status lower_phase(lower_walk *w, tc_emitter *e, tconv_node *node) {
    tc_conv_lowering how = {.allow_depth_to_space =
                                !tc_target_lacks_op(w->target, tc_kind_name(TC_KIND_DepthToSpace))};
    char why[512];
    if (!tc_conv_transpose_convs_possible(node->graph, node, &how, why, sizeof why)) {
        note_reason(w, node, "phase decomposition", why);
        return TCONV_OK;
    }
    tc_rewrite_report phase;
    tc_rewrite_report_init(&phase);
    tconv_graph *graph = node->graph;
    tconv_status st =
        tc_lower_conv_transpose_as_convs(graph->model, graph, node, &how, &phase, w->err);
    for (size_t r = 0; st == TCONV_OK && r < phase.count; r++) {
        for (size_t i = 0; st == TCONV_OK && i < phase.records[r].n_new; i++) {
            for (tconv_node *n = graph->first; n; n = n->next) {
                if (n->id == phase.records[r].new_ids[i]) {
                    st = tc_emitter_record(e, n);
                    break;
                }
            }
        }
    }
    tc_rewrite_report_free(&phase);
    return st;
}

/* One step on `node`: the first lowering that applies rewrites it (its added ConvTransposes go
 * on the worklist); *done when none applies. */
static tconv_status lower_step(lower_walk *w, tc_emitter *e, tconv_node *node, worklist *todo,
                               bool *done) {
    tc_conv_transpose_match m;
    tconv_status st = tc_conv_transpose_match_node(node, w->options->convention, &m, w->err);
    if (st != TCONV_OK)
        return st;
    *done = false;
    for (size_t i = 0; i < sizeof LOWERINGS / sizeof LOWERINGS[0]; i++) {
        char why[256];
        if (!LOWERINGS[i]->match(w->target, &m, why, sizeof why)) {
            if (why[0])
                note_reason(w, node, LOWERINGS[i]->name, why);
            continue;
        }
        tconv_node *added[4096];
        size_t n_added = 0;
        st = LOWERINGS[i]->rewrite(e, &m, added, sizeof added / sizeof added[0], &n_added);
        for (size_t k = 0; st == TCONV_OK && k < n_added; k++)
            st = push(todo, added[k], w->err);
        return st == TCONV_OK ? push(todo, node, w->err) : st;
    }
    *done = true;
    if (!tc_target_rank_ok(w->target, m.geometry.spatial_rank) ||
        !tc_target_needs_phase(w->target, &m))
        return TCONV_OK;
    return lower_phase(w, e, node);
}

/* Whether nothing reads the node's outputs (no node, no graph output). */
static bool is_dead(const tconv_node *node) {
    for (size_t i = 0; i < node->n_outputs; i++) {
        const tconv_value *v = node->outputs[i];
        if (v && (v->n_uses || tc_graph_is_output(node->graph, v)))
            return false;
    }
    return true;
}

static bool in_graph(const tconv_node *n) {
    return n->prev || n->next || n->graph->first == n;
}

/* Drops the emitted nodes a later lowering left unread (a weight edit whose result the phase
 * form edited again), and forgets those it removed, so that the recorded chain is exactly what
 * computes the output. */
static void drop_dead_emitted(tc_emitter *e) {
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < e->n_emitted; i++) {
            tconv_node *n = e->emitted[i];
            if (in_graph(n) && is_dead(n)) {
                tc_graph_remove_node(n->graph, n);
                changed = true;
            }
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < e->n_emitted; i++) {
        if (in_graph(e->emitted[i]))
            e->emitted[kept++] = e->emitted[i];
    }
    e->n_emitted = kept;
}

static tconv_status lower_node(lower_walk *w, tconv_node *node) {
    const char *name = node->name && *node->name ? node->name : node->outputs[0]->name;
    char *old_attributes = w->options->report ? tc_node_attributes_json(node) : NULL;
    char lowered[512];
    uint64_t lowered_id = node->id;
    tc_node_path(node, lowered, sizeof lowered);
    tc_emitter e;
    tc_emitter_init(&e, node, name, w->err);
    worklist todo = {0};
    tconv_status st = push(&todo, node, w->err);
    while (st == TCONV_OK && todo.count) {
        tconv_node *n = todo.items[--todo.count];
        bool done;
        st = lower_step(w, &e, n, &todo, &done);
    }
    if (st == TCONV_OK)
        drop_dead_emitted(&e);
    if (st == TCONV_OK && e.n_emitted && w->options->report) {
        st = tc_rewrite_report_extend(w->options->report, lowered, lowered_id, old_attributes,
                                      e.emitted, e.n_emitted, w->err);
        old_attributes = NULL;
    }
    free(old_attributes);
    free(todo.items);
    tc_emitter_free(&e);
    return st;
}

static tconv_status lower_graph(tconv_graph *graph, void *ctx) {
    lower_walk *w = ctx;
    tconv_status st = TCONV_OK;
    for (tconv_node *node = graph->first; node && st == TCONV_OK;) {
        tconv_node *next = node->next; /* new nodes go before `next`: not walked again */
        st = tc_node_for_each_subgraph(node, lower_graph, ctx);
        if (st == TCONV_OK && tc_is_conv_transpose(node))
            st = lower_node(w, node);
        node = next;
    }
    return st;
}

tconv_status tc_pass_lower_for_target(tconv_graph *graph, const tc_pass_options *options,
                                      tc_error *err) {
    if (!options->target)
        return TCONV_OK;
    lower_walk w = {options, options->target, {0}, err};
    tc_strbuf_init(&w.reasons);
    tconv_status st = lower_graph(graph, &w);
    tc_target_violations v = {0};
    if (st == TCONV_OK)
        st = tc_target_check_model(options->target, graph->model, &v, err);
    if (st == TCONV_OK && v.count) {
        /* the reasons first: an error message has a bound (the sources are in --list-targets) */
        char *text = tc_target_violations_brief(options->target, &v, " ");
        bool why = tc_strbuf_str(&w.reasons)[0] != '\0';
        st = tc_error_set(err, TCONV_ERR_UNSUPPORTED, "%s%s%s%s", why ? "not lowered:" : "",
                          tc_strbuf_str(&w.reasons), why ? " " : "", text ? text : "out of memory");
        free(text);
    }
    tc_target_violations_free(&v);
    tc_strbuf_free(&w.reasons);
    return st;
}
