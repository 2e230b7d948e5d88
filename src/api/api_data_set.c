/* Public API: ONNX test directories (model.onnx + test_data_set_N/input_N.pb, output_N.pb) and
 * what a front-end prints about a run (checksums, the GEMM instruction set). The one
 * implementation of "run an ONNX test directory", used by tconv-run, the tests and bench. */
#include "api/api_internal.h"
#include "ir/vec.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ops.h"
#include "runtime/compute/compute.h"
#include "runtime/kernels/kernels.h"
#include "runtime/session/session.h"

#define DATA_SET_PREFIX "test_data_set_"

struct tconv_test_dir {
    char *model_path;
    char **sets; /* full paths, sorted by set number */
    size_t n_sets;
};

/* ---------------------------------------------------------------- listing a directory */

void tconv_test_dir_free(tconv_test_dir *test_dir) {
    if (!test_dir)
        return;
    for (size_t i = 0; i < test_dir->n_sets; i++)
        free(test_dir->sets[i]);
    free(test_dir->sets);
    free(test_dir->model_path);
    free(test_dir);
}

static char *join_path(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static long set_number(const char *path) {
    const char *base = strrchr(path, '/');
    return strtol((base ? base + 1 : path) + strlen(DATA_SET_PREFIX), NULL, 10);
}

static int compare_sets(const void *a, const void *b) {
    const char *sa = *(const char *const *)a, *sb = *(const char *const *)b;
    long na = set_number(sa), nb = set_number(sb);
    return na != nb ? (na < nb ? -1 : 1) : strcmp(sa, sb);
}

static tconv_status add_set(tconv_test_dir *t, const char *dir, const char *name, size_t *cap,
                            tc_error *err) {
    if (!TC_VEC_RESERVE(t->sets, *cap, t->n_sets + 1))
        return tc_error_nomem(err, "a directory listing");
    if (!(t->sets[t->n_sets] = join_path(dir, name)))
        return tc_error_nomem(err, "a directory listing");
    t->n_sets++;
    return TCONV_OK;
}

static tconv_status list_sets(tconv_test_dir *t, const char *dir, tc_error *err) {
    DIR *d = opendir(dir);
    if (!d)
        return tc_error_set(err, TCONV_ERR_IO, "%s: cannot open directory: %s", dir,
                            strerror(errno));
    size_t cap = 0;
    struct dirent *e;
    tconv_status st = TCONV_OK;
    while (st == TCONV_OK && (e = readdir(d)))
        if (strncmp(e->d_name, DATA_SET_PREFIX, strlen(DATA_SET_PREFIX)) == 0)
            st = add_set(t, dir, e->d_name, &cap, err);
    closedir(d);
    if (st == TCONV_OK && t->n_sets == 0)
        return tc_error_set(err, TCONV_ERR_USAGE, "%s: no " DATA_SET_PREFIX "* directories", dir);
    if (st == TCONV_OK)
        qsort(t->sets, t->n_sets, sizeof *t->sets, compare_sets);
    return st;
}

static tconv_status open_test_dir(const char *path, tconv_test_dir *t, tc_error *err) {
    char *dir = strdup(path);
    if (!dir)
        return tc_error_nomem(err, "a path");
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/';)
        dir[--n] = '\0';
    tconv_status st = (t->model_path = join_path(dir, "model.onnx"))
                          ? list_sets(t, dir, err)
                          : tc_error_nomem(err, "a path");
    free(dir);
    return st;
}

tconv_status tconv_test_dir_open(const char *dir, tconv_test_dir **out, char *message,
                                 size_t message_size) {
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = TCONV_OK;
    tconv_test_dir *t = NULL;
    if (out)
        *out = NULL;
    if (!dir || !out)
        st = tc_error_set(&err, TCONV_ERR_USAGE, "tconv_test_dir_open: dir and out must be set");
    else if (!(t = calloc(1, sizeof *t)))
        st = tc_error_nomem(&err, "a test directory");
    else
        st = open_test_dir(dir, t, &err);
    if (st != TCONV_OK) {
        tconv_test_dir_free(t);
        tc_api_copy_message(message, message_size, err.message);
        return st;
    }
    *out = t;
    tc_api_copy_message(message, message_size, "");
    return TCONV_OK;
}

const char *tconv_test_dir_model_path(const tconv_test_dir *test_dir) {
    return test_dir ? test_dir->model_path : NULL;
}

size_t tconv_test_dir_data_set_count(const tconv_test_dir *test_dir) {
    return test_dir ? test_dir->n_sets : 0;
}

const char *tconv_test_dir_data_set(const tconv_test_dir *test_dir, size_t index) {
    return test_dir && index < test_dir->n_sets ? test_dir->sets[index] : NULL;
}

/* ---------------------------------------------------------------- data sets */

/* How many of dir/<kind>_0.pb, <kind>_1.pb, ... exist (stops at the first gap). */
static size_t count_files(const char *dir, const char *kind) {
    size_t n = 0;
    for (;; n++) {
        char path[4096];
        struct stat sb;
        if ((size_t)snprintf(path, sizeof path, "%s/%s_%zu.pb", dir, kind, n) >= sizeof path ||
            stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            return n;
    }
}

static tconv_status begin_set(tconv_runner *runner, const char *dir, const char *what) {
    if (!runner)
        return TCONV_ERR_USAGE;
    tc_error_clear(&runner->last_error);
    if (!dir)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE, "%s: the path is NULL", what);
    return TCONV_OK;
}

tconv_status tconv_runner_load_data_set(tconv_runner *runner, const char *data_set_dir) {
    tconv_status st = begin_set(runner, data_set_dir, "tconv_runner_load_data_set");
    if (st != TCONV_OK)
        return st;
    size_t n = count_files(data_set_dir, "input");
    if (n != runner->n_inputs)
        return tc_error_set(&runner->last_error, TCONV_ERR_INVALID,
                            "%s: %zu input files, the model takes %zu inputs", data_set_dir, n,
                            runner->n_inputs);
    for (size_t i = 0; st == TCONV_OK && i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/input_%zu.pb", data_set_dir, i);
        st = tconv_runner_load_input(runner, i, path);
    }
    return st;
}

tconv_status tconv_runner_check_data_set(tconv_runner *runner, const char *data_set_dir,
                                         double rtol, double atol, double *max_abs_err,
                                         double *max_rel_err) {
    double worst_abs = 0, worst_rel = 0;
    tconv_status st = begin_set(runner, data_set_dir, "tconv_runner_check_data_set");
    size_t n = st == TCONV_OK ? count_files(data_set_dir, "output") : 0;
    if (st == TCONV_OK && n != runner->n_outputs)
        st = tc_error_set(&runner->last_error, TCONV_ERR_MISMATCH,
                          "%zu expected output files, the model has %zu outputs", n,
                          runner->n_outputs);
    tconv_status first = st;
    tc_error first_error = runner ? runner->last_error : (tc_error){0};
    for (size_t i = 0; st == TCONV_OK && i < n; i++) {
        char path[4096];
        double abs_err = 0, rel_err = 0;
        snprintf(path, sizeof path, "%s/output_%zu.pb", data_set_dir, i);
        tconv_status out_st =
            tconv_runner_check_output(runner, i, path, rtol, atol, &abs_err, &rel_err);
        worst_abs = abs_err > worst_abs || isnan(abs_err) ? abs_err : worst_abs;
        worst_rel = rel_err > worst_rel || isnan(rel_err) ? rel_err : worst_rel;
        if (out_st != TCONV_OK && out_st != TCONV_ERR_MISMATCH)
            st = out_st; /* unreadable data: stop */
        if (out_st != TCONV_OK && first == TCONV_OK) {
            first = out_st;
            first_error = runner->last_error;
        }
    }
    if (runner)
        runner->last_error = first_error;
    if (max_abs_err)
        *max_abs_err = worst_abs;
    if (max_rel_err)
        *max_rel_err = worst_rel;
    return first;
}

tconv_status tconv_runner_run_data_set(tconv_runner *runner, const char *data_set_dir, double rtol,
                                       double atol, double *max_abs_err, double *max_rel_err) {
    tconv_status st = tconv_runner_load_data_set(runner, data_set_dir);
    if (st == TCONV_OK)
        st = tconv_runner_run(runner);
    if (st == TCONV_OK)
        return tconv_runner_check_data_set(runner, data_set_dir, rtol, atol, max_abs_err,
                                           max_rel_err);
    if (max_abs_err)
        *max_abs_err = 0;
    if (max_rel_err)
        *max_rel_err = 0;
    return st;
}

/* ---------------------------------------------------------------- what a front-end prints */

tconv_status tconv_runner_output_checksum(tconv_runner *runner, size_t index, double *sum,
                                          double *abs_sum) {
    if (!runner)
        return TCONV_ERR_USAGE;
    tc_error_clear(&runner->last_error);
    if (!sum || !abs_sum || !runner->has_run || index >= runner->n_outputs ||
        runner->outputs[index].dtype == TCONV_DTYPE_UNDEFINED)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                            "tconv_runner_output_checksum: no output %zu of a run (or it was "
                            "taken), or a NULL pointer",
                            index);
    const tc_rt_tensor *t = &runner->outputs[index];
    *sum = 0.0;
    *abs_sum = 0.0;
    for (int64_t i = 0; i < t->n_elements; i++) {
        double v = tc_rt_get_f64(t, i);
        *sum += v;
        *abs_sum += fabs(v);
    }
    return TCONV_OK;
}

