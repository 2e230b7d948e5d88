/* What the legalization did, node by node, for `--report FILE.json` and the summary. */
#ifndef TCONV_PASSES_REWRITE_REPORT_H
#define TCONV_PASSES_REWRITE_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "ir/ir.h"

typedef struct tconv_rewrite_record {
    char *node;           /* original node name */
    char *old_attributes; /* JSON object of the original attributes */
    char *new_nodes;      /* JSON array of {name, op_type, inputs, outputs, attributes} */
} tconv_rewrite_record;

typedef struct tconv_rewrite_report {
    tconv_rewrite_record *records;
    size_t count, capacity;
} tconv_rewrite_report;

void tconv_rewrite_report_init(tconv_rewrite_report *report);
void tconv_rewrite_report_free(tconv_rewrite_report *report);

/* JSON object of a node's attributes ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}); tensors
 * and graphs are summarized. malloc'd; NULL when out of memory. */
char *tconv_node_attributes_json(const tconv_node *node);
/* JSON object describing a node: name, op_type, inputs, outputs, attributes. malloc'd. */
char *tconv_node_json(const tconv_node *node);

/* Records one rewrite: old node name and attributes (captured before the rewrite) and the nodes
 * that replaced it. Takes ownership of old_attributes. */
tconv_status tconv_rewrite_report_add(tconv_rewrite_report *report, const char *node_name,
                                      char *old_attributes, tconv_node *const *new_nodes,
                                      size_t n_new_nodes, tconv_error *err);

/* Op-type counts of a model (all graphs), for "ops before -> after". */
typedef struct tconv_op_count {
    const char *op_type; /* points into the model that was counted */
    size_t count;
} tconv_op_count;

typedef struct tconv_op_counts {
    tconv_op_count *items; /* malloc'd, sorted by op_type */
    size_t count;
    char **names; /* copies of op names so the counts outlive the model */
} tconv_op_counts;

tconv_status tconv_op_counts_collect(const tconv_model *model, tconv_op_counts *out,
                                     tconv_error *err);
void tconv_op_counts_free(tconv_op_counts *counts);
size_t tconv_op_counts_get(const tconv_op_counts *counts, const char *op_type);

/* The whole report as JSON: {"model": ..., "policy": ..., "convention": ..., "rewritten": [...],
 * "ops_before": {...}, "ops_after": {...}, "warnings": [...]}. */
tconv_status tconv_rewrite_report_write_json(const tconv_rewrite_report *report,
                                             const char *model_path, const char *policy,
                                             const char *convention, const tconv_op_counts *before,
                                             const tconv_op_counts *after, char *const *warnings,
                                             size_t n_warnings, FILE *out);

#endif
