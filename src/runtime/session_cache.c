/* Per-node blocks kept across runs (kernel.h: tc_kernel_cache_*), and the constant-input test
 * they rely on. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernel.h"
#include "runtime/session_internal.h"

bool tc_kernel_input_is_constant(const tc_kernel_ctx *ctx, size_t index) {
    const tc_session *s = ctx->session;
    if (!s || !s->current_env || !s->current_step || index >= ctx->n_inputs ||
        index >= s->current_step->n_inputs || !ctx->inputs[index])
        return false;
    tc_slot_ref ref = s->current_step->inputs[index];
    const tc_run_env *env = s->current_env;
    for (uint32_t i = 0; i < ref.up && env; i++)
        env = env->parent;
    if (!env || ref.slot == TCONV_NO_SLOT || ref.slot >= env->plan->n_slots)
        return false;
    const tc_rt_tensor *constant = &env->plan->constants[ref.slot];
    /* An initializer a run's inputs override sits in the slot as the caller's data instead. */
    return constant->dtype != TCONV_DTYPE_UNDEFINED && constant->data &&
           constant->data == ctx->inputs[index]->data;
}

static tc_node_cache *node_cache(const tc_kernel_ctx *ctx) {
    const tc_session *s = ctx->session;
    return s && s->current_step ? s->current_step->cache : NULL;
}

void *tc_kernel_cache_find(const tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                           size_t nbytes) {
    const tc_node_cache *c = node_cache(ctx);
    if (!c || !c->data || c->nbytes != nbytes || c->key.source != key->source ||
        memcmp(c->key.layout, key->layout, sizeof key->layout) != 0)
        return NULL;
    return c->data;
}

void tc_node_cache_free(tc_session *session, tc_node_cache *cache) {
    if (!cache || !cache->data)
        return;
    free(cache->data);
    session->stats.constant_bytes -= cache->nbytes;
    memset(cache, 0, sizeof *cache);
}

tconv_status tc_kernel_cache_store(tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                                   size_t nbytes, void **data) {
    tc_node_cache *c = node_cache(ctx);
    *data = NULL;
    if (!c || nbytes == 0 || nbytes > (size_t)INT64_MAX - TCONV_SESSION_ALIGN)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "no node cache for %zu bytes", nbytes);
    tc_node_cache_free(ctx->session, c);
    tconv_status st =
        tc_session_alloc_bytes(ctx->session, nbytes, "kept node data", &c->data, ctx->err);
    if (st != TCONV_OK)
        return st;
    c->key = *key;
    c->nbytes = nbytes;
    ctx->session->stats.constant_bytes += nbytes;
    *data = c->data;
    return TCONV_OK;
}
