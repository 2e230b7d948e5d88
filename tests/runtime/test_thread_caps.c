/* Measured thread caps (runtime/session/thread_tuning.h): the bookkeeping on hand-made times
 * (the levels, the schedule of runs, what each step chooses and why, the check against a
 * uniform level, exploring again when the machine changed), and through a runner on the models
 * of models/: every kernel gives the same bits on any number of threads, split or not, so the
 * outputs stay the same bits run after run while a runner explores; and the caps reach the
 * kernels (a profiled run at the one-thread level uses one thread). */
#include <stdio.h>
#include <stdlib.h>

#include "api/api_internal.h"
#include "rt_test_util.h"
#include "runtime/compute/test_hooks.h"
#include "runtime/session/session_internal.h"
#include "runtime/session/thread_tuning.h"
#include "tconv/model.h"
#include "tconv/runtime.h"

#define US 1000 /* ns */

static tc_thread_tuning *tuning_for(size_t n_steps, int n_threads) {
    tc_thread_tuning *t = tc_tuning_create(n_steps, n_threads);
    assert_non_null(t);
    return t;
}

/* One run: begins (returns whether its steps are timed), each step takes step_ns[i] (when
 * given), the run takes `run_ns`. */
static bool one_run(tc_thread_tuning *t, const int64_t *step_ns, int64_t run_ns) {
    bool timed = tc_tuning_run_begin(t, 42);
    for (size_t i = 0; timed && step_ns && i < t->n_steps; i++)
        tc_tuning_step_time(t, i, step_ns[i]);
    tc_tuning_run_end(t, true, run_ns);
    return timed;
}

/* Runs of 5 ms: the warm-up's runs are also its time. */
static void warm_up(tc_thread_tuning *t) {
    for (int r = 0; r < TC_TUNING_WARMUP_RUNS; r++) {
        assert_int_equal(t->phase, TC_TUNING_WARMUP);
        assert_false(one_run(t, NULL, TC_TUNING_WARMUP_NS / TC_TUNING_WARMUP_RUNS + 1));
    }
    assert_int_equal(t->phase, TC_TUNING_EXPLORING);
}

/* Short runs: the warm-up lasts its time. */
static void test_warm_up_time(void **state) {
    (void)state;
    tc_thread_tuning *t = tuning_for(3, 2);
    int64_t run_ns = TC_TUNING_WARMUP_NS / 40;
    for (int r = 0; r < 40; r++) {
        assert_int_equal(t->phase, TC_TUNING_WARMUP);
        assert_false(one_run(t, NULL, run_ns));
    }
    assert_int_equal(t->phase, TC_TUNING_EXPLORING);
    tc_tuning_free(t);
}

static void test_levels(void **state) {
    (void)state;
    assert_null(tc_tuning_create(10, 1));
    assert_null(tc_tuning_create(TC_TUNING_MAX_STEPS + 1, 16));
    tc_tuning_free(tuning_for(TC_TUNING_MAX_STEPS, 16));
    int counts[][8] = {
        {2, 2, 1}, {6, 6, 3, 1}, {16, 16, 8, 4, 2, 1}, {1000, 1000, 32, 16, 8, 4, 2, 1}};
    int n_levels[] = {2, 3, 5, 7};
    for (size_t c = 0; c < 4; c++) {
        tc_thread_tuning *t = tuning_for(1, counts[c][0]);
        assert_int_equal(t->n_levels, n_levels[c]);
        warm_up(t);
        /* the levels in turn, a block of runs at a time */
        for (int r = 0; r < TC_TUNING_BLOCK * TC_TUNING_SAMPLES * t->n_levels; r++) {
            assert_true(tc_tuning_run_begin(t, 42));
            int level = r / TC_TUNING_BLOCK % t->n_levels;
            assert_int_equal(tc_tuning_step_threads(t, 0), counts[c][1 + level]);
            tc_tuning_run_end(t, true, 100 * US);
        }
        /* equal times everywhere: the step and the model stay on the cost model's count, and
         * with nothing to check the tuning is done at once */
        assert_int_equal(t->phase, TC_TUNING_DONE);
        assert_false(tc_tuning_run_begin(t, 42));
        assert_int_equal(tc_tuning_step_threads(t, 0), counts[c][0]);
        tc_tuning_run_end(t, true, 100 * US);
        tc_tuning_free(t);
    }
}

