/* A growable, always NUL-terminated string for building messages, reports and JSON. */
#ifndef TC_IR_STRBUF_H
#define TC_IR_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/error.h"

typedef struct tc_strbuf {
    char *data; /* malloc'd; NULL until the first append */
    size_t len, cap;
    bool failed; /* an allocation failed: contents are truncated */
} tc_strbuf;

void tc_strbuf_init(tc_strbuf *sb);
void tc_strbuf_free(tc_strbuf *sb);
void tc_strbuf_append(tc_strbuf *sb, const char *s);
void tc_strbuf_appendf(tc_strbuf *sb, const char *fmt, ...) TC_PRINTF(2, 3);
/* Appends a decimal integer (what "%lld" gives, without the format parsing). */
void tc_strbuf_append_int(tc_strbuf *sb, long long value);
/* Appends s as a JSON string literal (quoted, escaped). */
void tc_strbuf_append_json_string(tc_strbuf *sb, const char *s, size_t len);
/* The contents ("" when empty); owned by sb. */
const char *tc_strbuf_str(const tc_strbuf *sb);
/* Hands the malloc'd contents to the caller (who frees) and resets sb. */
char *tc_strbuf_take(tc_strbuf *sb);

#endif
