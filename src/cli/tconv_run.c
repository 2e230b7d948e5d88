/* tconv-run: runs ONNX test directories and compares with their expected outputs, or runs one
 * model on given or seeded random inputs and prints output checksums.
 *
 * Exit codes: 0 ok, 1 a comparison (or a data set's run) failed, 2 bad input or usage. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_dims.h"
#include "cli_limits.h"
#include "cli_signals.h"
#include "tconv/tconv.h"

#define EXIT_OK 0
#define EXIT_MISMATCH 1
#define EXIT_BAD_INPUT 2
#define MAX_NAMED 256
#define MESSAGE_MAX 1024
#define PROFILE_TOP 10

typedef struct named_arg {
    const char *name;
    const char *value;
} named_arg;

typedef struct run_options {
    double rtol, atol;
    uint64_t seed;
    const char *save_dir;
    const char *profile_path;
    named_arg inputs[MAX_NAMED];
    size_t n_inputs;
    tc_cli_dim dims[MAX_NAMED];
    size_t n_dims;
    const char *paths[MAX_NAMED];
    size_t n_paths;
    bool seed_given;
    bool unfused;
    tconv_convention convention;
    tc_cli_limits limits;
} run_options;

static void print_usage(FILE *out) {
    fputs("usage: tconv-run DIR... [--rtol R] [--atol A] [--threads N]\n"
          "       tconv-run MODEL.onnx [--seed S] [--input NAME=FILE.pb]... [--dim NAME=VALUE]...\n"
          "                 [--save-outputs DIR] [--threads N]\n"
          "       both: [--convention onnx|ort|ort-legacy] [--no-fusion] [--profile FILE.json]\n"
          "       tconv-run --help | --version\n"
          "\n"
          "DIR is an ONNX test directory: model.onnx and test_data_set_*/input_N.pb, output_N.pb.\n"
          "Every data set is run and each output compared with |got - expected| <= atol + rtol *\n"
          "|expected| (defaults: --rtol 1e-4, --atol 1e-5); one PASS/FAIL line per data set.\n"
          "\n"
          "With MODEL.onnx, inputs come from --input files or seeded random data (float in\n"
          "[-1, 1]); --dim gives dynamic (symbolic) dims a value. Each output's name, shape and\n"
          "checksum (sum, sum of |x|) is printed; --save-outputs writes them as output_N.pb.\n"
          "\n"
          "--convention: whose ConvTranspose semantics to run (default onnx; ort: onnxruntime\n"
          "1.30, and ONNX's for the nodes it refuses; ort-legacy: onnxruntime <= 1.12's pad\n"
          "splits). --no-fusion runs every node as written\n"
          "(by default ConvTranspose -> Slice -> Pad -> Add is computed in one call, and a\n"
          "Conv's or ConvTranspose's activation in the Conv's own call).\n"
          "\n"
          "--profile FILE.json (one model or one test directory): times every node of every run\n"
          "and writes a Chrome trace (chrome://tracing, Perfetto) in onnxruntime's profile\n"
          "layout: per node its op, threads and input/output shapes, and the nodes fused into\n"
          "it. The "
          "10 nodes with the most time are printed on stderr.\n"
          "\n",
          out);
    tc_cli_limits_usage(out);
    fputs("\nExit status: 0 ok, 1 mismatch or failed data set, 2 bad input (including a limit\n"
          "reached) or usage.\n",
          out);
}

/* ---------------------------------------------------------------- argument parsing */

