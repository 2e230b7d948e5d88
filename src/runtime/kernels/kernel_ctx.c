/* The kernel's side of its context: outputs, scratch memory, kept node data and work are the
 * budget's (ctx->budget, runtime/budget), constant inputs and subgraph runs the executor's
 * (ctx->host). Nothing here calls into the session. */
#include "runtime/kernels/kernel_util.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/compute/compute.h"

/* Adds the work of ctx's node, now that its first output's shape is known, to the run's work,
 * and refuses the node (before it computes) when that passes the work limit. */
static tconv_status count_work(tc_kernel_ctx *ctx, int out_rank, const int64_t *out_dims) {
    if (!ctx->budget)
        return TCONV_OK;
    tc_work_shapes w = {0};
    w.n_in = ctx->n_inputs < TC_WORK_MAX_INPUTS ? ctx->n_inputs : TC_WORK_MAX_INPUTS;
    for (size_t i = 0; i < w.n_in; i++) {
        const tc_rt_tensor *t = ctx->inputs[i];
        w.in_rank[i] = t ? t->rank : -1;
        w.in_dims[i] = t ? t->dims : NULL;
    }
    w.out_rank = out_rank;
    w.out_dims = out_dims;
    uint64_t work = 0;
    /* a prepared kernel's own (it read its attributes once), else the op table's; a prepared
     * kernel that gave none is charged the elements it moves, never nothing */
    bool known = ctx->work   ? ctx->work(ctx->params, &w, &work)
                 : ctx->node ? tc_op_work(ctx->node, &w, &work)
                             : tc_work_elements_moved(&w, &work);
    if (!known)
        return TCONV_OK;
    return tc_budget_charge_work(ctx->budget, work, ctx->err);
}

static tconv_status alloc_output(tc_kernel_ctx *ctx, size_t index, tconv_dtype dtype, int rank,
                                 const int64_t *dims, bool zero, tc_rt_tensor **out) {
    if (index >= ctx->n_outputs)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "kernel allocates output %zu of %zu", index,
                            ctx->n_outputs);
    tc_rt_tensor *t = &ctx->outputs[index];
    tc_budget_release(ctx->budget, t);
    tconv_status st = TCONV_OK;
    if (index == 0 && (st = count_work(ctx, rank, dims)) != TCONV_OK)
        return st;
    st = zero ? tc_budget_alloc(ctx->budget, t, dtype, rank, dims, ctx->err)
              : tc_budget_alloc_uninit(ctx->budget, t, dtype, rank, dims, ctx->err);
    if (st != TCONV_OK)
        return tc_error_prefix(ctx->err, st, "output %zu: ", index);
    *out = t;
    return TCONV_OK;
}

tconv_status tc_kernel_alloc_output(tc_kernel_ctx *ctx, size_t index, tconv_dtype dtype, int rank,
                                    const int64_t *dims, tc_rt_tensor **out) {
    return alloc_output(ctx, index, dtype, rank, dims, true, out);
}

tconv_status tc_kernel_alloc_output_uninit(tc_kernel_ctx *ctx, size_t index, tconv_dtype dtype,
                                           int rank, const int64_t *dims, tc_rt_tensor **out) {
    return alloc_output(ctx, index, dtype, rank, dims, false, out);
}

tconv_status tc_kernel_copy_to_output(tc_kernel_ctx *ctx, size_t index, const tc_rt_tensor *src,
                                      int rank, const int64_t *dims) {
    tc_rt_tensor *out;
    tconv_status st = tc_kernel_alloc_output(ctx, index, src->dtype, rank, dims, &out);
    if (st != TCONV_OK)
        return st;
    if (out->n_elements != src->n_elements)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "output has %lld elements, input has %lld",
                            (long long)out->n_elements, (long long)src->n_elements);
    if (src->nbytes)
        memcpy(out->data, src->data, src->nbytes);
    return TCONV_OK;
}

tconv_status tc_kernel_forward_to_output(tc_kernel_ctx *ctx, size_t index, const tc_rt_tensor *src,
                                         int rank, const int64_t *dims) {
    int64_t n, kept[TC_MAX_RANK];
    tc_rt_tensor *donor = ctx->donor;
    if (!donor || donor != src || index != 0 || index >= ctx->n_outputs || rank < 0 ||
        rank > TC_MAX_RANK || !tc_shape_elements(dims, rank, &n) || n != src->n_elements)
        return tc_kernel_copy_to_output(ctx, index, src, rank, dims);
    tconv_status st = count_work(ctx, rank, dims);
    if (st != TCONV_OK)
        return st;
    memcpy(kept, dims, (size_t)rank * sizeof *kept); /* dims may be src's own */
    tc_rt_tensor *out = &ctx->outputs[0];
    tc_budget_release(ctx->budget, out);
    *out = *donor; /* its bytes stay counted as live: they only change slots */
    memset(donor, 0, sizeof *donor);
    out->rank = rank;
    memcpy(out->dims, kept, (size_t)rank * sizeof *kept);
    return TCONV_OK;
}

