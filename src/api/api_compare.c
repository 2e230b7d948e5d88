/* Public API: comparing two models on the same seeded random inputs, the logic of
 * `tconv-import --check` (same seeds: run r uses seed + r, input i of it (seed + r) * 1000 + i). */
#include "api/api_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 1000000

typedef struct output_result {
    char *name; /* malloc'd */
    double max_abs, max_rel;
    bool failed;
    char *failure; /* malloc'd first failure; NULL while it matches */
} output_result;

struct tconv_comparison {
    size_t runs;
    uint64_t seed;
    double rtol, atol;
    tc_session_options session; /* limits of the runs */
    tc_api_dims dims;
    output_result *results;
    size_t n_results;
    tc_error last_error;
};

/* The two sessions and the buffers of one run. */
typedef struct compare_run {
    tc_session *reference, *candidate;
    size_t n_in, n_out;
    tc_rt_tensor *inputs, *want, *got;
} compare_run;

/* ---------------------------------------------------------------- configuration */

tconv_status tconv_comparison_new(tconv_comparison **out) {
    if (!out)
        return TCONV_ERR_USAGE;
    *out = calloc(1, sizeof **out);
    if (!*out)
        return TCONV_ERR_NOMEM;
    (*out)->runs = 1;
    (*out)->seed = 1;
    (*out)->rtol = 1e-4;
    (*out)->atol = 1e-5;
    tc_api_session_options(NULL, &(*out)->session);
    return TCONV_OK;
}

static void free_results(tconv_comparison *c) {
    for (size_t i = 0; i < c->n_results; i++) {
        free(c->results[i].name);
        free(c->results[i].failure);
    }
    free(c->results);
    c->results = NULL;
    c->n_results = 0;
}

void tconv_comparison_free(tconv_comparison *comparison) {
    if (!comparison)
        return;
    free_results(comparison);
    tc_api_dims_free(&comparison->dims);
    free(comparison);
}

const char *tconv_comparison_last_error(const tconv_comparison *comparison) {
    return comparison ? comparison->last_error.message : "";
}

tconv_status tconv_comparison_set_runs(tconv_comparison *comparison, size_t runs) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error_clear(&comparison->last_error);
    if (runs < 1 || runs > MAX_RUNS)
        return tc_error_set(&comparison->last_error, TCONV_ERR_USAGE,
                            "runs must be 1 .. %d, got %zu", MAX_RUNS, runs);
    comparison->runs = runs;
    return TCONV_OK;
}

tconv_status tconv_comparison_set_seed(tconv_comparison *comparison, uint64_t seed) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error_clear(&comparison->last_error);
    comparison->seed = seed;
    return TCONV_OK;
}

tconv_status tconv_comparison_set_tolerance(tconv_comparison *comparison, double rtol,
                                            double atol) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error_clear(&comparison->last_error);
    if (!(rtol >= 0 && atol >= 0))
        return tc_error_set(&comparison->last_error, TCONV_ERR_USAGE,
                            "tolerances must be >= 0 (rtol %g, atol %g)", rtol, atol);
    comparison->rtol = rtol;
    comparison->atol = atol;
    return TCONV_OK;
}

tconv_status tconv_comparison_set_limits(tconv_comparison *comparison, const tconv_limits *limits) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error_clear(&comparison->last_error);
    tc_api_session_options(limits, &comparison->session);
    return TCONV_OK;
}

tconv_status tconv_comparison_bind_dim(tconv_comparison *comparison, const char *name,
                                       int64_t value) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error_clear(&comparison->last_error);
    return tc_api_dims_bind(&comparison->dims, name, value, &comparison->last_error);
}

/* ---------------------------------------------------------------- running */

static void release_all(tc_rt_tensor *tensors, size_t n) {
    for (size_t i = 0; tensors && i < n; i++)
        tc_rt_tensor_release(&tensors[i]);
}

static void close_run(compare_run *run) {
    release_all(run->inputs, run->n_in);
    release_all(run->want, run->n_out);
    release_all(run->got, run->n_out);
    free(run->inputs);
    free(run->want);
    free(run->got);
    tc_session_free(run->reference);
    tc_session_free(run->candidate);
}

/* Sessions for both models with matching interfaces, buffers, and one result per output. */
static tconv_status open_run(tconv_comparison *c, tconv_model *reference, tconv_model *candidate,
                             compare_run *run, tc_error *err) {
    tconv_status st = tc_session_create(reference, &c->session, &run->reference, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "reference model: ");
    if ((st = tc_session_create(candidate, &c->session, &run->candidate, err)) != TCONV_OK)
        return tc_error_prefix(err, st, "candidate model: ");
    run->n_in = tc_session_input_count(run->reference);
    run->n_out = tc_session_output_count(run->reference);
    if (tc_session_input_count(run->candidate) != run->n_in ||
        tc_session_output_count(run->candidate) != run->n_out)
        return tc_error_set(err, TCONV_ERR_MISMATCH,
                            "the models differ: the reference has %zu inputs and %zu outputs, "
                            "the candidate %zu and %zu",
                            run->n_in, run->n_out, tc_session_input_count(run->candidate),
                            tc_session_output_count(run->candidate));
    run->inputs = calloc(run->n_in + 1, sizeof *run->inputs);
    run->want = calloc(run->n_out + 1, sizeof *run->want);
    run->got = calloc(run->n_out + 1, sizeof *run->got);
    c->results = calloc(run->n_out + 1, sizeof *c->results);
    if (!run->inputs || !run->want || !run->got || !c->results)
        return tc_error_nomem(err, "comparison buffers");
    c->n_results = run->n_out;
    for (size_t i = 0; i < run->n_out; i++) {
        c->results[i].name = strdup(tc_session_output(run->reference, i)->name);
        if (!c->results[i].name)
            return tc_error_nomem(err, "an output name");
    }
    return TCONV_OK;
}

