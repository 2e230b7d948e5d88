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
#include "tconv/tconv.h"

#define FUZZ_PASSES "shape-infer,legalize-conv-transpose,dce"
#define FUZZ_MAX_MEMORY ((size_t)64 << 20)
#define FUZZ_MAX_INPUT_ELEMENTS ((int64_t)1 << 16)
/* Multiply-adds (roughly) the graphs may cost: a small model can legitimately ask for billions
 * (a 3-D ConvTranspose with a 102x47x3 kernel), which is work, not a hang, but would trip
 * libFuzzer's timeout under the sanitizers. */
#define FUZZ_MAX_WORK ((int64_t)20 * 1000 * 1000)

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

static bool small_input(const tconv_value *v) {
    if (v->type.kind != TCONV_TYPE_TENSOR || v->type.rank < 0)
        return false;
    int64_t n = 1;
    for (int i = 0; i < v->type.rank; i++) {
        const tc_dim *d = &v->type.dims[i];
        if (d->kind != TCONV_DIM_STATIC || !tc_mul_i64(n, d->value, &n))
            return false;
    }
    return n <= FUZZ_MAX_INPUT_ELEMENTS;
}

/* Elements of a value with a fully static shape; false otherwise. */
static bool static_elements(const tconv_value *v, int64_t *n) {
    if (!v || v->type.kind != TCONV_TYPE_TENSOR || v->type.rank < 0)
        return false;
    *n = 1;
    for (int i = 0; i < v->type.rank; i++) {
        const tc_dim *d = &v->type.dims[i];
        if (d->kind != TCONV_DIM_STATIC || d->value < 0 || !tc_mul_i64(*n, d->value, n))
            return false;
    }
    return true;
}

static int64_t static_dim(const tconv_value *v, int axis) {
    if (!v || v->type.kind != TCONV_TYPE_TENSOR || axis < 0 || axis >= v->type.rank ||
        v->type.dims[axis].kind != TCONV_DIM_STATIC)
        return -1;
    return v->type.dims[axis].value;
}

static tconv_value *node_io(tconv_value *const *list, size_t n, size_t i) {
    return i < n ? list[i] : NULL;
}

/* Multiply-adds of one node of the heavy kinds (-1: unknown); 0 for the cheap ones. */
static int64_t node_work(const tconv_node *node) {
    const char *op = node->op_type;
    tconv_value *x = node_io(node->inputs, node->n_inputs, 0);
    tconv_value *w = node_io(node->inputs, node->n_inputs, 1);
    tconv_value *y = node_io(node->outputs, node->n_outputs, 0);
    int64_t nx, nw, ny, work;
    bool conv_t = strcmp(op, "ConvTranspose") == 0, conv = strcmp(op, "Conv") == 0;
    if (conv_t || conv) { /* each X (ConvTranspose) or Y (Conv) element meets W / W.dims[0] */
        int64_t c = static_dim(w, 0);
        if (!static_elements(conv_t ? x : y, &nx) || !static_elements(w, &nw) || c <= 0 ||
            !tc_mul_i64(nx, nw / c + 1, &work))
            return -1;
        return work;
    }
    if (strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0) {
        int64_t k0 = static_dim(x, 0), k1 = static_dim(x, x ? x->type.rank - 1 : 0);
        int64_t k = k0 > k1 ? k0 : k1;
        return static_elements(y, &ny) && k >= 0 && tc_mul_i64(ny, k + 1, &work) ? work : -1;
    }
    if (strstr(op, "Pool") || strcmp(op, "Resize") == 0 || strcmp(op, "Upsample") == 0) {
        const tc_attr *ks = tc_node_attr(node, "kernel_shape");
        int64_t taps = 64;
        for (size_t i = 0; ks && ks->type == TCONV_ATTR_INTS && i < ks->n; i++) {
            if (ks->ints[i] < 0 || !tc_mul_i64(taps, ks->ints[i], &taps))
                return -1;
        }
        return static_elements(y, &ny) && tc_mul_i64(ny, taps, &work) ? work : -1;
    }
    return 0;
}

/* Whether running the graph (and its subgraphs) stays within FUZZ_MAX_WORK. */
static bool cheap_enough(const tconv_graph *g, int64_t *total, int depth) {
    for (const tconv_node *n = g->first; n; n = n->next) {
        int64_t work = node_work(n);
        if (work < 0 || !tc_add_i64(*total, work, total) || *total > FUZZ_MAX_WORK)
            return false;
        for (size_t a = 0; a < n->n_attrs; a++) {
            const tc_attr *attr = &n->attrs[a];
            if (attr->type == TCONV_ATTR_GRAPH && attr->g &&
                (depth > 16 || !cheap_enough(attr->g, total, depth + 1)))
                return false;
        }
    }
    return true;
}

/* Both graphs run within the work budget. Shapes come from shape-infer (which only annotates;
 * the original's nodes stay as they are). */
static bool affordable(tconv_model *original, const tconv_model *converted) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    tc_error err;
    tc_error_clear(&err);
    int64_t work = 0;
    return tc_run_passes(original, "shape-infer", &options, NULL, NULL, &err) == TCONV_OK &&
           cheap_enough(original->graph, &work, 0) && cheap_enough(converted->graph, &work, 0);
}

/* Every input that takes data is small (and static) enough to feed. */
static bool small_inputs(tconv_model *model) {
    tconv_graph *g = tconv_model_graph(model);
    for (size_t i = 0; i < tconv_graph_input_count(g); i++) {
        tconv_value *v = tconv_graph_input(g, i);
        if (!tconv_value_initializer(v) && !small_input(v))
            return false;
    }
    return true;
}

/* What --check does, through the same tconv_comparison. The original may fail to run (an
 * unsupported op, the memory limit): nothing to compare. The converted graph must run wherever
 * the original does (limits and ops the runtime lacks aside) and compute the same numbers. */
static void check(tconv_model *original, tconv_model *converted) {
    if (!small_inputs(original))
        return;
    tconv_comparison *c = NULL;
    tconv_limits *limits = NULL;
    FUZZ_REQUIRE(tconv_comparison_new(&c) == TCONV_OK && tconv_limits_new(&limits) == TCONV_OK,
                 NULL);
    tconv_limits_set(limits, TCONV_LIMIT_THREADS, 1);
    tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, FUZZ_MAX_MEMORY);
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
        bool run = affordable(original, converted);
        if (run)
            check(original, converted);
        if (getenv("TCONV_FUZZ_VERBOSE"))
            fprintf(stderr, "fuzz_legalize_check: %s\n", run ? "checked" : "too much work");
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
