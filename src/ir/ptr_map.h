/* A pointer -> pointer hash map (open addressing, linear probing, at most half full), for
 * per-value side tables (shape inference's known contents, the inferred-type table). Keys are
 * compared as pointers and never dereferenced. A zeroed map is empty. */
#ifndef TC_IR_PTR_MAP_H
#define TC_IR_PTR_MAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tc_ptr_map {
    const void **keys;
    void **values;
    size_t capacity; /* power of two or 0 */
    size_t count;
} tc_ptr_map;

void tc_ptr_map_free(tc_ptr_map *map);
void *tc_ptr_map_get(const tc_ptr_map *map, const void *key);
/* Inserts or replaces; false when out of memory. */
bool tc_ptr_map_put(tc_ptr_map *map, const void *key, void *value);

#endif
