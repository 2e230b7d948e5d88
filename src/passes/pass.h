/* Passes: each is `tconv_status pass(tconv_graph *, const tc_pass_options *, tc_error *)`,
 * registered by name in one table (pass_manager.c). A pass edits the graph in place through the
 * IR API and reports warnings and rewrites into the options' sinks; it never prints. */
#ifndef TC_PASSES_PASS_H
#define TC_PASSES_PASS_H

#include <stdio.h>

#include "ir/conv_transpose_geometry.h"
#include "ir/ir.h"
#include "ir/type_table.h"
#include "passes/diagnostics.h"
#include "passes/rewrite_report.h"

/* tconv_policy (which ConvTranspose nodes the legalization rewrites) is public: tconv/types.h. */

const char *tconv_policy_name(tconv_policy policy);
bool tc_policy_parse(const char *text, tconv_policy *out);

typedef struct tc_target tc_target;

typedef struct tc_pass_options {
    tconv_policy policy;
    tconv_convention convention;
    tc_diagnostics *diagnostics; /* warnings (may be NULL: dropped) */
    tc_rewrite_report *report;   /* rewrites (may be NULL: not recorded) */
    /* The backend target (passes/target.h) or NULL: legalize-conv-transpose then keeps the pads
     * the target takes and lower-for-target lowers the rest. */
    const tc_target *target;
} tc_pass_options;

void tc_pass_options_init(tc_pass_options *options);

typedef tconv_status (*tc_pass_fn)(tconv_graph *graph, const tc_pass_options *options,
                                   tc_error *err);

typedef struct tc_pass_def {
    const char *name;
    const char *summary; /* one line for --list-passes */
    tc_pass_fn run;
} tc_pass_def;

/* The passes, in the order --list-passes shows them. */
const tc_pass_def *tc_pass_table(size_t *count);
const tc_pass_def *tc_pass_find(const char *name);

/* The passes themselves. */
tconv_status tc_pass_shape_infer(tconv_graph *graph, const tc_pass_options *options, tc_error *err);
/* The same inference into a side table: each value's inferred type goes into `types`
 * (ir/type_table.h), the model is only read (no type, no value_info changes), so several
 * threads may infer from one model at once. The API fills a session's table this way. */
tconv_status tc_shape_infer_into(tconv_graph *graph, const tc_pass_options *options,
                                 tc_type_table *types, tc_error *err);
/* Shape inference one node at a time, for a client that learns values as it goes: the
 * runtime's constant folding knows the contents of values that only its folded kernels tell
 * (a reflect Pad's pads from a Reshape/Slice/Transpose chain), and with them the shapes after
 * them. Each call merges what the node's rule infers into its outputs' types, as the pass
 * does (sharper types, value_info for new ones), or, with a `types` table, into that table
 * alone (src/api/api_session.c: the caller's model is not written). */
typedef struct tc_shape_refiner tc_shape_refiner;
tconv_status tc_shape_refiner_new(tconv_model *model, tconv_convention convention,
                                  tc_type_table *types, tc_shape_refiner **out);
void tc_shape_refiner_free(tc_shape_refiner *refiner);
/* The contents of an integer value of rank 0 or 1 (at most 64 elements), known from now on;
 * false when it is not such a value or memory runs out (nothing recorded). */
bool tc_shape_refiner_set_data(tc_shape_refiner *refiner, tconv_value *value, int rank, int count,
                               const int64_t *values);
/* Infers node's outputs from its inputs' types and known contents (its own rule only: a
 * subgraph's values are left as they are); false when its rule refuses it (a conflict). */
bool tc_shape_refiner_node(tc_shape_refiner *refiner, tconv_node *node);

tconv_status tc_pass_legalize_conv_transpose(tconv_graph *graph, const tc_pass_options *options,
                                             tc_error *err);
tconv_status tc_pass_lint_conv_transpose(tconv_graph *graph, const tc_pass_options *options,
                                         tc_error *err);
tconv_status tc_pass_lower_for_target(tconv_graph *graph, const tc_pass_options *options,
                                      tc_error *err);
tconv_status tc_pass_dce(tconv_graph *graph, const tc_pass_options *options, tc_error *err);

/* Runs a comma-separated pass list ("shape-infer,legalize-conv-transpose,dce"; "none" or "" runs
 * nothing), verifying the IR after each pass. print_after: NULL, "all" or a pass name; the IR
 * is printed to print_out after matching passes. */
tconv_status tc_run_passes(tconv_model *model, const char *pass_list,
                           const tc_pass_options *options, const char *print_after, FILE *print_out,
                           tc_error *err);

#endif
