/* Integer bit operations: BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (opset 18) and BitShift
 * (11), on the integer types, with multidirectional broadcasting. Elements are moved as raw
 * 64-bit patterns (sign-extended for signed types, so the low bits are the element's). */
#include "runtime/broadcast.h"
#include "runtime/kernel_util.h"

#include <string.h>

#define DTYPES_BITS                                                                                \
    (TCONV_DTYPE_BIT(TCONV_DTYPE_INT8) | TCONV_DTYPE_BIT(TCONV_DTYPE_INT16) |                      \
     TCONV_DTYPE_BIT(TCONV_DTYPE_INT32) | TCONV_DTYPE_BIT(TCONV_DTYPE_INT64) |                     \
     TCONV_DTYPE_BIT(TCONV_DTYPE_UINT8) | TCONV_DTYPE_BIT(TCONV_DTYPE_UINT16) |                    \
     TCONV_DTYPE_BIT(TCONV_DTYPE_UINT32) | TCONV_DTYPE_BIT(TCONV_DTYPE_UINT64))
#define DTYPES_UNSIGNED_BITS                                                                       \
    (TCONV_DTYPE_BIT(TCONV_DTYPE_UINT8) | TCONV_DTYPE_BIT(TCONV_DTYPE_UINT16) |                    \
     TCONV_DTYPE_BIT(TCONV_DTYPE_UINT32) | TCONV_DTYPE_BIT(TCONV_DTYPE_UINT64))

typedef enum bit_op { BIT_AND, BIT_OR, BIT_XOR, BIT_NOT, BIT_LEFT, BIT_RIGHT } bit_op;

static uint64_t load_bits(const tc_rt_tensor *t, int64_t i) {
    const unsigned char *p = (const unsigned char *)t->data;
    switch (tc_rt_dtype_size(t->dtype)) {
    case 1: {
        uint8_t v;
        memcpy(&v, p + i, 1);
        return v;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, p + 2 * i, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p + 8 * i, 8);
        return v;
    }
    }
}

static void store_bits(tc_rt_tensor *t, int64_t i, uint64_t v) {
    unsigned char *p = (unsigned char *)t->data;
    size_t size = tc_rt_dtype_size(t->dtype);
    uint8_t b8 = (uint8_t)v;
    uint16_t b16 = (uint16_t)v;
    uint32_t b32 = (uint32_t)v;
    const void *src = size == 1   ? (const void *)&b8
                      : size == 2 ? (const void *)&b16
                      : size == 4 ? (const void *)&b32
                                  : (const void *)&v;
    memcpy(p + (size_t)i * size, src, size);
}

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
    int64_t dims[TCONV_MAX_RANK];
    memcpy(dims, in[0]->dims, sizeof dims);
    if (n_in == 2) {
        int ranks[2] = {in[0]->rank, in[1]->rank};
        const int64_t *both[2] = {in[0]->dims, in[1]->dims};
        if ((st = tc_broadcast_shape(2, ranks, both, &rank, dims, ctx->err)) != TCONV_OK)
            return st;
    }
    tc_rt_tensor *y;
    if ((st = tc_kernel_alloc_output(ctx, 0, in[0]->dtype, rank, dims, &y)) != TCONV_OK)
        return st;
    int64_t strides[2][TCONV_MAX_RANK], index[TCONV_MAX_RANK] = {0}, at[2] = {0, 0};
    for (size_t k = 0; k < n_in; k++)
        tc_broadcast_strides(in[k]->rank, in[k]->dims, rank, dims, strides[k]);
    int bits = 8 * (int)tc_rt_dtype_size(y->dtype);
    for (int64_t i = 0; i < y->n_elements; i++) {
        uint64_t a = load_bits(in[0], at[0]), b = n_in == 2 ? load_bits(in[1], at[1]) : 0;
        store_bits(y, i, apply(op, a, b, bits));
        for (int ax = rank - 1; ax >= 0; ax--) { /* next output index, input offsets along */
            for (size_t k = 0; k < n_in; k++)
                at[k] += strides[k][ax];
            if (++index[ax] < dims[ax])
                break;
            for (size_t k = 0; k < n_in; k++)
                at[k] -= strides[k][ax] * dims[ax];
            index[ax] = 0;
        }
    }
    return TCONV_OK;
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
