/* The work limit: the session refuses a run whose planned work exceeds
 * tc_session_options.max_work before it computes anything, as it refuses memory. A 120-byte
 * model (ConvTranspose of two [1,1,1000,1000] graph inputs) asks for 1e12 multiply-adds, about
 * 22 minutes of one core.
 *
 * The unit is one multiply-add for the contractions (Conv, ConvTranspose and their quantized
 * forms, Gemm, MatMul), one window tap for pooling, a few taps per output element for Resize,
 * and one per element read or written for everything else. Each node's work comes from its
 * input and output shapes: the declared ones when the plan is checked (at session creation, and
 * once the inputs fix the symbolic dims), the actual ones when the kernel allocates its first
 * output (which every kernel does before it computes), so that nodes of unknown shape are held
 * to the same limit before they run. */
#include "runtime/session_internal.h"

#include <inttypes.h>
#include <string.h>

/* The shapes one node's work is computed from; rank -1: unknown. */
typedef struct work_shapes {
    size_t n_in;
    int in_rank[8];
    const int64_t *in_dims[8];
    int out_rank;
    const int64_t *out_dims;
} work_shapes;

static uint64_t add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t mul_sat(uint64_t a, uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* Elements of a shape; false when unknown. */
static bool elements(int rank, const int64_t *dims, uint64_t *out) {
    if (rank < 0 || !dims)
        return false;
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return false;
        n = mul_sat(n, (uint64_t)dims[i]);
    }
    *out = n;
    return true;
}

static bool input_elements(const work_shapes *w, size_t i, uint64_t *out) {
    return i < w->n_in && elements(w->in_rank[i], w->in_dims[i], out);
}

/* How an op's work is counted. Every kernel's first allocation asks (tens of nodes a run of a
 * small model), so the name is looked at by its first letter before any strcmp. */
typedef enum work_class {
    WORK_ELEMENTS,
    WORK_CONV,
    WORK_CONV_TRANSPOSE,
    WORK_MATMUL,
    WORK_POOL,
    WORK_RESIZE,
} work_class;

static work_class classify(const char *op) {
    switch (op[0]) {
    case 'A':
        return strcmp(op, "AveragePool") == 0 ? WORK_POOL : WORK_ELEMENTS;
    case 'C':
        if (strcmp(op, "Conv") == 0 || strcmp(op, "ConvInteger") == 0)
            return WORK_CONV;
        return strcmp(op, "ConvTranspose") == 0 ? WORK_CONV_TRANSPOSE : WORK_ELEMENTS;
    case 'G':
        return strcmp(op, "Gemm") == 0 ? WORK_MATMUL : WORK_ELEMENTS;
    case 'L':
        return strcmp(op, "LpPool") == 0 ? WORK_POOL : WORK_ELEMENTS;
    case 'M':
        if (strcmp(op, "MatMul") == 0 || strcmp(op, "MatMulInteger") == 0)
            return WORK_MATMUL;
        return strcmp(op, "MaxPool") == 0 ? WORK_POOL : WORK_ELEMENTS;
    case 'Q':
        if (strcmp(op, "QLinearConv") == 0)
            return WORK_CONV;
        return strcmp(op, "QLinearMatMul") == 0 ? WORK_MATMUL : WORK_ELEMENTS;
    case 'R':
        return strcmp(op, "Resize") == 0 ? WORK_RESIZE : WORK_ELEMENTS;
    case 'U':
        return strcmp(op, "Upsample") == 0 ? WORK_RESIZE : WORK_ELEMENTS;
    default:
        return WORK_ELEMENTS;
    }
}

/* Weight elements per output (Conv) or per input (ConvTranspose) element: W's elements over its
 * first dim. The weight is input 1, or input 3 of QLinearConv. */
static bool per_element_taps(const tconv_node *node, const work_shapes *w, uint64_t *out) {
    size_t wi = strcmp(node->op_type, "QLinearConv") == 0 ? 3 : 1;
    uint64_t n;
    if (!input_elements(w, wi, &n) || w->in_rank[wi] < 1 || w->in_dims[wi][0] <= 0)
        return false;
    *out = n / (uint64_t)w->in_dims[wi][0];
    return true;
}

/* The contraction length of a matrix product: A's last dim (Gemm: per transA). */
static bool contraction(const tconv_node *node, const work_shapes *w, uint64_t *out) {
    if (w->n_in < 1 || w->in_rank[0] < 1 || !w->in_dims[0])
        return false;
    int axis = w->in_rank[0] - 1;
    if (strcmp(node->op_type, "Gemm") == 0 && w->in_rank[0] == 2) {
        int64_t trans_a = 0;
        tc_error ignored;
        if (tc_node_attr_int(node, "transA", 0, &trans_a, &ignored) == TCONV_OK && trans_a)
            axis = 0;
    }
    *out = w->in_dims[0][axis] > 0 ? (uint64_t)w->in_dims[0][axis] : 0;
    return true;
}

/* Taps of a pooling window: the product of kernel_shape. */
static uint64_t window_taps(const tconv_node *node) {
    const int64_t *k = NULL;
    size_t n = 0;
    bool present = false;
    tc_error ignored;
    if (tc_node_attr_ints(node, "kernel_shape", &present, &k, &n, &ignored) != TCONV_OK || !present)
        return 1;
    uint64_t taps = 1;
    for (size_t i = 0; i < n; i++)
        taps = mul_sat(taps, k[i] > 0 ? (uint64_t)k[i] : 1);
    return taps;
}

