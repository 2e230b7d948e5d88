/* Measured thread caps: each step's thread count chosen from its own times in the runs of this
 * session, not only from the cost model (parallel.h).
 *
 * The cost model weighs a node's arithmetic against the pool's fork/join; it cannot see what a
 * split costs in moving the node's input and output between the cores' caches, which depends on
 * the machine and on what the neighbouring nodes did. On a 16-core Xeon, erfnet's small Convs
 * (15-25 us) ran slower on 2 threads than on 1, and the model got slower at every thread count
 * it was given: 0.544 ms at 1, 0.863 at 16. So the session measures. Its runs go through these
 * phases, for one set of input shapes (a run with other shapes starts over):
 *
 *   warm-up     TC_TUNING_WARMUP_RUNS runs and TC_TUNING_WARMUP_NS, every step at the
 *               session's count (first-touch page faults, the buffer cache filling, the pool's
 *               threads starting and settling on their cores, its probe);
 *   exploring   the levels 0 .. n_levels-1 in turn, a block of TC_TUNING_BLOCK runs at a
 *               time, TC_TUNING_SAMPLES blocks each: at level l every step runs with at most
 *               max(1, n >> l) threads, n the session's count (the last level runs as a
 *               one-thread session would); each step keeps its least time at each level, the
 *               run its least total at each level. Levels take turns so that a machine that
 *               changes speed while it explores favours none; they come in blocks because the
 *               first run after a change of level pays for moving the data the last level left
 *               in other cores' caches (where that is slow, runs that alternate would measure
 *               every level as slow);
 *   checking    each step chooses the level it was quickest at, if that beat level 0
 *               by TC_TUNING_GAIN (else it stays on the cost model's count); then the choices
 *               and the quickest uniform level take turns the same way. The choices are kept
 *               only if they beat it by TC_TUNING_TIE: a step's own choice can cost its
 *               neighbours (its split moves their data);
 *   done        the caps stay, and only whole runs are timed (two clock reads a run). The
 *               tuning explores again (without the warm-up) when the least run of
 *               TC_TUNING_WINDOW runs is TC_TUNING_DRIFT slower than what it chose ran while
 *               checking, and anyway after rerun_after runs: TC_TUNING_RERUNS_MIN, doubled
 *               each time it decides the same again, up to TC_TUNING_RERUNS_MAX. The machine
 *               can change under a session: the 2-core KVM machine these figures come from has
 *               periods of minutes in which its 2-thread runs are twice as slow (linknet 0.42
 *               or 0.88 ms; 0.47 at 1 thread either way), each helper's part of a Conv taking
 *               several times as long.
 *
 * A cap changes only how many threads a kernel may use, and every kernel gives the same bits
 * on any number of threads (tests/runtime/test_thread_caps.c: models/ and the node tests), so
 * a session's results do not change while it explores. After the warm-up, the tuning takes
 * 2 * 2 * 3 + 2 * 2 * 3 = 24 runs with n = 2, 30 + 12 = 42 with n = 16 (5 levels).
 *
 * This part is pure bookkeeping over the times it is given (the session times the steps); it
 * allocates once, at creation. */
#ifndef TC_RUNTIME_THREAD_TUNING_H
#define TC_RUNTIME_THREAD_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The warm-up: at least this many runs, and this long. A new pool is slow for its first
 * milliseconds (its threads start on their creator's core, and the scheduler moves them
 * later): here the first 2-8 runs of a 2-thread DCGAN, some 3 ms, took 410-570 us each, the
 * rest 215-250 (1 thread: 450). */
#define TC_TUNING_WARMUP_RUNS 5
#define TC_TUNING_WARMUP_NS 10000000
/* Runs go in blocks of TC_TUNING_BLOCK at one level (or side, while checking), the levels in
 * turn, TC_TUNING_SAMPLES blocks each. The least run of them counts: a noisy machine spoils
 * some runs, rarely all, and the first run of a block pays for the change of level. */
#define TC_TUNING_BLOCK 2
#define TC_TUNING_SAMPLES 3
/* What fewer threads must gain on a step (a fraction of its time at level 0, and at least
 * TC_TUNING_GAIN_NS) to replace the cost model's count: below that, run-to-run noise. */
