/* Shape rules shared by shape inference and the kernels (shape_rules.h). */
#include "ir/shape_rules.h"

#include <stdio.h>
#include <string.h>

bool tc_axis_normalize(int64_t axis, int rank, int *out) {
    if (rank < 0 || axis < -(int64_t)rank || axis >= (int64_t)rank)
        return false;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return true;
}

tc_axes_status tc_axes_normalize(const int64_t *axes, size_t n, int rank, int *out, size_t *bad) {
    bool seen[TC_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        *bad = i;
        if (rank > TC_MAX_RANK || !tc_axis_normalize(axes[i], rank, &out[i]))
            return TC_AXES_OUT_OF_RANGE;
        if (seen[out[i]])
            return TC_AXES_REPEATED;
        seen[out[i]] = true;
    }
    return TC_AXES_OK;
}

static bool dim_is(const tc_dim *d, int64_t value) {
    return d->kind == TCONV_DIM_STATIC && d->value == value;
}

static bool same_symbol(const tc_dim *a, const tc_dim *b) {
    return a->kind == TCONV_DIM_SYMBOLIC && b->kind == TCONV_DIM_SYMBOLIC && a->param && b->param &&
           strcmp(a->param, b->param) == 0;
}

bool tc_dim_broadcast(const tc_dim *a, const tc_dim *b, tc_dim *out) {
    if (dim_is(a, 1)) {
        *out = *b;
    } else if (dim_is(b, 1)) {
        *out = *a;
    } else if (a->kind == TCONV_DIM_STATIC && b->kind == TCONV_DIM_STATIC) {
        int64_t value;
        if (!tc_static_dim_broadcast(a->value, b->value, &value))
            return false; /* out untouched on a mismatch, as in every other case */
        *out = *a;
        out->value = value;
    } else if (a->kind == TCONV_DIM_STATIC) {
        *out = *a; /* b must be 1 or equal to it: either way the result is a */
    } else if (b->kind == TCONV_DIM_STATIC) {
        *out = *b;
    } else if (same_symbol(a, b)) {
        *out = *a;
    } else {
        *out = (tc_dim){.kind = TCONV_DIM_UNKNOWN};
    }
    out->origin = NULL;
    return true;
}

bool tc_reshape_target_check(const int64_t *target, const bool *known, int n, bool allowzero,
                             int in_rank, int *minus_one, char *why, size_t why_size) {
    *minus_one = -1;
    bool has_zero = false;
    for (int i = 0; i < n; i++) {
        if (known && !known[i])
            continue;
        int64_t e = target[i];
        if (e == 0 && !allowzero && in_rank >= 0 && i >= in_rank) {
            snprintf(why, why_size, "shape[%d] is 0 (copy) but the input has rank %d", i, in_rank);
            return false;
        }
        if (e == -1) {
            if (*minus_one >= 0) {
                snprintf(why, why_size, "shape has more than one -1");
                return false;
            }
            *minus_one = i;
        } else if (e < -1) {
            snprintf(why, why_size, "shape[%d] is %lld", i, (long long)e);
            return false;
        }
        has_zero = has_zero || e == 0;
    }
    if (allowzero && has_zero && *minus_one >= 0) {
        snprintf(why, why_size, "allowzero=1 forbids -1 together with 0 in the shape");
        return false;
    }
    return true;
}