const tc_rt_tensor *tc_kernel_input(const tc_kernel_ctx *ctx, size_t index) {
    return index < ctx->n_inputs ? ctx->inputs[index] : NULL;
}

tconv_status tc_kernel_scratch(tc_kernel_ctx *ctx, size_t bytes, tc_rt_tensor *buf) {
    return tc_budget_scratch(ctx->budget, bytes, buf, ctx->err);
}

void tc_kernel_scratch_release(tc_kernel_ctx *ctx, tc_rt_tensor *buf) {
    tc_budget_scratch_release(ctx->budget, buf);
}

bool tc_kernel_input_is_constant(const tc_kernel_ctx *ctx, size_t index) {
    return ctx->host && ctx->host->input_is_constant(ctx, index);
}

tconv_status tc_kernel_run_subgraph(tc_kernel_ctx *ctx, const tconv_graph *graph,
                                    const tc_rt_tensor *inputs, size_t n_inputs,
                                    tc_rt_tensor *outputs, size_t n_outputs) {
    if (!ctx->host)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "subgraph '%s' run outside a session",
                            graph->name ? graph->name : "");
    return ctx->host->run_subgraph(ctx, graph, inputs, n_inputs, outputs, n_outputs);
}

void *tc_kernel_cache_find(const tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                           size_t nbytes) {
    const tc_node_cache *c = ctx->cache;
    if (!c || !c->data || c->nbytes != nbytes || c->key.source != key->source ||
        memcmp(c->key.layout, key->layout, sizeof key->layout) != 0)
        return NULL;
    return c->data;
}

tconv_status tc_kernel_cache_store(tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                                   size_t nbytes, void **data) {
    tc_node_cache *c = ctx->cache;
    *data = NULL;
    if (!c || !ctx->budget || nbytes == 0 || nbytes > (size_t)INT64_MAX - TC_SESSION_ALIGN)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "no node cache for %zu bytes", nbytes);
    tc_node_block_free(ctx->budget, &c->data, &c->nbytes);
    tconv_status st =
        tc_budget_alloc_bytes(ctx->budget, nbytes, "kept node data", &c->data, ctx->err);
    if (st != TCONV_OK)
        return st;
    c->key = *key;
    c->nbytes = nbytes;
    ctx->budget->stats.constant_bytes += nbytes;
    *data = c->data;
    return TCONV_OK;
}

atomic_llong tc_test_shape_tables_made = 0;

tconv_status tc_kernel_shape_table(tc_kernel_ctx *ctx, const int64_t *made_for, size_t n,
                                   size_t nbytes, void **data, bool *fresh) {
    tc_node_cache *c = ctx->cache;
    size_t head = n * sizeof *made_for;
    *data = NULL;
    *fresh = true;
    if (!c || !ctx->budget)
        return TCONV_OK;
    if (c->shape_table && c->shape_table_bytes == head + nbytes &&
        memcmp(c->shape_table, made_for, head) == 0) {
        *data = (unsigned char *)c->shape_table + head;
        *fresh = false;
        return TCONV_OK;
    }
    tc_node_block_free(ctx->budget, &c->shape_table, &c->shape_table_bytes);
    if (nbytes > (size_t)INT64_MAX - TC_SESSION_ALIGN - head)
        return tc_error_set(ctx->err, TCONV_ERR_LIMIT, "a shape table of %zu bytes", nbytes);
    tconv_status st = tc_budget_alloc_bytes(ctx->budget, head + nbytes, "a kept shape table",
                                            &c->shape_table, ctx->err);
    if (st != TCONV_OK)
        return st;
    memcpy(c->shape_table, made_for, head);
    c->shape_table_bytes = head + nbytes;
    atomic_fetch_add_explicit(&tc_test_shape_tables_made, 1, memory_order_relaxed);
    ctx->budget->stats.constant_bytes += head + nbytes;
    *data = (unsigned char *)c->shape_table + head;
    return TCONV_OK;
}

void *tc_kernel_params_alloc(const tc_kernel_prepare_ctx *pc, size_t size) {
    void *p = tc_arena_calloc(pc->arena, 1, size);
    if (!p)
        tc_error_nomem(pc->err, "a kernel's parameters");
    return p;
}
