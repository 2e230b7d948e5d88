/* Whole-file reads with a size limit and atomic writes (temp file in the same folder, fsync,
 * rename): a reader never sees a half-written model, and a failure leaves any old file intact. */
#define _POSIX_C_SOURCE 200809L

#include "importer/importer.h"
#include "importer/onnx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tc_path_dirname(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        char *dot = malloc(2);
        if (dot)
            memcpy(dot, ".", 2);
        return dot;
    }
    size_t len = slash == path ? 1 : (size_t)(slash - path); /* "/x" lives in "/" */
    char *dir = malloc(len + 1);
    if (dir) {
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    return dir;
}

char *tc_path_join(const char *dir, const char *name) {
    size_t dlen = strlen(dir), nlen = strlen(name);
    bool need_slash = dlen > 0 && dir[dlen - 1] != '/';
    char *out = malloc(dlen + nlen + 2);
    if (!out)
        return NULL;
    memcpy(out, dir, dlen);
    if (need_slash)
        out[dlen++] = '/';
    memcpy(out + dlen, name, nlen + 1);
    return out;
}

static tconv_status read_all(int fd, const char *path, uint8_t *buf, size_t size, tc_error *err) {
    size_t done = 0;
    while (done < size) {
        ssize_t n = read(fd, buf + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return tc_error_set(err, TCONV_ERR_IO, "%s: read failed: %s", path, strerror(errno));
        if (n == 0)
            return tc_error_set(err, TCONV_ERR_IO,
                                "%s: file shrank while being read (%zu of %zu bytes)", path, done,
                                size);
        done += (size_t)n;
    }
    return TCONV_OK;
}

tconv_status tc_read_file(const char *path, size_t max_bytes, void **data, size_t *size,
                          tc_error *err) {
    *data = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return tc_error_set(err, TCONV_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tc_error_set(err, TCONV_ERR_IO, "%s: not a regular file", path);
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > SIZE_MAX - 1 ||
        (max_bytes && (uint64_t)st.st_size > max_bytes)) {
        close(fd);
        return tc_error_set(err, TCONV_ERR_LIMIT, "%s: file is %lld bytes, over the limit of %zu",
                            path, (long long)st.st_size, max_bytes);
    }
    size_t len = (size_t)st.st_size;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        close(fd);
        return tc_error_set(err, TCONV_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, len);
    }
    tconv_status status = read_all(fd, path, buf, len, err);
    close(fd);
    if (status != TCONV_OK) {
        free(buf);
        return status;
    }
    *data = buf;
    *size = len;
    return TCONV_OK;
}

tconv_status tc_write_all(int fd, const char *path, const void *data, size_t size, tc_error *err) {
    const uint8_t *bytes = data;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, bytes + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return tc_error_set(err, TCONV_ERR_IO, "%s: write failed: %s", path,
                                n < 0 ? strerror(errno) : "no progress");
        done += (size_t)n;
    }
    return TCONV_OK;
}

/* mkstemp creates 0600 files; a model should get the usual umask-based mode. */
static void set_default_mode(int fd) {
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
}

static tconv_status fill_sync_close(int fd, const char *path, tc_fd_writer write_fn, void *ctx,
                                    tc_error *err) {
    set_default_mode(fd);
    tconv_status st = write_fn(fd, path, ctx, err);
    if (st == TCONV_OK && fsync(fd) != 0)
        st = tc_error_set(err, TCONV_ERR_IO, "%s: fsync failed: %s", path, strerror(errno));
    if (close(fd) != 0 && st == TCONV_OK)
        st = tc_error_set(err, TCONV_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    return st;
}

tconv_status tc_write_file_atomic_with(const char *path, tc_fd_writer write_fn, void *ctx,
                                       tc_error *err) {
    char *tmp = malloc(strlen(path) + sizeof ".tmp.XXXXXX");
    if (!tmp)
        return tc_error_nomem(err, "a temp file name");
    strcpy(tmp, path);
    strcat(tmp, ".tmp.XXXXXX");
    int fd = mkstemp(tmp);
    tconv_status st;
    if (fd < 0) {
        st = tc_error_set(err, TCONV_ERR_IO, "%s: cannot create a temp file: %s", path,
                          strerror(errno));
    } else {
        st = fill_sync_close(fd, path, write_fn, ctx, err);
        if (st == TCONV_OK && rename(tmp, path) != 0)
            st = tc_error_set(err, TCONV_ERR_IO, "%s: rename from temp file failed: %s", path,
                              strerror(errno));
        if (st != TCONV_OK)
            unlink(tmp);
    }
    free(tmp);
    return st;
}

typedef struct byte_span {
    const void *data;
    size_t size;
} byte_span;

static tconv_status write_span(int fd, const char *path, void *ctx, tc_error *err) {
    const byte_span *span = ctx;
    return tc_write_all(fd, path, span->data, span->size, err);
}

tconv_status tc_write_file_atomic(const char *path, const void *data, size_t size, tc_error *err) {
    byte_span span = {data, size};
    return tc_write_file_atomic_with(path, write_span, &span, err);
}
