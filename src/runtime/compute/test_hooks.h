/* Test-only fault injection. A test sets a hook to make a kernel wrong on purpose and shows that
 * a proof (the golden suites, --check) catches it. Every hook is 0 outside such a test; nothing
 * but tests may set one, and not while another thread runs the runtime. */
#ifndef TC_RUNTIME_TEST_HOOKS_H
#define TC_RUNTIME_TEST_HOOKS_H

#include <stdatomic.h>
#include <stdint.h>

/* Added to each non-negative start of every Slice (step > 0): an off-by-one crop. */
extern int64_t tc_test_slice_start_shift;

/* Nonzero: every unzeroed output (tc_kernel_alloc_output_uninit) starts as all-ones bytes (NaN
 * floats), so that an element a kernel leaves unwritten shows. */
extern int tc_test_poison_uninit;

/* Nonzero: the executor watches every run of a prepared kernel (kernel.h, KP): attribute reads
 * during it are counted in tc_test_attr_watched_reads (ir/ir.h), and it runs with ctx->node
 * NULL as always, so any other IR access through the node would crash the test. */
extern int tc_test_watch_prepared_runs;

/* Counted while tc_test_watch_prepared_runs is set: the prepared runs watched, and how many of
 * them had a fused crop, a fused activation, BatchNormalization-folded weights, float16 or
 * bfloat16 inputs widened to float, float64 data (input 0); so the proof knows what it saw. */
typedef struct tc_test_prepared_counts {
    int64_t runs, crop, activation, folded, widened, f64;
} tc_test_prepared_counts;
extern tc_test_prepared_counts tc_test_prepared_seen;

/* Nonzero: inside that watch, the executor reads one attribute of the step's node, as a kernel
 * that still read its node would: the proof's own check that the watch sees a read. */
extern int tc_test_plant_attr_read;

/* Nonzero: every kernel that asks the cost model how many threads to use (parallel.h) gets
 * this many (at most what it may use), whatever its work: the partitions of every size are
 * exercised on any machine, so that a test can show they all give the same bits. */
extern int tc_test_split_threads;

/* Positive: the pool's thread number tc_test_absent_helper - 1 never joins a job, as a helper
 * that is never scheduled or could not start: its home range must be done by the others. */
extern int tc_test_absent_helper;

/* Counts the tables kernels make for their node's shapes (kernel.h: tc_kernel_shape_table)
 * rather than find kept, so that a test sees them kept across runs and made again when a shape
 * changes. Counted always, atomically (a test reads it before and after; nothing else does). */
extern atomic_llong tc_test_shape_tables_made;
#endif
