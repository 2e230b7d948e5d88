#include "ir/error.h"

#include <stdarg.h>
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

tconv_status tc_error_setv(tc_error *err, tconv_status status, const char *fmt, va_list ap) {
    if (err) {
        vsnprintf(err->message, sizeof err->message, fmt, ap);
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
    char prefix[TCONV_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n > 0) {
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
