/* Control flow: If runs the branch its condition selects, with the enclosing scopes' values
 * visible to the branch (the executor keeps them alive until the If has run). */
#include "runtime/kernels/kernel_util.h"
#include "ir/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static tconv_status if_branch(tc_kernel_ctx *ctx, const char *name, const tconv_graph **out) {
    const tc_attr *a = tc_node_attr(ctx->node, name);
    if (!a || a->type != TCONV_ATTR_GRAPH || !a->g)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "the graph attribute '%s' is missing",
                            name);
    *out = a->g;
    return TCONV_OK;
}

static tconv_status if_condition(tc_kernel_ctx *ctx, bool *cond) {
    const tc_rt_tensor *c;
    tconv_status st = tc_kernel_require_input(ctx, 0, &c);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TC_DTYPE_BIT(TCONV_DTYPE_BOOL));
    if (st != TCONV_OK)
        return st;
    if (c->n_elements != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "the condition must hold one element, has %lld",
                            (long long)c->n_elements);
    *cond = ((const uint8_t *)c->data)[0] != 0;
    return TCONV_OK;
}

tconv_status tc_run_if(tc_kernel_ctx *ctx) {
    const tconv_graph *then_g = NULL, *else_g = NULL;
    bool cond = false;
    tconv_status st = if_branch(ctx, "then_branch", &then_g);
    if (st == TCONV_OK)
        st = if_branch(ctx, "else_branch", &else_g);
    if (st == TCONV_OK)
        st = if_condition(ctx, &cond);
    if (st != TCONV_OK)
        return st;
    if (!ctx->host)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "If needs a session to run a branch");
    tc_rt_tensor *results = calloc(ctx->n_outputs ? ctx->n_outputs : 1, sizeof *results);
    if (!results)
        return tc_error_nomem(ctx->err, "If outputs");
    st = tc_kernel_run_subgraph(ctx, cond ? then_g : else_g, NULL, 0, results, ctx->n_outputs);
    if (st == TCONV_OK) {
        for (size_t i = 0; i < ctx->n_outputs; i++)
            ctx->outputs[i] = results[i];
    }
    free(results);
    return st;
}

/* ---------------------------------------------------------------- Loop and Scan */

/* A body's per-iteration outputs to be stacked into one output (Loop's scan outputs, Scan's),
 * kept as the body returned them (session-accounted) until the loop ends. */
typedef struct stack_parts {
    tc_rt_tensor *items;
    size_t n, cap;
} stack_parts;

/* A stack's bookkeeping counts against the memory limit as intermediate bytes: its item array
 * and, per part, the allocator's header of the part's data. Some 200 bytes an iteration, of a
 * Loop whose parts hold no data, made 2.75 GB under --max-memory-mb 64 (issue 27). */
#define STACK_PART_OVERHEAD 16

static tconv_status stack_charge(tc_kernel_ctx *ctx, size_t bytes) {
    tc_budget *s = ctx->budget;
    if (!s)
        return TCONV_OK;
    int64_t dims[1] = {(int64_t)bytes};
    tconv_status st = tc_budget_check_limit(s, TCONV_DTYPE_UINT8, 1, dims, ctx->err);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "scan outputs' bookkeeping: ");
    s->stats.live_bytes += bytes;
    if (s->stats.live_bytes > s->stats.peak_live_bytes)
        s->stats.peak_live_bytes = s->stats.live_bytes;
    return TCONV_OK;
}

static size_t stack_bytes(const stack_parts *p) {
    return p->cap * sizeof *p->items + p->n * STACK_PART_OVERHEAD;
}

static tconv_status stack_push(tc_kernel_ctx *ctx, stack_parts *p, tc_rt_tensor *t) {
    if (p->n > 0) {
        const tc_rt_tensor *first = &p->items[0];
        bool same = first->dtype == t->dtype && first->rank == t->rank;
        for (int i = 0; same && i < t->rank; i++)
            same = first->dims[i] == t->dims[i];
        if (!same)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "a scan output changes dtype or shape between iterations");
    }
    size_t cap = p->cap;
    if (p->n == p->cap && !tc_vec_next_cap(p->cap, sizeof *p->items, p->n + 1, &cap))
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "too many scan output parts");
    tconv_status st = stack_charge(ctx, (cap - p->cap) * sizeof *p->items + STACK_PART_OVERHEAD);
    if (st != TCONV_OK)
        return st;
    if (cap != p->cap) {
        tc_rt_tensor *items = realloc(p->items, cap * sizeof *items);
        if (!items) {
            if (ctx->budget)
                ctx->budget->stats.live_bytes -=
                    (cap - p->cap) * sizeof *p->items + STACK_PART_OVERHEAD;
            return tc_error_nomem(ctx->err, "scan outputs");
        }
        p->items = items;
        p->cap = cap;
    }
    p->items[p->n++] = *t;
    memset(t, 0, sizeof *t);
    return TCONV_OK;
}

