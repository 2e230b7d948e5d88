/* Numpy-style broadcasting: shape rule, strides and a merged-axes row iterator. */
#include "runtime/compute/broadcast.h"
#include "ir/shape_rules.h"

#include <string.h>

tconv_status tc_broadcast_shape(size_t n, const int *ranks, const int64_t *const *dims,
                                int *out_rank, int64_t *out_dims, tc_error *err) {
    int rank = 0;
    for (size_t k = 0; k < n; k++) {
        if (ranks[k] < 0 || ranks[k] > TC_MAX_RANK)
            return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "operand %zu has rank %d", k, ranks[k]);
        if (ranks[k] > rank)
            rank = ranks[k];
    }
    for (int ax = 0; ax < rank; ax++) {
        int64_t d = 1;
        size_t from = 0;
        for (size_t k = 0; k < n; k++) {
            int kax = ax - (rank - ranks[k]);
            if (kax < 0)
                continue;
            int64_t dk = dims[k][kax];
            if (!tc_static_dim_broadcast(d, dk, &d))
                return tc_error_set(err, TCONV_ERR_INVALID,
                                    "shapes do not broadcast: operand %zu has %lld and operand "
                                    "%zu has %lld at output axis %d",
                                    from, (long long)d, k, (long long)dk, ax);
            if (dk != 1)
                from = k;
        }
        out_dims[ax] = d;
    }
    *out_rank = rank;
    return TCONV_OK;
}

void tc_broadcast_strides(int rank, const int64_t *dims, int out_rank, const int64_t *out_dims,
                          int64_t *strides) {
    int64_t stride = 1;
    for (int ax = out_rank - 1; ax >= 0; ax--) {
        int kax = ax - (out_rank - rank);
        if (kax < 0 || dims[kax] == 1 || out_dims[ax] == 1) {
            strides[ax] = 0;
        } else {
            strides[ax] = stride;
        }
        /* mod 2^64: only an empty tensor's dims multiply past int64 (an empty [2^40,0,2^40]
         * overflowed, UB), and its strides are never used */
        if (kax >= 0)
            stride = (int64_t)((uint64_t)stride * (uint64_t)dims[kax]);
    }
}

/* Drops size-1 axes and merges neighbours that every operand walks contiguously. */
static void bcast_collapse(tc_bcast *b, int64_t full_strides[][TC_MAX_RANK]) {
    int r = 0;
    for (int ax = 0; ax < b->out_rank; ax++) {
        if (b->out_dims[ax] == 1)
            continue;
        bool merge = r > 0;
        for (size_t k = 0; merge && k < b->n_operands; k++)
            merge = b->strides[k][r - 1] == full_strides[k][ax] * b->out_dims[ax];
        if (merge) {
            b->dims[r - 1] *= b->out_dims[ax];
            for (size_t k = 0; k < b->n_operands; k++)
                b->strides[k][r - 1] = full_strides[k][ax];
            continue;
        }
        b->dims[r] = b->out_dims[ax];
        for (size_t k = 0; k < b->n_operands; k++)
            b->strides[k][r] = full_strides[k][ax];
        r++;
    }
    if (r == 0) {
        b->dims[0] = 1;
        for (size_t k = 0; k < b->n_operands; k++)
            b->strides[k][0] = 0;
        r = 1;
    }
    b->rank = r;
}

tconv_status tc_bcast_init(tc_bcast *b, size_t n, const tc_rt_tensor *const *operands,
                           tc_error *err) {
    if (n == 0 || n > TC_BCAST_MAX_OPERANDS)
        return tc_error_set(err, TCONV_ERR_USAGE, "broadcast of %zu operands", n);
    memset(b, 0, sizeof *b);
    b->n_operands = n;
    int ranks[TC_BCAST_MAX_OPERANDS];
    const int64_t *dims[TC_BCAST_MAX_OPERANDS];
    for (size_t k = 0; k < n; k++) {
        ranks[k] = operands[k]->rank;
        dims[k] = operands[k]->dims;
    }
    tconv_status st = tc_broadcast_shape(n, ranks, dims, &b->out_rank, b->out_dims, err);
    if (st != TCONV_OK)
        return st;
    if (!tc_shape_elements(b->out_dims, b->out_rank, &b->n_elements))
        return tc_error_set(err, TCONV_ERR_LIMIT, "broadcast shape has too many elements");
    if (b->n_elements == 0) { /* nothing to walk: one empty row (strides would overflow) */
        b->rank = 1;
        b->dims[0] = 0;
        return TCONV_OK;
    }
    int64_t full[TC_BCAST_MAX_OPERANDS][TC_MAX_RANK];
    for (size_t k = 0; k < n; k++)
        tc_broadcast_strides(ranks[k], dims[k], b->out_rank, b->out_dims, full[k]);
    bcast_collapse(b, full);
    b->row_length = b->dims[b->rank - 1];
    for (size_t k = 0; k < n; k++)
        b->inner_stride[k] = b->strides[k][b->rank - 1];
    b->n_rows = b->row_length > 0 ? b->n_elements / b->row_length : 0;
    return TCONV_OK;
}

void tc_bcast_cursor_init(const tc_bcast *b, tc_bcast_cursor *c) {
    (void)b;
    memset(c, 0, sizeof *c);
}

void tc_bcast_cursor_next(const tc_bcast *b, tc_bcast_cursor *c) {
    for (int ax = b->rank - 2; ax >= 0; ax--) {
        c->index[ax]++;
        for (size_t k = 0; k < b->n_operands; k++)
            c->offsets[k] += b->strides[k][ax];
        if (c->index[ax] < b->dims[ax])
            return;
        for (size_t k = 0; k < b->n_operands; k++)
            c->offsets[k] -= b->strides[k][ax] * b->dims[ax];
        c->index[ax] = 0;
    }
}

void tc_bcast_cursor_seek(const tc_bcast *b, tc_bcast_cursor *c, int64_t row) {
    memset(c, 0, sizeof *c);
    for (int ax = b->rank - 2; ax >= 0 && row > 0; ax--) {
        c->index[ax] = row % b->dims[ax];
        row /= b->dims[ax];
        for (size_t k = 0; k < b->n_operands; k++)
            c->offsets[k] += c->index[ax] * b->strides[k][ax];
    }
}