/* Steps of a 16-thread session, their times at levels 0..4 (16, 8, 4, 2, 1 threads):
 *   0: quickest at 4 threads by far            -> level 2
 *   1: quickest at 16                          -> level 0
 *   2: 2 and 1 thread within TC_TUNING_TIE     -> level 4 (fewer threads win the tie)
 *   3: 3% quicker on 8: under TC_TUNING_GAIN   -> level 0
 *   4: 0.4 us quicker on 1 of 2 us: under TC_TUNING_GAIN_NS -> level 0 */
static const int64_t STEP_NS[5][5] = {
    {40 * US, 30 * US, 20 * US, 25 * US, 35 * US},
    {10 * US, 12 * US, 14 * US, 18 * US, 30 * US},
    {30 * US, 29 * US, 25 * US, 20 * US, 20100},
    {100 * US, 97 * US, 99 * US, 99 * US, 120 * US},
    {2000, 1900, 1800, 1700, 1600},
};
static const int CHOSEN[5] = {2, 0, 4, 0, 0};

/* The exploring runs of the five steps above on `t`; run times per level from run_ns. The
 * first run of each block is slower (it pays for the level change): the least one counts. */
static void explore(tc_thread_tuning *t, const int64_t *run_ns) {
    for (int r = 0; r < TC_TUNING_BLOCK * TC_TUNING_SAMPLES * 5; r++) {
        int level = r / TC_TUNING_BLOCK % 5;
        int64_t change = r % TC_TUNING_BLOCK == 0 ? 50 * US : 0, steps[5];
        for (int i = 0; i < 5; i++)
            steps[i] = STEP_NS[i][level] + change;
        assert_true(one_run(t, steps, run_ns[level] + 10 * change));
    }
    assert_int_equal(t->phase, TC_TUNING_CHECKING);
    for (int i = 0; i < 5; i++)
        assert_int_equal(t->choice[i], CHOSEN[i]);
}

/* A 16-thread tuning of the five steps, warmed up and explored. */
static tc_thread_tuning *explored(const int64_t *run_ns) {
    tc_thread_tuning *t = tuning_for(5, 16);
    warm_up(t);
    explore(t, run_ns);
    return t;
}

/* Runs the check: the choices' runs take choices_ns, the uniform level's uniform_ns. */
static void check(tc_thread_tuning *t, int uniform_threads, int64_t choices_ns,
                  int64_t uniform_ns) {
    static const int CHOSEN_THREADS[5] = {4, 16, 1, 16, 16};
    for (int r = 0; r < 2 * TC_TUNING_BLOCK * TC_TUNING_SAMPLES; r++) {
        assert_true(tc_tuning_run_begin(t, 42));
        bool choices = r / TC_TUNING_BLOCK % 2 == 0;
        for (size_t i = 0; i < 5; i++)
            assert_int_equal(tc_tuning_step_threads(t, i),
                             choices ? CHOSEN_THREADS[i] : uniform_threads);
        tc_tuning_run_end(t, true, choices ? choices_ns : uniform_ns);
    }
    assert_int_equal(t->phase, TC_TUNING_DONE);
}

static void test_choices_kept(void **state) {
    (void)state;
    /* as a whole, 8 threads were quickest: the uniform level to beat is 1 */
    const int64_t run_ns[5] = {500 * US, 450 * US, 480 * US, 600 * US, 900 * US};
    tc_thread_tuning *t = explored(run_ns);
    assert_int_equal(t->uniform, 1);
    check(t, 8, 400 * US, 450 * US);
    assert_true(t->kept_choices);
    assert_int_equal(t->settled_ns, 400 * US);
    assert_false(tc_tuning_run_begin(t, 42));
    assert_int_equal(tc_tuning_step_threads(t, 0), 4);
    assert_int_equal(tc_tuning_step_threads(t, 1), 16);
    assert_int_equal(tc_tuning_step_threads(t, 2), 1);
    tc_tuning_run_end(t, true, 400 * US);
    tc_tuning_free(t);
}

