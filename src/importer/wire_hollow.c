/* The compact copy of a model's wire data without its large raw_data payloads (model_map.h).
 *
 * The copy keeps every byte of the input except the payloads, in the same order: unknown
 * fields, field order and encodings stay as they were. Each payload becomes an empty raw_data
 * field, and the length prefix of every enclosing message is rewritten in the same number of
 * bytes it had (a varint may carry padding 0x80 groups, which protobuf decoders accept), so no
 * layout has to be planned ahead. Paths are recorded as (field index, element index) steps;
 * protobuf-c keeps repeated message fields in wire order, so element i of a repeated field is
 * its i-th occurrence. Everything that would make that mapping ambiguous (a non-repeated
 * message field or raw_data given twice: protobuf-c merges or replaces those) gives up. */
#include "importer/model_map.h"
#include "ir/vec.h"

#include <stdlib.h>
#include <string.h>

/* Deeper tensors are copied by protobuf-c as usual. Graph > Node > Attribute > Graph ...: 32
 * levels reach about ten levels of subgraphs. */
#define HOLLOW_MAX_DEPTH 32
/* Messages with more fields than this are copied as they are (ONNX's have at most ~25). */
#define HOLLOW_MAX_FIELDS 64
/* protobuf-c reads at most 5 bytes of a length prefix. */
#define MAX_LENGTH_BYTES 5
#define RAW_DATA_FIELD 9

typedef struct hollow_ctx {
    tc_onnx_hollow *h;
    const uint8_t *base;
    size_t min_bytes;
    uint32_t path[2 * HOLLOW_MAX_DEPTH]; /* steps from the root to the current message */
    int depth;
} hollow_ctx;

static bool emit(tc_onnx_hollow *h, const uint8_t *p, size_t n) {
    if (n > SIZE_MAX - h->compact_len ||
        !TC_VEC_RESERVE(h->compact, h->compact_cap, h->compact_len + n))
        return false;
    if (n)
        memcpy(h->compact + h->compact_len, p, n);
    h->compact_len += n;
    return true;
}

static bool add_payload(hollow_ctx *c, const uint8_t *payload, size_t len) {
    tc_onnx_hollow *h = c->h;
    size_t n_steps = 2 * (size_t)c->depth;
    if (!TC_VEC_RESERVE(h->payloads, h->cap_payloads, h->n_payloads + 1) ||
        !TC_VEC_RESERVE(h->steps, h->cap_steps, h->n_steps + n_steps))
        return false;
    memcpy(h->steps + h->n_steps, c->path, n_steps * sizeof *h->steps);
    h->payloads[h->n_payloads++] =
        (tc_onnx_payload){(size_t)(payload - c->base), len, h->n_steps, (size_t)c->depth};
    h->n_steps += n_steps;
    return true;
}

/* ---------------------------------------------------------------- wire reading */

bool tc_onnx_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* v in exactly `width` varint bytes (padding groups 0x80); false if it does not fit. */
static bool put_varint_width(uint8_t *dst, uint64_t v, size_t width) {
    for (size_t i = 0; i < width; i++) {
        dst[i] = (uint8_t)((v & 0x7f) | (i + 1 < width ? 0x80 : 0));
        v >>= 7;
    }
    return v == 0;
}

static bool is_raw_data(const ProtobufCMessageDescriptor *desc, const ProtobufCFieldDescriptor *f) {
    return desc == &onnx__tensor_proto__descriptor && f && f->id == RAW_DATA_FIELD &&
           f->type == PROTOBUF_C_TYPE_BYTES;
}

/* ---------------------------------------------------------------- the copy */

static bool hollow_fields(hollow_ctx *c, const uint8_t *p, const uint8_t *end,
                          const ProtobufCMessageDescriptor *desc);

/* A known message field: its content is copied recursively and its length prefix rewritten
 * in its original width. */
static bool copy_submessage(hollow_ctx *c, const uint8_t *tag, size_t tag_len, size_t width,
                            const uint8_t *payload, size_t len, const ProtobufCFieldDescriptor *f,
                            uint32_t field_index, uint32_t element) {
    tc_onnx_hollow *h = c->h;
    static const uint8_t placeholder[MAX_LENGTH_BYTES] = {0};
    if (!emit(h, tag, tag_len) || !emit(h, placeholder, width))
        return false;
    size_t content = h->compact_len;
    c->path[2 * c->depth] = field_index;
    c->path[2 * c->depth + 1] = element;
    c->depth++;
    bool ok = hollow_fields(c, payload, payload + len, f->descriptor);
    c->depth--;
    return ok && put_varint_width(h->compact + content - width, h->compact_len - content, width);
}

/* Element index of this occurrence of field f in its message; false (give up) when a
 * non-repeated field that matters for paths appears twice. */
static bool count_occurrence(const ProtobufCMessageDescriptor *desc,
                             const ProtobufCFieldDescriptor *f, uint32_t *counts,
                             uint32_t *element) {
    size_t index = (size_t)(f - desc->fields);
    *element = counts[index];
    if (counts[index] == UINT32_MAX)
        return false;
    counts[index]++;
    bool tracked = f->type == PROTOBUF_C_TYPE_MESSAGE || is_raw_data(desc, f);
    return !(tracked && f->label != PROTOBUF_C_LABEL_REPEATED && *element > 0);
}

