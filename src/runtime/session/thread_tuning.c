#include "runtime/session/thread_tuning.h"

#include "runtime/compute/compute.h"

#include <stdlib.h>

/* Thread counts above this are all the same to the kernels (tc_parallel_workers). */
static int usable_threads(int n_threads) {
    return n_threads < TC_PARALLEL_MAX_THREADS ? n_threads : TC_PARALLEL_MAX_THREADS;
}

static int levels_for(int n_threads) {
    int levels = 1;
    for (int n = usable_threads(n_threads); n > 1 && levels < TC_TUNING_MAX_LEVELS; n >>= 1)
        levels++;
    return levels;
}

/* The figures cleared; `warm`: the warm-up is skipped (the session has run these shapes). */
static void start_over(tc_thread_tuning *t, uint64_t shapes, bool warm) {
    if (!warm) { /* new shapes: nothing decided for them yet */
        t->decided = 0;
        t->rerun_after = TC_TUNING_RERUNS_MIN;
    }
    t->shapes = shapes;
    t->phase = warm ? TC_TUNING_EXPLORING : TC_TUNING_WARMUP;
    t->run = 0;
    t->warm_ns = 0;
    t->level = 0;
    t->run_choices = false;
    for (size_t i = 0; i < t->n_steps * (size_t)t->n_levels; i++)
        t->step_ns[i] = INT64_MAX;
    for (size_t i = 0; i < t->n_steps; i++)
        t->choice[i] = 0;
    for (int l = 0; l < TC_TUNING_MAX_LEVELS; l++)
        t->run_ns[l] = INT64_MAX;
    t->uniform = 0;
    t->choices_ns = INT64_MAX;
    t->uniform_ns = INT64_MAX;
    t->kept_choices = false;
    t->settled_ns = INT64_MAX;
    t->window_ns = INT64_MAX;
    t->window_runs = 0;
}

tc_thread_tuning *tc_tuning_create(size_t n_steps, int n_threads) {
    if (n_threads < 2 || n_steps > TC_TUNING_MAX_STEPS)
        return NULL;
    tc_thread_tuning *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n_threads = n_threads;
    t->n_levels = levels_for(n_threads);
    t->n_steps = n_steps;
    size_t cells = n_steps * (size_t)t->n_levels;
    if (!(t->step_ns = malloc((cells ? cells : 1) * sizeof *t->step_ns)) ||
        !(t->choice = malloc(n_steps ? n_steps : 1))) {
        tc_tuning_free(t);
        return NULL;
    }
    start_over(t, TC_TUNING_NO_SHAPES, false);
    return t;
}

void tc_tuning_free(tc_thread_tuning *t) {
    if (!t)
        return;
    free(t->step_ns);
    free(t->choice);
    free(t);
}

/* One step of FNV-1a, a whole value at a time: the shapes' key and the decision's. */
static uint64_t fnv_add(uint64_t key, uint64_t value) {
    return (key ^ value) * 1099511628211u;
}

uint64_t tc_tuning_shapes_add(uint64_t key, int rank, const int64_t *dims) {
    key = fnv_add(key, (uint32_t)rank);
    for (int d = 0; d < rank; d++)
        key = fnv_add(key, (uint64_t)dims[d]);
    return key;
}

bool tc_tuning_run_begin(tc_thread_tuning *t, uint64_t shapes) {
    if (shapes != t->shapes)
        start_over(t, shapes, false);
    if (t->phase == TC_TUNING_EXPLORING)
        t->level = t->run / TC_TUNING_BLOCK % t->n_levels;
    if (t->phase == TC_TUNING_CHECKING)
        t->run_choices = t->run / TC_TUNING_BLOCK % 2 == 0;
    return t->phase == TC_TUNING_EXPLORING || t->phase == TC_TUNING_CHECKING;
}

static int level_of(const tc_thread_tuning *t, size_t step) {
    switch (t->phase) {
    case TC_TUNING_EXPLORING:
        return t->level;
    case TC_TUNING_CHECKING:
        return t->run_choices ? t->choice[step] : t->uniform;
    case TC_TUNING_DONE:
        return t->choice[step];
    default:
        return 0;
    }
}

int tc_tuning_step_threads(const tc_thread_tuning *t, size_t step) {
    int level = step < t->n_steps ? level_of(t, step) : 0;
    if (level == 0)
        return t->n_threads;
    int threads = usable_threads(t->n_threads) >> level;
    return threads > 1 ? threads : 1;
}

void tc_tuning_step_time(tc_thread_tuning *t, size_t step, int64_t ns) {
    if (t->phase != TC_TUNING_EXPLORING || step >= t->n_steps) /* every step at t->level */
        return;
    int64_t *cell = &t->step_ns[step * (size_t)t->n_levels + (size_t)t->level];
    if (ns < *cell)
        *cell = ns;
}

