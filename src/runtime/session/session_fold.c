/* BatchNormalization folding at planning time. In inference, BatchNormalization is an affine map
 * per channel: y = x * s + (beta - mean * s) with s = scale / sqrt(var + eps). When its X is the
 * output of a Conv or ConvTranspose with constant W (and B), read by nothing else, that map
 * folds into the convolution: W' = W * s per output channel, B' = (B - mean) * s + beta. The
 * plan keeps W' and B' as float32 constants of its own (counted as constant bytes; the kernel's
 * packed-weight cache sees them as constants), the convolution step reads them instead of W and
 * B, and the BatchNormalization step only moves the result along. The graph is not changed: a
 * proof (session.unfused) runs it as written.
 *
 * Output channels: Conv's W is [C_out, C_in/group, k...], row o is output channel o;
 * ConvTranspose's W is [C_in, C_out/group, k...], row i of group g = i / (C_in/group) and
 * column j feed output channel g * C_out/group + j.
 *
 * With a crop fused into a ConvTranspose (session_fuse.c: Slice, Pad of zeros, Add of a bias),
 * the chain's result is what the BatchNormalization reads: positions the Pad adds hold the fused
 * bias (zero without one), so BatchNormalization gives them (bias - mean) * s + beta, which is
 * exactly the folded bias there too; it goes into the crop's bias.
 *
 * float16/bfloat16 models fold too: W' and B' are float32, the kernel computes in float and its
 * result is rounded to the 16-bit type once, where the graph as written rounds after the
 * convolution and again after the BatchNormalization. The folded result is the more accurate
 * one; it differs from the op-by-op one by about one 16-bit rounding (onnxruntime also fuses
 * Conv and BatchNormalization), within the float16 golden tolerance (bench_golden_tolerance). */
#include "runtime/kernels/kernels.h"
#include "runtime/session/session_internal.h"

#include <math.h>
#include <string.h>

/* The folded[] entry past the inputs: the fused crop's new bias. */
#define FOLD_CROP_BIAS TC_FOLD_INPUTS

static bool float_like(tconv_dtype d) {
    return d == TCONV_DTYPE_FLOAT || tc_dtype_is_half(d);
}

/* The BatchNormalization's per-channel map, when it is an inference one with constant
 * parameters of c_out values each. */
typedef struct bn_params {
    const tc_rt_tensor *scale, *beta, *mean, *var;
    double eps;
} bn_params;

static bool read_batchnorm(const tc_graph_plan *plan, const tc_step_plan *bn, bn_params *p) {
    const tconv_node *node = bn->node;
    tc_error err;
    int64_t training = 0, spatial = 1;
    float eps;
    if (bn->opset < 7 || !bn->kernel || bn->forwards_input || bn->n_inputs != 5 ||
        bn->n_outputs < 1 || bn->outputs[0] == TC_NO_SLOT ||
        tc_node_attr_int_or_default(node, "training_mode", &training, &err) != TCONV_OK ||
        training || tc_node_attr_int_or_default(node, "spatial", &spatial, &err) != TCONV_OK ||
        spatial != 1 || tc_node_attr_float_or_default(node, "epsilon", &eps, &err) != TCONV_OK)
        return false;
    for (size_t k = 1; k < bn->n_outputs; k++) {
        if (bn->outputs[k] != TC_NO_SLOT)
            return false;
    }
    const tc_rt_tensor *prm[4];
    for (size_t k = 0; k < 4; k++) {
        prm[k] = tc_plan_const_input(plan, bn, k + 1);
        if (!prm[k] || !float_like(prm[k]->dtype))
            return false;
    }
    *p = (bn_params){prm[0], prm[1], prm[2], prm[3], (double)eps};
    return true;
}

/* The Conv or ConvTranspose whose result BatchNormalization input slot `x` holds, through the
 * Slice, Pad and Add steps of a fused crop; -1 when there is none. */
static ptrdiff_t find_producer(const tc_graph_plan *plan, uint32_t x) {
    ptrdiff_t p = plan->producer_step[x];
    bool through_crop = false;
    while (p >= 0 && plan->steps[p].forwards_input) {
        const tc_step_plan *st = &plan->steps[p];
        if (!tc_node_is(st->node, TC_KIND_Slice) && !tc_node_is(st->node, TC_KIND_Pad) &&
            !tc_node_is(st->node, TC_KIND_Add))
            return -1;
        tc_slot_ref from = st->inputs[st->forward_from];
        if (from.up != 0 || from.slot == TC_NO_SLOT)
            return -1;
        p = plan->producer_step[from.slot];
        through_crop = true;
    }
    if (p < 0)
        return -1;
    const tc_step_plan *conv = &plan->steps[p];
    if (!(conv->epilogues & TC_EPILOGUE_FOLDED_BN)) /* its kernel's prepare did not declare it */
        return -1;
    bool transpose = tc_node_is(conv->node, TC_KIND_ConvTranspose);
    if ((!transpose && !tc_node_is(conv->node, TC_KIND_Conv)) || conv->folded || !conv->kernel ||
        (through_crop && (!transpose || !conv->crop)) || conv->n_outputs < 1 ||
        conv->n_inputs < 2 || conv->n_inputs > TC_FOLD_INPUTS)
        return -1;
    return p;
}

