/* Einsum: any contraction the equation describes (products, batched matmuls, transposes,
 * diagonals, sums over labels, ellipsis broadcasting). Each output element sums, over the
 * labels the output drops, the product of the operands' elements; operands are read through
 * per-label strides (0 where a dim of 1 broadcasts), so no operand is copied. Floats compute in
 * double, integers in int64. Threaded over output elements.
 * Two float32 operands whose labels are each batch (both inputs and the output), rows (first
 * input and output), columns (second input and output) or contracted (both inputs only), as in
 * "bij,bjk->bik" or "bhwc,cd->bhwd", are a batched matrix product instead: the operands are
 * copied into [batch, rows, k] and [batch, k, columns] order, multiplied by the GEMM, and the
 * product copied into the output's label order. */
#include "ir/einsum_equation.h"
#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct einsum_plan {
    int n_ops;
    const tc_rt_tensor *ops[TC_EINSUM_MAX_OPERANDS];
    int out_rank, sum_rank;
    int64_t out_dims[TC_MAX_RANK], sum_dims[TC_EINSUM_LABELS];
    /* element strides of each operand along each output / summed label */
    int64_t out_strides[TC_EINSUM_MAX_OPERANDS][TC_MAX_RANK];
    int64_t sum_strides[TC_EINSUM_MAX_OPERANDS][TC_EINSUM_LABELS];
    int64_t sum_count;
    bool is_float, all_f32; /* all_f32: float32 operands, read without conversion */
    tc_rt_tensor *y;
} einsum_plan;

/* Sizes of every label (a dim of 1 broadcasts against a larger one). */
static tconv_status label_sizes(tc_kernel_ctx *ctx, const tc_einsum *e, const einsum_plan *p,
                                int64_t *size) {
    for (int l = 0; l < TC_EINSUM_LABELS; l++)
        size[l] = -1;
    for (int i = 0; i < e->n_operands; i++) {
        for (int d = 0; d < e->ranks[i]; d++) {
            int l = e->labels[i][d];
            int64_t n = p->ops[i]->dims[d];
            /* a label repeated in one operand walks its diagonal: numpy wants equal dims */
            for (int k = 0; k < d; k++) {
                if (e->labels[i][k] == l && p->ops[i]->dims[k] != n)
                    return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                        "einsum: operand %d repeats a label over dims %d and %d "
                                        "of sizes %lld and %lld",
                                        i, k, d, (long long)p->ops[i]->dims[k], (long long)n);
            }
            if (size[l] < 0 || size[l] == 1)
                size[l] = n;
            else if (n != 1 && n != size[l])
                return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                    "einsum: operand %d dim %d is %lld, the label has %lld", i, d,
                                    (long long)n, (long long)size[l]);
        }
    }
    return TCONV_OK;
}

/* Stride of operand i along label l: the sum over its dims with that label (a repeated label
 * walks the diagonal); 0 where the dim is 1 and the label is larger. */
static int64_t label_stride(const tc_einsum *e, const einsum_plan *p, int i, int l, int64_t size) {
    int64_t strides[TC_MAX_RANK], s = 0;
    tc_shape_strides(p->ops[i]->rank, p->ops[i]->dims, strides);
    for (int d = 0; d < e->ranks[i]; d++) {
        if (e->labels[i][d] == l && !(p->ops[i]->dims[d] == 1 && size > 1))
            s += strides[d];
    }
    return s;
}

static tconv_status plan_einsum(tc_kernel_ctx *ctx, const tc_einsum *e, einsum_plan *p) {
    int64_t size[TC_EINSUM_LABELS];
    tconv_status st = label_sizes(ctx, e, p, size);
    if (st != TCONV_OK)
        return st;
    bool in_out[TC_EINSUM_LABELS] = {false};
    p->out_rank = e->out_rank;
    for (int o = 0; o < e->out_rank; o++) {
        int l = e->out[o];
        in_out[l] = true;
        p->out_dims[o] = size[l];
        for (int i = 0; i < p->n_ops; i++)
            p->out_strides[i][o] = label_stride(e, p, i, l, size[l]);
    }
    p->sum_rank = 0;
    p->sum_count = 1;
    for (int l = 0; l < TC_EINSUM_LABELS; l++) {
        if (size[l] < 0 || in_out[l])
            continue;
        int s = p->sum_rank++;
        p->sum_dims[s] = size[l];
        p->sum_count *= size[l];
        for (int i = 0; i < p->n_ops; i++)
            p->sum_strides[i][s] = label_stride(e, p, i, l, size[l]);
    }
    return TCONV_OK;
}

