/* The shared split of elementwise-style work (tc_parallel_ranges, parallel.h): every item runs
 * exactly once, in ranges of whole granules, in the calling thread alone when the work is small;
 * and the kernels built on it (elementwise, Concat) give the same bits on 1 and on several
 * threads. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "kernel_harness.h"
#include "runtime/compute/test_hooks.h"

typedef struct range_count {
    atomic_int *hits;
    atomic_int calls;
    int64_t granule;
    atomic_int misaligned;
} range_count;

static void count_range(void *ctx, int64_t begin, int64_t end) {
    range_count *rc = ctx;
    atomic_fetch_add(&rc->calls, 1);
    if (begin % rc->granule != 0)
        atomic_fetch_add(&rc->misaligned, 1);
    for (int64_t i = begin; i < end; i++)
        atomic_fetch_add(&rc->hits[i], 1);
}

static void check_ranges(tc_thread_pool *pool, int threads, int64_t n, double cost, int64_t granule,
                         int64_t min_items, bool expect_one_call) {
    range_count rc = {.granule = granule};
    rc.hits = calloc((size_t)(n > 0 ? n : 1), sizeof *rc.hits);
    assert_non_null(rc.hits);
    atomic_init(&rc.calls, 0);
    atomic_init(&rc.misaligned, 0);
    tc_parallel_ranges(pool, threads, n, cost, granule, min_items, count_range, &rc);
    for (int64_t i = 0; i < n; i++)
        assert_int_equal(atomic_load(&rc.hits[i]), 1);
    assert_int_equal(atomic_load(&rc.misaligned), 0);
    if (n == 0)
        assert_int_equal(atomic_load(&rc.calls), 0);
    else if (expect_one_call)
        assert_int_equal(atomic_load(&rc.calls), 1);
    else
        assert_true(atomic_load(&rc.calls) > 1);
    free(rc.hits);
}

static void test_ranges_cover_each_item_once(void **state) {
    (void)state;
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    static const int64_t sizes[] = {0, 1, 15, 4095, 4096, 4097, 100003};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int threads = 1; threads <= 3; threads++) {
            int64_t n = sizes[s];
            /* small work: one range in the calling thread, whatever the thread count */
            check_ranges(pool, threads, n, 1.0, 16, 1, true);
            /* large work: ranges of whole granules, several when there are items enough and
             * the pool's helpers add compute (tc_thread_pool_compute_scale: not where they
             * share the caller's core) */
            bool split = tc_parallel_threads_for_work(pool, threads, (double)n * 1e9) > 1;
            check_ranges(pool, threads, n, 1e9, 64, 1, !split || n <= 64);
            check_ranges(pool, threads, n, 1e9, 1, 4096, !split || n <= 4096);
        }
    }
    /* no pool: always the calling thread */
    check_ranges(NULL, 4, 100003, 1e9, 16, 1, true);
    tc_thread_pool_destroy(pool);
}

typedef struct task_log {
    atomic_int *runs;
    int *worker; /* who ran each task */
    bool slow;
    /* the thread each worker index ran on, over every job of the pool */
    pthread_t threads[TC_PARALLEL_MAX_THREADS];
    atomic_bool seen[TC_PARALLEL_MAX_THREADS];
    atomic_int mismatched;
} task_log;

