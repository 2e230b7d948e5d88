/* Public API: comparing two models on the same seeded random inputs, the logic of
 * `tconv-import --check` (same seeds: run r uses seed + r, input i of it (seed + r) * 1000 + i). */
#include "api/api_internal.h"
#include "ir/vec.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/strbuf.h"
#include "runtime/kernels/kernels.h"

#define MAX_RUNS 1000000

typedef struct output_result {
    char *name; /* malloc'd */
    double max_abs, max_rel;
    bool failed;
    char *failure; /* malloc'd first failure; NULL while it matches */
} output_result;

/* The local proof of one rewrite (tconv_comparison_run_rewrites). */
typedef struct rewrite_result {
    char *node;    /* malloc'd */
    char *sizes;   /* malloc'd: the input shapes tried, "x[1,8,5,7]; x[2,8,6,8]" */
    char *failure; /* malloc'd; NULL when proven */
    size_t runs;
    double max_abs, max_rel;
    bool proven;
    const char *shapes; /* where the sizes came from: "inferred", "given", "run", "guessed" */
} rewrite_result;

/* The values a run of the original model on the comparison's first seeded inputs gave to the
 * inputs of the rewritten nodes (where shape inference left a dim open): the local proof runs at
 * their shapes, and on them. */
typedef struct run_capture {
    char **names; /* malloc'd */
    tc_rt_tensor *tensors;
    size_t n, cap_names, cap_tensors;
} run_capture;

