/* The inferred-type side table: value -> the tensor type shape inference found for it, kept
 * beside the model instead of in it. The API fills one (shape inference into a table, see
 * passes/pass.h) and hands it to the session it creates; planning reads a value's type through
 * tc_type_seen, so the caller's model is never written and two sessions planned from one model
 * at once share nothing they write. A value the table lacks has the type the model declares. */
#ifndef TC_IR_TYPE_TABLE_H
#define TC_IR_TYPE_TABLE_H

#include "ir/ir.h"
#include "ir/ptr_map.h"

typedef struct tc_type_table {
    tc_ptr_map entries; /* const tconv_value* -> type_entry* (malloc'd) */
} tc_type_table;

/* A zeroed table is empty too. */
void tc_type_table_init(tc_type_table *table);
void tc_type_table_free(tc_type_table *table);

/* The table's type for `value`, or NULL. */
const tc_type *tc_type_table_get(const tc_type_table *table, const tconv_value *value);

/* Records (or replaces) a tensor type; dims are copied (their symbol names are the model's and
 * must outlive the table). TCONV_ERR_INVALID for a rank outside 0..TC_MAX_RANK,
 * TCONV_ERR_NOMEM. */
tconv_status tc_type_table_put(tc_type_table *table, const tconv_value *value, tconv_dtype dtype,
                               int rank, const tc_dim *dims, tc_error *err);

/* The type a reader of the model plus the table sees: the table's where it has one, else the
 * model's. `table` may be NULL. */
const tc_type *tc_type_seen(const tc_type_table *table, const tconv_value *value);

#endif
