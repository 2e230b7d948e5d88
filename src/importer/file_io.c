/* Whole-file reads with a size limit, complete writes to a descriptor, path helpers. Atomic
 * writing of whole files is atomic_write.c. */
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
