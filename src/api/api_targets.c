/* Public API: backend targets (tconv/targets.h). A tconv_target is a parsed description. */
#include "api/api_internal.h"

#include <stdlib.h>
#include <string.h>

#include "passes/target.h"

struct tconv_target {
    tc_target target;
};

size_t tconv_target_builtin_count(void) {
    return tc_target_builtin_count();
}

const char *tconv_target_builtin_name(size_t index) {
    return tc_target_builtin_name(index);
}

static tconv_status open_target(const char *what, bool is_file, tconv_target **out, char *message,
                                size_t message_size) {
    if (out)
        *out = NULL;
    tc_error err;
    tc_error_clear(&err);
    if (!what || !out) {
        tc_api_copy_message(message, message_size, "tconv_target_open: NULL argument");
        return TCONV_ERR_USAGE;
    }
    tconv_target *t = malloc(sizeof *t);
    tconv_status st = !t        ? tc_error_nomem(&err, "a target")
                      : is_file ? tc_api_target_read_file(what, &t->target, &err)
                                : tc_target_builtin(what, &t->target, &err);
    if (st != TCONV_OK) {
        free(t);
        tc_api_copy_message(message, message_size, err.message);
        return st;
    }
    tc_api_copy_message(message, message_size, "");
    *out = t;
    return TCONV_OK;
}

tconv_status tconv_target_open(const char *name, tconv_target **out, char *message,
                               size_t message_size) {
    return open_target(name, false, out, message, message_size);
}

tconv_status tconv_target_open_file(const char *path, tconv_target **out, char *message,
                                    size_t message_size) {
    return open_target(path, true, out, message, message_size);
}

void tconv_target_free(tconv_target *target) {
    free(target);
}

const char *tconv_target_name(const tconv_target *target) {
    return target ? target->target.name : "";
}

tconv_status tconv_target_describe(const tconv_target *target, char **text) {
    if (!target || !text)
        return TCONV_ERR_USAGE;
    *text = tc_target_describe(&target->target);
    return *text ? TCONV_OK : TCONV_ERR_NOMEM;
}

tconv_status tconv_target_check(const tconv_target *target, tconv_model *model, size_t *n_broken,
                                char **text) {
    if (!model)
        return TCONV_ERR_USAGE;
    if (!target || !n_broken || !text)
        return tc_api_usage(model, "tconv_target_check: NULL argument");
    *text = NULL;
    *n_broken = 0;
    tc_error *err = tc_api_begin(model);
    tc_target_violations v;
    tconv_status st = tc_target_check_model(&target->target, model, &v, err);
    if (st == TCONV_OK) {
        *n_broken = v.count;
        *text = v.count ? tc_target_violations_text(&target->target, &v, "\n  ") : strdup("");
        if (!*text)
            st = tc_error_nomem(err, "the target check");
    }
    tc_target_violations_free(&v);
    return tc_api_end(model, st);
}
