/* The shape rules both shape inference (src/passes) and the kernels (src/runtime) apply, written
 * once so the two can never disagree: an axis against a rank, numpy broadcasting of one axis,
 * and the rules of Reshape's target shape. Slice's arguments and index arithmetic are in
 * slice_geometry.h. The callers word their own errors (a node path, a kernel context); these
 * only say what is wrong. */
#ifndef TC_IR_SHAPE_RULES_H
#define TC_IR_SHAPE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* `axis` of a tensor of rank `rank` in [0, rank), negative counting from the end; false when it
 * is outside [-rank, rank). */
bool tc_axis_normalize(int64_t axis, int rank, int *out);

/* A list of axes normalized against rank, none twice. TC_AXES_OK, or what is wrong with
 * axes[*bad]. */
typedef enum tc_axes_status { TC_AXES_OK, TC_AXES_OUT_OF_RANGE, TC_AXES_REPEATED } tc_axes_status;
tc_axes_status tc_axes_normalize(const int64_t *axes, size_t n, int rank, int *out, size_t *bad);

/* One axis of numpy broadcasting between two known dims: a 1 takes the other, equal dims agree;
 * false when they differ and neither is 1. Inline: the executor broadcasts every axis of every
 * elementwise step with it. */
static inline bool tc_static_dim_broadcast(int64_t a, int64_t b, int64_t *out) {
    if (a != 1 && b != 1 && a != b)
        return false;
    *out = a == 1 ? b : a;
    return true;
}

/* One axis of numpy broadcasting: the static rule above between known dims; a 1 takes the other
 * dim, equal dims agree, a static dim other than 1 wins over a symbol (the symbol must be 1 or
 * equal to it), two symbols agree when they are the same one, else the dim is unknown. False when
 * both are static, differ and neither is 1. The result has no origin. */
bool tc_dim_broadcast(const tc_dim *a, const tc_dim *b, tc_dim *out);

/* Reshape's target shape (ONNX Reshape-5/14): an entry 0 copies the input's dim at that index
 * (unless allowzero: then it is 0), one entry -1 is inferred from the element count, any other
 * negative entry is invalid, and allowzero forbids 0 and -1 together. known[i] false: entry i
 * is not a number yet (a symbol) and is left alone; known may be NULL (all known). in_rank < 0:
 * the input's rank is unknown. On success *minus_one is the index of the -1 entry, or -1; false
 * with `why` said otherwise. */
bool tc_reshape_target_check(const int64_t *target, const bool *known, int n, bool allowzero,
                             int in_rank, int *minus_one, char *why, size_t why_size);

#endif
