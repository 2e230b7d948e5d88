/* Matching a ConvTranspose node: its input shapes, attributes and resolved geometry, and
 * whether a policy asks for it to be rewritten. Shared by the legalization and the lint. */
#ifndef TCONV_PASSES_CONV_TRANSPOSE_MATCH_H
#define TCONV_PASSES_CONV_TRANSPOSE_MATCH_H

#include "ir/conv_transpose_geometry.h"
#include "passes/pass.h"

typedef struct tconv_conv_transpose_match {
    tconv_node *node;
    int x_rank; /* -1 unknown */
    int64_t x_dims[TCONV_MAX_RANK];
    int w_rank;
    int64_t w_dims[TCONV_MAX_RANK];
    tconv_conv_transpose_attrs attrs;
    tconv_conv_transpose_geometry geometry;
} tconv_conv_transpose_match;

bool tconv_is_conv_transpose(const tconv_node *node);

/* Reads shapes and attributes and resolves the geometry under `convention`. Errors are prefixed
 * with the node. */
tconv_status tconv_conv_transpose_match_node(tconv_node *node, tconv_convention convention,
                                             tconv_conv_transpose_match *out, tconv_error *err);

/* Whether `policy` rewrites this node (see tconv_policy). */
bool tconv_conv_transpose_needs_rewrite(const tconv_conv_transpose_match *m, tconv_policy policy);

/* Adds the lint warnings for one node (meaning that differs between conventions, ignored
 * attributes, N,C-prefixed output_shape) to diagnostics. */
tconv_status tconv_conv_transpose_lint_node(tconv_node *node, tconv_diagnostics *diagnostics,
                                            tconv_error *err);
/* The same for the node at position `index` of its graph (for walks that track it). */
tconv_status tconv_conv_transpose_lint_node_at(tconv_node *node, size_t index,
                                               tconv_diagnostics *diagnostics, tconv_error *err);

#endif
