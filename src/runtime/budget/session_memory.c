/* A run's memory and work: every byte a session holds goes through here, so one place keeps the
 * limit (tc_budget.max_memory_bytes) and the statistics. The executor, the kernels (through
 * their context), the scratch arena (session_scratch.c) and kept node data call in; this file
 * calls nothing above it. The planned memory check, which replays a plan over declared shapes,
 * is the session's (session_memplan.c).
 *
 * Allocation: tc_budget_alloc for tensors, tc_budget_alloc_bytes for raw blocks; released
 * buffers of a useful size are kept for the next allocation of the same size. */
#include "runtime/budget/budget.h"
#include "ir/check.h"
#include "runtime/compute/compute.h"

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
    if (!data || nbytes < TC_BUFFER_CACHE_MIN_BYTES || c->n == TC_BUFFER_CACHE_SLOTS)
        return false;
    c->data[c->n] = data;
    c->nbytes[c->n++] = nbytes;
    c->bytes += nbytes;
    return true;
}

/* The byte size of a tensor of dtype and dims; false on overflow or a bad rank. */
static bool tensor_bytes(tconv_dtype dtype, int rank, const int64_t *dims, int64_t *n,
                         int64_t *bytes) {
    return rank >= 0 && rank <= TC_MAX_RANK && tc_shape_elements(dims, rank, n) &&
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

tconv_status tc_budget_check_limit(tc_budget *b, tconv_dtype dtype, int rank, const int64_t *dims,
                                   tc_error *err) {
    int64_t n, bytes;
    size_t limit = b->max_memory_bytes;
    if (b->fold_max_bytes &&
        (!tensor_bytes(dtype, rank, dims, &n, &bytes) || (uint64_t)bytes > b->fold_max_bytes))
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "more than the %zu bytes a folded constant may take",
                            b->fold_max_bytes);
    if (limit == 0 || !tensor_bytes(dtype, rank, dims, &n, &bytes))
        return TCONV_OK;
    size_t held = b->stats.live_bytes + b->stats.constant_bytes + b->scratch.capacity +
                  b->scratch.own_bytes + b->input_bytes + b->external_bytes;
    if (held + b->cache.bytes <= limit && (uint64_t)bytes <= limit - held - b->cache.bytes)
        return TCONV_OK;
    tc_buffer_cache_drop(&b->cache);
    if (held > limit || (uint64_t)bytes > limit - held)
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "%lld more bytes would exceed the memory limit of %zu "
                            "bytes (%zu bytes in use)",
                            (long long)bytes, limit, held);
    return TCONV_OK;
}

tconv_status tc_budget_alloc_bytes(tc_budget *b, size_t bytes, const char *what, void **out,
                                   tc_error *err) {
    *out = NULL;
    size_t rounded = (bytes + TC_SESSION_ALIGN - 1) / TC_SESSION_ALIGN * TC_SESSION_ALIGN;
    if (bytes > (size_t)INT64_MAX - TC_SESSION_ALIGN)
        return tc_error_set(err, TCONV_ERR_LIMIT, "%s: %zu bytes", what, bytes);
    int64_t dims[1] = {(int64_t)rounded};
    tconv_status st = b ? tc_budget_check_limit(b, TCONV_DTYPE_UINT8, 1, dims, err) : TCONV_OK;
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "%s: ", what);
    *out = aligned_alloc(TC_SESSION_ALIGN, rounded);
    return *out ? TCONV_OK : tc_error_nomem(err, what);
}

static tconv_status budget_alloc(tc_budget *b, tc_rt_tensor *t, tconv_dtype dtype, int rank,
                                 const int64_t *dims, bool zero, tc_error *err) {
    tc_rt_tensor tmp;
    if (b) {
        tconv_status st = tc_budget_check_limit(b, dtype, rank, dims, err);
        if (st != TCONV_OK)
            return st;
    }
    if (!b || !cache_take(&b->cache, &tmp, dtype, rank, dims, zero)) {
        tconv_status st = zero ? tc_rt_tensor_alloc(&tmp, dtype, rank, dims, err)
                               : tc_rt_tensor_alloc_uninit(&tmp, dtype, rank, dims, err);
        if (st != TCONV_OK)
            return st;
    }
    *t = tmp;
    if (!zero && tc_test_poison_uninit && t->data) /* tests only */
        memset(t->data, 0xFF, t->nbytes);
    if (b && t->owns_data) {
        b->stats.live_bytes += t->nbytes;
        if (b->stats.live_bytes > b->stats.peak_live_bytes)
            b->stats.peak_live_bytes = b->stats.live_bytes;
        b->stats.n_allocations++;
    }
    return TCONV_OK;
}

int tc_test_poison_uninit = 0;

tconv_status tc_budget_alloc(tc_budget *b, tc_rt_tensor *t, tconv_dtype dtype, int rank,
                             const int64_t *dims, tc_error *err) {
    return budget_alloc(b, t, dtype, rank, dims, true, err);
}

tconv_status tc_budget_alloc_uninit(tc_budget *b, tc_rt_tensor *t, tconv_dtype dtype, int rank,
                                    const int64_t *dims, tc_error *err) {
    return budget_alloc(b, t, dtype, rank, dims, false, err);
}

void tc_budget_recycle(tc_budget *b, tc_rt_tensor *t) {
    /* outputs left the session's live bytes when they were handed out */
    if (b && t->owns_data && cache_put(&b->cache, t->data, t->nbytes)) {
        memset(t, 0, sizeof *t);
        return;
    }
    tc_rt_tensor_release(t);
}

void tc_budget_release(tc_budget *b, tc_rt_tensor *t) {
    if (b && t->owns_data) {
        TC_ASSERT(b->stats.live_bytes >= t->nbytes); /* every owned byte was counted */
        b->stats.live_bytes -= t->nbytes;
    }
    tc_budget_recycle(b, t); /* keeps the buffer for reuse, or frees it */
}

void tc_node_block_free(tc_budget *b, void **data, size_t *nbytes) {
    if (!*data)
        return;
    free(*data);
    if (b)
        b->stats.constant_bytes -= *nbytes;
    *data = NULL;
    *nbytes = 0;
}

void tc_node_cache_free(tc_budget *b, tc_node_cache *cache) {
    if (!cache)
        return;
    tc_node_block_free(b, &cache->data, &cache->nbytes);
    tc_node_block_free(b, &cache->shape_table, &cache->shape_table_bytes);
    memset(cache, 0, sizeof *cache);
}

/* ---------------------------------------------------------------- work */

tconv_status tc_budget_charge_work(tc_budget *b, uint64_t work, tc_error *err) {
    if (!b)
        return TCONV_OK;
    b->stats.work = tc_work_add_sat(b->stats.work, work);
    uint64_t limit = b->max_work;
    if (limit == 0 || b->stats.work <= limit)
        return TCONV_OK;
    return tc_error_set(err, TCONV_ERR_LIMIT,
                        "work of %" PRIu64 " (multiply-adds and element operations) would take "
                        "the run past the work limit of %" PRIu64 " (%" PRIu64 " done)",
                        work, limit, b->stats.work - work);
}