static void test_choices_rejected(void **state) {
    (void)state;
    /* each step's choice looked quicker, but together they ran slower than 1 thread for all
     * (their splits moved each other's data): every step takes 1 thread */
    const int64_t run_ns[5] = {500 * US, 480 * US, 470 * US, 460 * US, 300 * US};
    tc_thread_tuning *t = explored(run_ns);
    assert_int_equal(t->uniform, 4);
    check(t, 1, 350 * US, 300 * US);
    assert_false(t->kept_choices);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(tc_tuning_step_threads(t, i), 1);
    tc_tuning_free(t);
}

/* Done, the caps chosen for 400 us runs: only whole runs are timed, and a window of runs
 * TC_TUNING_DRIFT slower (the machine changed) explores again, without the warm-up. */
static void test_drift(void **state) {
    (void)state;
    const int64_t run_ns[5] = {500 * US, 450 * US, 480 * US, 600 * US, 900 * US};
    tc_thread_tuning *t = explored(run_ns);
    check(t, 8, 400 * US, 450 * US);
    /* 19% slower at best in each window, and single runs far slower: nothing changes */
    for (int r = 0; r < 10 * TC_TUNING_WINDOW; r++)
        assert_false(one_run(t, NULL, r % 4 == 0 ? 476 * US : 2000 * US));
    assert_int_equal(t->phase, TC_TUNING_DONE);
    assert_int_equal(tc_tuning_step_threads(t, 0), 4);
    /* a whole window over 20% slower */
    for (int r = 0; r < TC_TUNING_WINDOW; r++) {
        assert_int_equal(t->phase, TC_TUNING_DONE);
        assert_false(one_run(t, NULL, 481 * US));
    }
    assert_int_equal(t->phase, TC_TUNING_EXPLORING);
    assert_true(tc_tuning_run_begin(t, 42));
    assert_int_equal(tc_tuning_step_threads(t, 0), 16);
    assert_int_equal(t->step_ns[0], INT64_MAX); /* the old figures are gone */
    tc_tuning_run_end(t, true, 500 * US);
    tc_tuning_free(t);
}

/* Runs in the done phase until it explores again; returns how many it took. */
static int runs_until_exploring(tc_thread_tuning *t) {
    int runs = 0;
    while (t->phase == TC_TUNING_DONE) {
        assert_false(one_run(t, NULL, 400 * US));
        runs++;
        assert_true(runs <= TC_TUNING_RERUNS_MAX);
    }
    return runs;
}

/* Explores again after TC_TUNING_RERUNS_MIN runs; each time it decides the same, twice as many
 * (up to TC_TUNING_RERUNS_MAX); after another decision, TC_TUNING_RERUNS_MIN again. */
static void test_explores_again(void **state) {
    (void)state;
    const int64_t run_ns[5] = {500 * US, 450 * US, 480 * US, 600 * US, 900 * US};
    tc_thread_tuning *t = explored(run_ns);
    check(t, 8, 400 * US, 450 * US);
    int expected = TC_TUNING_RERUNS_MIN;
    for (int round = 0; round < 9; round++) {
        assert_int_equal(runs_until_exploring(t), expected);
        expected = expected * 2 < TC_TUNING_RERUNS_MAX ? expected * 2 : TC_TUNING_RERUNS_MAX;
        explore(t, run_ns); /* the same again */
        check(t, 8, 400 * US, 450 * US);
    }
    assert_int_equal(expected, TC_TUNING_RERUNS_MAX);
    /* now the choices lose the check: another decision, the shortest interval again */
    assert_int_equal(runs_until_exploring(t), TC_TUNING_RERUNS_MAX);
    explore(t, run_ns);
    check(t, 8, 500 * US, 450 * US);
    assert_false(t->kept_choices);
    assert_int_equal(runs_until_exploring(t), TC_TUNING_RERUNS_MIN);
    tc_tuning_free(t);
}

