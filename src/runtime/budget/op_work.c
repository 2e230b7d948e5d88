/* The ops' cost functions (op_work.h), declared with the ops in ir/ops.def. Each counts what its
 * kernel really does, so that a 16 KB model cannot ask for 1e12 products under a limit that
 * counted them as elements (issue 27: Einsum "a,b,c,d->", LRN of size 40001, an LSTM of
 * 1.7e12 multiply-adds). */
#include "runtime/budget/op_work.h"

#include <stdlib.h>
#include <string.h>

#include "ir/einsum_equation.h"
#include "ir/ops.h"

uint64_t tc_work_add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t tc_work_mul_sat(uint64_t a, uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* Elements of a shape; false when unknown. */
static bool elements(int rank, const int64_t *dims, uint64_t *out) {
    if (rank < 0 || !dims)
        return false;
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return false;
        n = tc_work_mul_sat(n, (uint64_t)dims[i]);
    }
    *out = n;
    return true;
}

static bool input_elements(const tc_work_shapes *w, size_t i, uint64_t *out) {
    return i < w->n_in && elements(w->in_rank[i], w->in_dims[i], out);
}

static bool known_input(const tc_work_shapes *w, size_t i) {
    return i < w->n_in && w->in_rank[i] >= 0 && w->in_dims[i];
}

static int64_t dim_or_zero(int64_t d) {
    return d > 0 ? d : 0;
}

/* ---------------------------------------------------------------- the default */

/* One unit per element read or written. */
bool tc_work_elements_moved(const tc_work_shapes *w, uint64_t *out) {
    uint64_t y = 0;
    bool have_y = elements(w->out_rank, w->out_dims, &y);
    uint64_t total = have_y ? y : 0;
    for (size_t i = 0; i < w->n_in; i++) {
        uint64_t n;
        if (input_elements(w, i, &n))
            total = tc_work_add_sat(total, n);
    }
    *out = total;
    return have_y || w->n_in > 0;
}

/* ---------------------------------------------------------------- contractions */

/* Weight elements per output (Conv) or per input (ConvTranspose) element: W's (input 1)
 * elements over its first dim. */
static bool per_element_taps(const tc_work_shapes *w, uint64_t *out) {
    uint64_t n;
    if (!input_elements(w, 1, &n) || w->in_rank[1] < 1 || w->in_dims[1][0] <= 0)
        return false;
    *out = n / (uint64_t)w->in_dims[1][0];
    return true;
}

/* Conv: a multiply-add per output element and weight tap. */
bool tc_work_conv(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    (void)node;
    uint64_t y, taps;
    if (!elements(w->out_rank, w->out_dims, &y) || !per_element_taps(w, &taps))
        return false;
    *out = tc_work_mul_sat(y, taps);
    return true;
}

/* ConvTranspose: a multiply-add per input element and weight tap. */
bool tc_work_conv_transpose(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    (void)node;
    uint64_t x, taps;
    if (!input_elements(w, 0, &x) || !per_element_taps(w, &taps))
        return false;
    *out = tc_work_mul_sat(x, taps);
    return true;
}

/* A multiply-add per output element along A's dim `axis` (-1: its last). */
static bool matrix_product(const tc_work_shapes *w, int axis, uint64_t *out) {
    uint64_t y;
    if (!elements(w->out_rank, w->out_dims, &y) || !known_input(w, 0) || w->in_rank[0] < 1)
        return false;
    if (axis < 0)
        axis = w->in_rank[0] - 1;
    *out = tc_work_mul_sat(y, (uint64_t)dim_or_zero(w->in_dims[0][axis]));
    return true;
}

/* MatMul: A's last dim per output element. */
bool tc_work_matmul(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    (void)node;
    return matrix_product(w, -1, out);
}

/* Gemm: A's columns, or its rows with transA. */
bool tc_work_gemm(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    int64_t trans_a = 0;
    tc_error ignored;
    if (tc_node_attr_int(node, "transA", 0, &trans_a, &ignored) != TCONV_OK)
        trans_a = 0;
    return tc_work_gemm_trans(trans_a != 0, w, out);
}

bool tc_work_gemm_trans(bool trans_a, const tc_work_shapes *w, uint64_t *out) {
    return matrix_product(w, trans_a && w->in_rank[0] == 2 ? 0 : -1, out);
}

/* Einsum: every combination of label values, one product of the operands each: the product
 * of all label sizes times the operands. */
