/* Every input the fuzzers found a defect with (tests/fuzz_regressions/<target>/), run through
 * the same code path as its fuzzer (fuzz/fuzz_<target>.c is compiled in here): a regression
 * aborts or trips the sanitizers. The curated seeds (fuzz/seeds) and the broken-model corpus
 * (tests/broken) go through the same targets. */
#define _POSIX_C_SOURCE 200809L
#define TC_FUZZ_NO_MAIN

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "../../fuzz/fuzz_legalize_check.c"
#include "../../fuzz/fuzz_load_save.c"
#include "../../fuzz/fuzz_plan_proof.c"
#include "../../fuzz/fuzz_tensor_decode.c"
#include "testutil.h"

#define REGRESSIONS TCONV_SOURCE_DIR "/tests/fuzz_regressions"
#define BROKEN TCONV_SOURCE_DIR "/tests/broken"
#define SEEDS TCONV_SOURCE_DIR "/fuzz/seeds"

typedef int (*fuzz_target)(const uint8_t *data, size_t size);

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What one directory walk found: the inputs present (every entry, subfolders aside, whose name
 * ends with the suffix) and the ones run (regular files). They differ when an input could not be
 * run (a link, a device...): the test fails rather than skip it. */
typedef struct walk_count {
    size_t present, ran;
} walk_count;

/* Runs target on every regular file in dir whose name ends with `suffix` ("" for all), in name
 * order, and on those of its subfolders when `recurse`. */
static void run_dir(const char *dir, const char *suffix, bool recurse, fuzz_target target,
                    walk_count *count) {
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot open %s", dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            names = realloc(names, cap * sizeof *names);
            assert_non_null(names);
        }
        names[n] = strdup(e->d_name);
        assert_non_null(names[n++]);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        size_t len = strlen(names[i]), slen = strlen(suffix);
        if (lstat(path, &st) != 0)
            fail_msg("cannot stat %s", path);
        if (S_ISDIR(st.st_mode)) {
            if (recurse)
                run_dir(path, suffix, recurse, target, count);
        } else if (len >= slen && strcmp(names[i] + len - slen, suffix) == 0) {
            count->present++;
            if (S_ISREG(st.st_mode)) {
                void *data;
                size_t size;
                tc_error err;
                if (tc_read_file(path, 0, &data, &size, &err) != TCONV_OK)
                    fail_msg("%s", err.message);
                print_message("  %s\n", path);
                target(data, size); /* aborts on a broken property */
                free(data);
                count->ran++;
            }
        }
        free(names[i]);
    }
    free(names);
}

/* Runs every input of dir (see run_dir): each one present must have run, and at least
 * `at_least` (1 or more: a folder that yields nothing is a test that passes on nothing).
 * Returns how many ran. */
static size_t run_inputs(const char *dir, const char *suffix, bool recurse, fuzz_target target,
                         size_t at_least) {
    walk_count count = {0, 0};
    run_dir(dir, suffix, recurse, target, &count);
    print_message("%s: %zu of %zu inputs run\n", dir, count.ran, count.present);
    assert_int_equal(count.ran, count.present);
    if (count.ran < at_least)
        fail_msg("%s: %zu inputs, expected at least %zu", dir, count.ran, at_least);
    return count.ran;
}

static const struct {
    const char *name;
    fuzz_target target;
} TARGETS[] = {
    {"load_save", fuzz_load_save},
    {"legalize_check", fuzz_legalize_check},
    {"plan_proof", fuzz_plan_proof},
    {"tensor_decode", fuzz_tensor_decode},
};

static fuzz_target target_named(const char *name) {
    for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++) {
        if (strcmp(TARGETS[i].name, name) == 0)
            return TARGETS[i].target;
    }
    fail_msg("tests/fuzz_regressions/%s: no fuzz target of that name", name);
    return NULL;
}

/* Every folder of tests/fuzz_regressions is a target's: each must hold at least one input, and
 * a folder no target claims fails (rather than go unrun). */
static void test_regressions(void **state) {
    (void)state;
    char **names;
    size_t count, folders = 0;
    if (tc_test_list_dirs(REGRESSIONS, "", &names, &count) != 0)
        fail_msg("cannot list %s", REGRESSIONS);
    for (size_t i = 0; i < count; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", REGRESSIONS, names[i]);
        run_inputs(dir, "", false, target_named(names[i]), 1);
        folders++;
    }
    tc_test_free_names(names, count);
    assert_true(folders >= 1);
}

static void test_load_save(void **state) {
    (void)state;
    run_inputs(SEEDS "/load_save", "", false, fuzz_load_save, 1);
    run_inputs(BROKEN, ".onnx", true, fuzz_load_save, 21);
}

static void test_legalize_check(void **state) {
    (void)state;
    run_inputs(SEEDS "/legalize_check", "", false, fuzz_legalize_check, 1);
    run_inputs(BROKEN, ".onnx", true, fuzz_legalize_check, 21);
}

/* The seeds are issue 27's findings (fuzz/seeds/generate_round3.py): each ran past a limit,
 * answered where the model as written fails, or differed fused against unfused. */
static void test_plan_proof(void **state) {
    (void)state;
    run_inputs(SEEDS "/plan_proof", "", false, fuzz_plan_proof, 12);
    run_inputs(BROKEN, ".onnx", true, fuzz_plan_proof, 21);
}

static void test_tensor_decode(void **state) {
    (void)state;
    run_inputs(SEEDS "/tensor_decode", ".pb", false, fuzz_tensor_decode, 21);
    run_inputs(BROKEN, ".pb", true, fuzz_tensor_decode, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regressions),    cmocka_unit_test(test_load_save),
        cmocka_unit_test(test_legalize_check), cmocka_unit_test(test_plan_proof),
        cmocka_unit_test(test_tensor_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
