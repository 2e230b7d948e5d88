/* ConvTranspose -> Convs (lower_phase): every case of tests/golden/phase (PyTorch golden data,
 * generate_phase.py: rank 1-3, strides 1-5 above and below the kernel, dilations 1-3, groups and
 * depthwise, batch > 1, float32/float16/float64, dynamic spatial sizes, opsets 9-17, QDQ weights)
 * lowered with DepthToSpace allowed and not, then:
 *   - no ConvTranspose is left, no DepthToSpace where it is not allowed, the form is the one the
 *     case expects, and the Convs multiply no inserted zero beyond k padded to a multiple of s
 *     (their taps counted against the ConvTranspose's);
 *   - the rewritten model matches the golden outputs of every data set (tolerance per case, see
 *     generate_phase.py: the worst-case bound of the changed summation order), as written and
 *     fused, and after a save and reload;
 *   - it matches the original on seeded random inputs (tconv_comparison).
 * QDQ models run through the runtime's DequantizeLinear (branch cov's kernels): the scales and
 * zero points the rewrite moved are proven against PyTorch's result on the dequantized weights.
 * Then the refusals (each with its reason) and the emitted forms per opset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "importer/importer.h"
#include "ir_builder.h"
#include "passes/conv_transpose_match.h"
#include "passes/lower_phase.h"
#include "passes/lower_weights.h"
#include "testutil.h"

#define GOLDEN TCONV_SOURCE_DIR "/tests/golden/phase"

typedef struct phase_case {
    char name[128], dtype[16], form[16];
    double atol, rtol;
} phase_case;

static bool is_op(const tconv_node *n, const char *op) {
    return tc_node_is_onnx_domain(n) && strcmp(n->op_type, op) == 0;
}

static size_t count_ops(const tconv_graph *g, const char *op) {
    size_t n = 0;
    for (const tconv_node *node = g->first; node; node = node->next)
        n += is_op(node, op);
    return n;
}

static tconv_node *find_op(const tconv_graph *g, const char *op) {
    for (tconv_node *node = g->first; node; node = node->next) {
        if (is_op(node, op))
            return node;
    }
    return NULL;
}

/* ---------------------------------------------------------------- structure */

/* W's dims: of its constant, or of its static type (a run-time W). */
static void weight_dims(tconv_value *w, int64_t *dims, int *rank) {
    tc_weight_source src;
    if (tc_weight_source_find(w, &src, NULL, 0)) {
        *rank = src.tensor->rank;
        memcpy(dims, src.tensor->dims, (size_t)*rank * sizeof(int64_t));
    } else {
        assert_true(tc_value_static_shape(w, dims, rank));
    }
}

/* Taps the Convs multiply per input channel and output position pair: sum over Convs of
 * out_channels * prod(kernel) (out_channels of a run-time W: c_out, one phase's). */
static int64_t conv_taps(const tconv_graph *g, int64_t c_out) {
    int64_t taps = 0;
    for (const tconv_node *n = g->first; n; n = n->next) {
        if (!is_op(n, "Conv"))
            continue;
        const tc_attr *k = tc_node_attr(n, "kernel_shape");
        assert_non_null(k);
        tc_weight_source src;
        int64_t t =
            tc_weight_source_find(n->inputs[1], &src, NULL, 0) ? src.tensor->dims[0] : c_out;
        for (size_t i = 0; i < k->n; i++)
            t *= k->ints[i];
        taps += t;
    }
    return taps;
}

/* What the original ConvTranspose multiplies (C_out * prod(k)) and what the form may (k padded
 * to a multiple of s on each strided axis in the one-Conv form; exactly the same in the others). */
static void expected_taps(tconv_node *ct, const char *form, int64_t *allowed, int64_t *c_out) {
    int64_t dims[TC_MAX_RANK];
    int rank;
    weight_dims(ct->inputs[1], dims, &rank);
    int64_t group;
    B_OK(tc_node_attr_int(ct, "group", 1, &group, &b_err_));
    const tc_attr *strides = tc_node_attr(ct, "strides");
    *c_out = dims[1] * group;
    int64_t t = *c_out;
    for (int i = 2; i < rank; i++) {
        int64_t k = dims[i], s = strides ? strides->ints[i - 2] : 1;
        t *= strcmp(form, "one") == 0 ? (k + s - 1) / s * s : k;
    }
    *allowed = t;
}

