/* Operands, scratch and kept packed weights of the convolution kernels (conv_common.h). */
#include "runtime/conv_common.h"

#include <stdlib.h>
#include <string.h>

#include "ir/conv_transpose_geometry.h"
#include "runtime/kernel_util.h"

void tc_conv_scratch_release(tc_kernel_ctx *ctx, tc_conv_scratch *s) {
    tc_kernel_scratch_release(ctx, &s->memory);
}

tconv_status tc_conv_scratch_reserve(tc_kernel_ctx *ctx, tc_conv_scratch *s, int n_workers,
                                     int64_t col_floats, tc_gemm_isa isa, int64_t m, int64_t n,
                                     int64_t k) {
    size_t gemm_floats = tc_gemm_workspace_floats(isa, m, n, k);
    size_t per_worker = (size_t)col_floats + gemm_floats;
    tconv_status st =
        tc_kernel_scratch(ctx, (size_t)n_workers * per_worker * sizeof(float), &s->memory);
    if (st != TCONV_OK)
        return st;
    for (int i = 0; i < n_workers; i++) {
        tc_conv_worker_scratch *w = &s->workers[i];
        float *base = (float *)s->memory.data + (size_t)i * per_worker;
        w->col = col_floats > 0 ? base : NULL;
        tc_gemm_workspace_init(&w->gemm, isa);
        tc_gemm_workspace_lend(&w->gemm, base + col_floats, gemm_floats);
    }
    return TCONV_OK;
}

tconv_status tc_conv_packed_weights(tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                                    size_t bytes, float **out, bool *fresh, tc_rt_tensor *scratch) {
    memset(scratch, 0, sizeof *scratch);
    *fresh = true;
    if (tc_kernel_input_is_constant(ctx, 1)) {
        *out = tc_kernel_cache_find(ctx, key, bytes);
        if (*out) {
            *fresh = false;
            return TCONV_OK;
        }
        void *data;
        tconv_status st = tc_kernel_cache_store(ctx, key, bytes, &data);
        *out = data;
        return st;
    }
    tconv_status st = tc_kernel_scratch(ctx, bytes, scratch);
    *out = scratch->data;
    return st;
}

tconv_status tc_conv_read_operands(tc_kernel_ctx *ctx, tc_conv_operands *ops) {
    tconv_status st;
    if ((st = tc_kernel_require_input(ctx, 0, &ops->x)) ||
        (st = tc_kernel_require_input(ctx, 1, &ops->w)) ||
        (st = tc_kernel_check_dtype(ctx, 0, TCONV_DTYPES_FLOAT | TCONV_DTYPES_DOUBLE)))
        return st;
    ops->b = tc_kernel_input(ctx, 2);
    /* W and B: X's type (float16/bfloat16 arrive widened to float, see session_half.c) */
    uint32_t same = TCONV_DTYPE_BIT(ops->x->dtype);
    if ((st = tc_kernel_check_dtype(ctx, 1, same)) || (st = tc_kernel_check_dtype(ctx, 2, same)))
        return st;
    if (ops->x->rank < 3 || ops->x->rank - 2 > TCONV_MAX_SPATIAL)
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "X has rank %d; 3 to %d (N, C and 1 to %d spatial axes) are "
                            "supported",
                            ops->x->rank, TCONV_MAX_SPATIAL + 2, TCONV_MAX_SPATIAL);
    if (ops->w->rank != ops->x->rank)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "W has rank %d but X has rank %d",
                            ops->w->rank, ops->x->rank);
    ops->spatial_rank = ops->x->rank - 2;
    return TCONV_OK;
}

tconv_status tc_conv_check_bias(tc_kernel_ctx *ctx, const tc_rt_tensor *b, int64_t c_out) {
    if (b && (b->rank != 1 || b->dims[0] != c_out))
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "B must be 1-D with %lld elements (the output channels), has "
                            "rank %d and %lld elements",
                            (long long)c_out, b->rank, (long long)b->n_elements);
    return TCONV_OK;
}

tconv_status tc_conv_prepare(const tc_kernel_prepare_ctx *pc, tc_conv_attr_reader read, size_t size,
                             tc_kernel_fn run, tc_kernel_work_fn work,
                             tc_kernel_prepared *prepared) {
    tc_conv_rank_attrs *out = tc_kernel_params_alloc(pc, sizeof *out);
    void *attrs = malloc(size); /* kept only where the read succeeds */
    if (!out || !attrs) {
        free(attrs);
        return tc_error_nomem(pc->err, "a kernel's parameters");
    }
    *prepared = (tc_kernel_prepared){.run = run, .params = out, .work = work};
    tconv_status st = TCONV_OK;
    for (int r = 1; r <= TCONV_MAX_SPATIAL && st == TCONV_OK; r++) {
        tc_error err;
        tc_error_clear(&err);
        memset(attrs, 0, size);
        out->status[r] = read(pc->node, r, attrs, &err);
        if (out->status[r] == TCONV_OK)
            out->attrs[r] = tc_arena_memdup(pc->arena, attrs, size);
        else
            out->message[r] = tc_arena_strdup(pc->arena, err.message);
        if (!out->attrs[r] && !out->message[r])
            st = tc_error_nomem(pc->err, "a kernel's parameters");
    }
    free(attrs);
    return st;
}

tconv_status tc_conv_rank_attrs_get(const tc_kernel_ctx *ctx, const tc_conv_rank_attrs *r,
                                    int spatial_rank, const void **out) {
    if (spatial_rank < 1 || spatial_rank > TCONV_MAX_SPATIAL || !r->attrs[spatial_rank])
        return tc_error_set(ctx->err, r->status[spatial_rank], "%s", r->message[spatial_rank]);
    *out = r->attrs[spatial_rank];
    return TCONV_OK;
}
