/* Warnings collected by passes (and the loader) for the caller to show. */
#ifndef TCONV_PASSES_DIAGNOSTICS_H
#define TCONV_PASSES_DIAGNOSTICS_H

#include <stddef.h>

#include "ir/error.h"

typedef struct tconv_diagnostics {
    char **messages; /* malloc'd strings */
    size_t count, capacity;
} tconv_diagnostics;

void tconv_diagnostics_init(tconv_diagnostics *diags);
void tconv_diagnostics_free(tconv_diagnostics *diags);
/* Appends a formatted warning; silently drops it when out of memory (warnings are advisory).
 * diags may be NULL. */
void tconv_diagnostics_add(tconv_diagnostics *diags, const char *fmt, ...) TCONV_PRINTF(2, 3);

#endif