bool tc_work_einsum(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    int ranks[TC_EINSUM_MAX_OPERANDS];
    if (w->n_in < 1 || node->n_inputs > TC_EINSUM_MAX_OPERANDS || node->n_inputs > w->n_in)
        return tc_work_elements_moved(w, out);
    for (size_t i = 0; i < node->n_inputs; i++) {
        if (!known_input(w, i))
            return false;
        ranks[i] = w->in_rank[i];
    }
    const char *equation;
    tc_error ignored;
    tc_einsum e;
    if (tc_node_attr_string(node, "equation", "", &equation, &ignored) != TCONV_OK ||
        tc_einsum_parse(equation, (int)node->n_inputs, ranks, &e, &ignored) != TCONV_OK)
        return tc_work_elements_moved(w, out); /* the kernel refuses it before computing */
    int64_t size[TC_EINSUM_LABELS];
    for (int l = 0; l < TC_EINSUM_LABELS; l++)
        size[l] = -1;
    for (int i = 0; i < e.n_operands; i++) {
        for (int d = 0; d < e.ranks[i]; d++) {
            int64_t n = dim_or_zero(w->in_dims[i][d]);
            int l = e.labels[i][d];
            if (size[l] < 0 || size[l] == 1)
                size[l] = n;
        }
    }
    uint64_t work = (uint64_t)e.n_operands;
    for (int l = 0; l < TC_EINSUM_LABELS; l++) {
        if (size[l] >= 0)
            work = tc_work_mul_sat(work, (uint64_t)size[l]);
    }
    uint64_t moved = 0;
    (void)tc_work_elements_moved(w, &moved);
    *out = tc_work_add_sat(work, moved);
    return true;
}

/* ---------------------------------------------------------------- windows */

uint64_t tc_work_window_taps(const tconv_node *node) {
    const int64_t *k = NULL;
    size_t n = 0;
    bool present = false;
    tc_error ignored;
    if (tc_node_attr_ints(node, "kernel_shape", &present, &k, &n, &ignored) != TCONV_OK || !present)
        return 1;
    uint64_t taps = 1;
    for (size_t i = 0; i < n; i++)
        taps = tc_work_mul_sat(taps, k[i] > 0 ? (uint64_t)k[i] : 1);
    return taps;
}

/* AveragePool, LpPool, MaxPool: one tap per output element and window position. */
bool tc_work_pool(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    return tc_work_window_outputs(tc_work_window_taps(node), w, out);
}

bool tc_work_window_outputs(uint64_t taps, const tc_work_shapes *w, uint64_t *out) {
    uint64_t y;
    if (!elements(w->out_rank, w->out_dims, &y))
        return false;
    *out = tc_work_mul_sat(y, taps);
    return true;
}

/* Resize, Upsample: a few taps per output element and axis. */
bool tc_work_resize(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    (void)node;
    uint64_t y;
    if (!elements(w->out_rank, w->out_dims, &y))
        return false;
    *out = tc_work_mul_sat(y, 4 * (uint64_t)(w->out_rank > 0 ? w->out_rank : 1));
    return true;
}

/* LRN: each element sums the squares of its window over the channels (size, clipped to C). */
bool tc_work_lrn(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    uint64_t x;
    if (!input_elements(w, 0, &x))
        return false;
    int64_t size = 1;
    tc_error ignored;
    if (tc_node_attr_int(node, "size", 1, &size, &ignored) != TCONV_OK || size < 1)
        size = 1;
    if (w->in_rank[0] >= 2 && size > w->in_dims[0][1])
        size = w->in_dims[0][1] > 1 ? w->in_dims[0][1] : 1;
    *out = tc_work_mul_sat(x, (uint64_t)size + 2);
    return true;
}

/* ---------------------------------------------------------------- sorts, recurrences */

/* TopK: each slice along the axis is sorted, about n log2 n comparisons of n elements. */
bool tc_work_topk(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    uint64_t x;
    if (!input_elements(w, 0, &x))
        return false;
    int64_t axis = -1;
    tc_error ignored;
    if (tc_node_attr_int(node, "axis", -1, &axis, &ignored) != TCONV_OK)
        axis = -1;
    int rank = w->in_rank[0];
    if (axis < 0)
        axis += rank;
    uint64_t n = axis >= 0 && axis < rank ? (uint64_t)dim_or_zero(w->in_dims[0][axis]) : x;
    uint64_t log2n = 1;
    while (n >> log2n)
        log2n++;
    uint64_t moved = 0;
    (void)tc_work_elements_moved(w, &moved);
    *out = tc_work_add_sat(tc_work_mul_sat(x, log2n), moved);
    return true;
}