const char *tconv_runtime_gemm_isa(void) {
    return tc_gemm_isa_name(tc_gemm_isa_available(TCONV_GEMM_ISA_AVX512) ? TCONV_GEMM_ISA_AVX512
                            : tc_gemm_isa_available(TCONV_GEMM_ISA_AVX2) ? TCONV_GEMM_ISA_AVX2
                                                                         : TCONV_GEMM_ISA_PORTABLE);
}

/* ---------------------------------------------------------------- ops the runtime lacks */

#define MISSING_NODES_NAMED 3

typedef struct missing_op {
    const char *domain, *op_type;
    size_t count;
    const tconv_node *nodes[MISSING_NODES_NAMED]; /* the first ones, named by their path */
} missing_op;

typedef struct missing_ops {
    missing_op *items;
    size_t count, cap;
    bool nomem;
} missing_ops;

static void note_missing(missing_ops *m, const tconv_node *node) {
    const char *domain = node->domain ? node->domain : "";
    for (size_t i = 0; i < m->count; i++) {
        if (strcmp(m->items[i].op_type, node->op_type) == 0 &&
            strcmp(m->items[i].domain, domain) == 0) {
            if (m->items[i].count < MISSING_NODES_NAMED)
                m->items[i].nodes[m->items[i].count] = node;
            m->items[i].count++;
            return;
        }
    }
    if (!TC_VEC_RESERVE(m->items, m->cap, m->count + 1)) {
        m->nomem = true;
        return;
    }
    m->items[m->count++] = (missing_op){domain, node->op_type, 1, {node, NULL, NULL}};
}