/* The folding's shape: output channels, and how W's rows and columns map onto them. */
typedef struct conv_shape {
    bool transpose;
    int64_t c_out, rows, cols, inner; /* W is rows x cols x inner */
    int64_t rows_per_group, cols_per_group;
} conv_shape;

static bool read_conv(const tc_session *session, const tc_graph_plan *plan,
                      const tc_step_plan *conv, conv_shape *c, const tc_rt_tensor **w,
                      const tc_rt_tensor **b) {
    tc_error err;
    int64_t group = 1;
    *w = tc_plan_const_input(plan, conv, 1);
    *b = conv->n_inputs > 2 && conv->inputs[2].slot != TC_NO_SLOT
             ? tc_plan_const_input(plan, conv, 2)
             : NULL;
    const tconv_value *x = conv->node->inputs[0];
    if (!*w || !float_like((*w)->dtype) || (*w)->rank < 3 || !x ||
        (tc_session_type(session, x)->dtype != TCONV_DTYPE_UNDEFINED &&
         tc_session_type(session, x)->dtype != (*w)->dtype) ||
        (conv->n_inputs > 2 && conv->inputs[2].slot != TC_NO_SLOT &&
         (!*b || (*b)->dtype != (*w)->dtype)) ||
        tc_node_attr_int_or_default(conv->node, "group", &group, &err) != TCONV_OK || group < 1)
        return false;
    *c = (conv_shape){.transpose = tc_node_is(conv->node, TC_KIND_ConvTranspose)};
    c->rows = (*w)->dims[0];
    c->cols = (*w)->dims[1];
    c->inner = c->rows * c->cols > 0 ? (*w)->n_elements / (c->rows * c->cols) : 0;
    if (c->transpose) {
        if (c->rows % group != 0)
            return false;
        c->rows_per_group = c->rows / group;
        c->cols_per_group = c->cols;
        c->c_out = c->cols * group;
    } else {
        c->c_out = c->rows;
    }
    return c->c_out > 0 && c->inner > 0 && (!*b || (*b)->n_elements == c->c_out);
}

static int64_t output_channel(const conv_shape *c, int64_t row, int64_t col) {
    if (!c->transpose)
        return row;
    return row / c->rows_per_group * c->cols_per_group + col;
}

/* W' = W * s per output channel. */
static void fold_weights(const conv_shape *c, const tc_rt_tensor *w, const double *s, float *out) {
    for (int64_t r = 0; r < c->rows; r++) {
        for (int64_t col = 0; col < c->cols; col++) {
            double f = s[output_channel(c, r, col)];
            int64_t base = (r * c->cols + col) * c->inner;
            for (int64_t i = 0; i < c->inner; i++)
                out[base + i] = (float)(tc_rt_get_f64(w, base + i) * f);
        }
    }
}

/* Whether the fused crop (if any) carries a bias or adds positions: then the folded bias goes
 * into the crop, which the ConvTranspose kernel adds everywhere. */
static bool bias_in_crop(const tc_kernel_crop *crop) {
    if (!crop)
        return false;
    if (crop->bias)
        return true;
    for (int a = 0; a < TC_MAX_RANK; a++) {
        if (crop->extend_begin[a] || crop->extend_end[a])
            return true;
    }
    return false;
}

