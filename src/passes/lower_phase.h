/* A VALID ConvTranspose rewritten as Convs (issue 21's forms (a) and (b)), for targets that
 * refuse its stride, its kernel, or ConvTranspose altogether.
 *
 * Per spatial axis (input x, kernel k, stride s, dilation d), with A = floor((k-1)*d / s):
 *   the full output F = s*(x-1) + (k-1)*d + 1 splits by output phase o mod s; tap j lands on
 *   phase (j*d) mod s, shifted by floor(j*d / s). Each phase is a Conv over X of its own taps
 *   (flipped, C_in/C_out swapped per group), padded so every phase has x + A outputs; the
 *   phases are interleaved into s*(x + A) >= F positions and the last s - 1 - ((k-1)*d mod s)
 *   cut off (a Slice with negative ends: no static size needed).
 *
 *   stride 1 on every axis (form a): one Conv, the kernel flipped and transposed, dilation kept,
 *     pads (k-1)*d: no interleave, no crop;
 *   d = 1 (or s = 1) on every axis: ONE Conv with s^r * C_out output channels, every phase's
 *     kernel ceil(k/s) taps (zero taps only where k is not a multiple of s), channel c*P + p
 *     (per group contiguous, so the Conv keeps its group); then DepthToSpace (2-D, equal
 *     strides, allowed: CRD from opset 11, DCR before when group is 1) or Reshape, Transpose,
 *     Reshape. One Conv rather than s^r: X is unfolded once instead of once per phase, one GEMM
 *     with s^r times the rows fills the GEMM tiles better, and there is no Concat;
 *   d > 1 and s > 1 on an axis: phases differ in where their taps start, so each phase is its
 *     own Conv (its taps only, dilation d/gcd(d,s)); phases without any tap (when gcd(d,s) > 1)
 *     are zeros (ConstantOfShape), nothing is multiplied by an inserted zero; the phases are
 *     joined by Concat on the channel axis and interleaved (DepthToSpace DCR or Reshape,
 *     Transpose, Reshape).
 * Bias: on the Conv (repeated per phase) when it is constant and every phase has a Conv, else one
 * Add after the crop.
 * Weights are constants, or DequantizeLinear of constants (QDQ: each new Conv reads a new
 * DequantizeLinear, scales on the new axis 0), through lower_weights. A W computed at run time
 * (a graph input, any node's output) with a static shape takes the per-phase form, its taps
 * selected by graph ops: Transpose (Reshape, Transpose, Reshape for groups) into the Conv layout,
 * then per phase a Slice with negative steps (opset 10), which also flips it; otherwise the node
 * is refused naming W. */
#ifndef TC_PASSES_LOWER_PHASE_H
#define TC_PASSES_LOWER_PHASE_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "passes/rewrite_report.h"

/* Which strided form (stride 1 everywhere is always the one Conv of form (a)). */
typedef enum tc_phase_form {
    TC_PHASE_FORM_AUTO = 0, /* one Conv unless padding k to a multiple of s costs more than
                               TC_PHASE_ONE_CONV_MAX_EXTRA of the ConvTranspose's multiplies */
    TC_PHASE_FORM_ONE_CONV, /* one Conv wherever every axis has s = 1 or d = 1 */
    TC_PHASE_FORM_PER_PHASE /* one Conv per phase with taps: no zero tap at all */
} tc_phase_form;

/* AUTO's limit: the one-Conv form multiplies prod(ceil(k/s)*s) taps per output channel pair where
 * the ConvTranspose multiplies prod(k); above this ratio the per-phase form is chosen. */
#define TC_PHASE_ONE_CONV_MAX_EXTRA 1.2

typedef struct tc_conv_lowering {
    bool allow_depth_to_space; /* else interleave with Reshape/Transpose/Concat (Ethos-U has no
                                  DepthToSpace) */
    tc_phase_form form;        /* 0: AUTO */
} tc_conv_lowering;

/* Whether `node` (a ConvTranspose of `graph`) can be rewritten by
 * tc_lower_conv_transpose_as_convs; false with the reason (naming the node and the attribute,
 * input or opset in the way) otherwise. */
bool tc_conv_transpose_convs_possible(const tconv_graph *graph, const tconv_node *node,
                                      const tc_conv_lowering *how, char *why, size_t why_size);

/* Replaces `node` by the Convs and interleave above; its output value (and name) ends the new
 * chain, so consumers and graph outputs stay untouched. The new nodes follow the node's place
 * in the graph. `report` (may be NULL) records the rewrite. TCONV_ERR_UNSUPPORTED with the
 * reason of tc_conv_transpose_convs_possible when the node cannot be rewritten; nothing is
 * changed then. */
tconv_status tc_lower_conv_transpose_as_convs(tconv_model *model, tconv_graph *graph,
                                              tconv_node *node, const tc_conv_lowering *how,
                                              tc_rewrite_report *report, tc_error *err);

#endif
