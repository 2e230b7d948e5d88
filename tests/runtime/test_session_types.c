/* Planning reads inferred types from a side table (ir/type_table.h) that the API fills and hands
 * to the session, instead of writing shape inference's results into the caller's model and
 * putting them back (src/api/api_session.c). The model is byte-identical after a session is
 * created from it, its values' types are the very same structs, the session's table does hold
 * the inferred types, and sessions created from one model on two threads at once compute what
 * one thread computes (run it under the sanitizer build: scripts/test.sh --sanitize; it is
 * clean under ThreadSanitizer too). Reading a string attribute writes nothing either: the LSTM
 * kernel's reads used to copy into the model's arena on every run, a race between two sessions
 * of one model that ThreadSanitizer found. */
#include "api/api_internal.h"
#include "importer/importer.h"
#include "rt_test_util.h"
#include "runtime/session/session_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MODEL TCONV_SOURCE_DIR "/models/demucs_small/model.onnx" /* no value_info at all */

static tconv_model *read_model(void) {
    tconv_model *m = NULL;
    char message[512];
    tconv_status st = tconv_model_read_file(MODEL, NULL, &m, message, sizeof message);
    if (st != TCONV_OK)
        print_error("%s\n", message);
    assert_int_equal(st, TCONV_OK);
    return m;
}

static tc_rt_tensor mix_input(void) {
    int64_t dims[3] = {1, 1, 200};
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 3, dims, NULL);
    float *xs = x.data;
    for (int i = 0; i < 200; i++)
        xs[i] = (float)((i * 5) % 17) / 8.0f - 1.0f;
    return x;
}

static tc_session *api_session(tconv_model *m) {
    tc_session_options options;
    tc_session_options_init(&options);
    options.n_threads = 1;
    tc_session *s = NULL;
    tc_error err;
    tconv_status st = tc_api_session_create(m, &options, &s, &err);
    if (st != TCONV_OK)
        print_error("%s\n", err.message);
    assert_int_equal(st, TCONV_OK);
    return s;
}

typedef struct node_types {
    size_t n;
    tc_type *types; /* node outputs in graph order, as structs (dims pointers included) */
} node_types;

static node_types snapshot_types(const tconv_graph *g) {
    node_types t = {0, NULL};
    for (const tconv_node *n = g->first; n; n = n->next)
        t.n += n->n_outputs;
    t.types = calloc(t.n ? t.n : 1, sizeof *t.types);
    assert_non_null(t.types);
    size_t k = 0;
    for (const tconv_node *n = g->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_outputs; i++, k++) {
            if (n->outputs[i])
                t.types[k] = n->outputs[i]->type;
        }
    }
    return t;
}

static void test_model_untouched_and_table_used(void **state) {
    (void)state;
    tconv_model *m = read_model();
    void *before = NULL, *after = NULL;
    size_t n_before = 0, n_after = 0;
    tc_error err;
    assert_int_equal(tc_model_save_buffer(m, &before, &n_before, &err), TCONV_OK);
    node_types types_before = snapshot_types(m->graph);
    size_t value_info_before = m->graph->n_value_info;
    bool dirty_before = false;
    for (const tconv_node *n = m->graph->first; n; n = n->next)
        dirty_before |= n->n_outputs && n->outputs[0] && n->outputs[0]->type_dirty;

    tc_session *s = api_session(m);
    /* while the session lives: the model is as it was */
    assert_int_equal(m->graph->n_value_info, value_info_before);
    node_types types_during = snapshot_types(m->graph);
    assert_int_equal(types_during.n, types_before.n);
    assert_memory_equal(types_during.types, types_before.types,
                        types_before.n * sizeof *types_before.types);
    /* and the session knows more than the model declares: some intermediate value with no
     * declared shape has a static one in its table */
    size_t inferred = 0;
    for (const tconv_node *n = m->graph->first; n; n = n->next) {
        const tconv_value *v = n->n_outputs ? n->outputs[0] : NULL;
        const tc_type *t = v ? tc_type_table_get(s->options.types, v) : NULL;
        if (t && v->type.rank < 0 && t->rank >= 0)
            inferred++;
    }
    printf("demucs_small: %zu node outputs typed in the session's table only\n", inferred);
    assert_true(inferred > 10);
    tc_rt_tensor x = mix_input(), y;
    assert_int_equal(tc_session_run(s, &x, 1, &y, &err), TCONV_OK);
    tc_rt_tensor_release(&y);
    tc_session_free(s);

    assert_int_equal(tc_model_save_buffer(m, &after, &n_after, &err), TCONV_OK);
    assert_int_equal(n_after, n_before);
    assert_memory_equal(after, before, n_before);
    bool dirty_after = false;
    for (const tconv_node *n = m->graph->first; n; n = n->next)
        dirty_after |= n->n_outputs && n->outputs[0] && n->outputs[0]->type_dirty;
    assert_int_equal(dirty_after, dirty_before);
    free(before);
    free(after);
    free(types_before.types);
    free(types_during.types);
    tc_rt_tensor_release(&x);
    tconv_model_free(m);
}

