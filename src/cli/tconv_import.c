/* tconv-import: load an ONNX model, legalize its ConvTranspose nodes, check the rewrite on real
 * numbers and save it. A thin front-end: everything it does goes through the library. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_dims.h"
#include "cli_limits.h"
#include "cli_signals.h"
#include "tconv/tconv.h"

#define DEFAULT_PASSES TCONV_DEFAULT_PASSES
#define MAX_DIMS 32
#define MESSAGE_MAX 1024

enum { EXIT_OK = 0, EXIT_CHECK_FAILED = 1, EXIT_BAD_INPUT = 2 };

typedef struct import_args {
    const char *input;
    const char *output;            /* -o */
    const char *positional_output; /* the second file argument, as onnxsim takes it */
    const char *passes;
    const char *report_path;
    const char *print_ir_after;
    const char *target;      /* --target NAME */
    const char *target_file; /* --target-file FILE */
    bool list_targets;
    tconv_policy policy;
    tconv_convention convention;
    bool print_ir, quiet, dry_run, list_passes;
    long check_runs;
    uint64_t seed;
    double rtol, atol;
    tc_cli_dim dims[MAX_DIMS]; /* names malloc'd */
    size_t n_dims;
    tc_cli_limits limits;
} import_args;

static void print_usage(FILE *out) {
    fputs("usage: tconv-import IN.onnx [OUT.onnx] [options]\n"
          "       tconv-import IN.onnx -o OUT.onnx [options]\n"
          "\n"
          "Loads an ONNX model, rewrites every ConvTranspose with SAME padding, asymmetric pads,\n"
          "output_shape or output_padding into a VALID ConvTranspose + Slice (+ Pad/Add), and\n"
          "saves it to OUT.onnx. Without an output (and without --dry-run/--check) it prints a\n"
          "summary of the model and of what it would rewrite.\n"
          "\n"
          "  -o, --output FILE       write the converted model (atomically); the same as giving\n"
          "                          OUT.onnx as the second file argument\n"
          "  --passes LIST|none      passes to run (default " DEFAULT_PASSES ")\n"
          "  --list-passes           list the passes and exit\n"
          "  --policy P              same-or-asymmetric (default) | valid-only\n"
          "  --convention C          onnx (default) | ort (onnxruntime 1.30) | ort-legacy\n"
          "                          (onnxruntime <= 1.12): whose ConvTranspose to reproduce\n"
          "  --dry-run               run the passes and report, write nothing\n"
          "  --report FILE.json      per-node rewrite report and op counts before/after\n"
          "  --check N               run original and converted graphs on N seeded random\n"
          "                          inputs and compare every output (exit 1 on mismatch)\n"
          "  --seed S                first seed for --check (default 1)\n"
          "  --rtol R, --atol A      tolerances for --check (default 1e-4, 1e-5)\n"
          "  --dim NAME=VALUE        value (>= 1) of a dynamic (symbolic) input dim for --check;\n"
          "                          every dynamic dim needs one, and each must name one\n"
          "  --target NAME           rewrite every ConvTranspose into a form backend NAME takes\n"
          "                          (exit 2 naming each node that cannot be); without -o, a\n"
          "                          lint: what NAME rejects in the model and what the rewrite\n"
          "                          would do\n"
          "  --target-file FILE      the same with a target described in FILE (README, Target\n"
          "                          files)\n"
          "  --list-targets          the built-in targets with their constraints and sources\n"
          "  --print-ir              print the IR (after the passes when -o is given)\n"
          "  --print-ir-after PASS   print the IR after PASS (or 'all')\n"
          "  --quiet                 no summary or warnings on stderr\n"
          "  --version               print tconv's version and exit\n"
          "  --help                  print this help and exit\n"
          "\n",
          out);
    tc_cli_limits_usage(out);
    fputs("\n"
          "The output is written to a temp file in its folder and renamed over OUT only once\n"
          "complete: on any failure an existing OUT is left as it was. OUT may be the input\n"
          "file itself: it is replaced (by the rename) only by a complete converted model.\n"
          "\n"
          "Exit codes: 0 ok, 1 check failed, 2 bad input (including a limit reached) or usage.\n",
          out);
}

