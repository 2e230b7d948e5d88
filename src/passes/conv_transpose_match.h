/* Matching a ConvTranspose node: its input shapes, attributes and resolved geometry, and
 * whether a policy asks for it to be rewritten. Shared by the legalization and the lint. */
#ifndef TC_PASSES_CONV_TRANSPOSE_MATCH_H
#define TC_PASSES_CONV_TRANSPOSE_MATCH_H

#include "ir/conv_transpose_geometry.h"
#include "passes/pass.h"

typedef struct tc_conv_transpose_match {
    tconv_node *node;
    int x_rank; /* -1 unknown */
    int64_t x_dims[TC_MAX_RANK];
    int w_rank;
    int64_t w_dims[TC_MAX_RANK];
    tc_conv_transpose_attrs attrs;
    tc_conv_transpose_geometry geometry;
} tc_conv_transpose_match;

bool tc_is_conv_transpose(const tconv_node *node);

/* Reads shapes and attributes and resolves the geometry under `convention`. Errors are prefixed
 * with the node. */
tconv_status tc_conv_transpose_match_node(tconv_node *node, tconv_convention convention,
                                          tc_conv_transpose_match *out, tc_error *err);

/* Whether `policy` rewrites this node (see tconv_policy). */
bool tc_conv_transpose_needs_rewrite(const tc_conv_transpose_match *m, tconv_policy policy);

/* Adds the lint warnings for the node at position `index` of its graph (meaning that differs
 * between conventions, nodes onnxruntime 1.30 refuses, ignored attributes, N,C-prefixed
 * output_shape) to diagnostics; `followed` is the convention the rewrite uses. */
tconv_status tc_conv_transpose_lint_node_at(tconv_node *node, size_t index,
                                            tconv_convention followed, tc_diagnostics *diagnostics,
                                            tc_error *err);

#endif
