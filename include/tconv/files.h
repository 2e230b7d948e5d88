/* Files tconv writes, and the temp files behind them.
 *
 * Every file the library writes (tconv_model_write_file with the model's external data,
 * tconv_runner_save_output, tconv_write_file) is written to a temp file beside its target
 * ("<target>.tmp.XXXXXX"), fsync'ed and renamed over the target: a reader never sees a partial
 * file and a failure leaves an existing file as it was. A new file gets mode 0666 under the
 * umask; a replaced file keeps its permission bits. Only regular files are replaced: a target
 * that is a symbolic link, a device, a FIFO, a socket or a folder is refused (TCONV_ERR_USAGE).
 *
 * The library installs no signal handlers. A program that wants no temp file left behind when
 * it is interrupted calls tconv_remove_temp_files from its own handlers, e.g.
 *
 *   static void on_signal(int sig) {
 *       tconv_remove_temp_files();
 *       signal(sig, SIG_DFL);
 *       raise(sig);
 *   }
 *
 * and ignores SIGXFSZ, so that a write past RLIMIT_FSIZE fails with EFBIG and the temp file is
 * removed on the ordinary error path. */
#ifndef TCONV_FILES_H
#define TCONV_FILES_H

#include <stddef.h>

#include "tconv/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `size` bytes at `data` to `path`, atomically as above. On failure, when `message` is
 * not NULL, the NUL-terminated reason (naming the path) is written into
 * message[0 .. message_size-1], truncated to fit. Errors: TCONV_ERR_USAGE (NULL path, NULL data
 * with size > 0, a target that is not a regular file), TCONV_ERR_IO, TCONV_ERR_NOMEM. */
tconv_status tconv_write_file(const char *path, const void *data, size_t size, char *message,
                              size_t message_size);

/* TCONV_OK when `path` could be written: it does not exist or is a regular file. Lets a program
 * refuse an output path before a long computation. Errors (message as tconv_write_file):
 * TCONV_ERR_USAGE (NULL path; a symbolic link, device, FIFO, socket or folder), TCONV_ERR_IO
 * (the path cannot be looked at, e.g. a missing folder). */
tconv_status tconv_check_output_path(const char *path, char *message, size_t message_size);

/* Removes every temp file that a write in progress (in any thread) has created and not yet
 * renamed into place or removed. Async-signal-safe, for a program's signal handlers; the writes
 * it cuts short fail or lose their output, so call it only when the process is about to end. */
void tconv_remove_temp_files(void);

#ifdef __cplusplus
}
#endif

#endif
