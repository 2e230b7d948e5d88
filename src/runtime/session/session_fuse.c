/* Crop fusion at planning time. The legalization rewrite turns a padded ConvTranspose into a
 * VALID one followed by a Slice that crops it and, where the result reaches past the VALID
 * output, a Pad of zeros and an Add of the bias. Run as written, each of those copies the whole
 * output. When each value of that chain is read only by the next node, the Slice crops spatial
 * axes with unit steps, the Pad adds zeros on spatial axes, the Add adds a per-channel constant
 * and all their parameters are constants, the plan instead hands the chain to the ConvTranspose
 * kernel (which writes exactly that result: kernel.h, tc_kernel_crop) and the chain's steps
 * just move the result along. The graph is not changed: this is a property of the plan, not a
 * pass (the runtime never runs passes). */
#include "runtime/session/session_internal.h"
#include "ir/slice_geometry.h"
#include "ir/shape_rules.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Integers of constant input `k` of a step (an initializer of the same graph); false when the
 * input is absent, not a constant, not INT32/INT64, or longer than TC_MAX_RANK. */
static bool const_ints(const tc_graph_plan *plan, const tc_step_plan *step, size_t k, int64_t *out,
                       size_t *n) {
    if (k >= step->n_inputs || step->inputs[k].slot == TC_NO_SLOT || step->inputs[k].up != 0)
        return false;
    const tc_rt_tensor *t = &plan->constants[step->inputs[k].slot];
    if (t->rank != 1 || t->n_elements > TC_MAX_RANK ||
        (t->dtype != TCONV_DTYPE_INT64 && t->dtype != TCONV_DTYPE_INT32))
        return false;
    for (int64_t i = 0; i < t->n_elements; i++)
        out[i] = t->dtype == TCONV_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
                                               : ((const int32_t *)t->data)[i];
    *n = (size_t)t->n_elements;
    return true;
}

static bool attr_ints(const tconv_node *node, const char *name, int64_t *out, size_t *n,
                      bool *present) {
    const int64_t *values;
    tc_error err;
    if (tc_node_attr_ints(node, name, present, &values, n, &err) != TCONV_OK || *n > TC_MAX_RANK)
        return false;
    if (*n)
        memcpy(out, values, *n * sizeof *out);
    return true;
}

typedef tc_slice_args slice_consts;

static bool given(const tc_step_plan *step, size_t k) {
    return step->n_inputs > k && step->inputs[k].slot != TC_NO_SLOT;
}

/* The Slice's parameters when all are constant and the steps are 1. */
static bool read_slice(const tc_graph_plan *plan, const tc_step_plan *step, slice_consts *c) {
    tc_error err;
    if (tc_slice_args_in_attrs(step->opset)) {
        if (tc_slice_args_from_attrs(step->node, c, &err) != TCONV_OK)
            return false;
    } else {
        size_t n_ends = 0, n_axes = 0, n_steps = 0;
        bool has_axes = given(step, TC_SLICE_AXES), has_steps = given(step, TC_SLICE_STEPS);
        if (!const_ints(plan, step, TC_SLICE_STARTS, c->starts, &c->n) ||
            !const_ints(plan, step, TC_SLICE_ENDS, c->ends, &n_ends) ||
            (has_axes && !const_ints(plan, step, TC_SLICE_AXES, c->axes, &n_axes)) ||
            (has_steps && !const_ints(plan, step, TC_SLICE_STEPS, c->steps, &n_steps)) ||
            tc_slice_args_complete(c, n_ends, has_axes, n_axes, has_steps, n_steps, &err) !=
                TCONV_OK)
            return false;
    }
    for (size_t i = 0; i < c->n; i++) {
        if (c->steps[i] != 1)
            return false;
    }
    return true;
}

/* Appends the Slice's axes, normalized against the rank, to the crop: only spatial axes (>= 2),
 * each once over all the Slices of the chain. Slices of distinct axes commute, so a chain of
 * them (an exporter's one Slice per axis) is one crop. */
static bool spatial_axes(const slice_consts *c, int rank, tc_kernel_crop *crop) {
    bool seen[TC_MAX_RANK] = {false};
    for (size_t i = 0; i < crop->n; i++)
        seen[crop->axes[i]] = true;
    for (size_t i = 0; i < c->n; i++) {
        int a = -1;
        if (rank < 3 || !tc_axis_normalize(c->axes[i], rank, &a) || a < 2 || seen[a])
            return false;
        seen[a] = true;
        crop->axes[crop->n] = (int)a;
        crop->starts[crop->n] = c->starts[i];
        crop->ends[crop->n] = c->ends[i];
        crop->n++;
    }
    return true;
}