/* Concats on the channel axis (the per-phase form joins its phases with one). */
static size_t count_channel_concats(const tconv_graph *g) {
    size_t n = 0;
    for (const tconv_node *node = g->first; node; node = node->next) {
        const tc_attr *axis = is_op(node, "Concat") ? tc_node_attr(node, "axis") : NULL;
        n += axis && axis->i == 1;
    }
    return n;
}

/* The form the lowering must emit: AUTO's from cases.tsv (generate_phase.py applies the same
 * rule), the forced ones from the strides and dilations ("conv": all strides 1; "one": one Conv
 * with P * C_out channels; "multi": a Conv per phase with taps). */
static void forced_form(tconv_node *ct, tc_phase_form form, const char *auto_form, char *out) {
    const tc_attr *strides = tc_node_attr(ct, "strides"), *dil = tc_node_attr(ct, "dilations");
    bool strided = false, can_one = true;
    int64_t dims[TC_MAX_RANK], padded = 1, exact = 1;
    int rank;
    weight_dims(ct->inputs[1], dims, &rank);
    for (size_t i = 0; strides && i < strides->n; i++) {
        int64_t s = strides->ints[i], k = dims[2 + i];
        strided |= s > 1;
        can_one &= s == 1 || !dil || dil->ints[i] == 1;
        padded *= (k + s - 1) / s * s;
        exact *= k;
    }
    const tconv_value *w = ct->inputs[1];
    can_one &= w->initializer || w->producer; /* a run-time W is sliced per phase */
    if (form == TC_PHASE_FORM_AUTO)
        snprintf(out, 16, "%s", auto_form);
    else if (!strided)
        snprintf(out, 16, "conv");
    else
        snprintf(out, 16, "%s",
                 form == TC_PHASE_FORM_ONE_CONV && can_one && padded <= 16 * exact ? "one"
                                                                                   : "multi");
}

/* ---------------------------------------------------------------- golden cases */

static size_t read_cases(phase_case *cases, size_t max) {
    FILE *f = fopen(GOLDEN "/cases.tsv", "r");
    assert_non_null(f);
    char line[512];
    size_t n = 0;
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f) && n < max) {
        phase_case *c = &cases[n];
        assert_int_equal(
            sscanf(line, "%127s %15s %lf %lf %15s", c->name, c->dtype, &c->atol, &c->rtol, c->form),
            5);
        n++;
    }
    fclose(f);
    return n;
}

static tconv_status run_all_data_sets(tconv_model *model, const char *dir, const phase_case *c,
                                      size_t *sets, tc_error *err) {
    char **names;
    size_t n;
    assert_int_equal(tc_test_list_dirs(dir, "test_data_set_", &names, &n), 0);
    assert_true(n >= 1);
    tconv_status st = TCONV_OK;
    for (size_t i = 0; i < n && st == TCONV_OK; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        st = tc_test_run_data_set(model, path, c->rtol, c->atol, NULL, err);
        (*sets)++;
    }
    tc_test_free_names(names, n);
    return st;
}

/* Structure checks of one lowered case; NULL when fine. */
static const char *check_structure(const tconv_model *model, const char *form, bool d2s,
                                   int64_t allowed_taps, int64_t c_out) {
    const tconv_graph *g = model->graph;
    if (count_ops(g, "ConvTranspose"))
        return "a ConvTranspose is left";
    if (!d2s && count_ops(g, "DepthToSpace"))
        return "DepthToSpace emitted where it is not allowed";
    size_t convs = count_ops(g, "Conv");
    if (strcmp(form, "multi") != 0 && convs != 1)
        return "not one Conv";
    const tconv_value *y = g->outputs[0].value;
    if (strcmp(form, "conv") == 0 && (!y->producer || !is_op(y->producer, "Conv")))
        return "the stride-1 form does not end with its Conv";
    if (strcmp(form, "multi") == 0 && (convs < 1 || count_channel_concats(g) != 1))
        return "the per-phase form is not Convs joined by a Concat";
    if (conv_taps(g, c_out) != allowed_taps)
        return "the Convs multiply other taps than the ConvTranspose's (k padded to s)";
    return NULL;
}

/* The original against the rewrite on seeded random inputs; symbolic sizes (the dynamic cases:
 * N, x0, x1, x2) bound to sizes no data set has. */
