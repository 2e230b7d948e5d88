/* Each op's work in max_work's unit (one multiply-add, one comparison, one element read or
 * written), computed from the shapes of its inputs and its first output. An op whose work grows
 * faster than the elements it reads and writes (a contraction, a window, a sort, a recurrence)
 * declares its cost function beside its entries in ir/ops.def:
 *
 *   TC_OP_WORK(dom, name, fn)    bool fn(const tconv_node *, const tc_work_shapes *, uint64_t *)
 *
 * defined in op_work.c; every other op costs one unit per element read or written. The
 * session's limit (session_work.c) asks tc_op_work at planning, with the declared shapes, and
 * when a kernel allocates its first output, with the actual ones. */
#ifndef TC_RUNTIME_OP_WORK_H
#define TC_RUNTIME_OP_WORK_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

#define TC_WORK_MAX_INPUTS 8

/* The shapes one node's work is computed from; rank -1 (or dims NULL): unknown. */
typedef struct tc_work_shapes {
    size_t n_in;
    int in_rank[TC_WORK_MAX_INPUTS];
    const int64_t *in_dims[TC_WORK_MAX_INPUTS];
    int out_rank;
    const int64_t *out_dims;
} tc_work_shapes;

/* A cost function: false when the shapes it needs are unknown (the work is then counted when
 * the kernel allocates its output, from the actual shapes). */
typedef bool (*tc_op_work_fn)(const tconv_node *node, const tc_work_shapes *w, uint64_t *out);

#define TC_OP(...)
#define TC_OP_WORK(dom, name, fn)                                                                  \
    bool fn(const tconv_node *node, const tc_work_shapes *w, uint64_t *out);
#include "ir/ops.def"
#undef TC_OP_WORK
#undef TC_OP

/* A pool's work once its taps are known: a prepared pool keeps tc_work_window_taps, the
 * product of kernel_shape, which tc_work_pool reads. */
uint64_t tc_work_window_taps(const tconv_node *node);
bool tc_work_window_outputs(uint64_t taps, const tc_work_shapes *w, uint64_t *out);

/* Gemm's work once transA is known (tc_work_gemm reads it; a prepared Gemm kept it). */
bool tc_work_gemm_trans(bool trans_a, const tc_work_shapes *w, uint64_t *out);

/* The elements a node reads and writes: the cost of an op without a cost function (a prepared
 * kernel of such an op gives it as its work). */
bool tc_work_elements_moved(const tc_work_shapes *w, uint64_t *out);

/* The work of one node: its op's cost function, else the elements it reads and writes. */
bool tc_op_work(const tconv_node *node, const tc_work_shapes *w, uint64_t *out);

/* The ops that declare a cost function, in table order, for the op table's test. */
size_t tc_op_work_names(const char *const **names);

uint64_t tc_work_add_sat(uint64_t a, uint64_t b);
uint64_t tc_work_mul_sat(uint64_t a, uint64_t b);

#endif