/* Whether slot is read by anything but input `input` of step `reader`: another input, another
 * step, a subgraph, a graph output. */
bool tc_plan_read_elsewhere(const tc_graph_plan *plan, uint32_t slot, size_t reader, size_t input) {
    for (size_t i = 0; i < plan->n_outputs; i++) {
        if (plan->outputs[i].up == 0 && plan->outputs[i].slot == slot)
            return true;
    }
    for (size_t i = 0; i < plan->n_steps; i++) {
        const tc_step_plan *st = &plan->steps[i];
        for (size_t k = 0; k < st->n_captures; k++) {
            if (st->captures[k] == slot)
                return true;
        }
        for (size_t k = 0; k < st->n_inputs; k++) {
            if (st->inputs[k].up == 0 && st->inputs[k].slot == slot && (i != reader || k != input))
                return true;
        }
    }
    return false;
}

/* The only step reading slot (as its input *input), after step `after`; -1 when there is none
 * or slot has other readers. */
static ptrdiff_t sole_reader(const tc_graph_plan *plan, uint32_t slot, size_t after,
                             size_t *input) {
    for (size_t i = after + 1; i < plan->n_steps; i++) {
        const tc_step_plan *st = &plan->steps[i];
        for (size_t k = 0; k < st->n_inputs; k++) {
            if (st->inputs[k].up != 0 || st->inputs[k].slot != slot)
                continue;
            if (tc_plan_read_elsewhere(plan, slot, i, k) || st->n_outputs < 1 ||
                st->outputs[0] == TC_NO_SLOT || st->forwards_input)
                return -1;
            *input = k;
            return (ptrdiff_t)i;
        }
    }
    return -1;
}

static bool has_input(const tc_step_plan *step, size_t k) {
    return k < step->n_inputs && step->inputs[k].slot != TC_NO_SLOT;
}

/* The rank of the ConvTranspose's output, or -1 when unknown: that of its constant W, which the
 * kernel requires X to have. A declared rank (X's value_info) may be false: the crop's negative
 * axes and Pad's pads read against it cropped the wrong axis, or ran a Pad that fails as
 * written (issue 27). Without a constant W nothing is fused. */
static int producer_rank(const tc_graph_plan *plan, const tc_step_plan *producer) {
    const tc_rt_tensor *w = tc_plan_const_input(plan, producer, 1);
    return w ? w->rank : -1;
}

const tc_rt_tensor *tc_plan_const_input(const tc_graph_plan *plan, const tc_step_plan *step,
                                        size_t k) {
    if (!has_input(step, k) || step->inputs[k].up != 0)
        return NULL;
    const tc_rt_tensor *t = &plan->constants[step->inputs[k].slot];
    return t->dtype == TCONV_DTYPE_UNDEFINED || (!t->data && t->n_elements > 0) ? NULL : t;
}

/* Pad with zeros on spatial axes only: extend_begin / extend_end of crop. */
static bool read_pad(const tc_graph_plan *plan, const tc_step_plan *step, int rank,
                     tc_kernel_crop *crop) {
    const char *mode = "constant";
    tc_error err;
    int64_t pads[2 * TC_MAX_RANK];
    size_t n = 0;
    if (tc_node_attr_string(step->node, "mode", "constant", &mode, &err) != TCONV_OK ||
        strcmp(mode, "constant") != 0)
        return false;
    if (step->opset < 11) {
        bool present;
        float value = 0.0f;
        if (!attr_ints(step->node, "pads", pads, &n, &present) || !present ||
            tc_node_attr_float_or_default(step->node, "value", &value, &err) != TCONV_OK ||
            value != 0.0f)
            return false;
    } else {
        const tc_rt_tensor *value = tc_plan_const_input(plan, step, 2);
        if (!const_ints(plan, step, 1, pads, &n) || has_input(step, 3) ||
            (has_input(step, 2) &&
             (!value || value->dtype != TCONV_DTYPE_FLOAT || value->n_elements != 1 ||
              ((const float *)value->data)[0] != 0.0f)))
            return false;
    }
    if (rank < 3 || n != (size_t)(2 * rank) || pads[0] || pads[1] || pads[rank] || pads[rank + 1])
        return false;
    for (int a = 2; a < rank; a++) {
        if (pads[a] < 0 || pads[rank + a] < 0)
            return false;
        crop->extend_begin[a] = pads[a];
        crop->extend_end[a] = pads[rank + a];
    }
    return true;
}

