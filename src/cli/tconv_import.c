/* tconv-import: load an ONNX model, legalize its ConvTranspose nodes, check the rewrite on real
 * numbers and save it. A thin front-end: everything it does goes through the library. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_limits.h"
#include "cli/cli_signals.h"
#include "tconv/files.h"
#include "importer/importer.h"
#include "ir/print.h"
#include "passes/conv_transpose_match.h"
#include "passes/pass.h"
#include "runtime/session.h"

#define DEFAULT_PASSES "shape-infer,legalize-conv-transpose,dce"
#define MAX_DIMS 32

enum { EXIT_OK = 0, EXIT_CHECK_FAILED = 1, EXIT_BAD_INPUT = 2 };

typedef struct import_args {
    const char *input;
    const char *output;
    const char *passes;
    const char *report_path;
    const char *print_ir_after;
    tc_pass_options pass_options;
    bool print_ir, quiet, dry_run, list_passes;
    long check_runs;
    uint64_t seed;
    double rtol, atol;
    tc_dim_binding dims[MAX_DIMS];
    size_t n_dims;
    tc_cli_limits limits;
} import_args;

static void print_usage(FILE *out) {
    fputs("usage: tconv-import IN.onnx [-o OUT.onnx] [options]\n"
          "\n"
          "Loads an ONNX model, rewrites every ConvTranspose with SAME padding, asymmetric pads,\n"
          "output_shape or output_padding into a VALID ConvTranspose + Slice (+ Pad/Add), and\n"
          "saves it. Without -o (and without --dry-run/--check) it prints a summary.\n"
          "\n"
          "  -o, --output FILE       write the converted model (atomically)\n"
          "  --passes LIST|none      passes to run (default " DEFAULT_PASSES ")\n"
          "  --list-passes           list the passes and exit\n"
          "  --policy P              same-or-asymmetric (default) | valid-only\n"
          "  --convention C          onnx (default) | ort | ort-legacy: whose pad split to use\n"
          "  --dry-run               run the passes and report, write nothing\n"
          "  --report FILE.json      per-node rewrite report and op counts before/after\n"
          "  --check N               run original and converted graphs on N seeded random\n"
          "                          inputs and compare every output (exit 1 on mismatch)\n"
          "  --seed S                first seed for --check (default 1)\n"
          "  --rtol R, --atol A      tolerances for --check (default 1e-4, 1e-5)\n"
          "  --dim NAME=VALUE        value of a symbolic input dim for --check\n"
          "  --print-ir              print the IR (after the passes when -o is given)\n"
          "  --print-ir-after PASS   print the IR after PASS (or 'all')\n"
          "  --quiet                 no summary or warnings on stderr\n"
          "  --version, --help\n"
          "\n",
          out);
    tc_cli_limits_usage(out);
    fputs("\n"
          "The output is written to a temp file in its folder and renamed over OUT only once\n"
          "complete: on any failure an existing OUT is left as it was. -o may name the input\n"
          "file itself: it is replaced (by the rename) only by a complete converted model.\n"
          "\n"
          "Exit codes: 0 ok, 1 check failed, 2 bad input (including a limit reached) or usage.\n",
          out);
}

static int usage_error(const char *fmt, const char *arg) {
    fputs("tconv-import: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(see tconv-import --help)\n", stderr);
    return EXIT_BAD_INPUT;
}

static bool parse_double(const char *text, double *out) {
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return errno == 0 && end != text && *end == '\0';
}

static bool parse_long(const char *text, long *out) {
    char *end;
    errno = 0;
    *out = strtol(text, &end, 10);
    return errno == 0 && end != text && *end == '\0';
}

static bool parse_dim(const char *text, tc_dim_binding *out) {
    const char *eq = strchr(text, '=');
    long value;
    if (!eq || eq == text || !parse_long(eq + 1, &value) || value < 0)
        return false;
    size_t len = (size_t)(eq - text);
    char *name = malloc(len + 1); /* freed by free_args */
    if (!name)
        return false;
    memcpy(name, text, len);
    name[len] = '\0';
    out->name = name;
    out->value = value;
    return true;
}

