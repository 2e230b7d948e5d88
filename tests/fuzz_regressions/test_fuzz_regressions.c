/* Every input the fuzzers found a defect with (tests/fuzz_regressions/<target>/), run through
 * the same code path as its fuzzer (fuzz/fuzz_<target>.c is compiled in here): a regression
 * aborts or trips the sanitizers. The curated seeds (fuzz/seeds) and the broken-model corpus
 * (tests/broken) go through the same targets. */
#define _POSIX_C_SOURCE 200809L
#define TCONV_FUZZ_NO_MAIN

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
#include "../../fuzz/fuzz_tensor_decode.c"

#define REGRESSIONS TCONV_SOURCE_DIR "/tests/fuzz_regressions"
#define BROKEN TCONV_SOURCE_DIR "/tests/broken"
#define SEEDS TCONV_SOURCE_DIR "/fuzz/seeds"

typedef int (*fuzz_target)(const uint8_t *data, size_t size);

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs target on every regular file in dir whose name ends with `suffix` ("" for all), in name
 * order, and on those of its subfolders when `recurse`. Returns the number of inputs run. */
static size_t run_dir(const char *dir, const char *suffix, bool recurse, fuzz_target target) {
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **names = NULL;
    size_t n = 0, cap = 0, runs = 0;
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
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && recurse) {
            runs += run_dir(path, suffix, recurse, target);
        } else if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && len >= slen &&
                   strcmp(names[i] + len - slen, suffix) == 0) {
            void *data;
            size_t size;
            tc_error err;
            if (tc_read_file(path, 0, &data, &size, &err) != TCONV_OK)
                fail_msg("%s", err.message);
            print_message("  %s\n", path);
            target(data, size); /* aborts on a broken property */
            free(data);
            runs++;
        }
        free(names[i]);
    }
    free(names);
    return runs;
}

static void test_load_save(void **state) {
    (void)state;
    run_dir(REGRESSIONS "/load_save", "", false, fuzz_load_save);
    run_dir(SEEDS "/load_save", "", false, fuzz_load_save);
    assert_true(run_dir(BROKEN, ".onnx", true, fuzz_load_save) > 20);
}

static void test_legalize_check(void **state) {
    (void)state;
    run_dir(REGRESSIONS "/legalize_check", "", false, fuzz_legalize_check);
    run_dir(SEEDS "/legalize_check", "", false, fuzz_legalize_check);
    assert_true(run_dir(BROKEN, ".onnx", true, fuzz_legalize_check) > 20);
}

static void test_tensor_decode(void **state) {
    (void)state;
    run_dir(REGRESSIONS "/tensor_decode", "", false, fuzz_tensor_decode);
    assert_true(run_dir(SEEDS "/tensor_decode", ".pb", false, fuzz_tensor_decode) > 20);
    assert_true(run_dir(BROKEN, ".pb", true, fuzz_tensor_decode) >= 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_save),
        cmocka_unit_test(test_legalize_check),
        cmocka_unit_test(test_tensor_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
