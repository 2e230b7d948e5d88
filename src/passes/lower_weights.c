/* Weights of the lowerings read as constants and rewritten for a new layout (lower_weights.h). */
#include "passes/lower_weights.h"
#include "ir/shape_rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- finding the constant */

static bool say(char *why, size_t why_size, const char *fmt, ...) TC_PRINTF(3, 4);
static bool say(char *why, size_t why_size, const char *fmt, ...) {
    if (why && why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return false;
}

static const char *value_name(const tconv_value *value) {
    return value && value->name ? value->name : "";
}

/* The tensor of an initializer or of a Constant node's `value`; NULL (and why) otherwise. */
static tconv_tensor *plain_constant(tconv_value *value, tconv_node **constant, char *why,
                                    size_t why_size) {
    *constant = NULL;
    char where[256];
    if (value->initializer) {
        const tconv_model *model = value->graph->model;
        bool overridable = value->is_graph_input && model->has_ir_version && model->ir_version >= 4;
        if (overridable) {
            say(why, why_size,
                "'%s' is a graph input with a default initializer: a caller may override it",
                value_name(value));
            return NULL;
        }
        return value->initializer;
    }
    tconv_node *producer = value->producer;
    if (!producer) {
        say(why, why_size, "'%s' is %s, not a constant", value_name(value),
            value->is_graph_input ? "a graph input" : "not produced in this graph");
        return NULL;
    }
    if (tc_node_is(producer, TC_KIND_Constant)) {
        const tc_attr *attr = tc_node_attr(producer, "value");
        if (attr && attr->type == TCONV_ATTR_TENSOR && attr->t) {
            *constant = producer;
            return attr->t;
        }
        say(why, why_size, "%s holds no `value` tensor (value_float, sparse_value... are not read)",
            tc_node_describe(producer, where, sizeof where));
        return NULL;
    }
    say(why, why_size, "'%s' is computed by %s, not a constant", value_name(value),
        tc_node_describe(producer, where, sizeof where));
    return NULL;
}

/* Whole-byte element types only: sub-byte types (int4, uint4, int2...) pack two or more elements
 * into a byte, which the element moves below do not handle. */
static bool whole_bytes(tconv_dtype dtype) {
    int bits = tc_dtype_bits(dtype);
    return bits >= 8 && bits % 8 == 0 && dtype != TCONV_DTYPE_STRING;
}

static bool dequantize_source(tconv_node *dq, tc_weight_source *out, char *why, size_t why_size) {
    char where[256];
    tc_node_describe(dq, where, sizeof where);
    if (dq->n_inputs < 2 || !dq->inputs[0] || !dq->inputs[1])
        return say(why, why_size, "%s lacks x or x_scale", where);
    tconv_node *ignored;
    out->tensor = plain_constant(dq->inputs[0], &out->constant, why, why_size);
    if (!out->tensor)
        return false;
    out->scale = plain_constant(dq->inputs[1], &ignored, why, why_size);
    if (!out->scale)
        return false;
    if (dq->n_inputs > 2 && dq->inputs[2]) {
        out->zero_point = plain_constant(dq->inputs[2], &ignored, why, why_size);
        if (!out->zero_point)
            return false;
        if (out->zero_point->dtype != out->tensor->dtype)
            return say(why, why_size, "%s: x_zero_point is %s, x is %s", where,
                       tconv_dtype_name((int)out->zero_point->dtype),
                       tconv_dtype_name((int)out->tensor->dtype));
    }
    const tc_attr *block = tc_node_attr(dq, "block_size");
    if (block && block->type == TCONV_ATTR_INT && block->i != 0)
        return say(why, why_size, "%s: blocked quantization (block_size %lld) is not handled",
                   where, (long long)block->i);
    if (!whole_bytes(out->tensor->dtype) || !whole_bytes(out->scale->dtype))
        return say(why, why_size, "%s: x of type %s (sub-byte types are not handled)", where,
                   tconv_dtype_name((int)out->tensor->dtype));
    out->dequantize = dq;
    out->axis = -1;
    int rank = out->tensor->rank;
    if (out->scale->rank == 0)
        return true;
    if (out->scale->rank != 1)
        return say(why, why_size, "%s: x_scale of rank %d (blocked quantization) is not handled",
                   where, out->scale->rank);
    const tc_attr *axis_attr = tc_node_attr(dq, "axis");
    int64_t axis = axis_attr && axis_attr->type == TCONV_ATTR_INT ? axis_attr->i : 1;
    int at = -1;
    if (!tc_axis_normalize(axis, rank, &at) || out->scale->dims[0] != out->tensor->dims[at])
        return say(why, why_size, "%s: x_scale has %lld values, not the size of axis %lld of x",
                   where, (long long)out->scale->dims[0], (long long)axis);
    if (out->zero_point &&
        (out->zero_point->rank != 1 || out->zero_point->dims[0] != out->scale->dims[0]))
        return say(why, why_size, "%s: x_zero_point's shape differs from x_scale's", where);
    out->axis = at;
    return true;
}

bool tc_weight_source_find(tconv_value *value, tc_weight_source *out, char *why, size_t why_size) {
    memset(out, 0, sizeof *out);
    out->value = value;
    out->axis = -1;
    if (!value)
        return say(why, why_size, "the input is absent");
    if (tc_node_is(value->producer, TC_KIND_DequantizeLinear))
        return dequantize_source(value->producer, out, why, why_size);
    out->tensor = plain_constant(value, &out->constant, why, why_size);
    if (!out->tensor)
        return false;
    if (!whole_bytes(out->tensor->dtype))
        return say(why, why_size, "'%s' is %s (sub-byte and string types are not handled)",
                   value_name(value), tconv_dtype_name((int)out->tensor->dtype));
    return true;
}

/* ---------------------------------------------------------------- the weight */

void tc_weight_free(tc_weight *weight) {
    free(weight->data);
    free(weight->qmap);
    weight->data = NULL;
    weight->qmap = NULL;
}

tconv_status tc_weight_load(const tc_weight_source *source, tc_weight *out, tc_error *err) {
    memset(out, 0, sizeof *out);
    const tconv_tensor *t = source->tensor;
    if (t->rank > TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "weight '%s' has rank %d", t->name,
                            t->rank);
    out->dtype = t->dtype;
    out->elem_size = (size_t)tc_dtype_bits(t->dtype) / 8;
    out->rank = t->rank;
    memcpy(out->dims, t->dims, (size_t)t->rank * sizeof(int64_t));
    if (!tc_shape_elements(out->dims, out->rank, &out->count))
        return tc_error_set(err, TCONV_ERR_INVALID, "weight '%s': dims overflow", t->name);
    out->quantized = source->dequantize != NULL;
    out->qaxis = source->axis;
    out->source = source;
    const void *data;
    size_t nbytes;
    tconv_status st = tc_tensor_data((tconv_tensor *)t, &data, &nbytes, err);
    if (st != TCONV_OK)
        return st;
    if (nbytes != (size_t)out->count * out->elem_size)
        return tc_error_set(err, TCONV_ERR_INVALID, "weight '%s': %zu bytes for %lld elements",
                            t->name, nbytes, (long long)out->count);
    if (nbytes) {
        out->data = malloc(nbytes);
        if (!out->data)
            return tc_error_nomem(err, "a weight copy");
        memcpy(out->data, data, nbytes);
    }
    if (out->qaxis >= 0) {
        int64_t n = out->dims[out->qaxis];
        out->qmap = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
        if (!out->qmap) {
            tc_weight_free(out);
            return tc_error_nomem(err, "a weight's scale map");
        }
        for (int64_t i = 0; i < n; i++)
            out->qmap[i] = i;
    }
    return TCONV_OK;
}

/* How one axis of the result reads the old weight: position j reads old position
 * start + step * ((j / spread) / repeat) of old axis src_axis when j is a multiple of spread and
 * that position exists; otherwise the element is an inserted zero. src_axis -1: a new axis
 * (reads position 0 of nothing: the element is read as if the axis were not there). */
typedef struct axis_read {
    int src_axis;
    int64_t size, start, step, spread, repeat;
} axis_read;

static axis_read identity_read(const tc_weight *w, int axis) {
    return (axis_read){axis, w->dims[axis], 0, 1, 1, 1};
}

/* Old position read along an axis (-1: inserted). */
static int64_t read_position(const axis_read *r, int64_t j, int64_t old_size) {
    if (r->spread > 1 && j % r->spread)
        return -1;
    int64_t q = j / r->spread / r->repeat;
    int64_t pos = r->start + r->step * q;
    if (r->src_axis < 0)
        return 0;
    return pos >= 0 && pos < old_size ? pos : -1;
}

/* Bytes of the zero point at scale index `index` (0 when absent). */
static void zero_point_bytes(const tc_weight *w, int64_t index, uint8_t *out) {
    memset(out, 0, w->elem_size);
    const tconv_tensor *zp = w->source ? w->source->zero_point : NULL;
    if (!w->quantized || !zp)
        return;
    const void *data;
    size_t nbytes;
    if (tc_tensor_data((tconv_tensor *)zp, &data, &nbytes, NULL) != TCONV_OK)
        return; /* read at load time already (tc_weight_emit reads it again and reports) */
    size_t at = (size_t)(zp->rank == 0 ? 0 : index) * w->elem_size;
    if (at + w->elem_size <= nbytes)
        memcpy(out, (const uint8_t *)data + at, w->elem_size);
}

/* The weight rebuilt through `reads` (one per new axis). The old quantized axis must be read by
 * exactly one new axis, without inserted positions. */
static tconv_status regather(tc_weight *w, int rank, const axis_read *reads, tc_error *err) {
    if (rank > TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "weight rank %d past %d", rank,
                            TC_MAX_RANK);
    int64_t dims[TC_MAX_RANK], count;
    int new_qaxis = -1;
    for (int i = 0; i < rank; i++) {
        dims[i] = reads[i].size;
        if (reads[i].size < 0)
            return tc_error_set(err, TCONV_ERR_INVALID, "weight axis %d of size %lld", i,
                                (long long)reads[i].size);
        if (w->qaxis >= 0 && reads[i].src_axis == w->qaxis)
            new_qaxis = i;
    }
    if (!tc_shape_elements(dims, rank, &count) || count > INT64_MAX / 16)
        return tc_error_set(err, TCONV_ERR_LIMIT, "rewritten weight too large");
    int64_t *qmap = NULL;
    if (w->qaxis >= 0) {
        if (new_qaxis < 0)
            return tc_error_set(err, TCONV_ERR_INVALID, "internal: quantized axis dropped");
        int64_t n = dims[new_qaxis];
        qmap = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
        if (!qmap)
            return tc_error_nomem(err, "a weight's scale map");
        for (int64_t j = 0; j < n; j++) {
            int64_t pos = read_position(&reads[new_qaxis], j, w->dims[w->qaxis]);
            if (pos < 0) {
                free(qmap);
                return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                                    "zeros inserted along the per-channel quantized axis %d have "
                                    "no scale",
                                    w->qaxis);
            }
            qmap[j] = w->qmap[pos];
        }
    }
    size_t es = w->elem_size;
    uint8_t *data = count ? malloc((size_t)count * es) : NULL;
    if (count && !data) {
        free(qmap);
        return tc_error_nomem(err, "a rewritten weight");
    }
    int64_t old_strides[TC_MAX_RANK];
    int64_t stride = 1;
    for (int a = w->rank - 1; a >= 0; a--) {
        old_strides[a] = stride;
        stride *= w->dims[a];
    }
    uint8_t zp[16];
    if (!w->quantized || w->qaxis < 0)
        zero_point_bytes(w, 0, zp);
    int64_t idx[TC_MAX_RANK] = {0};
    for (int64_t e = 0; e < count; e++) {
        int64_t offset = 0;
        bool inserted = false;
        for (int i = 0; i < rank && !inserted; i++) {
            const axis_read *r = &reads[i];
            int64_t pos = read_position(r, idx[i], r->src_axis >= 0 ? w->dims[r->src_axis] : 1);
            if (pos < 0)
                inserted = true;
            else if (r->src_axis >= 0)
                offset += pos * old_strides[r->src_axis];
        }
        uint8_t *dst = data + (size_t)e * es;
        if (!inserted) {
            memcpy(dst, w->data + (size_t)offset * es, es);
        } else {
            if (w->quantized && w->qaxis >= 0)
                zero_point_bytes(w, qmap[idx[new_qaxis]], zp);
            memcpy(dst, zp, es);
        }
        for (int i = rank - 1; i >= 0; i--) {
            if (++idx[i] < dims[i])
                break;
            idx[i] = 0;
        }
    }
    free(w->data);
    free(w->qmap);
    w->data = data;
    w->qmap = qmap;
    w->rank = rank;
    memcpy(w->dims, dims, (size_t)rank * sizeof(int64_t));
    w->count = count;
    w->qaxis = new_qaxis;
    return TCONV_OK;
}

