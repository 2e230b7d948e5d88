/* A growable, always NUL-terminated string for building messages, reports and JSON. */
#ifndef TCONV_IR_STRBUF_H
#define TCONV_IR_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/error.h"

typedef struct tconv_strbuf {
    char *data; /* malloc'd; NULL until the first append */
    size_t len, cap;
    bool failed; /* an allocation failed: contents are truncated */
} tconv_strbuf;

void tconv_strbuf_init(tconv_strbuf *sb);
void tconv_strbuf_free(tconv_strbuf *sb);
void tconv_strbuf_append(tconv_strbuf *sb, const char *s);
void tconv_strbuf_appendf(tconv_strbuf *sb, const char *fmt, ...) TCONV_PRINTF(2, 3);
/* Appends a decimal integer (what "%lld" gives, without the format parsing). */
void tconv_strbuf_append_int(tconv_strbuf *sb, long long value);
/* Appends s as a JSON string literal (quoted, escaped). */
void tconv_strbuf_append_json_string(tconv_strbuf *sb, const char *s, size_t len);
/* The contents ("" when empty); owned by sb. */
const char *tconv_strbuf_str(const tconv_strbuf *sb);
/* Hands the malloc'd contents to the caller (who frees) and resets sb. */
char *tconv_strbuf_take(tconv_strbuf *sb);

#endif
