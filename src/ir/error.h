/* Error records: a status plus a formatted message with the context (file, node, field) that a
 * user needs to fix their input. Deep code fills one in and returns the status; callers add
 * context with tc_error_prefix as the error travels up. The library never prints. */
#ifndef TCONV_IR_ERROR_H
#define TCONV_IR_ERROR_H

#include <stdarg.h>

#include "tconv/status.h"

#define TCONV_ERROR_MESSAGE_MAX 1024

typedef struct tc_error {
    tconv_status status;
    char message[TCONV_ERROR_MESSAGE_MAX];
} tc_error;

#if defined(__GNUC__)
#define TCONV_PRINTF(fmt_index, args_index) __attribute__((format(printf, fmt_index, args_index)))
#else
#define TCONV_PRINTF(fmt_index, args_index)
#endif

void tc_error_clear(tc_error *err);

/* Records status and message in err (which may be NULL) and returns status, so that deep code can
 * write `return tc_error_set(err, TCONV_ERR_INVALID, "node '%s': ...", name);`. */
tconv_status tc_error_set(tc_error *err, tconv_status status, const char *fmt, ...)
    TCONV_PRINTF(3, 4);

/* The same with a va_list, for wrappers that take their own format. */
tconv_status tc_error_setv(tc_error *err, tconv_status status, const char *fmt, va_list ap);

/* Prepends context ("model.onnx: ") to the message already in err (which may be NULL, as for
 * tc_error_set) and returns `status`, the failure being passed up, which err records too:
 * `if (st != TCONV_OK) return tc_error_prefix(err, st, "input '%s': ", name);`. Without an
 * error record the status still travels up unchanged. */
tconv_status tc_error_prefix(tc_error *err, tconv_status status, const char *fmt, ...)
    TCONV_PRINTF(3, 4);

/* Shorthand for an allocation failure; `what` says what was being allocated. */
tconv_status tc_error_nomem(tc_error *err, const char *what);

#endif