/* Options that take a value; returns the value or NULL when it is missing. */
static const char *option_value(int argc, char **argv, int *i) {
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int parse_option(int argc, char **argv, int *i, import_args *a) {
    const char *opt = argv[*i];
    const char *v = NULL;
#define NEEDS_VALUE()                                                                              \
    do {                                                                                           \
        if (!(v = option_value(argc, argv, i)))                                                    \
            return usage_error("option %s needs a value", opt);                                    \
    } while (0)
    if (!strcmp(opt, "-o") || !strcmp(opt, "--output")) {
        NEEDS_VALUE();
        a->output = v;
    } else if (!strcmp(opt, "--passes")) {
        NEEDS_VALUE();
        a->passes = v;
    } else if (!strcmp(opt, "--report")) {
        NEEDS_VALUE();
        a->report_path = v;
    } else if (!strcmp(opt, "--print-ir-after")) {
        NEEDS_VALUE();
        if (strcmp(v, "all") != 0 && !tc_pass_find(v))
            return usage_error("--print-ir-after: unknown pass '%s' (see --list-passes)", v);
        a->print_ir_after = v;
    } else if (!strcmp(opt, "--policy")) {
        NEEDS_VALUE();
        if (!tc_policy_parse(v, &a->pass_options.policy))
            return usage_error("unknown policy '%s' (same-or-asymmetric, valid-only)", v);
    } else if (!strcmp(opt, "--convention")) {
        NEEDS_VALUE();
        if (!tc_convention_parse(v, &a->pass_options.convention))
            return usage_error("unknown convention '%s' (onnx, ort, ort-legacy)", v);
    } else if (!strcmp(opt, "--check")) {
        NEEDS_VALUE();
        if (!parse_long(v, &a->check_runs) || a->check_runs < 1 || a->check_runs > 1000000)
            return usage_error("--check needs a run count from 1, got '%s'", v);
    } else if (!strcmp(opt, "--seed")) {
        NEEDS_VALUE();
        long seed;
        if (!parse_long(v, &seed) || seed < 0)
            return usage_error("--seed needs a non-negative integer, got '%s'", v);
        a->seed = (uint64_t)seed;
    } else if (!strcmp(opt, "--rtol") || !strcmp(opt, "--atol")) {
        NEEDS_VALUE();
        double *dst = !strcmp(opt, "--rtol") ? &a->rtol : &a->atol;
        if (!parse_double(v, dst) || *dst < 0)
            return usage_error("bad tolerance '%s'", v);
    } else if (!strcmp(opt, "--dim")) {
        NEEDS_VALUE();
        if (a->n_dims == MAX_DIMS || !parse_dim(v, &a->dims[a->n_dims]))
            return usage_error("--dim needs NAME=VALUE with VALUE >= 0, got '%s'", v);
        a->n_dims++;
    } else if (!strcmp(opt, "--print-ir")) {
        a->print_ir = true;
    } else if (!strcmp(opt, "--quiet")) {
        a->quiet = true;
    } else if (!strcmp(opt, "--dry-run")) {
        a->dry_run = true;
    } else if (!strcmp(opt, "--list-passes")) {
        a->list_passes = true;
    } else {
        return usage_error("unknown option '%s'", opt);
    }
#undef NEEDS_VALUE
    return EXIT_OK;
}

/* Returns -1 to go on, or an exit code (help, version, usage errors). */
static int parse_args(int argc, char **argv, import_args *a) {
    memset(a, 0, sizeof *a);
    a->passes = DEFAULT_PASSES;
    a->seed = 1;
    a->rtol = 1e-4;
    a->atol = 1e-5;
    tc_pass_options_init(&a->pass_options);
    tc_cli_limits_init(&a->limits);
    for (int i = 1; i < argc; i++) {
        int limit = tc_cli_limits_parse(&a->limits, "tconv-import", argc, argv, &i);
        if (limit < 0)
            return EXIT_BAD_INPUT;
        if (limit > 0)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            print_usage(stdout);
            return EXIT_OK;
        }
        if (!strcmp(argv[i], "--version")) {
            printf("tconv-import %s\n", TCONV_VERSION_STRING);
            return EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            int rc = parse_option(argc, argv, &i, a);
            if (rc != EXIT_OK)
                return rc;
        } else if (!a->input) {
            a->input = argv[i];
        } else {
            return usage_error("more than one input model ('%s')", argv[i]);
        }
    }
    if (a->list_passes)
        return -1;
    if (!a->input)
        return usage_error("%s", "no input model given");
    if (a->output && a->dry_run)
        return usage_error("%s", "--dry-run writes nothing; drop -o or --dry-run");
    return -1;
}

