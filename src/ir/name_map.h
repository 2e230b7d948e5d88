/* A string -> pointer hash map (open addressing, linear probing, at most 3/4 full). Keys are not
 * copied: they must outlive the map (IR names live in the model's arena). */
#ifndef TCONV_IR_NAME_MAP_H
#define TCONV_IR_NAME_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tconv_name_map_slot {
    const char *key;
    void *value;
    uint64_t hash; /* of key: most probes end on a hash mismatch, without reading the key */
} tconv_name_map_slot;

typedef struct tconv_name_map {
    tconv_name_map_slot *slots;
    size_t capacity; /* power of two or 0 */
    size_t count;
} tconv_name_map;

void tconv_name_map_init(tconv_name_map *map);
void tconv_name_map_free(tconv_name_map *map);
void *tconv_name_map_get(const tconv_name_map *map, const char *key);
bool tconv_name_map_contains(const tconv_name_map *map, const char *key);
/* Inserts or replaces; false when out of memory. */
bool tconv_name_map_put(tconv_name_map *map, const char *key, void *value);

#endif
