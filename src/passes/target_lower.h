/* The target lowerings (issue 21): rewrite patterns that each remove one feature a target
 * refuses from a ConvTranspose, composed per node by the lower-for-target pass
 * (target_lower.c) in the order of least work:
 *
 *   (g) pad forms        legalize-conv-transpose, told by tc_target_keeps_pads which nodes
 *                        keep their pads (their form is one the target takes)
 *   (e) dilation         folded into W (lower_dilation.c)
 *   (c) 1-D through 2-D  Unsqueeze, 2-D ConvTranspose, Squeeze (lower_rank.c)
 *   (f) 3-D through 2-D  depth kernel 1, stride 1: depth folded into the batch (lower_depth.c)
 *   (d) groups           Slice of X, W, B per group, one ConvTranspose each, Concat
 * (lower_groups.c) (a)/(b) stride, kernel or no ConvTranspose: the phase decomposition
 * (lower_phase.h, branch phase)
 *
 * A pattern's match says whether it applies and, when it does not although the target needs it,
 * why (`why`). Its rewrite keeps the node (changed in place) and may add ConvTranspose nodes,
 * which the pass lowers in turn. What is left unacceptable the pass's post-condition (the
 * independent checker, target_check.c) names, node by node. */
#ifndef TC_PASSES_TARGET_LOWER_H
#define TC_PASSES_TARGET_LOWER_H

#include "passes/conv_transpose_match.h"
#include "passes/lower_emit.h"
#include "passes/lower_weights.h"
#include "passes/target.h"

/* Whether the target takes the node's pads as they are (no output_shape, no SAME_LOWER, no
 * negative pads, a form and size the target takes, nothing later needs pads 0); otherwise the
 * legalization rewrites it to VALID + Slice/Pad/Add. */
bool tc_target_keeps_pads(const tc_target *target, const tc_conv_transpose_match *m);

/* Whether the node's stride, kernel or op needs the phase decomposition on this target (after
 * the other lowerings: dilation folded, 1-D lifted). */
bool tc_target_needs_phase(const tc_target *target, const tc_conv_transpose_match *m);

typedef struct tc_lowering {
    const char *name; /* "dilation folded into W" */
    /* true: applies (the target needs it and the node allows it). false with why[0] set: the
     * target needs it but the node does not allow it; false with why "": not needed. */
    bool (*match)(const tc_target *target, const tc_conv_transpose_match *m, char *why,
                  size_t why_size);
    /* Rewrites m->node in place (emitting through e); ConvTranspose nodes it adds go to
     * added[0 .. *n_added-1] (at most `max_added`). */
    tconv_status (*rewrite)(tc_emitter *e, const tc_conv_transpose_match *m, tconv_node **added,
                            size_t max_added, size_t *n_added);
} tc_lowering;

extern const tc_lowering tc_lower_dilation;
extern const tc_lowering tc_lower_rank;
extern const tc_lowering tc_lower_groups;
extern const tc_lowering tc_lower_depth;
/* Whether a 3-D node folds its depth into the batch (lower_depth.c). */
bool tc_lower_depth_foldable(const tc_conv_transpose_match *m);

/* The dtype of the node's output (or of X when Y has none). */
tconv_dtype tc_lower_node_dtype(const tconv_node *node);
/* Copies every attribute of `from` to `to` (ints, int, string, floats, float). */
tconv_status tc_lower_copy_attrs(const tconv_node *from, tconv_node *to, tc_error *err);
/* A constant W or B (an initializer, a Constant, a DequantizeLinear of one) rewritten by `edit`
 * and emitted before the node being lowered (lower_weights: under QDQ a new DequantizeLinear with
 * its scales moved along), *out the value the node is to read; *constant false (and nothing
 * done) when `value` is no constant: the lowering then edits it with graph ops. */
typedef tconv_status (*tc_weight_edit_fn)(tc_weight *weight, const void *ctx, tc_error *err);
tconv_status tc_lower_constant_weight(tc_emitter *e, tconv_value *value, const char *suffix,
                                      tc_weight_edit_fn edit, const void *ctx, tconv_value **out,
                                      bool *constant);

/* The per-axis attributes of a ConvTranspose that becomes 2-D (1-D lifted, 3-D folded): the
 * node is 2-D, values[0] kernel_shape, [1] strides, [2] dilations, [3] output_padding (2 each,
 * set where `a` had it), pads (4, begins then ends, set where `a` had them). */
tconv_status tc_lower_set_2d_attrs(tconv_node *node, const tc_conv_transpose_attrs *a,
                                   const int64_t values[4][2], const int64_t pads[4],
                                   tc_error *err);

/* Declares a new value like an existing one with axis `axis` of size `size` (-1 unknown), an
 * axis inserted at `insert` (>= 0) or none (-1). */
tconv_status tc_lower_declare_like(tc_emitter *e, tconv_value *value, const tconv_value *like,
                                   int axis, int64_t size, int insert);

#endif
