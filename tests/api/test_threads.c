/* Public API, threads: separate models are independent. Two threads at once each read a model,
 * legalize a copy with one shared pipeline, compare copy and original, and serialize the
 * result, several times over; both must get the same answers a single thread gets. Runners
 * that share one tconv_threadpool, in two threads at once, compute what a one-thread runner
 * computes, and the pool is the only place helper threads come from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>

#include "api_test_util.h"

#define ROUNDS 4

typedef struct worker {
    const char *path;
    const tconv_pipeline *pipeline; /* shared, read-only while the threads run */
    size_t rewrites;
    size_t saved_bytes;
    tconv_status status;
    char message[1024];
} worker;

static tconv_status fail_with(worker *w, tconv_status st, const char *message) {
    snprintf(w->message, sizeof w->message, "%s", message);
    return st;
}

/* One round: read, clone, legalize the clone, compare with the original, serialize. */
static tconv_status one_round(worker *w) {
    tconv_model *original = NULL, *converted = NULL;
    tconv_report *report = NULL;
    tconv_comparison *comparison = NULL;
    void *bytes = NULL;
    tconv_status st =
        tconv_model_read_file(w->path, NULL, &original, w->message, sizeof w->message);
    if (st == TCONV_OK && (st = tconv_model_clone(original, &converted)) != TCONV_OK)
        fail_with(w, st, tconv_model_last_error(original));
    if (st == TCONV_OK && (st = tconv_pipeline_run(w->pipeline, converted, &report)) != TCONV_OK)
        fail_with(w, st, tconv_model_last_error(converted));
    if (st == TCONV_OK && (st = tconv_comparison_new(&comparison)) == TCONV_OK &&
        (st = tconv_comparison_run(comparison, original, converted)) != TCONV_OK)
        fail_with(w, st, tconv_comparison_last_error(comparison));
    if (st == TCONV_OK &&
        (st = tconv_model_write_buffer(converted, &bytes, &w->saved_bytes)) != TCONV_OK)
        fail_with(w, st, tconv_model_last_error(converted));
    w->rewrites = tconv_report_rewrite_count(report);
    tconv_free(bytes);
    tconv_comparison_free(comparison);
    tconv_report_free(report);
    tconv_model_free(converted);
    tconv_model_free(original);
    return st;
}

static void *work(void *arg) {
    worker *w = arg;
    w->status = TCONV_OK;
    for (int i = 0; i < ROUNDS && w->status == TCONV_OK; i++)
        w->status = one_round(w);
    return NULL;
}

static void test_two_models_in_two_threads(void **state) {
    (void)state;
    tconv_pipeline *pipeline = NULL;
    assert_int_equal(tconv_pipeline_new(&pipeline), TCONV_OK);
    worker workers[2] = {
        {.path = API_MODEL("keras_decoder"), .pipeline = pipeline},
        {.path = API_MODEL("tf2onnx_style"), .pipeline = pipeline},
    };
    /* What one thread alone gets. */
    worker alone[2] = {workers[0], workers[1]};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(one_round(&alone[i]), TCONV_OK);
        assert_true(alone[i].rewrites > 0);
    }

    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, work, &workers[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        if (workers[i].status != TCONV_OK)
            fail_msg("%s: %s", workers[i].path, workers[i].message);
        assert_int_equal(workers[i].rewrites, alone[i].rewrites);
        assert_int_equal(workers[i].saved_bytes, alone[i].saved_bytes);
    }
    tconv_pipeline_free(pipeline);
}

/* ---------------------------------------------------------------- shared thread pools */

typedef struct pooled_run {
    const char *path;
    tconv_threadpool *pool; /* NULL: the runner's own */
    uint64_t threads;       /* TCONV_LIMIT_THREADS */
    void *output;           /* output 0 of a run on seed 7 (malloc'd) */
    size_t nbytes;
    tconv_status status;
    char message[1024];
} pooled_run;

