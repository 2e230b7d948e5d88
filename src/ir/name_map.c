#include "ir/name_map.h"
#include "ir/check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

void tc_name_map_init(tc_name_map *map) {
    map->slots = NULL;
    map->capacity = 0;
    map->count = 0;
}

void tc_name_map_free(tc_name_map *map) {
    free(map->slots);
    tc_name_map_init(map);
}

static tc_name_map_slot *map_find_slot(const tc_name_map *map, const char *key, uint64_t hash) {
    size_t mask = map->capacity - 1;
    size_t i = (size_t)hash & mask;
    for (;;) {
        tc_name_map_slot *slot = &map->slots[i];
        if (!slot->key || (slot->hash == hash && strcmp(slot->key, key) == 0))
            return slot;
        i = (i + 1) & mask;
    }
}

void *tc_name_map_get(const tc_name_map *map, const char *key) {
    if (!map->capacity || !key)
        return NULL;
    tc_name_map_slot *slot = map_find_slot(map, key, name_hash(key));
    return slot->key ? slot->value : NULL;
}

bool tc_name_map_contains(const tc_name_map *map, const char *key) {
    if (!map->capacity || !key)
        return false;
    return map_find_slot(map, key, name_hash(key))->key != NULL;
}

static bool map_grow(tc_name_map *map) {
    size_t capacity = map->capacity ? map->capacity * 2 : 64;
    if (capacity > SIZE_MAX / sizeof(tc_name_map_slot))
        return false;
    tc_name_map grown = {calloc(capacity, sizeof(tc_name_map_slot)), capacity, 0};
    if (!grown.slots)
        return false;
    for (size_t i = 0; i < map->capacity; i++) {
        if (map->slots[i].key) {
            *map_find_slot(&grown, map->slots[i].key, map->slots[i].hash) = map->slots[i];
            grown.count++;
        }
    }
    free(map->slots);
    *map = grown;
    return true;
}

bool tc_name_map_put(tc_name_map *map, const char *key, void *value) {
    if (!key)
        return false;
    if ((map->count + 1) * 4 > map->capacity * 3 && !map_grow(map))
        return false;
    TC_ASSERT(map->count < map->capacity); /* probing ends on an empty slot */
    uint64_t hash = name_hash(key);
    tc_name_map_slot *slot = map_find_slot(map, key, hash);
    if (!slot->key) {
        slot->key = key;
        slot->hash = hash;
        map->count++;
    }
    slot->value = value;
    return true;
}
