/* Fuzz target (d): ModelProto bytes -> the executor's planning-time rewrites and the per-node
 * proof, which fuzz_legalize_check never reaches (its comparison runs both models unfused):
 *   1. the model as loaded, run twice on the same seeded inputs under small memory and work
 *      limits: as planned (constant folding, crop and activation fusion, BatchNormalization
 *      folding) and unfused (every node as written). Properties: both answer, with the same
 *      dtypes and shapes and values within float rounding; or the planned run fails where the
 *      unfused one does (or only for a limit: folded constants are held); never the planned
 *      run answering where the model as written is refused, nor the other way round but for a
 *      limit. Every failure has a message.
 *   2. shape-infer, legalize-conv-transpose, dce, then each rewrite proven alone
 *      (tconv_comparison_run_rewrites, as --check does): never a mismatch. */
#include "fuzz_common.h"

#include <math.h>

#include "importer/importer.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/session/session.h"
#include "tconv/tconv.h"

#define PLAN_MAX_MEMORY ((size_t)64 << 20)
#define PLAN_MAX_WORK ((uint64_t)20 * 1000 * 1000)
#define PLAN_MAX_INPUT_ELEMENTS ((int64_t)1 << 16)
#define PLAN_MAX_INPUTS 16
#define PLAN_MAX_OUTPUTS 16

static tconv_model *plan_load(const uint8_t *data, size_t size) {
    return fuzz_load(data, size, 10000);
}

/* Seeded inputs at their declared static shapes, each small; false when some input cannot be
 * made (a symbolic dim, too large, too many). */
static bool plan_inputs(const tc_session *s, tc_rt_tensor *inputs, size_t *n) {
    *n = tc_session_input_count(s);
    if (*n > PLAN_MAX_INPUTS)
        return false;
    for (size_t i = 0; i < *n; i++) {
        const tconv_value *v = tc_session_input(s, i);
        int64_t elements = 1;
        for (int k = 0; v->type.kind == TCONV_TYPE_TENSOR && k < v->type.rank; k++) {
            const tc_dim *d = &v->type.dims[k];
            if (d->kind != TCONV_DIM_STATIC || !tc_mul_i64(elements, d->value, &elements))
                elements = -1;
            if (elements < 0)
                break;
        }
        tc_error err;
        if (v->type.kind != TCONV_TYPE_TENSOR || v->type.rank < 0 || elements < 0 ||
            elements > PLAN_MAX_INPUT_ELEMENTS ||
            tc_session_random_input(v, 7 * 1000 + i, NULL, 0, &inputs[i], &err) != TCONV_OK) {
            for (size_t k = 0; k < i; k++)
                tc_rt_tensor_release(&inputs[k]);
            return false;
        }
    }
    return true;
}

typedef struct plan_run {
    tconv_status st;
    tc_error err;
    size_t n_out;
    tc_rt_tensor out[PLAN_MAX_OUTPUTS];
} plan_run;

static tc_session_options plan_options(bool unfused) {
    tc_session_options so;
    tc_session_options_init(&so);
    so.n_threads = 1;
    so.max_memory_bytes = PLAN_MAX_MEMORY;
    so.max_work = PLAN_MAX_WORK;
    so.unfused = unfused;
    return so;
}

static void run_as(tconv_model *model, bool unfused, const tc_rt_tensor *inputs, size_t n_in,
                   plan_run *r) {
    tc_session_options so = plan_options(unfused);
    memset(r, 0, sizeof *r);
    tc_error_clear(&r->err);
    tc_session *s = NULL;
    r->st = tc_session_create(model, &so, &s, &r->err);
    if (r->st == TCONV_OK) {
        r->n_out = tc_session_output_count(s);
        if (r->n_out > PLAN_MAX_OUTPUTS || tc_session_input_count(s) != n_in)
            r->st = tc_error_set(&r->err, TCONV_ERR_UNSUPPORTED, "fuzz: outputs or inputs");
        else
            r->st = tc_session_run(s, inputs, n_in, r->out, &r->err);
    }
    if (r->st != TCONV_OK) {
        FUZZ_REQUIRE(r->err.status == r->st && r->err.message[0] != '\0', &r->err);
        r->n_out = 0;
    }
    tc_session_free(s);
}

static void release_run(plan_run *r) {
    for (size_t i = 0; i < r->n_out; i++)
        tc_rt_tensor_release(&r->out[i]);
}

static bool is_float(tconv_dtype d) {
    return d == TCONV_DTYPE_FLOAT || d == TCONV_DTYPE_DOUBLE || d == TCONV_DTYPE_FLOAT16 ||
           d == TCONV_DTYPE_BFLOAT16;
}

/* Values within float rounding: a folded BatchNormalization or a fused bias reassociates; the
 * largest magnitude of the output scales the absolute tolerance (cancellation). Same dtype and
 * shape exactly. */
