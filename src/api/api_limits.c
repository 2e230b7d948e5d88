/* Public API: limits for untrusted models, kept as the importer's and the runtime's own option
 * structs so that their defaults are the only defaults. */
#include "api/api_internal.h"

#include <limits.h>
#include <stdlib.h>

#define MAX_THREADS 1024

struct tconv_limits {
    tc_load_options load;
    tc_session_options session;
    bool nodes_set; /* NODES was set: MEMORY_BYTES no longer moves it */
    tc_error last_error;
};

tconv_status tconv_limits_new(tconv_limits **out) {
    if (!out)
        return TCONV_ERR_USAGE;
    *out = calloc(1, sizeof **out);
    if (!*out)
        return TCONV_ERR_NOMEM;
    tc_load_options_init(&(*out)->load);
    tc_session_options_init(&(*out)->session);
    return TCONV_OK;
}

void tconv_limits_free(tconv_limits *limits) {
    free(limits);
}

const char *tconv_limits_last_error(const tconv_limits *limits) {
    return limits ? limits->last_error.message : "";
}

static tconv_status out_of_range(tconv_limits *limits, const char *what, uint64_t value,
                                 uint64_t max) {
    return tc_error_set(&limits->last_error, TCONV_ERR_USAGE,
                        "limit %s: %llu is above the largest value, %llu", what,
                        (unsigned long long)value, (unsigned long long)max);
}

tconv_status tconv_limits_set(tconv_limits *limits, tconv_limit which, uint64_t value) {
    if (!limits)
        return TCONV_ERR_USAGE;
    tc_error_clear(&limits->last_error);
    bool fits_size = value <= SIZE_MAX;
    switch (which) {
    case TCONV_LIMIT_FILE_BYTES:
        if (!fits_size)
            return out_of_range(limits, "FILE_BYTES", value, SIZE_MAX);
        limits->load.max_file_bytes = (size_t)value;
        return TCONV_OK;
    case TCONV_LIMIT_TENSOR_BYTES:
        if (!fits_size)
            return out_of_range(limits, "TENSOR_BYTES", value, SIZE_MAX);
        limits->load.max_tensor_bytes = (size_t)value;
        return TCONV_OK;
    case TCONV_LIMIT_GRAPH_DEPTH:
        if (value > TCONV_GRAPH_DEPTH_MAX)
            return out_of_range(limits, "GRAPH_DEPTH", value, TCONV_GRAPH_DEPTH_MAX);
        limits->load.max_graph_depth = (int)value;
        return TCONV_OK;
    case TCONV_LIMIT_NODES:
        if (!fits_size)
            return out_of_range(limits, "NODES", value, SIZE_MAX);
        limits->load.max_nodes = (size_t)value;
        limits->nodes_set = true;
        return TCONV_OK;
    case TCONV_LIMIT_MEMORY_BYTES:
        if (!fits_size)
            return out_of_range(limits, "MEMORY_BYTES", value, SIZE_MAX);
        limits->session.max_memory_bytes = (size_t)value;
        limits->load.max_memory_bytes = (size_t)value;
        if (!limits->nodes_set) /* the IR of the nodes must fit the memory too */
            limits->load.max_nodes = tc_load_max_nodes_for_memory((size_t)value);
        return TCONV_OK;
    case TCONV_LIMIT_THREADS:
        if (value > MAX_THREADS)
            return out_of_range(limits, "THREADS", value, MAX_THREADS);
        limits->session.n_threads = (int)value;
        return TCONV_OK;
    case TCONV_LIMIT_WORK:
        limits->session.max_work = value;
        return TCONV_OK;
    }
    return tc_error_set(&limits->last_error, TCONV_ERR_USAGE, "unknown limit %d", (int)which);
}

uint64_t tconv_limits_get(const tconv_limits *limits, tconv_limit which) {
    tc_load_options load;
    tc_session_options session;
    tc_api_load_options(limits, &load);
    tc_api_session_options(limits, &session);
    switch (which) {
    case TCONV_LIMIT_FILE_BYTES:
        return load.max_file_bytes;
    case TCONV_LIMIT_TENSOR_BYTES:
        return load.max_tensor_bytes;
    case TCONV_LIMIT_GRAPH_DEPTH:
        return load.max_graph_depth > 0 ? (uint64_t)load.max_graph_depth : 0;
    case TCONV_LIMIT_NODES:
        return load.max_nodes;
    case TCONV_LIMIT_MEMORY_BYTES:
        return session.max_memory_bytes;
    case TCONV_LIMIT_THREADS:
        return session.n_threads > 0 ? (uint64_t)session.n_threads : 0;
    case TCONV_LIMIT_WORK:
        return session.max_work;
    }
    return 0;
}

void tc_api_load_options(const tconv_limits *limits, tc_load_options *out) {
    if (limits)
        *out = limits->load;
    else
        tc_load_options_init(out);
}

void tc_api_session_options(const tconv_limits *limits, tc_session_options *out) {
    if (limits)
        *out = limits->session;
    else
        tc_session_options_init(out);
}