static void list_passes(void) {
    size_t n;
    const tc_pass_def *passes = tc_pass_table(&n);
    for (size_t i = 0; i < n; i++)
        printf("%-26s %s\n", passes[i].name, passes[i].summary);
    printf("\ndefault: %s\n", DEFAULT_PASSES);
}

/* ---------------------------------------------------------------- summary of a loaded model */

static void print_conv_transpose_nodes(const tconv_graph *graph, int depth, FILE *out) {
    for (tconv_node *node = graph->first; node; node = node->next) {
        if (tc_is_conv_transpose(node)) {
            char where[256];
            char *attrs = tc_node_attributes_json(node);
            tc_conv_transpose_match m;
            tc_error err;
            bool rewrite =
                tc_conv_transpose_match_node(node, TCONV_CONVENTION_ONNX, &m, &err) == TCONV_OK &&
                tc_conv_transpose_needs_rewrite(&m, TCONV_POLICY_SAME_OR_ASYMMETRIC);
            fprintf(out, "  %*s%s %s%s\n", 2 * depth, "",
                    tc_node_describe(node, where, sizeof where), attrs ? attrs : "{}",
                    rewrite ? "  -> rewrite" : "");
            free(attrs);
        }
        for (size_t i = 0; i < node->n_attrs; i++) {
            const tc_attr *a = &node->attrs[i];
            if (a->type == TCONV_ATTR_GRAPH && a->g)
                print_conv_transpose_nodes(a->g, depth + 1, out);
            for (size_t k = 0; a->type == TCONV_ATTR_GRAPHS && k < a->n; k++)
                print_conv_transpose_nodes(a->graphs[k], depth + 1, out);
        }
    }
}

static void print_summary(const tconv_model *model, const char *path, FILE *out) {
    fprintf(out, "model:     %s\n", path);
    fprintf(out, "ir:        %" PRId64 "\n", model->has_ir_version ? model->ir_version : 0);
    fprintf(out, "producer:  %s %s\n", model->producer_name ? model->producer_name : "-",
            model->producer_version ? model->producer_version : "");
    fputs("opsets:   ", out);
    for (size_t i = 0; i < model->n_opsets; i++) {
        const char *d = model->opsets[i].domain;
        fprintf(out, " %s %" PRId64, d && *d ? d : "ai.onnx", model->opsets[i].version);
    }
    tc_op_counts counts;
    tc_error err;
    if (tc_op_counts_collect(model, &counts, &err) == TCONV_OK) {
        size_t total = 0;
        for (size_t i = 0; i < counts.count; i++)
            total += counts.items[i].count;
        fprintf(out, "\nnodes:     %zu (", total);
        for (size_t i = 0; i < counts.count; i++)
            fprintf(out, "%s%s %zu", i ? ", " : "", counts.items[i].op_type, counts.items[i].count);
        fputs(")\n", out);
        tc_op_counts_free(&counts);
    }
    fputs("ConvTranspose nodes (-> rewrite: the default policy changes it):\n", out);
    print_conv_transpose_nodes(model->graph, 0, out);
}

/* ---------------------------------------------------------------- --check */