static void stack_free(tc_kernel_ctx *ctx, stack_parts *p) {
    for (size_t i = 0; i < p->n; i++)
        tc_budget_release(ctx->budget, &p->items[i]);
    if (ctx->budget)
        ctx->budget->stats.live_bytes -= stack_bytes(p);
    free(p->items);
    memset(p, 0, sizeof *p);
}

/* Output `index` = the parts stacked along a new axis `axis` of the result (in [0, rank]), in
 * reverse order when `reverse`. No parts: a [0] tensor of `empty_dtype`. */
static tconv_status stack_write(tc_kernel_ctx *ctx, size_t index, const stack_parts *p, int axis,
                                bool reverse, tconv_dtype empty_dtype) {
    tc_rt_tensor *out;
    if (p->n == 0) {
        int64_t zero = 0;
        return tc_kernel_alloc_output(ctx, index, empty_dtype, 1, &zero, &out);
    }
    const tc_rt_tensor *first = &p->items[0];
    if (first->rank + 1 > TC_MAX_RANK)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "a stacked scan output has rank > %d",
                            TC_MAX_RANK);
    if (axis < 0 || axis > first->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "scan output axis %d is outside [0, %d]",
                            axis, first->rank);
    int64_t dims[TC_MAX_RANK];
    for (int i = 0, k = 0; i <= first->rank; i++)
        dims[i] = i == axis ? (int64_t)p->n : first->dims[k++];
    tconv_status st = tc_kernel_alloc_output(ctx, index, first->dtype, first->rank + 1, dims, &out);
    if (st != TCONV_OK)
        return st;
    size_t esize = tc_rt_dtype_size(first->dtype);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < first->rank; i++)
        *(i < axis ? &outer : &inner) *= first->dims[i];
    size_t chunk = (size_t)inner * esize;
    for (size_t t = 0; t < p->n && chunk; t++) {
        size_t pos = reverse ? p->n - 1 - t : t;
        for (int64_t o = 0; o < outer; o++)
            memcpy((unsigned char *)out->data + ((size_t)o * p->n + pos) * chunk,
                   (const unsigned char *)p->items[t].data + (size_t)o * chunk, chunk);
    }
    return TCONV_OK;
}

/* The dims of a tensor type when all are static and not negative. */
static bool static_dims(const tc_type *type, int64_t *dims, int *rank) {
    if (!type || type->kind != TCONV_TYPE_TENSOR || type->rank < 0 || type->rank > TC_MAX_RANK)
        return false;
    for (int i = 0; i < type->rank; i++) {
        if (type->dims[i].kind != TCONV_DIM_STATIC || type->dims[i].value < 0)
            return false;
        dims[i] = type->dims[i].value;
    }
    *rank = type->rank;
    return true;
}

/* The declared dtype of a graph output, for an empty stack. */
static tconv_dtype body_output_dtype(const tc_kernel_ctx *ctx, const tconv_graph *body,
                                     size_t index) {
    const tconv_value *v = index < body->n_outputs ? body->outputs[index].value : NULL;
    tconv_dtype dtype = v ? tc_type_seen(ctx->types, v)->dtype : TCONV_DTYPE_UNDEFINED;
    return dtype != TCONV_DTYPE_UNDEFINED ? dtype : TCONV_DTYPE_FLOAT;
}

static tconv_status body_graph(tc_kernel_ctx *ctx, const tconv_graph **out) {
    tconv_status st = if_branch(ctx, "body", out);
    if (st == TCONV_OK && !ctx->host)
        st = tc_error_set(ctx->err, TCONV_ERR_USAGE, "a body graph needs a session to run");
    return st;
}