static void compare_outputs(const plan_run *planned, const plan_run *unfused) {
    FUZZ_REQUIRE(planned->n_out == unfused->n_out, NULL);
    for (size_t i = 0; i < planned->n_out; i++) {
        const tc_rt_tensor *a = &planned->out[i], *b = &unfused->out[i];
        tc_error err;
        tc_error_clear(&err);
        FUZZ_REQUIRE(a->dtype == b->dtype && a->rank == b->rank, NULL);
        for (int k = 0; k < a->rank; k++)
            FUZZ_REQUIRE(a->dims[k] == b->dims[k], NULL);
        double scale = 0.0, abs_err, rel_err;
        bool finite = true;
        for (int64_t k = 0; is_float(b->dtype) && k < b->n_elements; k++) {
            double v = fabs(tc_rt_get_f64(b, k)), w = fabs(tc_rt_get_f64(a, k));
            finite = finite && isfinite(v) && isfinite(w);
            scale = v > scale ? v : scale;
        }
        if (!finite || scale > 1e6)
            continue; /* overflowing values: reassociation may turn inf into NaN */
        double rtol = is_float(b->dtype) ? 1e-2 : 0.0,
               atol = is_float(b->dtype) ? 1e-3 * (1 + scale) : 0.0;
        FUZZ_REQUIRE(tc_rt_tensor_compare(a, b, rtol, atol, &abs_err, &rel_err, &err) == TCONV_OK,
                     &err);
    }
}

static void check_planned_against_unfused(tconv_model *model) {
    tc_session_options so = plan_options(true);
    tc_session *s = NULL;
    tc_error err;
    if (tc_session_create(model, &so, &s, &err) != TCONV_OK)
        return;
    tc_rt_tensor inputs[PLAN_MAX_INPUTS];
    size_t n_in = 0;
    bool have = plan_inputs(s, inputs, &n_in);
    tc_session_free(s);
    if (!have)
        return;
    plan_run *planned = calloc(2, sizeof *planned), *unfused = planned + 1;
    FUZZ_REQUIRE(planned != NULL, NULL);
    run_as(model, false, inputs, n_in, planned);
    run_as(model, true, inputs, n_in, unfused);
    if (planned->st == TCONV_OK && unfused->st == TCONV_OK)
        compare_outputs(planned, unfused);
    else if (planned->st == TCONV_OK) /* as written it fails: only for a limit */
        FUZZ_REQUIRE(unfused->st == TCONV_ERR_LIMIT || unfused->st == TCONV_ERR_NOMEM,
                     &unfused->err);
    else if (unfused->st == TCONV_OK) /* planned fails: only for a limit (held constants) */
        FUZZ_REQUIRE(planned->st == TCONV_ERR_LIMIT || planned->st == TCONV_ERR_NOMEM,
                     &planned->err);
    release_run(planned);
    release_run(unfused);
    free(planned);
    for (size_t i = 0; i < n_in; i++)
        tc_rt_tensor_release(&inputs[i]);
}

/* What --check's per-node part does on the model the pipeline made of it. */
static void check_rewrites_proven(const uint8_t *data, size_t size) {
    tconv_model *original = plan_load(data, size), *converted = plan_load(data, size);
    tconv_pipeline *p = NULL;
    tconv_report *report = NULL;
    FUZZ_REQUIRE(original && converted && tconv_pipeline_new(&p) == TCONV_OK, NULL);
    if (tconv_pipeline_run(p, converted, &report) == TCONV_OK &&
        tconv_report_rewrite_count(report) > 0) {
        tconv_comparison *c = NULL;
        tconv_limits *limits = NULL;
        FUZZ_REQUIRE(tconv_comparison_new(&c) == TCONV_OK && tconv_limits_new(&limits) == TCONV_OK,
                     NULL);
        tconv_limits_set(limits, TCONV_LIMIT_THREADS, 1);
        tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, PLAN_MAX_MEMORY);
        tconv_limits_set(limits, TCONV_LIMIT_WORK, PLAN_MAX_WORK);
        tconv_comparison_set_limits(c, limits);
        tconv_comparison_set_tolerance(c, 1e-3, 1e-4);
        tconv_status st = tconv_comparison_run_rewrites(c, original, converted, report);
        tc_error err;
        tc_error_set(&err, st == TCONV_OK ? TCONV_ERR_INVALID : st, "%s",
                     tconv_comparison_last_error(c));
        FUZZ_REQUIRE(st != TCONV_ERR_MISMATCH, &err);
        FUZZ_REQUIRE(st == TCONV_OK || tconv_comparison_last_error(c)[0] != '\0', &err);
        tconv_limits_free(limits);
        tconv_comparison_free(c);
    }
    tconv_report_free(report);
    tconv_pipeline_free(p);
    tconv_model_free(original);
    tconv_model_free(converted);
}

int fuzz_plan_proof(const uint8_t *data, size_t size) {
    tconv_model *model = plan_load(data, size);
    if (!model)
        return 0;
    check_planned_against_unfused(model);
    tconv_model_free(model);
    check_rewrites_proven(data, size);
    return 0;
}

FUZZ_ENTRY(fuzz_plan_proof)