/* Output element `index`: the sum over the summed labels. */
static void einsum_element(const einsum_plan *p, int64_t index) {
    int64_t base[TC_EINSUM_MAX_OPERANDS] = {0}, rest = index;
    for (int o = p->out_rank - 1; o >= 0; o--) {
        int64_t k = rest % p->out_dims[o];
        rest /= p->out_dims[o];
        for (int i = 0; i < p->n_ops; i++)
            base[i] += k * p->out_strides[i][o];
    }
    int64_t pos[TC_EINSUM_LABELS] = {0}, off[TC_EINSUM_MAX_OPERANDS];
    memcpy(off, base, sizeof off);
    double fsum = 0.0;
    int64_t isum = 0;
    for (int64_t s = 0; s < p->sum_count; s++) {
        if (p->all_f32) {
            double v = 1.0;
            for (int i = 0; i < p->n_ops; i++)
                v *= ((const float *)p->ops[i]->data)[off[i]];
            fsum += v;
        } else if (p->is_float) {
            double v = 1.0;
            for (int i = 0; i < p->n_ops; i++)
                v *= tc_rt_get_f64(p->ops[i], off[i]);
            fsum += v;
        } else {
            uint64_t v = 1;
            for (int i = 0; i < p->n_ops; i++)
                v *= (uint64_t)tc_rt_get_i64(p->ops[i], off[i]);
            isum = (int64_t)((uint64_t)isum + v);
        }
        for (int d = p->sum_rank - 1; d >= 0; d--) {
            for (int i = 0; i < p->n_ops; i++)
                off[i] += p->sum_strides[i][d];
            if (++pos[d] < p->sum_dims[d])
                break;
            for (int i = 0; i < p->n_ops; i++)
                off[i] -= p->sum_strides[i][d] * p->sum_dims[d];
            pos[d] = 0;
        }
    }
    if (p->is_float)
        tc_store_f64(p->y->dtype, p->y->data, index, fsum);
    else
        tc_store_i64(p->y->dtype, p->y->data, index, isum);
}

#define EINSUM_CHUNK 256

static void einsum_chunk(void *arg, int64_t task, int worker) {
    (void)worker;
    const einsum_plan *p = arg;
    int64_t end = (task + 1) * EINSUM_CHUNK;
    if (end > p->y->n_elements)
        end = p->y->n_elements;
    for (int64_t i = task * EINSUM_CHUNK; i < end; i++)
        einsum_element(p, i);
}

/* ================================================================ the GEMM form */

enum { ROLE_BATCH, ROLE_ROWS, ROLE_COLS, ROLE_SUM, ROLE_COUNT };

typedef struct gemm_form {
    int n[ROLE_COUNT];
    int labels[ROLE_COUNT][TC_MAX_RANK]; /* label codes by role, in first-seen order */
    int64_t size[ROLE_COUNT];            /* product of the role's label sizes */
} gemm_form;

static int find_label(const int *labels, int n, int l) {
    for (int i = 0; i < n; i++) {
        if (labels[i] == l)
            return i;
    }
    return -1;
}

/* Classifies every label; false when the equation is not a plain batched matrix product
 * (a label repeated in a term, only in one input, or a dim that broadcasts). */