/* C_out of a ConvTranspose whose W is a constant (W.shape[1] * group), or -1. */
static int64_t constant_channels(const tc_graph_plan *plan, const tc_step_plan *producer) {
    const tc_rt_tensor *w = tc_plan_const_input(plan, producer, 1);
    int64_t group = 1;
    tc_error err;
    if (!w || w->rank < 3 ||
        tc_node_attr_int_or_default(producer->node, "group", &group, &err) != TCONV_OK)
        return -1;
    return w->dims[1] * group;
}

/* Add of a per-channel float constant (shape [C,1,...] or [1,C,1,...]) to the chain value at
 * input `input` of the Add. */
static bool read_bias_add(const tc_graph_plan *plan, const tc_step_plan *add, size_t input,
                          int64_t c_out, int rank, tc_kernel_crop *crop) {
    const tc_rt_tensor *b = input < 2 ? tc_plan_const_input(plan, add, 1 - input) : NULL;
    if (!b || b->dtype != TCONV_DTYPE_FLOAT || c_out < 1 || b->n_elements != c_out ||
        b->rank < rank - 1 || b->rank > rank)
        return false;
    int channel_axis = 1 - (rank - b->rank);
    for (int i = 0; i < b->rank; i++) {
        if (b->dims[i] != (i == channel_axis ? c_out : 1))
            return false;
    }
    crop->bias = b->data;
    crop->bias_len = c_out;
    return true;
}

/* Follows ConvTranspose -> [Slice] -> [Pad] -> [Add] from step p; marks the steps fused. */
static tconv_status fuse_chain(tc_session *session, tc_graph_plan *plan, size_t p, tc_error *err) {
    tc_step_plan *producer = &plan->steps[p];
    if (!(producer->epilogues & TC_EPILOGUE_CROP)) /* its kernel's prepare did not declare it */
        return TCONV_OK;
    int rank = producer_rank(plan, producer);
    bool producer_bias = has_input(producer, 2);
    tc_kernel_crop crop;
    memset(&crop, 0, sizeof crop);
    ptrdiff_t fused[TC_MAX_RANK + 2];
    int n_fused = 0;
    size_t at = p, input = 0;
    ptrdiff_t next = producer->n_outputs >= 1 && producer->outputs[0] != TC_NO_SLOT
                         ? sole_reader(plan, producer->outputs[0], at, &input)
                         : -1;
    slice_consts c;
    tc_kernel_crop sliced = crop;
    /* each Slice adds at least one new spatial axis, so at most TC_MAX_RANK of them */
    while (next >= 0 && input == 0 && tc_node_is(plan->steps[next].node, TC_KIND_Slice) &&
           read_slice(plan, &plan->steps[next], &c) && spatial_axes(&c, rank, &sliced)) {
        crop = sliced;
        fused[n_fused++] = next;
        at = (size_t)next;
        next = sole_reader(plan, plan->steps[at].outputs[0], at, &input);
    }
    if (next >= 0 && input == 0 && !producer_bias &&
        tc_node_is(plan->steps[next].node, TC_KIND_Pad) &&
        read_pad(plan, &plan->steps[next], rank, &crop)) {
        fused[n_fused++] = next;
        at = (size_t)next;
        next = sole_reader(plan, plan->steps[at].outputs[0], at, &input);
    }
    if (next >= 0 && !producer_bias && tc_node_is(plan->steps[next].node, TC_KIND_Add) &&
        read_bias_add(plan, &plan->steps[next], input, constant_channels(plan, producer), rank,
                      &crop)) {
        fused[n_fused++] = next;
        plan->steps[next].forward_from = input;
    }
    if (n_fused == 0)
        return TCONV_OK;
    tc_kernel_crop *kept = tc_arena_alloc(session->arena, sizeof *kept);
    if (!kept)
        return tc_error_nomem(err, "an execution plan");
    *kept = crop;
    producer->crop = kept;
    for (int i = 0; i < n_fused; i++)
        plan->steps[fused[i]].forwards_input = true;
    return TCONV_OK;
}

