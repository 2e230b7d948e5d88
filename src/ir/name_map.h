/* A string -> pointer hash map (open addressing, linear probing, at most 3/4 full). Keys are not
 * copied: they must outlive the map (IR names live in the model's arena). */
#ifndef TC_IR_NAME_MAP_H
#define TC_IR_NAME_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tc_name_map_slot {
    const char *key;
    void *value;
    uint64_t hash; /* of key: most probes end on a hash mismatch, without reading the key */
} tc_name_map_slot;

typedef struct tc_name_map {
    tc_name_map_slot *slots;
    size_t capacity; /* power of two or 0 */
    size_t count;
} tc_name_map;

void tc_name_map_init(tc_name_map *map);
void tc_name_map_free(tc_name_map *map);
void *tc_name_map_get(const tc_name_map *map, const char *key);
bool tc_name_map_contains(const tc_name_map *map, const char *key);
/* Inserts or replaces; false when out of memory. */
bool tc_name_map_put(tc_name_map *map, const char *key, void *value);

#endif
