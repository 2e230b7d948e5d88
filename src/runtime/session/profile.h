/* The runtime's profiler: one event per executed step (node), with its start, duration, the
 * threads its kernel used and its input and output shapes, written as a Chrome trace in the
 * layout onnxruntime's profiler writes (a top-level JSON array of complete "X" events). A session
 * records only while a profile is attached (tc_session_set_profile): without one, running a
 * step costs one pointer test. */
#ifndef TC_RUNTIME_PROFILE_H
#define TC_RUNTIME_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/error.h"
#include "runtime/compute/compute.h"

typedef struct tc_profile tc_profile;

/* Events one profile keeps, as onnxruntime's default (Profiler::global_max_num_events_); later
 * ones are counted as dropped. */
#define TC_PROFILE_MAX_EVENTS ((size_t)1000 * 1000)

/* An empty profile whose clock starts now; NULL when out of memory. */
tc_profile *tc_profile_create(void);
void tc_profile_free(tc_profile *profile);

/* A run of the main graph: begins and ends the run's "model_run" session event. */
void tc_profile_run_begin(tc_profile *profile);
void tc_profile_run_end(tc_profile *profile);

/* One step: begin returns the event's index (or -1 when the event was dropped or memory ran
 * out) after noting the step's input shapes; `fused_into` is the node whose kernel already
 * computed this node's result (a fused Slice, Pad, Add, activation or folded
 * BatchNormalization), or NULL. The outputs are noted (tc_profile_note_outputs) before the
 * step's values are released, and end sets the duration and the threads its kernel used. */
int64_t tc_profile_step_begin(tc_profile *profile, const tconv_node *node,
                              const tconv_node *fused_into, const tc_rt_tensor *const *inputs,
                              size_t n_inputs);
/* outputs[i]: the slot in `slots` of output i, UINT32_MAX for an omitted one. */
void tc_profile_note_outputs(tc_profile *profile, const tc_rt_tensor *slots,
                             const uint32_t *outputs, size_t n_outputs);
void tc_profile_step_end(tc_profile *profile, int64_t event, int threads);

/* The event whose outputs tc_profile_note_outputs notes: the innermost step running now. */
int64_t tc_profile_current(const tc_profile *profile);
void tc_profile_set_current(tc_profile *profile, int64_t event);

/* The trace: a JSON array of "X" events ("cat" "Session" per run, "Node" per step, name
 * "<node>_kernel_time", ts and dur in microseconds, args op_name, provider, thread_count,
 * input_type_shape, output_type_shape, and fused_ops or fused_into). *json malloc'd. */
tconv_status tc_profile_json(const tc_profile *profile, char **json, tc_error *err);
/* The `top` nodes with the most time over all runs, one line each (total and mean time, share,
 * calls, op, fused ops), after a header line. *text malloc'd. */
tconv_status tc_profile_summary(const tc_profile *profile, size_t top, char **text, tc_error *err);

#endif
