/* A bump allocator that owns everything of one model: IR objects are never freed one by one,
 * the whole arena goes with the model. This keeps ownership trivial for passes that rewrite. */
#ifndef TC_IR_ARENA_H
#define TC_IR_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tc_arena tc_arena;

tc_arena *tc_arena_create(void);
void tc_arena_destroy(tc_arena *arena);

/* Zero-filled, 16-byte aligned memory that lives until the arena is destroyed; NULL when out of
 * memory or when size overflows. */
void *tc_arena_alloc(tc_arena *arena, size_t size);
/* count * size with an overflow check. */
void *tc_arena_calloc(tc_arena *arena, size_t count, size_t size);
void *tc_arena_memdup(tc_arena *arena, const void *data, size_t size);
/* NULL in gives NULL out (proto2 "absent" strings stay absent). */
char *tc_arena_strdup(tc_arena *arena, const char *s);
char *tc_arena_sprintf(tc_arena *arena, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Grows an arena array to hold at least `need` elements of elem_size (doubling); the old block
 * stays in the arena. false when out of memory. */
bool tc_arena_grow_array(tc_arena *arena, void **array, size_t *cap, size_t elem_size, size_t need);

#endif
