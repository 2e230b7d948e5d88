/* The internal assertions (ir/check.h): TC_ALWAYS/TC_NEVER pass their condition through where it
 * holds, and in a release build (NDEBUG) also where it does not, so the defensive branch beside
 * them runs instead of the library stopping. A debug build stops there (not tested: it aborts). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ir/check.h"

static int calls;
static int count(int v) {
    calls++;
    return v;
}

static void test_holding_invariants_pass_through(void **state) {
    (void)state;
    calls = 0;
    assert_int_equal(TC_ALWAYS(count(1) == 1), 1);
    assert_int_equal(TC_NEVER(count(2) == 3), 0);
    TC_ASSERT(calls == 2);
    assert_int_equal(calls, 2); /* each condition evaluated exactly once */
}

static void test_release_takes_the_defensive_branch(void **state) {
    (void)state;
#ifdef NDEBUG
    calls = 0;
    assert_int_equal(TC_ALWAYS(count(0) == 1), 0);
    assert_int_equal(TC_NEVER(count(3) == 3), 1);
    assert_int_equal(calls, 2);
#else
    skip(); /* a debug build asserts there */
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holding_invariants_pass_through),
        cmocka_unit_test(test_release_takes_the_defensive_branch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
