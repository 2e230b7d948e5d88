/* tconv-run: runs ONNX test directories and compares with their expected outputs, or runs one
 * model on given or seeded random inputs and prints output checksums.
 *
 * Exit codes: 0 ok, 1 a comparison (or a data set's run) failed, 2 bad input or usage. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api_internal.h"
#include "cli/cli_limits.h"
#include "cli/cli_signals.h"
#include "importer/importer.h"
#include "runtime/kernel_util.h"
#include "runtime/session.h"

#define EXIT_OK 0
#define EXIT_MISMATCH 1
#define EXIT_BAD_INPUT 2
#define MAX_NAMED 256
#define MAX_DATA_FILES 1024

typedef struct named_arg {
    const char *name;
    const char *value;
} named_arg;

typedef struct run_options {
    double rtol, atol;
    uint64_t seed;
    int n_threads;
    const char *save_dir;
    named_arg inputs[MAX_NAMED];
    size_t n_inputs;
    tc_dim_binding dims[MAX_NAMED];
    size_t n_dims;
    const char *paths[MAX_NAMED];
    size_t n_paths;
    bool seed_given;
    tc_cli_limits limits;
} run_options;

static void print_usage(FILE *out) {
    fputs("usage: tconv-run DIR... [--rtol R] [--atol A] [--threads N]\n"
          "       tconv-run MODEL.onnx [--seed S] [--input NAME=FILE.pb]... [--dim NAME=VALUE]...\n"
          "                 [--save-outputs DIR] [--threads N]\n"
          "       tconv-run --help | --version\n"
          "\n"
          "DIR is an ONNX test directory: model.onnx and test_data_set_*/input_N.pb, output_N.pb.\n"
          "Every data set is run and each output compared with |got - expected| <= atol + rtol *\n"
          "|expected| (defaults: --rtol 1e-4, --atol 1e-5); one PASS/FAIL line per data set.\n"
          "\n"
          "With MODEL.onnx, inputs come from --input files or seeded random data (float in\n"
          "[-1, 1]); --dim gives dynamic (symbolic) dims a value. Each output's name, shape and\n"
          "checksum (sum, sum of |x|) is printed; --save-outputs writes them as output_N.pb.\n"
          "\n",
          out);
    tc_cli_limits_usage(out);
    fputs("\nExit status: 0 ok, 1 mismatch or failed data set, 2 bad input (including a limit\n"
          "reached) or usage.\n",
          out);
}

/* ---------------------------------------------------------------- argument parsing */

static int usage_error(const char *fmt, const char *arg) {
    fputs("tconv-run: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(try tconv-run --help)\n", stderr);
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
        return usage_error("expected NAME=VALUE after %s", opt);
    if (strcmp(opt, "--input") == 0) {
        if (o->n_inputs >= MAX_NAMED)
            return usage_error("too many %s options", opt);
        o->inputs[o->n_inputs++] = na;
        return EXIT_OK;
    }
    int64_t v;
    if (!parse_i64(na.value, 0, &v))
        return usage_error("--dim needs a non-negative integer value, got '%s'", na.value);
    if (o->n_dims >= MAX_NAMED)
        return usage_error("too many %s options", opt);
    o->dims[o->n_dims].name = na.name;
    o->dims[o->n_dims++].value = v;
    return EXIT_OK;
}

