/* Einsum's equation ("bij,bjk->bik", "...ii->...i", implicit "ij,jk"), parsed once for shape
 * inference and the runtime kernel so that both read it the same way. An ellipsis becomes
 * labels of its own (TC_EINSUM_ELLIPSIS + i), right-aligned across operands as numpy
 * broadcasts them. */
#ifndef TC_IR_EINSUM_EQUATION_H
#define TC_IR_EINSUM_EQUATION_H

#include "ir/error.h"
#include "ir/ir.h"

#define TC_EINSUM_MAX_OPERANDS 8
/* Label codes: 'A'-'Z', 'a'-'z' as themselves; ellipsis dims from TC_EINSUM_ELLIPSIS. */
#define TC_EINSUM_ELLIPSIS 128
#define TC_EINSUM_LABELS (TC_EINSUM_ELLIPSIS + TC_MAX_RANK)

typedef struct tc_einsum {
    int n_operands;
    int ranks[TC_EINSUM_MAX_OPERANDS];
    int labels[TC_EINSUM_MAX_OPERANDS][TC_MAX_RANK]; /* label code of each operand dim */
    int out_rank;
    int out[TC_MAX_RANK];
} tc_einsum;

/* Parses `equation` for n_operands operands of the given ranks. What numpy refuses is
 * TCONV_ERR_INVALID with a message naming the attribute and equation: a malformed equation, a
 * term whose labels do not match its operand's rank, an output label repeated or in no input,
 * an output without ellipsis where the inputs' ellipsis covers dims. */
tconv_status tc_einsum_parse(const char *equation, int n_operands, const int *ranks, tc_einsum *out,
                             tc_error *err);

#endif