static tconv_status check_axis(const tc_weight *w, int axis, int rank, tc_error *err) {
    if (axis < 0 || axis >= rank)
        return tc_error_set(err, TCONV_ERR_INVALID, "weight axis %d outside rank %d", axis, rank);
    (void)w;
    return TCONV_OK;
}

static void identity_reads(const tc_weight *w, axis_read *reads) {
    for (int i = 0; i < w->rank; i++)
        reads[i] = identity_read(w, i);
}

tconv_status tc_weight_take(tc_weight *weight, int axis, int64_t start, int64_t step, int64_t size,
                            tc_error *err) {
    tconv_status st = check_axis(weight, axis, weight->rank, err);
    if (st != TCONV_OK)
        return st;
    axis_read reads[TC_MAX_RANK];
    identity_reads(weight, reads);
    reads[axis].start = start;
    reads[axis].step = step;
    reads[axis].size = size;
    return regather(weight, weight->rank, reads, err);
}

tconv_status tc_weight_slice(tc_weight *weight, int axis, int64_t start, int64_t size,
                             tc_error *err) {
    tconv_status st = check_axis(weight, axis, weight->rank, err);
    if (st == TCONV_OK && (start < 0 || size < 0 || start > weight->dims[axis] - size))
        st = tc_error_set(err, TCONV_ERR_INVALID,
                          "slice [%lld, %lld) outside weight axis %d (%lld)", (long long)start,
                          (long long)(start + size), axis, (long long)weight->dims[axis]);
    return st == TCONV_OK ? tc_weight_take(weight, axis, start, 1, size, err) : st;
}

