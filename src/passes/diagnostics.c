#include "passes/diagnostics.h"
#include "ir/vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

void tc_diagnostics_init(tc_diagnostics *diags) {
    diags->messages = NULL;
    diags->count = diags->capacity = 0;
}

void tc_diagnostics_free(tc_diagnostics *diags) {
    for (size_t i = 0; i < diags->count; i++)
        free(diags->messages[i]);
    free(diags->messages);
    tc_diagnostics_init(diags);
}

void tc_diagnostics_add(tc_diagnostics *diags, const char *fmt, ...) {
    if (!diags)
        return;
    if (!TC_VEC_RESERVE(diags->messages, diags->capacity, diags->count + 1))
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *raw = n >= 0 ? malloc((size_t)n + 1) : NULL;
    /* escaped (tc_escape_text): a byte becomes at most 4 */
    char *message = raw && (size_t)n < SIZE_MAX / 4 ? malloc(4 * (size_t)n + 1) : NULL;
    if (!message) {
        free(raw);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(raw, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tc_escape_text(message, 4 * (size_t)n + 1, raw, (size_t)n);
    free(raw);
    diags->messages[diags->count++] = message;
}