/* Loop state: the loop-carried values of the current iteration (borrowed from the node's
 * inputs before the first iteration, owned results of the body after). */
typedef struct loop_state {
    tc_rt_tensor *carried;
    bool *owned;
    size_t n;
} loop_state;

static void loop_state_free(tc_kernel_ctx *ctx, loop_state *ls) {
    for (size_t i = 0; ls->carried && i < ls->n; i++)
        if (ls->owned[i])
            tc_budget_release(ctx->budget, &ls->carried[i]);
    free(ls->carried);
    free(ls->owned);
}

/* Moves the final loop-carried values into outputs [0, n). */
static tconv_status loop_state_output(tc_kernel_ctx *ctx, loop_state *ls) {
    for (size_t i = 0; i < ls->n && i < ctx->n_outputs; i++) {
        if (!ls->owned[i]) {
            tconv_status st = tc_kernel_copy_to_output(ctx, i, &ls->carried[i], ls->carried[i].rank,
                                                       ls->carried[i].dims);
            if (st != TCONV_OK)
                return st;
            continue;
        }
        ctx->outputs[i] = ls->carried[i];
        ls->owned[i] = false;
        memset(&ls->carried[i], 0, sizeof ls->carried[i]);
    }
    return TCONV_OK;
}

/* The state starts as views of `initial` (n tensors; NULL entries are missing inputs). */
static tconv_status loop_state_init(tc_kernel_ctx *ctx, loop_state *ls,
                                    const tc_rt_tensor *const *initial, size_t n) {
    ls->n = n;
    ls->carried = calloc(n ? n : 1, sizeof *ls->carried);
    ls->owned = calloc(n ? n : 1, sizeof *ls->owned);
    if (!ls->carried || !ls->owned)
        return tc_error_nomem(ctx->err, "loop state");
    for (size_t i = 0; i < n; i++) {
        const tc_rt_tensor *t = initial[i];
        if (!t)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID, "loop-carried value %zu is missing",
                                i);
        ls->carried[i] = *t;
        ls->carried[i].owns_data = false;
    }
    return TCONV_OK;
}

/* Replaces the state by the body's results[0 .. n). */
static void loop_state_take(tc_kernel_ctx *ctx, loop_state *ls, tc_rt_tensor *results) {
    for (size_t i = 0; i < ls->n; i++) {
        if (ls->owned[i])
            tc_budget_release(ctx->budget, &ls->carried[i]);
        ls->carried[i] = results[i];
        ls->owned[i] = true;
        memset(&results[i], 0, sizeof results[i]);
    }
}

static tconv_status scalar_input(tc_kernel_ctx *ctx, size_t index, uint32_t mask, bool *present,
                                 int64_t *value) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, index);
    *present = t != NULL;
    if (!t)
        return TCONV_OK;
    tconv_status st = tc_kernel_check_dtype(ctx, index, mask);
    if (st != TCONV_OK)
        return st;
    if (t->n_elements != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "input %zu ('%s') must hold one element",
                            index, tc_kernel_input_name(ctx, index));
    *value = tc_rt_get_i64(t, 0);
    return TCONV_OK;
}

typedef struct loop_run {
    const tconv_graph *body;
    size_t n_carried, n_scan;
    tc_rt_tensor *in;      /* body inputs: iteration, cond, carried */
    tc_rt_tensor *results; /* body outputs: cond, carried, scan */
    stack_parts *scans;
} loop_run;

