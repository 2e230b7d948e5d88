/* Type conversion kernels beside Cast (kernels_tensor.c): CastLike. Conversions between every
 * stored type, float16 and bfloat16 included, are tc_convert_elements' (one rounding, to nearest
 * even). Cast-19's and CastLike-19's `saturate` concerns float8 targets only
 * (tc_convert_elements_saturate). */
#include "runtime/kernels/kernel_util.h"
#include "runtime/compute/compute.h"

/* CastLike: input 0 converted to the type of input 1 (whose values are not read). */
tconv_status tc_run_cast_like(tc_kernel_ctx *ctx) {
    const tc_rt_tensor *x, *like;
    tconv_status st = tc_kernel_require_input(ctx, 0, &x);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, 1, &like);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TC_DTYPES_ANY);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 1, TC_DTYPES_ANY);
    tc_rt_tensor *y;
    if (st == TCONV_OK)
        st = tc_kernel_alloc_output(ctx, 0, like->dtype, x->rank, x->dims, &y);
    int64_t saturate = 1;
    if (st == TCONV_OK)
        st = tc_node_attr_int_or_default(ctx->node, "saturate", &saturate, ctx->err);
    if (st == TCONV_OK)
        tc_convert_elements_saturate(x, y, saturate != 0);
    return st;
}
