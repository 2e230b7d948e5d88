#include "ir/arena.h"
#include "ir/check.h"

#include "ir/vec.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 16u
#define ARENA_BLOCK_MIN (64u * 1024u)

typedef struct arena_block {
    struct arena_block *next;
    size_t size;
    size_t used;
    _Alignas(16) unsigned char data[];
} arena_block;

struct tc_arena {
    arena_block *head;
};

tc_arena *tc_arena_create(void) {
    return calloc(1, sizeof(tc_arena));
}

void tc_arena_destroy(tc_arena *arena) {
    if (!arena)
        return;
    arena_block *b = arena->head;
    while (b) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(arena);
}

static arena_block *arena_add_block(tc_arena *arena, size_t min_size) {
    size_t size = min_size > ARENA_BLOCK_MIN ? min_size : ARENA_BLOCK_MIN;
    if (size > SIZE_MAX - sizeof(arena_block))
        return NULL;
    arena_block *b = malloc(sizeof(arena_block) + size);
    if (!b)
        return NULL;
    b->size = size;
    b->used = 0;
    /* Large one-off allocations go behind the head so the head keeps serving small ones. */
    if (arena->head && min_size > ARENA_BLOCK_MIN / 2) {
        b->next = arena->head->next;
        arena->head->next = b;
    } else {
        b->next = arena->head;
        arena->head = b;
    }
    return b;
}

void *tc_arena_alloc(tc_arena *arena, size_t size) {
    if (!arena || size > SIZE_MAX - ARENA_ALIGN)
        return NULL;
    size_t rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (rounded == 0)
        rounded = ARENA_ALIGN;
    arena_block *b = arena->head;
    if (!b || b->size - b->used < rounded) {
        b = arena_add_block(arena, rounded);
        if (!b)
            return NULL;
    }
    TC_ASSERT(b->used % ARENA_ALIGN == 0 && b->size - b->used >= rounded);
    void *p = b->data + b->used;
    b->used += rounded;
    memset(p, 0, size);
    return p;
}

void *tc_arena_calloc(tc_arena *arena, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size)
        return NULL;
    return tc_arena_alloc(arena, count * size);
}

void *tc_arena_memdup(tc_arena *arena, const void *data, size_t size) {
    void *p = tc_arena_alloc(arena, size);
    if (p && size)
        memcpy(p, data, size);
    return p;
}

char *tc_arena_strdup(tc_arena *arena, const char *s) {
    if (!s)
        return NULL;
    return tc_arena_memdup(arena, s, strlen(s) + 1);
}

/* Names are short: formatted once into a stack buffer, measured separately only when longer. */
char *tc_arena_sprintf(tc_arena *arena, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    if ((size_t)n < sizeof small)
        return tc_arena_memdup(arena, small, (size_t)n + 1);
    char *p = tc_arena_alloc(arena, (size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

bool tc_arena_grow_array(tc_arena *arena, void **array, size_t *cap, size_t elem_size,
                         size_t need) {
    if (need <= *cap)
        return true;
    size_t new_cap;
    if (!tc_vec_next_cap(*cap, elem_size, need, &new_cap))
        return false;
    void *grown = tc_arena_calloc(arena, new_cap, elem_size);
    if (!grown)
        return false;
    if (*cap)
        memcpy(grown, *array, *cap * elem_size);
    *array = grown;
    *cap = new_cap;
    return true;
}
