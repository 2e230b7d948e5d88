/* Growable arrays (vec.h): the one place an array's capacity doubles. */
#include "ir/vec.h"

#include <stdint.h>
#include <stdlib.h>

bool tc_vec_next_cap(size_t cap, size_t elem_size, size_t need, size_t *out) {
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

bool tc_vec_reserve(void **items, size_t *cap, size_t elem_size, size_t need) {
    if (need <= *cap)
        return true;
    size_t next;
    if (!tc_vec_next_cap(*cap, elem_size, need, &next))
        return false;
    void *grown = realloc(*items, next * elem_size);
    if (!grown)
        return false;
    *items = grown;
    *cap = next;
    return true;
}
