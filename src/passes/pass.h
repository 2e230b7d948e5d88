/* Passes: each is `tconv_status pass(tconv_graph *, const tconv_pass_options *, tconv_error *)`,
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
bool tconv_policy_parse(const char *text, tconv_policy *out);

typedef struct tconv_pass_options {
    tconv_policy policy;
    tconv_convention convention;
    tconv_diagnostics *diagnostics; /* warnings (may be NULL: dropped) */
    tconv_rewrite_report *report;   /* rewrites (may be NULL: not recorded) */
} tconv_pass_options;

void tconv_pass_options_init(tconv_pass_options *options);

typedef tconv_status (*tconv_pass_fn)(tconv_graph *graph, const tconv_pass_options *options,
                                      tconv_error *err);

typedef struct tconv_pass_def {
    const char *name;
    const char *summary; /* one line for --list-passes */
    tconv_pass_fn run;
} tconv_pass_def;

/* The passes, in the order --list-passes shows them. */
const tconv_pass_def *tconv_pass_table(size_t *count);
const tconv_pass_def *tconv_pass_find(const char *name);

/* The passes themselves. */
tconv_status tconv_pass_shape_infer(tconv_graph *graph, const tconv_pass_options *options,
                                    tconv_error *err);
tconv_status tconv_pass_legalize_conv_transpose(tconv_graph *graph,
                                                const tconv_pass_options *options,
                                                tconv_error *err);
tconv_status tconv_pass_lint_conv_transpose(tconv_graph *graph, const tconv_pass_options *options,
                                            tconv_error *err);
tconv_status tconv_pass_dce(tconv_graph *graph, const tconv_pass_options *options,
                            tconv_error *err);

/* Runs a comma-separated pass list ("shape-infer,legalize-conv-transpose,dce"; "none" or "" runs
 * nothing), verifying the IR after each pass. print_after: NULL, "all" or a pass name; the IR
 * is printed to print_out after matching passes. */
tconv_status tconv_run_passes(tconv_model *model, const char *pass_list,
                              const tconv_pass_options *options, const char *print_after,
                              FILE *print_out, tconv_error *err);

#endif