struct tconv_comparison {
    size_t runs;
    uint64_t seed;
    double rtol, atol;
    tc_session_options session; /* limits of the runs */
    tc_api_dims dims;
    output_result *results;
    size_t n_results;
    rewrite_result *rewrites;
    size_t n_rewrites;
    tc_error last_error;
    bool both_refused; /* the last run: both models refused the inputs (TCONV_ERR_INVALID) */
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
    (*out)->session.unfused = true; /* a proof runs the graphs as written */
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

static void free_rewrites(tconv_comparison *c) {
    for (size_t i = 0; i < c->n_rewrites; i++) {
        free(c->rewrites[i].node);
        free(c->rewrites[i].sizes);
        free(c->rewrites[i].failure);
    }
    free(c->rewrites);
    c->rewrites = NULL;
    c->n_rewrites = 0;
}

void tconv_comparison_free(tconv_comparison *comparison) {
    if (!comparison)
        return;
    free_results(comparison);
    free_rewrites(comparison);
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
    tconv_convention convention = comparison->session.convention;
    tc_api_session_options(limits, &comparison->session);
    comparison->session.unfused = true;
    comparison->session.convention = convention;
    return TCONV_OK;
}

tconv_status tconv_comparison_set_convention(tconv_comparison *comparison,
                                             tconv_convention convention) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error_clear(&comparison->last_error);
    if ((unsigned)convention > (unsigned)TCONV_CONVENTION_ORT_LEGACY)
        return tc_error_set(&comparison->last_error, TCONV_ERR_USAGE, "unknown convention %d",
                            (int)convention);
    comparison->session.convention = convention;
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
    tconv_status st = tc_api_session_create(reference, &c->session, &run->reference, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "reference model: ");
    if ((st = tc_api_session_create(candidate, &c->session, &run->candidate, err)) != TCONV_OK)
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

/* A float16/bfloat16 output is rounded after every op, and a rewrite changes where: rounding the
 * ConvTranspose's output before a separate bias Add costs half a unit of that intermediate, which
 * cancellation can leave in a small result. So its tolerances are at least two units of the type
 * (2^-10 relative for float16, 2^-7 for bfloat16), relative and at the output's largest
 * magnitude. */
static void half_tolerance(const tc_rt_tensor *want, double *rtol, double *atol) {
    double unit = want->dtype == TCONV_DTYPE_FLOAT16    ? 0x1p-10
                  : want->dtype == TCONV_DTYPE_BFLOAT16 ? 0x1p-7
                                                        : 0.0;
    if (unit == 0.0)
        return;
    double scale = 0.0;
    for (int64_t i = 0; i < want->n_elements; i++) {
        double v = fabs(tc_rt_get_f64(want, i));
        if (isfinite(v) && v > scale)
            scale = v;
    }
    *rtol = fmax(*rtol, 2 * unit);
    *atol = fmax(*atol, 2 * unit * scale);
}

/* Records one output's comparison of one run. */
static tconv_status record(output_result *result, const tc_rt_tensor *got, const tc_rt_tensor *want,
                           const tconv_comparison *c, uint64_t seed, tc_error *err) {
    double abs_err = 0, rel_err = 0, rtol = c->rtol, atol = c->atol;
    tc_error cmp;
    tc_error_clear(&cmp);
    half_tolerance(want, &rtol, &atol);
    if (tc_rt_tensor_compare(got, want, rtol, atol, &abs_err, &rel_err, &cmp) != TCONV_OK &&
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

/* The reference refused the inputs (TCONV_ERR_INVALID, err says why): the candidate must not
 * answer them with an empty tensor, as a crop of a ConvTranspose whose output size is 0 or
 * negative did (issue 27); that is a mismatch, not a run that could not happen. A candidate
 * answering otherwise (DCE dropped a dead node that fails) leaves the reference's error. */
static tconv_status candidate_must_refuse(tconv_comparison *c, compare_run *run, tc_error *err) {
    tc_error cand;
    tc_error_clear(&cand);
    tconv_status st = tc_session_run(run->candidate, run->inputs, run->n_in, run->got, &cand);
    if (st != TCONV_OK) {
        c->both_refused = st == TCONV_ERR_INVALID;
        return TCONV_ERR_INVALID; /* err keeps the reference's reason */
    }
    size_t empty = run->n_out;
    for (size_t i = 0; i < run->n_out && empty == run->n_out; i++) {
        if (run->got[i].n_elements == 0)
            empty = i;
    }
    char shape[160] = "";
    if (empty < run->n_out)
        tc_shape_format(run->got[empty].rank, run->got[empty].dims, shape, sizeof shape);
    release_all(run->got, run->n_out);
    if (empty == run->n_out)
        return TCONV_ERR_INVALID;
    char why[TC_ERROR_MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", err->message);
    return tc_error_set(err, TCONV_ERR_MISMATCH,
                        "the candidate model returns output '%s' %s, empty, where the reference "
                        "fails (%s)",
                        c->results[empty].name, shape, why);
}

/* One seeded run of both models, every output compared; on `given` inputs (borrowed) instead of
 * random ones when not NULL. */
static tconv_status run_once(tconv_comparison *c, compare_run *run, uint64_t seed,
                             const tc_rt_tensor *given, tc_error *err) {
    /* Random inputs take the declared shapes: refused before the first is made. */
    tconv_status st = tc_session_check_inputs(run->reference, c->dims.items, c->dims.count, err);
    for (size_t i = 0; st == TCONV_OK && i < run->n_in; i++) {
        tc_rt_tensor_release(&run->inputs[i]);
        if (given) {
            run->inputs[i] = given[i];
            run->inputs[i].owns_data = false;
            continue;
        }
        st = tc_session_random_input(tc_session_input(run->reference, i), seed * 1000 + i,
                                     c->dims.items, c->dims.count, &run->inputs[i], err);
    }
    release_all(run->want, run->n_out);
    release_all(run->got, run->n_out);
    c->both_refused = false;
    if (st == TCONV_OK &&
        (st = tc_session_run(run->reference, run->inputs, run->n_in, run->want, err)) != TCONV_OK) {
        tc_error_prefix(err, st, "reference model: ");
        return st == TCONV_ERR_INVALID ? candidate_must_refuse(c, run, err) : st;
    }
    if (st == TCONV_OK) /* both within one memory limit */
        tc_session_yield_to(run->reference, run->want, run->n_out, run->candidate);
    if (st == TCONV_OK &&
        (st = tc_session_run(run->candidate, run->inputs, run->n_in, run->got, err)) != TCONV_OK)
        tc_error_prefix(err, st, "candidate model: ");
    tc_session_yield_to(run->candidate, NULL, 0, run->reference); /* for the next seed */
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

/* The comparison's seeded runs, or one run on `given` inputs (one per input of the reference). */
static tconv_status compare_models(tconv_comparison *comparison, tconv_model *reference,
                                   tconv_model *candidate, const tc_rt_tensor *given) {
    tc_error *err = &comparison->last_error;
    tc_error_clear(err);
    free_results(comparison);
    compare_run run = {0};
    tconv_status st = open_run(comparison, reference, candidate, &run, err);
    for (size_t r = 0; st == TCONV_OK && r < (given ? 1 : comparison->runs); r++)
        st = run_once(comparison, &run, comparison->seed + r, given, err);
    close_run(&run);
    if (st == TCONV_OK)
        st = first_mismatch(comparison, err);
    else if (st != TCONV_ERR_MISMATCH)
        free_results(comparison);
    return st;
}

tconv_status tconv_comparison_run(tconv_comparison *comparison, tconv_model *reference,
                                  tconv_model *candidate) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error_clear(&comparison->last_error);
    free_results(comparison);
    if (!reference || !candidate)
        return tc_error_set(&comparison->last_error, TCONV_ERR_USAGE,
                            "tconv_comparison_run: a model is NULL");
    return compare_models(comparison, reference, candidate, NULL);
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

/* ---------------------------------------------------------------- local proofs */

/* ---------------------------------------------------------------- a run of the original */

static void capture_free(run_capture *cap) {
    for (size_t i = 0; i < cap->n; i++) {
        free(cap->names[i]);
        tc_rt_tensor_release(&cap->tensors[i]);
    }
    free(cap->names);
    free(cap->tensors);
    memset(cap, 0, sizeof *cap);
}

static const tc_rt_tensor *capture_find(const run_capture *cap, const char *name) {
    for (size_t i = 0; i < cap->n; i++) {
        if (strcmp(cap->names[i], name) == 0)
            return &cap->tensors[i];
    }
    return NULL;
}

static bool capture_add_name(run_capture *cap, const char *name) {
    if (capture_find(cap, name))
        return true;
    /* two arrays of one length: each keeps its own capacity, both hold n + 1 */
    if (!TC_VEC_RESERVE(cap->names, cap->cap_names, cap->n + 1) ||
        !TC_VEC_RESERVE(cap->tensors, cap->cap_tensors, cap->n + 1))
        return false;
    if (!(cap->names[cap->n] = strdup(name)))
        return false;
    memset(&cap->tensors[cap->n++], 0, sizeof(tc_rt_tensor));
    return true;
}

/* Runs `model` (a copy of the original whose outputs end with the captured values) on the
 * comparison's first seeded inputs and keeps the captured outputs. */
static tconv_status capture_outputs(const tconv_comparison *c, tconv_model *model, run_capture *cap,
                                    tc_error *err) {
    tc_session *session = NULL;
    tconv_status st = tc_api_session_create(model, &c->session, &session, err);
    size_t n_in = st == TCONV_OK ? tc_session_input_count(session) : 0;
    size_t n_out = st == TCONV_OK ? tc_session_output_count(session) : 0;
    tc_rt_tensor *inputs = calloc(n_in + 1, sizeof *inputs);
    tc_rt_tensor *outputs = calloc(n_out + 1, sizeof *outputs);
    if (st == TCONV_OK && (!inputs || !outputs))
        st = tc_error_nomem(err, "a run of the original");
    if (st == TCONV_OK)
        st = tc_session_check_inputs(session, c->dims.items, c->dims.count, err);
    for (size_t i = 0; st == TCONV_OK && i < n_in; i++)
        st = tc_session_random_input(tc_session_input(session, i), c->seed * 1000 + i,
                                     c->dims.items, c->dims.count, &inputs[i], err);
    if (st == TCONV_OK)
        st = tc_session_run(session, inputs, n_in, outputs, err);
    for (size_t k = 0; st == TCONV_OK && k < cap->n; k++) {
        for (size_t o = n_out; o-- > 0;) {
            if (outputs[o].rank >= 0 &&
                strcmp(tc_session_output(session, o)->name, cap->names[k]) == 0) {
                cap->tensors[k] = outputs[o];
                memset(&outputs[o], 0, sizeof outputs[o]);
                break;
            }
        }
    }
    release_all(inputs, n_in);
    release_all(outputs, n_out);
    free(inputs);
    free(outputs);
    tc_session_free(session);
    return st;
}

/* The inputs of every rewritten node whose shape inference left a dim open, as a run of the
 * original on the comparison's first seeded inputs gives them (the runtime must have every op).
 * Nothing is captured when no dim is open, when the run cannot be made (an op the runtime lacks,
 * an unbound dim): those dims are then guessed, and said so. */
static void capture_run(const tconv_comparison *c, tconv_model *original, tconv_model *rewritten,
                        const tconv_report *report, run_capture *cap) {
    const char *names[64];
    for (size_t i = 0; i < report->rewrites.count; i++) {
        size_t n = tc_api_rewrite_run_inputs(original, rewritten, &report->rewrites.records[i],
                                             names, sizeof names / sizeof names[0]);
        for (size_t k = 0; k < n; k++) {
            if (!capture_add_name(cap, names[k])) {
                capture_free(cap);
                return;
            }
        }
    }
    size_t n_missing = 0;
    char *missing = NULL;
    bool runnable = cap->n &&
                    tconv_runtime_missing_ops(original, &n_missing, &missing) == TCONV_OK &&
                    n_missing == 0;
    tconv_free(missing);
    tconv_model *copy = NULL;
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = runnable ? tconv_model_clone(original, &copy) : TCONV_ERR_UNSUPPORTED;
    for (size_t k = 0; st == TCONV_OK && k < cap->n; k++) {
        tconv_value *v = tc_graph_find_value(copy->graph, cap->names[k]);
        st = v ? tc_graph_add_output(copy->graph, v, NULL, &err) : TCONV_ERR_INVALID;
    }
    if (st == TCONV_OK)
        st = capture_outputs(c, copy, cap, &err);
    tconv_model_free(copy);
    if (st != TCONV_OK)
        capture_free(cap);
}

/* ---------------------------------------------------------------- local proofs */

/* Where a dim of the small models' inputs that is not static takes its size from. */
typedef enum dim_source { DIM_GIVEN, DIM_RUN, DIM_GUESSED } dim_source;

typedef struct dim_base {
    const char *param; /* the dim's name in the small models */
    int64_t value;
    dim_source source;
} dim_base;

#define LOCAL_DEFAULT_SIZE 3
#define LOCAL_VARIANTS 3
#define LOCAL_MAX_PARAMS (TC_MAX_RANK * 8)

static int64_t bound_value(const tc_api_dims *dims, const char *name, int64_t fallback) {
    for (size_t i = 0; i < dims->count; i++) {
        if (strcmp(dims->items[i].name, name) == 0)
            return dims->items[i].value;
    }
    return fallback;
}

static const dim_base *find_base(const dim_base *bases, size_t n, const char *param) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(bases[i].param, param) == 0)
            return &bases[i];
    }
    return NULL;
}

/* The size each dim name of the small model's inputs starts from: its bound value (--dim), else
 * the size a run of the original showed, else LOCAL_DEFAULT_SIZE, a guess. */
static size_t dim_bases(const tconv_comparison *c, const tconv_model *m, const run_capture *cap,
                        dim_base *out, size_t max) {
    size_t n = 0;
    for (size_t i = 0; i < m->graph->n_inputs; i++) {
        const tconv_value *v = m->graph->inputs[i].value;
        const tc_type *t = &v->type;
        const tc_rt_tensor *seen = capture_find(cap, v->name);
        for (int a = 0; a < t->rank; a++) {
            const char *param = t->dims[a].param;
            if (t->dims[a].kind != TCONV_DIM_SYMBOLIC || find_base(out, n, param) || n == max)
                continue;
            dim_base b = {param, bound_value(&c->dims, param, -1), DIM_GIVEN};
            if (b.value < 0 && seen && seen->rank == t->rank)
                b = (dim_base){param, seen->dims[a], DIM_RUN};
            else if (b.value < 0)
                b = (dim_base){param, LOCAL_DEFAULT_SIZE, DIM_GUESSED};
            out[n++] = b;
        }
    }
    return n;
}

/* Appends "; x[1,8,5 guessed,7]" for every data input of the small model under `dims`. The names
 * come from the file: escaped (tc_escape_text), as in every message, since --check prints the line
 * (ESC, newline and 0xff reached the terminal). */
static void describe_sizes(const tconv_model *m, const tc_api_dims *dims, const dim_base *bases,
                           size_t n_bases, tc_strbuf *out) {
    for (size_t i = 0; i < m->graph->n_inputs; i++) {
        const tconv_value *v = m->graph->inputs[i].value;
        if (v->initializer)
            continue;
        char name[256];
        tc_escape_text(name, sizeof name, v->name, strlen(v->name));
        tc_strbuf_appendf(out, "%s%s[", out->len ? "; " : "", name);
        for (int a = 0; a < v->type.rank; a++) {
            const tc_dim *d = &v->type.dims[a];
            const dim_base *b =
                d->kind == TCONV_DIM_STATIC ? NULL : find_base(bases, n_bases, d->param);
            tc_strbuf_appendf(out, "%s%lld%s", a ? "," : "",
                              (long long)(d->kind == TCONV_DIM_STATIC
                                              ? d->value
                                              : bound_value(dims, d->param, 0)),
                              b && b->source == DIM_GUESSED ? " guessed" : "");
        }
        tc_strbuf_append(out, "]");
    }
}

/* One size variant: every open dim at its base value + `step`, or, with `edge`, at `step`
 * itself. */
static tconv_status bind_variant(const tconv_comparison *c, const dim_base *bases, size_t n_bases,
                                 int64_t step, bool edge, tc_api_dims *out, tc_error *err) {
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < c->dims.count; i++)
        st = tc_api_dims_bind(out, c->dims.items[i].name, c->dims.items[i].value, err);
    for (size_t i = 0; st == TCONV_OK && i < n_bases; i++)
        st = tc_api_dims_bind(out, bases[i].param, edge ? step : bases[i].value + step, err);
    return st;
}

/* The smallest sizes, every open dim at 1, then 2: where a crop or pad can eat a whole axis
 * (sizes 3-5 alone proved a rewrite that returned an empty tensor where the ConvTranspose
 * fails at 2). There both models may refuse the inputs; one refusing alone is a mismatch. */
#define LOCAL_EDGE_SIZES 2

/* The captured values of every data input of the small model, in its input order, when a run
 * gave them all at the shapes of `dims`; NULL otherwise. */
static tc_rt_tensor *given_inputs(const tconv_model *m, const run_capture *cap,
                                  const tc_api_dims *dims) {
    size_t n = 0;
    for (size_t i = 0; i < m->graph->n_inputs; i++)
        n += !m->graph->inputs[i].value->initializer;
    tc_rt_tensor *given = calloc(n + 1, sizeof *given);
    size_t k = 0;
    for (size_t i = 0; given && i < m->graph->n_inputs; i++) {
        const tconv_value *v = m->graph->inputs[i].value;
        if (v->initializer)
            continue;
        const tc_rt_tensor *seen = capture_find(cap, v->name);
        bool fits = seen && seen->rank == v->type.rank && seen->dtype == v->type.dtype;
        for (int a = 0; fits && a < v->type.rank; a++) {
            const tc_dim *d = &v->type.dims[a];
            fits = seen->dims[a] ==
                   (d->kind == TCONV_DIM_STATIC ? d->value : bound_value(dims, d->param, -1));
        }
        if (!fits) {
            free(given);
            return NULL;
        }
        given[k++] = *seen;
    }
    return given;
}

static void merge_errors(rewrite_result *r, const tconv_comparison *tmp) {
    for (size_t i = 0; i < tmp->n_results; i++) {
        r->max_abs = tmp->results[i].max_abs > r->max_abs ? tmp->results[i].max_abs : r->max_abs;
        r->max_rel = tmp->results[i].max_rel > r->max_rel ? tmp->results[i].max_rel : r->max_rel;
    }
}

/* Runs the two small models under each size variant with the comparison's settings, and once on
 * the values a run of the original gave the node, where it gave them. Dims given by --dim or
 * guessed are tried at three sizes (the rewrite must hold at every size); a model whose open
 * dims all come from the run is proven at that shape only, its real one. Then, where any dim is
 * open, the edge sizes 1 and 2. */
static tconv_status prove_sizes(const tconv_comparison *c, tconv_model *before, tconv_model *after,
                                const run_capture *cap, rewrite_result *r, tc_strbuf *sizes,
                                tc_error *err) {
    dim_base bases[LOCAL_MAX_PARAMS];
    size_t n_bases = dim_bases(c, before, cap, bases, LOCAL_MAX_PARAMS);
    bool from_run = false, given = false, guessed = false;
    for (size_t i = 0; i < n_bases; i++) {
        from_run |= bases[i].source == DIM_RUN;
        given |= bases[i].source == DIM_GIVEN;
        guessed |= bases[i].source == DIM_GUESSED;
    }
    r->shapes = guessed ? "guessed" : from_run ? "run" : given ? "given" : "inferred";
    size_t sized = given || guessed ? LOCAL_VARIANTS : 1;
    size_t variants = sized + (n_bases ? LOCAL_EDGE_SIZES : 0);
    tconv_status st = TCONV_OK;
    for (size_t k = 0; st == TCONV_OK && k < variants; k++) {
        bool edge = k >= sized;
        tconv_comparison tmp = *c;
        tmp.results = NULL;
        tmp.n_results = 0;
        tmp.rewrites = NULL;
        tmp.n_rewrites = 0;
        memset(&tmp.dims, 0, sizeof tmp.dims);
        st = bind_variant(c, bases, n_bases, edge ? (int64_t)(k - sized + 1) : (int64_t)k, edge,
                          &tmp.dims, err);
        if (st == TCONV_OK)
            describe_sizes(before, &tmp.dims, bases, edge ? 0 : n_bases, sizes);
        if (st == TCONV_OK)
            st = compare_models(&tmp, before, after, NULL);
        if (edge && st == TCONV_ERR_INVALID && tmp.both_refused) {
            tc_strbuf_append(sizes, " (both fail)");
            st = TCONV_OK;
            free_results(&tmp);
            tc_api_dims_free(&tmp.dims);
            continue;
        }
        merge_errors(r, &tmp);
        r->runs += st == TCONV_OK || st == TCONV_ERR_MISMATCH ? c->runs : 0;
        tc_rt_tensor *values =
            st == TCONV_OK && k == 0 ? given_inputs(before, cap, &tmp.dims) : NULL;
        if (values) { /* the node's own inputs, as the model computes them */
            free_results(&tmp);
            st = compare_models(&tmp, before, after, values);
            merge_errors(r, &tmp);
            r->runs += st == TCONV_OK || st == TCONV_ERR_MISMATCH ? 1 : 0;
            tc_strbuf_append(sizes, " and the values a run of the model gives");
            free(values);
        }
        if (st != TCONV_OK && tmp.last_error.status != TCONV_OK)
            *err = tmp.last_error;
        free_results(&tmp);
        tc_api_dims_free(&tmp.dims);
    }
    return st;
}

static tconv_status prove_one(const tconv_comparison *c, tconv_model *original,
                              tconv_model *rewritten, const tc_rewrite_record *rec,
                              const run_capture *cap, rewrite_result *r) {
    tc_error err;
    tc_error_clear(&err);
    tconv_model *before = NULL, *after = NULL;
    tc_strbuf sizes;
    tc_strbuf_init(&sizes);
    r->shapes = "inferred";
    if (!(r->node = strdup(rec->node)))
        return TCONV_ERR_NOMEM;
    tconv_status st = tc_api_extract_rewrite(original, rewritten, rec, &before, &after, &err);
    if (st == TCONV_OK)
        st = prove_sizes(c, before, after, cap, r, &sizes, &err);
    r->proven = st == TCONV_OK;
    r->sizes = tc_strbuf_take(&sizes);
    if (st != TCONV_OK &&
        !(r->failure = strdup(err.message[0] ? err.message : tconv_status_name(st))))
        st = TCONV_ERR_NOMEM;
    tconv_model_free(before);
    tconv_model_free(after);
    return st;
}

tconv_status tconv_comparison_run_rewrites(tconv_comparison *comparison, tconv_model *original,
                                           tconv_model *rewritten, const tconv_report *report) {
    if (!comparison)
        return TCONV_ERR_USAGE;
    tc_error *err = &comparison->last_error;
    tc_error_clear(err);
    free_rewrites(comparison);
    if (!original || !rewritten || !report)
        return tc_error_set(err, TCONV_ERR_USAGE,
                            "tconv_comparison_run_rewrites: a model or the report is NULL");
    size_t n = report->rewrites.count;
    comparison->rewrites = calloc(n + 1, sizeof *comparison->rewrites);
    if (!comparison->rewrites)
        return tc_error_nomem(err, "proof results");
    comparison->n_rewrites = n;
    run_capture cap = {0};
    capture_run(comparison, original, rewritten, report, &cap);
    tconv_status worst = TCONV_OK;
    for (size_t i = 0; i < n; i++) {
        rewrite_result *r = &comparison->rewrites[i];
        tconv_status st =
            prove_one(comparison, original, rewritten, &report->rewrites.records[i], &cap, r);
        if (st == TCONV_ERR_NOMEM) {
            capture_free(&cap);
            return tc_error_nomem(err, "a local proof");
        }
        if (st != TCONV_OK && (worst == TCONV_OK || st == TCONV_ERR_MISMATCH) &&
            worst != TCONV_ERR_MISMATCH) {
            worst = st;
            tc_error_set(err, st, "node '%s': %s", r->node, r->failure);
        }
    }
    capture_free(&cap);
    return worst;
}

static const rewrite_result *rewrite_at(const tconv_comparison *c, size_t index) {
    return c && index < c->n_rewrites ? &c->rewrites[index] : NULL;
}

size_t tconv_comparison_rewrite_count(const tconv_comparison *comparison) {
    return comparison ? comparison->n_rewrites : 0;
}

const char *tconv_comparison_rewrite_node(const tconv_comparison *comparison, size_t index) {
    const rewrite_result *r = rewrite_at(comparison, index);
    return r ? r->node : NULL;
}

const char *tconv_comparison_rewrite_sizes(const tconv_comparison *comparison, size_t index) {
    const rewrite_result *r = rewrite_at(comparison, index);
    return r ? r->sizes : NULL;
}

size_t tconv_comparison_rewrite_runs(const tconv_comparison *comparison, size_t index) {
    const rewrite_result *r = rewrite_at(comparison, index);
    return r ? r->runs : 0;
}

double tconv_comparison_rewrite_max_abs_error(const tconv_comparison *comparison, size_t index) {
    const rewrite_result *r = rewrite_at(comparison, index);
    return r ? r->max_abs : 0.0;
}

double tconv_comparison_rewrite_max_rel_error(const tconv_comparison *comparison, size_t index) {
    const rewrite_result *r = rewrite_at(comparison, index);
    return r ? r->max_rel : 0.0;
}

bool tconv_comparison_rewrite_proven(const tconv_comparison *comparison, size_t index) {
    const rewrite_result *r = rewrite_at(comparison, index);
    return r && r->proven;
}

const char *tconv_comparison_rewrite_shapes(const tconv_comparison *comparison, size_t index) {
    const rewrite_result *r = rewrite_at(comparison, index);
    return r ? r->shapes : NULL;
}

const char *tconv_comparison_rewrite_failure(const tconv_comparison *comparison, size_t index) {
    const rewrite_result *r = rewrite_at(comparison, index);
    return r ? r->failure : NULL;
}

/* ---------------------------------------------------------------- the proof as JSON */

static void json_string(tc_strbuf *sb, const char *s) {
    if (s)
        tc_strbuf_append_json_string(sb, s, strlen(s));
    else
        tc_strbuf_append(sb, "null");
}

/* JSON has no NaN or infinity: an error that is not finite is written as null. */
static void json_number(tc_strbuf *sb, double v) {
    if (v == v && v - v == 0)
        tc_strbuf_appendf(sb, "%.17g", v);
    else
        tc_strbuf_append(sb, "null");
}

static void rewrite_json(tc_strbuf *sb, const rewrite_result *r) {
    tc_strbuf_append(sb, "{\"node\": ");
    json_string(sb, r->node);
    tc_strbuf_appendf(sb, ", \"proven\": %s, \"shapes\": ", r->proven ? "true" : "false");
    json_string(sb, r->shapes);
    tc_strbuf_append(sb, ", \"sizes\": ");
    json_string(sb, r->sizes);
    tc_strbuf_appendf(sb, ", \"runs\": %zu, \"max_abs_err\": ", r->runs);
    json_number(sb, r->max_abs);
    tc_strbuf_append(sb, ", \"max_rel_err\": ");
    json_number(sb, r->max_rel);
    tc_strbuf_append(sb, ", \"failure\": ");
    json_string(sb, r->failure);
    tc_strbuf_append(sb, "}");
}

static void output_json(tc_strbuf *sb, const output_result *o) {
    tc_strbuf_append(sb, "{\"name\": ");
    json_string(sb, o->name);
    tc_strbuf_append(sb, ", \"max_abs_err\": ");
    json_number(sb, o->max_abs);
    tc_strbuf_append(sb, ", \"max_rel_err\": ");
    json_number(sb, o->max_rel);
    tc_strbuf_appendf(sb, ", \"ok\": %s}", o->failed ? "false" : "true");
}

tconv_status tconv_comparison_proof_json(const tconv_comparison *comparison,
                                         const char *whole_status, const char *whole_reason,
                                         char **json) {
    if (json)
        *json = NULL;
    if (!comparison || !whole_status || !json)
        return TCONV_ERR_USAGE;
    tc_strbuf sb;
    tc_strbuf_init(&sb);
    tc_strbuf_append(&sb, "{\"rewrites\": [");
    for (size_t i = 0; i < comparison->n_rewrites; i++) {
        tc_strbuf_append(&sb, i ? ",\n    " : "\n    ");
        rewrite_json(&sb, &comparison->rewrites[i]);
    }
    tc_strbuf_append(&sb, "],\n  \"whole_model\": {\"status\": ");
    json_string(&sb, whole_status);
    tc_strbuf_append(&sb, ", \"reason\": ");
    json_string(&sb, whole_reason);
    tc_strbuf_append(&sb, ", \"outputs\": [");
    for (size_t i = 0; i < comparison->n_results; i++) {
        tc_strbuf_append(&sb, i ? ", " : "");
        output_json(&sb, &comparison->results[i]);
    }
    tc_strbuf_append(&sb, "]}}");
    *json = tc_strbuf_take(&sb);
    return *json ? TCONV_OK : TCONV_ERR_NOMEM;
}
