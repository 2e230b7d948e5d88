/* The session's memory: every byte a session holds goes through here, so one place keeps the
 * limit (tc_session_options.max_memory_bytes) and the statistics. The executor (session.c), the
 * scratch arena (session_scratch.c) and the node caches (session_cache.c) call in; this file
 * calls none of them.
 *
 * Allocation: tc_session_alloc for tensors, tc_session_alloc_bytes for raw blocks; released
 * buffers of a useful size are kept for the next allocation of the same size.
 *
 * Planning: the session refuses a graph whose planned memory exceeds the limit before it
 * allocates anything for it. The plan is the lifetime plan of session_plan.c replayed over the
 * values' declared shapes: initializer copies, plus every intermediate value from the step that
 * produces it to the step that releases it. Values whose shape is not known in advance count as
 * 0 bytes there; the per-allocation check in tc_session_alloc still holds them to the same limit
 * while the graph runs. */
#include "runtime/session/session_internal.h"
#include "ir/check.h"
#include "runtime/compute/test_hooks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- buffer cache */

void tc_buffer_cache_drop(tc_buffer_cache *c) {
    for (size_t i = 0; i < c->n; i++)
        free(c->data[i]);
    c->n = 0;
    c->bytes = 0;
}

/* Keeps a released buffer for reuse; false when it is too small or the cache is full. */
static bool cache_put(tc_buffer_cache *c, void *data, size_t nbytes) {
    if (!data || nbytes < TCONV_BUFFER_CACHE_MIN_BYTES || c->n == TCONV_BUFFER_CACHE_SLOTS)
        return false;
    c->data[c->n] = data;
    c->nbytes[c->n++] = nbytes;
    c->bytes += nbytes;
    return true;
}

/* The byte size of a tensor of dtype and dims; false on overflow or a bad rank. */
static bool tensor_bytes(tconv_dtype dtype, int rank, const int64_t *dims, int64_t *n,
                         int64_t *bytes) {
    return rank >= 0 && rank <= TCONV_MAX_RANK && tc_shape_elements(dims, rank, n) &&
           tc_mul_i64(*n, (int64_t)tc_rt_dtype_size(dtype), bytes);
}

/* Gives t a cached buffer of exactly the size it needs, when there is one; zeroed unless the
 * caller writes every byte itself. */
static bool cache_take(tc_buffer_cache *c, tc_rt_tensor *t, tconv_dtype dtype, int rank,
                       const int64_t *dims, bool zero) {
    int64_t n, bytes;
    if (c->n == 0 || !tensor_bytes(dtype, rank, dims, &n, &bytes) || bytes <= 0 ||
        tc_rt_dtype_size(dtype) == 0)
        return false;
    for (size_t i = 0; i < c->n; i++) {
        if (c->nbytes[i] != (size_t)bytes)
            continue;
        memset(t, 0, sizeof *t);
        t->data = c->data[i];
        t->nbytes = (size_t)bytes;
        t->dtype = dtype;
        t->rank = rank;
        memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
        t->n_elements = n;
        t->owns_data = true;
        if (zero)
            memset(t->data, 0, t->nbytes);
        c->bytes -= t->nbytes;
        c->data[i] = c->data[--c->n];
        c->nbytes[i] = c->nbytes[c->n];
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------- allocation */

tconv_status tc_session_check_limit(tc_session *session, tconv_dtype dtype, int rank,
                                    const int64_t *dims, tc_error *err) {
    int64_t n, bytes;
    size_t limit = session->options.max_memory_bytes;
    if (session->fold_max_bytes &&
        (!tensor_bytes(dtype, rank, dims, &n, &bytes) || (uint64_t)bytes > session->fold_max_bytes))
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "more than the %zu bytes a folded constant may take",
                            session->fold_max_bytes);
    if (limit == 0 || !tensor_bytes(dtype, rank, dims, &n, &bytes))
        return TCONV_OK;
    size_t held = session->stats.live_bytes + session->stats.constant_bytes +
                  session->scratch.capacity + session->scratch.own_bytes + session->input_bytes +
                  session->external_bytes;
    if (held + session->cache.bytes <= limit &&
        (uint64_t)bytes <= limit - held - session->cache.bytes)
        return TCONV_OK;
    tc_buffer_cache_drop(&session->cache);
    if (held > limit || (uint64_t)bytes > limit - held)
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "%lld more bytes would exceed the memory limit of %zu "
                            "bytes (%zu bytes in use)",
                            (long long)bytes, limit, held);
    return TCONV_OK;
}

