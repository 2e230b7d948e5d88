/* Public API: a runner's profiler (tconv/runtime.h) over the runtime's (runtime/profile.h). */
#include "api/api_internal.h"
#include "runtime/session/session.h"

#include <stdlib.h>
#include <string.h>

tconv_status tconv_runner_set_profiling(tconv_runner *runner, bool enabled) {
    if (!runner)
        return TCONV_ERR_USAGE;
    tc_error_clear(&runner->last_error);
    if (!enabled) {
        tc_session_set_profile(runner->session, NULL);
        return TCONV_OK;
    }
    tc_profile *fresh = tc_profile_create();
    if (!fresh)
        return tc_error_nomem(&runner->last_error, "a profile");
    tc_session_set_profile(runner->session, fresh);
    tc_profile_free(runner->profile);
    runner->profile = fresh;
    return TCONV_OK;
}

/* Starts a call that reads the profile. */
static tconv_status begin_read(tconv_runner *runner, const void *out, const char *what) {
    if (!runner)
        return TCONV_ERR_USAGE;
    tc_error_clear(&runner->last_error);
    if (!out)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE, "%s: an argument is NULL", what);
    if (!runner->profile)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                            "%s: profiling was never turned on (tconv_runner_set_profiling)", what);
    return TCONV_OK;
}

tconv_status tconv_runner_profile_json(tconv_runner *runner, char **json) {
    if (json)
        *json = NULL;
    tconv_status st = begin_read(runner, json, "tconv_runner_profile_json");
    return st == TCONV_OK ? tc_profile_json(runner->profile, json, &runner->last_error) : st;
}

tconv_status tconv_runner_profile_summary(tconv_runner *runner, size_t top, char **text) {
    if (text)
        *text = NULL;
    tconv_status st = begin_read(runner, text, "tconv_runner_profile_summary");
    return st == TCONV_OK ? tc_profile_summary(runner->profile, top, text, &runner->last_error)
                          : st;
}

tconv_status tconv_runner_write_profile(tconv_runner *runner, const char *path) {
    tconv_status st = begin_read(runner, path, "tconv_runner_write_profile");
    if (st != TCONV_OK)
        return st;
    tc_error *err = &runner->last_error;
    char *json = NULL;
    st = tc_model_refuse_own_file(runner->model, path, err);
    if (st == TCONV_OK && (st = tc_profile_json(runner->profile, &json, err)) != TCONV_OK)
        tc_error_prefix(err, st, "%s: ", path);
    if (st == TCONV_OK)
        st = tc_write_file_atomic(path, json, strlen(json), err);
    free(json);
    return st;
}
