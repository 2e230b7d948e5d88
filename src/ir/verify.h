/* Additions to the verification API of ir.h. */
#ifndef TC_IR_VERIFY_H
#define TC_IR_VERIFY_H

#include <stddef.h>

#include "ir/ir.h"

/* tc_graph_sort_topologically for `graph` and every subgraph nested in it, adding to
 * *n_graphs_reordered the number of graphs whose node order changed (the loader reports it). */
tconv_status tc_graph_sort_count(tconv_graph *graph, size_t *n_graphs_reordered, tc_error *err);

#endif