/* Prints "tconv-run: <what went wrong and what to do>" and where to read more: exit 2. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tconv-run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(tconv-run --help lists every option)\n", stderr);
    va_end(ap);
    return EXIT_BAD_INPUT;
}

static bool parse_double(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0.0) || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool parse_i64(const char *s, int64_t min, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min)
        return false;
    *out = (int64_t)v;
    return true;
}

static bool split_named(char *arg, named_arg *out) {
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return false;
    *eq = '\0';
    out->name = arg;
    out->value = eq + 1;
    return true;
}

/* The value of an option given as "--opt value" or "--opt=value"; NULL if missing. */
static char *option_value(int argc, char **argv, int *i, const char *opt) {
    size_t n = strlen(opt);
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static bool is_option(const char *arg, const char *opt) {
    size_t n = strlen(opt);
    return strncmp(arg, opt, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static int parse_named_option(run_options *o, const char *opt, char *value) {
    named_arg na;
    if (!split_named(value, &na))
        return usage_error("%s needs NAME=VALUE (e.g. %s x=%s), got '%s'", opt, opt,
                           strcmp(opt, "--input") == 0 ? "x.pb" : "4", value);
    if (strcmp(opt, "--input") == 0) {
        if (o->n_inputs >= MAX_NAMED)
            return usage_error("too many %s options", opt);
        o->inputs[o->n_inputs++] = na;
        return EXIT_OK;
    }
    int64_t v;
    if (!parse_i64(na.value, 1, &v))
        return usage_error("--dim needs an integer value >= 1, got '%s'", na.value);
    if (o->n_dims >= MAX_NAMED)
        return usage_error("too many %s options", opt);
    o->dims[o->n_dims].name = na.name;
    o->dims[o->n_dims++].value = v;
    return EXIT_OK;
}

static int parse_option(run_options *o, int argc, char **argv, int *i) {
    static const char *const with_value[] = {"--rtol",    "--atol",         "--seed",
                                             "--threads", "--save-outputs", "--input",
                                             "--dim",     "--convention",   "--profile"};
    if (strcmp(argv[*i], "--no-fusion") == 0) {
        o->unfused = true;
        return EXIT_OK;
    }
    const char *opt = NULL;
    for (size_t k = 0; k < sizeof with_value / sizeof with_value[0] && !opt; k++) {
        if (is_option(argv[*i], with_value[k]))
            opt = with_value[k];
    }
    if (!opt)
        return usage_error("unknown option '%s'; a path that starts with '-' can be given as "
                           "./%s",
                           argv[*i], argv[*i]);
    char *value = option_value(argc, argv, i, opt);
    if (!value)
        return usage_error("%s needs a value: %s VALUE or %s=VALUE", opt, opt, opt);
    int64_t n;
    if (strcmp(opt, "--rtol") == 0 || strcmp(opt, "--atol") == 0) {
        if (!parse_double(value, strcmp(opt, "--rtol") == 0 ? &o->rtol : &o->atol))
            return usage_error("%s needs a number >= 0 (e.g. 1e-4), got '%s'", opt, value);
    } else if (strcmp(opt, "--seed") == 0) {
        if (!parse_i64(value, 0, &n))
            return usage_error("--seed needs an integer >= 0, got '%s'", value);
        o->seed = (uint64_t)n;
        o->seed_given = true;
    } else if (strcmp(opt, "--threads") == 0) {
        if (!parse_i64(value, 1, &n) || n > 1024)
            return usage_error("--threads needs an integer from 1 to 1024, got '%s'", value);
        tconv_limits_set(o->limits.limits, TCONV_LIMIT_THREADS, (uint64_t)n);
    } else if (strcmp(opt, "--convention") == 0) {
        if (!tconv_convention_from_name(value, &o->convention))
            return usage_error("unknown convention '%s' (onnx, ort, ort-legacy)", value);
    } else if (strcmp(opt, "--save-outputs") == 0) {
        o->save_dir = value;
    } else if (strcmp(opt, "--profile") == 0) {
        o->profile_path = value;
    } else {
        return parse_named_option(o, opt, value);
    }
    return EXIT_OK;
}

/* Returns -1 to continue, else an exit code (help/version print and return 0). */
static int parse_args(run_options *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->rtol = 1e-4;
    o->atol = 1e-5;
    tc_cli_limits_init(&o->limits);
    for (int i = 1; i < argc; i++) {
        int limit = tc_cli_limits_parse(&o->limits, "tconv-run", argc, argv, &i);
        if (limit < 0)
            return EXIT_BAD_INPUT;
        if (limit > 0)
            continue;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_usage(stdout);
            return EXIT_OK;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("tconv-run %s\n", tconv_version());
            return EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            int rc = parse_option(o, argc, argv, &i);
            if (rc != EXIT_OK)
                return rc;
            continue;
        }
        if (o->n_paths >= MAX_NAMED)
            return usage_error("too many paths (at most %d): run tconv-run more than once",
                               MAX_NAMED);
        o->paths[o->n_paths++] = argv[i];
    }
    if (o->n_paths == 0)
        return usage_error("no test directory or model given: tconv-run DIR... or tconv-run "
                           "MODEL.onnx");
    if (o->profile_path && o->n_paths != 1)
        return usage_error("%s", "--profile takes one model or one test directory");
    return -1;
}

/* ---------------------------------------------------------------- helpers */

static bool is_directory(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Reads the model and prepares a runner for it. *bad_input (exit 2) when the model cannot be
 * read, exceeds a limit or cannot run here (ops the runtime lacks: every one named once, with
 * its count; an attribute or dtype it does not take), in every mode alike. On failure `message`
 * says why, naming the file. */
static tconv_status open_runner(const char *model_path, const run_options *o, tconv_model **model,
                                tconv_runner **runner, bool *bad_input, char *message,
                                size_t size) {
    *runner = NULL;
    *bad_input = true;
    tconv_status st = tconv_model_read_file(model_path, o->limits.limits, model, message, size);
    if (st != TCONV_OK)
        return st;
    size_t n_missing = 0;
    char *missing = NULL;
    if (tconv_runtime_missing_ops(*model, &n_missing, &missing) == TCONV_OK && n_missing) {
        snprintf(message, size, "%s: the runtime cannot run this model: it has no kernel for %s",
                 model_path, missing);
        tconv_free(missing);
        return TCONV_ERR_UNSUPPORTED;
    }
    tconv_free(missing);
    st = tconv_runner_new_with(*model, o->limits.limits, o->convention, !o->unfused, runner);
    if (st != TCONV_OK)
        snprintf(message, size, "%s: %s", model_path, tconv_model_last_error(*model));
    return st;
}

static void print_failure(const char *what, tconv_status st) {
    fprintf(stderr, "tconv-run: %s\n", what[0] ? what : tconv_status_name(st));
    tc_cli_limits_hint(stderr, "tconv-run", st);
}

/* --profile: refuses a target that is not a regular file, or is one of the model's own files,
 * before anything runs; then turns profiling on. */
static tconv_status start_profile(tconv_model *model, tconv_runner *runner, const run_options *o,
                                  char *message, size_t size) {
    if (!o->profile_path)
        return TCONV_OK;
    tconv_status st = tconv_check_output_path(o->profile_path, message, size);
    if (st == TCONV_OK && (st = tconv_model_check_output_path(model, o->profile_path)) != TCONV_OK)
        snprintf(message, size, "%s", tconv_model_last_error(model));
    if (st == TCONV_OK && (st = tconv_runner_set_profiling(runner, true)) != TCONV_OK)
        snprintf(message, size, "%s: %s", o->profile_path, tconv_runner_last_error(runner));
    return st;
}

/* --profile: writes the trace (atomically) and prints the nodes with the most time. */
static tconv_status finish_profile(tconv_runner *runner, const run_options *o) {
    if (!o->profile_path || !runner)
        return TCONV_OK;
    char *summary = NULL;
    tconv_status st = tconv_runner_write_profile(runner, o->profile_path);
    if (st == TCONV_OK)
        st = tconv_runner_profile_summary(runner, PROFILE_TOP, &summary);
    if (st != TCONV_OK) {
        print_failure(tconv_runner_last_error(runner), st);
        return st;
    }
    fputs(summary, stderr);
    fprintf(stderr, "tconv-run: wrote the profile %s\n", o->profile_path);
    tconv_free(summary);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- test directories */

typedef struct tally {
    int passed, failed;
    int exit_code;
} tally;

static void raise_exit(tally *t, int code) {
    if (code > t->exit_code)
        t->exit_code = code;
}

static void run_data_set(tconv_runner *runner, const char *set_dir, const run_options *o,
                         tally *t) {
    tconv_status st = tconv_runner_load_data_set(runner, set_dir);
    bool bad_input = st != TCONV_OK; /* broken data, not a wrong result */
    if (st == TCONV_OK)
        st = tconv_runner_run(runner);
    double max_abs = 0.0;
    if (st == TCONV_OK)
        st = tconv_runner_check_data_set(runner, set_dir, o->rtol, o->atol, &max_abs, NULL);
    if (st == TCONV_OK) {
        printf("PASS %s max_abs_err=%.3g\n", set_dir, max_abs);
        t->passed++;
        return;
    }
    const char *why = tconv_runner_last_error(runner);
    printf("FAIL %s %s\n", set_dir, why[0] ? why : tconv_status_name(st));
    t->failed++;
    bad_input = bad_input || st == TCONV_ERR_LIMIT || st == TCONV_ERR_IO || st == TCONV_ERR_PARSE ||
                st == TCONV_ERR_UNSUPPORTED; /* the model cannot run here: not a wrong result */
    raise_exit(t, bad_input ? EXIT_BAD_INPUT : EXIT_MISMATCH);
    if (bad_input) /* say so where errors go */
        print_failure(why, st);
}

/* Every data set of the directory: one line each. A model that cannot be loaded (bad input) or
 * run (e.g. an unsupported op) is reported once for each data set. */
static void run_test_dir(const char *path, const run_options *o, tally *t) {
    char message[MESSAGE_MAX];
    tconv_test_dir *dir = NULL;
    tconv_model *model = NULL;
    tconv_runner *runner = NULL;
    bool bad_input = true;
    tconv_status st = tconv_test_dir_open(path, &dir, message, sizeof message);
    if (st == TCONV_OK)
        st = open_runner(tconv_test_dir_model_path(dir), o, &model, &runner, &bad_input, message,
                         sizeof message);
    if (st == TCONV_OK &&
        (st = start_profile(model, runner, o, message, sizeof message)) != TCONV_OK) {
        print_failure(message, st);
        raise_exit(t, EXIT_BAD_INPUT);
        tconv_runner_free(runner);
        tconv_model_free(model);
        tconv_test_dir_free(dir);
        return;
    }
    if (st != TCONV_OK)
        print_failure(message, st);
    if (st != TCONV_OK && tconv_test_dir_data_set_count(dir) == 0) {
        printf("FAIL %s %s\n", path, message);
        t->failed++;
        raise_exit(t, EXIT_BAD_INPUT);
    }
    for (size_t i = 0; i < tconv_test_dir_data_set_count(dir); i++) {
        const char *set = tconv_test_dir_data_set(dir, i);
        if (st != TCONV_OK) {
            printf("FAIL %s %s\n", set, message);
            t->failed++;
            raise_exit(t, EXIT_BAD_INPUT);
        } else {
            run_data_set(runner, set, o, t);
        }
    }
    if (st == TCONV_OK && finish_profile(runner, o) != TCONV_OK)
        raise_exit(t, EXIT_BAD_INPUT);
    tconv_runner_free(runner);
    tconv_model_free(model);
    tconv_test_dir_free(dir);
}

static int run_test_dirs(const run_options *o) {
    if (o->n_inputs || o->n_dims || o->save_dir || o->seed_given)
        return usage_error("--input, --dim, --seed and --save-outputs need a model file: "
                           "tconv-run MODEL.onnx [options] (a test directory brings its own "
                           "inputs)");
    tally t = {0, 0, EXIT_OK};
    for (size_t i = 0; i < o->n_paths; i++) {
        if (!is_directory(o->paths[i])) {
            fprintf(stderr,
                    "tconv-run: %s: not a directory (give test directories, or one "
                    "model file)\n",
                    o->paths[i]);
            raise_exit(&t, EXIT_BAD_INPUT);
            continue;
        }
        run_test_dir(o->paths[i], o, &t);
    }
    printf("%d passed, %d failed\n", t.passed, t.failed);
    return t.exit_code;
}

/* ---------------------------------------------------------------- one model */

static const char *find_input_file(const run_options *o, const char *name) {
    for (size_t i = 0; i < o->n_inputs; i++) {
        if (strcmp(o->inputs[i].name, name) == 0)
            return o->inputs[i].value;
    }
    return NULL;
}

static tconv_status check_named_inputs(tconv_runner *r, const run_options *o, char *message,
                                       size_t size) {
    for (size_t i = 0; i < o->n_inputs; i++) {
        size_t index;
        if (tconv_runner_find_input(r, o->inputs[i].name, &index) != TCONV_OK) {
            snprintf(message, size,
                     "--input %s: the model has no input of that name (inputs that are "
                     "initializers cannot be fed)",
                     o->inputs[i].name);
            return TCONV_ERR_USAGE;
        }
    }
    return TCONV_OK;
}

static tconv_status bind_dims(tconv_runner *r, const run_options *o) {
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < o->n_dims; i++)
        st = tconv_runner_bind_dim(r, o->dims[i].name, o->dims[i].value);
    return st;
}

/* Inputs from --input files, the others seeded random (input i with seed + i). */
static tconv_status set_inputs(tconv_runner *r, const run_options *o) {
    tconv_status st = bind_dims(r, o);
    for (size_t i = 0; st == TCONV_OK && i < tconv_runner_input_count(r); i++) {
        const char *file = find_input_file(o, tconv_runner_input_name(r, i));
        st = file ? tconv_runner_load_input(r, i, file)
                  : tconv_runner_set_random_input(r, i, o->seed + i);
    }
    return st;
}

static void print_output(tconv_runner *r, size_t index) {
    double sum = 0.0, abs_sum = 0.0;
    tconv_runner_output_checksum(r, index, &sum, &abs_sum);
    char shown[256]; /* a name from the file: escaped for the terminal */
    printf("%s %s [", tconv_escape_text(shown, sizeof shown, tconv_runner_output_name(r, index)),
           tconv_dtype_name(tconv_runner_output_dtype(r, index)));
    for (int i = 0; i < tconv_runner_output_rank(r, index); i++)
        printf("%s%lld", i ? "," : "", (long long)tconv_runner_output_dim(r, index, i));
    printf("] sum=%.17g abs_sum=%.17g\n", sum, abs_sum);
}

static tconv_status save_outputs(tconv_runner *r, const char *dir, char *message, size_t size) {
    if (!is_directory(dir) && mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(message, size, "%s: cannot create directory: %s", dir, strerror(errno));
        return TCONV_ERR_IO;
    }
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK && i < tconv_runner_output_count(r); i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/output_%zu.pb", dir, i);
        st = tconv_runner_save_output(r, i, path);
    }
    return st;
}

/* Refuses, before the run, a --save-outputs folder where an output_N.pb would replace one of
 * the model's own files (the model, its external data). A folder not made yet holds none. */
static tconv_status check_save_paths(tconv_model *model, tconv_runner *r, const char *dir,
                                     char *message, size_t size) {
    for (size_t i = 0; dir && is_directory(dir) && i < tconv_runner_output_count(r); i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/output_%zu.pb", dir, i);
        tconv_status st = tconv_model_check_output_path(model, path);
        if (st != TCONV_OK) {
            snprintf(message, size, "%s", tconv_model_last_error(model));
            return st;
        }
    }
    return TCONV_OK;
}

/* Inputs, the run, the printed outputs and the saved ones; on failure `message` says why. */
static tconv_status run_loaded(tconv_runner *r, const run_options *o, char *message, size_t size) {
    tconv_status st = check_named_inputs(r, o, message, size);
    if (st != TCONV_OK)
        return st;
    if ((st = set_inputs(r, o)) == TCONV_OK)
        st = tconv_runner_run(r);
    for (size_t i = 0; st == TCONV_OK && i < tconv_runner_output_count(r); i++)
        print_output(r, i);
    if (st != TCONV_OK) {
        snprintf(message, size, "%s: %s", o->paths[0], tconv_runner_last_error(r));
        return st;
    }
    if (o->save_dir && (st = save_outputs(r, o->save_dir, message, size)) != TCONV_OK &&
        !message[0])
        snprintf(message, size, "%s", tconv_runner_last_error(r));
    return st;
}

static int run_model(const run_options *o) {
    if (o->n_paths != 1)
        return usage_error("give test directories, or exactly one model file (got %zu paths, "
                           "not all of them directories)",
                           o->n_paths);
    if (!file_exists(o->paths[0]))
        return usage_error("%s: no such file or directory", o->paths[0]);
    char message[MESSAGE_MAX] = "";
    tconv_model *model = NULL;
    tconv_runner *runner = NULL;
    bool bad_input;
    tconv_status st =
        open_runner(o->paths[0], o, &model, &runner, &bad_input, message, sizeof message);
    if (st == TCONV_OK &&
        !tc_cli_dims_check(model, o->dims, o->n_dims, false, "tconv-run", o->paths[0], stderr)) {
        tconv_runner_free(runner);
        tconv_model_free(model);
        return EXIT_BAD_INPUT;
    }
    if (st == TCONV_OK)
        st = check_save_paths(model, runner, o->save_dir, message, sizeof message);
    if (st == TCONV_OK)
        st = start_profile(model, runner, o, message, sizeof message);
    if (st == TCONV_OK)
        st = run_loaded(runner, o, message, sizeof message);
    if (st != TCONV_OK)
        print_failure(message, st);
    else
        st = finish_profile(runner, o);
    tconv_runner_free(runner);
    tconv_model_free(model);
    return st == TCONV_OK ? EXIT_OK : EXIT_BAD_INPUT;
}

int main(int argc, char **argv) {
    tc_cli_install_signal_handlers();
    run_options *o = malloc(sizeof *o);
    if (!o) {
        fputs("tconv-run: out of memory\n", stderr);
        return EXIT_BAD_INPUT;
    }
    int rc = parse_args(o, argc, argv);
    if (rc < 0)
        rc = is_directory(o->paths[0]) ? run_test_dirs(o) : run_model(o);
    tc_cli_limits_free(&o->limits);
    free(o);
    return rc;
}
