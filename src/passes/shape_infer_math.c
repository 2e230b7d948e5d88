/* shape-infer rules for math ops: elementwise ops with numpy broadcasting (and the small integer
 * arithmetic of shape computations), same-shape unary ops, Cast, normalization, MatMul, Gemm. */
#include "passes/shape_infer.h"

#include <string.h>

/* ---------------------------------------------------------------- broadcasting ops */

/* Broadcasts every present input into outs[0]; the dtype is input `dtype_from`'s, or
 * `fixed_dtype` when that is not UNDEFINED (comparisons give bool). */
static tconv_status broadcast_inputs(tc_si_ctx *ctx, tconv_node *node, size_t dtype_from,
                                     tconv_dtype fixed_dtype, tc_si_out *out) {
    tc_si_tensor in;
    tc_si_input(ctx, node, dtype_from, &in);
    out->dtype = fixed_dtype != TCONV_DTYPE_UNDEFINED ? fixed_dtype : in.dtype;
    bool first = true;
    for (size_t i = 0; i < node->n_inputs; i++) {
        if (!tc_si_input(ctx, node, i, &in))
            continue;
        if (in.shape.rank < 0) {
            out->shape.rank = -1;
            return TCONV_OK;
        }
        if (first) {
            out->shape = in.shape;
            first = false;
            continue;
        }
        tc_si_shape merged;
        tconv_status st = tc_si_broadcast(ctx, node, &out->shape, &in.shape, &merged);
        if (st != TCONV_OK)
            return st;
        out->shape = merged;
    }
    return TCONV_OK;
}

/* The integer and boolean ops whose known contents shape inference follows: torch exports
 * compute pads and Slice ends with them (F.pad's Mod/Equal/Not/Xor/And/Where chains). Booleans
 * are 0 and 1. */
typedef enum arith_op {
    ARITH_ADD,
    ARITH_SUB,
    ARITH_MUL,
    ARITH_DIV,
    ARITH_MOD,  /* Mod, fmod 0: the sign of the divisor, as Python's % */
    ARITH_FMOD, /* Mod, fmod 1: the sign of the dividend, as C's % */
    ARITH_EQUAL,
    ARITH_LESS,
    ARITH_LESS_OR_EQUAL,
    ARITH_GREATER,
    ARITH_GREATER_OR_EQUAL,
    ARITH_AND,
    ARITH_OR,
    ARITH_XOR
} arith_op;

/* One element of integer shape arithmetic; unknown unless both are static (or the op is an
 * identity on a symbol: x+0, x-0, x*1, x/1). */
static tc_dim arith_elem(arith_op op, const tc_dim *a, const tc_dim *b) {
    int64_t r = 0;
    bool arithmetic = op <= ARITH_DIV;
    bool identity_b =
        (op == ARITH_MUL || op == ARITH_DIV) ? tc_si_dim_is(b, 1) : tc_si_dim_is(b, 0);
    if (!arithmetic && (a->kind != TCONV_DIM_STATIC || b->kind != TCONV_DIM_STATIC))
        return tc_si_dim_unknown();
    if (a->kind == TCONV_DIM_SYMBOLIC && identity_b)
        return *a;
    if (b->kind == TCONV_DIM_SYMBOLIC && op == ARITH_MUL && tc_si_dim_is(a, 1))
        return *b;
    if (b->kind == TCONV_DIM_SYMBOLIC && op == ARITH_ADD && tc_si_dim_is(a, 0))
        return *b;
    if (a->kind != TCONV_DIM_STATIC || b->kind != TCONV_DIM_STATIC)
        return tc_si_dim_unknown();
    int64_t x = a->value, y = b->value;
    bool ok = true;
    switch (op) {
    case ARITH_ADD:
        ok = tc_add_i64(x, y, &r);
        break;
    case ARITH_SUB:
        ok = y != INT64_MIN && tc_add_i64(x, -y, &r);
        break;
    case ARITH_MUL:
        ok = tc_mul_i64(x, y, &r);
        break;
    case ARITH_DIV:
        ok = y != 0 && !(x == INT64_MIN && y == -1);
        r = ok ? x / y : 0; /* integer Div truncates, as onnxruntime does */
        break;
    case ARITH_MOD:
    case ARITH_FMOD:
        ok = y != 0 && !(x == INT64_MIN && y == -1);
        r = ok ? x % y : 0;
        if (ok && op == ARITH_MOD && r != 0 && (r < 0) != (y < 0))
            r += y;
        break;
    case ARITH_EQUAL:
        r = x == y;
        break;
    case ARITH_LESS:
        r = x < y;
        break;
    case ARITH_LESS_OR_EQUAL:
        r = x <= y;
        break;
    case ARITH_GREATER:
        r = x > y;
        break;
    case ARITH_GREATER_OR_EQUAL:
        r = x >= y;
        break;
    case ARITH_AND:
        r = x && y;
        break;
    case ARITH_OR:
        r = x || y;
        break;
    case ARITH_XOR:
        r = !x != !y;
        break;
    }
    return ok ? tc_si_dim_static(r) : tc_si_dim_unknown();
}

