/* The pass manager's refusals speak of the library's own names (the pass table, the
 * print_after parameter), never of a CLI's flags: the CLIs add those. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "passes/pass.h"

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        if (!strstr((haystack), (needle)))                                                         \
            fail_msg("message \"%s\" lacks \"%s\"", (haystack), (needle));                         \
    } while (0)

static void run_and_expect(const char *passes, const char *print_after, const char *want) {
    tconv_model *m;
    tc_error err;
    assert_int_equal(tc_model_create(&m, &err), TCONV_OK);
    tc_pass_options options;
    tc_pass_options_init(&options);
    assert_int_equal(tc_run_passes(m, passes, &options, print_after, NULL, &err), TCONV_ERR_USAGE);
    assert_contains(err.message, want);
    size_t n;
    const tc_pass_def *table = tc_pass_table(&n);
    for (size_t i = 0; i < n; i++)
        assert_contains(err.message, table[i].name);
    assert_null(strstr(err.message, "--"));
    tconv_model_free(m);
}

static void test_unknown_pass_names_the_known_ones(void **state) {
    (void)state;
    run_and_expect("shape-infer,nope", NULL, "unknown pass 'nope' (passes: shape-infer, ");
}

static void test_unknown_print_after_names_the_parameter(void **state) {
    (void)state;
    run_and_expect("dce", "nope", "print_after: unknown pass 'nope'");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_pass_names_the_known_ones),
        cmocka_unit_test(test_unknown_print_after_names_the_parameter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