#define TC_TUNING_GAIN 0.04
#define TC_TUNING_GAIN_NS 500
/* The done phase's watch and its intervals (above). */
#define TC_TUNING_WINDOW 16
#define TC_TUNING_DRIFT 0.2
#define TC_TUNING_RERUNS_MIN 256
#define TC_TUNING_RERUNS_MAX 16384
/* A time within this fraction of the least counts as a tie, which fewer threads win (and the
 * uniform level wins over the steps' own choices). */
#define TC_TUNING_TIE 0.01
/* Graphs of more steps are not tuned: the figures take 9 bytes a step and level (at most 4 MiB
 * here), outside the session's memory budget. */
#define TC_TUNING_MAX_STEPS 65536
/* Levels: thread counts n, n/2, ... 1 for n up to TC_PARALLEL_MAX_THREADS (64). */
#define TC_TUNING_MAX_LEVELS 7

typedef enum tc_tuning_phase {
    TC_TUNING_WARMUP,
    TC_TUNING_EXPLORING,
    TC_TUNING_CHECKING,
    TC_TUNING_DONE
} tc_tuning_phase;

typedef struct tc_thread_tuning {
    int n_threads; /* the session's count */
    int n_levels;  /* thread counts n >> l for l in [0, n_levels), the last one 1 */
    size_t n_steps;
    tc_tuning_phase phase;
    int run;          /* runs in this phase so far */
    int level;        /* this run's level while exploring */
    bool run_choices; /* while checking: this run runs the choices (else the uniform level) */
    uint64_t shapes;  /* the inputs' shapes the figures are for (tc_tuning_shapes_add) */
    int64_t *step_ns; /* n_steps x n_levels: least time of each step at each level */
    uint8_t *choice;  /* n_steps: the level each step chose (checking), then runs at (done) */
    int64_t run_ns[TC_TUNING_MAX_LEVELS]; /* least whole-run time at each level */
    int uniform;                          /* the quickest uniform level (checking, done) */
    int64_t choices_ns, uniform_ns;       /* least whole-run times while checking */
    bool kept_choices;                    /* done: the steps' own choices won the check */
    int64_t settled_ns;                   /* done: the check's least time for what it kept */
    int64_t window_ns;                    /* done: the least run of the current window */
    int window_runs;
    int64_t warm_ns;  /* warm-up: its runs' time so far */
    int rerun_after;  /* done: runs until it explores again anyway */
    uint64_t decided; /* a key of the last decision (0: none yet) */
} tc_thread_tuning;

/* Bookkeeping for a graph of n_steps steps on a session of n_threads threads; NULL when out of
 * memory, when there is nothing to choose (n_threads < 2) or n_steps is over
 * TC_TUNING_MAX_STEPS. */
tc_thread_tuning *tc_tuning_create(size_t n_steps, int n_threads);
void tc_tuning_free(tc_thread_tuning *tuning);

/* A key for the input shapes: TC_TUNING_NO_SHAPES with each input's rank and dims added in
 * order. */
#define TC_TUNING_NO_SHAPES 14695981039346656037u
uint64_t tc_tuning_shapes_add(uint64_t key, int rank, const int64_t *dims);

/* Starts a run with inputs of `shapes`: other shapes than the figures are for start the tuning
 * over. True when this run's steps are to be timed (tc_tuning_step_time). Every run that began
 * must end with tc_tuning_run_end, given its time. */
bool tc_tuning_run_begin(tc_thread_tuning *tuning, uint64_t shapes);
/* The most threads step `step` may use in this run, at most the session's count. */
int tc_tuning_step_threads(const tc_thread_tuning *tuning, size_t step);
/* Step `step` of a timed run took `ns`. */
void tc_tuning_step_time(tc_thread_tuning *tuning, size_t step, int64_t ns);
/* The run ends: all its steps done in `ns` (ok), or it failed (its time is not kept). */
void tc_tuning_run_end(tc_thread_tuning *tuning, bool ok, int64_t ns);

#endif