static void log_task(void *ctx, int64_t task, int worker) {
    task_log *log = ctx;
    atomic_fetch_add(&log->runs[task], 1);
    log->worker[task] = worker;
    pthread_t self = pthread_self();
    if (!atomic_exchange(&log->seen[worker], true))
        log->threads[worker] = self;
    else if (!pthread_equal(log->threads[worker], self))
        atomic_fetch_add(&log->mismatched, 1);
    if (log->slow) { /* long enough that helpers join */
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
}

/* Runs n logged tasks on `threads` threads of pool (log_free releases what it records). */
static void run_logged(tc_thread_pool *pool, int threads, int64_t n, bool slow, task_log *log) {
    log->runs = calloc((size_t)n, sizeof(atomic_int));
    log->worker = calloc((size_t)n, sizeof(int));
    log->slow = slow;
    assert_non_null(log->runs);
    assert_non_null(log->worker);
    tc_parallel_for(pool, threads, n, log_task, log);
}

static void log_free(task_log *log) {
    free(log->runs);
    free(log->worker);
}

/* tc_parallel_for: every task runs once; worker w takes its home range (tc_parallel_home_begin)
 * from the front and the other workers' from the back, so each range's owner ran a prefix of it
 * and the others a suffix (parallel.c, run_tasks); and a worker index is the same thread in every
 * job (pool thread t is worker t + 1), so consecutive kernels keep each thread on its part of the
 * data. */
static void test_parallel_for_home_ranges(void **state) {
    (void)state;
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    static const int64_t sizes[] = {1, 2, 3, 7, 64, 257};
    static task_log log; /* the threads seen persist across the jobs */
    memset(&log, 0, sizeof log);
    int helpers_seen = 0;
    for (int round = 0; round < 3; round++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            for (int threads = 1; threads <= 4; threads++) {
                int64_t n = sizes[s];
                run_logged(pool, threads, n, n >= 64, &log);
                int workers = tc_parallel_workers(threads, n);
                for (int w = 0; w < workers; w++) {
                    int64_t begin = tc_parallel_home_begin(n, workers, w);
                    int64_t end = tc_parallel_home_begin(n, workers, w + 1);
                    int64_t owned = begin;
                    while (owned < end && log.worker[owned] == w)
                        owned++;
                    for (int64_t i = begin; i < end; i++) {
                        assert_int_equal(atomic_load(&log.runs[i]), 1);
                        assert_true(log.worker[i] >= 0 && log.worker[i] < workers);
                        if (i >= owned) /* past the owner's prefix: the others' suffix */
                            assert_int_not_equal(log.worker[i], w);
                        helpers_seen += log.worker[i] > 0;
                    }
                }
                assert_int_equal(tc_parallel_home_begin(n, workers, workers), n);
                log_free(&log);
            }
        }
    }
    assert_int_equal(atomic_load(&log.mismatched), 0);
    assert_true(helpers_seen > 0); /* the slow jobs had helpers: the split was exercised */
    tc_thread_pool_destroy(pool);
}

/* A helper that never joins (tc_test_absent_helper: pool thread 0, worker 1): its home range is
 * run by the others, all of it, and every task once. */
static void test_parallel_for_absent_helper(void **state) {
    (void)state;
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    static task_log log;
    memset(&log, 0, sizeof log);
    tc_test_absent_helper = 1;
    for (int threads = 2; threads <= 4; threads++) {
        int64_t n = 24;
        run_logged(pool, threads, n, true, &log);
        for (int64_t i = 0; i < n; i++) {
            assert_int_equal(atomic_load(&log.runs[i]), 1);
            assert_int_not_equal(log.worker[i], 1);
        }
        log_free(&log);
    }
    tc_test_absent_helper = 0;
    assert_int_equal(atomic_load(&log.mismatched), 0);
    tc_thread_pool_destroy(pool);
}

/* Counts the tasks run: the jobs of the test below, one task a worker. */
static void count_task(void *ctx, int64_t task, int worker) {
    (void)task;
    (void)worker;
    atomic_fetch_add((atomic_llong *)ctx, 1);
}

/* Threads that no job uses go to sleep and stay asleep. A pool of 8 threads (one job of 8
 * workers started them) then runs only 2-worker jobs, one after another with no gap, so a job
 * is published every microsecond or so: pool threads 1-6 may join none of them. Each must sleep
 * once its own polling time is up (TC_PARALLEL_SPIN_NS, 0.2 ms), not poll again at every job it
 * sees (that kept 7 threads of a 16-thread session busy through a model whose nodes took 8
 * workers or fewer); once asleep, the 2-worker jobs must not wake them. */
