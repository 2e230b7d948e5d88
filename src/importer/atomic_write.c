/* The one way tconv writes a file: every output (model, external data, report, .pb) is written
 * to a registered temp file beside its target, fsync'ed, given its mode and renamed over the
 * target, so a reader never sees a partial file and a failure leaves the old one as it was.
 * Several files that belong together (a model and its external data) are written as one batch:
 * all temps first, then the renames, model last; on any failure every temp is removed and the
 * files the batch created are removed again. */
#include "importer/importer.h"
#include "ir/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct batch_file {
    char *path;        /* the target */
    tc_temp_file temp; /* path NULL once renamed or removed */
    bool existed;      /* the target was there before: a rollback must not remove it */
    bool placed;       /* renamed over the target */
} batch_file;

struct tc_file_batch {
    batch_file *files;
    size_t n, cap;
    char **made_dirs; /* folders the batch created, removed again on failure */
    size_t n_dirs, cap_dirs;
    bool committed;
};

tconv_status tc_file_batch_new(tc_file_batch **out, tc_error *err) {
    *out = calloc(1, sizeof **out);
    return *out ? TCONV_OK : tc_error_nomem(err, "a file batch");
}

static const char *kind_of(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a regular file";
}

/* Whether path exists (*st filled); an error for anything that is not a regular file. A
 * symbolic link is refused too: replacing it would turn it into a file, and writing through it
 * would let whoever made the link choose what tconv overwrites. */
static tconv_status check_target(const char *path, struct stat *st, bool *exists, tc_error *err) {
    *exists = false;
    if (lstat(path, st) != 0) {
        if (errno == ENOENT)
            return TCONV_OK;
        return tc_error_set(err, TCONV_ERR_IO, "%s: cannot write here: %s", path, strerror(errno));
    }
    if (!S_ISREG(st->st_mode))
        return tc_error_set(
            err, TCONV_ERR_USAGE,
            "%s: is %s; tconv only replaces regular files, give another output path", path,
            kind_of(st->st_mode));
    *exists = true;
    return TCONV_OK;
}

tconv_status tc_output_path_check(const char *path, tc_error *err) {
    struct stat st;
    bool exists;
    return check_target(path, &st, &exists, err);
}

tconv_status tc_file_batch_make_parents(tc_file_batch *batch, const char *path, tc_error *err) {
    char *copy = malloc(strlen(path) + 1);
    if (!copy)
        return tc_error_nomem(err, "a folder name");
    strcpy(copy, path);
    tconv_status st = TCONV_OK;
    for (char *p = copy + 1; st == TCONV_OK && *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(copy, 0777) == 0) {
            char *dir = malloc(strlen(copy) + 1);
            if (!dir || !TC_VEC_RESERVE(batch->made_dirs, batch->cap_dirs, batch->n_dirs + 1)) {
                free(dir);
                st = tc_error_nomem(err, "a folder name");
            } else {
                batch->made_dirs[batch->n_dirs++] = strcpy(dir, copy);
            }
        } else if (errno != EEXIST) {
            st = tc_error_set(err, TCONV_ERR_IO, "cannot create folder '%s': %s", copy,
                              strerror(errno));
        }
        *p = '/';
    }
    free(copy);
    return st;
}

/* A new file gets 0666 under the umask (the open in tc_temp_file_create); a replaced one keeps
 * its permission bits. */
static tconv_status fill_temp(batch_file *f, const struct stat *old, tc_fd_writer write_fn,
                              void *ctx, tc_error *err) {
    int fd = f->temp.fd;
    tconv_status st = TCONV_OK;
    if (f->existed && fchmod(fd, old->st_mode & 0777) != 0)
        st = tc_error_set(err, TCONV_ERR_IO, "%s: cannot set the mode: %s", f->path,
                          strerror(errno));
    if (st == TCONV_OK)
        st = write_fn(fd, f->path, ctx, err);
    if (st == TCONV_OK && fsync(fd) != 0)
        st = tc_error_set(err, TCONV_ERR_IO, "%s: fsync failed: %s", f->path, strerror(errno));
    f->temp.fd = -1;
    if (close(fd) != 0 && st == TCONV_OK)
        st = tc_error_set(err, TCONV_ERR_IO, "%s: close failed: %s", f->path, strerror(errno));
    return st;
}

tconv_status tc_file_batch_add(tc_file_batch *batch, const char *path, tc_fd_writer write_fn,
                               void *ctx, tc_error *err) {
    struct stat old;
    bool exists;
    tconv_status st = check_target(path, &old, &exists, err);
    if (st != TCONV_OK)
        return st;
    if (!TC_VEC_RESERVE(batch->files, batch->cap, batch->n + 1))
        return tc_error_nomem(err, "a file batch");
    batch_file *f = &batch->files[batch->n];
    *f = (batch_file){malloc(strlen(path) + 1), {NULL, -1, NULL}, exists, false};
    if (!f->path)
        return tc_error_nomem(err, "a path");
    strcpy(f->path, path);
    batch->n++;
    st = tc_temp_file_create(path, &f->temp, err);
    if (st == TCONV_OK)
        st = fill_temp(f, &old, write_fn, ctx, err);
    if (st != TCONV_OK)
        tc_temp_file_discard(&f->temp);
    return st;
}

/* Undoes a batch that failed: the files its commit created are removed again, and the folders
 * it made. A file it replaced cannot be brought back, so callers add the files that must stay
 * consistent with the others (the model) last: they are replaced only when all else is. */
static void roll_back(tc_file_batch *batch) {
    for (size_t i = 0; i < batch->n; i++) {
        batch_file *f = &batch->files[i];
        if (f->placed && !f->existed)
            unlink(f->path);
    }
    for (size_t i = batch->n_dirs; i-- > 0;)
        rmdir(batch->made_dirs[i]); /* only if empty: fails harmlessly otherwise */
}

tconv_status tc_file_batch_commit(tc_file_batch *batch, tc_error *err) {
    for (size_t i = 0; i < batch->n; i++) {
        batch_file *f = &batch->files[i];
        if (rename(f->temp.path, f->path) != 0) {
            return tc_error_set(err, TCONV_ERR_IO, "%s: rename from temp file failed: %s", f->path,
                                strerror(errno));
        }
        f->placed = true;
        tc_temp_file_forget(&f->temp);
    }
    batch->committed = true;
    return TCONV_OK;
}

void tc_file_batch_free(tc_file_batch *batch) {
    if (!batch)
        return;
    for (size_t i = 0; i < batch->n; i++)
        tc_temp_file_discard(&batch->files[i].temp);
    if (!batch->committed)
        roll_back(batch);
    for (size_t i = 0; i < batch->n; i++)
        free(batch->files[i].path);
    for (size_t i = 0; i < batch->n_dirs; i++)
        free(batch->made_dirs[i]);
    free(batch->files);
    free(batch->made_dirs);
    free(batch);
}

tconv_status tc_write_file_atomic_with(const char *path, tc_fd_writer write_fn, void *ctx,
                                       tc_error *err) {
    tc_file_batch *batch;
    tconv_status st = tc_file_batch_new(&batch, err);
    if (st != TCONV_OK)
        return st;
    st = tc_file_batch_add(batch, path, write_fn, ctx, err);
    if (st == TCONV_OK)
        st = tc_file_batch_commit(batch, err);
    tc_file_batch_free(batch);
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
