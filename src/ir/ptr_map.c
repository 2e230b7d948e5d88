/* A pointer -> pointer hash map (ptr_map.h). */
#include "ir/ptr_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t pointer_hash(const void *key) {
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h;
}

static size_t map_slot(const tc_ptr_map *map, const void *key) {
    size_t mask = map->capacity - 1;
    size_t i = pointer_hash(key) & mask;
    while (map->keys[i] && map->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

static bool map_grow(tc_ptr_map *map) {
    size_t capacity = map->capacity ? map->capacity * 2 : 64;
    tc_ptr_map bigger = {calloc(capacity, sizeof(void *)), calloc(capacity, sizeof(void *)),
                         capacity, 0};
    if (!bigger.keys || !bigger.values) {
        free(bigger.keys);
        free(bigger.values);
        return false;
    }
    for (size_t i = 0; i < map->capacity; i++) {
        if (map->keys[i]) {
            size_t k = map_slot(&bigger, map->keys[i]);
            bigger.keys[k] = map->keys[i];
            bigger.values[k] = map->values[i];
            bigger.count++;
        }
    }
    free(map->keys);
    free(map->values);
    *map = bigger;
    return true;
}

void tc_ptr_map_free(tc_ptr_map *map) {
    free(map->keys);
    free(map->values);
    memset(map, 0, sizeof *map);
}

void *tc_ptr_map_get(const tc_ptr_map *map, const void *key) {
    if (map->capacity == 0)
        return NULL;
    size_t i = map_slot(map, key);
    return map->keys[i] ? map->values[i] : NULL;
}

bool tc_ptr_map_put(tc_ptr_map *map, const void *key, void *value) {
    if (2 * (map->count + 1) > map->capacity && !map_grow(map))
        return false;
    size_t i = map_slot(map, key);
    if (!map->keys[i]) {
        map->keys[i] = key;
        map->count++;
    }
    map->values[i] = value;
    return true;
}