static tconv_status run_pooled(pooled_run *r) {
    tconv_model *model = NULL;
    tconv_limits *limits = NULL;
    tconv_runner *runner = NULL;
    tconv_status st = tconv_model_read_file(r->path, NULL, &model, r->message, sizeof r->message);
    if (st == TCONV_OK && (st = tconv_limits_new(&limits)) == TCONV_OK)
        st = tconv_limits_set(limits, TCONV_LIMIT_THREADS, r->threads);
    if (st == TCONV_OK && (st = tconv_runner_new(model, limits, &runner)) != TCONV_OK)
        snprintf(r->message, sizeof r->message, "%s", tconv_model_last_error(model));
    if (st == TCONV_OK)
        st = tconv_runner_set_threadpool(runner, r->pool);
    if (st == TCONV_OK && ((st = tconv_runner_set_random_inputs(runner, 7)) != TCONV_OK ||
                           (st = tconv_runner_run(runner)) != TCONV_OK))
        snprintf(r->message, sizeof r->message, "%s", tconv_runner_last_error(runner));
    if (st == TCONV_OK && tconv_runner_output_dtype(runner, 0) != TCONV_DTYPE_FLOAT) {
        snprintf(r->message, sizeof r->message, "output 0 is not float32");
        st = TCONV_ERR_UNSUPPORTED;
    }
    if (st == TCONV_OK) {
        const void *data = tconv_runner_output_data(runner, 0, &r->nbytes);
        r->output = malloc(r->nbytes);
        if (!r->output)
            st = TCONV_ERR_NOMEM;
        else
            memcpy(r->output, data, r->nbytes);
    }
    tconv_runner_free(runner);
    tconv_limits_free(limits);
    tconv_model_free(model);
    return st;
}

static void *work_pooled(void *arg) {
    pooled_run *r = arg;
    r->status = run_pooled(r);
    return NULL;
}

/* Same values as the one-thread run, up to the order of float sums (thread counts split the
 * work differently, and a kernel that finds a shared pool busy runs alone). The outputs are
 * float32. */
static void expect_same_output(const pooled_run *got, const pooled_run *want) {
    if (got->status != TCONV_OK)
        fail_msg("%s: %s", got->path, got->message);
    assert_int_equal(got->nbytes, want->nbytes);
    const float *a = got->output, *b = want->output;
    for (size_t i = 0; i < want->nbytes / sizeof(float); i++) {
        if (!(fabsf(a[i] - b[i]) <= 1e-5f + 1e-4f * fabsf(b[i])))
            fail_msg("%s: element %zu is %g, one thread gives %g", got->path, i, (double)a[i],
                     (double)b[i]);
    }
}

static void test_runners_share_a_pool(void **state) {
    (void)state;
    const char *paths[2] = {API_MODEL("dcgan_generator"), API_MODEL("keras_decoder")};
    pooled_run alone[2], shared[2];
    tconv_threadpool *pool = NULL;
    assert_int_equal(tconv_threadpool_new(&pool), TCONV_OK);
    for (int i = 0; i < 2; i++) {
        alone[i] = (pooled_run){.path = paths[i], .threads = 1};
        assert_int_equal(run_pooled(&alone[i]), TCONV_OK);
    }
    /* one thread: the pool is never asked for a helper */
    pooled_run single = {.path = paths[0], .pool = pool, .threads = 1};
    assert_int_equal(run_pooled(&single), TCONV_OK);
    expect_same_output(&single, &alone[0]);
    assert_int_equal(tconv_threadpool_thread_count(pool), 0);
    /* four threads, one runner at a time: the helpers come from the shared pool */
    pooled_run four = {.path = paths[0], .pool = pool, .threads = 4};
    assert_int_equal(run_pooled(&four), TCONV_OK);
    expect_same_output(&four, &alone[0]);
    int started = tconv_threadpool_thread_count(pool);
    assert_true(started >= 1 && started <= 3);
    /* two runners on the same pool in two threads at once */
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) {
        shared[i] = (pooled_run){.path = paths[i], .pool = pool, .threads = 4};
        assert_int_equal(pthread_create(&threads[i], NULL, work_pooled, &shared[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        expect_same_output(&shared[i], &alone[i]);
    assert_true(tconv_threadpool_thread_count(pool) <= 3);
    tconv_threadpool_free(pool); /* after every runner that used it */
    for (int i = 0; i < 2; i++) {
        free(alone[i].output);
        free(shared[i].output);
    }
    free(single.output);
    free(four.output);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_models_in_two_threads),
        cmocka_unit_test(test_runners_share_a_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
