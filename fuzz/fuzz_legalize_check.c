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
#include "runtime/session.h"

#define FUZZ_PASSES "shape-infer,legalize-conv-transpose,dce"
#define FUZZ_MAX_MEMORY ((size_t)64 << 20)
#define FUZZ_MAX_INPUT_ELEMENTS ((int64_t)1 << 16)
/* The runtime's work limit (multiply-adds and element operations): a small model can
 * legitimately ask for billions (a 3-D ConvTranspose with a 102x47x3 kernel), which is work,
 * not a hang, but would trip libFuzzer's timeout under the sanitizers. */
#define FUZZ_MAX_WORK ((uint64_t)20 * 1000 * 1000)

static tconv_model *load(const uint8_t *data, size_t size) {
    tc_load_options options;
    tc_load_options_init(&options);
    options.max_nodes = 10000;
    tconv_model *model = NULL;
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = tc_model_load_buffer(data, size, NULL, &options, &model, NULL, &err);
    if (st != TCONV_OK)
        fuzz_require_message(st, &err, "<memory>: ");
    return model;
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

typedef struct check_state {
    tc_session *orig, *conv;
    tc_rt_tensor *inputs, *want, *got;
    size_t n_in, n_out;
} check_state;

static void check_free(check_state *c) {
    for (size_t i = 0; c->inputs && i < c->n_in; i++)
        tc_rt_tensor_release(&c->inputs[i]);
    for (size_t i = 0; c->want && c->got && i < c->n_out; i++) {
        tc_rt_tensor_release(&c->want[i]);
        tc_rt_tensor_release(&c->got[i]);
    }
    free(c->inputs);
    free(c->want);
    free(c->got);
    tc_session_free(c->orig);
    tc_session_free(c->conv);
}

static bool check_setup(check_state *c, tconv_model *original, tconv_model *converted) {
    tc_session_options so;
    tc_session_options_init(&so);
    so.n_threads = 1;
    so.max_memory_bytes = FUZZ_MAX_MEMORY;
    so.max_work = FUZZ_MAX_WORK;
    tc_error err;
    tc_error_clear(&err);
    if (tc_session_create(original, &so, &c->orig, &err) != TCONV_OK)
        return false; /* unsupported op, planned memory over the limit, ... */
    if (tc_session_create(converted, &so, &c->conv, &err) != TCONV_OK)
        return false; /* the converted graph may plan more memory (Slice/Pad) */
    c->n_in = tc_session_input_count(c->orig);
    c->n_out = tc_session_output_count(c->orig);
    FUZZ_REQUIRE(c->n_in == tc_session_input_count(c->conv), NULL);
    FUZZ_REQUIRE(c->n_out == tc_session_output_count(c->conv), NULL);
    c->inputs = calloc(c->n_in + 1, sizeof *c->inputs);
    c->want = calloc(c->n_out + 1, sizeof *c->want);
    c->got = calloc(c->n_out + 1, sizeof *c->got);
    if (!c->inputs || !c->want || !c->got)
        return false;
    check_huge_inputs(c->orig);
    tc_dim_binding b[8];
    size_t nb = input_bindings(c->orig, b, 8, 3);
    if (tc_session_check_inputs(c->orig, b, nb, &err) != TCONV_OK) {
        FUZZ_REQUIRE(err.status == TCONV_ERR_LIMIT && err.message[0] != '\0', &err);
        return false; /* refused before any input is made */
    }
    for (size_t i = 0; i < c->n_in; i++) {
        const tconv_value *v = tc_session_input(c->orig, i);
        int64_t n;
        if (!input_elements(v, b, nb, &n) || n > FUZZ_MAX_INPUT_ELEMENTS ||
            tc_session_random_input(v, 1000 + i, b, nb, &c->inputs[i], &err) != TCONV_OK)
            return false;
    }
    return true;
}

static void check(tconv_model *original, tconv_model *converted) {
    check_state c;
    memset(&c, 0, sizeof c);
    tc_error err;
    tc_error_clear(&err);
    if (check_setup(&c, original, converted) &&
        tc_session_run(c.orig, c.inputs, c.n_in, c.want, &err) == TCONV_OK) {
        tconv_status st = tc_session_run(c.conv, c.inputs, c.n_in, c.got, &err);
        FUZZ_REQUIRE(st == TCONV_OK || st == TCONV_ERR_LIMIT || st == TCONV_ERR_NOMEM, &err);
        for (size_t i = 0; st == TCONV_OK && i < c.n_out; i++) {
            double abs_err, rel_err;
            st = tc_rt_tensor_compare(&c.got[i], &c.want[i], 1e-3, 1e-4, &abs_err, &rel_err, &err);
            FUZZ_REQUIRE(st == TCONV_OK, &err);
        }
        if (getenv("TCONV_FUZZ_VERBOSE"))
            fprintf(stderr, "fuzz_legalize_check: compared %zu outputs\n", c.n_out);
    } else if (err.status != TCONV_OK) {
        FUZZ_REQUIRE(err.message[0] != '\0', &err);
    }
    check_free(&c);
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

#ifndef TCONV_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_legalize_check(data, size);
}
#endif