static tconv_status loop_iterations(tc_kernel_ctx *ctx, loop_run *lr, loop_state *ls, int64_t trip,
                                    bool has_trip, bool cond) {
    int64_t iter = 0;
    uint8_t cond_byte = 0;
    tconv_status st = TCONV_OK;
    while (st == TCONV_OK && (!has_trip || iter < trip) && cond) {
        cond_byte = 1;
        lr->in[0] = (tc_rt_tensor){
            .dtype = TCONV_DTYPE_INT64, .n_elements = 1, .data = &iter, .nbytes = sizeof iter};
        lr->in[1] = (tc_rt_tensor){
            .dtype = TCONV_DTYPE_BOOL, .n_elements = 1, .data = &cond_byte, .nbytes = 1};
        for (size_t i = 0; i < lr->n_carried; i++)
            lr->in[2 + i] = ls->carried[i];
        size_t n_res = 1 + lr->n_carried + lr->n_scan;
        st = tc_kernel_run_subgraph(ctx, lr->body, lr->in, 2 + lr->n_carried, lr->results, n_res);
        if (st != TCONV_OK)
            break;
        const tc_rt_tensor *c = &lr->results[0];
        if (c->dtype != TCONV_DTYPE_BOOL || c->n_elements != 1)
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID,
                              "the body's condition output must be one bool");
        else
            cond = ((const uint8_t *)c->data)[0] != 0;
        tc_budget_release(ctx->budget, &lr->results[0]);
        loop_state_take(ctx, ls, lr->results + 1);
        for (size_t k = 0; st == TCONV_OK && k < lr->n_scan; k++)
            st = stack_push(ctx, &lr->scans[k], &lr->results[1 + lr->n_carried + k]);
        for (size_t k = 0; k < n_res; k++)
            tc_budget_release(ctx->budget, &lr->results[k]);
        iter++;
    }
    return st;
}

/* Loop: runs the body while the trip count M (if given) is not reached and the condition (if
 * given) holds; outputs the final loop-carried values, then each scan output stacked along a
 * new first axis. Tensors only (no sequence or optional values). */
tconv_status tc_run_loop(tc_kernel_ctx *ctx) {
    loop_run lr = {0};
    tconv_status st = body_graph(ctx, &lr.body);
    if (st != TCONV_OK)
        return st;
    bool has_trip, has_cond;
    int64_t trip = 0, cond = 1;
    st = scalar_input(ctx, 0, TC_DTYPE_BIT(TCONV_DTYPE_INT64), &has_trip, &trip);
    if (st == TCONV_OK)
        st = scalar_input(ctx, 1, TC_DTYPE_BIT(TCONV_DTYPE_BOOL), &has_cond, &cond);
    if (st != TCONV_OK)
        return st;
    lr.n_carried = ctx->n_inputs > 2 ? ctx->n_inputs - 2 : 0;
    if (lr.body->n_outputs < 1 + lr.n_carried || ctx->n_outputs + 1 != lr.body->n_outputs)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "the body has %zu outputs; a Loop with %zu loop-carried values and "
                            "%zu outputs needs %zu",
                            lr.body->n_outputs, lr.n_carried, ctx->n_outputs, ctx->n_outputs + 1);
    lr.n_scan = ctx->n_outputs - lr.n_carried;
    loop_state ls = {0};
    st = loop_state_init(ctx, &ls, lr.n_carried ? ctx->inputs + 2 : NULL, lr.n_carried);
    lr.in = calloc(2 + lr.n_carried, sizeof *lr.in);
    lr.results = calloc(1 + lr.n_carried + lr.n_scan, sizeof *lr.results);
    lr.scans = calloc(lr.n_scan ? lr.n_scan : 1, sizeof *lr.scans);
    if (st == TCONV_OK && (!lr.in || !lr.results || !lr.scans))
        st = tc_error_nomem(ctx->err, "Loop");
    if (st == TCONV_OK)
        st = loop_iterations(ctx, &lr, &ls, trip, has_trip, cond != 0);
    if (st == TCONV_OK)
        st = loop_state_output(ctx, &ls);
    for (size_t k = 0; st == TCONV_OK && k < lr.n_scan; k++)
        st = stack_write(ctx, lr.n_carried + k, &lr.scans[k], 0, false,
                         body_output_dtype(ctx, lr.body, 1 + lr.n_carried + k));
    for (size_t k = 0; lr.scans && k < lr.n_scan; k++)
        stack_free(ctx, &lr.scans[k]);
    loop_state_free(ctx, &ls);
    free(lr.in);
    free(lr.results);
    free(lr.scans);
    return st;
}

/* An INTS attribute of Scan with one entry per scan input/output (default 0 each). */
static tconv_status scan_ints(tc_kernel_ctx *ctx, const char *name, size_t n, int64_t *out) {
    bool present;
    const int64_t *v;
    size_t count;
    tconv_status st = tc_node_attr_ints(ctx->node, name, &present, &v, &count, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (present && count != n)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s has %zu entries, expected %zu", name,
                            count, n);
    for (size_t i = 0; i < n; i++)
        out[i] = present ? v[i] : 0;
    return TCONV_OK;
}

