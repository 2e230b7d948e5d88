/* The per-node thread count (parallel.h): the cost model on injected fork/join tables (hand-
 * worked answers, never more threads than asked, more work never fewer threads) and the pool's
 * measurement of its own fork/join cost (positive, bounded in value and in time, kept, not
 * counted as a job's workers, refused on a busy pool). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "runtime/compute/parallel.h"

#define RATE 100.0 /* flops a ns in the hand-worked cases */

static void fill_flat(int64_t *table, int64_t ns) {
    for (int t = 0; t <= TC_PARALLEL_MAX_THREADS; t++)
        table[t] = ns;
}

/* 1 us a worker: a pool whose helpers join one after another */
static void fill_linear(int64_t *table) {
    for (int t = 0; t <= TC_PARALLEL_MAX_THREADS; t++)
        table[t] = 1000 * (int64_t)t;
}

static void test_choose_hand_worked(void **state) {
    (void)state;
    int64_t table[TC_PARALLEL_MAX_THREADS + 1];
    fill_flat(table, 8000);
    /* time(1) = W/100, time(2) = W/200 * 1.125 + 8000: even at W = 1828571 flops (above the
     * 8 us floor, TC_PARALLEL_MIN_SPLIT_NS) */
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 2, 1.8e6, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 2, 1.9e6, RATE), 2);
    /* a flat overhead: large work takes every thread it may, and no more */
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 16, 1e9, RATE), 16);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 4, 1e9, RATE), 4);
    fill_flat(table, 5000);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 2, 1.1e6, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 2, 1.2e6, RATE), 2);
    /* 1 us a worker, 100 us of work: time(t) = 112500 / t + 1000 t: 14062 + 8000 (t = 8),
     * 11250 + 10000 (10), 10227 + 11000 (11, the least), 9375 + 12000 (12): a node too small
     * for 16 threads runs on 11 */
    fill_linear(table);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 16, 1e7, RATE), 11);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 8, 1e7, RATE), 8);
    /* the same work on a core twice as fast is worth fewer threads: 56250 / t + 1000 t is
     * 15035.7 at 7, 15031.25 at 8 (the least), 15250 at 9 */
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 16, 1e7, 2 * RATE), 8);
}

/* The compute the workers deliver together (scale): helpers that add none (two hardware threads
 * of one core) never take a split, whatever the work; helpers that add half a core each need
 * more work than whole cores to pay for the fork/join. */
static void test_choose_with_scale(void **state) {
    (void)state;
    int64_t table[TC_PARALLEL_MAX_THREADS + 1];
    double scale[TC_PARALLEL_MAX_THREADS + 1] = {0};
    fill_flat(table, 8000);
    for (int t = 2; t <= TC_PARALLEL_MAX_THREADS; t++)
        scale[t] = 1.0;
    assert_int_equal(tc_parallel_choose_threads(table, scale, 2, 1e12, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, scale, 16, 1e12, RATE), 1);
    /* time(2) = W/150 * 1.125 + 8000 = 0.0075 W + 8000 against 0.01 W: split from W = 3.2e6 */
    scale[2] = 1.5;
    assert_int_equal(tc_parallel_choose_threads(table, scale, 2, 3.1e6, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, scale, 2, 3.3e6, RATE), 2);
    /* 4 workers as much as 2 (two cores of two hardware threads each): never 3 or 4 */
    scale[3] = scale[4] = 1.5;
    assert_int_equal(tc_parallel_choose_threads(table, scale, 4, 1e12, RATE), 2);
    /* whole cores (scale[t] = t) answer as with no table */
    for (int t = 2; t <= TC_PARALLEL_MAX_THREADS; t++)
        scale[t] = t;
    for (double work = 1e5; work < 1e10; work *= 1.3)
        assert_int_equal(tc_parallel_choose_threads(table, scale, 9, work, RATE),
                         tc_parallel_choose_threads(table, NULL, 9, work, RATE));
    /* a non-decreasing scale: more work never gets fewer threads */
    static const double measured[] = {0, 0, 1.2, 1.2, 2.1, 2.1, 2.9, 3.6, 3.6};
    for (int t = 2; t <= 8; t++)
        scale[t] = measured[t];
    int last = 1;
    for (double work = 1e3; work <= 1e13; work *= 1.07) {
        int t = tc_parallel_choose_threads(table, scale, 8, work, RATE);
        assert_in_range(t, 1, 8);
        assert_true(t >= last);
        last = t;
    }
    assert_int_equal(last, 7); /* 8 workers deliver no more than 7 */
}