static bool copy_length_delimited(hollow_ctx *c, const uint8_t *tag, const uint8_t *len_start,
                                  const uint8_t *payload, size_t len,
                                  const ProtobufCMessageDescriptor *desc, uint32_t *counts,
                                  uint32_t tag_number) {
    tc_onnx_hollow *h = c->h;
    size_t tag_len = (size_t)(len_start - tag), width = (size_t)(payload - len_start);
    const ProtobufCFieldDescriptor *f =
        desc ? protobuf_c_message_descriptor_get_field(desc, tag_number) : NULL;
    uint32_t element = 0;
    if (f && !count_occurrence(desc, f, counts, &element))
        return false;
    if (is_raw_data(desc, f) && len >= c->min_bytes && len > 0) {
        static const uint8_t empty = 0;
        return emit(h, tag, tag_len) && emit(h, &empty, 1) && add_payload(c, payload, len);
    }
    if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && c->depth < HOLLOW_MAX_DEPTH && f->descriptor &&
        ((const ProtobufCMessageDescriptor *)f->descriptor)->n_fields <= HOLLOW_MAX_FIELDS &&
        width <= MAX_LENGTH_BYTES)
        return copy_submessage(c, tag, tag_len, width, payload, len, f,
                               (uint32_t)(f - desc->fields), element);
    return emit(h, tag, (size_t)(payload + len - tag));
}

static bool hollow_fields(hollow_ctx *c, const uint8_t *p, const uint8_t *end,
                          const ProtobufCMessageDescriptor *desc) {
    uint32_t counts[HOLLOW_MAX_FIELDS] = {0};
    if (desc && desc->n_fields > HOLLOW_MAX_FIELDS)
        return false;
    while (p < end) {
        const uint8_t *tag = p;
        uint64_t key, len;
        if (!tc_onnx_read_varint(&p, end, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
            return false;
        switch (key & 7) {
        case 0:
            if (!tc_onnx_read_varint(&p, end, &len))
                return false;
            break;
        case 1:
        case 5: {
            size_t n = (key & 7) == 1 ? 8 : 4;
            if ((size_t)(end - p) < n)
                return false;
            p += n;
            break;
        }
        case 2: {
            const uint8_t *len_start = p;
            if (!tc_onnx_read_varint(&p, end, &len) || len > (uint64_t)(end - p))
                return false;
            const uint8_t *payload = p;
            p += len;
            if (!copy_length_delimited(c, tag, len_start, payload, (size_t)len, desc, counts,
                                       (uint32_t)(key >> 3)))
                return false;
            continue;
        }
        default:
            return false; /* groups are not used by ONNX */
        }
        if (!emit(c->h, tag, (size_t)(p - tag)))
            return false;
    }
    return true;
}

bool tc_onnx_hollow_build(const uint8_t *data, size_t size,
                          const ProtobufCMessageDescriptor *descriptor, size_t min_bytes,
                          tc_onnx_hollow *out) {
    memset(out, 0, sizeof *out);
    hollow_ctx c;
    memset(&c, 0, sizeof c);
    c.h = out;
    c.base = data;
    c.min_bytes = min_bytes;
    if (hollow_fields(&c, data, data + size, descriptor))
        return true;
    tc_onnx_hollow_free(out);
    return false;
}

void tc_onnx_hollow_free(tc_onnx_hollow *h) {
    free(h->compact);
    free(h->payloads);
    free(h->steps);
    memset(h, 0, sizeof *h);
}

/* ---------------------------------------------------------------- restoring the payloads */

static const void *member_at(const ProtobufCMessage *m, unsigned offset) {
    return (const char *)m + offset;
}

/* The sub-message a step leads to, or NULL when the message does not have it. */
static ProtobufCMessage *follow_step(const ProtobufCMessage *m, uint32_t field_index,
                                     uint32_t element) {
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    if (field_index >= desc->n_fields)
        return NULL;
    const ProtobufCFieldDescriptor *f = &desc->fields[field_index];
    if (f->type != PROTOBUF_C_TYPE_MESSAGE)
        return NULL;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        size_t n;
        memcpy(&n, member_at(m, f->quantifier_offset), sizeof n);
        ProtobufCMessage *const *items;
        memcpy(&items, member_at(m, f->offset), sizeof items);
        return element < n && items ? items[element] : NULL;
    }
    if (element != 0)
        return NULL;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t which;
        memcpy(&which, member_at(m, f->quantifier_offset), sizeof which);
        if (which != f->id)
            return NULL;
    }
    ProtobufCMessage *sub;
    memcpy(&sub, member_at(m, f->offset), sizeof sub);
    return sub;
}

static bool restore_payload(const tc_onnx_hollow *h, const tc_onnx_payload *pl,
                            ProtobufCMessage *root, const uint8_t *data) {
    ProtobufCMessage *m = root;
    for (size_t i = 0; m && i < pl->path_len; i++)
        m = follow_step(m, h->steps[pl->path + 2 * i], h->steps[pl->path + 2 * i + 1]);
    if (!m || m->descriptor != &onnx__tensor_proto__descriptor)
        return false;
    Onnx__TensorProto *t = (Onnx__TensorProto *)m;
    if (!t->has_raw_data || t->raw_data.len != 0)
        return false; /* not the emptied field, or already restored: the paths do not match */
    t->raw_data.data = (uint8_t *)(data + pl->offset);
    t->raw_data.len = pl->len;
    return true;
}

bool tc_onnx_hollow_restore(const tc_onnx_hollow *h, ProtobufCMessage *message,
                            const uint8_t *data) {
    for (size_t i = 0; i < h->n_payloads; i++) {
        if (!restore_payload(h, &h->payloads[i], message, data))
            return false;
    }
    return true;
}
