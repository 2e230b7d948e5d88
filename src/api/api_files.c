/* tconv/files.h: the importer's atomic writing and temp file registry (atomic_write.c,
 * temp_files.c) for callers of the public API. */
#include "api/api_internal.h"

static tconv_status finish(tconv_status st, const tc_error *err, char *message,
                           size_t message_size) {
    tc_api_copy_message(message, message_size,
                        st == TCONV_OK    ? ""
                        : err->message[0] ? err->message
                                          : tconv_status_name(st));
    return st;
}

tconv_status tconv_write_file(const char *path, const void *data, size_t size, char *message,
                              size_t message_size) {
    tc_error err;
    tc_error_clear(&err);
    tconv_status st;
    if (!path || (!data && size))
        st = tc_error_set(&err, TCONV_ERR_USAGE, "tconv_write_file: %s is NULL",
                          !path ? "path" : "data");
    else
        st = tc_write_file_atomic(path, data ? data : "", size, &err);
    return finish(st, &err, message, message_size);
}

tconv_status tconv_check_output_path(const char *path, char *message, size_t message_size) {
    tc_error err;
    tc_error_clear(&err);
    tconv_status st =
        path ? tc_output_path_check(path, &err)
             : tc_error_set(&err, TCONV_ERR_USAGE, "tconv_check_output_path: path is NULL");
    return finish(st, &err, message, message_size);
}

void tconv_remove_temp_files(void) {
    tc_temp_files_remove_all();
}
