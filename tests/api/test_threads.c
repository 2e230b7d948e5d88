/* Public API, threads: separate models are independent. Two threads at once each read a model,
 * legalize a copy with one shared pipeline, compare copy and original, and serialize the
 * result, several times over; both must get the same answers a single thread gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_models_in_two_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
