/* The inferred-type side table (type_table.h). */
#include "ir/type_table.h"

#include <stdlib.h>
#include <string.h>

typedef struct type_entry {
    tc_type type; /* type.dims points at dims */
    tc_dim dims[TC_MAX_RANK];
} type_entry;

void tc_type_table_init(tc_type_table *table) {
    memset(table, 0, sizeof *table);
}

void tc_type_table_free(tc_type_table *table) {
    for (size_t i = 0; i < table->entries.capacity; i++) {
        if (table->entries.keys[i])
            free(table->entries.values[i]);
    }
    tc_ptr_map_free(&table->entries);
}

const tc_type *tc_type_table_get(const tc_type_table *table, const tconv_value *value) {
    type_entry *e = table ? tc_ptr_map_get(&table->entries, value) : NULL;
    return e ? &e->type : NULL;
}

tconv_status tc_type_table_put(tc_type_table *table, const tconv_value *value, tconv_dtype dtype,
                               int rank, const tc_dim *dims, tc_error *err) {
    if (rank < 0 || rank > TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_INVALID, "value '%s': rank %d outside 0..%d",
                            value->name ? value->name : "", rank, TC_MAX_RANK);
    type_entry *e = tc_ptr_map_get(&table->entries, value);
    if (!e) {
        if (!(e = calloc(1, sizeof *e)))
            return tc_error_nomem(err, "the inferred-type table");
        if (!tc_ptr_map_put(&table->entries, value, e)) {
            free(e);
            return tc_error_nomem(err, "the inferred-type table");
        }
    }
    e->type = (tc_type){.kind = TCONV_TYPE_TENSOR, .dtype = dtype, .rank = rank, .dims = e->dims};
    if (rank > 0)
        memcpy(e->dims, dims, (size_t)rank * sizeof *dims);
    return TCONV_OK;
}

const tc_type *tc_type_seen(const tc_type_table *table, const tconv_value *value) {
    const tc_type *t = tc_type_table_get(table, value);
    return t ? t : &value->type;
}