/* The level with the least of `n` times, ties within TC_TUNING_TIE to the higher level (fewer
 * threads), among level 0 and the levels that beat level 0 by TC_TUNING_GAIN. */
static int quickest_level(const int64_t *ns, int n) {
    double base = (double)ns[0];
    double bar = base - (base * TC_TUNING_GAIN > TC_TUNING_GAIN_NS ? base * TC_TUNING_GAIN
                                                                   : TC_TUNING_GAIN_NS);
    int64_t least = ns[0];
    for (int l = 1; l < n; l++) {
        if ((double)ns[l] <= bar && ns[l] < least)
            least = ns[l];
    }
    if (least == ns[0])
        return 0;
    int best = 0;
    for (int l = 1; l < n; l++) {
        if ((double)ns[l] <= bar && (double)ns[l] <= (double)least * (1.0 + TC_TUNING_TIE))
            best = l;
    }
    return best;
}

static void finish_checking(tc_thread_tuning *t);

static void start_checking(tc_thread_tuning *t) {
    for (size_t i = 0; i < t->n_steps; i++)
        t->choice[i] = (uint8_t)quickest_level(&t->step_ns[i * (size_t)t->n_levels], t->n_levels);
    t->uniform = quickest_level(t->run_ns, t->n_levels);
    t->phase = TC_TUNING_CHECKING;
    t->run = 0;
    bool differ = false;
    for (size_t i = 0; i < t->n_steps; i++)
        differ = differ || t->choice[i] != t->uniform;
    if (!differ) /* nothing to check: the choices are the uniform level */
        finish_checking(t);
}

/* The choices stay if they ran quicker than the uniform level by TC_TUNING_TIE (a uniform
 * level is the simpler answer, and noise can make either look quicker), else every step takes
 * that level. */
static void finish_checking(tc_thread_tuning *t) {
    t->kept_choices = (double)t->choices_ns < (double)t->uniform_ns * (1.0 - TC_TUNING_TIE);
    t->settled_ns = t->kept_choices ? t->choices_ns : t->uniform_ns;
    if (t->settled_ns == INT64_MAX) /* not checked: the choices were the uniform level */
        t->settled_ns = t->run_ns[t->uniform];
    t->run = 0;
    uint64_t decided = TC_TUNING_NO_SHAPES; /* a key of the levels, as of the shapes */
    for (size_t i = 0; i < t->n_steps; i++) {
        if (!t->kept_choices)
            t->choice[i] = (uint8_t)t->uniform;
        decided = fnv_add(decided, t->choice[i]);
    }
    /* the same decision again: the machine is steady, look less often */
    bool same = decided == t->decided;
    t->rerun_after = same && t->rerun_after < TC_TUNING_RERUNS_MAX / 2 ? 2 * t->rerun_after
                     : same                                            ? TC_TUNING_RERUNS_MAX
                                                                       : TC_TUNING_RERUNS_MIN;
    t->decided = decided;
    t->phase = TC_TUNING_DONE;
}

/* Done: explores again when the machine got slower for what was chosen, or after rerun_after
 * runs (it may have got quicker for what was not). */
static void watch(tc_thread_tuning *t, bool ok, int64_t ns) {
    if (ok && ns < t->window_ns)
        t->window_ns = ns;
    bool drifted = false;
    if (++t->window_runs == TC_TUNING_WINDOW) {
        drifted = t->settled_ns != INT64_MAX &&
                  (double)t->window_ns > (double)t->settled_ns * (1.0 + TC_TUNING_DRIFT);
        t->window_runs = 0;
        t->window_ns = INT64_MAX;
    }
    if (drifted || ++t->run >= t->rerun_after)
        start_over(t, t->shapes, true);
}

static void keep_least(int64_t *least, bool ok, int64_t ns) {
    if (ok && ns < *least)
        *least = ns;
}

void tc_tuning_run_end(tc_thread_tuning *t, bool ok, int64_t ns) {
    switch (t->phase) {
    case TC_TUNING_WARMUP:
        t->warm_ns += ns;
        if (++t->run < TC_TUNING_WARMUP_RUNS || t->warm_ns < TC_TUNING_WARMUP_NS)
            return;
        t->phase = TC_TUNING_EXPLORING;
        t->run = 0;
        return;
    case TC_TUNING_EXPLORING:
        keep_least(&t->run_ns[t->level], ok, ns);
        if (++t->run == TC_TUNING_BLOCK * TC_TUNING_SAMPLES * t->n_levels)
            start_checking(t);
        return;
    case TC_TUNING_CHECKING:
        keep_least(t->run_choices ? &t->choices_ns : &t->uniform_ns, ok, ns);
        if (++t->run == 2 * TC_TUNING_BLOCK * TC_TUNING_SAMPLES)
            finish_checking(t);
        return;
    default:
        watch(t, ok, ns);
        return;
    }
}
