/* Passes: each is `tconv_status pass(tconv_graph *, const tc_pass_options *, tc_error *)`,
 * registered by name in one table (pass_manager.c). A pass edits the graph in place through the
 * IR API and reports warnings and rewrites into the options' sinks; it never prints. */
#ifndef TCONV_PASSES_PASS_H
#define TCONV_PASSES_PASS_H

#include <stdio.h>

#include "ir/conv_transpose_geometry.h"
#include "ir/ir.h"
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
