/* Integer bit operations: BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (opset 18) and BitShift
 * (11), on the integer types, with multidirectional broadcasting. Elements are moved as raw
 * 64-bit patterns (sign-extended for signed types, so the low bits are the element's), through
 * the dtype table, and walked by the one elementwise driver (elementwise_walk.h). */
#include "runtime/kernels/elementwise_walk.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/compute/compute.h"

#include <string.h>

#define DTYPES_BITS                                                                                \
    (TC_DTYPE_BIT(TCONV_DTYPE_INT8) | TC_DTYPE_BIT(TCONV_DTYPE_INT16) |                            \
     TC_DTYPE_BIT(TCONV_DTYPE_INT32) | TC_DTYPE_BIT(TCONV_DTYPE_INT64) |                           \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT8) | TC_DTYPE_BIT(TCONV_DTYPE_UINT16) |                          \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT32) | TC_DTYPE_BIT(TCONV_DTYPE_UINT64))
#define DTYPES_UNSIGNED_BITS                                                                       \
    (TC_DTYPE_BIT(TCONV_DTYPE_UINT8) | TC_DTYPE_BIT(TCONV_DTYPE_UINT16) |                          \
     TC_DTYPE_BIT(TCONV_DTYPE_UINT32) | TC_DTYPE_BIT(TCONV_DTYPE_UINT64))

typedef enum bit_op { BIT_AND, BIT_OR, BIT_XOR, BIT_NOT, BIT_LEFT, BIT_RIGHT } bit_op;

static uint64_t apply(bit_op op, uint64_t a, uint64_t b, int bits) {
    switch (op) {
    case BIT_AND:
        return a & b;
    case BIT_OR:
        return a | b;
    case BIT_XOR:
        return a ^ b;
    case BIT_NOT:
        return ~a;
    case BIT_LEFT:
        return b >= (uint64_t)bits ? 0 : a << b;
    case BIT_RIGHT:
        return b >= (uint64_t)bits ? 0 : a >> b;
    }
    return 0;
}

/* Columns [j0, j1) of a row: elements move as 64-bit patterns through the dtype table. */
static void span_bits(const tc_ew_job *jb, const tc_bcast_cursor *c, int64_t j0, int64_t j1) {
    const tc_dtype_traits *traits = tc_dtype_traits_of(jb->dtype);
    const int bits = 8 * (int)traits->size;
    const int64_t sa = jb->bc->inner_stride[1];
    const int64_t sb = jb->b ? jb->bc->inner_stride[2] : 0, ob = jb->b ? c->offsets[2] : 0;
    for (int64_t j = j0; j < j1; j++) {
        uint64_t a = traits->get_bits(jb->a, c->offsets[1] + j * sa);
        uint64_t b = jb->b ? traits->get_bits(jb->b, ob + j * sb) : 0;
        traits->set_bits(jb->dst, c->offsets[0] + j, apply((bit_op)jb->op, a, b, bits));
    }
}

static tconv_status run_bits(tc_kernel_ctx *ctx, bit_op op, uint32_t dtypes) {
    size_t n_in = op == BIT_NOT ? 1 : 2;
    const tc_rt_tensor *in[2] = {NULL, NULL};
    tconv_status st = TCONV_OK;
    for (size_t i = 0; i < n_in && st == TCONV_OK; i++) {
        st = tc_kernel_require_input(ctx, i, &in[i]);
        if (st == TCONV_OK)
            st = tc_kernel_check_dtype(ctx, i, dtypes);
    }
    if (st == TCONV_OK && n_in == 2 && in[0]->dtype != in[1]->dtype)
        st = tc_error_set(ctx->err, TCONV_ERR_INVALID, "inputs of types %s and %s",
                          tconv_dtype_name(in[0]->dtype), tconv_dtype_name(in[1]->dtype));
    if (st != TCONV_OK)
        return st;
    int rank = in[0]->rank;
    int64_t dims[TC_MAX_RANK];
    memcpy(dims, in[0]->dims, sizeof dims);
    if (n_in == 2) {
        int ranks[2] = {in[0]->rank, in[1]->rank};
        const int64_t *both[2] = {in[0]->dims, in[1]->dims};
        if ((st = tc_broadcast_shape(2, ranks, both, &rank, dims, ctx->err)) != TCONV_OK)
            return st;
    }
    tc_rt_tensor *y;
    if ((st = tc_kernel_alloc_output_uninit(ctx, 0, in[0]->dtype, rank, dims, &y)) != TCONV_OK)
        return st;
    const tc_rt_tensor *operands[3] = {y, in[0], in[1]};
    tc_ew_job jb = {.span = span_bits,
                    .op = (int)op,
                    .dtype = y->dtype,
                    .a = in[0]->data,
                    .b = n_in == 2 ? in[1]->data : NULL,
                    .dst = y->data};
    return tc_ew_apply(ctx, 1 + n_in, operands, &jb, TC_PARALLEL_COST_STREAM);
}

tconv_status tc_run_bitwise_and(tc_kernel_ctx *ctx) {
    return run_bits(ctx, BIT_AND, DTYPES_BITS);
}
tconv_status tc_run_bitwise_or(tc_kernel_ctx *ctx) {
    return run_bits(ctx, BIT_OR, DTYPES_BITS);
}
tconv_status tc_run_bitwise_xor(tc_kernel_ctx *ctx) {
    return run_bits(ctx, BIT_XOR, DTYPES_BITS);
}
tconv_status tc_run_bitwise_not(tc_kernel_ctx *ctx) {
    return run_bits(ctx, BIT_NOT, DTYPES_BITS);
}

tconv_status tc_run_bit_shift(tc_kernel_ctx *ctx) {
    const char *direction;
    tconv_status st = tc_node_attr_string(ctx->node, "direction", "", &direction, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (strcmp(direction, "LEFT") == 0)
        return run_bits(ctx, BIT_LEFT, DTYPES_UNSIGNED_BITS);
    if (strcmp(direction, "RIGHT") == 0)
        return run_bits(ctx, BIT_RIGHT, DTYPES_UNSIGNED_BITS);
    return tc_kernel_unsupported_attr(ctx, "direction", direction);
}
