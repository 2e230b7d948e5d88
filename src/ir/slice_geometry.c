#include "ir/slice_geometry.h"

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Elements in [start, end) (or (end, start] for negative steps) taken every |step|; the
 * magnitude is computed unsigned so that step = INT64_MIN cannot overflow. */
static int64_t strided_count(int64_t start, int64_t end, int64_t step) {
    if (step > 0)
        return end > start ? 1 + (end - start - 1) / step : 0;
    uint64_t magnitude = (uint64_t)(-(step + 1)) + 1u;
    return start > end ? 1 + (int64_t)((uint64_t)(start - end - 1) / magnitude) : 0;
}

int64_t tc_slice_axis_count(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first) {
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (step > 0) {
        start = clamp_i64(start, 0, dim);
        end = clamp_i64(end, 0, dim);
    } else {
        start = clamp_i64(start, 0, dim - 1);
        end = clamp_i64(end, -1, dim - 1);
    }
    *first = start;
    return strided_count(start, end, step);
}
