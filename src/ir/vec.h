/* Growable arrays: the one grow-by-doubling helper (heap here; arena arrays grow through
 * tc_arena_grow_array in arena.h, which takes its capacity from tc_vec_next_cap). A growable array
 * is three fields the caller owns (items, count, capacity); these functions only make room. On
 * failure (out of memory, or a byte size that would overflow size_t) they return false and leave
 * the array and its capacity as they were, so the caller reports TCONV_ERR_NOMEM with its own
 * words.
 *
 *     if (!TC_VEC_RESERVE(list->items, list->cap, list->n + 1))
 *         return tc_error_nomem(err, "the list");
 *     list->items[list->n++] = item;
 */
#ifndef TC_IR_VEC_H
#define TC_IR_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The capacity to grow to so that `need` elements of `elem_size` bytes fit: `cap` doubled (from
 * 8 when 0) until it holds `need`. False when that many bytes would not fit in a size_t. */
/* Inline: every node's first attribute, input and output arrays grow through it. */
static inline bool tc_vec_next_cap(size_t cap, size_t elem_size, size_t need, size_t *out) {
    if (elem_size == 0 || need > SIZE_MAX / elem_size)
        return false;
    size_t next = cap ? cap : 8;
    while (next < need) {
        if (next > SIZE_MAX / 2 / elem_size) {
            next = need; /* doubling would overflow: exactly what is asked, which fits */
            break;
        }
        next *= 2;
    }
    *out = next;
    return true;
}

/* Heap array (realloc; free() it when done). */
bool tc_vec_reserve(void **items, size_t *cap, size_t elem_size, size_t need);

/* Typed form: `items` is a T* lvalue, `cap` a size_t lvalue, `need` an expression without side
 * effects (evaluated twice). An array with room already returns true without a call: appends
 * run per node and per value while a model loads. */
#define TC_VEC_RESERVE(items, cap, need)                                                           \
    ((need) <= (cap) || tc_vec_reserve((void **)&(items), &(cap), sizeof *(items), (need)))

#endif
