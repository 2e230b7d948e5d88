#include "ir/error.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *tconv_status_name(tconv_status status) {
    switch (status) {
    case TCONV_OK:
        return "ok";
    case TCONV_ERR_USAGE:
        return "usage";
    case TCONV_ERR_IO:
        return "io";
    case TCONV_ERR_PARSE:
        return "parse";
    case TCONV_ERR_INVALID:
        return "invalid";
    case TCONV_ERR_UNSUPPORTED:
        return "unsupported";
    case TCONV_ERR_LIMIT:
        return "limit";
    case TCONV_ERR_NOMEM:
        return "nomem";
    case TCONV_ERR_MISMATCH:
        return "mismatch";
    }
    return "unknown";
}

void tc_error_clear(tc_error *err) {
    if (err) {
        err->status = TCONV_OK;
        err->message[0] = '\0';
    }
}

size_t tc_utf8_sequence(const unsigned char *s, size_t len) {
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf; /* no UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (len < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    }
    return n;
}

static bool is_control(const unsigned char *s, size_t n) {
    if (n == 1)
        return s[0] < 0x20 || s[0] == 0x7f;
    return n == 2 && s[0] == 0xc2 && s[1] < 0xa0; /* U+0080..U+009F */
}

char *tc_escape_text(char *dst, size_t cap, const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    size_t out = 0;
    for (size_t i = 0; i < len;) {
        size_t n = tc_utf8_sequence(p + i, len - i);
        if (n && !is_control(p + i, n)) {
            if (out + n >= cap)
                break;
            memcpy(dst + out, p + i, n);
            out += n;
            i += n;
            continue;
        }
        /* an escaped byte: a control, or a byte of an invalid or control sequence */
        if (out + 4 >= cap)
            break;
        snprintf(dst + out, 5, "\\x%02x", p[i]);
        out += 4;
        i++;
    }
    dst[out] = '\0';
    return dst;
}

const char *tc_escape_cstr(char *dst, size_t cap, const char *s) {
    return tc_escape_text(dst, cap, s ? s : "", s ? strlen(s) : 0);
}

tconv_status tc_error_setv(tc_error *err, tconv_status status, const char *fmt, va_list ap) {
    if (err) {
        char raw[TC_ERROR_MESSAGE_MAX];
        int n = vsnprintf(raw, sizeof raw, fmt, ap);
        size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
        tc_escape_text(err->message, sizeof err->message, raw, len);
        err->status = status;
    }
    return status;
}

tconv_status tc_error_set(tc_error *err, tconv_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tc_error_setv(err, status, fmt, ap);
    va_end(ap);
    return status;
}

tconv_status tc_error_prefix(tc_error *err, tconv_status status, const char *fmt, ...) {
    if (!err)
        return status;
    err->status = status;
    char raw[TC_ERROR_MESSAGE_MAX], prefix[TC_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    if (n > 0) {
        tc_escape_text(prefix, sizeof prefix, raw,
                       (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1);
        /* Keep as much of the original message as fits behind the prefix. */
        size_t plen = strlen(prefix);
        size_t mlen = strlen(err->message);
        if (plen > sizeof err->message - 1)
            plen = sizeof err->message - 1;
        if (mlen > sizeof err->message - 1 - plen)
            mlen = sizeof err->message - 1 - plen;
        memmove(err->message + plen, err->message, mlen);
        memcpy(err->message, prefix, plen);
        err->message[plen + mlen] = '\0';
    }
    return status;
}

tconv_status tc_error_nomem(tc_error *err, const char *what) {
    return tc_error_set(err, TCONV_ERR_NOMEM, "out of memory while allocating %s", what);
}
