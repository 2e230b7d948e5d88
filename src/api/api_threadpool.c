/* Public API: thread pools that runners share (a runner otherwise owns one). */
#include "api/api_internal.h"

#include <stdlib.h>

tconv_status tconv_threadpool_new(tconv_threadpool **out) {
    if (!out)
        return TCONV_ERR_USAGE;
    *out = NULL;
    tconv_threadpool *p = malloc(sizeof *p);
    if (!p)
        return TCONV_ERR_NOMEM;
    if (!(p->pool = tc_thread_pool_create())) {
        free(p);
        return TCONV_ERR_NOMEM;
    }
    *out = p;
    return TCONV_OK;
}

void tconv_threadpool_free(tconv_threadpool *pool) {
    if (!pool)
        return;
    tc_thread_pool_destroy(pool->pool);
    free(pool);
}

int tconv_threadpool_thread_count(const tconv_threadpool *pool) {
    return pool ? tc_thread_pool_size(pool->pool) : 0;
}