typedef struct check_stats {
    double max_abs, max_rel;
    bool failed;
    char first_failure[TCONV_ERROR_MESSAGE_MAX];
} check_stats;

static tconv_status make_inputs(tc_session *s, uint64_t seed, const import_args *a,
                                tc_rt_tensor *inputs, tc_error *err) {
    size_t n = tc_session_input_count(s);
    for (size_t i = 0; i < n; i++) {
        tconv_status st = tc_session_random_input(tc_session_input(s, i), seed * 1000 + i, a->dims,
                                                  a->n_dims, &inputs[i], err);
        if (st == TCONV_ERR_USAGE)
            return tc_error_prefix(err, st, "--check (--dim NAME=VALUE binds a dim): ");
        if (st != TCONV_OK)
            return st;
    }
    return TCONV_OK;
}

static void release_all(tc_rt_tensor *tensors, size_t n) {
    for (size_t i = 0; tensors && i < n; i++)
        tc_rt_tensor_release(&tensors[i]);
}

/* One seeded run of both graphs; compares every output into stats[]. */
static tconv_status check_once(tc_session *orig, tc_session *conv, uint64_t seed,
                               const import_args *a, check_stats *stats, tc_error *err) {
    size_t n_in = tc_session_input_count(orig), n_out = tc_session_output_count(orig);
    tc_rt_tensor *inputs = calloc(n_in + 1, sizeof *inputs);
    tc_rt_tensor *want = calloc(n_out + 1, sizeof *want);
    tc_rt_tensor *got = calloc(n_out + 1, sizeof *got);
    tconv_status st = inputs && want && got ? TCONV_OK : tc_error_nomem(err, "check buffers");
    if (st == TCONV_OK)
        st = make_inputs(orig, seed, a, inputs, err);
    if (st == TCONV_OK && (st = tc_session_run(orig, inputs, n_in, want, err)) != TCONV_OK)
        tc_error_prefix(err, st, "original model: ");
    if (st == TCONV_OK && (st = tc_session_run(conv, inputs, n_in, got, err)) != TCONV_OK)
        tc_error_prefix(err, st, "converted model: ");
    for (size_t i = 0; st == TCONV_OK && i < n_out; i++) {
        double abs_err = 0, rel_err = 0;
        tc_error cmp;
        tc_error_clear(&cmp);
        if (tc_rt_tensor_compare(&got[i], &want[i], a->rtol, a->atol, &abs_err, &rel_err, &cmp) !=
                TCONV_OK &&
            !stats[i].failed) {
            stats[i].failed = true;
            snprintf(stats[i].first_failure, sizeof stats[i].first_failure,
                     "seed %" PRIu64 ": %.900s", seed, cmp.message);
        }
        if (abs_err > stats[i].max_abs)
            stats[i].max_abs = abs_err;
        if (rel_err > stats[i].max_rel)
            stats[i].max_rel = rel_err;
    }
    release_all(inputs, n_in);
    release_all(want, n_out);
    release_all(got, n_out);
    free(inputs);
    free(want);
    free(got);
    return st;
}

static void print_check_result(const tc_session *s, const check_stats *stats,
                               const import_args *a) {
    for (size_t i = 0; i < tc_session_output_count(s); i++) {
        fprintf(stderr, "check: output '%s': max_abs_err=%.3g max_rel_err=%.3g over %ld runs: %s\n",
                tc_session_output(s, i)->name, stats[i].max_abs, stats[i].max_rel, a->check_runs,
                stats[i].failed ? "MISMATCH" : "ok");
        if (stats[i].failed)
            fprintf(stderr, "check:   %s\n", stats[i].first_failure);
    }
}