/* Records one output's comparison of one run. */
static tconv_status record(output_result *result, const tc_rt_tensor *got, const tc_rt_tensor *want,
                           const tconv_comparison *c, uint64_t seed, tc_error *err) {
    double abs_err = 0, rel_err = 0;
    tc_error cmp;
    tc_error_clear(&cmp);
    if (tc_rt_tensor_compare(got, want, c->rtol, c->atol, &abs_err, &rel_err, &cmp) != TCONV_OK &&
        !result->failed) {
        result->failed = true;
        size_t size = sizeof cmp.message + 64;
        result->failure = malloc(size);
        if (!result->failure)
            return tc_error_nomem(err, "a comparison message");
        snprintf(result->failure, size, "seed %" PRIu64 ": output '%s': %s", seed, result->name,
                 cmp.message);
    }
    if (abs_err > result->max_abs || abs_err != abs_err)
        result->max_abs = abs_err;
    if (rel_err > result->max_rel || rel_err != rel_err)
        result->max_rel = rel_err;
    return TCONV_OK;
}

/* One seeded run of both models, every output compared. */
static tconv_status run_once(tconv_comparison *c, compare_run *run, uint64_t seed, tc_error *err) {
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < run->n_in; i++) {
        tc_rt_tensor_release(&run->inputs[i]);
        st = tc_session_random_input(tc_session_input(run->reference, i), seed * 1000 + i,
                                     c->dims.items, c->dims.count, &run->inputs[i], err);
    }
    release_all(run->want, run->n_out);
    release_all(run->got, run->n_out);
    if (st == TCONV_OK &&
        (st = tc_session_run(run->reference, run->inputs, run->n_in, run->want, err)) != TCONV_OK)
        tc_error_prefix(err, st, "reference model: ");
    if (st == TCONV_OK &&
        (st = tc_session_run(run->candidate, run->inputs, run->n_in, run->got, err)) != TCONV_OK)
        tc_error_prefix(err, st, "candidate model: ");
    for (size_t i = 0; st == TCONV_OK && i < run->n_out; i++)
        st = record(&c->results[i], &run->got[i], &run->want[i], c, seed, err);
    return st;
}

static tconv_status first_mismatch(const tconv_comparison *c, tc_error *err) {
    for (size_t i = 0; i < c->n_results; i++) {
        if (c->results[i].failed)
            return tc_error_set(err, TCONV_ERR_MISMATCH, "%s", c->results[i].failure);
    }
    return TCONV_OK;
}

tconv_status tconv_comparison_run(tconv_comparison *comparison, tconv_model *reference,
                                  tconv_model *candidate) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error *err = &comparison->last_error;
    tc_error_clear(err);
    free_results(comparison);
    if (!reference || !candidate)
        return tc_error_set(err, TCONV_ERR_USAGE, "tconv_comparison_run: a model is NULL");
    compare_run run = {0};
    tconv_status st = open_run(comparison, reference, candidate, &run, err);
    for (size_t r = 0; st == TCONV_OK && r < comparison->runs; r++)
        st = run_once(comparison, &run, comparison->seed + r, err);
    close_run(&run);
    if (st == TCONV_OK)
        st = first_mismatch(comparison, err);
    else if (st != TCONV_ERR_MISMATCH)
        free_results(comparison);
    return st;
}

/* ---------------------------------------------------------------- results */

static const output_result *result_at(const tconv_comparison *c, size_t index) {
    return c && index < c->n_results ? &c->results[index] : NULL;
}

size_t tconv_comparison_output_count(const tconv_comparison *comparison) {
    return comparison ? comparison->n_results : 0;
}

const char *tconv_comparison_output_name(const tconv_comparison *comparison, size_t index) {
    const output_result *r = result_at(comparison, index);
    return r ? r->name : NULL;
}

double tconv_comparison_max_abs_error(const tconv_comparison *comparison, size_t index) {
    const output_result *r = result_at(comparison, index);
    return r ? r->max_abs : 0.0;
}

double tconv_comparison_max_rel_error(const tconv_comparison *comparison, size_t index) {
    const output_result *r = result_at(comparison, index);
    return r ? r->max_rel : 0.0;
}

bool tconv_comparison_output_matches(const tconv_comparison *comparison, size_t index) {
    const output_result *r = result_at(comparison, index);
    return r && !r->failed;
}

const char *tconv_comparison_output_failure(const tconv_comparison *comparison, size_t index) {
    const output_result *r = result_at(comparison, index);
    return r ? r->failure : NULL;
}
