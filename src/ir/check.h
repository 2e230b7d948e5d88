/* Internal assertions on invariants, after SQLite's ALWAYS/NEVER (sqliteInt.h).
 *
 *   TC_ASSERT(x)  a statement: x holds. Checked in debug builds (and the sanitizer build, which
 *                 is a Debug build); nothing in release (NDEBUG).
 *   TC_ALWAYS(x)  an expression for an `if`: x holds as far as the code knows, but the proof is
 *                 far away (another file fills the table, the planner sized the slot). A debug
 *                 build stops there when it does not hold; a release build evaluates to x, so
 *                 the defensive branch beside it still runs and the library returns an error
 *                 instead of crashing on a broken invariant.
 *   TC_NEVER(x)   the same for a condition that never holds.
 *
 *     if (TC_NEVER(slot >= plan->n_slots))
 *         return tc_error_set(err, TCONV_ERR_INVALID, "slot %zu outside the plan", slot);
 *
 * Use them on what the code guarantees itself, never on input: bad models, files and arguments
 * get an error with a message, in every build. */
#ifndef TC_IR_CHECK_H
#define TC_IR_CHECK_H

#include <assert.h>

#ifdef NDEBUG
#define TC_ASSERT(x) ((void)0)
#define TC_ALWAYS(x) (x)
#define TC_NEVER(x) (x)
#else
#define TC_ASSERT(x) assert(x)
#define TC_ALWAYS(x) ((x) ? 1 : (assert(0 && "TC_ALWAYS: " #x), 0))
#define TC_NEVER(x) ((x) ? (assert(0 && "TC_NEVER: " #x), 1) : 0)
#endif

#endif