/* Other input shapes start over, warm-up included; a failed run's time is not kept. */
static void test_shapes_and_failures(void **state) {
    (void)state;
    tc_thread_tuning *t = tuning_for(1, 2);
    warm_up(t);
    assert_true(tc_tuning_run_begin(t, 42));
    tc_tuning_step_time(t, 0, 10 * US);
    tc_tuning_run_end(t, false, 1 * US); /* failed: its 1 us is no figure */
    assert_int_equal(t->run_ns[0], INT64_MAX);
    assert_int_equal(t->step_ns[0], 10 * US);
    assert_false(tc_tuning_run_begin(t, 43));
    assert_int_equal(t->phase, TC_TUNING_WARMUP);
    assert_int_equal(t->step_ns[0], INT64_MAX);
    tc_tuning_run_end(t, true, 1 * US);
    tc_tuning_free(t);
}

static void test_shapes_key(void **state) {
    (void)state;
    int64_t a[] = {1, 3, 8, 8}, b[] = {1, 3, 8, 9};
    uint64_t ka = tc_tuning_shapes_add(TC_TUNING_NO_SHAPES, 4, a);
    assert_int_not_equal(ka, tc_tuning_shapes_add(TC_TUNING_NO_SHAPES, 4, b));
    assert_int_not_equal(ka, tc_tuning_shapes_add(TC_TUNING_NO_SHAPES, 3, a));
    assert_int_equal(ka, tc_tuning_shapes_add(TC_TUNING_NO_SHAPES, 4, a));
    /* [2] then [3] is not [2, 3] */
    int64_t two = 2, three = 3, both[] = {2, 3};
    assert_int_not_equal(
        tc_tuning_shapes_add(tc_tuning_shapes_add(TC_TUNING_NO_SHAPES, 1, &two), 1, &three),
        tc_tuning_shapes_add(TC_TUNING_NO_SHAPES, 2, both));
}

/* ---------------------------------------------------------------- through a runner */

#define THREADS 4
/* The runner's tuning (white box: the test reads where it is); NULL before the first run. */
static const tc_thread_tuning *tuning_of(const tconv_runner *r) {
    return r->session->tuning;
}

static tconv_runner *runner_for(tconv_model *m, int threads, const char *name) {
    tconv_limits *limits = NULL;
    assert_int_equal(tconv_limits_new(&limits), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_THREADS, (uint64_t)threads), TCONV_OK);
    tconv_runner *r = NULL;
    tconv_status st = tconv_runner_new(m, limits, &r);
    tconv_limits_free(limits);
    if (st != TCONV_OK)
        print_error("%s: %s\n", name, tconv_model_last_error(m));
    assert_int_equal(st, TCONV_OK);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/models/%s/test_data_set_0", TCONV_SOURCE_DIR, name);
    st = tconv_runner_load_data_set(r, dir);
    if (st != TCONV_OK)
        print_error("%s: %s\n", name, tconv_runner_last_error(r));
    assert_int_equal(st, TCONV_OK);
    return r;
}

static void run_ok(tconv_runner *r, const char *name) {
    tconv_status st = tconv_runner_run(r);
    if (st != TCONV_OK)
        print_error("%s: %s\n", name, tconv_runner_last_error(r));
    assert_int_equal(st, TCONV_OK);
}

/* The outputs of the last run, one buffer after another. */
static size_t outputs_of(const tconv_runner *r, unsigned char **bytes) {
    size_t total = 0;
    *bytes = NULL;
    for (size_t i = 0; i < tconv_runner_output_count(r); i++) {
        size_t n = 0;
        const void *data = tconv_runner_output_data(r, i, &n);
        assert_non_null(*bytes = realloc(*bytes, total + n + 1));
        if (n)
            memcpy(*bytes + total, data, n);
        total += n;
    }
    return total;
}