/* Prints "tconv-import: <what went wrong and what to do>" and where to read more: exit 2. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tconv-import: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(tconv-import --help lists every option)\n", stderr);
    va_end(ap);
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

static bool parse_dim(const char *text, import_args *a) {
    const char *eq = strchr(text, '=');
    long value;
    if (!eq || eq == text || !parse_long(eq + 1, &value) || value < 1)
        return false;
    size_t len = (size_t)(eq - text);
    char *name = malloc(len + 1); /* freed by free_args */
    if (!name)
        return false;
    memcpy(name, text, len);
    name[len] = '\0';
    a->dims[a->n_dims].name = name;
    a->dims[a->n_dims++].value = value;
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
            return usage_error("option %s needs a value: %s VALUE", opt, opt);                     \
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
        a->print_ir_after = v;
    } else if (!strcmp(opt, "--policy")) {
        NEEDS_VALUE();
        if (!tconv_policy_from_name(v, &a->policy))
            return usage_error("unknown policy '%s' (same-or-asymmetric, valid-only)", v);
    } else if (!strcmp(opt, "--convention")) {
        NEEDS_VALUE();
        if (!tconv_convention_from_name(v, &a->convention))
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
            return usage_error("%s needs a number >= 0 (e.g. 1e-4), got '%s'", opt, v);
    } else if (!strcmp(opt, "--dim")) {
        NEEDS_VALUE();
        if (a->n_dims == MAX_DIMS || !parse_dim(v, a))
            return usage_error("--dim needs NAME=VALUE with VALUE >= 1, got '%s'", v);
    } else if (!strcmp(opt, "--target")) {
        NEEDS_VALUE();
        a->target = v;
    } else if (!strcmp(opt, "--target-file")) {
        NEEDS_VALUE();
        a->target_file = v;
    } else if (!strcmp(opt, "--list-targets")) {
        a->list_targets = true;
    } else if (!strcmp(opt, "--print-ir")) {
        a->print_ir = true;
    } else if (!strcmp(opt, "--quiet")) {
        a->quiet = true;
    } else if (!strcmp(opt, "--dry-run")) {
        a->dry_run = true;
    } else if (!strcmp(opt, "--list-passes")) {
        a->list_passes = true;
    } else {
        return usage_error("unknown option '%s'; a file name that starts with '-' can be "
                           "given as ./%s",
                           opt, opt);
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
    a->policy = TCONV_POLICY_SAME_OR_ASYMMETRIC;
    a->convention = TCONV_CONVENTION_ONNX;
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
            printf("tconv-import %s\n", tconv_version());
            return EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            int rc = parse_option(argc, argv, &i, a);
            if (rc != EXIT_OK)
                return rc;
        } else if (!a->input) {
            a->input = argv[i];
        } else if (!a->positional_output) {
            a->positional_output = argv[i];
        } else {
            return usage_error("too many file arguments ('%s'): give IN.onnx and at most one "
                               "OUT.onnx",
                               argv[i]);
        }
    }
    if (a->list_passes || (a->list_targets && !a->input))
        return -1;
    if (a->target && a->target_file)
        return usage_error("%s", "--target and --target-file: give one");
    if (!a->input)
        return usage_error("no input model given: tconv-import IN.onnx [OUT.onnx] [options]");
    if (a->positional_output) {
        if (a->output && strcmp(a->output, a->positional_output) != 0)
            return usage_error("two outputs given, '%s' and -o '%s': give the output once, as "
                               "OUT.onnx or with -o",
                               a->positional_output, a->output);
        a->output = a->positional_output;
    }
    if (a->output && a->dry_run)
        return usage_error("--dry-run writes nothing: drop the output '%s' or --dry-run",
                           a->output);
    return -1;
}

static void list_passes(void) {
    for (size_t i = 0; i < tconv_builtin_pass_count(); i++)
        printf("%-26s %s\n", tconv_builtin_pass_name(i), tconv_builtin_pass_summary(i));
    printf("\ndefault: %s\n", DEFAULT_PASSES);
}

/* ---------------------------------------------------------------- targets */