static void test_choose_degenerate(void **state) {
    (void)state;
    int64_t table[TC_PARALLEL_MAX_THREADS + 1];
    fill_flat(table, 0);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 1, 1e12, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 0, 1e12, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, -3, 1e12, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 8, 0, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 8, -5, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 8, NAN, RATE), 1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 8, 1e9, 0), 1);
    /* free forks: any work past the floor is split as far as asked, capped at the limit */
    assert_int_equal(
        tc_parallel_choose_threads(table, NULL, 8, TC_PARALLEL_MIN_SPLIT_NS * RATE, RATE), 8);
    assert_int_equal(
        tc_parallel_choose_threads(table, NULL, 8, TC_PARALLEL_MIN_SPLIT_NS * RATE * 0.99, RATE),
        1);
    assert_int_equal(tc_parallel_choose_threads(table, NULL, 1000, 1e9, RATE),
                     TC_PARALLEL_MAX_THREADS);
}

/* For every table: over work from 1 kflop to 10 Tflop, the count stays in [1, n_threads] and
 * never falls as the work grows; and the extremes are 1 and n_threads. */
static void test_choose_monotone(void **state) {
    (void)state;
    int64_t tables[5][TC_PARALLEL_MAX_THREADS + 1];
    fill_flat(tables[0], 2000);
    fill_flat(tables[1], 5000);
    fill_linear(tables[2]);
    /* measured-looking: uneven, not monotone in t */
    static const int64_t noisy[] = {0, 0, 3100, 2900, 4800, 4100, 7000, 6500, 9800, 9000};
    fill_flat(tables[3], 30000);
    for (size_t t = 0; t < sizeof noisy / sizeof noisy[0]; t++)
        tables[3][t] = noisy[t];
    /* a loaded machine: every fork/join at the probe's cap */
    fill_flat(tables[4], 100000);
    static const int counts[] = {2, 3, 4, 8, 9, 16, 64};
    for (int k = 0; k < 5; k++) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            int n = counts[c], last = 1;
            for (double work = 1e3; work <= 1e13; work *= 1.07) {
                int t = tc_parallel_choose_threads(tables[k], NULL, n, work, RATE);
                assert_in_range(t, 1, n);
                assert_true(t >= last);
                last = t;
            }
            assert_int_equal(tc_parallel_choose_threads(tables[k], NULL, n, 1e3, RATE), 1);
            assert_int_equal(last, n);
        }
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_measure_sane(void **state) {
    (void)state;
    assert_int_equal(tc_thread_pool_fork_join_ns(NULL, 4), 0);
    assert_false(tc_thread_pool_measure(NULL, 4));
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    assert_int_equal(tc_thread_pool_fork_join_ns(pool, 1), 0);
    assert_int_equal(tc_thread_pool_size(pool), 0);
    for (int round = 0; round < 2; round++) { /* measured, then measured again */
        double start = now_s();
        assert_true(tc_thread_pool_measure(pool, 4));
        /* bounded in time: about a millisecond; generous for a loaded test machine */
        assert_true(now_s() - start < 0.5);
        for (int t = 2; t <= 4; t++) {
            int64_t ns = tc_thread_pool_fork_join_ns(pool, t);
            /* positive, and no more than a loaded machine's cap allows (100 us a probe, plus
             * a descheduled caller) */
            assert_true(ns > 0);
            assert_true(ns < 50000000);
            /* between one core and t, never less at more workers */
            double scale = tc_thread_pool_compute_scale(pool, t);
            assert_true(scale >= 1.0 && scale <= (double)t);
            assert_true(scale >= tc_thread_pool_compute_scale(pool, t - 1));
        }
    }
    /* it started the helpers it measured: always the one at 2 workers; on a loaded machine the
     * fork/join budget may run out after that probe, and 4 workers take the cap unprobed (a
     * sanitizer CI run, beside other jobs, had 1 helper here) */
    int helpers = tc_thread_pool_size(pool);
    assert_in_range(helpers, 1, 3);
    assert_int_equal(tc_thread_pool_take_peak(pool), 0); /* and no job counts them */
    /* the first need of a larger count measures it (on a loaded machine the budget may run
     * out before the probe at 6 starts its helpers); helpers are kept, never stopped */
    assert_true(tc_thread_pool_fork_join_ns(pool, 6) > 0);
    assert_in_range(tc_thread_pool_size(pool), helpers, 5);
    tc_thread_pool_destroy(pool);
}