tconv_status tc_weight_flip(tc_weight *weight, int axis, tc_error *err) {
    tconv_status st = check_axis(weight, axis, weight->rank, err);
    int64_t n = st == TCONV_OK ? weight->dims[axis] : 0;
    return st == TCONV_OK ? tc_weight_take(weight, axis, n - 1, -1, n, err) : st;
}

tconv_status tc_weight_permute(tc_weight *weight, const int *perm, tc_error *err) {
    axis_read reads[TC_MAX_RANK];
    bool seen[TC_MAX_RANK] = {false};
    for (int i = 0; i < weight->rank; i++) {
        if (perm[i] < 0 || perm[i] >= weight->rank || seen[perm[i]])
            return tc_error_set(err, TCONV_ERR_INVALID, "weight permutation is not one");
        seen[perm[i]] = true;
        reads[i] = identity_read(weight, perm[i]);
    }
    return regather(weight, weight->rank, reads, err);
}

tconv_status tc_weight_spread(tc_weight *weight, int axis, int64_t factor, tc_error *err) {
    tconv_status st = check_axis(weight, axis, weight->rank, err);
    if (st != TCONV_OK)
        return st;
    int64_t n = weight->dims[axis];
    if (factor < 1 || (n > 1 && n - 1 > (INT64_MAX / 4) / factor))
        return tc_error_set(err, TCONV_ERR_INVALID, "spread factor %lld", (long long)factor);
    axis_read reads[TC_MAX_RANK];
    identity_reads(weight, reads);
    reads[axis].spread = factor;
    reads[axis].size = n ? (n - 1) * factor + 1 : 0;
    return regather(weight, weight->rank, reads, err);
}