static int open_target(const import_args *a, tconv_target **out) {
    char message[MESSAGE_MAX];
    tconv_status st = a->target
                          ? tconv_target_open(a->target, out, message, sizeof message)
                          : tconv_target_open_file(a->target_file, out, message, sizeof message);
    if (st != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s\n", message);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

static int print_target(const tconv_target *t) {
    char *text = NULL;
    if (tconv_target_describe(t, &text) != TCONV_OK) {
        fputs("tconv-import: out of memory\n", stderr);
        return EXIT_BAD_INPUT;
    }
    printf("%s\n", text);
    tconv_free(text);
    return EXIT_OK;
}

/* After a refused --target conversion: every constraint the model still breaks, with sources
 * (the error message has a bound; this list has none). */
static void print_target_breaks(const import_args *a, tconv_model *model) {
    tconv_target *t = NULL;
    size_t n = 0;
    char *text = NULL;
    if (open_target(a, &t) == EXIT_OK && tconv_target_check(t, model, &n, &text) == TCONV_OK && n)
        fprintf(stderr, "tconv-import: %s: %s\n", a->input, text);
    tconv_free(text);
    tconv_target_free(t);
}

/* --list-targets: every built-in target (and the --target-file one) with its constraints. */
static int list_targets(const import_args *a) {
    int rc = EXIT_OK;
    for (size_t i = 0; rc == EXIT_OK && i < tconv_target_builtin_count(); i++) {
        tconv_target *t = NULL;
        char message[MESSAGE_MAX];
        if (tconv_target_open(tconv_target_builtin_name(i), &t, message, sizeof message) !=
            TCONV_OK) {
            fprintf(stderr, "tconv-import: %s\n", message);
            return EXIT_BAD_INPUT;
        }
        rc = print_target(t);
        tconv_target_free(t);
    }
    if (rc == EXIT_OK && a->target_file) {
        tconv_target *t = NULL;
        rc = open_target(a, &t);
        if (rc == EXIT_OK)
            rc = print_target(t);
        tconv_target_free(t);
    }
    return rc;
}

/* ---------------------------------------------------------------- --check */

static void print_check_result(const tconv_comparison *c, const import_args *a) {
    char shown[256]; /* names from the file: escaped for the terminal */
    for (size_t i = 0; i < tconv_comparison_output_count(c); i++) {
        bool ok = tconv_comparison_output_matches(c, i);
        fprintf(stderr, "check: output '%s': max_abs_err=%.3g max_rel_err=%.3g over %ld runs: %s\n",
                tconv_escape_text(shown, sizeof shown, tconv_comparison_output_name(c, i)),
                tconv_comparison_max_abs_error(c, i), tconv_comparison_max_rel_error(c, i),
                a->check_runs, ok ? "ok" : "MISMATCH");
        if (!ok)
            fprintf(stderr, "check:   %s\n", tconv_comparison_output_failure(c, i));
    }
}

static tconv_status configure_check(tconv_comparison *c, const import_args *a) {
    tconv_status st = tconv_comparison_set_runs(c, (size_t)a->check_runs);
    if (st == TCONV_OK)
        st = tconv_comparison_set_seed(c, a->seed);
    if (st == TCONV_OK)
        st = tconv_comparison_set_tolerance(c, a->rtol, a->atol);
    if (st == TCONV_OK)
        st = tconv_comparison_set_limits(c, a->limits.limits);
    if (st == TCONV_OK) /* the original means what the rewrite assumed */
        st = tconv_comparison_set_convention(c, a->convention);
    for (size_t i = 0; st == TCONV_OK && i < a->n_dims; i++)
        st = tconv_comparison_bind_dim(c, a->dims[i].name, a->dims[i].value);
    return st;
}

/* Where the local proof took a node's input shape from, for its line. */
static const char *shape_source_text(const char *shapes) {
    if (!shapes)
        return "unknown";
    if (strcmp(shapes, "inferred") == 0)
        return "inferred";
    if (strcmp(shapes, "given") == 0)
        return "from --dim";
    if (strcmp(shapes, "run") == 0)
        return "from a run of the model";
    return "guessed";
}

static void print_rewrite_proofs(const tconv_comparison *c, const import_args *a) {
    char shown[256];
    for (size_t i = 0; i < tconv_comparison_rewrite_count(c); i++) {
        bool ok = tconv_comparison_rewrite_proven(c, i);
        const char *why = tconv_comparison_rewrite_failure(c, i);
        bool mismatch = !ok && tconv_comparison_rewrite_runs(c, i) > 0;
        if (a->quiet && ok)
            continue;
        fprintf(stderr,
                "check: node '%s' alone: %s on %s (%zu runs, shape %s): max_abs_err=%.3g "
                "max_rel_err=%.3g\n",
                tconv_escape_text(shown, sizeof shown, tconv_comparison_rewrite_node(c, i)),
                ok         ? "ok"
                : mismatch ? "MISMATCH"
                           : "not proven",
                tconv_comparison_rewrite_sizes(c, i) ? tconv_comparison_rewrite_sizes(c, i) : "-",
                tconv_comparison_rewrite_runs(c, i),
                shape_source_text(tconv_comparison_rewrite_shapes(c, i)),
                tconv_comparison_rewrite_max_abs_error(c, i),
                tconv_comparison_rewrite_max_rel_error(c, i));
        if (why)
            fprintf(stderr, "check:   %s\n", why);
    }
    size_t guessed = 0;
    for (size_t i = 0; i < tconv_comparison_rewrite_count(c); i++) {
        const char *shapes = tconv_comparison_rewrite_shapes(c, i);
        guessed += shapes && strcmp(shapes, "guessed") == 0;
    }
    if (guessed)
        fprintf(
            stderr,
            "tconv-import: warning: %zu rewritten node(s) proven alone at guessed input sizes "
            "only, not at their real ones (no shape inferred or declared, no run of the model): "
            "give those dims with --dim or declare the shapes\n",
            guessed);
}

/* What the whole-model part of the check found. */
typedef struct whole_result {
    const char *status; /* "proven", "skipped", "mismatch", "error" */
    char *reason;       /* malloc'd, or NULL */
} whole_result;

/* The whole model, original against converted, where the runtime has every op; else skipped,
 * naming every op it lacks (with counts) at once. */
static void prove_whole(tconv_comparison *c, tconv_model *original, tconv_model *converted,
                        const import_args *a, whole_result *w) {
    size_t n_missing = 0;
    char *missing = NULL;
    if (tconv_runtime_missing_ops(original, &n_missing, &missing) == TCONV_OK && n_missing) {
        w->status = "skipped";
        size_t size = strlen(missing) + 64;
        if ((w->reason = malloc(size)))
            snprintf(w->reason, size, "the runtime lacks %s", missing);
        if (!a->quiet)
            fprintf(stderr, "check: whole model: skipped: the runtime lacks %s\n", missing);
        tconv_free(missing);
        return;
    }
    tconv_free(missing);
    tconv_status st = tconv_comparison_run(c, original, converted);
    if (st == TCONV_OK || (st == TCONV_ERR_MISMATCH && tconv_comparison_output_count(c) > 0)) {
        w->status = st == TCONV_OK ? "proven" : "mismatch";
        if (st != TCONV_OK || !a->quiet)
            print_check_result(c, a);
        return;
    }
    w->status = "error";
    w->reason = strdup(tconv_comparison_last_error(c));
    fprintf(stderr, "tconv-import: %s: check could not run: %s\n", a->input,
            tconv_comparison_last_error(c));
    tc_cli_limits_hint(stderr, "tconv-import", st);
}

/* Exit code of the check: a mismatch anywhere 1; the whole model not run (not for want of ops)
 * 2; a rewrite proven neither alone nor by the whole model 2. */
static int check_exit_code(const tconv_comparison *c, tconv_status local, const whole_result *w,
                           const import_args *a) {
    bool local_mismatch = false;
    for (size_t i = 0; i < tconv_comparison_rewrite_count(c); i++)
        local_mismatch |=
            !tconv_comparison_rewrite_proven(c, i) && tconv_comparison_rewrite_runs(c, i) > 0;
    if (local_mismatch || strcmp(w->status, "mismatch") == 0)
        return EXIT_CHECK_FAILED;
    if (strcmp(w->status, "error") == 0)
        return EXIT_BAD_INPUT;
    if (local != TCONV_OK && strcmp(w->status, "proven") != 0) {
        fprintf(stderr, "tconv-import: %s: check could not prove every rewrite: %s\n", a->input,
                tconv_comparison_last_error(c));
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* --check N: every rewrite proven alone (the original node against its emitted nodes), then the
 * whole model where the runtime has every op; all unfused and under the rewrite's convention
 * (tconv_comparison, the library's one compare). *proof_json gets the proof for --report.
 * Returns an exit code. */
static int run_check(tconv_model *original, tconv_model *converted, const tconv_report *report,
                     const import_args *a, char **proof_json) {
    tconv_comparison *c = NULL;
    whole_result w = {"error", NULL};
    tconv_status st = tconv_comparison_new(&c);
    if (st == TCONV_OK)
        st = configure_check(c, a);
    if (st != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s: check could not run: %s\n", a->input,
                c ? tconv_comparison_last_error(c) : tconv_status_name(st));
        tconv_comparison_free(c);
        return EXIT_BAD_INPUT;
    }
    tconv_status local = tconv_comparison_run_rewrites(c, original, converted, report);
    if (local == TCONV_ERR_NOMEM || local == TCONV_ERR_USAGE) {
        fprintf(stderr, "tconv-import: %s: check could not run: %s\n", a->input,
                tconv_comparison_last_error(c));
        tconv_comparison_free(c);
        return EXIT_BAD_INPUT;
    }
    print_rewrite_proofs(c, a);
    prove_whole(c, original, converted, a, &w);
    int rc = check_exit_code(c, local, &w, a);
    if (tconv_comparison_proof_json(c, w.status, w.reason, proof_json) != TCONV_OK)
        *proof_json = NULL;
    free(w.reason);
    tconv_comparison_free(c);
    return rc;
}

/* ---------------------------------------------------------------- main flow */

static int load_model(const char *path, tconv_model **out, const import_args *a) {
    char message[MESSAGE_MAX];
    tconv_status st = tconv_model_read_file(path, a->limits.limits, out, message, sizeof message);
    if (st != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s\n", message);
        tc_cli_limits_hint(stderr, "tconv-import", st);
        return EXIT_BAD_INPUT;
    }
    size_t sorted = tconv_model_sorted_graph_count(*out);
    if (sorted && !a->quiet)
        fprintf(stderr,
                "tconv-import: warning: %s: nodes were not in topological order in %zu "
                "graph(s); they were sorted\n",
                path, sorted);
    return EXIT_OK;
}

static void print_rewrite_summary(const tconv_report *report) {
    size_t n = tconv_report_rewrite_count(report);
    char shown[256];
    fprintf(stderr, "tconv-import: rewrote %zu ConvTranspose node(s)", n);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i ? ", " : ": ",
                tconv_escape_text(shown, sizeof shown, tconv_report_rewritten_node(report, i)));
    fputs("\ntconv-import: ops:", stderr);
    for (size_t i = 0; i < tconv_report_op_type_count(report); i++) {
        const char *op = tconv_report_op_type(report, i);
        size_t b = tconv_report_ops_before(report, op), c = tconv_report_ops_after(report, op);
        if (b != c)
            fprintf(stderr, " %s %zu->%zu", tconv_escape_text(shown, sizeof shown, op), b, c);
    }
    fputs(n ? "\n" : " unchanged\n", stderr);
}

/* Prints the text of tconv_model_format_ir or tconv_model_format_summary on stdout. */
static int print_formatted(tconv_model *model, tconv_status (*format)(tconv_model *, char **)) {
    char *text = NULL;
    if (format(model, &text) != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s\n", tconv_model_last_error(model));
        return EXIT_BAD_INPUT;
    }
    fputs(text, stdout);
    tconv_free(text);
    return EXIT_OK;
}

static int print_ir(tconv_model *model) {
    return print_formatted(model, tconv_model_format_ir);
}

/* --print-ir-after PASS (or all): called by the pipeline after each pass. */
static void print_after_pass(const char *pass_name, tconv_model *model, void *user_data) {
    const char *wanted = user_data;
    if (strcmp(wanted, "all") == 0 || strcmp(wanted, pass_name) == 0) {
        printf("// IR after %s\n", pass_name);
        print_ir(model);
    }
}

static bool is_builtin_pass(const char *name) {
    for (size_t i = 0; i < tconv_builtin_pass_count(); i++) {
        if (strcmp(tconv_builtin_pass_name(i), name) == 0)
            return true;
    }
    return false;
}

static tconv_status run_pipeline(const import_args *a, tconv_model *model, tconv_report **report) {
    tconv_pipeline *p = NULL;
    tconv_status st = tconv_pipeline_new(&p);
    if (st == TCONV_OK)
        st = tconv_pipeline_set_passes(p, a->passes);
    if (st == TCONV_OK)
        st = tconv_pipeline_set_policy(p, a->policy);
    if (st == TCONV_OK)
        st = tconv_pipeline_set_convention(p, a->convention);
    if (st == TCONV_OK && a->target)
        st = tconv_pipeline_set_target(p, a->target);
    if (st == TCONV_OK && a->target_file)
        st = tconv_pipeline_set_target_file(p, a->target_file);
    if (st == TCONV_OK && a->print_ir_after)
        st = tconv_pipeline_set_after_pass(p, print_after_pass, (void *)a->print_ir_after);
    if (st != TCONV_OK)
        tconv_model_set_error(model, st, p ? tconv_pipeline_last_error(p) : "out of memory");
    else
        st = tconv_pipeline_run(p, model, report);
    tconv_pipeline_free(p);
    return st;
}

static int convert(const import_args *a, tconv_model *model, tconv_report **report) {
    if (a->print_ir_after && strcmp(a->print_ir_after, "all") != 0 &&
        !is_builtin_pass(a->print_ir_after)) {
        fprintf(stderr, "tconv-import: %s: --print-ir-after: unknown pass '%s'\n", a->input,
                a->print_ir_after);
        return EXIT_BAD_INPUT;
    }
    if (run_pipeline(a, model, report) != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s: %s\n", a->input, tconv_model_last_error(model));
        if (a->target || a->target_file)
            print_target_breaks(a, model);
        return EXIT_BAD_INPUT;
    }
    for (size_t i = 0; !a->quiet && i < tconv_report_warning_count(*report); i++)
        fprintf(stderr, "tconv-import: warning: %s\n", tconv_report_warning(*report, i));
    if (!a->quiet)
        print_rewrite_summary(*report);
    return EXIT_OK;
}

/* The report's JSON, with "proof" (what --check found) added when the check ran. */
static int write_report(const import_args *a, const tconv_report *report, const char *proof) {
    char message[MESSAGE_MAX] = "";
    char *json = NULL;
    tconv_status st = tconv_report_to_json(report, &json);
    char *end = json ? strrchr(json, '}') : NULL;
    if (st == TCONV_OK && proof && end) {
        size_t head = (size_t)(end - json), size = head + strlen(proof) + 32;
        char *joined = malloc(size);
        if (joined)
            snprintf(joined, size, "%.*s,\n  \"proof\": %s\n}\n", (int)head, json, proof);
        tconv_free(json);
        json = joined;
    }
    if (st == TCONV_OK && json)
        st = tconv_write_file(a->report_path, json, strlen(json), message, sizeof message);
    else
        snprintf(message, sizeof message, "%s: cannot write the report (%s)", a->report_path,
                 tconv_status_name(st == TCONV_OK ? TCONV_ERR_NOMEM : st));
    free(json);
    if (st != TCONV_OK || message[0])
        fprintf(stderr, "tconv-import: %s\n", message);
    return st == TCONV_OK && !message[0] ? EXIT_OK : EXIT_BAD_INPUT;
}

static int save_model(const import_args *a, tconv_model *model) {
    if (tconv_model_write_file(model, a->output) != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s\n", tconv_model_last_error(model));
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

/* The op types of a report's JSON node list, in order: " Unsqueeze, ConvTranspose, Squeeze". */
static void print_op_types(const char *json) {
    static const char key[] = "\"op_type\": \"";
    const char *sep = " ";
    for (const char *p = strstr(json, key); p; p = strstr(p, key)) {
        p += sizeof key - 1;
        size_t len = strcspn(p, "\"");
        printf("%s%.*s", sep, (int)len, p);
        sep = ", ";
    }
    putchar('\n');
}

/* --target without -o: what the target rejects in the model as it is (the checker), then what
 * the rewrite would do (the pipeline on a copy). Exit 0 when the rewrite would make every node
 * acceptable, 2 when it would refuse. */
static int lint_target(const import_args *a, tconv_model *model) {
    tconv_target *t = NULL;
    int rc = open_target(a, &t);
    size_t n = 0;
    char *text = NULL;
    if (rc == EXIT_OK && tconv_target_check(t, model, &n, &text) != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s: %s\n", a->input, tconv_model_last_error(model));
        rc = EXIT_BAD_INPUT;
    }
    if (rc == EXIT_OK) {
        if (n)
            printf("as is: %s\n", text);
        else
            printf("as is: target %s takes every node\n", tconv_target_name(t));
    }
    tconv_free(text);
    tconv_model *copy = NULL;
    tconv_report *report = NULL;
    if (rc == EXIT_OK && tconv_model_clone(model, &copy) != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s: %s\n", a->input, tconv_model_last_error(model));
        rc = EXIT_BAD_INPUT;
    }
    if (rc == EXIT_OK && run_pipeline(a, copy, &report) != TCONV_OK) {
        printf("rewrite: refused: %s\n", tconv_model_last_error(copy));
        rc = EXIT_BAD_INPUT;
    } else if (rc == EXIT_OK) {
        size_t count = tconv_report_rewrite_count(report);
        printf("rewrite: %zu ConvTranspose node(s) rewritten for %s\n", count,
               tconv_target_name(t));
        char shown[256];
        for (size_t i = 0; i < count; i++) {
            printf("  %s ->",
                   tconv_escape_text(shown, sizeof shown, tconv_report_rewritten_node(report, i)));
            print_op_types(tconv_report_new_nodes(report, i));
        }
    }
    tconv_report_free(report);
    tconv_model_free(copy);
    tconv_target_free(t);
    return rc;
}

static int run_import(const import_args *a) {
    tconv_model *model = NULL, *original = NULL;
    tconv_report *report = NULL;
    int rc = check_output_paths(a);
    if (rc == EXIT_OK)
        rc = load_model(a->input, &model, a);
    bool transforms =
        a->output || a->dry_run || a->check_runs || a->report_path || a->print_ir_after;
    if (rc == EXIT_OK && !transforms && (a->target || a->target_file)) {
        rc = lint_target(a, model);
        tconv_model_free(model);
        return rc;
    }
    if (rc == EXIT_OK && !transforms) {
        rc = print_formatted(model,
                             a->print_ir ? tconv_model_format_ir : tconv_model_format_summary);
        tconv_model_free(model);
        return rc;
    }
    if (rc == EXIT_OK && a->report_path &&
        tconv_model_check_output_path(model, a->report_path) != TCONV_OK) {
        fprintf(stderr, "tconv-import: %s\n", tconv_model_last_error(model));
        rc = EXIT_BAD_INPUT; /* the report would replace the input model or its data */
    }
    if (rc == EXIT_OK && a->check_runs)
        rc = load_model(a->input, &original, a);
    if (rc == EXIT_OK && (a->n_dims || a->check_runs) &&
        !tc_cli_dims_check(model, a->dims, a->n_dims, a->check_runs > 0, "tconv-import", a->input,
                           stderr))
        rc = EXIT_BAD_INPUT;
    if (rc == EXIT_OK)
        rc = convert(a, model, &report);
    if (rc == EXIT_OK && a->print_ir)
        rc = print_ir(model);
    char *proof = NULL;
    if (rc == EXIT_OK && a->check_runs)
        rc = run_check(original, model, report, a, &proof);
    if ((rc == EXIT_OK || (rc == EXIT_CHECK_FAILED && proof)) && a->report_path) {
        int written = write_report(a, report, proof); /* says why a check failed, too */
        rc = rc == EXIT_OK ? written : rc;
    }
    tconv_free(proof);
    if (rc == EXIT_OK && a->output)
        rc = save_model(a, model);
    else if (rc == EXIT_CHECK_FAILED && a->output)
        fprintf(stderr, "tconv-import: check failed: %s was not written\n", a->output);
    tconv_report_free(report);
    tconv_model_free(original);
    tconv_model_free(model);
    return rc;
}

static void free_args(import_args *a) {
    for (size_t i = 0; i < a->n_dims; i++)
        free((char *)a->dims[i].name);
    a->n_dims = 0;
    tc_cli_limits_free(&a->limits);
}

int main(int argc, char **argv) {
    tc_cli_install_signal_handlers();
    import_args args;
    int rc = parse_args(argc, argv, &args);
    if (rc < 0 && args.list_passes) {
        list_passes();
        rc = EXIT_OK;
    } else if (rc < 0 && args.list_targets) {
        rc = list_targets(&args);
    } else if (rc < 0) {
        rc = run_import(&args);
    }
    free_args(&args);
    return rc;
}
