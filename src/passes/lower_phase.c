/* ConvTranspose as Convs: the stride-1 form and the phase (sub-pixel) decomposition
 * (lower_phase.h). Match (plan_node, which also gives the reason for a refusal), then emit. */
#include "passes/lower_phase.h"
#include "ir/vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/conv_transpose_match.h"
#include "passes/lower_weights.h"

/* s^r above this is refused: s^r Conv channel blocks (or Convs) would be more graph than work. */
#define MAX_PHASES 1024

typedef struct phase_plan {
    int r; /* spatial axes */
    int64_t opset;
    int64_t group, c_in, c_out;
    int64_t k[TC_MAX_SPATIAL], s[TC_MAX_SPATIAL], d[TC_MAX_SPATIAL];
    int64_t x[TC_MAX_SPATIAL];        /* input size, -1 unknown */
    int64_t a[TC_MAX_SPATIAL];        /* A = floor((k-1)*d / s): phase outputs are x + A */
    int64_t q[TC_MAX_SPATIAL];        /* x + A, -1 unknown */
    int64_t crop_end[TC_MAX_SPATIAL]; /* s*(x+A) - F = s - 1 - ((k-1)*d mod s) */
    int64_t phases;                   /* P = product of the strides */
    bool can_one_conv;                /* every axis has s = 1 or d = 1 */
    double padded_taps, exact_taps;   /* prod(ceil(k/s)*s) and prod(k) */
    bool one_conv;                    /* one Conv with P * C_out channels (else one per phase) */
    bool channel_major;               /* the Convs' channel order: c*P + p (else p*C + c) */
    bool depth_to_space; /* interleave by DepthToSpace (else Reshape, Transpose, Reshape) */
    bool empty_phases;   /* per phase: some phase has no tap (k < s, or gcd(d, s) > 1) */
    tc_weight_source w_src, b_src;
    bool w_graph; /* W is not a constant: graph ops (Transpose, Reshape, Slice) select its taps */
    int64_t w_dims[TC_MAX_RANK];
    bool has_bias, bias_constant, bias_on_conv;
    tconv_dtype dtype; /* X's element type (for the zeros of empty phases), UNDEFINED unknown */
} phase_plan;

/* The taps of phase p along one axis: j0, j0 + s', ... (count of them), the first landing
 * floor(j0*d / s) input positions back. */
typedef struct axis_taps {
    int64_t j0, count, a0;
} axis_taps;

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static axis_taps taps_of_phase(int64_t k, int64_t s, int64_t d, int64_t p) {
    axis_taps t = {0, 0, 0};
    for (int64_t j = 0; j < k; j++) {
        if ((j * d) % s != p)
            continue;
        if (!t.count) {
            t.j0 = j;
            t.a0 = j * d / s;
        }
        t.count++;
    }
    return t;
}

/* Phase index ph (row-major over the axes) -> phase per axis. */
static void phase_digits(const phase_plan *p, int64_t ph, int64_t *digits) {
    for (int i = p->r - 1; i >= 0; i--) {
        digits[i] = ph % p->s[i];
        ph /= p->s[i];
    }
}

/* ---------------------------------------------------------------- matching */

static bool refuse(char *why, size_t why_size, const tconv_node *node, const char *fmt, ...)
    TC_PRINTF(4, 5);