tconv_status tc_weight_repeat(tc_weight *weight, int axis, int64_t times, tc_error *err) {
    tconv_status st = check_axis(weight, axis, weight->rank, err);
    if (st != TCONV_OK)
        return st;
    if (times < 1 || weight->dims[axis] > (INT64_MAX / 4) / times)
        return tc_error_set(err, TCONV_ERR_INVALID, "repeat count %lld", (long long)times);
    axis_read reads[TC_MAX_RANK];
    identity_reads(weight, reads);
    reads[axis].repeat = times;
    reads[axis].size = weight->dims[axis] * times;
    return regather(weight, weight->rank, reads, err);
}

tconv_status tc_weight_insert_axis(tc_weight *weight, int at, tc_error *err) {
    if (at < 0 || at > weight->rank || weight->rank >= TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_INVALID, "new weight axis at %d of rank %d", at,
                            weight->rank);
    for (int i = weight->rank; i > at; i--)
        weight->dims[i] = weight->dims[i - 1];
    weight->dims[at] = 1;
    weight->rank++;
    if (weight->qaxis >= at)
        weight->qaxis++;
    return TCONV_OK;
}

tconv_status tc_weight_split_axis(tc_weight *weight, int axis, int64_t outer, tc_error *err) {
    tconv_status st = check_axis(weight, axis, weight->rank, err);
    if (st != TCONV_OK)
        return st;
    int64_t n = weight->dims[axis];
    if (outer < 1 || n % outer || weight->rank >= TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_INVALID, "weight axis %d of size %lld split by %lld",
                            axis, (long long)n, (long long)outer);
    int64_t inner = n / outer;
    if (weight->qaxis == axis && outer != 1 && inner != 1)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                            "the per-channel quantized axis %d (%lld) split into %lld x %lld", axis,
                            (long long)n, (long long)outer, (long long)inner);
    for (int i = weight->rank; i > axis + 1; i--)
        weight->dims[i] = weight->dims[i - 1];
    weight->dims[axis] = outer;
    weight->dims[axis + 1] = inner;
    weight->rank++;
    if (weight->qaxis > axis || (weight->qaxis == axis && outer == 1))
        weight->qaxis++;
    return TCONV_OK;
}

