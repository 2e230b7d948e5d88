#include "ir/slice_geometry.h"

#include <string.h>

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

tconv_status tc_slice_args_complete(tc_slice_args *args, size_t n_ends, bool has_axes,
                                    size_t n_axes, bool has_steps, size_t n_steps, tc_error *err) {
    size_t n = args->n;
    if (n_ends != n || (has_axes && n_axes != n) || (has_steps && n_steps != n))
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "starts (%zu), ends (%zu), axes (%zu) and steps (%zu) differ in "
                            "length",
                            n, n_ends, has_axes ? n_axes : n, has_steps ? n_steps : n);
    for (size_t i = 0; i < n; i++) {
        if (!has_axes)
            args->axes[i] = (int64_t)i;
        if (!has_steps)
            args->steps[i] = 1;
    }
    return TCONV_OK;
}

static tconv_status read_attr(const tconv_node *node, const char *name, int64_t *out, size_t *count,
                              bool *present, tc_error *err) {
    const int64_t *values;
    tconv_status st = tc_node_attr_ints(node, name, present, &values, count, err);
    if (st != TCONV_OK)
        return st;
    if (*count > TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                            "attribute '%s' has %zu values, at most %d are supported", name, *count,
                            TC_MAX_RANK);
    if (*count)
        memcpy(out, values, *count * sizeof *out);
    return TCONV_OK;
}

tconv_status tc_slice_args_from_attrs(const tconv_node *node, tc_slice_args *args, tc_error *err) {
    size_t n_ends = 0, n_axes = 0;
    bool has_starts, has_ends, has_axes;
    tconv_status st = read_attr(node, "starts", args->starts, &args->n, &has_starts, err);
    if (st == TCONV_OK)
        st = read_attr(node, "ends", args->ends, &n_ends, &has_ends, err);
    if (st == TCONV_OK)
        st = read_attr(node, "axes", args->axes, &n_axes, &has_axes, err);
    if (st != TCONV_OK)
        return st;
    if (!has_starts || !has_ends)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "Slice-1 needs the attributes 'starts' and 'ends'");
    return tc_slice_args_complete(args, n_ends, has_axes, n_axes, false, 0, err);
}