tconv_status tc_session_alloc_bytes(tc_session *session, size_t bytes, const char *what, void **out,
                                    tc_error *err) {
    *out = NULL;
    size_t rounded = (bytes + TCONV_SESSION_ALIGN - 1) / TCONV_SESSION_ALIGN * TCONV_SESSION_ALIGN;
    if (bytes > (size_t)INT64_MAX - TCONV_SESSION_ALIGN)
        return tc_error_set(err, TCONV_ERR_LIMIT, "%s: %zu bytes", what, bytes);
    int64_t dims[1] = {(int64_t)rounded};
    tconv_status st =
        session ? tc_session_check_limit(session, TCONV_DTYPE_UINT8, 1, dims, err) : TCONV_OK;
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "%s: ", what);
    *out = aligned_alloc(TCONV_SESSION_ALIGN, rounded);
    return *out ? TCONV_OK : tc_error_nomem(err, what);
}

static tconv_status session_alloc(tc_session *session, tc_rt_tensor *t, tconv_dtype dtype, int rank,
                                  const int64_t *dims, bool zero, tc_error *err) {
    tc_rt_tensor tmp;
    if (session) {
        tconv_status st = tc_session_check_limit(session, dtype, rank, dims, err);
        if (st != TCONV_OK)
            return st;
    }
    if (!session || !cache_take(&session->cache, &tmp, dtype, rank, dims, zero)) {
        tconv_status st = zero ? tc_rt_tensor_alloc(&tmp, dtype, rank, dims, err)
                               : tc_rt_tensor_alloc_uninit(&tmp, dtype, rank, dims, err);
        if (st != TCONV_OK)
            return st;
    }
    *t = tmp;
    if (!zero && tc_test_poison_uninit && t->data) /* tests only */
        memset(t->data, 0xFF, t->nbytes);
    if (session && t->owns_data) {
        session->stats.live_bytes += t->nbytes;
        if (session->stats.live_bytes > session->stats.peak_live_bytes)
            session->stats.peak_live_bytes = session->stats.live_bytes;
        session->stats.n_allocations++;
    }
    return TCONV_OK;
}

int tc_test_poison_uninit = 0;

tconv_status tc_session_alloc(tc_session *session, tc_rt_tensor *t, tconv_dtype dtype, int rank,
                              const int64_t *dims, tc_error *err) {
    return session_alloc(session, t, dtype, rank, dims, true, err);
}

tconv_status tc_session_alloc_uninit(tc_session *session, tc_rt_tensor *t, tconv_dtype dtype,
                                     int rank, const int64_t *dims, tc_error *err) {
    return session_alloc(session, t, dtype, rank, dims, false, err);
}

void tc_session_recycle_output(tc_session *session, tc_rt_tensor *t) {
    /* outputs left the session's live bytes when they were handed out */
    if (session && t->owns_data && cache_put(&session->cache, t->data, t->nbytes)) {
        memset(t, 0, sizeof *t);
        return;
    }
    tc_rt_tensor_release(t);
}

void tc_session_release(tc_session *session, tc_rt_tensor *t) {
    if (session && t->owns_data) {
        TC_ASSERT(session->stats.live_bytes >= t->nbytes); /* every owned byte was counted */
        session->stats.live_bytes -= t->nbytes;
    }
    tc_session_recycle_output(session, t); /* keeps the buffer for reuse, or frees it */
}