static bool refuse(char *why, size_t why_size, const tconv_node *node, const char *fmt, ...) {
    if (!why || !why_size)
        return false;
    char where[256];
    int used = snprintf(why, why_size, "%s: ", tc_node_describe(node, where, sizeof where));
    if (used >= 0 && (size_t)used < why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why + used, why_size - (size_t)used, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool plan_axes(phase_plan *p, const tc_conv_transpose_geometry *g) {
    p->phases = 1;
    p->can_one_conv = true;
    p->padded_taps = p->exact_taps = 1;
    for (int i = 0; i < p->r; i++) {
        p->s[i] = g->strides[i];
        p->d[i] = g->dilations[i];
        p->x[i] = g->in[i];
        int64_t span = (p->k[i] - 1) * p->d[i];
        p->a[i] = span / p->s[i];
        p->q[i] = p->x[i] >= 0 ? p->x[i] + p->a[i] : -1;
        p->crop_end[i] = p->s[i] - 1 - span % p->s[i];
        if (p->phases > MAX_PHASES / p->s[i])
            return false;
        p->phases *= p->s[i];
        if (p->s[i] > 1 && p->d[i] > 1)
            p->can_one_conv = false;
        p->exact_taps *= (double)p->k[i];
        p->padded_taps *=
            p->s[i] > 1 ? (double)((p->k[i] + p->s[i] - 1) / p->s[i] * p->s[i]) : (double)p->k[i];
    }
    return true;
}

static bool has_empty_phase(const phase_plan *p) {
    for (int64_t ph = 0; ph < p->phases; ph++) {
        int64_t digits[TC_MAX_SPATIAL];
        phase_digits(p, ph, digits);
        for (int i = 0; i < p->r; i++) {
            if (!taps_of_phase(p->k[i], p->s[i], p->d[i], digits[i]).count)
                return true;
        }
    }
    return false;
}

/* One Conv or one per phase (lower_phase.h: tc_phase_form). AUTO falls back to the one Conv
 * where the per-phase form's zeros need what the model lacks (opset 9, X's type). */
static void choose_form(phase_plan *p, tc_phase_form form) {
    /* even when asked for, no one-Conv weight more than 16x the original (k = 1, s = 32 would
     * make a weight 1024x W's size, all of it but W zeros) */
    double extra = p->padded_taps / p->exact_taps;
    bool per_phase =
        p->phases > 1 && (!p->can_one_conv || form == TC_PHASE_FORM_PER_PHASE || extra > 16 ||
                          (form == TC_PHASE_FORM_AUTO && extra > TC_PHASE_ONE_CONV_MAX_EXTRA));
    p->one_conv = !per_phase;
    p->empty_phases = per_phase && has_empty_phase(p);
    bool zeros_unavailable = p->opset < 9 || p->dtype == TCONV_DTYPE_UNDEFINED;
    if (p->empty_phases && zeros_unavailable && p->can_one_conv && form == TC_PHASE_FORM_AUTO) {
        p->one_conv = true;
        p->empty_phases = false;
    }
}

static bool any_nonzero(const int64_t *v, int n) {
    for (int i = 0; i < n; i++) {
        if (v[i])
            return true;
    }
    return false;
}

/* The node's attributes and geometry with W's dims taken from its constant (a DequantizeLinear's
 * or Constant's output often has no declared shape) or its static type; X's from its type. */
static bool match_with_w_dims(tconv_node *node, int w_rank, const int64_t *w_dims,
                              tc_conv_transpose_match *m, char *why, size_t why_size) {
    memset(m, 0, sizeof *m);
    m->node = node;
    tc_error e;
    tc_error_clear(&e);
    if (node->n_inputs < 2 || !node->inputs[0] || node->n_outputs < 1 || !node->outputs[0])
        return refuse(why, why_size, node, "needs inputs X and W and output Y");
    if (w_rank < 3 || w_rank > TC_MAX_SPATIAL + 2)
        return refuse(why, why_size, node, "W has rank %d", w_rank);
    m->w_rank = w_rank;
    memcpy(m->w_dims, w_dims, (size_t)w_rank * sizeof(int64_t));
    const tconv_value *x = node->inputs[0];
    m->x_rank = w_rank;
    for (int i = 0; i < w_rank; i++)
        m->x_dims[i] = -1;
    if (x->type.kind == TCONV_TYPE_TENSOR && x->type.rank >= 0) {
        if (x->type.rank != w_rank)
            return refuse(why, why_size, node, "X has rank %d, W %d", x->type.rank, w_rank);
        for (int i = 0; i < w_rank; i++) {
            const tc_dim *d = &x->type.dims[i];
            m->x_dims[i] = d->kind == TCONV_DIM_STATIC ? d->value : -1;
        }
    }
    tconv_status st = tc_conv_transpose_read_attrs(node, w_rank - 2, &m->attrs, &e);
    if (st == TCONV_OK)
        st = tc_conv_transpose_resolve(&m->attrs, m->x_dims, m->w_dims, TCONV_CONVENTION_ONNX,
                                       &m->geometry, &e);
    if (st != TCONV_OK)
        return refuse(why, why_size, node, "%s", e.message);
    return true;
}

static bool plan_node(const tconv_node *cnode, const tc_conv_lowering *how, phase_plan *p,
                      char *why, size_t why_size) {
    tconv_node *node = (tconv_node *)cnode; /* matching reads only */
    memset(p, 0, sizeof *p);
    if (!tc_is_conv_transpose(node))
        return refuse(why, why_size, node, "not a ConvTranspose");
    char reason[512];
    int w_rank;
    p->w_graph = !tc_weight_source_find(node->inputs[1], &p->w_src, reason, sizeof reason);
    if (!p->w_graph) {
        w_rank = p->w_src.tensor->rank;
        if (w_rank > TC_MAX_RANK)
            return refuse(why, why_size, node, "W has rank %d", w_rank);
        memcpy(p->w_dims, p->w_src.tensor->dims, (size_t)w_rank * sizeof(int64_t));
    } else if (!node->inputs[1] || !tc_value_static_shape(node->inputs[1], p->w_dims, &w_rank)) {
        return refuse(why, why_size, node,
                      "W is not a constant (%s) and its shape is not static: the Conv forms need "
                      "W's kernel size and channels",
                      reason);
    } else if (tc_model_opset(node->graph->model, "") < 10) {
        return refuse(why, why_size, node,
                      "W is not a constant (%s): its taps are taken by Slice with steps, which "
                      "needs opset 10",
                      reason);
    }
    tc_conv_transpose_match m;
    if (!match_with_w_dims(node, w_rank, p->w_dims, &m, why, why_size))
        return false;
    const tc_conv_transpose_attrs *at = &m.attrs;
    const tc_conv_transpose_geometry *g = &m.geometry;
    p->r = at->spatial_rank;
    if (p->r < 1 || p->r > 3)
        return refuse(why, why_size, node, "%d spatial axes (the Conv forms take 1 to 3)", p->r);
    if (tc_auto_pad_is_same(at->auto_pad))
        return refuse(why, why_size, node,
                      "auto_pad SAME_*: the Conv forms take a VALID ConvTranspose (legalize its "
                      "pads into a Slice first)");
    if (at->has_output_shape)
        return refuse(why, why_size, node, "output_shape is set (legalize it first)");
    if (any_nonzero(at->output_padding, p->r))
        return refuse(why, why_size, node, "output_padding is not 0 (legalize it first)");
    if (!g->pads_known || any_nonzero(g->pad_begin, p->r) || any_nonzero(g->pad_end, p->r))
        return refuse(why, why_size, node, "pads are not all 0 (legalize them first)");
    const int64_t *w_dims = p->w_dims;
    if (w_rank != p->r + 2)
        return refuse(why, why_size, node, "W has rank %d, X %d spatial axes", w_rank, p->r);
    p->group = g->group;
    p->c_in = w_dims[0];
    if (p->group < 1 || p->c_in % p->group)
        return refuse(why, why_size, node, "group %lld does not divide W's %lld input channels",
                      (long long)p->group, (long long)p->c_in);
    p->c_out = w_dims[1] * p->group;
    for (int i = 0; i < p->r; i++) {
        p->k[i] = w_dims[2 + i];
        if (p->k[i] < 1)
            return refuse(why, why_size, node, "W's kernel axis %d is empty", i);
    }
    if (!plan_axes(p, g))
        return refuse(why, why_size, node, "strides make more than %d phases", MAX_PHASES);
    const tconv_value *x = node->inputs[0];
    p->dtype = x->type.kind == TCONV_TYPE_TENSOR ? x->type.dtype : TCONV_DTYPE_UNDEFINED;
    p->opset = tc_model_opset(node->graph->model, "");
    /* W computed at run time: its taps are sliced per phase, the one-Conv form would need them
     * zero-padded and interleaved by more graph ops */
    choose_form(p, p->w_graph ? TC_PHASE_FORM_PER_PHASE : how ? how->form : TC_PHASE_FORM_AUTO);
    p->has_bias = node->n_inputs > 2 && node->inputs[2];
    p->bias_constant =
        p->has_bias && tc_weight_source_find(node->inputs[2], &p->b_src, reason, sizeof reason);
    p->bias_on_conv = p->bias_constant && !p->empty_phases;

    /* the interleave */
    bool equal_strides = p->r == 2 && p->s[0] == p->s[1];
    bool d2s = how && how->allow_depth_to_space && equal_strides && p->phases > 1;
    if (p->one_conv) {
        p->channel_major = !(d2s && p->opset < 11 && p->group == 1);
        p->depth_to_space = d2s && (p->opset >= 11 || p->group == 1);
    } else {
        p->channel_major = false; /* Concat of the phases on the channel axis */
        p->depth_to_space = d2s;
    }
    if (p->phases > 1 && !p->depth_to_space && p->opset < 5)
        return refuse(why, why_size, node,
                      "opset %lld: the interleave needs Reshape with a shape input (opset 5)",
                      (long long)p->opset);
    if (p->empty_phases && p->opset < 9)
        return refuse(why, why_size, node,
                      "opset %lld: phases without taps (dilation and stride share a factor) are "
                      "zeros from ConstantOfShape (opset 9)",
                      (long long)p->opset);
    if (p->empty_phases && p->dtype == TCONV_DTYPE_UNDEFINED)
        return refuse(why, why_size, node,
                      "X's element type is unknown: the zeros of the phases without taps need it");
    return true;
}

bool tc_conv_transpose_convs_possible(const tconv_graph *graph, const tconv_node *node,
                                      const tc_conv_lowering *how, char *why, size_t why_size) {
    if (!node || node->graph != graph) {
        snprintf(why, why_size, "the node is not in the graph");
        return false;
    }
    phase_plan p;
    return plan_node(node, how, &p, why, why_size);
}

/* ---------------------------------------------------------------- emitting */

typedef struct emitter {
    tconv_model *model;
    tconv_graph *graph;
    const char *base; /* the original node's name (or its output's): prefix of new names */
    tconv_node *last; /* new nodes go after this one */
    int64_t opset;
    tconv_node **nodes; /* every node emitted, for the report (malloc'd) */
    size_t n_nodes, cap_nodes;
    tc_error *err;
} emitter;

static tconv_status record(emitter *e, tconv_node *node) {
    if (!TC_VEC_RESERVE(e->nodes, e->cap_nodes, e->n_nodes + 1))
        return tc_error_nomem(e->err, "the list of new nodes");
    e->nodes[e->n_nodes++] = node;
    return TCONV_OK;
}

static const char *new_name(emitter *e, const char *suffix) {
    return tc_arena_sprintf(e->model->arena, "%s/%s", e->base, suffix);
}

static tconv_status new_value(emitter *e, const char *suffix, tconv_value **out) {
    const char *name = new_name(e, suffix);
    if (!name)
        return tc_error_nomem(e->err, "a value name");
    return tc_graph_add_unique_value(e->graph, name, out, e->err);
}

static tconv_status new_node(emitter *e, const char *op_type, const char *suffix,
                             tconv_node **out) {
    const char *base = new_name(e, suffix);
    const char *name = base ? tc_model_unique_node_name(e->model, base) : NULL;
    if (!name)
        return tc_error_nomem(e->err, "a node name");
    tconv_status st = tc_node_create(e->graph, op_type, NULL, name, out, e->err);
    if (st != TCONV_OK)
        return st;
    tc_graph_insert_after(e->graph, e->last, *out);
    e->last = *out;
    return record(e, *out);
}

static tconv_status new_i64(emitter *e, const char *suffix, const int64_t *values, size_t n,
                            tconv_value **out) {
    tconv_status st = new_value(e, suffix, out);
    int64_t dims[1] = {(int64_t)n};
    tconv_tensor *t;
    if (st == TCONV_OK)
        st = tc_tensor_create(e->model, (*out)->name, TCONV_DTYPE_INT64, 1, dims, values,
                              n * sizeof(int64_t), &t, e->err);
    if (st == TCONV_OK)
        st = tc_graph_add_initializer(e->graph, t, e->err);
    if (st == TCONV_OK && e->model->has_ir_version && e->model->ir_version < 4)
        st = tc_graph_add_input(e->graph, *out, NULL, e->err);
    return st;
}

/* out = op_type(inputs...), a new node and value named after suffix. */
static tconv_status apply(emitter *e, const char *op_type, const char *suffix,
                          tconv_value *const *inputs, size_t n, tconv_node **node_out,
                          tconv_value **out) {
    tconv_node *node;
    tconv_status st = new_node(e, op_type, suffix, &node);
    for (size_t i = 0; i < n && st == TCONV_OK; i++)
        st = tc_node_add_input(node, inputs[i], e->err);
    if (st == TCONV_OK)
        st = new_value(e, suffix, out);
    if (st == TCONV_OK)
        st = tc_node_add_output(node, *out, e->err);
    if (node_out)
        *node_out = node;
    return st;
}

/* A weight emitted in front of `user` (its DequantizeLinear recorded as a new node). */
static tconv_status emit_weight(emitter *e, const tc_weight *w, tconv_node *user,
                                const char *suffix, tconv_value **out) {
    const char *base = new_name(e, suffix);
    if (!base)
        return tc_error_nomem(e->err, "a weight name");
    tconv_node *dq;
    tconv_status st = tc_weight_emit(w, e->graph, user, base, out, &dq, e->err);
    if (st == TCONV_OK && dq)
        st = record(e, dq);
    return st;
}

/* ---------------------------------------------------------------- weights */

static tconv_status clone_weight(const tc_weight *w, tc_weight *out, tc_error *err) {
    return tc_weight_concat(w, 1, 0, out, err);
}

/* The Conv-form W of the one-Conv form: per phase the taps of that phase, flipped and zero-padded
 * to ceil(k/s) (k on axes of stride 1), the phases joined in the plan's channel order. */
static tconv_status one_conv_weight(const phase_plan *p, const tc_weight *conv_w, tc_weight *out,
                                    int64_t *kernel, tc_error *err) {
    for (int i = 0; i < p->r; i++)
        kernel[i] = p->s[i] > 1 ? (p->k[i] + p->s[i] - 1) / p->s[i] : p->k[i];
    if (p->phases == 1)
        return clone_weight(conv_w, out, err);
    tc_weight *parts = calloc((size_t)p->phases, sizeof *parts);
    if (!parts)
        return tc_error_nomem(err, "the phase weights");
    tconv_status st = TCONV_OK;
    int64_t made = 0;
    for (; made < p->phases && st == TCONV_OK; made++) {
        int64_t digits[TC_MAX_SPATIAL];
        phase_digits(p, made, digits);
        st = clone_weight(conv_w, &parts[made], err);
        /* flipped position t holds tap k-1-t: tap digit + (kc-1-t')*s sits at
         * k-1-digit-(kc-1)*s + t'*s */
        for (int i = 0; i < p->r && st == TCONV_OK; i++) {
            if (p->s[i] > 1)
                st = tc_weight_take(&parts[made], 2 + i,
                                    p->k[i] - 1 - digits[i] - (kernel[i] - 1) * p->s[i], p->s[i],
                                    kernel[i], err);
        }
        if (st == TCONV_OK && p->channel_major)
            st = tc_weight_insert_axis(&parts[made], 1, err);
    }
    if (st == TCONV_OK)
        st = tc_weight_concat(parts, (size_t)p->phases, p->channel_major ? 1 : 0, out, err);
    if (st == TCONV_OK && p->channel_major) {
        st = tc_weight_merge_axes(out, 0, 2, err);
        if (st != TCONV_OK)
            tc_weight_free(out);
    }
    for (int64_t i = 0; i < made; i++)
        tc_weight_free(&parts[i]);
    free(parts);
    return st;
}

/* B repeated for the P phase channels of each output channel, in the plan's order. */
static tconv_status phase_bias(const phase_plan *p, tc_weight *b, tc_error *err) {
    if (p->phases == 1 || !p->one_conv)
        return TCONV_OK;
    int axis = p->channel_major ? 1 : 0;
    tconv_status st = tc_weight_insert_axis(b, axis, err);
    if (st == TCONV_OK)
        st = tc_weight_repeat(b, axis, p->phases, err);
    if (st == TCONV_OK)
        st = tc_weight_merge_axes(b, 0, 2, err);
    return st;
}

/* ---------------------------------------------------------------- the Convs */

static tconv_status set_conv_attrs(emitter *e, tconv_node *conv, const phase_plan *p,
                                   const int64_t *kernel, const int64_t *dilations,
                                   const int64_t *pad_begin, const int64_t *pad_end) {
    int64_t pads[2 * TC_MAX_SPATIAL], ones[TC_MAX_SPATIAL];
    for (int i = 0; i < p->r; i++) {
        pads[i] = pad_begin[i];
        pads[p->r + i] = pad_end[i];
        ones[i] = 1;
    }
    size_t r = (size_t)p->r;
    tconv_status st = tc_node_set_attr_ints(conv, "kernel_shape", kernel, r, e->err);
    if (st == TCONV_OK)
        st = tc_node_set_attr_ints(conv, "pads", pads, 2 * r, e->err);
    if (st == TCONV_OK)
        st = tc_node_set_attr_ints(conv, "strides", ones, r, e->err);
    if (st == TCONV_OK)
        st = tc_node_set_attr_ints(conv, "dilations", dilations, r, e->err);
    if (st == TCONV_OK)
        st = tc_node_set_attr_int(conv, "group", p->group, e->err);
    return st;
}

/* Conv(x, weight[, bias]) with the given window; its output in *out. The bias is emitted once
 * (in front of the first Conv that reads it) and its value kept in *bias_value. */
static tconv_status emit_conv(emitter *e, const phase_plan *p, tconv_value *x, const tc_weight *w,
                              tconv_value *w_value, const tc_weight *bias, tconv_value **bias_value,
                              const int64_t *kernel, const int64_t *dilations,
                              const int64_t *pad_begin, const int64_t *pad_end, const char *suffix,
                              tconv_value **out) {
    tconv_node *conv;
    tconv_status st = apply(e, "Conv", suffix, &x, 1, &conv, out);
    tconv_value *wv = w_value;
    if (st == TCONV_OK && w)
        st = emit_weight(e, w, conv, "W", &wv);
    if (st == TCONV_OK)
        st = tc_node_add_input(conv, wv, e->err);
    if (st == TCONV_OK && bias && !*bias_value)
        st = emit_weight(e, bias, conv, "B", bias_value);
    if (st == TCONV_OK && bias)
        st = tc_node_add_input(conv, *bias_value, e->err);
    if (st == TCONV_OK)
        st = set_conv_attrs(e, conv, p, kernel, dilations, pad_begin, pad_end);
    return st;
}

static tconv_status emit_one_conv(emitter *e, const phase_plan *p, tconv_value *x,
                                  const tc_weight *conv_w, const tc_weight *bias,
                                  tconv_value **out) {
    tc_weight w;
    int64_t kernel[TC_MAX_SPATIAL], dilations[TC_MAX_SPATIAL];
    tconv_status st = one_conv_weight(p, conv_w, &w, kernel, e->err);
    if (st != TCONV_OK)
        return st;
    for (int i = 0; i < p->r; i++)
        dilations[i] = p->s[i] > 1 ? 1 : p->d[i];
    tconv_value *bias_value = NULL;
    st = emit_conv(e, p, x, &w, NULL, bias, &bias_value, kernel, dilations, p->a, p->a,
                   p->phases > 1 ? "phase_conv" : "conv", out);
    tc_weight_free(&w);
    return st;
}

/* Zeros shaped like `like`: ConstantOfShape(Shape(like)) of X's element type. */
static tconv_status emit_zeros(emitter *e, const phase_plan *p, tconv_value *like,
                               tconv_value **out) {
    tconv_value *shape;
    tconv_node *fill;
    tconv_status st = apply(e, "Shape", "phase_shape", &like, 1, NULL, &shape);
    if (st == TCONV_OK)
        st = apply(e, "ConstantOfShape", "empty_phase", &shape, 1, &fill, out);
    int64_t one[1] = {1};
    tconv_tensor *zero;
    if (st == TCONV_OK)
        st = tc_tensor_create(e->model, "value", p->dtype, 1, one, NULL, 0, &zero, e->err);
    if (st == TCONV_OK)
        st = tc_node_set_attr_tensor(fill, "value", zero, e->err);
    return st;
}

/* W computed at run time in the Conv layout (C_out, C_in/g, k...): Transpose, or for groups
 * Reshape (g, C_in/g, C_out/g, k...), Transpose, Reshape. */
static tconv_status emit_graph_conv_weight(emitter *e, const phase_plan *p, tconv_value *w,
                                           tconv_value **out) {
    int rank = p->r + 2;
    int64_t perm[TC_MAX_RANK + 1], split[TC_MAX_RANK + 1], merged[TC_MAX_RANK];
    tconv_node *transpose;
    tconv_status st = TCONV_OK;
    int64_t g = p->group, cin_g = p->c_in / g, cout_g = p->c_out / g;
    if (g == 1) {
        perm[0] = 1;
        perm[1] = 0;
        for (int i = 2; i < rank; i++)
            perm[i] = i;
        st = apply(e, "Transpose", "W_conv", &w, 1, &transpose, out);
        if (st == TCONV_OK)
            st = tc_node_set_attr_ints(transpose, "perm", perm, (size_t)rank, e->err);
        return st;
    }
    split[0] = g;
    split[1] = cin_g;
    split[2] = cout_g;
    merged[0] = g * cout_g;
    merged[1] = cin_g;
    perm[0] = 0;
    perm[1] = 2;
    perm[2] = 1;
    for (int i = 0; i < p->r; i++) {
        split[3 + i] = p->k[i];
        merged[2 + i] = p->k[i];
        perm[3 + i] = 3 + i;
    }
    tconv_value *split_shape, *merged_shape, *grouped, *moved;
    if ((st = new_i64(e, "W_group_shape", split, (size_t)rank + 1, &split_shape)) ||
        (st = new_i64(e, "W_conv_shape", merged, (size_t)rank, &merged_shape)))
        return st;
    tconv_value *in1[2] = {w, split_shape};
    if ((st = apply(e, "Reshape", "W_grouped", in1, 2, NULL, &grouped)) ||
        (st = apply(e, "Transpose", "W_swapped", &grouped, 1, &transpose, &moved)) ||
        (st = tc_node_set_attr_ints(transpose, "perm", perm, (size_t)rank + 1, e->err)))
        return st;
    tconv_value *in2[2] = {moved, merged_shape};
    return apply(e, "Reshape", "W_conv", in2, 2, NULL, out);
}

/* The taps of one phase of a run-time W (Conv layout): Slice with negative steps (opset 10). */
static tconv_status emit_weight_slice(emitter *e, const phase_plan *p, tconv_value *w,
                                      const int64_t *starts, const int64_t *ends,
                                      const int64_t *steps, tconv_value **out) {
    int64_t axes[TC_MAX_SPATIAL];
    for (int i = 0; i < p->r; i++)
        axes[i] = 2 + i;
    tconv_value *in[5] = {w, NULL, NULL, NULL, NULL};
    const int64_t *lists[4] = {starts, ends, axes, steps};
    static const char *const names[4] = {"W_tap_starts", "W_tap_ends", "W_tap_axes", "W_tap_steps"};
    tconv_status st = TCONV_OK;
    for (int i = 0; i < 4 && st == TCONV_OK; i++)
        st = new_i64(e, names[i], lists[i], (size_t)p->r, &in[1 + i]);
    if (st == TCONV_OK)
        st = apply(e, "Slice", "W_taps", in, 5, NULL, out);
    return st;
}

/* One Conv per phase with taps (dilation d / gcd(d, s)), zeros for the others, joined on the
 * channel axis phase by phase (channel p*C + c). */
static tconv_status emit_phase_convs(emitter *e, const phase_plan *p, tconv_value *x,
                                     const tc_weight *conv_w, tconv_value *w_graph,
                                     const tc_weight *bias, tconv_value **out) {
    tconv_value **parts = calloc((size_t)p->phases, sizeof *parts);
    if (!parts)
        return tc_error_nomem(e->err, "the phase outputs");
    tconv_status st = TCONV_OK;
    tconv_value *first = NULL, *bias_value = NULL;
    for (int64_t ph = 0; ph < p->phases && st == TCONV_OK; ph++) {
        int64_t digits[TC_MAX_SPATIAL], kernel[TC_MAX_SPATIAL], dil[TC_MAX_SPATIAL];
        int64_t pb[TC_MAX_SPATIAL], pe[TC_MAX_SPATIAL];
        axis_taps taps[TC_MAX_SPATIAL];
        phase_digits(p, ph, digits);
        bool empty = false;
        for (int i = 0; i < p->r; i++) {
            taps[i] = taps_of_phase(p->k[i], p->s[i], p->d[i], digits[i]);
            empty |= taps[i].count == 0;
        }
        if (empty)
            continue;
        tc_weight w;
        memset(&w, 0, sizeof w);
        int64_t starts[TC_MAX_SPATIAL], ends[TC_MAX_SPATIAL], steps[TC_MAX_SPATIAL];
        if (conv_w)
            st = clone_weight(conv_w, &w, e->err);
        for (int i = 0; i < p->r && st == TCONV_OK; i++) {
            int64_t g = gcd64(p->d[i], p->s[i]), sp = p->s[i] / g;
            kernel[i] = taps[i].count;
            dil[i] = p->d[i] / g;
            pb[i] = taps[i].a0 + (taps[i].count - 1) * dil[i];
            pe[i] = p->a[i] - taps[i].a0;
            /* u[n'] = tap j0 + (count-1-n')*s', at flipped position k-1-j0-(count-1)*s' + n'*s' */
            if (conv_w)
                st = tc_weight_take(&w, 2 + i, p->k[i] - 1 - taps[i].j0 - (taps[i].count - 1) * sp,
                                    sp, taps[i].count, e->err);
            starts[i] = taps[i].j0 + (taps[i].count - 1) * sp;
            ends[i] = taps[i].j0 > 0 ? taps[i].j0 - 1 : INT64_MIN; /* past tap j0, backwards */
            steps[i] = -sp;
        }
        tconv_value *phase_w = NULL;
        if (st == TCONV_OK && !conv_w)
            st = emit_weight_slice(e, p, w_graph, starts, ends, steps, &phase_w);
        char suffix[64];
        snprintf(suffix, sizeof suffix, "phase_conv_%lld", (long long)ph);
        if (st == TCONV_OK)
            st = emit_conv(e, p, x, conv_w ? &w : NULL, conv_w ? NULL : phase_w,
                           p->bias_on_conv ? bias : NULL, &bias_value, kernel, dil, pb, pe, suffix,
                           &parts[ph]);
        tc_weight_free(&w);
        if (st == TCONV_OK && !first)
            first = parts[ph];
    }
    tconv_value *zeros = NULL;
    if (st == TCONV_OK && p->empty_phases)
        st = emit_zeros(e, p, first, &zeros);
    for (int64_t ph = 0; ph < p->phases && st == TCONV_OK; ph++) {
        if (!parts[ph])
            parts[ph] = zeros;
    }
    tconv_node *concat;
    if (st == TCONV_OK && p->phases == 1) { /* stride 1 with a run-time W: nothing to join */
        *out = parts[0];
        free(parts);
        return st;
    }
    if (st == TCONV_OK)
        st = apply(e, "Concat", "phases", parts, (size_t)p->phases, &concat, out);
    if (st == TCONV_OK)
        st = tc_node_set_attr_int(concat, "axis", 1, e->err);
    free(parts);
    return st;
}

/* ---------------------------------------------------------------- interleave, crop, bias */

/* A Reshape to `dims` (0 copies N; at most one -1), or to a shape computed from `z`'s own when
 * more spatial sizes are unknown: Concat(head, Gather(Shape(z), spatial axes) [* scale]). */
static tconv_status emit_reshape(emitter *e, const phase_plan *p, tconv_value *in, tconv_value *z,
                                 const int64_t *head, size_t n_head, const int64_t *spatial,
                                 bool scaled, const char *suffix, tconv_value **out) {
    int unknown = 0;
    for (int i = 0; i < p->r; i++)
        unknown += p->q[i] < 0;
    tconv_value *shape;
    tconv_status st;
    if (unknown <= 1) {
        int64_t dims[2 + 2 * TC_MAX_SPATIAL];
        memcpy(dims, head, n_head * sizeof(int64_t));
        for (int i = 0; i < p->r; i++)
            dims[n_head + (size_t)i] = p->q[i] < 0 ? -1 : spatial[i];
        st = new_i64(e, "interleave_shape", dims, n_head + (size_t)p->r, &shape);
    } else {
        int64_t axes[TC_MAX_SPATIAL], strides[TC_MAX_SPATIAL];
        for (int i = 0; i < p->r; i++) {
            axes[i] = 2 + i;
            strides[i] = p->s[i];
        }
        tconv_value *full, *axes_v, *sizes, *head_v, *s_v;
        tconv_node *concat;
        st = apply(e, "Shape", "phase_shape", &z, 1, NULL, &full);
        if (st == TCONV_OK)
            st = new_i64(e, "spatial_axes", axes, (size_t)p->r, &axes_v);
        tconv_value *gather_in[2] = {full, axes_v};
        if (st == TCONV_OK)
            st = apply(e, "Gather", "phase_sizes", gather_in, 2, NULL, &sizes);
        if (st == TCONV_OK && scaled) {
            tconv_value *mul_in[2] = {sizes, NULL};
            st = new_i64(e, "strides", strides, (size_t)p->r, &s_v);
            mul_in[1] = s_v;
            if (st == TCONV_OK)
                st = apply(e, "Mul", "interleaved_sizes", mul_in, 2, NULL, &sizes);
        }
        if (st == TCONV_OK)
            st = new_i64(e, "interleave_head", head, n_head, &head_v);
        tconv_value *concat_in[2] = {head_v, sizes};
        if (st == TCONV_OK)
            st = apply(e, "Concat", "interleave_shape", concat_in, 2, &concat, &shape);
        if (st == TCONV_OK)
            st = tc_node_set_attr_int(concat, "axis", 0, e->err);
    }
    tconv_value *reshape_in[2] = {in, shape};
    if (st == TCONV_OK)
        st = apply(e, "Reshape", suffix, reshape_in, 2, NULL, out);
    return st;
}

/* Z [N, C*P, q...] (channel c*P + p or p*C + c) -> [N, C, q1*s1, ...] by Reshape, Transpose,
 * Reshape: the interleave without DepthToSpace, any rank. */
static tconv_status emit_reshape_interleave(emitter *e, const phase_plan *p, tconv_value *z,
                                            tconv_value **out) {
    int r = p->r;
    int64_t head[2 + TC_MAX_SPATIAL], perm[2 + 2 * TC_MAX_SPATIAL], spatial[3];
    size_t n_head = 0;
    head[n_head++] = 0;
    if (p->channel_major)
        head[n_head++] = p->c_out;
    for (int i = 0; i < r; i++)
        head[n_head++] = p->s[i];
    if (!p->channel_major)
        head[n_head++] = p->c_out;
    /* split: cm [N, C, s..., q...] / pm [N, s..., C, q...]; to [N, C, q1, s1, q2, s2, ...] */
    perm[0] = 0;
    perm[1] = p->channel_major ? 1 : 1 + r;
    for (int i = 0; i < r; i++) {
        perm[2 + 2 * i] = 2 + r + i;
        perm[3 + 2 * i] = p->channel_major ? 2 + i : 1 + i;
    }
    tconv_value *split, *moved;
    tconv_node *transpose;
    tconv_status st = emit_reshape(e, p, z, z, head, n_head, p->q, false, "phase_split", &split);
    if (st == TCONV_OK)
        st = apply(e, "Transpose", "interleave", &split, 1, &transpose, &moved);
    if (st == TCONV_OK)
        st = tc_node_set_attr_ints(transpose, "perm", perm, (size_t)(2 + 2 * r), e->err);
    int64_t merged_head[2] = {0, p->c_out};
    for (int i = 0; i < r; i++)
        spatial[i] = p->q[i] * p->s[i];
    if (st == TCONV_OK)
        st = emit_reshape(e, p, moved, z, merged_head, 2, spatial, true, "interleaved", out);
    return st;
}

static tconv_status emit_interleave(emitter *e, const phase_plan *p, tconv_value *z,
                                    tconv_value **out) {
    if (!p->depth_to_space)
        return emit_reshape_interleave(e, p, z, out);
    tconv_node *d2s;
    tconv_status st = apply(e, "DepthToSpace", "interleave", &z, 1, &d2s, out);
    if (st == TCONV_OK)
        st = tc_node_set_attr_int(d2s, "blocksize", p->s[0], e->err);
    if (st == TCONV_OK && p->opset >= 11)
        st = tc_node_set_attr_string(d2s, "mode", p->channel_major ? "CRD" : "DCR", e->err);
    return st;
}

/* Slice off the last crop_end positions of each axis (negative ends: any input size). */
static tconv_status emit_crop(emitter *e, const phase_plan *p, tconv_value *in, tconv_value **out) {
    int64_t starts[TC_MAX_SPATIAL], ends[TC_MAX_SPATIAL], axes[TC_MAX_SPATIAL];
    size_t n = 0;
    for (int i = 0; i < p->r; i++) {
        if (!p->crop_end[i])
            continue;
        starts[n] = 0;
        ends[n] = -p->crop_end[i];
        axes[n++] = 2 + i;
    }
    if (!n) {
        *out = in;
        return TCONV_OK;
    }
    tconv_node *slice;
    tconv_status st = apply(e, "Slice", "crop", &in, 1, &slice, out);
    if (st == TCONV_OK && p->opset < 10) {
        if ((st = tc_node_set_attr_ints(slice, "starts", starts, n, e->err)) == TCONV_OK &&
            (st = tc_node_set_attr_ints(slice, "ends", ends, n, e->err)) == TCONV_OK)
            st = tc_node_set_attr_ints(slice, "axes", axes, n, e->err);
        return st;
    }
    tconv_value *v[3];
    const int64_t *lists[3] = {starts, ends, axes};
    static const char *const names[3] = {"crop_starts", "crop_ends", "crop_axes"};
    for (int i = 0; i < 3 && st == TCONV_OK; i++) {
        st = new_i64(e, names[i], lists[i], n, &v[i]);
        if (st == TCONV_OK)
            st = tc_node_add_input(slice, v[i], e->err);
    }
    return st;
}

/* Y + B over the channel axis: B as [C, 1, ...] (a constant reshaped, or Unsqueeze), or Add-6's
 * legacy broadcast below opset 7. */
static tconv_status emit_bias_add(emitter *e, const phase_plan *p, tconv_value *in,
                                  tconv_value *bias, tconv_value **out) {
    tconv_value *b = bias;
    tconv_status st = TCONV_OK;
    bool legacy = p->opset < 7;
    if (!legacy && !p->bias_constant) {
        int64_t axes[TC_MAX_SPATIAL];
        for (int i = 0; i < p->r; i++)
            axes[i] = 1 + i;
        tconv_node *unsqueeze;
        st = apply(e, "Unsqueeze", "bias_unsqueeze", &bias, 1, &unsqueeze, &b);
        tconv_value *axes_v;
        if (st == TCONV_OK && p->opset < 13)
            st = tc_node_set_attr_ints(unsqueeze, "axes", axes, (size_t)p->r, e->err);
        else if (st == TCONV_OK &&
                 (st = new_i64(e, "bias_axes", axes, (size_t)p->r, &axes_v)) == TCONV_OK)
            st = tc_node_add_input(unsqueeze, axes_v, e->err);
    }
    tconv_node *add;
    if (st == TCONV_OK)
        st = apply(e, "Add", "bias", &in, 1, &add, out);
    if (st == TCONV_OK && !legacy && p->bias_constant) {
        tc_weight w;
        st = tc_weight_load(&p->b_src, &w, e->err);
        for (int i = 0; i < p->r && st == TCONV_OK; i++)
            st = tc_weight_insert_axis(&w, w.rank, e->err);
        if (st == TCONV_OK)
            st = emit_weight(e, &w, add, "B_broadcast", &b);
        tc_weight_free(&w);
    }
    if (st == TCONV_OK)
        st = tc_node_add_input(add, b, e->err);
    if (st == TCONV_OK && legacy) {
        if ((st = tc_node_set_attr_int(add, "broadcast", 1, e->err)) == TCONV_OK)
            st = tc_node_set_attr_int(add, "axis", 1, e->err);
    }
    return st;
}

/* ---------------------------------------------------------------- the rewrite */

static tconv_status emit_chain(emitter *e, const phase_plan *p, tconv_node *node,
                               tconv_value **out) {
    tconv_value *x = node->inputs[0];
    tconv_value *bias_value = p->has_bias ? node->inputs[2] : NULL;
    tc_weight w, b;
    memset(&w, 0, sizeof w);
    memset(&b, 0, sizeof b);
    tconv_value *w_graph = NULL;
    tconv_status st = p->w_graph ? emit_graph_conv_weight(e, p, node->inputs[1], &w_graph)
                                 : tc_weight_load(&p->w_src, &w, e->err);
    if (st == TCONV_OK && !p->w_graph)
        st = tc_weight_conv_transpose_to_conv(&w, p->group, e->err);
    if (st == TCONV_OK && p->bias_on_conv) {
        st = tc_weight_load(&p->b_src, &b, e->err);
        if (st == TCONV_OK)
            st = phase_bias(p, &b, e->err);
    }
    tconv_value *z = NULL;
    if (st == TCONV_OK && p->one_conv && !p->w_graph)
        st = emit_one_conv(e, p, x, &w, p->bias_on_conv ? &b : NULL, &z);
    else if (st == TCONV_OK)
        st = emit_phase_convs(e, p, x, p->w_graph ? NULL : &w, w_graph, p->bias_on_conv ? &b : NULL,
                              &z);
    tc_weight_free(&w);
    tc_weight_free(&b);
    if (st == TCONV_OK && p->phases > 1)
        st = emit_interleave(e, p, z, &z);
    if (st == TCONV_OK && p->phases > 1)
        st = emit_crop(e, p, z, &z);
    if (st == TCONV_OK && p->has_bias && !p->bias_on_conv)
        st = emit_bias_add(e, p, z, bias_value, &z);
    *out = z;
    return st;
}

tconv_status tc_lower_conv_transpose_as_convs(tconv_model *model, tconv_graph *graph,
                                              tconv_node *node, const tc_conv_lowering *how,
                                              tc_rewrite_report *report, tc_error *err) {
    phase_plan p;
    char why[TC_ERROR_MESSAGE_MAX];
    if (!node || node->graph != graph || graph->model != model)
        return tc_error_set(err, TCONV_ERR_INVALID, "the node is not in the graph");
    if (!plan_node(node, how, &p, why, sizeof why))
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "%s", why);
    tconv_value *y = node->outputs[0];
    const char *old_name = node->name && *node->name ? node->name : y->name;
    emitter e = {.model = model,
                 .graph = graph,
                 .base = old_name,
                 .last = node,
                 .opset = p.opset,
                 .err = err};
    char *old_attributes = report ? tc_node_attributes_json(node) : NULL;
    char old_path[512];
    uint64_t old_id = node->id;
    tc_node_path(node, old_path, sizeof old_path);
    tconv_value *last = NULL;
    tconv_status st = emit_chain(&e, &p, node, &last);
    if (st == TCONV_OK) {
        tconv_node *producer = last->producer;
        size_t index = last->producer_index;
        tc_graph_remove_node(graph, node);
        st = tc_node_set_output(producer, index, y, err);
    }
    if (st == TCONV_OK && report) {
        st = tc_rewrite_report_add(report, old_path, old_id, old_attributes, e.nodes, e.n_nodes,
                                   err);
        old_attributes = NULL;
    }
    free(old_attributes);
    free(e.nodes);
    return st;
}