typedef struct scan_run {
    const tconv_graph *body;
    size_t n_state, n_in, n_out;
    const tc_rt_tensor *const *inputs; /* states, then scan inputs */
    int64_t *in_axes, *in_dirs, *out_axes, *out_dirs;
    int64_t length;       /* of the scan inputs along their scan axes */
    int64_t steps;        /* iterations: length, or a Scan-8 row's sequence length */
    tc_rt_tensor *slices; /* the current slice of each scan input (session-accounted) */
    tc_rt_tensor *in;
    tc_rt_tensor *results;
    stack_parts *scans;
} scan_run;

/* Normalizes the scan input axes and finds the common sequence length. */
static tconv_status scan_check_inputs(tc_kernel_ctx *ctx, scan_run *sr) {
    for (size_t j = 0; j < sr->n_in; j++) {
        const tc_rt_tensor *x = sr->inputs[sr->n_state + j];
        int axis = 0;
        tconv_status st =
            x ? TCONV_OK
              : tc_error_set(ctx->err, TCONV_ERR_INVALID, "scan input %zu is missing", j);
        if (st == TCONV_OK)
            st = tc_kernel_normalize_axis(ctx, "scan_input_axes", sr->in_axes[j], x->rank, &axis);
        if (st != TCONV_OK)
            return st;
        sr->in_axes[j] = axis;
        if (j == 0)
            sr->length = x->dims[axis];
        else if (x->dims[axis] != sr->length)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "scan input %zu has %lld steps along axis %d, input 0 has %lld", j,
                                (long long)x->dims[axis], axis, (long long)sr->length);
    }
    return TCONV_OK;
}

/* slices[j] = scan input j at index t of its scan axis. */
static tconv_status scan_slice(tc_kernel_ctx *ctx, scan_run *sr, size_t j, int64_t t) {
    const tc_rt_tensor *x = sr->inputs[sr->n_state + j];
    int axis = (int)sr->in_axes[j];
    int64_t dims[TC_MAX_RANK], outer = 1, inner = 1;
    for (int i = 0, k = 0; i < x->rank; i++) {
        if (i != axis)
            dims[k++] = x->dims[i];
        if (i < axis)
            outer *= x->dims[i];
        else if (i > axis)
            inner *= x->dims[i];
    }
    tc_rt_tensor *s = &sr->slices[j];
    tc_budget_release(ctx->budget, s);
    tconv_status st = tc_budget_alloc(ctx->budget, s, x->dtype, x->rank - 1, dims, ctx->err);
    if (st != TCONV_OK)
        return st;
    size_t chunk = (size_t)inner * tc_rt_dtype_size(x->dtype);
    for (int64_t o = 0; o < outer && chunk; o++)
        memcpy((unsigned char *)s->data + (size_t)o * chunk,
               (const unsigned char *)x->data +
                   ((size_t)o * (size_t)sr->length + (size_t)t) * chunk,
               chunk);
    return TCONV_OK;
}

static tconv_status scan_iterations(tc_kernel_ctx *ctx, scan_run *sr, loop_state *ls) {
    tconv_status st = TCONV_OK;
    for (int64_t step = 0; st == TCONV_OK && step < sr->steps; step++) {
        for (size_t j = 0; st == TCONV_OK && j < sr->n_in; j++)
            st = scan_slice(ctx, sr, j, sr->in_dirs[j] ? sr->steps - 1 - step : step);
        if (st != TCONV_OK)
            break;
        for (size_t i = 0; i < sr->n_state; i++)
            sr->in[i] = ls->carried[i];
        for (size_t j = 0; j < sr->n_in; j++)
            sr->in[sr->n_state + j] = sr->slices[j];
        st = tc_kernel_run_subgraph(ctx, sr->body, sr->in, sr->n_state + sr->n_in, sr->results,
                                    sr->n_state + sr->n_out);
        if (st != TCONV_OK)
            break;
        loop_state_take(ctx, ls, sr->results);
        for (size_t k = 0; st == TCONV_OK && k < sr->n_out; k++)
            st = stack_push(ctx, &sr->scans[k], &sr->results[sr->n_state + k]);
        for (size_t k = 0; k < sr->n_state + sr->n_out; k++)
            tc_budget_release(ctx->budget, &sr->results[k]);
    }
    return st;
}