static void collect_missing(const tconv_model *model, const tconv_graph *graph, missing_ops *m) {
    for (const tconv_node *n = graph->first; n; n = n->next) {
        if (!tc_ops[tc_op_find(n->domain, n->op_type, tc_model_opset(model, n->domain))]
                 .has_kernel &&
            !tc_function_body_available(model, tc_api_function_library(), n))
            note_missing(m, n);
        for (size_t i = 0; i < n->n_attrs; i++) {
            const tc_attr *a = &n->attrs[i];
            if (a->type == TCONV_ATTR_GRAPH && a->g)
                collect_missing(model, a->g, m);
            for (size_t k = 0; a->type == TCONV_ATTR_GRAPHS && k < a->n; k++)
                collect_missing(model, a->graphs[k], m);
        }
    }
}

/* "Hardmax x2 (hardmax1, hardmax2), com.example.Scale x1 (If_1/else_branch/scale)": each op
 * once with its count and the paths of its first nodes, escaped (names come from the file). */
static tconv_status write_missing(const void *ctx, FILE *out) {
    const missing_ops *m = ctx;
    for (size_t i = 0; i < m->count; i++) {
        const missing_op *op = &m->items[i];
        char raw[512], shown[1024];
        int n =
            snprintf(raw, sizeof raw, "%s%s%s", op->domain, op->domain[0] ? "." : "", op->op_type);
        fprintf(out, "%s%s x%zu (", i ? ", " : "",
                tc_escape_text(shown, sizeof shown, raw, n < 0 ? 0 : strlen(raw)), op->count);
        for (size_t k = 0; k < op->count && k < MISSING_NODES_NAMED; k++) {
            tc_node_path(op->nodes[k], raw, sizeof raw);
            fprintf(out, "%s%s", k ? ", " : "",
                    tc_escape_text(shown, sizeof shown, raw, strlen(raw)));
        }
        fputs(op->count > MISSING_NODES_NAMED ? ", ...)" : ")", out);
    }
    return TCONV_OK;
}

tconv_status tconv_runtime_missing_ops(tconv_model *model, size_t *count, char **text) {
    if (text)
        *text = NULL;
    if (count)
        *count = 0;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!count || !text)
        return tc_api_usage(model, "tconv_runtime_missing_ops: count and text must be set");
    tc_error *err = tc_api_begin(model);
    missing_ops m = {0};
    collect_missing(model, model->graph, &m);
    tconv_status st = m.nomem ? tc_error_nomem(err, "the list of missing ops")
                              : tc_api_capture_text(write_missing, &m, text);
    if (st == TCONV_OK)
        *count = m.count;
    free(m.items);
    return tc_api_end(model, st);
}
