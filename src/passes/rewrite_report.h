/* What the legalization did, node by node, for `--report FILE.json` and the summary. */
#ifndef TC_PASSES_REWRITE_REPORT_H
#define TC_PASSES_REWRITE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"

typedef struct tc_rewrite_record {
    char *node;           /* original node: its name, with its subgraph path (tc_node_path) */
    char *old_attributes; /* JSON object of the original attributes */
    char *new_nodes;      /* JSON array of {name, op_type, inputs, outputs, attributes} */
    /* For the local proof, which finds nodes by identity, not by name (names may be empty or
     * shared): the original node's id and those of the nodes that replaced it (n_new), ids of the
     * model the pass ran on (tconv_node.id; a model read from the same file or cloned has the
     * same ids). */
    uint64_t node_id;
    uint64_t *new_ids;
    size_t n_new;
} tc_rewrite_record;

typedef struct tc_rewrite_report {
    tc_rewrite_record *records;
    size_t count, capacity;
} tc_rewrite_report;

void tc_rewrite_report_init(tc_rewrite_report *report);
void tc_rewrite_report_free(tc_rewrite_report *report);

/* JSON object of a node's attributes ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}); tensors
 * and graphs are summarized. malloc'd; NULL when out of memory. */
char *tc_node_attributes_json(const tconv_node *node);
/* JSON object describing a node: name, op_type, inputs, outputs, attributes. malloc'd. */
char *tc_node_json(const tconv_node *node);

/* Records one rewrite: old node path and id and attributes (captured before the rewrite) and the
 * nodes that replaced it. Takes ownership of old_attributes. */
tconv_status tc_rewrite_report_add(tc_rewrite_report *report, const char *node_path,
                                   uint64_t node_id, char *old_attributes,
                                   tconv_node *const *new_nodes, size_t n_new_nodes, tc_error *err);

/* Records nodes that a later rewrite made out of the node `lowered_id` (path `lowered_path`), a
 * node an earlier rewrite emitted: they join that earlier record (which keeps the original
 * node's path, id and attributes, so the local proof compares the original node with the whole
 * chain), its node list rebuilt from the graph. When no record emitted that node, a new record
 * for it (tc_rewrite_report_add). Takes ownership of old_attributes. */
tconv_status tc_rewrite_report_extend(tc_rewrite_report *report, const char *lowered_path,
                                      uint64_t lowered_id, char *old_attributes,
                                      tconv_node *const *new_nodes, size_t n_new_nodes,
                                      tc_error *err);

/* Op-type counts of a model (all graphs), for "ops before -> after". */
typedef struct tc_op_count {
    const char *op_type; /* points into the model that was counted */
    size_t count;
} tc_op_count;

typedef struct tc_op_counts {
    tc_op_count *items; /* malloc'd, sorted by op_type */
    size_t count;
    char **names; /* copies of op names so the counts outlive the model */
} tc_op_counts;

tconv_status tc_op_counts_collect(const tconv_model *model, tc_op_counts *out, tc_error *err);
void tc_op_counts_free(tc_op_counts *counts);
size_t tc_op_counts_get(const tc_op_counts *counts, const char *op_type);

/* The whole report as JSON: {"model": ..., "policy": ..., "convention": ..., "rewritten": [...],
 * "ops_before": {...}, "ops_after": {...}, "warnings": [...]}. */
tconv_status tc_rewrite_report_write_json(const tc_rewrite_report *report, const char *model_path,
                                          const char *policy, const char *convention,
                                          const tc_op_counts *before, const tc_op_counts *after,
                                          char *const *warnings, size_t n_warnings, FILE *out);

#endif
