/* Emitting the small graph-op chains of the target lowerings (1-D through 2-D, group split,
 * dilation folded into W): new nodes named <base>/<suffix>, linked one after another after an
 * anchor node, int64 constants as initializers, and the op forms of the model's opset (Slice-1
 * attributes vs Slice-10 inputs, Unsqueeze/Squeeze-1 vs -13, Pad-2 vs -11, Reshape-1 vs -5). */
#ifndef TC_PASSES_LOWER_EMIT_H
#define TC_PASSES_LOWER_EMIT_H

#include "ir/ir.h"

typedef struct tc_emitter {
    tconv_model *model;
    tconv_graph *graph;
    const char *base;   /* readable prefix of new names */
    tconv_node *last;   /* new nodes go after this one (when `before` is NULL) */
    tconv_node *before; /* else right before this one, in order */
    int64_t opset;
    tconv_node **emitted; /* malloc'd: every node this emitter created */
    size_t n_emitted, cap_emitted;
    tc_error *err;
} tc_emitter;

/* An emitter whose nodes go right before `anchor` (see tc_emitter_after/before). */
void tc_emitter_init(tc_emitter *e, tconv_node *anchor, const char *base, tc_error *err);
void tc_emitter_free(tc_emitter *e);
/* Moves the insertion point: new nodes go right after `node`. */
void tc_emitter_after(tc_emitter *e, tconv_node *node);
/* Moves the insertion point before `node` (new nodes then precede it, in order). */
void tc_emitter_before(tc_emitter *e, tconv_node *node);
/* Records a node made elsewhere (the lowered node itself) among the emitted ones. */
tconv_status tc_emitter_record(tc_emitter *e, tconv_node *node);

tconv_status tc_emit_value(tc_emitter *e, const char *suffix, tconv_value **out);
/* A node with the given inputs (NULL entries: omitted) and one new output. */
tconv_status tc_emit_node(tc_emitter *e, const char *op_type, const char *suffix,
                          tconv_value *const *inputs, size_t n_inputs, tconv_node **node,
                          tconv_value **out);
tconv_status tc_emit_int64(tc_emitter *e, const char *suffix, const int64_t *values, size_t n,
                           tconv_value **out);

/* out = in[starts:ends] on `axes` (n of them), steps 1. */
tconv_status tc_emit_slice(tc_emitter *e, tconv_value *in, const int64_t *axes,
                           const int64_t *starts, const int64_t *ends, size_t n, const char *suffix,
                           tconv_value **out);
tconv_status tc_emit_unsqueeze(tc_emitter *e, tconv_value *in, const int64_t *axes, size_t n,
                               const char *suffix, tconv_value **out);
tconv_status tc_emit_squeeze(tc_emitter *e, tconv_value *in, const int64_t *axes, size_t n,
                             const char *suffix, tconv_value **out);
tconv_status tc_emit_concat(tc_emitter *e, tconv_value *const *inputs, size_t n, int64_t axis,
                            const char *suffix, tconv_value **out);
/* pads: 2 * rank values, begins then ends; constant 0. */
tconv_status tc_emit_pad(tc_emitter *e, tconv_value *in, const int64_t *pads, int rank,
                         const char *suffix, tconv_value **out);
tconv_status tc_emit_transpose(tc_emitter *e, tconv_value *in, const int64_t *perm, int rank,
                               const char *suffix, tconv_value **out);
tconv_status tc_emit_reshape(tc_emitter *e, tconv_value *in, const int64_t *shape, int rank,
                             const char *suffix, tconv_value **out);

/* Declares value's type: dtype and dims (-1 unknown). Adds a value_info entry. */
tconv_status tc_emit_declare(tc_emitter *e, tconv_value *value, tconv_dtype dtype, int rank,
                             const int64_t *dims);

#endif