/* One node's work; false when the shapes it needs are unknown. */
static bool node_work(const tconv_node *node, const work_shapes *w, uint64_t *out) {
    uint64_t y = 0, taps;
    bool have_y = elements(w->out_rank, w->out_dims, &y);
    work_class kind = classify(node->op_type);
    if (kind == WORK_CONV_TRANSPOSE) {
        uint64_t x;
        if (!input_elements(w, 0, &x) || !per_element_taps(node, w, &taps))
            return false;
        *out = mul_sat(x, taps);
        return true;
    }
    if (kind == WORK_CONV) {
        if (!have_y || !per_element_taps(node, w, &taps))
            return false;
        *out = mul_sat(y, taps);
        return true;
    }
    if (kind == WORK_MATMUL) {
        if (!have_y || !contraction(node, w, &taps))
            return false;
        *out = mul_sat(y, taps);
        return true;
    }
    if (kind == WORK_POOL) {
        if (!have_y)
            return false;
        *out = mul_sat(y, window_taps(node));
        return true;
    }
    if (kind == WORK_RESIZE) {
        if (!have_y)
            return false;
        *out = mul_sat(y, 4 * (uint64_t)(w->out_rank > 0 ? w->out_rank : 1));
        return true;
    }
    /* one per element read or written */
    uint64_t total = have_y ? y : 0;
    for (size_t i = 0; i < w->n_in; i++) {
        uint64_t n;
        if (w->in_dims[i] && input_elements(w, i, &n))
            total = add_sat(total, n);
    }
    *out = total;
    return have_y || w->n_in > 0;
}

/* ---------------------------------------------------------------- planning */

static uint64_t step_planned_work(const tc_step_plan *step, const tc_plan_dim_values *bound) {
    const tconv_node *node = step->node;
    int64_t in_dims[8][TCONV_MAX_RANK], out_dims[TCONV_MAX_RANK];
    work_shapes w = {0};
    w.n_in = node->n_inputs < 8 ? node->n_inputs : 8;
    for (size_t i = 0; i < w.n_in; i++) {
        w.in_rank[i] = -1;
        if (tc_plan_value_dims(node->inputs[i], bound, in_dims[i], &w.in_rank[i]))
            w.in_dims[i] = in_dims[i];
    }
    w.out_rank = -1;
    if (node->n_outputs > 0 && tc_plan_value_dims(node->outputs[0], bound, out_dims, &w.out_rank))
        w.out_dims = out_dims;
    uint64_t work = 0;
    if (!node_work(node, &w, &work))
        work = 0; /* unknown now: counted when the kernel allocates its output */
    for (size_t i = 0; i < step->n_subplans; i++) {
        const tc_graph_plan *sub = step->subplans[i];
        for (size_t k = 0; k < sub->n_steps; k++)
            work = add_sat(work, step_planned_work(&sub->steps[k], bound));
    }
    return work;
}

tconv_status tc_plan_check_work(const tc_session *session, const tc_graph_plan *plan,
                                const tc_plan_dim_values *bound, tc_error *err) {
    uint64_t limit = session->options.max_work;
    if (limit == 0)
        return TCONV_OK;
    uint64_t total = 0;
    const tc_step_plan *largest = NULL;
    uint64_t largest_work = 0;
    for (size_t i = 0; i < plan->n_steps; i++) {
        uint64_t w = step_planned_work(&plan->steps[i], bound);
        if (!largest || w > largest_work) {
            largest = &plan->steps[i];
            largest_work = w;
        }
        total = add_sat(total, w);
    }
    if (total <= limit)
        return TCONV_OK;
    char where[256];
    tc_node_describe(largest->node, where, sizeof where);
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "planned work of %" PRIu64
                        " (multiply-adds and element operations; %" PRIu64
                        " at %s) exceeds the work limit of %" PRIu64,
                        total, largest_work, where, limit);
}

/* ---------------------------------------------------------------- running */

tconv_status tc_session_count_work(tc_kernel_ctx *ctx, int out_rank, const int64_t *out_dims) {
    tc_session *s = ctx->session;
    if (!s || !ctx->node)
        return TCONV_OK;
    work_shapes w = {0};
    w.n_in = ctx->n_inputs < 8 ? ctx->n_inputs : 8;
    for (size_t i = 0; i < w.n_in; i++) {
        const tc_rt_tensor *t = ctx->inputs[i];
        w.in_rank[i] = t ? t->rank : -1;
        w.in_dims[i] = t ? t->dims : NULL;
    }
    w.out_rank = out_rank;
    w.out_dims = out_dims;
    uint64_t work = 0;
    if (!node_work(ctx->node, &w, &work))
        return TCONV_OK;
    return tc_session_charge_work(ctx, work);
}

tconv_status tc_session_charge_work(tc_kernel_ctx *ctx, uint64_t work) {
    tc_session *s = ctx->session;
    if (!s)
        return TCONV_OK;
    s->stats.work = add_sat(s->stats.work, work);
    uint64_t limit = s->options.max_work;
    if (limit == 0 || s->stats.work <= limit)
        return TCONV_OK;
    return tc_error_set(ctx->err, TCONV_ERR_LIMIT,
                        "work of %" PRIu64 " (multiply-adds and element operations) would take "
                        "the run past the work limit of %" PRIu64 " (%" PRIu64 " done)",
                        work, limit, s->stats.work - work);
}