static tconv_status scan_outputs(tc_kernel_ctx *ctx, scan_run *sr, loop_state *ls) {
    tconv_status st = loop_state_output(ctx, ls);
    for (size_t k = 0; st == TCONV_OK && k < sr->n_out; k++) {
        int axis = 0;
        int rank = sr->scans[k].n ? sr->scans[k].items[0].rank + 1 : 1;
        st = tc_kernel_normalize_axis(ctx, "scan_output_axes", sr->out_axes[k], rank, &axis);
        if (st == TCONV_OK)
            st = stack_write(ctx, sr->n_state + k, &sr->scans[k], axis, sr->out_dirs[k] != 0,
                             body_output_dtype(ctx, sr->body, sr->n_state + k));
    }
    return st;
}

static void scan_run_free(tc_kernel_ctx *ctx, scan_run *sr) {
    for (size_t j = 0; sr->slices && j < sr->n_in; j++)
        tc_budget_release(ctx->budget, &sr->slices[j]);
    for (size_t k = 0; sr->scans && k < sr->n_out; k++)
        stack_free(ctx, &sr->scans[k]);
    free(sr->in_axes);
    free(sr->slices);
    free(sr->in);
    free(sr->results);
    free(sr->scans);
}

/* What Scan-8 and Scan-9 read alike: the body, num_scan_inputs, the counts of states, scan
 * inputs and scan outputs (the node's inputs from `first` on are the states, then the scan
 * inputs), and the run's arrays. */
static tconv_status scan_open(tc_kernel_ctx *ctx, scan_run *sr, size_t first) {
    int64_t n_in = 0;
    tconv_status st = body_graph(ctx, &sr->body);
    if (st == TCONV_OK)
        st = tc_node_attr_int(ctx->node, "num_scan_inputs", 0, &n_in, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (n_in < 1 || (size_t)n_in + first > ctx->n_inputs)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "num_scan_inputs = %lld, the node has %zu inputs", (long long)n_in,
                            ctx->n_inputs);
    sr->n_in = (size_t)n_in;
    sr->n_state = ctx->n_inputs - first - sr->n_in;
    if (ctx->n_outputs < sr->n_state || sr->body->n_outputs != ctx->n_outputs)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "the body has %zu outputs, the node %zu (%zu state variables)",
                            sr->body->n_outputs, ctx->n_outputs, sr->n_state);
    sr->n_out = ctx->n_outputs - sr->n_state;
    sr->in_axes = calloc(2 * sr->n_in + 2 * sr->n_out, sizeof *sr->in_axes);
    sr->slices = calloc(sr->n_in, sizeof *sr->slices);
    sr->in = calloc(sr->n_state + sr->n_in, sizeof *sr->in);
    sr->results = calloc(ctx->n_outputs, sizeof *sr->results);
    sr->scans = calloc(sr->n_out ? sr->n_out : 1, sizeof *sr->scans);
    if (!sr->in_axes || !sr->slices || !sr->in || !sr->results || !sr->scans)
        return tc_error_nomem(ctx->err, "Scan");
    sr->in_dirs = sr->in_axes + sr->n_in;
    sr->out_axes = sr->in_dirs + sr->n_in;
    sr->out_dirs = sr->out_axes + sr->n_out;
    return TCONV_OK;
}

/* Scan (opset 9+): runs the body once per step of the scan inputs (sliced along
 * scan_input_axes, walked backwards where scan_input_directions is 1) with the state
 * variables carried; outputs the final states, then the per-step outputs stacked along
 * scan_output_axes (in reverse order where scan_output_directions is 1). */
tconv_status tc_run_scan(tc_kernel_ctx *ctx) {
    scan_run sr = {0};
    loop_state ls = {0};
    tconv_status st = scan_open(ctx, &sr, 0);
    if (st == TCONV_OK)
        st = scan_ints(ctx, "scan_input_axes", sr.n_in, sr.in_axes);
    if (st == TCONV_OK)
        st = scan_ints(ctx, "scan_input_directions", sr.n_in, sr.in_dirs);
    if (st == TCONV_OK)
        st = scan_ints(ctx, "scan_output_axes", sr.n_out, sr.out_axes);
    if (st == TCONV_OK)
        st = scan_ints(ctx, "scan_output_directions", sr.n_out, sr.out_dirs);
    sr.inputs = ctx->inputs;
    if (st == TCONV_OK)
        st = scan_check_inputs(ctx, &sr);
    sr.steps = sr.length;
    if (st == TCONV_OK)
        st = loop_state_init(ctx, &ls, ctx->inputs, sr.n_state);
    if (st == TCONV_OK)
        st = scan_iterations(ctx, &sr, &ls);
    if (st == TCONV_OK)
        st = scan_outputs(ctx, &sr, &ls);
    loop_state_free(ctx, &ls);
    scan_run_free(ctx, &sr);
    return st;
}