/* Known contents of an integer or boolean op of two known small tensors (rank <= 1). */
static tconv_status arith_data(tc_si_ctx *ctx, tconv_node *node, arith_op op, tc_si_out *out) {
    if (node->n_inputs != 2)
        return TCONV_OK;
    const tc_si_data *a = tc_si_input_data(ctx, node, 0);
    const tc_si_data *b = tc_si_input_data(ctx, node, 1);
    if (!a || !b || (a->count != b->count && a->count != 1 && b->count != 1))
        return TCONV_OK;
    tc_si_data *d = tc_si_data_new(ctx);
    if (!d)
        return ctx->err->status;
    d->rank = a->rank > b->rank ? a->rank : b->rank;
    d->count = a->count > b->count ? a->count : b->count;
    for (int i = 0; i < d->count; i++)
        d->elems[i] =
            arith_elem(op, &a->elems[a->count == 1 ? 0 : i], &b->elems[b->count == 1 ? 0 : i]);
    out->data = d;
    return TCONV_OK;
}

static tconv_status infer_arith(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs, arith_op op) {
    tconv_status st = broadcast_inputs(ctx, node, 0, TCONV_DTYPE_UNDEFINED, &outs[0]);
    return st == TCONV_OK ? arith_data(ctx, node, op, &outs[0]) : st;
}

tconv_status tc_si_infer_add(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return infer_arith(ctx, node, outs, ARITH_ADD);
}

tconv_status tc_si_infer_sub(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return infer_arith(ctx, node, outs, ARITH_SUB);
}

tconv_status tc_si_infer_mul(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return infer_arith(ctx, node, outs, ARITH_MUL);
}

tconv_status tc_si_infer_div(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return infer_arith(ctx, node, outs, ARITH_DIV);
}

/* Pow, PRelu, Mod, Max, Min, Sum, Mean, BitShift: broadcast, dtype of the first input. */
tconv_status tc_si_infer_broadcast(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    return broadcast_inputs(ctx, node, 0, TCONV_DTYPE_UNDEFINED, &outs[0]);
}

tconv_status tc_si_infer_mod(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    int64_t fmod;
    tconv_status st = tc_node_attr_int(node, "fmod", 0, &fmod, ctx->err);
    if (st != TCONV_OK)
        return st;
    return infer_arith(ctx, node, outs, fmod ? ARITH_FMOD : ARITH_MOD);
}

/* Comparisons and logic: bool results, known where both sides are. */
static tconv_status infer_bool_op(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs, arith_op op) {
    tconv_status st = broadcast_inputs(ctx, node, 0, TCONV_DTYPE_BOOL, &outs[0]);
    return st == TCONV_OK ? arith_data(ctx, node, op, &outs[0]) : st;
}

