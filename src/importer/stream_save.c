/* Streams a packed message into a file descriptor (model_map.h): protobuf-c packs the message
 * through a ProtobufCBuffer that gathers small fields in a 1 MiB buffer and writes large ones
 * (tensor data, which for an unchanged tensor of a loaded model is the input mapping itself)
 * straight from where they are. Nothing the size of the model is ever allocated. A leaf: the
 * saver (onnx_save.c) builds the message and owns the file; this only fills the descriptor.
 *
 * Payloads that lie in a mapped input file are copied file to file by the kernel
 * (copy_file_range, Linux) where it can: they never enter the process, so saving does not make
 * the mapping resident. Elsewhere they are written from the mapping. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* copy_file_range */
#endif

#include "importer/model_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SINK_BUFFER_BYTES ((size_t)1 << 20)
/* Appends at least this long bypass the buffer. */
#define SINK_DIRECT_BYTES ((size_t)1 << 16)

typedef struct file_sink {
    ProtobufCBuffer base;
    int fd;
    const char *path;
    uint8_t *buf;
    size_t used;
    tconv_status status;
    tc_error *err;
    const tc_onnx_loaded *source; /* the input the model borrows from, or NULL */
    bool no_copy_range;           /* the kernel cannot copy between these files */
} file_sink;

static void sink_flush(file_sink *s) {
    if (s->status == TCONV_OK && s->used)
        s->status = tc_write_all(s->fd, s->path, s->buf, s->used, s->err);
    s->used = 0;
}

/* Copies [offset, offset + len) of in_fd to the output in the kernel. *done false (and OK)
 * when this pair of files does not support it before anything was copied. */
static tconv_status copy_range(file_sink *s, int in_fd, int64_t offset, size_t len, bool *done) {
    *done = false;
#if defined(__linux__)
    off_t in_off = (off_t)offset;
    size_t copied = 0;
    while (copied < len) {
        ssize_t n = copy_file_range(in_fd, &in_off, s->fd, NULL, len - copied, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && copied == 0 &&
            (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP))
            return TCONV_OK;
        if (n < 0)
            return tc_error_set(s->err, TCONV_ERR_IO, "%s: write failed: %s", s->path,
                                strerror(errno));
        if (n == 0)
            return tc_error_set(s->err, TCONV_ERR_IO,
                                "%s: the input model file shrank while being saved", s->path);
        copied += (size_t)n;
    }
    *done = true;
#else
    (void)s, (void)in_fd, (void)offset, (void)len;
#endif
    return TCONV_OK;
}

static void write_direct(file_sink *s, const uint8_t *data, size_t len) {
    int in_fd;
    int64_t offset;
    bool done = false;
    if (!s->no_copy_range && tc_onnx_loaded_file_range(s->source, data, len, &in_fd, &offset)) {
        s->status = copy_range(s, in_fd, offset, len, &done);
        s->no_copy_range = !done;
    }
    if (s->status == TCONV_OK && !done)
        s->status = tc_write_all(s->fd, s->path, data, len, s->err);
#if defined(__linux__)
    /* Start writing back what is there, so the closing fsync overlaps with the copying. */
    if (s->status == TCONV_OK)
        (void)sync_file_range(s->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
}

static void sink_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data) {
    file_sink *s = (file_sink *)buffer;
    if (s->status != TCONV_OK || len == 0)
        return;
    if (len >= SINK_DIRECT_BYTES) {
        sink_flush(s);
        if (s->status == TCONV_OK)
            write_direct(s, data, len);
        return;
    }
    if (len > SINK_BUFFER_BYTES - s->used)
        sink_flush(s);
    memcpy(s->buf + s->used, data, len);
    s->used += len;
}

static tconv_status pack_to_fd(const ProtobufCMessage *message, const tc_onnx_loaded *source,
                               int fd, const char *path, tc_error *err) {
    file_sink sink = {{sink_append}, fd,     path, malloc(SINK_BUFFER_BYTES), 0, TCONV_OK,
                      err,           source, false};
    if (!sink.buf)
        return tc_error_nomem(err, "the output buffer");
    protobuf_c_message_pack_to_buffer(message, &sink.base);
    sink_flush(&sink);
    free(sink.buf);
    return sink.status;
}

tconv_status tc_onnx_write_packed(int fd, const char *path, void *packed, tc_error *err) {
    const tc_onnx_packed *p = packed;
    return pack_to_fd(p->message, p->source, fd, path, err);
}
