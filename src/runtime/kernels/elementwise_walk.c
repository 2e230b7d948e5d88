/* The one elementwise driver (elementwise_walk.h). */
#include "runtime/kernels/elementwise_walk.h"

#include "runtime/compute/compute.h"

#include <string.h>

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

/* Rows shorter than this are widened where they can be (widen_rows), up to EW_WIDEN_MAX_ELEMENTS
 * elements of copies in all. */
#define EW_SHORT_ROW 16
#define EW_WIDEN_MAX_ELEMENTS (1 << 16)

/* The trailing output axes that the row covers (their dims multiply to the row's length): the
 * first of them, or -1. */
static int row_axes_start(const tc_bcast *b) {
    int64_t length = 1;
    for (int ax = b->out_rank - 1; ax >= 0; ax--) {
        length *= b->out_dims[ax];
        if (length == b->row_length)
            return ax;
        if (length > b->row_length)
            break;
    }
    return -1;
}

/* Operand t as the output's rank, its row axes (from `first`) at the output's dims: every element
 * repeated row_length times, into `to`. */
static void widen_operand(const tc_rt_tensor *t, const tc_bcast *b, int first, void *to,
                          tc_rt_tensor *widened) {
    size_t size = tc_rt_dtype_size(t->dtype);
    *widened = (tc_rt_tensor){.dtype = t->dtype, .rank = b->out_rank, .data = to};
    for (int ax = 0; ax < b->out_rank; ax++) {
        int tax = ax - (b->out_rank - t->rank);
        widened->dims[ax] = ax >= first ? b->out_dims[ax] : tax >= 0 ? t->dims[tax] : 1;
    }
    widened->n_elements = t->n_elements * b->row_length;
    widened->nbytes = (size_t)widened->n_elements * size;
    const char *from = t->data;
    char *out = to;
    for (int64_t i = 0; i < t->n_elements; i++, from += size) {
        for (int64_t j = 0; j < b->row_length; j++, out += size)
            memcpy(out, from, size);
    }
}

/* Short rows cost a span call and a cursor step each (StyleGAN2's modulation, weights
 * [1, 32, 32, 3, 3] times styles [2, 1, 32, 1, 1]: rows of 9, 27 us for 18432 products against
 * onnxruntime's 35). The operands that stay constant along a row are copied with the row's axes
 * filled in, so that the rows merge with the axes outside them (there, rows of 288: 12 us
 * against onnxruntime's 59 in a slower hour of this host, 3.7 times the old ratio). *bc and jb's
 * pointers are then the widened operands', in `memory`; nothing changes where no row grows or
 * the memory limit has no room for the copies. */
static tconv_status widen_rows(tc_kernel_ctx *ctx, size_t n, const tc_rt_tensor *const *operands,
                               tc_ew_job *jb, tc_bcast *bc, tc_rt_tensor *memory) {
    *memory = (tc_rt_tensor){0};
    int first = row_axes_start(bc);
    if (bc->row_length >= EW_SHORT_ROW || bc->n_rows < 2 || first < 0)
        return TCONV_OK;
    size_t bytes = 0, offsets[TC_BCAST_MAX_OPERANDS] = {0};
    int64_t elements = 0; /* an operand constant along rows has at most n_rows elements */
    for (size_t k = 1; k < n; k++) {
        size_t size = tc_rt_dtype_size(operands[k]->dtype);
        if (bc->inner_stride[k] != 0 || operands[k]->n_elements == 0 || size == 0)
            continue;
        elements += operands[k]->n_elements * bc->row_length;
        if (elements > EW_WIDEN_MAX_ELEMENTS)
            return TCONV_OK;
        offsets[k] = bytes + 1; /* 0: not widened */
        bytes += ((size_t)(operands[k]->n_elements * bc->row_length) * size + 63) / 64 * 64;
    }
    if (bytes == 0)
        return TCONV_OK;
    if (tc_kernel_scratch(ctx, bytes, memory) != TCONV_OK) { /* the memory limit: short rows */
        tc_error_clear(ctx->err);
        *memory = (tc_rt_tensor){0};
        return TCONV_OK;
    }
    tc_rt_tensor widened[TC_BCAST_MAX_OPERANDS];
    const tc_rt_tensor *now[TC_BCAST_MAX_OPERANDS];
    for (size_t k = 0; k < n; k++) {
        now[k] = operands[k];
        if (offsets[k] > 0) {
            widen_operand(operands[k], bc, first, (char *)memory->data + offsets[k] - 1,
                          &widened[k]);
            now[k] = &widened[k];
        }
    }
    tc_bcast wide;
    if (tc_bcast_init(&wide, n, now, ctx->err) != TCONV_OK || wide.row_length <= bc->row_length) {
        tc_kernel_scratch_release(ctx, memory);
        *memory = (tc_rt_tensor){0};
        return TCONV_OK;
    }
    *bc = wide;
    const void **data[TC_BCAST_MAX_OPERANDS] = {NULL, &jb->a, &jb->b, &jb->w};
    for (size_t k = 1; k < n; k++) {
        if (offsets[k] > 0)
            *data[k] = widened[k].data;
    }
    return TCONV_OK;
}

/* Ranges of whole cache lines (64 elements), at least 4096. */
tconv_status tc_ew_apply(tc_kernel_ctx *ctx, size_t n, const tc_rt_tensor *const *operands,
                         tc_ew_job *jb, double cost) {
    tc_bcast bc;
    tc_rt_tensor memory;
    tconv_status st = tc_bcast_init(&bc, n, operands, ctx->err);
    if (st == TCONV_OK)
        st = widen_rows(ctx, n, operands, jb, &bc, &memory);
    if (st != TCONV_OK)
        return st;
    jb->bc = &bc;
    tc_parallel_ranges(ctx->pool, ctx->n_threads, bc.n_elements, cost, 64, 4096, walk_range, jb);
    jb->bc = NULL;
    if (memory.data)
        tc_kernel_scratch_release(ctx, &memory);
    return TCONV_OK;
}