static tconv_status fold_one(tc_session *session, tc_graph_plan *plan, tc_step_plan *conv,
                             tc_step_plan *bn, const conv_shape *c, const tc_rt_tensor *w,
                             const tc_rt_tensor *b, const bn_params *p, tc_error *err) {
    bool crop_bias = bias_in_crop(conv->crop);
    if (crop_bias && b)
        return TCONV_OK; /* the crop fusion never makes this; nothing to fold into */
    tc_rt_tensor *folded = tc_arena_calloc(session->arena, TC_FOLD_TENSORS, sizeof *folded);
    double *s = tc_arena_calloc(session->arena, (size_t)c->c_out, sizeof *s);
    tc_slot_ref *inputs = tc_arena_calloc(session->arena, TC_FOLD_INPUTS, sizeof *inputs);
    if (!folded || !s || !inputs)
        return tc_error_nomem(err, "an execution plan");
    conv->folded = folded; /* freed with the plan, also when an allocation below fails */
    conv->folded_x_dtype = w->dtype;
    int64_t c_dims[1] = {c->c_out};
    tconv_status st = tc_plan_constant_alloc(session, TCONV_DTYPE_FLOAT, w->rank, w->dims,
                                             "folded weights", &folded[1], err);
    if (st == TCONV_OK)
        st = tc_plan_constant_alloc(session, TCONV_DTYPE_FLOAT, 1, c_dims, "folded bias",
                                    &folded[crop_bias ? FOLD_CROP_BIAS : 2], err);
    if (st != TCONV_OK)
        return st;
    float *bias = folded[crop_bias ? FOLD_CROP_BIAS : 2].data;
    for (int64_t o = 0; o < c->c_out; o++) {
        s[o] = tc_rt_get_f64(p->scale, o) / sqrt(tc_rt_get_f64(p->var, o) + p->eps);
        double before = b ? tc_rt_get_f64(b, o) : 0.0;
        if (crop_bias && conv->crop->bias)
            before = conv->crop->bias[o];
        bias[o] = (float)((before - tc_rt_get_f64(p->mean, o)) * s[o] + tc_rt_get_f64(p->beta, o));
    }
    fold_weights(c, w, s, folded[1].data);
    if (crop_bias) {
        tc_kernel_crop *crop = tc_arena_alloc(session->arena, sizeof *crop);
        if (!crop)
            return tc_error_nomem(err, "an execution plan");
        *crop = *conv->crop;
        crop->bias = bias;
        crop->bias_len = c->c_out;
        conv->crop = crop;
    } else if (conv->n_inputs < TC_FOLD_INPUTS) { /* B' becomes input 2 */
        memcpy(inputs, conv->inputs, conv->n_inputs * sizeof *inputs);
        for (size_t k = conv->n_inputs; k < TC_FOLD_INPUTS; k++)
            inputs[k] = (tc_slot_ref){0, TC_NO_SLOT};
        conv->inputs = inputs;
        conv->n_inputs = TC_FOLD_INPUTS;
        if (plan->max_inputs < TC_FOLD_INPUTS)
            plan->max_inputs = TC_FOLD_INPUTS;
    }
    bn->forwards_input = true;
    bn->forward_from = 0;
    return TCONV_OK;
}

/* Whether every channel's map is finite: with var + eps = 0 the formula gives
 * (x - mean) / 0 * scale + B, +-inf or NaN by the sign of x - mean, which no folded weight
 * reproduces (W * inf sums to NaN); such a BatchNormalization runs as written. */
static bool finite_affine(const bn_params *p, int64_t channels) {
    for (int64_t o = 0; o < channels; o++) {
        float s = (float)(tc_rt_get_f64(p->scale, o) / sqrt(tc_rt_get_f64(p->var, o) + p->eps));
        float shift = (float)(tc_rt_get_f64(p->beta, o) - tc_rt_get_f64(p->mean, o) * s);
        if (!isfinite(s) || !isfinite(shift) ||
            !((float)tc_rt_get_f64(p->var, o) + (float)p->eps > 0.0f)) /* as the kernel sees */
            return false;
    }
    return true;
}

static tconv_status fold_batchnorm(tc_session *session, tc_graph_plan *plan, size_t at,
                                   tc_error *err) {
    tc_step_plan *bn = &plan->steps[at];
    bn_params p;
    if (!read_batchnorm(plan, bn, &p) || bn->inputs[0].up != 0 ||
        bn->inputs[0].slot == TC_NO_SLOT || tc_plan_read_elsewhere(plan, bn->inputs[0].slot, at, 0))
        return TCONV_OK;
    ptrdiff_t producer = find_producer(plan, bn->inputs[0].slot);
    conv_shape c;
    const tc_rt_tensor *w, *b;
    if (producer < 0 || !read_conv(session, plan, &plan->steps[producer], &c, &w, &b))
        return TCONV_OK;
    const tc_rt_tensor *prm[4] = {p.scale, p.beta, p.mean, p.var};
    for (size_t k = 0; k < 4; k++) {
        if (prm[k]->n_elements != c.c_out)
            return TCONV_OK;
    }
    if (!finite_affine(&p, c.c_out))
        return TCONV_OK;
    const tconv_value *y = bn->node->outputs[0], *x = bn->node->inputs[0];
    tconv_dtype yd = y ? tc_session_type(session, y)->dtype : TCONV_DTYPE_UNDEFINED;
    tconv_dtype xd = x ? tc_session_type(session, x)->dtype : TCONV_DTYPE_UNDEFINED;
    if (!x || !y || (yd != TCONV_DTYPE_UNDEFINED && xd != TCONV_DTYPE_UNDEFINED && yd != xd))
        return TCONV_OK;
    return fold_one(session, plan, &plan->steps[producer], bn, &c, w, b, &p, err);
}

tconv_status tc_plan_fold_batchnorms(tc_session *session, tc_graph_plan *plan, tc_error *err) {
    for (size_t i = 0; i < plan->n_steps; i++) {
        if (!tc_node_is(plan->steps[i].node, TC_KIND_BatchNormalization))
            continue;
        tconv_status st = fold_batchnorm(session, plan, i, err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}
