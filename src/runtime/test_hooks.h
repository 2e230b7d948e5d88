/* Test-only fault injection. A test sets a hook to make a kernel wrong on purpose and shows that
 * a proof (the golden suites, --check) catches it. Every hook is 0 outside such a test; nothing
 * but tests may set one, and not while another thread runs the runtime. */
#ifndef TCONV_RUNTIME_TEST_HOOKS_H
#define TCONV_RUNTIME_TEST_HOOKS_H

#include <stdint.h>

/* Added to each non-negative start of every Slice (step > 0): an off-by-one crop. */
extern int64_t tc_test_slice_start_shift;

/* Nonzero: every unzeroed output (tc_kernel_alloc_output_uninit) starts as all-ones bytes (NaN
 * floats), so that an element a kernel leaves unwritten shows. */
extern int tc_test_poison_uninit;

#endif