static tconv_status compare(tconv_model *a, tconv_model *b, const phase_case *c, tc_error *err) {
    tconv_comparison *cmp = NULL;
    tconv_status st = tconv_comparison_new(&cmp);
    static const char *const names[4] = {"N", "x0", "x1", "x2"};
    static const int64_t sizes[4] = {2, 5, 3, 4};
    for (int i = 0; i < 4 && st == TCONV_OK; i++)
        st = tconv_comparison_bind_dim(cmp, names[i], sizes[i]);
    if (st == TCONV_OK)
        st = tconv_comparison_set_seed(cmp, 7);
    if (st == TCONV_OK)
        st = tconv_comparison_set_tolerance(cmp, c->rtol * 2, c->atol * 2);
    if (st == TCONV_OK)
        st = tconv_comparison_run(cmp, a, b);
    if (st != TCONV_OK)
        tc_error_set(err, st, "%s", cmp ? tconv_comparison_last_error(cmp) : "out of memory");
    tconv_comparison_free(cmp);
    return st;
}

/* With TCONV_PHASE_WRITE_DIR set, each lowered model is written to
 * $TCONV_PHASE_WRITE_DIR/<case>__<interleave>_<form>/model.onnx beside links to the case's data
 * sets, for scripts/ort/phase-check.sh to run in onnxruntime (QDQ models as written: onnxruntime
 * has DequantizeLinear). */
static tconv_status write_for_ort(const tconv_model *model, const phase_case *c, bool d2s,
                                  tc_phase_form form, const char *case_dir, tc_error *err) {
    const char *root = getenv("TCONV_PHASE_WRITE_DIR");
    if (!root || !*root)
        return TCONV_OK;
    char dir[4300], path[4400];
    static const char *const form_names[3] = {"auto", "one", "perphase"};
    snprintf(dir, sizeof dir, "%s/%.127s__%s_%s", root, c->name, d2s ? "d2s" : "reshape",
             form_names[form]);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return tc_error_set(err, TCONV_ERR_IO, "mkdir %s: %s", dir, strerror(errno));
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    tconv_status st = tc_model_save_file(model, path, err);
    char **names;
    size_t n;
    assert_int_equal(tc_test_list_dirs(case_dir, "test_data_set_", &names, &n), 0);
    for (size_t i = 0; i < n && st == TCONV_OK; i++) {
        char target[4300];
        snprintf(target, sizeof target, "%s/%s", case_dir, names[i]);
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (symlink(target, path) != 0 && errno != EEXIST)
            st = tc_error_set(err, TCONV_ERR_IO, "symlink %s: %s", path, strerror(errno));
    }
    tc_test_free_names(names, n);
    return st;
}

static bool check_case(const phase_case *c, bool d2s, tc_phase_form form, size_t *sets) {
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/%.127s", GOLDEN, c->name);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    tconv_model *original = NULL, *model = NULL, *reloaded = NULL;
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = tc_model_load_file(path, NULL, &original, NULL, &err);
    if (st == TCONV_OK)
        st = tc_model_load_file(path, NULL, &model, NULL, &err);
    tconv_node *ct = st == TCONV_OK ? find_op(model->graph, "ConvTranspose") : NULL;
    if (st == TCONV_OK && !ct)
        st = tc_error_set(&err, TCONV_ERR_INVALID, "no ConvTranspose");
    int64_t allowed = 0, c_out = 0;
    char expect[16] = "";
    if (st == TCONV_OK) {
        forced_form(ct, form, c->form, expect);
        expected_taps(ct, expect, &allowed, &c_out);
    }
    tc_conv_lowering how = {.allow_depth_to_space = d2s, .form = form};
    char why[512] = "";
    if (st == TCONV_OK &&
        !tc_conv_transpose_convs_possible(model->graph, ct, &how, why, sizeof why))
        st = tc_error_set(&err, TCONV_ERR_UNSUPPORTED, "not possible: %s", why);
    tc_rewrite_report report;
    tc_rewrite_report_init(&report);
    if (st == TCONV_OK)
        st = tc_lower_conv_transpose_as_convs(model, model->graph, ct, &how, &report, &err);
    if (st == TCONV_OK && report.count != 1)
        st = tc_error_set(&err, TCONV_ERR_MISMATCH, "%zu report records", report.count);
    tc_rewrite_report_free(&report);
    if (st == TCONV_OK)
        st = tc_model_verify(model, &err);
    const char *bad = st == TCONV_OK ? check_structure(model, expect, d2s, allowed, c_out) : NULL;
    if (bad)
        st = tc_error_set(&err, TCONV_ERR_MISMATCH, "%s", bad);
    if (st == TCONV_OK)
        st = tc_test_reload(model, &reloaded, &err);
    if (st == TCONV_OK)
        st = write_for_ort(model, c, d2s, form, dir, &err);
    if (st == TCONV_OK)
        st = run_all_data_sets(model, dir, c, sets, &err);
    if (st == TCONV_OK)
        st = run_all_data_sets(reloaded, dir, c, sets, &err);
    /* random inputs of magnitude <= 1 (golden ones are normal): the case's bound holds there too */
    if (st == TCONV_OK)
        st = compare(original, model, c, &err);
    if (st != TCONV_OK)
        fprintf(stderr, "FAIL %s [%s, form %d]: %s\n", c->name, d2s ? "DepthToSpace" : "Reshape",
                (int)form, err.message);
    tconv_model_free(original);
    tconv_model_free(model);
    tconv_model_free(reloaded);
    return st == TCONV_OK;
}