void tc_session_yield_to(tc_session *done, const tc_rt_tensor *outputs, size_t n_outputs,
                         tc_session *next) {
    tc_buffer_cache_drop(&done->cache);
    if (done->scratch.used == 0)
        tc_scratch_arena_free(&done->scratch);
    size_t held = done->stats.constant_bytes;
    for (size_t i = 0; i < n_outputs; i++)
        held += outputs[i].nbytes;
    next->external_bytes = held;
}

/* ---------------------------------------------------------------- planning */

static uint64_t add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool bound_dim(const tc_plan_dim_values *bound, const char *param, int64_t *out) {
    for (size_t i = 0; bound && param && i < bound->n; i++) {
        if (bound->items[i].name && strcmp(bound->items[i].name, param) == 0) {
            *out = bound->items[i].value;
            return true;
        }
    }
    return false;
}

bool tc_plan_value_dims(const tc_session *session, const tconv_value *v,
                        const tc_plan_dim_values *bound, int64_t *dims, int *rank) {
    const tc_type *type = v ? tc_session_type(session, v) : NULL;
    if (!type || type->kind != TCONV_TYPE_TENSOR || type->rank < 0 || type->rank > TCONV_MAX_RANK)
        return false;
    for (int i = 0; i < type->rank; i++) {
        const tc_dim *d = &type->dims[i];
        if (d->kind == TCONV_DIM_STATIC)
            dims[i] = d->value;
        else if (d->kind != TCONV_DIM_SYMBOLIC || !bound_dim(bound, d->param, &dims[i]))
            return false;
        if (dims[i] < 0)
            return false;
    }
    *rank = type->rank;
    return true;
}

/* The bytes a value's tensor takes when its dtype and every dim are known (static, or symbolic
 * and bound); UINT64_MAX when that size overflows. false when unknown. */
static bool value_bytes(const tc_session *session, const tconv_value *v,
                        const tc_plan_dim_values *bound, uint64_t *out) {
    int64_t dims[TCONV_MAX_RANK];
    int rank;
    size_t esize = v ? tc_rt_dtype_size(tc_session_type(session, v)->dtype) : 0;
    if (esize == 0 || !tc_plan_value_dims(session, v, bound, dims, &rank))
        return false;
    int64_t n = 1;
    bool overflow = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) {
            *out = 0; /* an empty tensor, whatever the other dims say */
            return true;
        }
        if (!overflow && !tc_mul_i64(n, dims[i], &n))
            overflow = true;
    }
    int64_t bytes;
    *out = overflow || !tc_mul_i64(n, (int64_t)esize, &bytes) ? UINT64_MAX : (uint64_t)bytes;
    return true;
}

static uint64_t slot_bytes(const tc_session *session, const tc_graph_plan *plan, uint32_t slot,
                           const tc_plan_dim_values *bound) {
    uint64_t bytes = 0;
    if (slot != TCONV_NO_SLOT && slot < plan->n_slots &&
        !value_bytes(session, plan->slot_values[slot], bound, &bytes))
        bytes = 0;
    return bytes;
}

/* The main graph's inputs: the caller holds them for the whole run. */
static uint64_t input_bytes(const tc_session *session, const tc_graph_plan *plan,
                            const tc_plan_dim_values *bound) {
    if (plan->parent)
        return 0; /* a subgraph's inputs are its parent's values */
    if (bound && bound->inputs_given)
        return bound->input_bytes;
    uint64_t total = 0;
    for (size_t i = 0; i < plan->n_inputs; i++)
        total = add_sat(total, slot_bytes(session, plan, plan->inputs[i], bound));
    return total;
}

