/* Growable arrays (vec.h): the one place an array's capacity doubles. */
#include "ir/vec.h"

#include <stdint.h>
#include <stdlib.h>

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