tconv_status tc_plan_fuse_crops(tc_session *session, tc_graph_plan *plan, tc_error *err) {
    for (size_t i = 0; i < plan->n_steps; i++) {
        if (!tc_node_is(plan->steps[i].node, TC_KIND_ConvTranspose) || plan->steps[i].crop)
            continue;
        tconv_status st = fuse_chain(session, plan, i, err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

/* ---- Activation fusion. A kernel that accepts an epilogue (TC_OPF_EPILOGUE in ops.def: Conv,
 * ConvTranspose, with its fused crop chain, if any) whose float32 result is read only by an
 * elementwise activation (an op with ACT(fn, cost) in ops.def: Relu, LeakyRelu, Clip with
 * constant bounds, Sigmoid, Tanh, HardSigmoid, Elu) applies it to each output block while that
 * is still in cache; the activation's step just moves the result along. Same float operations as
 * the standalone kernel (both call tc_act_<fn>f, activation.h), so the result is the same bits. */

/* The slot holding step p's final result: its output, or the last step of its fused crop chain. */
static uint32_t chain_result(const tc_graph_plan *plan, size_t p) {
    uint32_t slot = plan->steps[p].outputs[0];
    const tc_step_plan *producer = &plan->steps[p];
    for (size_t i = p + 1;
         i < plan->n_steps && (producer->crop || producer->folded || producer->residual); i++) {
        const tc_step_plan *st = &plan->steps[i];
        size_t k = st->forward_from;
        if (st->forwards_input && k < st->n_inputs && st->inputs[k].up == 0 &&
            st->inputs[k].slot == slot && st->n_outputs >= 1)
            slot = st->outputs[0];
    }
    return slot;
}

/* A Clip bound: absent (the default), else a constant float scalar. */
static bool clip_bound_const(const tc_graph_plan *plan, const tc_step_plan *step, size_t k,
                             float *bound) {
    if (!has_input(step, k))
        return true;
    const tc_rt_tensor *t = tc_plan_const_input(plan, step, k);
    if (!t || t->dtype != TCONV_DTYPE_FLOAT || t->n_elements != 1)
        return false;
    *bound = ((const float *)t->data)[0];
    return true;
}

/* Clip's bounds: min/max attributes before opset 11, constant scalar inputs from 11. */
static bool read_clip_bounds(const tc_graph_plan *plan, const tc_step_plan *step,
                             tc_kernel_activation *act) {
    tc_error err;
    if (step->opset < 11)
        return tc_node_attr_float_or_default(step->node, "min", &act->alpha, &err) == TCONV_OK &&
               tc_node_attr_float_or_default(step->node, "max", &act->beta, &err) == TCONV_OK;
    act->alpha = -INFINITY;
    act->beta = INFINITY;
    return clip_bound_const(plan, step, 1, &act->alpha) &&
           clip_bound_const(plan, step, 2, &act->beta);
}

/* An activation parameter: the attribute of that name where the op's schema has one, its
 * default from the op table when absent. */
static bool read_parameter(const tc_step_plan *step, const char *name, float *out) {
    tc_error err;
    return !tc_op_attr_find(step->node->op, name) ||
           tc_node_attr_float_or_default(step->node, name, out, &err) == TCONV_OK;
}

/* The activation a step computes, when it is one the epilogue kernels can apply (ops.def's
 * activation column). */
static bool read_activation(const tc_graph_plan *plan, const tc_step_plan *step,
                            tc_kernel_activation *act) {
    const tconv_node *node = step->node;
    memset(act, 0, sizeof *act);
    if (!node || node->op == TC_OP_NONE || !step->kernel)
        return false;
    act->kind = tc_kinds[node->kind].activation;
    if (act->kind == TC_ACTIVATION_NONE)
        return false;
    if (node->kind == TC_KIND_Clip)
        return read_clip_bounds(plan, step, act);
    return read_parameter(step, "alpha", &act->alpha) && read_parameter(step, "beta", &act->beta);
}

static bool declared_float(const tc_session *session, const tconv_node *node) {
    return node->n_outputs >= 1 && node->outputs[0] &&
           tc_session_type(session, node->outputs[0])->dtype == TCONV_DTYPE_FLOAT;
}

/* Input k's type: a constant's own, else the declared one; UNDEFINED when absent or unknown. */
static tconv_dtype input_dtype(const tc_session *session, const tc_graph_plan *plan,
                               const tc_step_plan *step, size_t k) {
    if (!has_input(step, k))
        return TCONV_DTYPE_UNDEFINED;
    const tc_rt_tensor *t = tc_plan_const_input(plan, step, k);
    if (t)
        return t->dtype;
    const tconv_value *v = k < step->node->n_inputs ? step->node->inputs[k] : NULL;
    return v ? tc_session_type(session, v)->dtype : TCONV_DTYPE_UNDEFINED;
}

/* Input k is absent, a float32 constant or declared float32. */
static bool input_float(const tc_session *session, const tc_graph_plan *plan,
                        const tc_step_plan *step, size_t k) {
    return !has_input(step, k) || input_dtype(session, plan, step, k) == TCONV_DTYPE_FLOAT;
}

/* The producer's result is float32 when it runs: declared so, or all its inputs are float32
 * (then no float16 input makes the executor widen them and round the result back, which would
 * round between the Conv and the activation: session_half.c). */
static bool float_result(const tc_session *session, const tc_graph_plan *plan,
                         const tc_step_plan *producer) {
    if (declared_float(session, producer->node))
        return true;
    for (size_t k = 0; k < producer->n_inputs; k++) {
        if (!input_float(session, plan, producer, k))
            return false;
    }
    return true;
}

/* The producer's result is a 16-bit float the executor rounds from its kernel's float32 one
 * (session_half.c; a TC_OPF_EPILOGUE op is not TC_OPF_HALF_NATIVE): its X is float16 or
 * bfloat16, a constant or declared so (its other inputs share X's type, or the kernel refuses
 * them). */
static bool rounded_result(const tc_session *session, const tc_graph_plan *plan,
                           const tc_step_plan *producer) {
    return tc_dtype_is_half(input_dtype(session, plan, producer, 0));
}

/* Whether the producer's kernel may take `epilogue` (its prepare declared it) on a result it
 * writes to a slot, and has no activation fused yet: an epilogue after the activation would
 * apply in the wrong order. A step that only forwards (a BatchNormalization folded into its
 * Conv) runs no kernel to apply it. */
static bool takes_epilogue_on_any(const tc_step_plan *producer, unsigned epilogue) {
    return (producer->epilogues & epilogue) && !producer->activation && !producer->forwards_input &&
           producer->n_outputs >= 1 && producer->outputs[0] != TC_NO_SLOT;
}

/* ... on a float32 result. */
static bool takes_epilogue(const tc_session *session, const tc_graph_plan *plan,
                           const tc_step_plan *producer, unsigned epilogue) {
    return takes_epilogue_on_any(producer, epilogue) && float_result(session, plan, producer);
}

/* An activation fuses into a float32 result; into one the executor rounds to float16/bfloat16
 * after the kernel (so after the activation, where the graph as written rounds before it) only
 * when its op's kind says rounding commutes with it (ops.def: TC_OPF_ROUNDING_COMMUTES). The
 * float16 DCGAN's four Relus each cost a widening, the Relu and a rounding: 21 us of its 421 at
 * 1 thread on a 16-core Xeon. */
static tconv_status fuse_activation(tc_session *session, tc_graph_plan *plan, size_t p,
                                    tc_error *err) {
    tc_step_plan *producer = &plan->steps[p];
    if (!takes_epilogue_on_any(producer, TC_EPILOGUE_ACTIVATION))
        return TCONV_OK;
    size_t input = 0;
    uint32_t slot = chain_result(plan, p);
    ptrdiff_t next = sole_reader(plan, slot, p, &input);
    tc_kernel_activation act;
    if (next < 0 || input != 0 || !read_activation(plan, &plan->steps[next], &act))
        return TCONV_OK;
    if (!float_result(session, plan, producer) &&
        !(rounded_result(session, plan, producer) &&
          tc_kind_has(plan->steps[next].node->kind, TC_OPF_ROUNDING_COMMUTES)))
        return TCONV_OK;
    tc_kernel_activation *kept = tc_arena_alloc(session->arena, sizeof *kept);
    if (!kept)
        return tc_error_nomem(err, "an execution plan");
    *kept = act;
    producer->activation = kept;
    plan->steps[next].forwards_input = true;
    plan->steps[next].forward_from = 0;
    return TCONV_OK;
}

/* Offers every step whose op takes an epilogue (TC_OPF_EPILOGUE in ops.def) to `fuse`. */
typedef tconv_status (*step_fuser)(tc_session *session, tc_graph_plan *plan, size_t p,
                                   tc_error *err);

static tconv_status fuse_each_epilogue_step(tc_session *session, tc_graph_plan *plan,
                                            step_fuser fuse, tc_error *err) {
    for (size_t i = 0; i < plan->n_steps; i++) {
        const tconv_node *node = plan->steps[i].node;
        if (!node || !tc_kind_has(node->kind, TC_OPF_EPILOGUE))
            continue;
        tconv_status st = fuse(session, plan, i, err);
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

tconv_status tc_plan_fuse_activations(tc_session *session, tc_graph_plan *plan, tc_error *err) {
    return fuse_each_epilogue_step(session, plan, fuse_activation, err);
}

/* ---- Residual fusion. A residual block ends in Add(Conv(...), x) (ResNet, ERFNet, LinkNet),
 * mostly followed by a Relu: run as written, the Add reads and writes the whole output once
 * more, and at 2 threads it is one more node of a microsecond between the Convs. When the
 * Conv's float32 result (after a folded BatchNormalization) is read only by an Add whose other
 * input x has the same static declared shape, is float32 and is computed before the Conv, the
 * Conv's kernel adds x to each finished block (tc_kernel_ctx.residual), then the activation
 * that may fuse after it. The same float operations in the same order: the bits of the
 * unfused graph. */

/* The static dims of value v as the session declares them (rank -1 when not all static). */
static int declared_static_dims(const tc_session *session, const tconv_value *v, int64_t *dims) {
    int rank = -1;
    return v && tc_plan_value_dims(session, v, NULL, dims, &rank) ? rank : -1;
}

/* Whether values a and b are declared float32 of one static shape. */
static bool same_static_float(const tc_session *session, const tconv_value *a,
                              const tconv_value *b) {
    int64_t da[TC_MAX_RANK], db[TC_MAX_RANK];
    int ra = declared_static_dims(session, a, da), rb = declared_static_dims(session, b, db);
    return ra >= 0 && ra == rb && memcmp(da, db, (size_t)ra * sizeof da[0]) == 0 &&
           tc_session_type(session, a)->dtype == TCONV_DTYPE_FLOAT &&
           tc_session_type(session, b)->dtype == TCONV_DTYPE_FLOAT;
}

static tconv_status fuse_residual(tc_session *session, tc_graph_plan *plan, size_t p,
                                  tc_error *err) {
    tc_step_plan *producer = &plan->steps[p];
    if (!takes_epilogue(session, plan, producer, TC_EPILOGUE_RESIDUAL) || producer->residual)
        return TCONV_OK;
    size_t input = 0;
    uint32_t slot = chain_result(plan, p);
    ptrdiff_t next = sole_reader(plan, slot, p, &input);
    if (next < 0 || input > 1 || !tc_node_is(plan->steps[next].node, TC_KIND_Add))
        return TCONV_OK;
    tc_step_plan *add = &plan->steps[next];
    size_t other = 1 - input;
    if (add->n_inputs != 2 || add->node->n_inputs != 2 || !has_input(add, other) ||
        add->inputs[other].up != 0 || add->inputs[other].slot == slot)
        return TCONV_OK;
    /* x must exist when the Conv runs: a graph input, a constant, or an earlier step's output */
    int32_t made_by = plan->producer_step[add->inputs[other].slot];
    if (made_by >= (int32_t)p ||
        !same_static_float(session, add->node->inputs[input], add->node->inputs[other]))
        return TCONV_OK;
    tc_slot_ref *kept = tc_arena_alloc(session->arena, sizeof *kept);
    if (!kept)
        return tc_error_nomem(err, "an execution plan");
    *kept = add->inputs[other];
    producer->residual = kept;
    add->forwards_input = true;
    add->forward_from = input;
    return TCONV_OK;
}

tconv_status tc_plan_fuse_residuals(tc_session *session, tc_graph_plan *plan, tc_error *err) {
    return fuse_each_epilogue_step(session, plan, fuse_residual, err);
}
