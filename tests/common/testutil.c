#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "importer/importer.h"
#include "tconv/tconv.h"

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

int tc_test_list_node_test_subset(char ***names, size_t *count) {
    *names = NULL;
    *count = 0;
    FILE *f = fopen(TCONV_ONNX_NODE_TESTS_SUBSET, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", TCONV_ONNX_NODE_TESTS_SUBSET);
        return -1;
    }
    char line[1024];
    size_t cap = 0;
    int result = 0;
    while (result == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\t\r\n")] = '\0';
        if (strncmp(line, "test_", 5) != 0)
            continue; /* the header */
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", TCONV_ONNX_NODE_TESTS, line);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "%s names %s, which is not a folder\n", TCONV_ONNX_NODE_TESTS_SUBSET,
                    path);
            result = -1;
            break;
        }
        if (*count == cap) {
            cap = cap ? cap * 2 : 256;
            char **grown = realloc(*names, cap * sizeof(char *));
            if (!grown) {
                result = -1;
                break;
            }
            *names = grown;
        }
        if (((*names)[*count] = strdup(line)) == NULL)
            result = -1;
        else
            (*count)++;
    }
    fclose(f);
    if (result != 0) {
        tc_test_free_names(*names, *count);
        *names = NULL;
        *count = 0;
    }
    return result;
}

void tc_test_free_names(char **names, size_t count) {
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

tconv_status tc_test_run_data_set_as(tconv_model *model, const char *data_set_dir, bool fused,
                                     double rtol, double atol, double *max_abs_err, tc_error *err) {
    tconv_runner *r = NULL;
    tconv_status st = tconv_runner_new_with(model, NULL, TCONV_CONVENTION_ONNX, fused, &r);
    if (st != TCONV_OK)
        return tc_error_set(err, st, "%s", tconv_model_last_error(model));
    double abs_err = 0;
    st = tconv_runner_run_data_set(r, data_set_dir, rtol, atol, &abs_err, NULL);
    if (st != TCONV_OK)
        tc_error_set(err, st, "%s: %s", fused ? "fused" : "unfused", tconv_runner_last_error(r));
    if (max_abs_err && abs_err > *max_abs_err)
        *max_abs_err = abs_err;
    tconv_runner_free(r);
    return st;
}

tconv_status tc_test_run_data_set(tconv_model *model, const char *data_set_dir, double rtol,
                                  double atol, double *max_abs_err, tc_error *err) {
    tconv_status st =
        tc_test_run_data_set_as(model, data_set_dir, false, rtol, atol, max_abs_err, err);
    if (st == TCONV_OK)
        st = tc_test_run_data_set_as(model, data_set_dir, true, rtol, atol, max_abs_err, err);
    return st;
}

tconv_status tc_test_compare_models(tconv_model *a, tconv_model *b, uint64_t seed, double rtol,
                                    double atol, tc_error *err) {
    return tc_test_compare_models_as(a, b, TCONV_CONVENTION_ONNX, seed, rtol, atol, err);
}

tconv_status tc_test_compare_models_as(tconv_model *a, tconv_model *b, tconv_convention convention,
                                       uint64_t seed, double rtol, double atol, tc_error *err) {
    tconv_comparison *c = NULL;
    tconv_status st = tconv_comparison_new(&c);
    if (st == TCONV_OK)
        st = tconv_comparison_set_convention(c, convention);
    if (st == TCONV_OK)
        st = tconv_comparison_set_seed(c, seed);
    if (st == TCONV_OK)
        st = tconv_comparison_set_tolerance(c, rtol, atol);
    if (st == TCONV_OK)
        st = tconv_comparison_run(c, a, b);
    if (st != TCONV_OK)
        tc_error_set(err, st, "%s", c ? tconv_comparison_last_error(c) : "out of memory");
    tconv_comparison_free(c);
    return st;
}

size_t tc_test_run_node_tests(const char *prefix, double rtol, double atol, size_t *count) {
    char **names;
    const char *dir = TCONV_ONNX_NODE_TESTS;
    *count = 0;
    if (tc_test_list_dirs(dir, prefix, &names, count) != 0)
        return 1;
    size_t failed = 0;
    for (size_t i = 0; i < *count; i++) {
        char path[4096], message[1024] = "";
        tc_error err;
        tc_error_clear(&err);
        tconv_model *model = NULL;
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, names[i]);
        tconv_status st = tconv_model_read_file(path, NULL, &model, message, sizeof message);
        if (st != TCONV_OK)
            tc_error_set(&err, st, "%s", message);
        if (st == TCONV_OK) {
            snprintf(path, sizeof path, "%s/%s/test_data_set_0", dir, names[i]);
            st = tc_test_run_data_set(model, path, rtol, atol, NULL, &err);
        }
        if (st != TCONV_OK) {
            fprintf(stderr, "%s: %s\n", names[i], err.message);
            failed++;
        }
        tconv_model_free(model);
    }
    tc_test_free_names(names, *count);
    return failed;
}

tconv_status tc_test_reload(const tconv_model *model, tconv_model **out, tc_error *err) {
    void *bytes = NULL;
    size_t size = 0;
    tconv_status st = tc_model_save_buffer(model, &bytes, &size, err);
    if (st == TCONV_OK)
        st = tc_model_load_buffer(bytes, size, model->dir, NULL, out, NULL, err);
    free(bytes);
    return st;
}
