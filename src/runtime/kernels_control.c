/* Control flow: If runs the branch its condition selects, with the enclosing scopes' values
 * visible to the branch (the executor keeps them alive until the If has run). */
#include "runtime/kernel_util.h"
#include "runtime/session_internal.h"

#include <stdlib.h>
#include <string.h>

static tconv_status if_branch(tc_kernel_ctx *ctx, const char *name, const tconv_graph **out) {
    const tc_attr *a = tc_node_attr(ctx->node, name);
    if (!a || a->type != TCONV_ATTR_GRAPH || !a->g)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID, "the graph attribute '%s' is missing",
                            name);
    *out = a->g;
    return TCONV_OK;
}

static tconv_status if_condition(tc_kernel_ctx *ctx, bool *cond) {
    const tc_rt_tensor *c;
    tconv_status st = tc_kernel_require_input(ctx, 0, &c);
    if (st == TCONV_OK)
        st = tc_kernel_check_dtype(ctx, 0, TCONV_DTYPE_BIT(TCONV_DTYPE_BOOL));
    if (st != TCONV_OK)
        return st;
    if (c->n_elements != 1)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "the condition must hold one element, has %lld",
                            (long long)c->n_elements);
    *cond = ((const uint8_t *)c->data)[0] != 0;
    return TCONV_OK;
}

tconv_status tc_run_if(tc_kernel_ctx *ctx) {
    const tconv_graph *then_g = NULL, *else_g = NULL;
    bool cond = false;
    tconv_status st = if_branch(ctx, "then_branch", &then_g);
    if (st == TCONV_OK)
        st = if_branch(ctx, "else_branch", &else_g);
    if (st == TCONV_OK)
        st = if_condition(ctx, &cond);
    if (st != TCONV_OK)
        return st;
    if (!ctx->session)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "If needs a session to run a branch");
    tc_rt_tensor *results = calloc(ctx->n_outputs ? ctx->n_outputs : 1, sizeof *results);
    if (!results)
        return tc_error_nomem(ctx->err, "If outputs");
    st = tc_session_run_subgraph(ctx, cond ? then_g : else_g, results, ctx->n_outputs);
    if (st == TCONV_OK) {
        for (size_t i = 0; i < ctx->n_outputs; i++)
            ctx->outputs[i] = results[i];
    }
    free(results);
    return st;
}