static void test_golden_cases(void **state) {
    (void)state;
    phase_case cases[128];
    size_t n = read_cases(cases, 128), failures = 0, sets = 0, qdq = 0, d2s_used = 0;
    assert_true(n >= 40);
    for (size_t i = 0; i < n; i++) {
        for (int d2s = 0; d2s < 2; d2s++) {
            for (int form = TC_PHASE_FORM_AUTO; form <= TC_PHASE_FORM_PER_PHASE; form++)
                failures += !check_case(&cases[i], d2s, (tc_phase_form)form, &sets);
        }
        qdq += strncmp(cases[i].name, "qdq_", 4) == 0;
    }
    (void)d2s_used;
    fprintf(stderr,
            "%zu phase cases x 2 interleaves x 3 forms, %zu data-set runs, %zu QDQ cases, %zu "
            "failures\n",
            n, sets, qdq, failures);
    assert_int_equal(failures, 0);
}

/* ---------------------------------------------------------------- forms and refusals */

/* X [1, 2, x...], W [2, 3, k...] initializer, B initializer: one ConvTranspose. */
static tconv_node *small_case(tconv_model *m, int r, const int64_t *k, const int64_t *s,
                              const int64_t *d) {
    tconv_graph *g = m->graph;
    char xs[64] = "1,2", ws[64] = "2,3";
    for (int i = 0; i < r; i++) {
        snprintf(xs + strlen(xs), sizeof xs - strlen(xs), ",5");
        snprintf(ws + strlen(ws), sizeof ws - strlen(ws), ",%lld", (long long)k[i]);
    }
    b_input(g, "X", TCONV_DTYPE_FLOAT, xs);
    float wd[2 * 3 * 125];
    for (int i = 0; i < 2 * 3 * 125; i++)
        wd[i] = (float)(i % 7) - 3.0f;
    b_f32(g, "W", ws, wd);
    float bd[3] = {1, 2, 3};
    b_f32(g, "B", "3", bd);
    tconv_node *n = b_node(g, "ConvTranspose", "up", "X,W,B", "Y");
    b_ints(n, "strides", s, (size_t)r);
    if (d)
        b_ints(n, "dilations", d, (size_t)r);
    b_output(g, "Y");
    return n;
}

static void lower_ok(tconv_model *m, tconv_node *n, bool d2s, tc_phase_form form) {
    tc_conv_lowering how = {.allow_depth_to_space = d2s, .form = form};
    B_OK(tc_lower_conv_transpose_as_convs(m, m->graph, n, &how, NULL, &b_err_));
    B_OK(tc_model_verify(m, &b_err_));
    tconv_node *last = m->graph->last;
    assert_string_equal(last->outputs[0]->name, "Y");
}

