/* Fuzz target (b): ModelProto bytes -> load -> shape-infer, legalize-conv-transpose, dce ->
 * verify -> save + reload, then what `tconv-import --check 1` does: run the original and the
 * converted graph on the same seeded inputs and compare. Properties: every failure has a
 * message; a model that loads and passes the passes verifies, saves and reloads; the converted
 * graph runs wherever the original does and computes the same numbers. The runtime works under
 * a small memory and work limit so hostile shapes are refused, not allocated or computed; graph
 * inputs are first planned with every symbolic dim bound past the memory limit, which must be
 * refused before any input is made. */
#include "fuzz_common.h"

#include "importer/importer.h"
#include "ir/verify.h"
#include "passes/diagnostics.h"
#include "passes/pass.h"
#include "passes/rewrite_report.h"
#include "runtime/session/session.h"
#include "tconv/tconv.h"

#define FUZZ_PASSES "shape-infer,legalize-conv-transpose,dce"
#define FUZZ_MAX_MEMORY ((size_t)64 << 20)
#define FUZZ_MAX_INPUT_ELEMENTS ((int64_t)1 << 16)
/* The runtime's work limit (multiply-adds and element operations): a small model can
 * legitimately ask for billions (a 3-D ConvTranspose with a 102x47x3 kernel), which is work,
 * not a hang, but would trip libFuzzer's timeout under the sanitizers. */
#define FUZZ_MAX_WORK ((uint64_t)20 * 1000 * 1000)

static tconv_model *load(const uint8_t *data, size_t size) {
    return fuzz_load(data, size, 10000);
}

/* Passes either succeed and leave a valid, saveable model, or fail with a message. */
static bool legalize(tconv_model *model) {
    tc_diagnostics diags;
    tc_rewrite_report report;
    tc_diagnostics_init(&diags);
    tc_rewrite_report_init(&report);
    tc_pass_options options;
    tc_pass_options_init(&options);
    options.diagnostics = &diags;
    options.report = &report;
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = tc_run_passes(model, FUZZ_PASSES, &options, NULL, NULL, &err);
    if (st != TCONV_OK)
        FUZZ_REQUIRE(err.status == st && err.message[0] != '\0', &err);
    tc_rewrite_report_free(&report);
    tc_diagnostics_free(&diags);
    return st == TCONV_OK;
}

static void save_and_reload(const tconv_model *model) {
    tc_error err;
    tc_error_clear(&err);
    void *bytes = NULL;
    size_t size = 0;
    FUZZ_REQUIRE(tc_model_verify(model, &err) == TCONV_OK, &err);
    FUZZ_REQUIRE(tc_model_save_buffer(model, &bytes, &size, &err) == TCONV_OK, &err);
    tconv_model *again = NULL;
    FUZZ_REQUIRE(tc_model_load_buffer(bytes, size, NULL, NULL, &again, NULL, &err) == TCONV_OK,
                 &err);
    tconv_model_free(again);
    free(bytes);
}

/* Symbolic dims of the graph inputs (up to `max`), each bound to `value`. */
static size_t input_bindings(const tc_session *s, tc_dim_binding *b, size_t max, int64_t value) {
    size_t n = 0;
    for (size_t i = 0; i < tc_session_input_count(s); i++) {
        const tconv_value *v = tc_session_input(s, i);
        for (int k = 0; v->type.kind == TCONV_TYPE_TENSOR && k < v->type.rank; k++) {
            const tc_dim *d = &v->type.dims[k];
            bool seen = d->kind != TCONV_DIM_SYMBOLIC || !d->param;
            for (size_t j = 0; !seen && j < n; j++)
                seen = strcmp(b[j].name, d->param) == 0;
            if (!seen && n < max) {
                b[n].name = d->param;
                b[n++].value = value;
            }
        }
    }
    return n;
}

/* Elements of input v with symbolic dims from b; false when a dim is unknown or it overflows. */
static bool input_elements(const tconv_value *v, const tc_dim_binding *b, size_t nb, int64_t *n) {
    if (v->type.kind != TCONV_TYPE_TENSOR || v->type.rank < 0)
        return false;
    *n = 1;
    for (int i = 0; i < v->type.rank; i++) {
        const tc_dim *d = &v->type.dims[i];
        int64_t value = d->kind == TCONV_DIM_STATIC ? d->value : -1;
        for (size_t j = 0; d->kind == TCONV_DIM_SYMBOLIC && d->param && j < nb; j++) {
            if (strcmp(b[j].name, d->param) == 0)
                value = b[j].value;
        }
        if (value < 0 || !tc_mul_i64(*n, value, n))
            return false;
    }
    return true;
}

/* Graph inputs past the memory limit: every symbolic dim bound to a huge value must be refused
 * before any input is made (or, where the inputs still fit, e.g. a dim of 0 elsewhere, pass). */
