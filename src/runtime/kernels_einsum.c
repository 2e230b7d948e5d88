/* Einsum: any contraction the equation describes (products, batched matmuls, transposes,
 * diagonals, sums over labels, ellipsis broadcasting). Each output element sums, over the
 * labels the output drops, the product of the operands' elements; operands are read through
 * per-label strides (0 where a dim of 1 broadcasts), so no operand is copied. Floats compute in
 * double, integers in int64. Threaded over output elements. */
#include "ir/einsum_equation.h"
#include "runtime/kernel_util.h"
#include "runtime/tensor_copy.h"

#include <stdlib.h>
#include <string.h>

typedef struct einsum_plan {
    int n_ops;
    const tc_rt_tensor *ops[TC_EINSUM_MAX_OPERANDS];
    int out_rank, sum_rank;
    int64_t out_dims[TCONV_MAX_RANK], sum_dims[TC_EINSUM_LABELS];
    /* element strides of each operand along each output / summed label */
    int64_t out_strides[TC_EINSUM_MAX_OPERANDS][TCONV_MAX_RANK];
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
    int64_t strides[TCONV_MAX_RANK], s = 0;
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

tconv_status tc_run_einsum(tc_kernel_ctx *ctx) {
    const uint32_t mask = TCONV_DTYPES_NUMERIC | TCONV_DTYPE_BIT(TCONV_DTYPE_DOUBLE);
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
    p.is_float = d == TCONV_DTYPE_FLOAT || d == TCONV_DTYPE_DOUBLE || d == TCONV_DTYPE_FLOAT16;
    p.all_f32 = d == TCONV_DTYPE_FLOAT;
    int64_t tasks = (p.y->n_elements + EINSUM_CHUNK - 1) / EINSUM_CHUNK;
    double work = (double)p.y->n_elements * (double)p.sum_count * (double)p.n_ops;
    tc_parallel_for(ctx->pool, tc_parallel_threads_for_work(ctx->n_threads, work), tasks,
                    einsum_chunk, &p);
    return TCONV_OK;
}