static void test_forms_by_opset(void **state) {
    (void)state;
    int64_t k[2] = {3, 3}, s[2] = {2, 2};
    /* opset 13, DepthToSpace allowed: Conv (6*4 channels), DepthToSpace CRD, Slice inputs */
    tconv_model *m = b_model(13);
    lower_ok(m, small_case(m, 2, k, s, NULL), true, TC_PHASE_FORM_ONE_CONV);
    tconv_node *conv = find_op(m->graph, "Conv"), *d2s = find_op(m->graph, "DepthToSpace");
    assert_non_null(conv);
    assert_non_null(d2s);
    const char *mode;
    B_OK(tc_node_attr_string(d2s, "mode", "DCR", &mode, &b_err_));
    assert_string_equal(mode, "CRD");
    assert_int_equal(conv->inputs[1]->initializer->dims[0], 12);
    assert_int_equal(conv->inputs[1]->initializer->dims[2], 2);
    assert_int_equal(conv->n_inputs, 3); /* the bias repeated on the Conv */
    assert_int_equal(conv->inputs[2]->initializer->dims[0], 12);
    tconv_node *slice = find_op(m->graph, "Slice");
    assert_non_null(slice);
    assert_int_equal(slice->n_inputs, 4);
    assert_null(find_op(m->graph, "Add"));
    tconv_model_free(m);

    /* opset 9, group 1: DepthToSpace-1 (DCR, phase-major channels), Slice-1 attributes */
    m = b_model(9);
    lower_ok(m, small_case(m, 2, k, s, NULL), true, TC_PHASE_FORM_ONE_CONV);
    d2s = find_op(m->graph, "DepthToSpace");
    assert_non_null(d2s);
    assert_null(tc_node_attr(d2s, "mode"));
    slice = find_op(m->graph, "Slice");
    assert_non_null(tc_node_attr(slice, "ends"));
    assert_int_equal(slice->n_inputs, 1);
    tconv_model_free(m);

    /* DepthToSpace not allowed: Reshape, Transpose, Reshape */
    m = b_model(13);
    lower_ok(m, small_case(m, 2, k, s, NULL), false, TC_PHASE_FORM_ONE_CONV);
    assert_null(find_op(m->graph, "DepthToSpace"));
    assert_int_equal(count_ops(m->graph, "Reshape"), 2);
    assert_int_equal(count_ops(m->graph, "Transpose"), 1);
    tconv_model_free(m);

    /* stride 1: one Conv and nothing else */
    int64_t one[2] = {1, 1}, two[2] = {2, 2};
    m = b_model(13);
    lower_ok(m, small_case(m, 2, k, one, two), true, TC_PHASE_FORM_AUTO);
    assert_int_equal(m->graph->n_nodes, 1);
    conv = m->graph->first;
    const tc_attr *pads = tc_node_attr(conv, "pads"), *dil = tc_node_attr(conv, "dilations");
    assert_int_equal(pads->ints[0], 4);
    assert_int_equal(pads->ints[3], 4);
    assert_int_equal(dil->ints[1], 2);
    tconv_model_free(m);

    /* dilation 2 with stride 2: phases without taps are ConstantOfShape zeros, the bias an Add */
    m = b_model(13);
    lower_ok(m, small_case(m, 2, k, s, two), true, TC_PHASE_FORM_AUTO);
    assert_int_equal(count_ops(m->graph, "Conv"), 1); /* only phase (0,0) has taps */
    assert_int_equal(count_ops(m->graph, "ConstantOfShape"), 1);
    assert_int_equal(count_ops(m->graph, "Add"), 1);
    tconv_model_free(m);

    /* AUTO: k 3, s 2 pads the kernel to 4x4 (16 taps for 9, past TC_PHASE_ONE_CONV_MAX_EXTRA):
     * a Conv per phase (2x2, 2x1, 1x2, 1x1 taps), the bias on each, Concat, DepthToSpace DCR */
    m = b_model(13);
    lower_ok(m, small_case(m, 2, k, s, NULL), true, TC_PHASE_FORM_AUTO);
    assert_int_equal(count_ops(m->graph, "Conv"), 4);
    assert_int_equal(count_ops(m->graph, "Concat"), 1);
    assert_null(find_op(m->graph, "Add"));
    d2s = find_op(m->graph, "DepthToSpace");
    B_OK(tc_node_attr_string(d2s, "mode", "CRD", &mode, &b_err_));
    assert_string_equal(mode, "DCR");
    tconv_model_free(m);
    /* ONE_CONV asked for k 1, s 5: a one-Conv weight 25x W's size is not made, a Conv per
     * phase instead (the one with the tap; 24 phases of zeros) */
    int64_t k1[2] = {1, 1}, s5[2] = {5, 5};
    m = b_model(13);
    lower_ok(m, small_case(m, 2, k1, s5, NULL), true, TC_PHASE_FORM_ONE_CONV);
    assert_int_equal(count_ops(m->graph, "Conv"), 1);
    assert_int_equal(count_ops(m->graph, "ConstantOfShape"), 1);
    assert_int_equal(count_ops(m->graph, "Concat"), 1);
    tconv_model_free(m);
    /* AUTO: k 4, s 2 has no zero tap: one Conv */
    int64_t k4[2] = {4, 4};
    m = b_model(13);
    lower_ok(m, small_case(m, 2, k4, s, NULL), true, TC_PHASE_FORM_AUTO);
    assert_int_equal(count_ops(m->graph, "Conv"), 1);
    tconv_model_free(m);
}

