/* Fuzz target (b): ModelProto bytes -> load -> shape-infer, legalize-conv-transpose, dce ->
 * verify -> save + reload, then what `tconv-import --check 1` does: run the original and the
 * converted graph on the same seeded inputs and compare. Properties: every failure has a
 * message; a model that loads and passes the passes verifies, saves and reloads; the converted
 * graph runs wherever the original does and computes the same numbers. The runtime works under
 * a small memory limit so hostile shapes are refused, not allocated. */
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

static tconv_model *load(const uint8_t *data, size_t size) {
    tconv_load_options options;
    tconv_load_options_init(&options);
    options.max_nodes = 10000;
    tconv_model *model = NULL;
    tconv_error err;
    tconv_error_clear(&err);
    tconv_status st = tconv_model_load_buffer(data, size, NULL, &options, &model, NULL, &err);
    if (st != TCONV_OK)
        fuzz_require_message(st, &err, "<memory>: ");
    return model;
}

/* Passes either succeed and leave a valid, saveable model, or fail with a message. */
static bool legalize(tconv_model *model) {
    tconv_diagnostics diags;
    tconv_rewrite_report report;
    tconv_diagnostics_init(&diags);
    tconv_rewrite_report_init(&report);
    tconv_pass_options options;
    tconv_pass_options_init(&options);
    options.diagnostics = &diags;
    options.report = &report;
    tconv_error err;
    tconv_error_clear(&err);
    tconv_status st = tconv_run_passes(model, FUZZ_PASSES, &options, NULL, NULL, &err);
    if (st != TCONV_OK)
        FUZZ_REQUIRE(err.status == st && err.message[0] != '\0', &err);
    tconv_rewrite_report_free(&report);
    tconv_diagnostics_free(&diags);
    return st == TCONV_OK;
}

static void save_and_reload(const tconv_model *model) {
    tconv_error err;
    tconv_error_clear(&err);
    void *bytes = NULL;
    size_t size = 0;
    FUZZ_REQUIRE(tconv_model_verify(model, &err) == TCONV_OK, &err);
    FUZZ_REQUIRE(tconv_model_save_buffer(model, &bytes, &size, &err) == TCONV_OK, &err);
    tconv_model *again = NULL;
    FUZZ_REQUIRE(tconv_model_load_buffer(bytes, size, NULL, NULL, &again, NULL, &err) == TCONV_OK,
                 &err);
    tconv_model_free(again);
    free(bytes);
}

static bool small_input(const tconv_value *v) {
    if (v->type.kind != TCONV_TYPE_TENSOR || v->type.rank < 0)
        return false;
    int64_t n = 1;
    for (int i = 0; i < v->type.rank; i++) {
        const tconv_dim *d = &v->type.dims[i];
        if (d->kind != TCONV_DIM_STATIC || !tconv_mul_i64(n, d->value, &n))
            return false;
    }
    return n <= FUZZ_MAX_INPUT_ELEMENTS;
}

typedef struct check_state {
    tconv_session *orig, *conv;
    tconv_rt_tensor *inputs, *want, *got;
    size_t n_in, n_out;
} check_state;

static void check_free(check_state *c) {
    for (size_t i = 0; c->inputs && i < c->n_in; i++)
        tconv_rt_tensor_release(&c->inputs[i]);
    for (size_t i = 0; c->want && c->got && i < c->n_out; i++) {
        tconv_rt_tensor_release(&c->want[i]);
        tconv_rt_tensor_release(&c->got[i]);
    }
    free(c->inputs);
    free(c->want);
    free(c->got);
    tconv_session_free(c->orig);
    tconv_session_free(c->conv);
}

static bool check_setup(check_state *c, tconv_model *original, tconv_model *converted) {
    tconv_session_options so;
    tconv_session_options_init(&so);
    so.n_threads = 1;
    so.max_memory_bytes = FUZZ_MAX_MEMORY;
    tconv_error err;
    tconv_error_clear(&err);
    if (tconv_session_create(original, &so, &c->orig, &err) != TCONV_OK)
        return false; /* unsupported op, planned memory over the limit, ... */
    if (tconv_session_create(converted, &so, &c->conv, &err) != TCONV_OK)
        return false; /* the converted graph may plan more memory (Slice/Pad) */
    c->n_in = tconv_session_input_count(c->orig);
    c->n_out = tconv_session_output_count(c->orig);
    FUZZ_REQUIRE(c->n_in == tconv_session_input_count(c->conv), NULL);
    FUZZ_REQUIRE(c->n_out == tconv_session_output_count(c->conv), NULL);
    c->inputs = calloc(c->n_in + 1, sizeof *c->inputs);
    c->want = calloc(c->n_out + 1, sizeof *c->want);
    c->got = calloc(c->n_out + 1, sizeof *c->got);
    if (!c->inputs || !c->want || !c->got)
        return false;
    for (size_t i = 0; i < c->n_in; i++) {
        const tconv_value *v = tconv_session_input(c->orig, i);
        if (!small_input(v) ||
            tconv_session_random_input(v, 1000 + i, NULL, 0, &c->inputs[i], &err) != TCONV_OK)
            return false;
    }
    return true;
}

static void check(tconv_model *original, tconv_model *converted) {
    check_state c;
    memset(&c, 0, sizeof c);
    tconv_error err;
    tconv_error_clear(&err);
    if (check_setup(&c, original, converted) &&
        tconv_session_run(c.orig, c.inputs, c.n_in, c.want, &err) == TCONV_OK) {
        tconv_status st = tconv_session_run(c.conv, c.inputs, c.n_in, c.got, &err);
        FUZZ_REQUIRE(st == TCONV_OK || st == TCONV_ERR_LIMIT || st == TCONV_ERR_NOMEM, &err);
        for (size_t i = 0; st == TCONV_OK && i < c.n_out; i++) {
            double abs_err, rel_err;
            st = tconv_rt_tensor_compare(&c.got[i], &c.want[i], 1e-3, 1e-4, &abs_err, &rel_err,
                                         &err);
            FUZZ_REQUIRE(st == TCONV_OK, &err);
        }
    } else if (err.status != TCONV_OK) {
        FUZZ_REQUIRE(err.message[0] != '\0', &err);
    }
    check_free(&c);
}

int tconv_fuzz_legalize_check(const uint8_t *data, size_t size) {
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
    return tconv_fuzz_legalize_check(data, size);
}
#endif
