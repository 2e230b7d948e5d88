#include "passes/diagnostics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void tconv_diagnostics_init(tconv_diagnostics *diags) {
    diags->messages = NULL;
    diags->count = diags->capacity = 0;
}

void tconv_diagnostics_free(tconv_diagnostics *diags) {
    for (size_t i = 0; i < diags->count; i++)
        free(diags->messages[i]);
    free(diags->messages);
    tconv_diagnostics_init(diags);
}

void tconv_diagnostics_add(tconv_diagnostics *diags, const char *fmt, ...) {
    if (!diags)
        return;
    if (diags->count == diags->capacity) {
        size_t capacity = diags->capacity ? diags->capacity * 2 : 8;
        char **grown = realloc(diags->messages, capacity * sizeof(char *));
        if (!grown)
            return;
        diags->messages = grown;
        diags->capacity = capacity;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *message = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!message)
        return;
    va_start(ap, fmt);
    vsnprintf(message, (size_t)n + 1, fmt, ap);
    va_end(ap);
    diags->messages[diags->count++] = message;
}
