/* Error records: a status plus a formatted message with the context (file, node, field) that a
 * user needs to fix their input. Deep code fills one in and returns the status; callers add
 * context with tc_error_prefix as the error travels up. The library never prints. */
#ifndef TC_IR_ERROR_H
#define TC_IR_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#include "tconv/status.h"

#define TC_ERROR_MESSAGE_MAX 1024

typedef struct tc_error {
    tconv_status status;
    char message[TC_ERROR_MESSAGE_MAX];
} tc_error;

#if defined(__GNUC__)
#define TC_PRINTF(fmt_index, args_index) __attribute__((format(printf, fmt_index, args_index)))
#else
#define TC_PRINTF(fmt_index, args_index)
#endif

void tc_error_clear(tc_error *err);

/* Records status and message in err (which may be NULL) and returns status, so that deep code can
 * write `return tc_error_set(err, TCONV_ERR_INVALID, "node '%s': ...", name);`. The message is
 * escaped with tc_escape_text (as are tc_error_prefix's prefixes): names read from a file cannot
 * put control bytes or invalid UTF-8 on a terminal or into a log. */
tconv_status tc_error_set(tc_error *err, tconv_status status, const char *fmt, ...) TC_PRINTF(3, 4);

/* The same with a va_list, for wrappers that take their own format. */
tconv_status tc_error_setv(tc_error *err, tconv_status status, const char *fmt, va_list ap);

/* Prepends context ("model.onnx: ") to the message already in err (which may be NULL, as for
 * tc_error_set) and returns `status`, the failure being passed up, which err records too:
 * `if (st != TCONV_OK) return tc_error_prefix(err, st, "input '%s': ", name);`. Without an
 * error record the status still travels up unchanged. */
tconv_status tc_error_prefix(tc_error *err, tconv_status status, const char *fmt, ...)
    TC_PRINTF(3, 4);

/* Copies len bytes of s into dst (capacity cap > 0, always NUL-terminated) so that they can be
 * shown on a terminal or in a log: valid UTF-8 stays as it is, and every control byte (below
 * 0x20, 0x7f, the C1 controls U+0080..U+009F), NUL and byte that is not part of valid UTF-8
 * becomes the four characters \xNN. The result holds no control byte and is valid UTF-8, so
 * escaping it again changes nothing. Truncates at a character boundary. Returns dst. */
char *tc_escape_text(char *dst, size_t cap, const char *s, size_t len);
/* The same for a C string (NULL shows as ""). */
const char *tc_escape_cstr(char *dst, size_t cap, const char *s);
/* The length of the valid UTF-8 sequence at s (1..4), or 0 when s[0] does not start one. */
size_t tc_utf8_sequence(const unsigned char *s, size_t len);

/* Shorthand for an allocation failure; `what` says what was being allocated. */
tconv_status tc_error_nomem(tc_error *err, const char *what);

#endif