tconv_status tc_plan_check_memory(const tc_session *session, const tc_graph_plan *plan,
                                  const tc_plan_dim_values *bound, tc_error *err) {
    size_t limit = session->options.max_memory_bytes;
    if (limit == 0)
        return TCONV_OK;
    uint64_t constants = session->stats.constant_bytes;
    uint64_t inputs = input_bytes(session, plan, bound);
    uint64_t held = add_sat(add_sat(constants, inputs), session->external_bytes);
    uint64_t live = held, peak = held;
    const tc_step_plan *peak_step = NULL;
    for (size_t i = 0; i < plan->n_steps; i++) {
        const tc_step_plan *step = &plan->steps[i];
        for (size_t k = 0; k < step->n_outputs; k++)
            live = add_sat(live, slot_bytes(session, plan, step->outputs[k], bound));
        if (live > peak) {
            peak = live;
            peak_step = step;
        }
        for (size_t k = 0; k < step->n_releases; k++) {
            uint64_t b = slot_bytes(session, plan, step->releases[k], bound);
            live = live > b ? live - b : 0;
        }
    }
    if (peak <= (uint64_t)limit)
        return TCONV_OK;
    char where[256] = "the graph inputs and initializers";
    if (peak_step)
        tc_node_describe(peak_step->node, where, sizeof where);
    if (peak == UINT64_MAX)
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "planned memory overflows (a declared shape is too large, at %s); "
                            "the memory limit is %zu bytes",
                            where, limit);
    char beside[96] = "";
    if (session->external_bytes)
        snprintf(beside, sizeof beside, ", %zu of another model's run", session->external_bytes);
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "planned memory of %" PRIu64 " bytes (%" PRIu64 " of graph inputs, %" PRIu64
                        " of initializers%s, peak at %s) exceeds the memory limit of %zu bytes",
                        peak, inputs, constants, beside, where, limit);
}

tconv_status tc_session_check_inputs(const tc_session *session, const tc_dim_binding *bindings,
                                     size_t n_bindings, tc_error *err) {
    tc_plan_dim_values bound = {bindings, n_bindings, false, 0};
    tconv_status st = tc_plan_check_memory(session, session->main, &bound, err);
    return st == TCONV_OK ? tc_plan_check_work(session, session->main, &bound, err) : st;
}

tconv_status tc_session_check_input_bytes(const tc_session *session, uint64_t bytes,
                                          const char *what, tc_error *err) {
    size_t limit = session->options.max_memory_bytes;
    uint64_t held = session->stats.constant_bytes;
    if (limit == 0 || (held <= limit && bytes <= (uint64_t)limit - held))
        return TCONV_OK;
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "input '%s': %" PRIu64 " bytes of inputs and %" PRIu64 " of initializers "
                        "exceed the memory limit of %zu bytes",
                        what, bytes, held, limit);
}

size_t tc_session_input_room(const tc_session *session, uint64_t held) {
    size_t limit = session->options.max_memory_bytes;
    if (limit == 0)
        return SIZE_MAX;
    uint64_t used = add_sat(held, session->stats.constant_bytes);
    return used >= limit ? 0 : (size_t)(limit - used);
}

tconv_status tc_plan_check_constant(const tc_session *session, const tconv_tensor *t,
                                    tc_error *err) {
    size_t limit = session->options.max_memory_bytes;
    int64_t n;
    size_t esize = tc_rt_dtype_size(t->dtype);
    if (limit == 0 || esize == 0 || !tc_tensor_elements(t, &n))
        return TCONV_OK; /* the copy itself reports what it cannot handle */
    int64_t bytes;
    uint64_t held = session->stats.constant_bytes;
    if (tc_mul_i64(n, (int64_t)esize, &bytes) && held <= limit &&
        (uint64_t)bytes <= (uint64_t)limit - held)
        return TCONV_OK;
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "initializer '%s' needs %" PRId64 " x %zu bytes, over the memory limit "
                        "of %zu bytes (%" PRIu64 " bytes of initializers already held)",
                        t->name ? t->name : "", n, esize, limit, held);
}
