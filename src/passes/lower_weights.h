/* A Conv/ConvTranspose weight (W or B) read as a constant and rewritten for a new layout: the one
 * place where lowerings move weight elements (phase decomposition, group split, dilation fold,
 * 1-D -> 2-D, the stride-1 Conv form).
 *
 * Sources: an initializer, a Constant node (attribute `value`), or a DequantizeLinear of either
 * (QDQ: per-tensor, or per-axis scales and zero points). A lowering
 *   1. finds the source of a node input     tc_weight_source_find (false + a reason: not constant)
 *   2. loads it into a tc_weight            tc_weight_load (raw elements of the stored dtype: the
 *                                           quantized integers under QDQ, floats otherwise)
 *   3. reshapes it with the operations below, each materialized (weights are small next to the
 *      activations, and a copy per step keeps every operation simple and composable)
 *   4. emits it                             tc_weight_emit: a new initializer, and under QDQ a new
 *                                           DequantizeLinear with its scales and zero points
 *                                           gathered to the new quantized axis
 *
 * Under QDQ the weight remembers, along its quantized axis, which scale/zero point of the source
 * each position uses (`qmap`), so slicing, flipping, permuting, repeating and merging axes carry
 * the scales along; per-tensor quantization has no axis. Inserted elements (taps past the kernel,
 * zeros between dilated taps) are 0 for float weights and the zero point of their channel under
 * QDQ, so that they dequantize to exactly 0.
 *
 * Ownership: a tc_weight owns its buffers (malloc); tc_weight_free releases them. Every operation
 * leaves the weight unchanged when it fails. */
#ifndef TC_PASSES_LOWER_WEIGHTS_H
#define TC_PASSES_LOWER_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Where a node input's value comes from, when it is constant. */
typedef struct tc_weight_source {
    tconv_value *value;       /* the input as the node reads it */
    tconv_tensor *tensor;     /* the stored elements: floats, or the quantized integers (QDQ) */
    tconv_node *constant;     /* the Constant node that holds `tensor`, or NULL (an initializer) */
    tconv_node *dequantize;   /* the DequantizeLinear between `tensor` and the node, or NULL */
    tconv_tensor *scale;      /* QDQ: x_scale (rank 0: per tensor; rank 1: per axis) */
    tconv_tensor *zero_point; /* QDQ: x_zero_point, or NULL (0) */
    int axis;                 /* QDQ per-axis: the axis of `tensor` the scales run along; else -1 */
} tc_weight_source;

/* Finds the constant behind `value`: an initializer (not also a graph input that a caller may
 * override, from IR version 4), a Constant node with a `value` tensor, or DequantizeLinear(x,
 * scale[, zero_point]) of such constants (per-tensor or per-axis; blocked quantization and
 * sub-byte types are refused). false with a reason in `why` (naming the node or value) when it is
 * not one of these: the lowering then needs graph ops or refuses. */
bool tc_weight_source_find(tconv_value *value, tc_weight_source *out, char *why, size_t why_size);

/* A weight being rewritten: row-major little-endian elements of `dtype`. */
typedef struct tc_weight {
    tconv_dtype dtype; /* the stored type (the quantized type under QDQ) */
    size_t elem_size;  /* bytes per element */
    int rank;
    int64_t dims[TC_MAX_RANK];
    int64_t count; /* elements */
    uint8_t *data; /* malloc'd, count * elem_size bytes (NULL when count is 0) */
    bool quantized;
    int qaxis;     /* quantized per axis: the axis the scales run along; -1 per tensor / float */
    int64_t *qmap; /* qaxis >= 0: for each position along qaxis, the source's scale index */
    const tc_weight_source *source; /* borrowed: the scales and zero points qmap indexes */
} tc_weight;

/* Copies the source's elements into `out` (dims of the stored tensor). `source` must outlive
 * `out` (tc_weight_emit reads its scales and zero points). */
tconv_status tc_weight_load(const tc_weight_source *source, tc_weight *out, tc_error *err);
void tc_weight_free(tc_weight *weight);

/* Keeps positions [start, start + size) of `axis` (slice channels: group split). */
tconv_status tc_weight_slice(tc_weight *weight, int axis, int64_t start, int64_t size,
                             tc_error *err);
/* Position i of `axis` becomes the old position start + i*step for i in [0, size); positions
 * outside the old axis are inserted zeros. step may be negative: take(axis, k-1, -1, k) flips,
 * take(axis, p + (n-1)*s, -s, n) selects the taps of phase p flipped, zero-padded to n taps. */
tconv_status tc_weight_take(tc_weight *weight, int axis, int64_t start, int64_t step, int64_t size,
                            tc_error *err);
/* Reverses `axis` (the spatial flip of the Conv form). */
tconv_status tc_weight_flip(tc_weight *weight, int axis, tc_error *err);
/* New axis i is old axis perm[i] (perm has `rank` entries). */
tconv_status tc_weight_permute(tc_weight *weight, const int *perm, tc_error *err);
/* factor - 1 zeros between neighbouring positions of `axis`: size n becomes (n-1)*factor + 1
 * (dilation folded into the kernel). */
tconv_status tc_weight_spread(tc_weight *weight, int axis, int64_t factor, tc_error *err);
/* Each position of `axis` repeated `times` times in place: [a, b] -> [a, a, b, b] (a bias per
 * phase channel c*P + p). */
tconv_status tc_weight_repeat(tc_weight *weight, int axis, int64_t times, tc_error *err);
/* A new axis of size 1 before position `at` (0..rank): 1-D -> 2-D. */
tconv_status tc_weight_insert_axis(tc_weight *weight, int at, tc_error *err);
/* `axis` of size outer * (dims[axis] / outer) becomes two axes (outer, dims[axis] / outer): the
 * group axis of a grouped weight. The quantized axis can be split only when one part is 1. */
tconv_status tc_weight_split_axis(tc_weight *weight, int axis, int64_t outer, tc_error *err);
/* Axes [first, first + count) become one (row-major). A quantized axis among them becomes the
 * merged axis; its scales repeat over the other merged axes. */
tconv_status tc_weight_merge_axes(tc_weight *weight, int first, int count, tc_error *err);

/* parts[0..n) (same dtype, source and dims except along `axis`; under per-channel QDQ, their
 * scale maps equal unless `axis` is the quantized one) joined along `axis` into `out` (the
 * phases of a single Conv: one part per phase, joined on a new axis then merged). The parts are
 * left as they are. */
tconv_status tc_weight_concat(const tc_weight *parts, size_t n, int axis, tc_weight *out,
                              tc_error *err);

/* The ConvTranspose -> Conv weight: W (C_in, C_out/g, k...) of a ConvTranspose with `group`
 * groups becomes (C_out, C_in/g, k...) with every spatial axis flipped: axis 0 split into
 * (g, C_in/g), C_in/g and C_out/g swapped, merged back. The stride-1 form uses it as it is, the
 * phase form selects taps afterwards. */
tconv_status tc_weight_conv_transpose_to_conv(tc_weight *weight, int64_t group, tc_error *err);

/* Writes the weight into `graph`: an initializer named after `base` (made unique), and under QDQ
 * a DequantizeLinear (attributes of the source's, axis = qaxis) with its own scale and zero point
 * initializers, inserted before `before` (or appended when NULL). *out is the value a node reads
 * (the DequantizeLinear's output under QDQ); *dequantize the new node or NULL. */
tconv_status tc_weight_emit(const tc_weight *weight, tconv_graph *graph, tconv_node *before,
                            const char *base, tconv_value **out, tconv_node **dequantize,
                            tc_error *err);

#endif
