/* Warnings collected by passes (and the loader) for the caller to show. */
#ifndef TC_PASSES_DIAGNOSTICS_H
#define TC_PASSES_DIAGNOSTICS_H

#include <stddef.h>

#include "ir/error.h"

typedef struct tc_diagnostics {
    char **messages; /* malloc'd strings */
    size_t count, capacity;
} tc_diagnostics;

void tc_diagnostics_init(tc_diagnostics *diags);
void tc_diagnostics_free(tc_diagnostics *diags);
/* Appends a formatted warning; silently drops it when out of memory (warnings are advisory).
 * diags may be NULL. */
void tc_diagnostics_add(tc_diagnostics *diags, const char *fmt, ...) TC_PRINTF(2, 3);

#endif
