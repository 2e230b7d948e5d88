/* Temporary folders for importer tests: created under /tmp with mkdtemp, removed with all their
 * contents. Include after defining _XOPEN_SOURCE 700. */
#ifndef TC_TESTS_TMPDIR_H
#define TC_TESTS_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A new empty folder; malloc'd path, NULL on failure. */
static inline char *tmpdir_create(void) {
    char *path = malloc(64);
    if (!path)
        return NULL;
    strcpy(path, "/tmp/tconv-test-XXXXXX");
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

/* Removes path and, for a folder (not followed if a symlink), everything in it. */
static inline void tmpdir_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        struct dirent *e;
        while (dir && (e = readdir(dir)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            size_t len = strlen(path) + strlen(e->d_name) + 2;
            char *child = malloc(len);
            if (!child)
                break;
            snprintf(child, len, "%s/%s", path, e->d_name);
            tmpdir_remove_tree(child);
            free(child);
        }
        if (dir)
            closedir(dir);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static inline void tmpdir_free(char *path) {
    if (path)
        tmpdir_remove_tree(path);
    free(path);
}

/* Writes bytes to dir/name; 0 on success. */
static inline int tmpdir_write(const char *dir, const char *name, const void *data, size_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, size, f);
    return (fclose(f) == 0 && n == size) ? 0 : -1;
}

#endif
