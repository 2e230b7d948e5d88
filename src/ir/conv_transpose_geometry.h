/* The one place where ConvTranspose's pads and output size are resolved (docs/semantics.md).
 * Shape inference, the legalization pass, the lint and the runtime kernel all call this, so the
 * arithmetic cannot drift between them; golden data (ONNX conformance, PyTorch) proves it. */
#ifndef TC_IR_CONV_TRANSPOSE_GEOMETRY_H
#define TC_IR_CONV_TRANSPOSE_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"
#include "ir/window_geometry.h" /* TC_MAX_SPATIAL, auto_pad, the divisions */

/* tconv_convention (whose pad split to reproduce, docs/semantics.md) is public: tconv/types.h. */

const char *tconv_convention_name(tconv_convention convention);
/* Parses "onnx", "ort", "ort-legacy"; false if unknown. */
bool tc_convention_parse(const char *text, tconv_convention *out);

/* The attributes of one ConvTranspose node, as written (absent ones flagged). */
typedef struct tc_conv_transpose_attrs {
    int spatial_rank;
    int64_t group;
    tc_auto_pad auto_pad;
    bool has_kernel_shape, has_pads, has_output_shape, has_output_padding;
    bool output_shape_has_batch_channel; /* output_shape carried N,C in front (accepted) */
    int64_t kernel_shape[TC_MAX_SPATIAL];
    int64_t strides[TC_MAX_SPATIAL];
    int64_t dilations[TC_MAX_SPATIAL];
    int64_t output_padding[TC_MAX_SPATIAL];
    int64_t pads[2 * TC_MAX_SPATIAL]; /* begins then ends, as in ONNX */
    int64_t output_shape[TC_MAX_SPATIAL];
} tc_conv_transpose_attrs;

/* Reads and checks the attributes of a ConvTranspose node. spatial_rank is the number of spatial
 * axes when known from X or W (-1: take it from the attributes). Errors name the node and the
 * attribute (wrong type, wrong length, non-positive stride/dilation/group, unknown auto_pad). */
tconv_status tc_conv_transpose_read_attrs(const tconv_node *node, int spatial_rank,
                                          tc_conv_transpose_attrs *out, tc_error *err);

/* The resolved geometry. Sizes that depend on an unknown input dim are -1. */
typedef struct tc_conv_transpose_geometry {
    int spatial_rank;
    int64_t group;
    int64_t c_in;  /* X channels (-1 unknown) */
    int64_t c_out; /* W.shape[1] * group (-1 unknown) */
    int64_t kernel[TC_MAX_SPATIAL];
    int64_t strides[TC_MAX_SPATIAL];
    int64_t dilations[TC_MAX_SPATIAL];
    int64_t output_padding[TC_MAX_SPATIAL];
    int64_t in[TC_MAX_SPATIAL];   /* input spatial size, -1 unknown */
    int64_t full[TC_MAX_SPATIAL]; /* F = s*(x-1) + (k-1)*d + 1, the VALID output; -1 unknown */
    int64_t out[TC_MAX_SPATIAL];  /* output spatial size, -1 unknown */
    /* Output o is full[o + pad_begin] where 0 <= o + pad_begin < full, else 0 (then bias).
     * Either may be negative (the output extends past F on that side). out = full - pb - pe
     * + output_padding. Known whenever pads_known. */
    int64_t pad_begin[TC_MAX_SPATIAL];
    int64_t pad_end[TC_MAX_SPATIAL];
    bool pads_known; /* false only for output_shape with an unknown input size */
    /* Set when the requested convention's runtime refuses this node (onnxruntime 1.30,
     * docs/semantics.md): a static reason; the geometry above is then ONNX's, which tconv follows.
     */
    const char *convention_refusal;
    /* onnxruntime 1.30 refuses output_shape with a too-negative total, which depends on the
     * input size: true when that size is unknown and the node may be refused for some sizes. */
    bool convention_refusal_depends_on_size;
} tc_conv_transpose_geometry;

/* Resolves pads and sizes under `convention` (docs/semantics.md: ONNX; onnxruntime 1.30's
 * measured rule for TCONV_CONVENTION_ORT, which clamps negative totals to 0 and refuses some
 * nodes, resolved as ONNX with convention_refusal set; onnxruntime <= 1.12's for ORT_LEGACY).
 * x_dims: N, C, spatial... (rank = spatial_rank + 2, -1 for unknown dims). w_dims: C_in,
 * C_out/group, k... (-1 for unknown; the kernel must be known from W or kernel_shape). Validates:
 * kernel_shape agrees with W, group divides C_in and X's channels match W, output_padding <
 * max(stride, dilation), output size > 0. Messages say which axis and value; the caller prefixes
 * the node. */
tconv_status tc_conv_transpose_resolve(const tc_conv_transpose_attrs *attrs, const int64_t *x_dims,
                                       const int64_t *w_dims, tconv_convention convention,
                                       tc_conv_transpose_geometry *out, tc_error *err);

/* The operand checks of the runtime kernel, for import and shape inference too (one message
 * wherever the shapes are known). Ranks are -1 when unknown: X's rank is 3 to
 * TC_MAX_SPATIAL + 2, W's rank equals X's (or is at least 3 when X's is unknown). */
tconv_status tc_conv_transpose_check_ranks(int x_rank, int w_rank, tc_error *err);
/* B (absent: b_rank -2; unknown rank: -1; unknown dims -1) is 1-D with c_out elements (c_out
 * -1 when unknown). */
tconv_status tc_conv_transpose_check_bias(int b_rank, const int64_t *b_dims, int64_t c_out,
                                          tc_error *err);

#endif
