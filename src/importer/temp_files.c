/* The temp files that writes in progress have created and not yet renamed or removed, kept
 * where a signal handler can remove them (tconv_remove_temp_files, tconv/files.h).
 *
 * A handler may run at any instruction of any thread, so the table is lock-free: chunks of slots
 * that are appended and never freed, each slot with an atomic state. A slot's path buffer is only
 * written while the slot is FILLING, which the handler skips; the handler claims a LIVE slot
 * (LIVE -> REMOVING) before reading its path, and a slot it claimed is never used again, so the
 * buffer it reads cannot change under it. */
#include "importer/importer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { SLOT_FREE, SLOT_FILLING, SLOT_LIVE, SLOT_REMOVING };

#define SLOTS_PER_CHUNK 32

struct tc_temp_slot {
    atomic_int state;
    char *path;
    size_t cap;
};

typedef struct slot_chunk {
    tc_temp_slot slots[SLOTS_PER_CHUNK];
    _Atomic(struct slot_chunk *) next;
} slot_chunk;

static slot_chunk first_chunk;

static bool claim(tc_temp_slot *slot) {
    int expected = SLOT_FREE;
    return atomic_compare_exchange_strong(&slot->state, &expected, SLOT_FILLING);
}

static tc_temp_slot *claim_in(slot_chunk *chunk) {
    for (size_t i = 0; i < SLOTS_PER_CHUNK; i++) {
        if (claim(&chunk->slots[i]))
            return &chunk->slots[i];
    }
    return NULL;
}

/* A FILLING slot: a free one, or the first of a new chunk appended at the end. */
static tc_temp_slot *claim_slot(void) {
    slot_chunk *chunk = &first_chunk;
    for (;;) {
        tc_temp_slot *slot = claim_in(chunk);
        if (slot)
            return slot;
        slot_chunk *next = atomic_load(&chunk->next);
        if (next) {
            chunk = next;
            continue;
        }
        slot_chunk *grown = calloc(1, sizeof *grown);
        if (!grown)
            return NULL;
        atomic_store(&grown->slots[0].state, SLOT_FILLING);
        if (atomic_compare_exchange_strong(&chunk->next, &next, grown))
            return &grown->slots[0];
        free(grown); /* another thread appended first: look there */
        chunk = next;
    }
}

static tc_temp_slot *reserve(const char *path) {
    tc_temp_slot *slot = claim_slot();
    if (!slot)
        return NULL;
    size_t len = strlen(path) + 1;
    if (len > slot->cap) {
        char *grown = realloc(slot->path, len);
        if (!grown) {
            atomic_store(&slot->state, SLOT_FREE);
            return NULL;
        }
        slot->path = grown;
        slot->cap = len;
    }
    memcpy(slot->path, path, len);
    return slot;
}

static void release(tc_temp_slot *slot) {
    if (!slot)
        return;
    int live = SLOT_LIVE;
    if (atomic_compare_exchange_strong(&slot->state, &live, SLOT_FREE))
        return;
    int filling = SLOT_FILLING;
    (void)atomic_compare_exchange_strong(&slot->state, &filling, SLOT_FREE);
    /* REMOVING: a handler has it; the process is ending, and the slot is never reused. */
}

/* Async-signal-safe: atomics on lock-free ints and pointers, and unlink(2). */
void tc_temp_files_remove_all(void) {
    for (slot_chunk *chunk = &first_chunk; chunk; chunk = atomic_load(&chunk->next)) {
        for (size_t i = 0; i < SLOTS_PER_CHUNK; i++) {
            tc_temp_slot *slot = &chunk->slots[i];
            int live = SLOT_LIVE;
            if (atomic_compare_exchange_strong(&slot->state, &live, SLOT_REMOVING))
                (void)unlink(slot->path);
        }
    }
}

/* Temp names are the target's name plus ".tmp." and six letters or digits. The file is created
 * with O_EXCL, so a name only has to be unlikely to be taken, not secret. */
static void make_name(char *out, size_t base_len, unsigned attempt) {
    static atomic_uint counter;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15u ^ (uint64_t)now.tv_nsec ^
                 ((uint64_t)now.tv_sec << 32) ^ ((uint64_t)atomic_fetch_add(&counter, 1) << 16) ^
                 attempt;
    static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    memcpy(out + base_len, ".tmp.", 5);
    for (size_t i = 0; i < 6; i++) {
        x ^= x >> 31, x *= 0xBF58476D1CE4E5B9u, x ^= x >> 29; /* splitmix-style mixing */
        out[base_len + 5 + i] = letters[x % (sizeof letters - 1)];
    }
    out[base_len + 11] = '\0';
}

/* Opens the named temp file and makes it visible to the handler with no signal in between. */
static int open_registered(tc_temp_slot *slot) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int fd = open(slot->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0)
        atomic_store(&slot->state, SLOT_LIVE);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return fd;
}

tconv_status tc_temp_file_create(const char *final_path, tc_temp_file *out, tc_error *err) {
    size_t base_len = strlen(final_path);
    *out = (tc_temp_file){NULL, -1, NULL};
    char *name = malloc(base_len + sizeof ".tmp.XXXXXX");
    if (!name)
        return tc_error_nomem(err, "a temp file name");
    memcpy(name, final_path, base_len);
    int error = EEXIST;
    for (unsigned attempt = 0; error == EEXIST && attempt < 100; attempt++) {
        make_name(name, base_len, attempt);
        tc_temp_slot *slot = reserve(name);
        if (!slot) {
            free(name);
            return tc_error_nomem(err, "a temp file name");
        }
        int fd = open_registered(slot);
        if (fd >= 0) {
            *out = (tc_temp_file){name, fd, slot};
            return TCONV_OK;
        }
        error = errno;
        release(slot);
    }
    free(name);
    return tc_error_set(err, TCONV_ERR_IO, "%s: cannot create a temp file: %s", final_path,
                        strerror(error));
}

void tc_temp_file_forget(tc_temp_file *temp) {
    release(temp->slot);
    free(temp->path);
    *temp = (tc_temp_file){NULL, -1, NULL};
}

void tc_temp_file_discard(tc_temp_file *temp) {
    if (temp->fd >= 0)
        close(temp->fd);
    if (temp->path)
        unlink(temp->path);
    tc_temp_file_forget(temp);
}