typedef struct nested {
    tc_thread_pool *pool;
    atomic_int refused, stand_ins;
} nested;

static void measure_inside(void *ctx, int64_t task, int worker) {
    (void)task;
    (void)worker;
    nested *n = ctx;
    if (!tc_thread_pool_measure(n->pool, 3))
        atomic_fetch_add(&n->refused, 1);
    if (tc_thread_pool_fork_join_ns(n->pool, 3) > 0)
        atomic_fetch_add(&n->stand_ins, 1);
}

/* Inside a job the pool is busy: no measurement, a positive stand-in, nothing kept. */
static void test_measure_busy_pool(void **state) {
    (void)state;
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    nested n = {.pool = pool};
    atomic_init(&n.refused, 0);
    atomic_init(&n.stand_ins, 0);
    tc_parallel_for(pool, 2, 2, measure_inside, &n);
    assert_int_equal(atomic_load(&n.refused), 2);
    assert_int_equal(atomic_load(&n.stand_ins), 2);
    assert_true(tc_thread_pool_measure(pool, 3)); /* free again */
    tc_thread_pool_destroy(pool);
}

static void test_threads_for_work(void **state) {
    (void)state;
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    assert_int_equal(tc_parallel_threads_for_work(NULL, 8, 1e12), 1);
    assert_int_equal(tc_parallel_threads_for_work(pool, 1, 1e12), 1);
    /* a few hundred flops: one thread, without measuring the pool */
    assert_int_equal(tc_parallel_threads_for_work(pool, 3, 500), 1);
    assert_int_equal(tc_thread_pool_size(pool), 0);
    /* a second of work: every thread asked for, unless the helpers add no compute (this
     * machine's two vCPUs are one core's two hardware threads in some processes) */
    int big = tc_parallel_threads_for_work(pool, 3, 1e11);
    assert_int_equal(big, tc_thread_pool_compute_scale(pool, 3) >= 2.5 ? 3 : big);
    assert_in_range(big, 1, 3);
    int64_t table[TC_PARALLEL_MAX_THREADS + 1] = {0};
    double scale[TC_PARALLEL_MAX_THREADS + 1] = {0};
    for (int t = 2; t <= 3; t++) {
        table[t] = tc_thread_pool_fork_join_ns(pool, t);
        scale[t] = tc_thread_pool_compute_scale(pool, t);
    }
    /* what the pool decides is the model on its measured tables */
    for (double work = 1e4; work < 1e11; work *= 3)
        assert_int_equal(
            tc_parallel_threads_for_work(pool, 3, work),
            tc_parallel_choose_threads(table, scale, 3, work, TC_PARALLEL_WORK_PER_NS));
    tc_thread_pool_destroy(pool);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose_hand_worked), cmocka_unit_test(test_choose_with_scale),
        cmocka_unit_test(test_choose_degenerate),  cmocka_unit_test(test_choose_monotone),
        cmocka_unit_test(test_measure_sane),       cmocka_unit_test(test_measure_busy_pool),
        cmocka_unit_test(test_threads_for_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