static bool gemm_form_of(const tc_einsum *e, const tc_rt_tensor *const *ops, gemm_form *f,
                         int64_t *size) {
    memset(f, 0, sizeof *f);
    int all[2 * TC_MAX_RANK], n_all = 0;
    for (int i = 0; i < 2; i++) {
        for (int d = 0; d < e->ranks[i]; d++) {
            int l = e->labels[i][d];
            if (find_label(e->labels[i], d, l) >= 0)
                return false; /* repeated within a term: a diagonal */
            int64_t n = ops[i]->dims[d];
            if (find_label(all, n_all, l) < 0) {
                all[n_all++] = l;
                size[l] = n;
            } else if (size[l] != n) {
                return false; /* broadcasting */
            }
        }
    }
    for (int k = 0; k < n_all; k++) {
        int l = all[k];
        bool in_a = find_label(e->labels[0], e->ranks[0], l) >= 0;
        bool in_b = find_label(e->labels[1], e->ranks[1], l) >= 0;
        bool in_out = find_label(e->out, e->out_rank, l) >= 0;
        int role = in_a && in_b ? (in_out ? ROLE_BATCH : ROLE_SUM)
                   : in_out     ? (in_a ? ROLE_ROWS : ROLE_COLS)
                                : -1;
        if (role < 0)
            return false; /* summed within one operand */
        f->labels[role][f->n[role]++] = l;
    }
    for (int r = 0; r < ROLE_COUNT; r++) {
        f->size[r] = 1;
        for (int k = 0; k < f->n[r]; k++)
            f->size[r] *= size[f->labels[r][k]];
    }
    return true;
}

/* dst = src's elements with its dims reordered as the label list `order` (n labels): src has
 * labels src_labels (src_rank of them). */
static void gather_by_labels(const tc_rt_tensor *src, const int *src_labels, const int *order,
                             int n, tc_rt_tensor *dst) {
    int64_t strides[TC_MAX_RANK];
    tc_shape_strides(src->rank, src->dims, strides);
    tc_strided_view v;
    v.rank = n;
    v.offset = 0;
    for (int k = 0; k < n; k++) {
        int d = find_label(src_labels, src->rank, order[k]);
        v.dims[k] = src->dims[d];
        v.strides[k] = strides[d];
    }
    if (n == 0) { /* a scalar */
        v.rank = 0;
    }
    tc_strided_copy(&v, src, dst);
}

/* A float32 tensor over `data` with the dims of the labels in `order`. */
static tc_rt_tensor label_tensor(float *data, const int *order, int n, const int64_t *size) {
    tc_rt_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = TCONV_DTYPE_FLOAT;
    t.rank = n;
    t.n_elements = 1;
    for (int k = 0; k < n; k++) {
        t.dims[k] = size[order[k]];
        t.n_elements *= t.dims[k];
    }
    t.data = data;
    t.nbytes = (size_t)t.n_elements * sizeof(float);
    return t;
}

static int concat_labels(const gemm_form *f, int r0, int r1, int r2, int *out) {
    int n = 0, roles[3] = {r0, r1, r2};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < f->n[roles[k]]; i++)
            out[n++] = f->labels[roles[k]][i];
    }
    return n;
}