static int parse_option(run_options *o, int argc, char **argv, int *i) {
    static const char *const with_value[] = {"--rtol",         "--atol",  "--seed", "--threads",
                                             "--save-outputs", "--input", "--dim"};
    const char *opt = NULL;
    for (size_t k = 0; k < sizeof with_value / sizeof with_value[0] && !opt; k++) {
        if (is_option(argv[*i], with_value[k]))
            opt = with_value[k];
    }
    if (!opt)
        return usage_error("unknown option '%s'", argv[*i]);
    char *value = option_value(argc, argv, i, opt);
    if (!value)
        return usage_error("%s needs a value", opt);
    int64_t n;
    if (strcmp(opt, "--rtol") == 0 || strcmp(opt, "--atol") == 0) {
        if (!parse_double(value, strcmp(opt, "--rtol") == 0 ? &o->rtol : &o->atol))
            return usage_error("bad tolerance '%s'", value);
    } else if (strcmp(opt, "--seed") == 0) {
        if (!parse_i64(value, 0, &n))
            return usage_error("bad seed '%s'", value);
        o->seed = (uint64_t)n;
        o->seed_given = true;
    } else if (strcmp(opt, "--threads") == 0) {
        if (!parse_i64(value, 1, &n) || n > 1024)
            return usage_error("bad thread count '%s'", value);
        o->n_threads = (int)n;
    } else if (strcmp(opt, "--save-outputs") == 0) {
        o->save_dir = value;
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
            printf("tconv-run %s\n", TCONV_VERSION_STRING);
            return EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            int rc = parse_option(o, argc, argv, &i);
            if (rc != EXIT_OK)
                return rc;
            continue;
        }
        if (o->n_paths >= MAX_NAMED)
            return usage_error("too many paths (at most %s)", "256");
        o->paths[o->n_paths++] = argv[i];
    }
    if (o->n_paths == 0)
        return usage_error("%s", "no test directory or model given");
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