/* LSTM, GRU, RNN: every time step of every sequence multiplies X's row by W and the hidden
 * state by R, per direction: seq_length * batch_size * (W's + R's elements) multiply-adds
 * (X is [seq, batch, input] or [batch, seq, input]: its first two dims either way). */
bool tc_work_recurrent(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    (void)node;
    uint64_t wn, rn;
    if (!known_input(w, 0) || w->in_rank[0] < 2 || !input_elements(w, 1, &wn) ||
        !input_elements(w, 2, &rn))
        return false;
    uint64_t steps = tc_work_mul_sat((uint64_t)dim_or_zero(w->in_dims[0][0]),
                                     (uint64_t)dim_or_zero(w->in_dims[0][1]));
    uint64_t moved = 0;
    (void)tc_work_elements_moved(w, &moved);
    *out = tc_work_add_sat(tc_work_mul_sat(steps, tc_work_add_sat(wn, rn)), moved);
    return true;
}

/* ---------------------------------------------------------------- detection */

static uint64_t log2_ceil(uint64_t n) {
    uint64_t bits = 1;
    while (bits < 64 && (n >> bits))
        bits++;
    return bits;
}

/* NonMaxSuppression: each class's scores sorted (B*C*N log N); the IoU comparisons depend on
 * the data (how many boxes survive), so the kernel charges them as it makes them. */
bool tc_work_non_max_suppression(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    (void)node;
    uint64_t scores, moved = 0;
    if (!input_elements(w, 1, &scores) || w->in_rank[1] != 3)
        return false;
    (void)tc_work_elements_moved(w, &moved);
    uint64_t sort = tc_work_mul_sat(scores, log2_ceil((uint64_t)dim_or_zero(w->in_dims[1][2])));
    *out = tc_work_add_sat(sort, moved);
    return true;
}

/* RoiAlign: 4 taps per sample, sampling_ratio^2 samples per output element; with
 * sampling_ratio 0 the sample count depends on the rois (the data), and the kernel charges the
 * samples it takes. */
bool tc_work_roi_align(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    uint64_t y, moved = 0;
    if (!elements(w->out_rank, w->out_dims, &y))
        return false;
    int64_t ratio = 0;
    tc_error ignored;
    if (tc_node_attr_int(node, "sampling_ratio", 0, &ratio, &ignored) != TCONV_OK || ratio < 0)
        ratio = 0;
    (void)tc_work_elements_moved(w, &moved);
    uint64_t samples = ratio > 0 ? tc_work_mul_sat((uint64_t)ratio, (uint64_t)ratio) : 0;
    *out = tc_work_add_sat(tc_work_mul_sat(tc_work_mul_sat(y, samples), 4), moved);
    return true;
}

/* GridSample: every output element reads 1 (nearest), 2^r (linear) or 4^r (cubic) pixels of
 * its r spatial axes. */
bool tc_work_grid_sample(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    uint64_t y, moved = 0;
    if (!elements(w->out_rank, w->out_dims, &y))
        return false;
    const char *mode = "linear";
    tc_error ignored;
    if (tc_node_attr_string(node, "mode", "linear", &mode, &ignored) != TCONV_OK)
        mode = "cubic";
    uint64_t per_axis = !strcmp(mode, "nearest") ? 1 : strstr(mode, "cubic") ? 4 : 2, taps = 1;
    for (int d = 2; d < w->out_rank; d++)
        taps = tc_work_mul_sat(taps, per_axis);
    (void)tc_work_elements_moved(w, &moved);
    *out = tc_work_add_sat(tc_work_mul_sat(y, taps), moved);
    return true;
}

/* ---------------------------------------------------------------- the table */

/* Indexed by op kind: an op without one costs the elements it reads and writes. */
static const tc_op_work_fn WORK[TC_KIND_COUNT] = {
#define TC_OP(...)
#define TC_OP_WORK(dom, name, fn) [TC_KIND_##name] = fn,
#include "ir/ops.def"
#undef TC_OP_WORK
#undef TC_OP
};

bool tc_op_work(const tconv_node *node, const tc_work_shapes *w, uint64_t *out) {
    if (node->op > TC_OP_NONE && node->kind > TC_KIND_NONE && node->kind < TC_KIND_COUNT &&
        WORK[node->kind])
        return WORK[node->kind](node, w, out);
    return tc_work_elements_moved(w, out);
}

size_t tc_op_work_names(const char *const **names) {
    static const char *const NAMES[] = {
#define TC_OP(...)
#define TC_OP_WORK(dom, name, fn) #name,
#include "ir/ops.def"
#undef TC_OP_WORK
#undef TC_OP
    };
    *names = NAMES;
    return sizeof NAMES / sizeof NAMES[0];
}