static void check_huge_inputs(const tc_session *s) {
    tc_dim_binding b[8];
    size_t nb = input_bindings(s, b, 8, (int64_t)1 << 30);
    if (nb == 0)
        return;
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = tc_session_check_inputs(s, b, nb, &err);
    FUZZ_REQUIRE(st == TCONV_OK || (st == TCONV_ERR_LIMIT && err.message[0] != '\0'), &err);
    for (size_t i = 0; st == TCONV_OK && i < tc_session_input_count(s); i++) {
        const tconv_value *v = tc_session_input(s, i);
        int64_t n;
        size_t esize = tc_rt_dtype_size(v->type.dtype);
        if (input_elements(v, b, nb, &n) && esize)
            FUZZ_REQUIRE(n <= (int64_t)(FUZZ_MAX_MEMORY / esize), NULL); /* accepted: it fits */
    }
}

/* The inputs planned with every symbolic dim bound past the memory limit, in a session of the
 * fuzzer's limits (a graph the runtime cannot plan at all is the comparison's to report). */
static void check_inputs_planned(tconv_model *original) {
    tc_session_options so;
    tc_session_options_init(&so);
    so.n_threads = 1;
    so.max_memory_bytes = FUZZ_MAX_MEMORY;
    so.max_work = FUZZ_MAX_WORK;
    tc_session *s = NULL;
    tc_error err;
    tc_error_clear(&err);
    if (tc_session_create(original, &so, &s, &err) == TCONV_OK)
        check_huge_inputs(s);
    tc_session_free(s);
}

/* Every input that takes data is small (and static) enough to feed. */
static bool small_inputs(tconv_model *model) {
    tconv_graph *g = tconv_model_graph(model);
    for (size_t i = 0; i < tconv_graph_input_count(g); i++) {
        tconv_value *v = tconv_graph_input(g, i);
        int64_t n;
        if (!tconv_value_initializer(v) &&
            (!input_elements(v, NULL, 0, &n) || n > FUZZ_MAX_INPUT_ELEMENTS))
            return false;
    }
    return true;
}

/* What --check does, through the same tconv_comparison. The original may fail to run (an
 * unsupported op, the memory limit): nothing to compare. The converted graph must run wherever
 * the original does (limits and ops the runtime lacks aside) and compute the same numbers. */
static void check(tconv_model *original, tconv_model *converted) {
    check_inputs_planned(original);
    if (!small_inputs(original))
        return;
    tconv_comparison *c = NULL;
    tconv_limits *limits = NULL;
    FUZZ_REQUIRE(tconv_comparison_new(&c) == TCONV_OK && tconv_limits_new(&limits) == TCONV_OK,
                 NULL);
    tconv_limits_set(limits, TCONV_LIMIT_THREADS, 1);
    tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, FUZZ_MAX_MEMORY);
    tconv_limits_set(limits, TCONV_LIMIT_WORK, FUZZ_MAX_WORK);
    tconv_comparison_set_limits(c, limits);
    tconv_comparison_set_seed(c, 1);
    tconv_comparison_set_tolerance(c, 1e-3, 1e-4);
    tconv_status st = tconv_comparison_run(c, original, converted);
    const char *msg = tconv_comparison_last_error(c);
    tc_error err;
    tc_error_set(&err, st == TCONV_OK ? TCONV_ERR_INVALID : st, "%s", msg);
    bool candidate = strncmp(msg, "candidate model: ", 17) == 0;
    FUZZ_REQUIRE(st != TCONV_ERR_MISMATCH, &err);
    /* As before the one compare: a converted graph the runtime cannot plan (more memory for
     * Slice/Pad; a Pad emitted at an opset below the runtime's kernels) is skipped. */
    FUZZ_REQUIRE(st == TCONV_OK || !candidate || st == TCONV_ERR_LIMIT || st == TCONV_ERR_NOMEM ||
                     st == TCONV_ERR_UNSUPPORTED,
                 &err);
    FUZZ_REQUIRE(st == TCONV_OK || msg[0] != '\0', &err);
    if (getenv("TCONV_FUZZ_VERBOSE"))
        fprintf(stderr, "fuzz_legalize_check: compared %zu outputs: %s\n",
                tconv_comparison_output_count(c), tconv_status_name(st));
    tconv_limits_free(limits);
    tconv_comparison_free(c);
}

int fuzz_legalize_check(const uint8_t *data, size_t size) {
    tconv_model *converted = load(data, size);
    if (!converted)
        return 0;
    if (legalize(converted)) {
        save_and_reload(converted);
        tconv_model *original = load(data, size);
        FUZZ_REQUIRE(original != NULL, NULL);
        check(original, converted);
        tconv_model_free(original);
    }
    tconv_model_free(converted);
    return 0;
}

FUZZ_ENTRY(fuzz_legalize_check)