tconv_status tc_weight_merge_axes(tc_weight *weight, int first, int count, tc_error *err) {
    if (first < 0 || count < 1 || first + count > weight->rank)
        return tc_error_set(err, TCONV_ERR_INVALID, "merge of weight axes [%d, %d) of rank %d",
                            first, first + count, weight->rank);
    int64_t merged = 1;
    for (int i = first; i < first + count; i++)
        merged *= weight->dims[i]; /* cannot overflow: count elements fit */
    int q = weight->qaxis;
    if (q >= first && q < first + count) {
        int64_t inner = 1;
        for (int i = q + 1; i < first + count; i++)
            inner *= weight->dims[i];
        int64_t nq = weight->dims[q];
        int64_t *qmap = malloc((size_t)(merged ? merged : 1) * sizeof(int64_t));
        if (!qmap)
            return tc_error_nomem(err, "a weight's scale map");
        for (int64_t m = 0; m < merged; m++)
            qmap[m] = weight->qmap[(m / inner) % nq];
        free(weight->qmap);
        weight->qmap = qmap;
        weight->qaxis = first;
    } else if (q >= first + count) {
        weight->qaxis = q - count + 1;
    }
    weight->dims[first] = merged;
    for (int i = first + 1; i + count - 1 < weight->rank; i++)
        weight->dims[i] = weight->dims[i + count - 1];
    weight->rank -= count - 1;
    return TCONV_OK;
}

static bool same_layout_but(const tc_weight *a, const tc_weight *b, int axis) {
    if (a->dtype != b->dtype || a->rank != b->rank || a->quantized != b->quantized ||
        a->source != b->source || a->qaxis != b->qaxis)
        return false;
    for (int i = 0; i < a->rank; i++) {
        if (i != axis && a->dims[i] != b->dims[i])
            return false;
    }
    if (a->qaxis >= 0 && a->qaxis != axis)
        return memcmp(a->qmap, b->qmap, (size_t)a->dims[a->qaxis] * sizeof(int64_t)) == 0;
    return true;
}

tconv_status tc_weight_concat(const tc_weight *parts, size_t n, int axis, tc_weight *out,
                              tc_error *err) {
    memset(out, 0, sizeof *out);
    if (n == 0 || axis < 0 || axis >= parts[0].rank)
        return tc_error_set(err, TCONV_ERR_INVALID, "concat of %zu weights on axis %d", n, axis);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!same_layout_but(&parts[0], &parts[i], axis))
            return tc_error_set(err, TCONV_ERR_INVALID,
                                "weights joined on axis %d differ in type, source or shape", axis);
        total += parts[i].dims[axis]; /* each fits; the sum is checked below */
    }
    *out = parts[0];
    out->data = NULL;
    out->qmap = NULL;
    out->dims[axis] = total;
    if (!tc_shape_elements(out->dims, out->rank, &out->count) || out->count > INT64_MAX / 16)
        return tc_error_set(err, TCONV_ERR_LIMIT, "joined weight too large");
    int64_t outer = 1;
    for (int i = 0; i < axis; i++)
        outer *= out->dims[i];
    size_t es = out->elem_size;
    out->data = out->count ? malloc((size_t)out->count * es) : NULL;
    int64_t qn = out->qaxis >= 0 ? out->dims[out->qaxis] : 0;
    out->qmap = out->qaxis >= 0 ? malloc((size_t)(qn ? qn : 1) * sizeof(int64_t)) : NULL;
    if ((out->count && !out->data) || (out->qaxis >= 0 && !out->qmap)) {
        tc_weight_free(out);
        return tc_error_nomem(err, "a joined weight");
    }
    uint8_t *dst = out->data;
    for (int64_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < n; i++) {
            size_t block = (size_t)(parts[i].count / (outer ? outer : 1)) * es;
            if (block)
                memcpy(dst, parts[i].data + (size_t)o * block, block);
            dst += block;
        }
    }
    if (out->qaxis == axis) {
        int64_t at = 0;
        for (size_t i = 0; i < n; i++) {
            memcpy(out->qmap + at, parts[i].qmap, (size_t)parts[i].dims[axis] * sizeof(int64_t));
            at += parts[i].dims[axis];
        }
    } else if (out->qaxis >= 0) {
        memcpy(out->qmap, parts[0].qmap, (size_t)qn * sizeof(int64_t));
    }
    return TCONV_OK;
}