static char *join_path(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void release_tensors(tc_rt_tensor *t, size_t n) {
    for (size_t i = 0; t && i < n; i++)
        tc_rt_tensor_release(&t[i]);
}

/* Loads the model and prepares a session for it. *bad_input when the model cannot be loaded or
 * exceeds a limit (exit 2), not when it merely cannot run (an unsupported op: exit 1). */
static tconv_status open_session(const char *model_path, const run_options *o, tconv_model **model,
                                 tc_session **session, bool *bad_input, tc_error *err) {
    *session = NULL;
    *bad_input = true;
    tconv_status st = tc_model_load_file(model_path, &o->limits.load, model, NULL, err);
    if (st != TCONV_OK)
        return st;
    tc_session_options so;
    tc_session_options_init(&so);
    so.n_threads = o->n_threads;
    so.max_memory_bytes = o->limits.max_memory_bytes;
    st = tc_session_create(*model, &so, session, err);
    *bad_input = st == TCONV_ERR_LIMIT;
    if (st != TCONV_OK)
        tc_error_prefix(err, st, "%s: ", model_path);
    return st;
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

static int compare_data_set_name(const void *a, const void *b) {
    const char *sa = *(const char *const *)a, *sb = *(const char *const *)b;
    long na = strtol(sa + strlen("test_data_set_"), NULL, 10);
    long nb = strtol(sb + strlen("test_data_set_"), NULL, 10);
    return na != nb ? (na < nb ? -1 : 1) : strcmp(sa, sb);
}

/* Names of the test_data_set_* folders, sorted by number. */
static tconv_status list_data_sets(const char *dir, char ***names, size_t *count, tc_error *err) {
    DIR *d = opendir(dir);
    if (!d)
        return tc_error_set(err, TCONV_ERR_IO, "%s: cannot open directory: %s", dir,
                            strerror(errno));
    char **list = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    tconv_status st = TCONV_OK;
    while (st == TCONV_OK && (e = readdir(d))) {
        if (strncmp(e->d_name, "test_data_set_", 14) != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            char **grown = realloc(list, cap * sizeof *list);
            if (!grown) {
                st = tc_error_nomem(err, "a directory listing");
                break;
            }
            list = grown;
        }
        if (!(list[n] = strdup(e->d_name)))
            st = tc_error_nomem(err, "a directory listing");
        else
            n++;
    }
    closedir(d);
    if (st == TCONV_OK && n == 0)
        st = tc_error_set(err, TCONV_ERR_USAGE, "%s: no test_data_set_* directories", dir);
    if (st != TCONV_OK) {
        for (size_t i = 0; i < n; i++)
            free(list[i]);
        free(list);
        return st;
    }
    qsort(list, n, sizeof *list, compare_data_set_name);
    *names = list;
    *count = n;
    return TCONV_OK;
}

/* Loads prefix_0.pb, prefix_1.pb, ... from a data set folder. */
static tconv_status load_numbered(const char *set_dir, const char *prefix, tc_rt_tensor *out,
                                  size_t cap, size_t *count, tc_error *err) {
    *count = 0;
    for (size_t i = 0; i < cap; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s_%zu.pb", prefix, i);
        char *path = join_path(set_dir, name);
        if (!path)
            return tc_error_nomem(err, "a path");
        if (!file_exists(path)) {
            free(path);
            return TCONV_OK;
        }
        tconv_status st = tc_api_tensor_load_pb(path, &out[i], err);
        free(path);
        if (st != TCONV_OK)
            return st;
        (*count)++;
    }
    return TCONV_OK;
}

typedef struct data_set {
    tc_rt_tensor inputs[MAX_DATA_FILES], expected[MAX_DATA_FILES];
    size_t n_inputs, n_expected;
} data_set;

static tconv_status load_data_set(data_set *ds, const char *set_dir, tc_error *err) {
    tconv_status st =
        load_numbered(set_dir, "input", ds->inputs, MAX_DATA_FILES, &ds->n_inputs, err);
    if (st == TCONV_OK)
        st = load_numbered(set_dir, "output", ds->expected, MAX_DATA_FILES, &ds->n_expected, err);
    return st;
}

/* Compares every output; on failure err says which output and how. */
static tconv_status compare_outputs(const tc_session *session, const tc_rt_tensor *actual,
                                    const data_set *ds, const run_options *o, double *max_abs,
                                    tc_error *err) {
    *max_abs = 0.0;
    size_t n = tc_session_output_count(session);
    if (ds->n_expected != n)
        return tc_error_set(err, TCONV_ERR_MISMATCH,
                            "%zu expected output files, the model has %zu outputs", ds->n_expected,
                            n);
    tconv_status result = TCONV_OK;
    tc_error first;
    tc_error_clear(&first);
    for (size_t i = 0; i < n; i++) {
        double abs_err, rel_err;
        tc_error e;
        tconv_status st = tc_rt_tensor_compare(&actual[i], &ds->expected[i], o->rtol, o->atol,
                                               &abs_err, &rel_err, &e);
        if (abs_err > *max_abs || isnan(abs_err))
            *max_abs = abs_err;
        if (st != TCONV_OK && result == TCONV_OK) {
            result = st;
            first = e;
            tc_error_prefix(&first, st, "output '%s': ", tc_session_output(session, i)->name);
        }
    }
    if (result != TCONV_OK)
        *err = first;
    return result;
}

static void run_data_set(tc_session *session, const char *label, const char *set_dir,
                         const run_options *o, tally *t) {
    data_set *ds = calloc(1, sizeof *ds);
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = ds ? load_data_set(ds, set_dir, &err) : TCONV_ERR_NOMEM;
    bool bad_input = st != TCONV_OK;
    size_t n_out = tc_session_output_count(session);
    tc_rt_tensor *outputs = calloc(n_out ? n_out : 1, sizeof *outputs);
    if (st == TCONV_OK && !outputs)
        st = tc_error_nomem(&err, "outputs");
    if (st == TCONV_OK)
        st = tc_session_run(session, ds->inputs, ds->n_inputs, outputs, &err);
    double max_abs = 0.0;
    if (st == TCONV_OK)
        st = compare_outputs(session, outputs, ds, o, &max_abs, &err);
    if (st == TCONV_OK) {
        printf("PASS %s max_abs_err=%.3g\n", label, max_abs);
        t->passed++;
    } else {
        printf("FAIL %s %s\n", label, err.message[0] ? err.message : tconv_status_name(st));
        t->failed++;
        bad_input = bad_input || st == TCONV_ERR_LIMIT;
        raise_exit(t, bad_input ? EXIT_BAD_INPUT : EXIT_MISMATCH);
        if (bad_input) { /* broken data, not a wrong result: say so where errors go */
            fprintf(stderr, "tconv-run: %s\n",
                    err.message[0] ? err.message : tconv_status_name(st));
            tc_cli_limits_hint(stderr, "tconv-run", st);
        }
    }
    if (outputs)
        release_tensors(outputs, n_out);
    free(outputs);
    if (ds) {
        release_tensors(ds->inputs, ds->n_inputs);
        release_tensors(ds->expected, ds->n_expected);
    }
    free(ds);
}

static char *trimmed_copy(const char *path) {
    char *p = strdup(path);
    size_t n = p ? strlen(p) : 0;
    while (p && n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    return p;
}

/* Every data set of the directory: one line each. A model that cannot be loaded (bad input) or
 * run (e.g. an unsupported op) is reported once for each data set. */
static void run_test_dir(const char *path, const run_options *o, tally *t) {
    char *dir = trimmed_copy(path);
    char *model_path = dir ? join_path(dir, "model.onnx") : NULL;
    char **sets = NULL;
    size_t n_sets = 0;
    tc_error err;
    tc_error_clear(&err);
    tconv_status st =
        model_path ? list_data_sets(dir, &sets, &n_sets, &err) : tc_error_nomem(&err, "a path");
    tconv_model *model = NULL;
    tc_session *session = NULL;
    bool bad_input = true;
    if (st == TCONV_OK)
        st = open_session(model_path, o, &model, &session, &bad_input, &err);
    if (st != TCONV_OK) {
        fprintf(stderr, "tconv-run: %s\n", err.message);
        tc_cli_limits_hint(stderr, "tconv-run", st);
    }
    if (st != TCONV_OK && n_sets == 0) {
        printf("FAIL %s %s\n", dir ? dir : path, err.message);
        t->failed++;
        raise_exit(t, EXIT_BAD_INPUT);
    }
    for (size_t i = 0; i < n_sets; i++) {
        char *label = join_path(dir, sets[i]);
        if (st != TCONV_OK) {
            printf("FAIL %s %s\n", label ? label : sets[i], err.message);
            t->failed++;
            raise_exit(t, bad_input ? EXIT_BAD_INPUT : EXIT_MISMATCH);
        } else if (label) {
            run_data_set(session, label, label, o, t);
        }
        free(label);
        free(sets[i]);
    }
    free(sets);
    tc_session_free(session);
    tconv_model_free(model);
    free(model_path);
    free(dir);
}

static int run_test_dirs(const run_options *o) {
    if (o->n_inputs || o->n_dims || o->save_dir || o->seed_given)
        return usage_error("%s", "--input, --dim, --seed and --save-outputs need a model file");
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

static tconv_status check_named_inputs(const tc_session *s, const run_options *o, tc_error *err) {
    for (size_t i = 0; i < o->n_inputs; i++) {
        bool found = false;
        for (size_t k = 0; k < tc_session_input_count(s) && !found; k++)
            found = strcmp(tc_session_input(s, k)->name, o->inputs[i].name) == 0;
        if (!found)
            return tc_error_set(err, TCONV_ERR_USAGE,
                                "--input %s: the model has no input of that name (inputs "
                                "that are initializers cannot be fed)",
                                o->inputs[i].name);
    }
    return TCONV_OK;
}

static tconv_status make_inputs(const tc_session *s, const run_options *o, tc_rt_tensor *inputs,
                                tc_error *err) {
    tconv_status st = check_named_inputs(s, o, err);
    for (size_t i = 0; st == TCONV_OK && i < tc_session_input_count(s); i++) {
        const tconv_value *v = tc_session_input(s, i);
        const char *file = find_input_file(o, v->name);
        if (file)
            st = tc_api_tensor_load_pb(file, &inputs[i], err);
        else
            st = tc_session_random_input(v, o->seed + i, o->dims, o->n_dims, &inputs[i], err);
        if (st == TCONV_ERR_USAGE)
            tc_error_prefix(err, st,
                            "random input (--dim NAME=VALUE binds a dim, --input NAME=FILE.pb "
                            "gives the data): ");
    }
    return st;
}

static void print_output(const char *name, const tc_rt_tensor *t) {
    double sum = 0.0, abs_sum = 0.0;
    for (int64_t i = 0; i < t->n_elements; i++) {
        double v = tc_rt_get_f64(t, i);
        sum += v;
        abs_sum += fabs(v);
    }
    printf("%s %s [", name, tconv_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++)
        printf("%s%lld", i ? "," : "", (long long)t->dims[i]);
    printf("] sum=%.17g abs_sum=%.17g\n", sum, abs_sum);
}

static tconv_status ensure_dir(const char *dir, tc_error *err) {
    if (is_directory(dir))
        return TCONV_OK;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return tc_error_set(err, TCONV_ERR_IO, "%s: cannot create directory: %s", dir,
                            strerror(errno));
    return TCONV_OK;
}

static tconv_status save_outputs(const tc_session *s, const tc_rt_tensor *outputs,
                                 tconv_model *scratch, const char *dir, tc_error *err) {
    tconv_status st = ensure_dir(dir, err);
    for (size_t i = 0; st == TCONV_OK && i < tc_session_output_count(s); i++) {
        char name[64];
        snprintf(name, sizeof name, "output_%zu.pb", i);
        char *path = join_path(dir, name);
        tconv_tensor *t;
        if (!path)
            return tc_error_nomem(err, "a path");
        st = tc_rt_tensor_to_ir(&outputs[i], scratch, tc_session_output(s, i)->name, &t, err);
        if (st == TCONV_OK)
            st = tc_tensor_save_pb(t, path, err);
        free(path);
    }
    return st;
}

static int run_model(const run_options *o) {
    if (o->n_paths != 1)
        return usage_error("%s", "give test directories, or exactly one model file");
    if (!file_exists(o->paths[0]))
        return usage_error("%s: no such file or directory", o->paths[0]);
    tconv_model *model = NULL, *scratch = NULL;
    tc_session *session = NULL;
    tc_rt_tensor *inputs = NULL, *outputs = NULL;
    size_t n_in = 0, n_out = 0;
    tc_error err;
    tc_error_clear(&err);
    bool bad_input;
    tconv_status st = open_session(o->paths[0], o, &model, &session, &bad_input, &err);
    if (st == TCONV_OK) {
        n_in = tc_session_input_count(session);
        n_out = tc_session_output_count(session);
        inputs = calloc(n_in ? n_in : 1, sizeof *inputs);
        outputs = calloc(n_out ? n_out : 1, sizeof *outputs);
        st = inputs && outputs ? tc_model_create(&scratch, &err) : TCONV_ERR_NOMEM;
    }
    if (st == TCONV_OK && (st = make_inputs(session, o, inputs, &err)) != TCONV_OK)
        tc_error_prefix(&err, st, "%s: ", o->paths[0]);
    if (st == TCONV_OK && (st = tc_session_run(session, inputs, n_in, outputs, &err)) != TCONV_OK)
        tc_error_prefix(&err, st, "%s: ", o->paths[0]);
    for (size_t i = 0; st == TCONV_OK && i < n_out; i++)
        print_output(tc_session_output(session, i)->name, &outputs[i]);
    if (st == TCONV_OK && o->save_dir)
        st = save_outputs(session, outputs, scratch, o->save_dir, &err);
    if (st != TCONV_OK) {
        fprintf(stderr, "tconv-run: %s\n", err.message[0] ? err.message : tconv_status_name(st));
        tc_cli_limits_hint(stderr, "tconv-run", st);
    }
    release_tensors(inputs, n_in);
    release_tensors(outputs, n_out);
    free(inputs);
    free(outputs);
    tc_session_free(session);
    tconv_model_free(scratch);
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
    free(o);
    return rc;
}
