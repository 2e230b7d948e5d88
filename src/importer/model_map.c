/* A model's input bytes, mapped or copied once, and the message unpacked from them with its
 * large raw_data payloads borrowed in place (model_map.h).
 *
 * The message is unpacked with an allocator whose free() ignores pointers into the input
 * bytes, so protobuf_c_message_free_unpacked can free a message whose raw_data fields were
 * pointed at the mapping. */
#include "importer/model_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct tc_onnx_loaded {
    const uint8_t *data;
    size_t size;
    void *map;   /* munmap(map, size) on free, or NULL */
    int fd;      /* the mapped file (open while mapped), else -1 */
    void *owned; /* free() on free, or NULL */
    Onnx__ModelProto *message;
    ProtobufCAllocator allocator;
};

static const uint8_t EMPTY_BYTES[1] = {0};

/* ---------------------------------------------------------------- the allocator */

bool tc_onnx_loaded_contains(const tc_onnx_loaded *l, const void *p, size_t len) {
    if (!l || !p || l->size == 0)
        return false;
    uintptr_t start = (uintptr_t)l->data, at = (uintptr_t)p;
    return at >= start && at - start < l->size && len <= l->size - (at - start);
}

static void *loaded_alloc(void *allocator_data, size_t size) {
    (void)allocator_data;
    return malloc(size ? size : 1);
}

static void loaded_free(void *allocator_data, void *p) {
    if (!tc_onnx_loaded_contains(allocator_data, p, 0))
        free(p);
}

static tconv_status new_loaded(tc_onnx_loaded **out, tc_error *err) {
    tc_onnx_loaded *l = calloc(1, sizeof *l);
    *out = l;
    if (!l)
        return tc_error_nomem(err, "the model's bytes");
    l->data = EMPTY_BYTES;
    l->fd = -1;
    l->allocator.alloc = loaded_alloc;
    l->allocator.free = loaded_free;
    l->allocator.allocator_data = l;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- mapping and copying */

static tconv_status open_regular(const char *path, size_t max_bytes, int *fd, size_t *size,
                                 tc_error *err) {
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return tc_error_set(err, TCONV_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    tconv_status status = TCONV_OK;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode))
        status = tc_error_set(err, TCONV_ERR_IO, "%s: not a regular file", path);
    else if (st.st_size < 0 || (uint64_t)st.st_size > SIZE_MAX - 1 ||
             (max_bytes && (uint64_t)st.st_size > max_bytes))
        status = tc_error_set(err, TCONV_ERR_LIMIT, "%s: file is %lld bytes, over the limit of %zu",
                              path, (long long)st.st_size, max_bytes);
    if (status != TCONV_OK) {
        close(*fd);
        *fd = -1;
        return status;
    }
    *size = (size_t)st.st_size;
    return TCONV_OK;
}

/* Some file systems cannot be mapped: read them instead. */
static tconv_status read_instead(tc_onnx_loaded *l, const char *path, size_t max_bytes,
                                 tc_error *err) {
    void *data;
    size_t size;
    tconv_status st = tc_read_file(path, max_bytes, &data, &size, err);
    if (st != TCONV_OK)
        return st;
    l->owned = data;
    l->data = data;
    l->size = size;
    return TCONV_OK;
}

tconv_status tc_onnx_loaded_map_file(const char *path, size_t max_bytes, tc_onnx_loaded **out,
                                     tc_error *err) {
    tconv_status st = new_loaded(out, err);
    int fd = -1;
    size_t size = 0;
    if (st == TCONV_OK)
        st = open_regular(path, max_bytes, &fd, &size, err);
    if (st != TCONV_OK) {
        tc_onnx_loaded_free(*out);
        *out = NULL;
        return st;
    }
    tc_onnx_loaded *l = *out;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map != MAP_FAILED) {
        l->map = map;
        l->fd = fd; /* kept: the saver copies payloads file to file */
        l->data = map;
        l->size = size;
        return TCONV_OK;
    }
    close(fd);
    if (size && (st = read_instead(l, path, max_bytes, err)) != TCONV_OK) {
        tc_onnx_loaded_free(l);
        *out = NULL;
    }
    return st;
}

tconv_status tc_onnx_loaded_copy(const void *data, size_t size, tc_onnx_loaded **out,
                                 tc_error *err) {
    tconv_status st = new_loaded(out, err);
    if (st != TCONV_OK || size == 0)
        return st;
    tc_onnx_loaded *l = *out;
    if (!(l->owned = malloc(size))) {
        tc_onnx_loaded_free(l);
        *out = NULL;
        return tc_error_nomem(err, "a copy of the model");
    }
    memcpy(l->owned, data, size);
    l->data = l->owned;
    l->size = size;
    return TCONV_OK;
}

const uint8_t *tc_onnx_loaded_bytes(const tc_onnx_loaded *l, size_t *size) {
    *size = l->size;
    return l->data;
}

/* ---------------------------------------------------------------- unpacking */

static Onnx__ModelProto *unpack(tc_onnx_loaded *l, const uint8_t *data, size_t size) {
    return (Onnx__ModelProto *)protobuf_c_message_unpack(&onnx__model_proto__descriptor,
                                                         &l->allocator, size, data);
}

/* The compact copy, unpacked and restored; NULL when anything does not fit (the caller then
 * unpacks the input as it is, which also reports malformed data the usual way). */
static Onnx__ModelProto *unpack_hollowed(tc_onnx_loaded *l) {
    tc_onnx_hollow h;
    if (!tc_onnx_hollow_build(l->data, l->size, &onnx__model_proto__descriptor, TC_HOLLOW_MIN_BYTES,
                              &h))
        return NULL;
    Onnx__ModelProto *m = h.n_payloads ? unpack(l, h.compact, h.compact_len) : NULL;
    if (m && !tc_onnx_hollow_restore(&h, &m->base, l->data)) {
        protobuf_c_message_free_unpacked(&m->base, &l->allocator);
        m = NULL;
    }
    tc_onnx_hollow_free(&h);
    return m;
}

tconv_status tc_onnx_loaded_unpack(tc_onnx_loaded *l, Onnx__ModelProto **out, tc_error *err) {
    *out = NULL;
    if (l->message)
        return tc_error_set(err, TCONV_ERR_USAGE, "the model's bytes were unpacked twice");
    Onnx__ModelProto *m = unpack_hollowed(l);
    if (!m)
        m = unpack(l, l->data, l->size);
    if (!m)
        return tc_error_set(err, TCONV_ERR_PARSE,
                            "not a valid ONNX ModelProto (protobuf decoding failed)");
    l->message = m;
    *out = m;
    return TCONV_OK;
}

void tc_onnx_loaded_free(void *owner) {
    tc_onnx_loaded *l = owner;
    if (!l)
        return;
    if (l->message)
        protobuf_c_message_free_unpacked(&l->message->base, &l->allocator);
    if (l->map)
        munmap(l->map, l->size);
    if (l->fd >= 0)
        close(l->fd);
    free(l->owned);
    free(l);
}

bool tc_onnx_loaded_file_range(const tc_onnx_loaded *l, const void *p, size_t len, int *fd,
                               int64_t *offset) {
    if (!l || l->fd < 0 || !tc_onnx_loaded_contains(l, p, len))
        return false;
    *fd = l->fd;
    *offset = (int64_t)((uintptr_t)p - (uintptr_t)l->data);
    return true;
}

const tc_onnx_loaded *tc_onnx_model_loaded(const tconv_model *model) {
    return model && model->release == tc_onnx_loaded_free ? model->release_owner : NULL;
}