tconv_status tc_weight_conv_transpose_to_conv(tc_weight *weight, int64_t group, tc_error *err) {
    if (weight->rank < 3 || group < 1 || weight->dims[0] % group)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "ConvTranspose weight of rank %d, %lld input channels, group %lld",
                            weight->rank, (long long)(weight->rank ? weight->dims[0] : 0),
                            (long long)group);
    /* (C_in, C_out/g, k...) -> (g, C_in/g, C_out/g, k...) -> (g, C_out/g, C_in/g, k...) with the
     * spatial axes reversed, -> (C_out, C_in/g, k...), in one regather after the split. */
    tconv_status st = tc_weight_split_axis(weight, 0, group, err);
    if (st != TCONV_OK)
        return st;
    axis_read reads[TC_MAX_RANK];
    identity_reads(weight, reads);
    reads[1] = identity_read(weight, 2);
    reads[2] = identity_read(weight, 1);
    for (int i = 3; i < weight->rank; i++) {
        reads[i].start = weight->dims[i] - 1;
        reads[i].step = -1;
    }
    st = regather(weight, weight->rank, reads, err);
    if (st == TCONV_OK)
        st = tc_weight_merge_axes(weight, 0, 2, err);
    return st;
}

/* ---------------------------------------------------------------- emitting */

/* A new initializer `base` (made unique) of dtype/dims/bytes. */
static tconv_status add_initializer(tconv_graph *graph, const char *base, tconv_dtype dtype,
                                    int rank, const int64_t *dims, const void *data, size_t nbytes,
                                    tconv_value **out, tc_error *err) {
    tconv_value *value;
    tconv_status st = tc_graph_add_unique_value(graph, base, &value, err);
    tconv_tensor *tensor;
    if (st == TCONV_OK)
        st = tc_tensor_create(graph->model, value->name, dtype, rank, dims, data, nbytes, &tensor,
                              err);
    if (st == TCONV_OK)
        st = tc_graph_add_initializer(graph, tensor, err);
    const tconv_model *model = graph->model;
    if (st == TCONV_OK && model->has_ir_version && model->ir_version < 4)
        st = tc_graph_add_input(graph, value, NULL, err); /* IR < 4: initializers are inputs */
    *out = value;
    return st;
}

/* The source's scale (or zero point) gathered through qmap: one value per position of the
 * quantized axis, or the scalar as it is. */
static tconv_status emit_quant_param(const tc_weight *w, tconv_graph *graph, tconv_tensor *param,
                                     const char *base, tconv_value **out, tc_error *err) {
    const void *data;
    size_t nbytes;
    tconv_status st = tc_tensor_data(param, &data, &nbytes, err);
    if (st != TCONV_OK)
        return st;
    if (w->qaxis < 0)
        return add_initializer(graph, base, param->dtype, param->rank, param->dims, data, nbytes,
                               out, err);
    size_t es = (size_t)tc_dtype_bits(param->dtype) / 8;
    int64_t n = w->dims[w->qaxis];
    uint8_t *values = malloc((size_t)(n ? n : 1) * es);
    if (!values)
        return tc_error_nomem(err, "quantization parameters");
    for (int64_t i = 0; i < n; i++) {
        if ((size_t)(w->qmap[i] + 1) * es > nbytes) {
            free(values);
            return tc_error_set(err, TCONV_ERR_INVALID, "'%s' has too few values", param->name);
        }
        memcpy(values + (size_t)i * es, (const uint8_t *)data + (size_t)w->qmap[i] * es, es);
    }
    int64_t dims[1] = {n};
    st = add_initializer(graph, base, param->dtype, 1, dims, values, (size_t)n * es, out, err);
    free(values);
    return st;
}