static void test_string_attributes_read_in_place(void **state) {
    (void)state;
    tconv_model *m = read_model();
    size_t strings = 0;
    for (const tconv_node *n = m->graph->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_attrs; i++) {
            const tc_attr *a = &n->attrs[i];
            if (a->type != TCONV_ATTR_STRING)
                continue;
            const char *first = NULL, *again = NULL;
            tc_error err;
            assert_int_equal(tc_node_attr_string(n, a->name, NULL, &first, &err), TCONV_OK);
            assert_int_equal(tc_node_attr_string(n, a->name, NULL, &again, &err), TCONV_OK);
            assert_ptr_equal(first, again); /* no copy made per read */
            assert_ptr_equal(first, (const char *)a->s.data);
            assert_int_equal(strlen(first), a->s.len);
            strings++;
        }
    }
    assert_true(strings > 0); /* demucs_small's LSTMs have direction and activations */
    tconv_model_free(m);
}

typedef struct worker {
    tconv_model *model; /* shared */
    const tc_rt_tensor *x;
    tc_rt_tensor y;
    int failures;
} worker;

#define ROUNDS 4

static void *work(void *arg) {
    worker *w = arg;
    for (int r = 0; r < ROUNDS; r++) {
        tc_session_options options;
        tc_session_options_init(&options);
        options.n_threads = 1;
        tc_session *s = NULL;
        tc_error err;
        tc_rt_tensor y;
        if (tc_api_session_create(w->model, &options, &s, &err) != TCONV_OK ||
            tc_session_run(s, w->x, 1, &y, &err) != TCONV_OK) {
            w->failures++;
            tc_session_free(s);
            continue;
        }
        tc_session_free(s);
        if (w->y.data && (w->y.nbytes != y.nbytes || memcmp(w->y.data, y.data, y.nbytes) != 0))
            w->failures++;
        if (!w->y.data)
            w->y = y;
        else
            tc_rt_tensor_release(&y);
    }
    return NULL;
}

static void test_two_threads_one_model(void **state) {
    (void)state;
    tconv_model *m = read_model();
    tc_rt_tensor x = mix_input(), alone;
    tc_session *s = api_session(m);
    tc_error err;
    assert_int_equal(tc_session_run(s, &x, 1, &alone, &err), TCONV_OK);
    tc_session_free(s);
    worker w[2] = {{m, &x, {0}, 0}, {m, &x, {0}, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(w[i].failures, 0);
        assert_int_equal(w[i].y.nbytes, alone.nbytes);
        assert_memory_equal(w[i].y.data, alone.data, alone.nbytes);
        tc_rt_tensor_release(&w[i].y);
    }
    tc_rt_tensor_release(&alone);
    tc_rt_tensor_release(&x);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_untouched_and_table_used),
        cmocka_unit_test(test_string_attributes_read_in_place),
        cmocka_unit_test(test_two_threads_one_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
