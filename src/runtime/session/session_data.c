/* Data helpers around a session: seeded random inputs and tolerance comparison. */
#include "runtime/kernels/kernels.h"
#include "runtime/session/session.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- random inputs */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t hash_name(const char *s) {
    uint64_t h = UINT64_C(1469598103934665603);
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

/* Uniform in [-1, 1]. */
static double random_unit(uint64_t *state) {
    return (double)(splitmix64(state) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static bool find_binding(const tc_dim_binding *b, size_t n, const char *name, int64_t *out) {
    for (size_t i = 0; i < n; i++) {
        if (b[i].name && strcmp(b[i].name, name) == 0) {
            *out = b[i].value;
            return true;
        }
    }
    return false;
}

static tconv_status resolve_input_dims(const tconv_value *value, const tc_dim_binding *bindings,
                                       size_t n_bindings, int *rank, int64_t *dims, tc_error *err) {
    const tc_type *type = &value->type;
    if (type->kind != TCONV_TYPE_TENSOR)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "input '%s' is not a tensor", value->name);
    if (type->rank < 0 || type->rank > TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_USAGE, "input '%s' has no known shape: give its data",
                            value->name);
    for (int i = 0; i < type->rank; i++) {
        const tc_dim *d = &type->dims[i];
        if (d->kind == TCONV_DIM_STATIC) {
            dims[i] = d->value;
        } else if (d->kind == TCONV_DIM_SYMBOLIC && d->param &&
                   find_binding(bindings, n_bindings, d->param, &dims[i])) {
            if (dims[i] < 0)
                return tc_error_set(err, TCONV_ERR_USAGE, "dim '%s' bound to %lld", d->param,
                                    (long long)dims[i]);
        } else if (d->kind == TCONV_DIM_SYMBOLIC && d->param) {
            return tc_error_set(err, TCONV_ERR_USAGE,
                                "input '%s': dim %d ('%s') is dynamic: bind '%s' to a value "
                                "or give the input's data",
                                value->name, i, d->param, d->param);
        } else {
            return tc_error_set(err, TCONV_ERR_USAGE,
                                "input '%s': dim %d is dynamic and unnamed: give the input's "
                                "data",
                                value->name, i);
        }
    }
    *rank = type->rank;
    return TCONV_OK;
}

static void fill_random(tc_rt_tensor *t, uint64_t *state) {
    const tc_dtype_traits *traits = tc_dtype_traits_of(t->dtype);
    for (int64_t i = 0; i < t->n_elements; i++) {
        double u = random_unit(state);
        uint64_t r = splitmix64(state);
        if (t->dtype == TCONV_DTYPE_FLOAT8E8M0) /* a scale: 2^-3 .. 2^0 */
            ((uint8_t *)t->data)[i] = (uint8_t)(124u + r % 4u);
        else if (traits->kind == TC_DTYPE_KIND_FLOAT) /* the values inputs always had: the */
            traits->set_f64(t->data, i, /* 16-bit floats rounded from float(u), not from u */
                            traits->size == 2 ? (double)(float)u : u);
        else if (traits->set_bits) /* small integers: 0/1 for bool and the sub-byte types */
            traits->set_bits(t->data, i,
                             r % (traits->kind == TC_DTYPE_KIND_BOOL || traits->subbyte ? 2u : 8u));
    }
}

tconv_status tc_session_random_input(const tconv_value *value, uint64_t seed,
                                     const tc_dim_binding *bindings, size_t n_bindings,
                                     tc_rt_tensor *t, tc_error *err) {
    int rank = 0;
    int64_t dims[TC_MAX_RANK];
    tconv_status st = resolve_input_dims(value, bindings, n_bindings, &rank, dims, err);
    if (st != TCONV_OK)
        return st;
    st = tc_rt_tensor_alloc(t, value->type.dtype, rank, dims, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "input '%s': ", value->name);
    uint64_t state = seed ^ hash_name(value->name);
    fill_random(t, &state);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- comparison */

static bool is_float_dtype(tconv_dtype d) {
    return d == TCONV_DTYPE_FLOAT || d == TCONV_DTYPE_DOUBLE || tc_dtype_is_half(d) ||
           tc_dtype_is_minifloat(d);
}

static tconv_status compare_layout(const tc_rt_tensor *a, const tc_rt_tensor *e, tc_error *err) {
    char sa[256], se[256];
    if (a->dtype != e->dtype)
        return tc_error_set(err, TCONV_ERR_MISMATCH, "dtype %s, expected %s",
                            tconv_dtype_name(a->dtype), tconv_dtype_name(e->dtype));
    bool same = a->rank == e->rank;
    for (int i = 0; same && i < a->rank; i++)
        same = a->dims[i] == e->dims[i];
    if (!same)
        return tc_error_set(err, TCONV_ERR_MISMATCH, "shape %s, expected %s",
                            tc_shape_format(a->rank, a->dims, sa, sizeof sa),
                            tc_shape_format(e->rank, e->dims, se, sizeof se));
    return TCONV_OK;
}

/* Flat index -> "[i,j,k]" for messages. */
static const char *format_index(const tc_rt_tensor *t, int64_t flat, char *buf, size_t size) {
    int64_t idx[TC_MAX_RANK];
    for (int i = t->rank - 1; i >= 0; i--) {
        idx[i] = t->dims[i] ? flat % t->dims[i] : 0;
        flat = t->dims[i] ? flat / t->dims[i] : 0;
    }
    return tc_shape_format(t->rank, idx, buf, size);
}

typedef struct compare_result {
    double max_abs, max_rel;
    int64_t n_bad, first_bad;
    double bad_actual, bad_expected;
} compare_result;

static void compare_float_element(double a, double e, double rtol, double atol, int64_t i,
                                  compare_result *r) {
    bool ok;
    double abs_err;
    if (isnan(a) || isnan(e)) {
        ok = isnan(a) && isnan(e);
        abs_err = ok ? 0.0 : INFINITY;
    } else if (isinf(a) || isinf(e)) {
        ok = a == e;
        abs_err = ok ? 0.0 : INFINITY;
    } else {
        abs_err = fabs(a - e);
        ok = abs_err <= atol + rtol * fabs(e);
    }
    if (abs_err > r->max_abs)
        r->max_abs = abs_err;
    if (e != 0.0 && isfinite(abs_err) && abs_err / fabs(e) > r->max_rel)
        r->max_rel = abs_err / fabs(e);
    if (!ok && r->n_bad++ == 0) {
        r->first_bad = i;
        r->bad_actual = a;
        r->bad_expected = e;
    }
}

static void compare_int_element(int64_t a, int64_t e, int64_t i, compare_result *r) {
    double abs_err = fabs((double)a - (double)e);
    if (abs_err > r->max_abs)
        r->max_abs = abs_err;
    if (e != 0 && abs_err / fabs((double)e) > r->max_rel)
        r->max_rel = abs_err / fabs((double)e);
    if (a != e && r->n_bad++ == 0) {
        r->first_bad = i;
        r->bad_actual = (double)a;
        r->bad_expected = (double)e;
    }
}

tconv_status tc_rt_tensor_compare(const tc_rt_tensor *actual, const tc_rt_tensor *expected,
                                  double rtol, double atol, double *max_abs_err,
                                  double *max_rel_err, tc_error *err) {
    compare_result r = {0};
    if (max_abs_err)
        *max_abs_err = 0.0;
    if (max_rel_err)
        *max_rel_err = 0.0;
    tconv_status st = compare_layout(actual, expected, err);
    if (st != TCONV_OK) {
        if (max_abs_err)
            *max_abs_err = INFINITY;
        return st;
    }
    bool floating = is_float_dtype(actual->dtype);
    for (int64_t i = 0; i < actual->n_elements; i++) {
        if (floating)
            compare_float_element(tc_rt_get_f64(actual, i), tc_rt_get_f64(expected, i), rtol, atol,
                                  i, &r);
        else if (actual->dtype == TCONV_DTYPE_UINT64)
            compare_int_element((int64_t)((const uint64_t *)actual->data)[i],
                                (int64_t)((const uint64_t *)expected->data)[i], i, &r);
        else
            compare_int_element(tc_rt_get_i64(actual, i), tc_rt_get_i64(expected, i), i, &r);
    }
    if (max_abs_err)
        *max_abs_err = r.max_abs;
    if (max_rel_err)
        *max_rel_err = r.max_rel;
    if (r.n_bad == 0)
        return TCONV_OK;
    char where[256];
    return tc_error_set(err, TCONV_ERR_MISMATCH,
                        "%lld of %lld elements differ (rtol %g, atol %g); first at %s: got "
                        "%.9g, expected %.9g; max abs err %.3g",
                        (long long)r.n_bad, (long long)actual->n_elements, rtol, atol,
                        format_index(actual, r.first_bad, where, sizeof where), r.bad_actual,
                        r.bad_expected, r.max_abs);
}