static void test_refusals(void **state) {
    (void)state;
    int64_t k[2] = {3, 3}, s[2] = {2, 2};
    char why[512];
    tc_conv_lowering how = {.allow_depth_to_space = true};
    tc_error err;

    tconv_model *m = b_model(13);
    tconv_node *n = small_case(m, 2, k, s, NULL);
    b_string(n, "auto_pad", "SAME_UPPER");
    assert_false(tc_conv_transpose_convs_possible(m->graph, n, &how, why, sizeof why));
    assert_contains(why, "'up'");
    assert_contains(why, "SAME");
    assert_int_equal(tc_lower_conv_transpose_as_convs(m, m->graph, n, &how, NULL, &err),
                     TCONV_ERR_UNSUPPORTED);
    assert_contains(err.message, "SAME");
    assert_int_equal(m->graph->n_nodes, 1); /* untouched */
    tconv_model_free(m);

    m = b_model(13);
    n = small_case(m, 2, k, s, NULL);
    int64_t op[2] = {1, 0};
    b_ints(n, "output_padding", op, 2);
    assert_false(tc_conv_transpose_convs_possible(m->graph, n, &how, why, sizeof why));
    assert_contains(why, "output_padding");
    tconv_model_free(m);

    m = b_model(13);
    n = small_case(m, 2, k, s, NULL);
    int64_t pads[4] = {1, 0, 1, 0};
    b_ints(n, "pads", pads, 4);
    assert_false(tc_conv_transpose_convs_possible(m->graph, n, &how, why, sizeof why));
    assert_contains(why, "pads");
    tconv_model_free(m);

    /* W a graph input: sliced at run time when its shape is static and Slice has steps */
    m = b_model(13);
    b_input(m->graph, "X", TCONV_DTYPE_FLOAT, "1,2,5,5");
    b_input(m->graph, "Wi", TCONV_DTYPE_FLOAT, "2,3,3,?");
    n = b_node(m->graph, "ConvTranspose", "dyn_w", "X,Wi", "Y");
    b_ints(n, "strides", s, 2);
    assert_false(tc_conv_transpose_convs_possible(m->graph, n, &how, why, sizeof why));
    assert_contains(why, "dyn_w");
    assert_contains(why, "'Wi' is a graph input");
    assert_contains(why, "not static");
    tconv_model_free(m);
    m = b_model(9);
    b_input(m->graph, "X", TCONV_DTYPE_FLOAT, "1,2,5,5");
    b_input(m->graph, "Wi", TCONV_DTYPE_FLOAT, "2,3,3,3");
    n = b_node(m->graph, "ConvTranspose", "old_w", "X,Wi", "Y");
    b_ints(n, "strides", s, 2);
    assert_false(tc_conv_transpose_convs_possible(m->graph, n, &how, why, sizeof why));
    assert_contains(why, "opset 10");
    tconv_model_free(m);

    /* the Reshape interleave below opset 5 */
    m = b_model(4);
    n = small_case(m, 2, k, s, NULL);
    how.allow_depth_to_space = false;
    assert_false(tc_conv_transpose_convs_possible(m->graph, n, &how, why, sizeof why));
    assert_contains(why, "opset 4");
    tconv_model_free(m);
}

/* A grouped QDQ weight: the new DequantizeLinear reads axis 0 with one scale per Conv channel
 * (each ConvTranspose channel's scale repeated for its 4 phases). */
