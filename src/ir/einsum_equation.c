/* Einsum equation parsing (see einsum_equation.h). */
#include "ir/einsum_equation.h"

#include <ctype.h>
#include <string.h>

/* One term (operand or output) of the equation, spaces skipped. */
typedef struct term {
    int n; /* letters */
    int letters[TC_MAX_RANK];
    int ellipsis_at; /* letters before the ellipsis; -1: none */
} term;

static tconv_status parse_term(const char **p, term *t, tc_error *err) {
    t->n = 0;
    t->ellipsis_at = -1;
    for (;; (*p)++) {
        char c = **p;
        if (c == ' ')
            continue;
        if (c == '.') {
            if (strncmp(*p, "...", 3) != 0 || t->ellipsis_at >= 0)
                return tc_error_set(err, TCONV_ERR_INVALID, "a malformed ellipsis");
            t->ellipsis_at = t->n;
            *p += 2;
            continue;
        }
        if (!isalpha((unsigned char)c))
            return TCONV_OK;
        if (t->n == TC_MAX_RANK)
            return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "a term of more than %d labels",
                                TC_MAX_RANK);
        t->letters[t->n++] = (unsigned char)c;
    }
}

/* The labels of a term given the ellipsis width (ell dims, of `width` in all). */
static int expand_term(const term *t, int ell, int width, int *labels) {
    int k = 0;
    for (int i = 0; i <= t->n; i++) {
        if (i == t->ellipsis_at) {
            for (int e = 0; e < ell; e++)
                labels[k++] = TC_EINSUM_ELLIPSIS + width - ell + e;
        }
        if (i < t->n)
            labels[k++] = t->letters[i];
    }
    return k;
}

static tconv_status parse_inputs(const char **p, int n_operands, const int *ranks, tc_einsum *out,
                                 int *width, tc_error *err) {
    term terms[TC_EINSUM_MAX_OPERANDS];
    *width = 0;
    for (int i = 0; i < n_operands; i++) {
        tconv_status st = parse_term(p, &terms[i], err);
        if (st != TCONV_OK)
            return st;
        int ell = ranks[i] - terms[i].n;
        if (ell < 0 || (ell > 0 && terms[i].ellipsis_at < 0))
            return tc_error_set(err, TCONV_ERR_INVALID,
                                "term %d has %d labels for an operand of rank %d", i, terms[i].n,
                                ranks[i]);
        if (ell > *width)
            *width = ell;
        char want = i + 1 < n_operands ? ',' : '\0';
        if (want && **p != want)
            return tc_error_set(err, TCONV_ERR_INVALID, "%d terms for %d operands", i + 1,
                                n_operands);
        if (want)
            (*p)++;
    }
    for (int i = 0; i < n_operands; i++) {
        int ell = terms[i].ellipsis_at >= 0 ? ranks[i] - terms[i].n : 0;
        out->ranks[i] = expand_term(&terms[i], ell, *width, out->labels[i]);
    }
    return TCONV_OK;
}

/* numpy's implicit output: ellipsis dims, then the letters seen once, in alphabetical order. */
static void implicit_output(tc_einsum *e, int width) {
    int seen[TC_EINSUM_LABELS] = {0};
    for (int i = 0; i < e->n_operands; i++) {
        for (int d = 0; d < e->ranks[i]; d++)
            seen[e->labels[i][d]]++;
    }
    e->out_rank = 0;
    for (int w = 0; w < width; w++)
        e->out[e->out_rank++] = TC_EINSUM_ELLIPSIS + w;
    for (int c = 'A'; c <= 'z'; c++) {
        if (isalpha(c) && seen[c] == 1 && e->out_rank < TC_MAX_RANK)
            e->out[e->out_rank++] = c;
    }
}

/* The checks numpy makes on an explicit output: each label once (a repeated one, "ij->ii",
 * would make the kernel walk an input past its end: numpy refuses it), each in some input, and
 * the ellipsis there when the inputs' ellipsis covers dims. */
static tconv_status check_output(const tc_einsum *e, const term *t, int width, tc_error *err) {
    for (int a = 0; a < t->n; a++) {
        for (int b = 0; b < a; b++) {
            if (t->letters[a] == t->letters[b])
                return tc_error_set(err, TCONV_ERR_INVALID, "output label '%c' appears twice",
                                    t->letters[a]);
        }
    }
    if (width > 0 && t->ellipsis_at < 0)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "the inputs' ellipsis covers %d dims but the output has no ellipsis",
                            width);
    for (int o = 0; o < e->out_rank; o++) {
        bool found = false;
        for (int i = 0; i < e->n_operands && !found; i++) {
            for (int d = 0; d < e->ranks[i] && !found; d++)
                found = e->labels[i][d] == e->out[o];
        }
        if (!found)
            return tc_error_set(err, TCONV_ERR_INVALID, "output label '%c' is in no input",
                                e->out[o] < TC_EINSUM_ELLIPSIS ? e->out[o] : '.');
    }
    return TCONV_OK;
}

static tconv_status parse_equation(const char *equation, int n_operands, const int *ranks,
                                   tc_einsum *out, tc_error *err) {
    if (n_operands < 1 || n_operands > TC_EINSUM_MAX_OPERANDS)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "einsum: %d operands (at most %d)",
                            n_operands, TC_EINSUM_MAX_OPERANDS);
    out->n_operands = n_operands;
    const char *p = equation;
    int width;
    tconv_status st = parse_inputs(&p, n_operands, ranks, out, &width, err);
    if (st != TCONV_OK)
        return st;
    while (*p == ' ')
        p++;
    if (*p == '\0') {
        implicit_output(out, width);
        return TCONV_OK;
    }
    if (strncmp(p, "->", 2) != 0)
        return tc_error_set(err, TCONV_ERR_INVALID, "unexpected '%c'", *p);
    p += 2;
    term t;
    if ((st = parse_term(&p, &t, err)))
        return st;
    if (*p != '\0')
        return tc_error_set(err, TCONV_ERR_INVALID, "unexpected '%c'", *p);
    if (t.n + (t.ellipsis_at >= 0 ? width : 0) > TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "output rank above %d", TC_MAX_RANK);
    out->out_rank = expand_term(&t, t.ellipsis_at >= 0 ? width : 0, width, out->out);
    return check_output(out, &t, width, err);
}

tconv_status tc_einsum_parse(const char *equation, int n_operands, const int *ranks, tc_einsum *out,
                             tc_error *err) {
    memset(out, 0, sizeof *out);
    tconv_status st = parse_equation(equation, n_operands, ranks, out, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "attribute 'equation' '%s': ", equation);
    return TCONV_OK;
}