static void place(tconv_graph *graph, tconv_node *before, tconv_node *node) {
    if (before)
        tc_graph_insert_before(graph, before, node);
    else
        tc_graph_append_node(graph, node);
}

static tconv_status emit_dequantize(const tc_weight *w, tconv_graph *graph, tconv_node *before,
                                    const char *base, tconv_value *q, tconv_value **out,
                                    tconv_node **dequantize, tc_error *err) {
    const tc_weight_source *src = w->source;
    tconv_model *model = graph->model;
    char *name = tc_arena_sprintf(model->arena, "%s_scale", base);
    char *zp_name = tc_arena_sprintf(model->arena, "%s_zero_point", base);
    char *node_base = tc_arena_sprintf(model->arena, "%s_dequantize", base);
    const char *node_name = node_base ? tc_model_unique_node_name(model, node_base) : NULL;
    if (!name || !zp_name || !node_name)
        return tc_error_nomem(err, "a weight name");
    tconv_value *scale, *zero_point = NULL;
    tconv_status st = emit_quant_param(w, graph, src->scale, name, &scale, err);
    if (st == TCONV_OK && src->zero_point)
        st = emit_quant_param(w, graph, src->zero_point, zp_name, &zero_point, err);
    tconv_node *dq;
    if (st == TCONV_OK)
        st = tc_node_create(graph, src->dequantize->op_type, src->dequantize->domain, node_name,
                            &dq, err);
    if (st != TCONV_OK)
        return st;
    for (size_t i = 0; i < src->dequantize->n_attrs && st == TCONV_OK; i++) {
        tc_attr attr = src->dequantize->attrs[i];
        if (strcmp(attr.name, "axis") == 0)
            continue;
        attr.origin = NULL;
        st = tc_node_add_attr(dq, &attr, err);
    }
    if (st == TCONV_OK && w->qaxis >= 0)
        st = tc_node_set_attr_int(dq, "axis", w->qaxis, err);
    if (st == TCONV_OK)
        st = tc_node_add_input(dq, q, err);
    if (st == TCONV_OK)
        st = tc_node_add_input(dq, scale, err);
    if (st == TCONV_OK && zero_point)
        st = tc_node_add_input(dq, zero_point, err);
    char *out_base = tc_arena_sprintf(model->arena, "%s_dequantized", base);
    if (st == TCONV_OK && !out_base)
        st = tc_error_nomem(err, "a weight name");
    if (st == TCONV_OK)
        st = tc_graph_add_unique_value(graph, out_base, out, err);
    if (st == TCONV_OK)
        st = tc_node_add_output(dq, *out, err);
    const tconv_value *old = src->dequantize->outputs[0];
    if (st == TCONV_OK && old && old->type.kind == TCONV_TYPE_TENSOR) {
        tc_dim dims[TC_MAX_RANK];
        memset(dims, 0, sizeof dims);
        for (int i = 0; i < w->rank; i++) {
            dims[i].kind = TCONV_DIM_STATIC;
            dims[i].value = w->dims[i];
        }
        st = tc_value_set_tensor_type(*out, old->type.dtype, w->rank, dims, err);
    }
    if (st == TCONV_OK) {
        place(graph, before, dq);
        *dequantize = dq;
    }
    return st;
}

tconv_status tc_weight_emit(const tc_weight *weight, tconv_graph *graph, tconv_node *before,
                            const char *base, tconv_value **out, tconv_node **dequantize,
                            tc_error *err) {
    *dequantize = NULL;
    tconv_value *stored;
    char *q_base = weight->quantized ? tc_arena_sprintf(graph->model->arena, "%s_quantized", base)
                                     : tc_arena_strdup(graph->model->arena, base);
    if (!q_base)
        return tc_error_nomem(err, "a weight name");
    tconv_status st =
        add_initializer(graph, q_base, weight->dtype, weight->rank, weight->dims, weight->data,
                        (size_t)weight->count * weight->elem_size, &stored, err);
    if (st != TCONV_OK || !weight->quantized) {
        *out = stored;
        return st;
    }
    return emit_dequantize(weight, graph, before, base, stored, out, dequantize, err);
}