static void test_qdq_structure(void **state) {
    (void)state;
    tconv_model *m = b_model(13);
    tconv_graph *g = m->graph;
    b_input(g, "X", TCONV_DTYPE_FLOAT, "1,4,5,5");
    int64_t wd[4] = {4, 3, 3, 3};
    int8_t q[108];
    for (int i = 0; i < 108; i++)
        q[i] = (int8_t)(i % 11 - 5);
    tconv_tensor *t;
    B_OK(tc_tensor_create(m, "Wq", TCONV_DTYPE_INT8, 4, wd, q, sizeof q, &t, &b_err_));
    B_OK(tc_graph_add_initializer(g, t, &b_err_));
    float scales[3] = {0.5f, 0.25f, 0.125f};
    b_f32(g, "Ws", "3", scales);
    tconv_node *dq = b_node(g, "DequantizeLinear", "dq", "Wq,Ws", "W");
    b_int(dq, "axis", 1);
    tconv_node *n = b_node(g, "ConvTranspose", "up", "X,W", "Y");
    int64_t s[2] = {2, 2};
    b_ints(n, "strides", s, 2);
    b_int(n, "group", 2);
    b_output(g, "Y");
    lower_ok(m, n, true, TC_PHASE_FORM_ONE_CONV);
    tconv_node *conv = find_op(g, "Conv");
    tconv_node *new_dq = conv->inputs[1]->producer;
    assert_non_null(new_dq);
    assert_true(is_op(new_dq, "DequantizeLinear"));
    assert_int_equal(tc_node_attr(new_dq, "axis")->i, 0);
    tconv_tensor *ns = new_dq->inputs[1]->initializer;
    assert_int_equal(ns->dims[0], 24); /* 2 groups x 3 channels x 4 phases */
    const void *data;
    size_t nb;
    B_OK(tc_tensor_data(ns, &data, &nb, &b_err_));
    const float *sv = data;
    for (int c = 0; c < 24; c++)
        assert_float_equal(sv[c], scales[(c / 4) % 3], 0);
    assert_int_equal(tc_node_attr(conv, "group")->i, 2);
    assert_int_equal(new_dq->inputs[0]->initializer->dtype, TCONV_DTYPE_INT8);
    tconv_model_free(m);
}

/* TCONV_PHASE_LOWER_DIR=DIR (bench/phase.sh): for each DIR/<layer>/model.onnx, writes
 * model_{d2s,reshape}_{one,perphase}.onnx, every ConvTranspose lowered with DepthToSpace allowed
 * or not, in the one-Conv form (where it exists) or one Conv per phase (the benchmark programs
 * see only the public API, which has no such pass yet). Returns how many failed. */
static int lower_layers_for_bench(const char *root) {
    char **names;
    size_t n;
    if (tc_test_list_dirs(root, "", &names, &n) != 0)
        return 1;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        for (int variant = 0; variant < 4; variant++) {
            bool d2s = variant < 2;
            tc_phase_form form = variant % 2 ? TC_PHASE_FORM_PER_PHASE : TC_PHASE_FORM_ONE_CONV;
            char path[8400];
            snprintf(path, sizeof path, "%s/%s/model.onnx", root, names[i]);
            tconv_model *m = NULL;
            tc_error err;
            tc_error_clear(&err);
            tconv_status st = tc_model_load_file(path, NULL, &m, NULL, &err);
            tconv_node *ct;
            tc_conv_lowering how = {.allow_depth_to_space = d2s, .form = form};
            while (st == TCONV_OK && (ct = find_op(m->graph, "ConvTranspose")) != NULL)
                st = tc_lower_conv_transpose_as_convs(m, m->graph, ct, &how, NULL, &err);
            snprintf(path, sizeof path, "%s/%s/model_%s_%s.onnx", root, names[i],
                     d2s ? "d2s" : "reshape", variant % 2 ? "perphase" : "one");
            if (st == TCONV_OK)
                st = tc_model_save_file(m, path, &err);
            if (st != TCONV_OK) {
                fprintf(stderr, "%s: %s\n", path, err.message);
                failed++;
            }
            tconv_model_free(m);
        }
    }
    tc_test_free_names(names, n);
    return failed;
}

int main(void) {
    const char *bench_dir = getenv("TCONV_PHASE_LOWER_DIR");
    if (bench_dir && *bench_dir)
        return lower_layers_for_bench(bench_dir) ? 1 : 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms_by_opset),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_qdq_structure),
        cmocka_unit_test(test_golden_cases),
    };
    return cmocka_run_group_tests_name("passes.lower_phase", tests, NULL, NULL);
}