static void test_parallel_for_unused_threads_sleep(void **state) {
    (void)state;
    tc_thread_pool *pool = tc_thread_pool_create();
    assert_non_null(pool);
    atomic_llong ran;
    atomic_init(&ran, 0);
    long long jobs = 1;
    tc_parallel_for(pool, 8, 8, count_task, &ran);
    assert_int_equal(tc_thread_pool_size(pool), 7);
    /* up to 10 s of back-to-back jobs (a loaded machine may be slow to run a thread whose time
     * is up); a pool that restarts every thread's polling at each job never gets there */
    int64_t give_up = tc_parallel_clock_ns() + 10000000000;
    int asleep = 0;
    while (asleep < 6 && tc_parallel_clock_ns() < give_up) {
        for (int j = 0; j < 200; j++, jobs++)
            tc_parallel_for(pool, 2, 2, count_task, &ran);
        asleep = 0;
        for (int t = 1; t <= 6; t++) {
            bool a;
            int64_t w;
            tc_thread_pool_thread_state(pool, t, &a, &w);
            asleep += a;
        }
    }
    assert_int_equal(asleep, 6);
    int64_t before[7];
    for (int t = 1; t <= 6; t++) {
        bool a;
        tc_thread_pool_thread_state(pool, t, &a, &before[t]);
    }
    for (int j = 0; j < 2000; j++, jobs++)
        tc_parallel_for(pool, 2, 2, count_task, &ran);
    assert_int_equal(atomic_load(&ran), 8 + 2 * (jobs - 1)); /* every task of every job ran */
    for (int t = 1; t <= 6; t++) { /* the 2-worker jobs woke none of them */
        bool a;
        int64_t w;
        tc_thread_pool_thread_state(pool, t, &a, &w);
        assert_true(a);
        assert_int_equal(w, before[t]);
    }
    /* a job of 8 workers wakes them, and the job is done, every task once */
    static task_log log;
    memset(&log, 0, sizeof log);
    int64_t n = 64;
    run_logged(pool, 8, n, true, &log);
    for (int64_t i = 0; i < n; i++)
        assert_int_equal(atomic_load(&log.runs[i]), 1);
    log_free(&log);
    assert_int_equal(atomic_load(&log.mismatched), 0);
    int64_t woken = 0;
    for (int t = 1; t <= 6; t++) {
        bool a;
        int64_t w;
        tc_thread_pool_thread_state(pool, t, &a, &w);
        woken += w - before[t];
    }
    assert_true(woken > 0);
    tc_thread_pool_destroy(pool);
}

/* Runs a one-input float kernel on x with `threads` threads; returns the output (caller frees). */
static float *run_unary(const char *op, int64_t opset, int threads, const float *x, int64_t n,
                        void (*set_attrs)(kernel_harness *h)) {
    kernel_harness h;
    kh_init(&h, op, 1);
    h.opset = opset;
    h.n_threads = threads;
    if (set_attrs)
        set_attrs(&h);
    int64_t dims[2] = {3, n / 3};
    tc_rt_tensor *in = kh_input(&h, 2, dims, NULL);
    memcpy(in->data, x, (size_t)n * sizeof(float));
    kh_run_ok(&h);
    kh_expect_shape(&h.outputs[0], 2, dims);
    float *out = malloc((size_t)n * sizeof(float));
    assert_non_null(out);
    memcpy(out, h.outputs[0].data, (size_t)n * sizeof(float));
    kh_free(&h);
    return out;
}

static void leaky_attrs(kernel_harness *h) {
    kh_attr_float(h, "alpha", 0.125f);
}

static void clip_attrs(kernel_harness *h) {
    kh_attr_float(h, "min", -0.5f);
    kh_attr_float(h, "max", 0.25f);
}

