/* Kernel scratch memory: the budget's scratch arena (budget.h). */
#include <stdlib.h>
#include <string.h>

#include "runtime/budget/budget.h"

/* Scratch pieces start on cache-line boundaries (the GEMM's packing buffers want 64 bytes). */
#define SCRATCH_ALIGN TC_SESSION_ALIGN

static size_t align_up(size_t n) {
    return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
}

void tc_scratch_arena_free(tc_scratch_arena *arena) {
    free(arena->base);
    memset(arena, 0, sizeof *arena);
}

/* Grows an empty arena to its high-water mark. */
static tconv_status arena_grow(tc_budget *b, tc_error *err) {
    tc_scratch_arena *a = &b->scratch;
    free(a->base);
    a->base = NULL;
    a->capacity = 0;
    void *base;
    tconv_status st = tc_budget_alloc_bytes(b, a->high_water, "scratch memory", &base, err);
    if (st != TCONV_OK)
        return st;
    a->base = base;
    a->capacity = a->high_water;
    return TCONV_OK;
}

/* A piece of its own, for a request the arena cannot hold now. */
static tconv_status own_piece(tc_budget *b, size_t bytes, tc_rt_tensor *buf, tc_error *err) {
    tconv_status st = tc_budget_alloc_bytes(b, bytes, "scratch memory", &buf->data, err);
    if (st != TCONV_OK)
        return st;
    buf->nbytes = bytes;
    buf->owns_data = true;
    if (b)
        b->scratch.own_bytes += bytes;
    return TCONV_OK;
}

tconv_status tc_budget_scratch(tc_budget *b, size_t bytes, tc_rt_tensor *buf, tc_error *err) {
    memset(buf, 0, sizeof *buf);
    if (bytes == 0)
        return TCONV_OK;
    if (bytes > (size_t)INT64_MAX - SCRATCH_ALIGN)
        return tc_error_set(err, TCONV_ERR_LIMIT, "scratch memory of %zu bytes", bytes);
    bytes = align_up(bytes);
    if (!b)
        return own_piece(NULL, bytes, buf, err);
    tc_scratch_arena *a = &b->scratch;
    size_t high_water = a->high_water; /* a refused request must not raise it for good */
    if (a->used + bytes > a->high_water)
        a->high_water = a->used + bytes;
    tconv_status st = TCONV_OK;
    if (a->used == 0 && a->capacity < a->high_water)
        st = arena_grow(b, err);
    if (st == TCONV_OK && a->used + bytes > a->capacity)
        st = own_piece(b, bytes, buf, err);
    if (st != TCONV_OK || buf->owns_data) {
        if (st != TCONV_OK)
            a->high_water = high_water;
        return st;
    }
    buf->data = a->base + a->used;
    buf->nbytes = bytes;
    a->used += bytes;
    return TCONV_OK;
}

void tc_budget_scratch_release(tc_budget *b, tc_rt_tensor *buf) {
    if (buf->owns_data) {
        free(buf->data);
        if (b)
            b->scratch.own_bytes -= buf->nbytes;
    } else if (buf->data) {
        /* Pieces are released in reverse order of their requests (a stack). */
        tc_scratch_arena *a = &b->scratch;
        a->used = (size_t)((unsigned char *)buf->data - a->base);
    }
    memset(buf, 0, sizeof *buf);
}

void tc_budget_free(tc_budget *b) {
    tc_buffer_cache_drop(&b->cache);
    tc_scratch_arena_free(&b->scratch);
}