/* models/<name>: one run on one thread, then a runner of THREADS threads with every kernel
 * split over them (tc_test_split_threads) through its whole tuning: each run gives the
 * one-thread bits. */
static void same_bits_while_tuning(const char *name) {
    tconv_model *m = rtt_read_models_case(name);
    tconv_runner *one = runner_for(m, 1, name);
    run_ok(one, name);
    unsigned char *expected = NULL;
    size_t n_expected = outputs_of(one, &expected);
    tconv_runner_free(one);

    tc_test_split_threads = THREADS;
    tconv_runner *many = runner_for(m, THREADS, name);
    int after_done = 0, run = 0;
    for (; after_done < 2; run++) {
        assert_true(run < 200000); /* the warm-up is 10 ms, the tuning 30 runs more */
        run_ok(many, name);
        after_done += tuning_of(many)->phase == TC_TUNING_DONE;
        unsigned char *got = NULL;
        size_t n_got = outputs_of(many, &got);
        if (n_got != n_expected || memcmp(got, expected, n_got) != 0)
            print_error("%s: run %d on %d threads differs from one thread\n", name, run, THREADS);
        assert_true(n_got == n_expected && memcmp(got, expected, n_got) == 0);
        free(got);
    }
    printf("%-22s %4d runs\n", name, run);
    tc_test_split_threads = 0;
    tconv_runner_free(many);
    tconv_model_free(m);
    free(expected);
}

static void test_models_same_bits(void **state) {
    (void)state;
    char path[512], line[1024];
    snprintf(path, sizeof path, "%s/models/models.tsv", TCONV_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int models = 0;
    while (fgets(line, sizeof line, f)) {
        char name[128];
        if (strncmp(line, "name\t", 5) == 0 || sscanf(line, "%127[^\t]", name) != 1)
            continue;
        same_bits_while_tuning(name);
        models++;
    }
    fclose(f);
    printf("%d models: the same bits on 1 thread and on %d, through the tuning\n", models, THREADS);
    assert_true(models >= 17);
}

/* A runner for `dir` (an ONNX node test) on `threads`, its inputs from test_data_set_0, run
 * once; NULL where the test's model or inputs do not load or the run fails (the suite's own
 * tests say which pass). */
static tconv_runner *node_test_run(const char *dir, tconv_model **model, int threads) {
    char path[1024], message[512];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (!*model && tconv_model_read_file(path, NULL, model, message, sizeof message) != TCONV_OK)
        return NULL;
    tconv_limits *limits = NULL;
    assert_int_equal(tconv_limits_new(&limits), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_THREADS, (uint64_t)threads), TCONV_OK);
    tconv_runner *r = NULL;
    tconv_status st = tconv_runner_new(*model, limits, &r);
    tconv_limits_free(limits);
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    if (st == TCONV_OK &&
        (tconv_runner_load_data_set(r, path) != TCONV_OK || tconv_runner_run(r) != TCONV_OK)) {
        tconv_runner_free(r);
        return NULL;
    }
    return st == TCONV_OK ? r : NULL;
}

/* Every node test tconv passes (node_tests_passed.txt): its outputs on one thread and on
 * THREADS with every kernel split, the same bits, except where one thread twice does not give
 * the same bits either (random ops). */
