/* The string builder behind the rewrite report and the printer: formatted appends that fit in
 * the free space and ones that must grow it, and integers formatted without printf. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/strbuf.h"

static void test_append_int_matches_printf(void **state) {
    (void)state;
    static const long long values[] = {0, 7, -7, 10, -10, 123456789, LLONG_MAX, LLONG_MIN};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        tc_strbuf sb;
        tc_strbuf_init(&sb);
        tc_strbuf_append(&sb, "[");
        tc_strbuf_append_int(&sb, values[i]);
        tc_strbuf_append(&sb, "]");
        char want[32];
        snprintf(want, sizeof want, "[%lld]", values[i]);
        assert_string_equal(tc_strbuf_str(&sb), want);
        tc_strbuf_free(&sb);
    }
}

static void test_appendf_short_and_growing(void **state) {
    (void)state;
    tc_strbuf sb;
    tc_strbuf_init(&sb);
    char want[4096] = "";
    for (int i = 0; i < 200; i++) {
        /* a few long appends among the short ones, each one past the free space */
        const char *word =
            i % 50 == 49 ? "a-long-word-that-does-not-fit-in-the-free-space-left" : "w";
        tc_strbuf_appendf(&sb, "%s%d,", word, i);
        size_t used = strlen(want);
        snprintf(want + used, sizeof want - used, "%s%d,", word, i);
    }
    assert_string_equal(tc_strbuf_str(&sb), want);
    assert_int_equal(strlen(tc_strbuf_str(&sb)), strlen(want));
    char *taken = tc_strbuf_take(&sb);
    assert_string_equal(taken, want);
    free(taken);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_int_matches_printf),
        cmocka_unit_test(test_appendf_short_and_growing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