/* ---------------------------------------------------------------- Scan-8 */

/* Row b of a [B, ...] tensor as a view (no copy). */
static tc_rt_tensor batch_row(const tc_rt_tensor *t, int64_t b) {
    tc_rt_tensor v = {.dtype = t->dtype, .rank = t->rank - 1};
    v.n_elements = 1;
    for (int i = 1; i < t->rank; i++)
        v.n_elements *= (v.dims[i - 1] = t->dims[i]);
    v.nbytes = (size_t)v.n_elements * tc_rt_dtype_size(t->dtype);
    v.data = v.nbytes ? (unsigned char *)t->data + (size_t)b * v.nbytes : NULL;
    return v;
}

/* Output `index` as [B, dims of `part`...] (allocated, zeroed, on first use); the part goes to
 * row b, at position `pos` of axis 1 when `steps` > 0 (a scan output [B, steps, ...]). */
static tconv_status batch_write(tc_kernel_ctx *ctx, size_t index, int64_t n_batch, int64_t b,
                                int64_t steps, int64_t pos, const tc_rt_tensor *part) {
    tc_rt_tensor *out = &ctx->outputs[index];
    int extra = steps > 0 ? 2 : 1;
    if (out->dtype == TCONV_DTYPE_UNDEFINED) {
        int64_t dims[TC_MAX_RANK];
        if (part->rank + extra > TC_MAX_RANK)
            return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "output %zu has rank > %d", index,
                                TC_MAX_RANK);
        dims[0] = n_batch;
        dims[1] = steps;
        memcpy(dims + extra, part->dims, (size_t)part->rank * sizeof dims[0]);
        tc_rt_tensor *o;
        tconv_status st =
            tc_kernel_alloc_output(ctx, index, part->dtype, part->rank + extra, dims, &o);
        if (st != TCONV_OK)
            return st;
        if (o->nbytes)
            memset(o->data, 0, o->nbytes);
    }
    bool same = out->dtype == part->dtype && out->rank == part->rank + extra;
    for (int i = 0; same && i < part->rank; i++)
        same = out->dims[i + extra] == part->dims[i];
    if (!same)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "output %zu changes dtype or shape between batch rows", index);
    size_t row = (size_t)(b * (steps > 0 ? steps : 1) + pos);
    if (part->nbytes)
        memcpy((unsigned char *)out->data + row * part->nbytes, part->data, part->nbytes);
    return TCONV_OK;
}

/* One batch row of a Scan-8: the Scan-9 loop over views of row b, its results written to row b
 * of the outputs. */
static tconv_status scan8_row(tc_kernel_ctx *ctx, scan_run *sr, const tc_rt_tensor *views,
                              int64_t n_batch, int64_t b) {
    const tc_rt_tensor **ptrs = calloc(sr->n_state + sr->n_in, sizeof *ptrs);
    if (!ptrs)
        return tc_error_nomem(ctx->err, "Scan");
    for (size_t i = 0; i < sr->n_state + sr->n_in; i++)
        ptrs[i] = &views[i];
    sr->inputs = ptrs;
    loop_state ls = {0};
    tconv_status st = loop_state_init(ctx, &ls, ptrs, sr->n_state);
    if (st == TCONV_OK)
        st = scan_iterations(ctx, sr, &ls);
    for (size_t i = 0; st == TCONV_OK && i < sr->n_state; i++)
        st = batch_write(ctx, i, n_batch, b, 0, 0, &ls.carried[i]);
    for (size_t k = 0; k < sr->n_out; k++) {
        for (size_t t = 0; st == TCONV_OK && t < sr->scans[k].n; t++)
            st = batch_write(ctx, sr->n_state + k, n_batch, b, sr->length, (int64_t)t,
                             &sr->scans[k].items[t]);
        stack_free(ctx, &sr->scans[k]);
    }
    loop_state_free(ctx, &ls);
    free(ptrs);
    sr->inputs = NULL;
    return st;
}

