#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api_internal.h"
#include "importer/importer.h"
#include "runtime/session.h"

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tc_test_list_dirs(const char *parent, const char *prefix, char ***names, size_t *count) {
    *names = NULL;
    *count = 0;
    DIR *d = opendir(parent);
    if (!d)
        return -1;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(*names, cap * sizeof(char *));
            if (!grown)
                break;
            *names = grown;
        }
        (*names)[*count] = strdup(e->d_name);
        (*count)++;
    }
    closedir(d);
    if (*count)
        qsort(*names, *count, sizeof(char *), compare_names);
    return 0;
}

void tc_test_free_names(char **names, size_t count) {
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

void tc_test_free_tensors(tc_rt_tensor *tensors, size_t count) {
    for (size_t i = 0; tensors && i < count; i++)
        tc_rt_tensor_release(&tensors[i]);
    free(tensors);
}

tconv_status tc_test_read_pb_files(const char *dir, const char *kind, tc_rt_tensor **tensors,
                                   size_t *count, tc_error *err) {
    *tensors = NULL;
    *count = 0;
    tconv_status st = TCONV_OK;
    for (size_t i = 0; st == TCONV_OK; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s_%zu.pb", dir, kind, i);
        struct stat sb;
        if (stat(path, &sb) != 0)
            break;
        tc_rt_tensor *grown = realloc(*tensors, (i + 1) * sizeof **tensors);
        if (!grown) {
            st = tc_error_nomem(err, "test tensors");
            break;
        }
        *tensors = grown;
        memset(&grown[i], 0, sizeof grown[i]);
        st = tc_api_tensor_load_pb(path, &grown[i], err);
        if (st == TCONV_OK)
            *count = i + 1;
    }
    if (st != TCONV_OK) {
        tc_test_free_tensors(*tensors, *count);
        *tensors = NULL;
        *count = 0;
    }
    return st;
}

static tconv_status compare_outputs(tc_session *s, const tc_rt_tensor *got,
                                    const tc_rt_tensor *want, size_t n, double rtol, double atol,
                                    double *max_abs_err, tc_error *err) {
    for (size_t i = 0; i < n; i++) {
        double abs_err = 0, rel_err = 0;
        tconv_status st =
            tc_rt_tensor_compare(&got[i], &want[i], rtol, atol, &abs_err, &rel_err, err);
        if (max_abs_err && abs_err > *max_abs_err)
            *max_abs_err = abs_err;
        if (st != TCONV_OK)
            return tc_error_prefix(err, st, "output '%s': ", tc_session_output(s, i)->name);
    }
    return TCONV_OK;
}

tconv_status tc_test_run_data_set(tconv_model *model, const char *data_set_dir, double rtol,
                                  double atol, double *max_abs_err, tc_error *err) {
    tc_rt_tensor *inputs = NULL, *want = NULL, *got = NULL;
    size_t n_in = 0, n_want = 0, n_out = 0;
    tc_session *s = NULL;
    tc_session_options options;
    tc_session_options_init(&options);
    tconv_status st = tc_test_read_pb_files(data_set_dir, "input", &inputs, &n_in, err);
    if (st == TCONV_OK)
        st = tc_test_read_pb_files(data_set_dir, "output", &want, &n_want, err);
    if (st == TCONV_OK)
        st = tc_session_create(model, &options, &s, err);
    if (st == TCONV_OK) {
        n_out = tc_session_output_count(s);
        got = calloc(n_out + 1, sizeof *got);
        if (!got)
            st = tc_error_nomem(err, "outputs");
        else if (n_out != n_want)
            st = tc_error_set(err, TCONV_ERR_MISMATCH, "model has %zu outputs, data set %zu", n_out,
                              n_want);
    }
    if (st == TCONV_OK)
        st = tc_session_run(s, inputs, n_in, got, err);
    if (st == TCONV_OK)
        st = compare_outputs(s, got, want, n_out, rtol, atol, max_abs_err, err);
    tc_test_free_tensors(inputs, n_in);
    tc_test_free_tensors(want, n_want);
    tc_test_free_tensors(got, n_out);
    tc_session_free(s);
    return st;
}

tconv_status tc_test_compare_models(tconv_model *a, tconv_model *b, uint64_t seed, double rtol,
                                    double atol, tc_error *err) {
    tc_session_options options;
    tc_session_options_init(&options);
    tc_session *sa = NULL, *sb = NULL;
    tc_rt_tensor *inputs = NULL, *out_a = NULL, *out_b = NULL;
    size_t n_in = 0, n_out = 0;
    tconv_status st = tc_session_create(a, &options, &sa, err);
    if (st == TCONV_OK)
        st = tc_session_create(b, &options, &sb, err);
    if (st == TCONV_OK) {
        n_in = tc_session_input_count(sa);
        n_out = tc_session_output_count(sa);
        inputs = calloc(n_in + 1, sizeof *inputs);
        out_a = calloc(n_out + 1, sizeof *out_a);
        out_b = calloc(n_out + 1, sizeof *out_b);
        if (!inputs || !out_a || !out_b)
            st = tc_error_nomem(err, "comparison buffers");
    }
    for (size_t i = 0; st == TCONV_OK && i < n_in; i++)
        st = tc_session_random_input(tc_session_input(sa, i), seed + i, NULL, 0, &inputs[i], err);
    if (st == TCONV_OK)
        st = tc_session_run(sa, inputs, n_in, out_a, err);
    if (st == TCONV_OK)
        st = tc_session_run(sb, inputs, n_in, out_b, err);
    if (st == TCONV_OK)
        st = compare_outputs(sa, out_b, out_a, n_out, rtol, atol, NULL, err);
    for (size_t i = 0; i < n_in && inputs; i++)
        tc_rt_tensor_release(&inputs[i]);
    free(inputs);
    tc_test_free_tensors(out_a, n_out);
    tc_test_free_tensors(out_b, n_out);
    tc_session_free(sa);
    tc_session_free(sb);
    return st;
}