/* Runs the original and the converted model on --check N seeded inputs. Returns an exit code. */
static int run_check(tconv_model *original, tconv_model *converted, const import_args *a) {
    tc_session_options so;
    tc_session_options_init(&so);
    so.max_memory_bytes = a->limits.max_memory_bytes;
    tc_session *orig = NULL, *conv = NULL;
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = tc_session_create(original, &so, &orig, &err);
    if (st != TCONV_OK)
        tc_error_prefix(&err, st, "original model: ");
    else if ((st = tc_session_create(converted, &so, &conv, &err)) != TCONV_OK)
        tc_error_prefix(&err, st, "converted model: ");
    size_t n_out = orig ? tc_session_output_count(orig) : 0;
    check_stats *stats = calloc(n_out + 1, sizeof *stats);
    if (st == TCONV_OK && !stats)
        st = tc_error_nomem(&err, "check statistics");
    for (long r = 0; st == TCONV_OK && r < a->check_runs; r++)
        st = check_once(orig, conv, a->seed + (uint64_t)r, a, stats, &err);
    int rc = EXIT_OK;
    if (st != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s: check could not run: %s\n", a->input, err.message);
        tc_cli_limits_hint(stderr, "tconv-import", st);
        rc = EXIT_BAD_INPUT;
    } else {
        for (size_t i = 0; i < n_out; i++)
            rc = stats[i].failed ? EXIT_CHECK_FAILED : rc;
        if (!a->quiet || rc != EXIT_OK)
            print_check_result(orig, stats, a);
    }
    free(stats);
    tc_session_free(orig);
    tc_session_free(conv);
    return rc;
}

/* ---------------------------------------------------------------- main flow */

static int load_model(const char *path, tconv_model **out, const import_args *a) {
    tc_error err;
    tc_error_clear(&err);
    tc_load_info info = {0};
    tconv_status st = tc_model_load_file(path, &a->limits.load, out, &info, &err);
    if (st != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s\n", err.message);
        tc_cli_limits_hint(stderr, "tconv-import", st);
        return EXIT_BAD_INPUT;
    }
    if (info.n_graphs_reordered && !a->quiet)
        fprintf(stderr,
                "tconv-import: warning: %s: nodes were not in topological order in %zu "
                "graph(s); they were sorted\n",
                path, info.n_graphs_reordered);
    return EXIT_OK;
}

static void print_rewrite_summary(const tc_rewrite_report *report, const tc_op_counts *before,
                                  const tc_op_counts *after) {
    fprintf(stderr, "tconv-import: rewrote %zu ConvTranspose node(s)", report->count);
    for (size_t i = 0; i < report->count; i++)
        fprintf(stderr, "%s%s", i ? ", " : ": ", report->records[i].node);
    fputs("\ntconv-import: ops:", stderr);
    const tc_op_counts *lists[2] = {before, after};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->count; i++) {
            const char *op = lists[l]->items[i].op_type;
            size_t b = tc_op_counts_get(before, op), c = tc_op_counts_get(after, op);
            if (b != c && (l == 0 || b == 0))
                fprintf(stderr, " %s %zu->%zu", op, b, c);
        }
    }
    fputs(report->count ? "\n" : " unchanged\n", stderr);
}

/* The JSON goes to memory first, then to the file atomically (like the model). */
static int write_report(const import_args *a, const tc_rewrite_report *report,
                        const tc_op_counts *before, const tc_op_counts *after,
                        const tc_diagnostics *diags) {
    char *json = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&json, &size);
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = f ? tc_rewrite_report_write_json(
                              report, a->input, tconv_policy_name(a->pass_options.policy),
                              tconv_convention_name(a->pass_options.convention), before, after,
                              diags->messages, diags->count, f)
                        : TCONV_ERR_NOMEM;
    if (f && fclose(f) != 0 && st == TCONV_OK)
        st = TCONV_ERR_NOMEM;
    if (st == TCONV_OK)
        st = tc_write_file_atomic(a->report_path, json, size, &err);
    else
        tc_error_set(&err, st, "%s: cannot write the report (%s)", a->report_path,
                     tconv_status_name(st));
    if (st != TCONV_OK)
        fprintf(stderr, "tconv-import: %s\n", err.message);
    free(json);
    return st == TCONV_OK ? EXIT_OK : EXIT_BAD_INPUT;
}