/* Scan-8: inputs [B, ...] (states) and [B, T, ...] (scan inputs, scanned along axis 1, backwards
 * where `directions` is 1), each batch row scanned on its own for sequence_lens[b] steps (T when
 * absent); outputs [B, ...] and [B, T, ...], zero past a row's sequence length. */
tconv_status tc_run_scan_8(tc_kernel_ctx *ctx) {
    scan_run sr = {0};
    tconv_status st = scan_open(ctx, &sr, 1);
    if (st != TCONV_OK) {
        scan_run_free(ctx, &sr);
        return st;
    }
    size_t n_vals = sr.n_state + sr.n_in;
    const tc_rt_tensor *lens = tc_kernel_input(ctx, 0);
    st = tc_kernel_check_dtype(ctx, 0, TC_DTYPE_BIT(TCONV_DTYPE_INT64));
    int64_t n_batch = -1, length = -1;
    for (size_t i = 0; st == TCONV_OK && i < n_vals; i++) {
        const tc_rt_tensor *x = tc_kernel_input(ctx, 1 + i);
        bool scan = i >= sr.n_state;
        if (!x || x->rank < (scan ? 2 : 1)) {
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID,
                              "input %zu must be present with a batch axis%s", 1 + i,
                              scan ? " and a sequence axis" : "");
            break;
        }
        if (n_batch < 0)
            n_batch = x->dims[0];
        if (scan && length < 0)
            length = x->dims[1];
        if (x->dims[0] != n_batch || (scan && x->dims[1] != length))
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID,
                              "input %zu disagrees on the batch or sequence size", 1 + i);
    }
    if (st == TCONV_OK && lens && lens->n_elements != n_batch)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "sequence_lens has %lld entries, not %lld",
                          (long long)lens->n_elements, (long long)n_batch);
    tc_rt_tensor *views = calloc(n_vals, sizeof *views);
    if (st == TCONV_OK && !views)
        st = tc_error_nomem(ctx->err, "Scan");
    sr.length = length;
    if (st == TCONV_OK)
        st = scan_ints(ctx, "directions", sr.n_in, sr.in_dirs);
    for (int64_t b = 0; st == TCONV_OK && b < n_batch; b++) {
        sr.steps = lens ? tc_rt_get_i64(lens, b) : length;
        if (sr.steps < 0 || sr.steps > length)
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID,
                              "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                              (long long)sr.steps, (long long)length);
        for (size_t i = 0; st == TCONV_OK && i < n_vals; i++)
            views[i] = batch_row(tc_kernel_input(ctx, 1 + i), b);
        if (st == TCONV_OK)
            st = scan8_row(ctx, &sr, views, n_batch, b);
    }
    /* What no batch row wrote (no rows, or no row ran a step): states as their inputs (no
     * rows), scan outputs [B, T, the body output's declared dims] of zeros. */
    for (size_t i = 0; st == TCONV_OK && i < ctx->n_outputs; i++) {
        if (ctx->outputs[i].dtype != TCONV_DTYPE_UNDEFINED)
            continue;
        if (i < sr.n_state) {
            const tc_rt_tensor *x = tc_kernel_input(ctx, 1 + i);
            st = tc_kernel_copy_to_output(ctx, i, x, x->rank, x->dims);
            continue;
        }
        int64_t dims[TC_MAX_RANK] = {n_batch, length}, body_dims[TC_MAX_RANK];
        int rank = 0;
        const tconv_value *v = sr.body->outputs[i].value;
        if (!v || !static_dims(tc_type_seen(ctx->types, v), body_dims, &rank) ||
            rank + 2 > TC_MAX_RANK)
            rank = 0;
        memcpy(dims + 2, body_dims, (size_t)rank * sizeof dims[0]);
        tc_rt_tensor *o;
        st = tc_kernel_alloc_output(ctx, i, body_output_dtype(ctx, sr.body, i), rank + 2, dims, &o);
        if (st == TCONV_OK && o->nbytes)
            memset(o->data, 0, o->nbytes);
    }
    free(views);
    scan_run_free(ctx, &sr);
    return st;
}
