/* The one elementwise driver: an operation over operands of broadcast shapes, walked row by row
 * (broadcast.h's merged-axes cursor) and split over threads when the work pays for them. Every
 * elementwise kernel that broadcasts (the arithmetic, compare, logic, unary and Where kernels of
 * kernels_math.c, the bit operations of kernels_bitwise.c) is a span function run through it. */
#ifndef TC_RUNTIME_ELEMENTWISE_WALK_H
#define TC_RUNTIME_ELEMENTWISE_WALK_H

#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel.h"

typedef struct tc_ew_job tc_ew_job;
/* Computes columns [j0, j1) of the row at cursor c: operand k's element j of the row is at
 * c->offsets[k] + j * jb->bc->inner_stride[k]. */
typedef void (*tc_ew_span_fn)(const tc_ew_job *jb, const tc_bcast_cursor *c, int64_t j0,
                              int64_t j1);

/* One elementwise operation over a broadcast: operand 0 is the output (dst), operands 1.. are
 * a, b (and w, Where's Y). */
struct tc_ew_job {
    const tc_bcast *bc; /* set by tc_ew_apply */
    tc_ew_span_fn span;
    int op;            /* the kernel's own operation code */
    tconv_dtype dtype; /* of the operands a and b (Where: of X and Y) */
    const void *a, *b, *w;
    void *dst;
    double alpha, beta; /* parameters of the operation */
};

/* Broadcasts the n operands (operands[0] the output, already of the broadcast shape) and runs
 * jb->span over every output element. `cost` is a rough count of operations per element,
 * which decides whether threads pay off (parallel.h). A shape that does not broadcast is
 * TCONV_ERR_INVALID. */
tconv_status tc_ew_apply(tc_kernel_ctx *ctx, size_t n, const tc_rt_tensor *const *operands,
                         tc_ew_job *jb, double cost);

#endif