/* Large enough that every kernel splits over threads; NaNs and infinities included. */
static void test_elementwise_threads_agree(void **state) {
    (void)state;
    enum { N = 3 * 100001 };
    float *x = malloc(N * sizeof(float));
    assert_non_null(x);
    uint64_t rng = 17;
    kh_fill_random(x, N, &rng);
    for (int64_t i = 0; i < N; i++)
        x[i] *= 8.0f;
    x[5] = NAN;
    x[N - 1] = INFINITY;
    x[N / 2] = -INFINITY;
    static const struct {
        const char *op;
        int64_t opset;
        void (*attrs)(kernel_harness *h);
    } ops[] = {{"Relu", 14, NULL},
               {"LeakyRelu", 6, leaky_attrs},
               {"Sigmoid", 13, NULL},
               {"Tanh", 13, NULL},
               {"Clip", 6, clip_attrs}};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        float *one = run_unary(ops[k].op, ops[k].opset, 1, x, N, ops[k].attrs);
        for (int threads = 2; threads <= 3; threads++) {
            float *many = run_unary(ops[k].op, ops[k].opset, threads, x, N, ops[k].attrs);
            assert_memory_equal(one, many, N * sizeof(float));
            free(many);
        }
        if (k == 1) { /* LeakyRelu, against the definition */
            for (int64_t i = 0; i < N; i++) {
                float want = x[i] < 0.0f ? 0.125f * x[i] : x[i];
                assert_true(one[i] == want || (isnan(one[i]) && isnan(want)));
            }
        }
        free(one);
    }
    free(x);
}

/* Concat of three inputs (one empty along the axis) on each axis, large enough to split over
 * threads, against an element-by-element concatenation. */
static void test_concat_threads(void **state) {
    (void)state;
    static const int64_t base[3] = {60, 60, 60}; /* 172 KiB out: split over threads */
    static const int64_t sizes[3] = {5, 0, 7};   /* each input's extent along the axis */
    uint64_t rng = 23;
    for (int axis = 0; axis < 3; axis++) {
        for (int threads = 1; threads <= 3; threads++) {
            kernel_harness h;
            kh_init(&h, "Concat", 1);
            h.n_threads = threads;
            kh_attr_int(&h, "axis", axis);
            const tc_rt_tensor *in[3];
            int64_t out_dims[3] = {base[0], base[1], base[2]};
            out_dims[axis] = 0;
            for (int i = 0; i < 3; i++) {
                int64_t d[3] = {base[0], base[1], base[2]};
                d[axis] = sizes[i];
                out_dims[axis] += sizes[i];
                tc_rt_tensor *t = kh_input(&h, 3, d, NULL);
                kh_fill_random(t->data, t->n_elements, &rng);
                in[i] = t;
            }
            kh_run_ok(&h);
            const tc_rt_tensor *y = &h.outputs[0];
            kh_expect_shape(y, 3, out_dims);
            const float *got = y->data;
            int64_t idx[3];
            for (idx[0] = 0; idx[0] < out_dims[0]; idx[0]++)
                for (idx[1] = 0; idx[1] < out_dims[1]; idx[1]++)
                    for (idx[2] = 0; idx[2] < out_dims[2]; idx[2]++) {
                        int64_t k = idx[axis], i = 0;
                        while (k >= sizes[i])
                            k -= sizes[i++];
                        int64_t s[3] = {idx[0], idx[1], idx[2]}, *d = (int64_t *)in[i]->dims;
                        s[axis] = k;
                        float want =
                            ((const float *)in[i]->data)[(s[0] * d[1] + s[1]) * d[2] + s[2]];
                        assert_true(got[(idx[0] * out_dims[1] + idx[1]) * out_dims[2] + idx[2]] ==
                                    want);
                    }
            kh_free(&h);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_cover_each_item_once),
        cmocka_unit_test(test_parallel_for_home_ranges),
        cmocka_unit_test(test_parallel_for_absent_helper),
        cmocka_unit_test(test_parallel_for_unused_threads_sleep),
        cmocka_unit_test(test_elementwise_threads_agree),
        cmocka_unit_test(test_concat_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