/* The rules ops.def names, one per op (the table holds a function, the op its argument). */
#define TC_SI_BOOL_RULE(fn, op)                                                                    \
    tconv_status fn(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {                           \
        return infer_bool_op(ctx, node, outs, op);                                                 \
    }
TC_SI_BOOL_RULE(tc_si_infer_equal, ARITH_EQUAL)
TC_SI_BOOL_RULE(tc_si_infer_less, ARITH_LESS)
TC_SI_BOOL_RULE(tc_si_infer_less_or_equal, ARITH_LESS_OR_EQUAL)
TC_SI_BOOL_RULE(tc_si_infer_greater, ARITH_GREATER)
TC_SI_BOOL_RULE(tc_si_infer_greater_or_equal, ARITH_GREATER_OR_EQUAL)
TC_SI_BOOL_RULE(tc_si_infer_and, ARITH_AND)
TC_SI_BOOL_RULE(tc_si_infer_or, ARITH_OR)
TC_SI_BOOL_RULE(tc_si_infer_xor, ARITH_XOR)

/* Not: known where its input is. */
tconv_status tc_si_infer_not(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    const tc_si_data *src = tc_si_input_data(ctx, node, 0);
    if (!src)
        return TCONV_OK;
    if (!(outs[0].data = tc_si_data_new(ctx)))
        return ctx->err->status;
    *outs[0].data = *src;
    for (int i = 0; i < src->count; i++) {
        const tc_dim *e = &src->elems[i];
        outs[0].data->elems[i] =
            e->kind == TCONV_DIM_STATIC ? tc_si_dim_static(e->value == 0) : tc_si_dim_unknown();
    }
    return TCONV_OK;
}

/* Where(condition, X, Y): the dtype is X's; known contents where all three are known (rank <= 1)
 * and each condition element is. */
tconv_status tc_si_infer_where(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tconv_status st = broadcast_inputs(ctx, node, 1, TCONV_DTYPE_UNDEFINED, &outs[0]);
    if (st != TCONV_OK || node->n_inputs != 3)
        return st;
    const tc_si_data *in[3];
    int count = 1, rank = 0;
    for (size_t k = 0; k < 3; k++) {
        if (!(in[k] = tc_si_input_data(ctx, node, k)) || in[k]->rank > 1)
            return TCONV_OK;
        if (in[k]->count != 1 && count != 1 && in[k]->count != count)
            return TCONV_OK;
        count = in[k]->count > count ? in[k]->count : count;
        rank = in[k]->rank > rank ? in[k]->rank : rank;
    }
    tc_si_data *d = tc_si_data_new(ctx);
    if (!d)
        return ctx->err->status;
    d->rank = rank;
    d->count = count;
    for (int i = 0; i < count; i++) {
        const tc_dim *c = &in[0]->elems[in[0]->count == 1 ? 0 : i];
        const tc_si_data *pick = c->value ? in[1] : in[2];
        d->elems[i] = c->kind == TCONV_DIM_STATIC ? pick->elems[pick->count == 1 ? 0 : i]
                                                  : tc_si_dim_unknown();
    }
    outs[0].data = d;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- same-shape ops */

tconv_status tc_si_infer_unary(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    return TCONV_OK;
}

/* Identity also passes known contents through (shape computations). */
tconv_status tc_si_infer_identity(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    const tc_si_data *src = tc_si_input_data(ctx, node, 0);
    if (!src)
        return TCONV_OK;
    outs[0].data = tc_si_data_new(ctx);
    if (!outs[0].data)
        return ctx->err->status;
    *outs[0].data = *src;
    return TCONV_OK;
}

tconv_status tc_si_infer_predicate(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    outs[0].dtype = TCONV_DTYPE_BOOL;
    return TCONV_OK;
}

static bool is_valid_dtype(int64_t dtype) {
    return dtype > TCONV_DTYPE_UNDEFINED && dtype <= TC_DTYPE_MAX;
}

tconv_status tc_si_infer_cast(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    int64_t to;
    tconv_status st = tc_node_attr_int(node, "to", TCONV_DTYPE_UNDEFINED, &to, ctx->err);
    if (st != TCONV_OK)
        return st;
    if (!is_valid_dtype(to))
        return tc_si_fail(ctx, node, "attribute 'to' is missing or not a known dtype (%lld)",
                          (long long)to);
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    outs[0].dtype = (tconv_dtype)to;
    const tc_si_data *src = tc_si_input_data(ctx, node, 0);
    if (src && (to == TCONV_DTYPE_INT64 || to == TCONV_DTYPE_INT32)) {
        if (!(outs[0].data = tc_si_data_new(ctx)))
            return ctx->err->status;
        *outs[0].data = *src;
    }
    return TCONV_OK;
}

tconv_status tc_si_infer_cast_like(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    tc_si_tensor like;
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    tc_si_input(ctx, node, 1, &like);
    outs[0].dtype = like.dtype;
    return TCONV_OK;
}

/* QuantizeLinear: y like x, of y_zero_point's type, else output_dtype's (opset 21+), else
 * uint8; the two must agree when both are given. */
/* output_dtype (0 when absent), which must name a dtype. */
static tconv_status read_output_dtype(tc_si_ctx *ctx, tconv_node *node, int64_t *out) {
    tconv_status st = tc_node_attr_int(node, "output_dtype", 0, out, ctx->err);
    if (st == TCONV_OK && *out != 0 && !is_valid_dtype(*out))
        return tc_si_fail(ctx, node, "attribute 'output_dtype' is not a known dtype (%lld)",
                          (long long)*out);
    return st;
}

tconv_status tc_si_infer_quantize_linear(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    int64_t output_dtype;
    tconv_status st = read_output_dtype(ctx, node, &output_dtype);
    if (st != TCONV_OK)
        return st;
    tc_si_tensor zero_point;
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    outs[0].dtype = output_dtype ? (tconv_dtype)output_dtype : TCONV_DTYPE_UINT8;
    if (tc_si_input(ctx, node, 2, &zero_point) && zero_point.dtype != TCONV_DTYPE_UNDEFINED) {
        if (output_dtype && zero_point.dtype != output_dtype)
            return tc_si_fail(ctx, node, "output_dtype %s does not match y_zero_point's %s",
                              tconv_dtype_name((int)output_dtype),
                              tconv_dtype_name(zero_point.dtype));
        outs[0].dtype = zero_point.dtype;
    }
    return TCONV_OK;
}

/* DequantizeLinear: y like x, of output_dtype's type (opset 23+), else x_scale's. */
tconv_status tc_si_infer_dequantize_linear(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    int64_t output_dtype;
    tconv_status st = read_output_dtype(ctx, node, &output_dtype);
    if (st != TCONV_OK)
        return st;
    tc_si_tensor scale;
    tc_si_input(ctx, node, 1, &scale);
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    outs[0].dtype = output_dtype ? (tconv_dtype)output_dtype : scale.dtype;
    return TCONV_OK;
}

/* EyeLike: the input's shape, of the dtype attribute's type (default the input's). */
tconv_status tc_si_infer_eye_like(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    int64_t dtype;
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    tconv_status st = tc_node_attr_int(node, "dtype", outs[0].dtype, &dtype, ctx->err);
    if (st == TCONV_OK && dtype != 0 && !is_valid_dtype(dtype))
        return tc_si_fail(ctx, node, "attribute 'dtype' is not a known dtype (%lld)",
                          (long long)dtype);
    outs[0].dtype = (tconv_dtype)dtype;
    return st;
}

/* Output 0 like the input; the mask (opset 10+: bool) too. */
tconv_status tc_si_infer_dropout(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_same_as_input(ctx, node, 0, &outs[0]);
    if (node->n_outputs > 1) {
        outs[1] = outs[0];
        if (ctx->opset >= 10)
            outs[1].dtype = TCONV_DTYPE_BOOL;
    }
    return TCONV_OK;
}

/* Y like X; the optional statistics outputs (training mode) are per channel: [C]. */
tconv_status tc_si_infer_batch_norm(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    (void)ctx;
    tc_si_tensor x, mean;
    tc_si_input(ctx, node, 0, &x);
    tc_si_input(ctx, node, 3, &mean);
    outs[0].dtype = x.dtype;
    outs[0].shape = x.shape;
    for (size_t i = 1; i < node->n_outputs; i++) {
        outs[i].dtype = mean.dtype;
        tc_si_shape_unknown(&outs[i].shape, 1);
        if (x.shape.rank >= 2)
            outs[i].shape.dims[0] = x.shape.dims[1];
    }
    return TCONV_OK;
}

/* ---------------------------------------------------------------- MatMul and Gemm */

static tconv_status check_inner(tc_si_ctx *ctx, const tconv_node *node, const tc_dim *ka,
                                const tc_dim *kb) {
    if (ka->kind == TCONV_DIM_STATIC && kb->kind == TCONV_DIM_STATIC && ka->value != kb->value)
        return tc_si_fail(ctx, node, "inner dimensions differ: %lld and %lld", (long long)ka->value,
                          (long long)kb->value);
    return TCONV_OK;
}

/* numpy matmul: 1-D operands are promoted to matrices and the added axis removed after. */
tconv_status tc_si_infer_matmul(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor a, b;
    tc_si_input(ctx, node, 0, &a);
    tc_si_input(ctx, node, 1, &b);
    outs[0].dtype = a.dtype;
    if (a.shape.rank < 0 || b.shape.rank < 0)
        return TCONV_OK;
    if (a.shape.rank == 0 || b.shape.rank == 0)
        return tc_si_fail(ctx, node, "MatMul does not take scalars");
    tc_si_shape pa = a.shape, pb = b.shape;
    if (pa.rank == 1) { /* [K] -> [1, K] */
        pa.dims[1] = pa.dims[0];
        pa.dims[0] = tc_si_dim_static(1);
        pa.rank = 2;
    }
    if (pb.rank == 1) { /* [K] -> [K, 1] */
        pb.dims[1] = tc_si_dim_static(1);
        pb.rank = 2;
    }
    tconv_status st = check_inner(ctx, node, &pa.dims[pa.rank - 1], &pb.dims[pb.rank - 2]);
    if (st != TCONV_OK)
        return st;
    tc_si_shape batch_a = pa, batch_b = pb, *out = &outs[0].shape;
    batch_a.rank -= 2;
    batch_b.rank -= 2;
    if ((st = tc_si_broadcast(ctx, node, &batch_a, &batch_b, out)))
        return st;
    if (out->rank + 2 > TC_MAX_RANK) {
        out->rank = -1;
        return TCONV_OK;
    }
    if (a.shape.rank > 1)
        out->dims[out->rank++] = pa.dims[pa.rank - 2];
    if (b.shape.rank > 1)
        out->dims[out->rank++] = pb.dims[pb.rank - 1];
    return TCONV_OK;
}

tconv_status tc_si_infer_gemm(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs) {
    tc_si_tensor a, b;
    tc_si_input(ctx, node, 0, &a);
    tc_si_input(ctx, node, 1, &b);
    outs[0].dtype = a.dtype;
    int64_t trans_a, trans_b;
    tconv_status st = tc_node_attr_int(node, "transA", 0, &trans_a, ctx->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "transB", 0, &trans_b, ctx->err);
    if (st != TCONV_OK)
        return st;
    if ((a.shape.rank >= 0 && a.shape.rank != 2) || (b.shape.rank >= 0 && b.shape.rank != 2))
        return tc_si_fail(ctx, node, "A and B must be matrices (ranks %d and %d)", a.shape.rank,
                          b.shape.rank);
    tc_si_shape_unknown(&outs[0].shape, 2);
    if (a.shape.rank == 2)
        outs[0].shape.dims[0] = a.shape.dims[trans_a ? 1 : 0];
    if (b.shape.rank == 2)
        outs[0].shape.dims[1] = b.shape.dims[trans_b ? 0 : 1];
    if (a.shape.rank == 2 && b.shape.rank == 2)
        return check_inner(ctx, node, &a.shape.dims[trans_a ? 0 : 1],
                           &b.shape.dims[trans_b ? 1 : 0]);
    return TCONV_OK;
}