static void test_node_tests_same_bits(void **state) {
    (void)state;
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/tests/runtime/node_tests_passed.txt", TCONV_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int compared = 0, random = 0, failed = 0;
    while (fgets(line, sizeof line, f)) {
        char name[256];
        if (strncmp(line, "test_", 5) != 0 || sscanf(line, "%255s", name) != 1)
            continue;
        snprintf(path, sizeof path, "%s/%s", TCONV_ONNX_NODE_TESTS, name);
        tconv_model *m = NULL;
        tconv_runner *one = node_test_run(path, &m, 1);
        if (!one) {
            print_error("%s: does not run\n", name);
            failed++;
            tconv_model_free(m);
            continue;
        }
        unsigned char *expected = NULL, *again = NULL, *got = NULL;
        size_t n_expected = outputs_of(one, &expected);
        assert_int_equal(tconv_runner_run(one), TCONV_OK);
        size_t n_again = outputs_of(one, &again);
        if (n_again != n_expected || memcmp(again, expected, n_again) != 0) {
            random++;
        } else {
            tc_test_split_threads = THREADS;
            tconv_runner *many = node_test_run(path, &m, THREADS);
            tc_test_split_threads = 0;
            assert_non_null(many);
            size_t n_got = outputs_of(many, &got);
            if (n_got != n_expected || memcmp(got, expected, n_got) != 0) {
                print_error("%s: other bits on %d threads\n", name, THREADS);
                failed++;
            }
            compared++;
            tconv_runner_free(many);
        }
        free(expected);
        free(again);
        free(got);
        tconv_runner_free(one);
        tconv_model_free(m);
    }
    fclose(f);
    printf("%d node tests: the same bits on 1 thread and on %d (every kernel split); %d with "
           "random ops not compared\n",
           compared, THREADS, random);
    assert_int_equal(failed, 0);
    assert_true(compared >= 1500);
}

/* The most threads any step of the profiled run used ("thread_count" in its events). */
static int most_threads(tconv_runner *r) {
    char *json = NULL;
    assert_int_equal(tconv_runner_profile_json(r, &json), TCONV_OK);
    int most = 0;
    for (const char *at = json; (at = strstr(at, "\"thread_count\"")) != NULL; at++) {
        int n = 0;
        assert_int_equal(sscanf(at, "\"thread_count\":%d", &n), 1);
        most = n > most ? n : most;
    }
    tconv_free(json);
    return most;
}

/* Every kernel split over THREADS: the profiled runs show the level's cap, run by run, and a
 * runner with the tuning off stays on THREADS. */
static void test_caps_reach_kernels(void **state) {
    (void)state;
    const char *name = "cyclegan_generator";
    tconv_model *m = rtt_read_models_case(name);
    tc_test_split_threads = THREADS;
    tconv_runner *r = runner_for(m, THREADS, name);
    tconv_runner *fixed = runner_for(m, THREADS, name);
    assert_int_equal(tconv_runner_set_thread_tuning(fixed, false), TCONV_OK);
    int runs_at[3] = {0};
    bool explored = false; /* until the first exploring is over (checking, or done at once) */
    for (int run = 0; !explored; run++) {
        assert_true(run < 200000);
        bool exploring = tuning_of(r) && tuning_of(r)->phase == TC_TUNING_EXPLORING;
        assert_int_equal(tconv_runner_set_profiling(r, true), TCONV_OK);
        run_ok(r, name);
        int level = exploring ? tuning_of(r)->level : 0; /* the level this run had */
        int most = most_threads(r);
        assert_true(most >= 1 && most <= THREADS >> level);
        runs_at[level] += exploring;
        explored = exploring && tuning_of(r)->phase != TC_TUNING_EXPLORING;
        assert_int_equal(tconv_runner_set_profiling(fixed, true), TCONV_OK);
        run_ok(fixed, name);
        assert_true(most_threads(fixed) <= THREADS);
    }
    for (int level = 0; level < 3; level++) /* 4, 2 and 1 thread */
        assert_int_equal(runs_at[level], TC_TUNING_BLOCK * TC_TUNING_SAMPLES);
    tc_test_split_threads = 0;
    tconv_runner_free(r);
    tconv_runner_free(fixed);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_warm_up_time),
        cmocka_unit_test(test_choices_kept),
        cmocka_unit_test(test_choices_rejected),
        cmocka_unit_test(test_drift),
        cmocka_unit_test(test_explores_again),
        cmocka_unit_test(test_shapes_and_failures),
        cmocka_unit_test(test_shapes_key),
        cmocka_unit_test(test_models_same_bits),
        cmocka_unit_test(test_caps_reach_kernels),
        cmocka_unit_test(test_node_tests_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