static int convert(const import_args *a, tconv_model *model) {
    tc_diagnostics diags;
    tc_rewrite_report report;
    tc_op_counts before = {0}, after = {0};
    tc_diagnostics_init(&diags);
    tc_rewrite_report_init(&report);
    tc_pass_options options = a->pass_options;
    options.diagnostics = &diags;
    options.report = &report;
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = tc_op_counts_collect(model, &before, &err);
    if (st == TCONV_OK)
        st = tc_run_passes(model, a->passes, &options, a->print_ir_after, stdout, &err);
    if (st == TCONV_OK)
        st = tc_op_counts_collect(model, &after, &err);
    int rc = EXIT_OK;
    if (st != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s: %s\n", a->input, err.message);
        rc = EXIT_BAD_INPUT;
    }
    for (size_t i = 0; !a->quiet && i < diags.count; i++)
        fprintf(stderr, "tconv-import: warning: %s\n", diags.messages[i]);
    if (rc == EXIT_OK && !a->quiet)
        print_rewrite_summary(&report, &before, &after);
    if (rc == EXIT_OK && a->report_path)
        rc = write_report(a, &report, &before, &after, &diags);
    tc_op_counts_free(&before);
    tc_op_counts_free(&after);
    tc_rewrite_report_free(&report);
    tc_diagnostics_free(&diags);
    return rc;
}

static int save_model(const import_args *a, const tconv_model *model) {
    tc_error err;
    tc_error_clear(&err);
    if (tc_model_save_file(model, a->output, &err) != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s\n", err.message);
        return EXIT_BAD_INPUT;
    }
    if (!a->quiet)
        fprintf(stderr, "tconv-import: wrote %s\n", a->output);
    return EXIT_OK;
}

/* Refuses an output that is not a regular file before the work, not after it. */
static int check_output_paths(const import_args *a) {
    const char *paths[] = {a->output, a->report_path};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char message[1024];
        if (paths[i] && tconv_check_output_path(paths[i], message, sizeof message) != TCONV_OK) {
            fprintf(stderr, "tconv-import: %s\n", message);
            return EXIT_BAD_INPUT;
        }
    }
    return EXIT_OK;
}

static int run_import(const import_args *a) {
    tconv_model *model = NULL, *original = NULL;
    int rc = check_output_paths(a);
    if (rc == EXIT_OK)
        rc = load_model(a->input, &model, a);
    bool transforms =
        a->output || a->dry_run || a->check_runs || a->report_path || a->print_ir_after;
    if (rc == EXIT_OK && !transforms) {
        if (a->print_ir)
            tc_model_print(model, stdout);
        else
            print_summary(model, a->input, stdout);
        tconv_model_free(model);
        return EXIT_OK;
    }
    if (rc == EXIT_OK && a->check_runs)
        rc = load_model(a->input, &original, a);
    if (rc == EXIT_OK)
        rc = convert(a, model);
    if (rc == EXIT_OK && a->print_ir)
        tc_model_print(model, stdout);
    if (rc == EXIT_OK && a->check_runs)
        rc = run_check(original, model, a);
    if (rc == EXIT_OK && a->output)
        rc = save_model(a, model);
    else if (rc == EXIT_CHECK_FAILED && a->output)
        fprintf(stderr, "tconv-import: check failed: %s was not written\n", a->output);
    tconv_model_free(original);
    tconv_model_free(model);
    return rc;
}

static void free_args(import_args *a) {
    for (size_t i = 0; i < a->n_dims; i++)
        free((char *)a->dims[i].name);
    a->n_dims = 0;
}

int main(int argc, char **argv) {
    tc_cli_install_signal_handlers();
    import_args args;
    int rc = parse_args(argc, argv, &args);
    if (rc < 0 && args.list_passes) {
        list_passes();
        rc = EXIT_OK;
    } else if (rc < 0) {
        rc = run_import(&args);
    }
    free_args(&args);
    return rc;
}
