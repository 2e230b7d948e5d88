/* Crop fusion at planning time. The legalization rewrite turns a padded ConvTranspose into a
 * VALID one followed by a Slice that crops it; run as written, the Slice copies the whole
 * output. When that Slice is the only reader of the ConvTranspose output, crops spatial axes
 * only with unit steps, and its starts/ends/axes are constants, the plan instead hands the crop
 * to the ConvTranspose kernel (which writes the cropped output directly, as it does for pads)
 * and the Slice step just moves the result to its own output. The graph is not changed: this is
 * a property of the plan, not a pass. */
#include "runtime/session_internal.h"

#include <string.h>

static bool is_op(const tconv_node *node, const char *op) {
    return node && strcmp(node->op_type, op) == 0 && (!node->domain || !node->domain[0]);
}

/* Integers of constant input `k` of a step (an initializer of the same graph); false when the
 * input is absent, not a constant, not INT32/INT64, or longer than TCONV_MAX_RANK. */
static bool const_ints(const tconv_graph_plan *plan, const tconv_step_plan *step, size_t k,
                       int64_t *out, size_t *n) {
    if (k >= step->n_inputs || step->inputs[k].slot == TCONV_NO_SLOT || step->inputs[k].up != 0)
        return false;
    const tconv_rt_tensor *t = &plan->constants[step->inputs[k].slot];
    if (t->rank != 1 || t->n_elements > TCONV_MAX_RANK ||
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
    tconv_error err;
    if (tconv_node_attr_ints(node, name, present, &values, n, &err) != TCONV_OK ||
        *n > TCONV_MAX_RANK)
        return false;
    if (*n)
        memcpy(out, values, *n * sizeof *out);
    return true;
}

typedef struct slice_consts {
    int64_t starts[TCONV_MAX_RANK], ends[TCONV_MAX_RANK], axes[TCONV_MAX_RANK];
    int64_t steps[TCONV_MAX_RANK];
    size_t n;
} slice_consts;

/* The Slice's parameters when all are constant and the steps are 1. */
static bool read_slice(const tconv_graph_plan *plan, const tconv_step_plan *step,
                       slice_consts *c) {
    size_t n_ends = 0, n_axes = 0, n_steps = 0;
    bool has_axes = true, has_steps = step->opset >= 10 && step->n_inputs > 4 &&
                                      step->inputs[4].slot != TCONV_NO_SLOT;
    if (step->opset < 10) {
        bool present;
        if (!attr_ints(step->node, "starts", c->starts, &c->n, &present) || !present ||
            !attr_ints(step->node, "ends", c->ends, &n_ends, &present) || !present ||
            !attr_ints(step->node, "axes", c->axes, &n_axes, &has_axes))
            return false;
    } else {
        has_axes = step->n_inputs > 3 && step->inputs[3].slot != TCONV_NO_SLOT;
        if (!const_ints(plan, step, 1, c->starts, &c->n) ||
            !const_ints(plan, step, 2, c->ends, &n_ends) ||
            (has_axes && !const_ints(plan, step, 3, c->axes, &n_axes)) ||
            (has_steps && !const_ints(plan, step, 4, c->steps, &n_steps)))
            return false;
    }
    if (n_ends != c->n || (has_axes && n_axes != c->n) || (has_steps && n_steps != c->n))
        return false;
    for (size_t i = 0; i < c->n; i++) {
        if (!has_axes)
            c->axes[i] = (int64_t)i;
        if (has_steps && c->steps[i] != 1)
            return false;
    }
    return true;
}

/* Axes normalized against the rank; only spatial axes (>= 2), each once. */
static bool spatial_axes(const slice_consts *c, int rank, tconv_kernel_crop *crop) {
    bool seen[TCONV_MAX_RANK] = {false};
    crop->n = c->n;
    for (size_t i = 0; i < c->n; i++) {
        int64_t a = c->axes[i];
        if (a < 0)
            a += rank;
        if (rank < 3 || a < 2 || a >= rank || seen[a])
            return false;
        seen[a] = true;
        crop->axes[i] = (int)a;
        crop->starts[i] = c->starts[i];
        crop->ends[i] = c->ends[i];
    }
    return true;
}

/* Whether slot is read by anything but `reader`: another step, a subgraph, a graph output. */
static bool read_elsewhere(const tconv_graph_plan *plan, uint32_t slot, size_t reader) {
    for (size_t i = 0; i < plan->n_outputs; i++) {
        if (plan->outputs[i].up == 0 && plan->outputs[i].slot == slot)
            return true;
    }
    for (size_t i = 0; i < plan->n_steps; i++) {
        const tconv_step_plan *st = &plan->steps[i];
        for (size_t k = 0; k < st->n_captures; k++) {
            if (st->captures[k] == slot)
                return true;
        }
        for (size_t k = 0; i != reader && k < st->n_inputs; k++) {
            if (st->inputs[k].up == 0 && st->inputs[k].slot == slot)
                return true;
        }
        /* the Slice itself reads it as its data input only */
        for (size_t k = 1; i == reader && k < st->n_inputs; k++) {
            if (st->inputs[k].up == 0 && st->inputs[k].slot == slot)
                return true;
        }
    }
    return false;
}

/* The ConvTranspose step whose output 0 is the Slice's data input, or NULL. */
static tconv_step_plan *crop_source(tconv_graph_plan *plan, size_t slice_index) {
    const tconv_step_plan *slice = &plan->steps[slice_index];
    if (slice->n_inputs < 1 || slice->n_outputs < 1 || slice->outputs[0] == TCONV_NO_SLOT ||
        slice->inputs[0].up != 0 || slice->inputs[0].slot == TCONV_NO_SLOT)
        return NULL;
    uint32_t slot = slice->inputs[0].slot;
    int32_t p = plan->producer_step[slot];
    if (p < 0 || (size_t)p >= slice_index)
        return NULL;
    tconv_step_plan *producer = &plan->steps[p];
    if (!is_op(producer->node, "ConvTranspose") || producer->crop ||
        producer->n_outputs < 1 || producer->outputs[0] != slot ||
        read_elsewhere(plan, slot, slice_index))
        return NULL;
    return producer;
}

/* The rank of the producer's X (its output rank), or -1 when unknown. */
static int producer_rank(const tconv_step_plan *producer) {
    const tconv_node *node = producer->node;
    if (node->n_inputs < 1 || !node->inputs[0])
        return -1;
    return node->inputs[0]->type.rank;
}

tconv_status tconv_plan_fuse_crops(tconv_session *session, tconv_graph_plan *plan,
                                   tconv_error *err) {
    for (size_t i = 0; i < plan->n_steps; i++) {
        tconv_step_plan *slice = &plan->steps[i];
        if (!is_op(slice->node, "Slice"))
            continue;
        tconv_step_plan *producer = crop_source(plan, i);
        slice_consts c;
        tconv_kernel_crop crop;
        if (!producer || !read_slice(plan, slice, &c) ||
            !spatial_axes(&c, producer_rank(producer), &crop))
            continue;
        tconv_kernel_crop *kept = tconv_arena_alloc(session->arena, sizeof *kept);
        if (!kept)
            return tconv_error_nomem(err, "an execution plan");
        *kept = crop;
        producer->crop = kept;
        slice->forwards_input = true;
    }
    return TCONV_OK;
}
