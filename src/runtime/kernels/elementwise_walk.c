/* The one elementwise driver (elementwise_walk.h). */
#include "runtime/kernels/elementwise_walk.h"

#include "runtime/compute/compute.h"

/* Elements [e0, e1) of the output, row piece by row piece. */
static void walk(const tc_ew_job *jb, int64_t e0, int64_t e1) {
    const tc_bcast *b = jb->bc;
    const int64_t n = b->row_length;
    int64_t row = e0 / n, j0 = e0 - row * n;
    tc_bcast_cursor c;
    tc_bcast_cursor_seek(b, &c, row);
    for (;;) {
        int64_t row_end = (row + 1) * n;
        jb->span(jb, &c, j0, row_end <= e1 ? n : e1 - row * n);
        if (row_end >= e1)
            return;
        row++;
        j0 = 0;
        tc_bcast_cursor_next(b, &c);
    }
}

static void walk_range(void *arg, int64_t e0, int64_t e1) {
    walk(arg, e0, e1);
}

/* Ranges of whole cache lines (64 elements), at least 4096. */
tconv_status tc_ew_apply(tc_kernel_ctx *ctx, size_t n, const tc_rt_tensor *const *operands,
                         tc_ew_job *jb, double cost) {
    tc_bcast bc;
    tconv_status st = tc_bcast_init(&bc, n, operands, ctx->err);
    if (st != TCONV_OK)
        return st;
    jb->bc = &bc;
    tc_parallel_ranges(ctx->pool, ctx->n_threads, bc.n_elements, cost, 64, 4096, walk_range, jb);
    jb->bc = NULL;
    return TCONV_OK;
}