static tconv_status einsum_gemm(tc_kernel_ctx *ctx, const tc_einsum *e, const gemm_form *f,
                                const int64_t *size, const tc_rt_tensor *const *ops,
                                tc_rt_tensor *y) {
    int a_order[TC_MAX_RANK * 2], b_order[TC_MAX_RANK * 2], c_order[TC_MAX_RANK * 2];
    int na = concat_labels(f, ROLE_BATCH, ROLE_ROWS, ROLE_SUM, a_order);
    int nb = concat_labels(f, ROLE_BATCH, ROLE_SUM, ROLE_COLS, b_order);
    int nc = concat_labels(f, ROLE_BATCH, ROLE_ROWS, ROLE_COLS, c_order);
    int64_t batch = f->size[ROLE_BATCH], m = f->size[ROLE_ROWS], n = f->size[ROLE_COLS],
            k = f->size[ROLE_SUM];
    size_t floats = (size_t)(batch * (m * k + k * n + m * n));
    tc_rt_tensor buf_mem;
    tconv_status buf_mem_st =
        tc_kernel_scratch(ctx, (floats ? floats : 1) * sizeof(float), &buf_mem);
    if (buf_mem_st != TCONV_OK)
        return tc_error_prefix(ctx->err, buf_mem_st, "einsum operands: ");
    float *buf = buf_mem.data;
    float *a = buf, *b = a + batch * m * k, *c = b + batch * k * n;
    tc_rt_tensor ta = label_tensor(a, a_order, na, size);
    tc_rt_tensor tb = label_tensor(b, b_order, nb, size);
    tc_rt_tensor tcm = label_tensor(c, c_order, nc, size);
    gather_by_labels(ops[0], e->labels[0], a_order, na, &ta);
    gather_by_labels(ops[1], e->labels[1], b_order, nb, &tb);
    tconv_status st = TCONV_OK;
    for (int64_t i = 0; i < batch && st == TCONV_OK; i++) {
        tc_sgemm_op op = {.m = m,
                          .n = n,
                          .k = k,
                          .alpha = 1.0f,
                          .a = a + i * m * k,
                          .lda = k,
                          .b = b + i * k * n,
                          .ldb = n,
                          .c = c + i * m * n,
                          .ldc = n};
        if (k == 0)
            memset(op.c, 0, (size_t)(m * n) * sizeof(float));
        else
            st = tc_sgemm(&op, ctx->pool, ctx->n_threads, ctx->err);
    }
    if (st == TCONV_OK)
        gather_by_labels(&tcm, c_order, e->out, e->out_rank, y);
    tc_kernel_scratch_release(ctx, &buf_mem);
    return st;
}

tconv_status tc_run_einsum(tc_kernel_ctx *ctx) {
    const uint32_t mask = TC_DTYPES_NUMERIC | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE);
    einsum_plan p;
    memset(&p, 0, sizeof p);
    p.n_ops = (int)ctx->n_inputs;
    if (p.n_ops > TC_EINSUM_MAX_OPERANDS)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED, "einsum of %d operands (at most %d)",
                            p.n_ops, TC_EINSUM_MAX_OPERANDS);
    int ranks[TC_EINSUM_MAX_OPERANDS];
    for (int i = 0; i < p.n_ops; i++) {
        tconv_status st = tc_kernel_require_input(ctx, (size_t)i, &p.ops[i]);
        if (st == TCONV_OK)
            st = tc_kernel_check_dtype(ctx, (size_t)i, mask);
        if (st == TCONV_OK && p.ops[i]->dtype != p.ops[0]->dtype)
            st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "einsum operands differ in dtype");
        if (st != TCONV_OK)
            return st;
        ranks[i] = p.ops[i]->rank;
    }
    const char *equation;
    tc_einsum e;
    tconv_status st = tc_node_attr_string(ctx->node, "equation", "", &equation, ctx->err);
    if (st == TCONV_OK)
        st = tc_einsum_parse(equation, p.n_ops, ranks, &e, ctx->err);
    if (st == TCONV_OK)
        st = plan_einsum(ctx, &e, &p);
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, p.ops[0]->dtype, p.out_rank, p.out_dims, &p.y);
    if (st != TCONV_OK || p.y->n_elements == 0)
        return st;
    tconv_dtype d = p.ops[0]->dtype;
    gemm_form form;
    int64_t size[TC_EINSUM_LABELS];
    if (d == TCONV_DTYPE_FLOAT && p.n_ops == 2 && gemm_form_of(&e, p.ops, &form, size))
        return einsum_gemm(ctx, &e, &form, size, p.ops, p.y);
    p.is_float = d == TCONV_DTYPE_FLOAT || d == TCONV_DTYPE_DOUBLE || d == TCONV_DTYPE_FLOAT16;
    p.all_f32 = d == TCONV_DTYPE_FLOAT;
    int64_t tasks = (p.y->n_elements + EINSUM_CHUNK - 1) / EINSUM_CHUNK;
    double work = (double)p.y->n_elements * (double)p.sum_count * (double)p.n_ops;
    tc_parallel_for(ctx->pool, tc_parallel_threads_for_work(ctx->pool, ctx->n_threads, work), tasks,
                    einsum_chunk, &p);
    return TCONV_OK;
}
