#include "ir/strbuf.h"
#include "ir/vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void tc_strbuf_init(tc_strbuf *sb) {
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->failed = false;
}

void tc_strbuf_free(tc_strbuf *sb) {
    free(sb->data);
    tc_strbuf_init(sb);
}

static bool strbuf_reserve(tc_strbuf *sb, size_t extra) {
    if (sb->failed)
        return false;
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    if (extra > SIZE_MAX - sb->len - 1 || !TC_VEC_RESERVE(sb->data, sb->cap, sb->len + extra + 1)) {
        sb->failed = true;
        return false;
    }
    return true;
}

static void strbuf_append_bytes(tc_strbuf *sb, const char *s, size_t n) {
    if (!strbuf_reserve(sb, n))
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void tc_strbuf_append(tc_strbuf *sb, const char *s) {
    strbuf_append_bytes(sb, s, strlen(s));
}

/* Formats straight into the free space first: a report appends many short numbers and names,
 * and measuring each with a separate vsnprintf call doubled the cost. */
void tc_strbuf_appendf(tc_strbuf *sb, const char *fmt, ...) {
    if (!strbuf_reserve(sb, 32))
        return;
    size_t room = sb->cap - sb->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(sb->data + sb->len, room, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < room) {
        sb->len += (size_t)n;
        return;
    }
    sb->data[sb->len] = '\0';
    if (n < 0 || !strbuf_reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void tc_strbuf_append_int(tc_strbuf *sb, long long value) {
    char digits[24];
    size_t n = 0;
    /* negate in unsigned arithmetic: LLONG_MIN has no positive counterpart */
    unsigned long long u = value < 0 ? 0ull - (unsigned long long)value : (unsigned long long)value;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (value < 0)
        digits[sizeof digits - 1 - n++] = '-';
    strbuf_append_bytes(sb, digits + sizeof digits - n, n);
}

/* Valid JSON for any bytes: controls (and DEL) become \\u00XX, and each byte that is not part
 * of valid UTF-8 becomes U+FFFD (\\ufffd), as a decoder replacing errors would read it. */
void tc_strbuf_append_json_string(tc_strbuf *sb, const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    strbuf_append_bytes(sb, "\"", 1);
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        size_t n = tc_utf8_sequence(p + i, len - i);
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            strbuf_append_bytes(sb, esc, 2);
        } else if (c < 0x20 || c == 0x7f) {
            tc_strbuf_appendf(sb, "\\u%04x", c);
        } else if (n == 0) {
            strbuf_append_bytes(sb, "\\ufffd", 6);
            n = 1;
        } else {
            strbuf_append_bytes(sb, s + i, n);
        }
        i += n ? n : 1;
    }
    strbuf_append_bytes(sb, "\"", 1);
}

const char *tc_strbuf_str(const tc_strbuf *sb) {
    return sb->data ? sb->data : "";
}

char *tc_strbuf_take(tc_strbuf *sb) {
    char *data = sb->data;
    tc_strbuf_init(sb);
    return data;
}
