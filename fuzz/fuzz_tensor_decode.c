/* Fuzz target (c): TensorProto bytes (the input_N.pb / output_N.pb of ONNX test data) -> tensor
 * -> decoded bytes or strings -> runtime tensor -> re-encoded TensorProto -> reloaded. Properties:
 * a failed load names the buffer; a loaded tensor decodes to exactly dims x dtype bytes; a tensor
 * re-encoded from its decoded data reloads with the same dims and bytes. */
#include "fuzz_common.h"

#include "importer/importer.h"
#include "importer/onnx_internal.h"
#include "runtime/compute/rt_tensor.h"

static volatile uint8_t fuzz_sink;

/* The decoded contents; NULL data for string tensors (checked separately). */
static bool decode(tconv_tensor *t, const void **data, size_t *nbytes) {
    tc_error err;
    tc_error_clear(&err);
    *data = NULL;
    *nbytes = 0;
    if (t->dtype == TCONV_DTYPE_STRING) {
        const tc_bytes *strings;
        size_t count;
        FUZZ_REQUIRE(tc_tensor_strings(t, &strings, &count, &err) == TCONV_OK, &err);
        int64_t n;
        FUZZ_REQUIRE(tc_tensor_elements(t, &n) && (uint64_t)n == count, NULL);
        for (size_t i = 0; i < count; i++)
            FUZZ_REQUIRE(strings[i].len == 0 || strings[i].data, NULL);
        return false;
    }
    FUZZ_REQUIRE(tc_tensor_data(t, data, nbytes, &err) == TCONV_OK, &err);
    int64_t n;
    size_t want;
    FUZZ_REQUIRE(tc_tensor_elements(t, &n) && tc_dtype_storage_bytes(t->dtype, n, &want) &&
                     want == *nbytes,
                 NULL);
    uint8_t sum = 0;
    for (size_t i = 0; i < *nbytes; i++)
        sum = (uint8_t)(sum + ((const uint8_t *)*data)[i]);
    fuzz_sink = sum;
    return true;
}

/* Through the runtime's own representation and back to an IR tensor. */
static void runtime_roundtrip(tconv_tensor *t, const void *data, size_t nbytes) {
    tc_error err;
    tc_error_clear(&err);
    tc_rt_tensor rt;
    memset(&rt, 0, sizeof rt);
    if (tc_rt_tensor_from_ir(t, &rt, &err) != TCONV_OK) {
        FUZZ_REQUIRE(err.message[0] != '\0', &err); /* a dtype the runtime does not compute */
        return;
    }
    bool sub_byte = tc_dtype_bits(t->dtype) < 8;
    /* Sub-byte types (int4, int2, float4...) take one byte an element in the runtime: their
     * bytes differ from the packed ones by design; the round trip below checks them. */
    FUZZ_REQUIRE(sub_byte ||
                     (rt.nbytes == nbytes && (nbytes == 0 || memcmp(rt.data, data, nbytes) == 0)),
                 NULL);
    tconv_tensor *back;
    FUZZ_REQUIRE(tc_rt_tensor_to_ir(&rt, t->model, "back", &back, &err) == TCONV_OK, &err);
    if (sub_byte) { /* packed again and unpacked: the same elements */
        tc_rt_tensor again;
        memset(&again, 0, sizeof again);
        FUZZ_REQUIRE(tc_rt_tensor_from_ir(back, &again, &err) == TCONV_OK, &err);
        FUZZ_REQUIRE(again.nbytes == rt.nbytes &&
                         (rt.nbytes == 0 || memcmp(again.data, rt.data, rt.nbytes) == 0),
                     NULL);
        tc_rt_tensor_release(&again);
    }
    tc_rt_tensor_release(&rt);
}

/* The saver's path for an edited tensor: rebuilt from the decoded data, packed, reloaded. */
static void reencode(tconv_tensor *t, const void *data, size_t nbytes) {
    tc_error err;
    tc_error_clear(&err);
    tc_arena *tmp = tc_arena_create();
    FUZZ_REQUIRE(tmp != NULL, NULL);
    t->dirty = true;
    Onnx__TensorProto *proto = tc_onnx_tensor_to_proto(tmp, t, &err);
    FUZZ_REQUIRE(proto != NULL, &err);
    size_t size = protobuf_c_message_get_packed_size(&proto->base);
    uint8_t *bytes = malloc(size ? size : 1);
    FUZZ_REQUIRE(bytes != NULL, NULL);
    protobuf_c_message_pack(&proto->base, bytes);
    tconv_tensor *again;
    FUZZ_REQUIRE(tc_tensor_load_pb_buffer(t->model, bytes, size, "<re-encoded>", &again, &err) ==
                     TCONV_OK,
                 &err);
    FUZZ_REQUIRE(again->dtype == t->dtype && again->rank == t->rank, NULL);
    FUZZ_REQUIRE(t->rank == 0 || memcmp(again->dims, t->dims, (size_t)t->rank * 8) == 0, NULL);
    const void *data2;
    size_t nbytes2;
    if (decode(again, &data2, &nbytes2))
        FUZZ_REQUIRE(nbytes2 == nbytes && (nbytes == 0 || memcmp(data, data2, nbytes) == 0), NULL);
    free(bytes);
    tc_arena_destroy(tmp);
}

int fuzz_tensor_decode(const uint8_t *data, size_t size) {
    tconv_model *model = NULL;
    tc_error err;
    tc_error_clear(&err);
    FUZZ_REQUIRE(tc_model_create(&model, &err) == TCONV_OK, &err);
    tconv_tensor *t = NULL;
    tconv_status st = tc_tensor_load_pb_buffer(model, data, size, "<fuzz>", &t, &err);
    if (st != TCONV_OK) {
        FUZZ_REQUIRE(t == NULL, &err);
        fuzz_require_message(st, &err, "<fuzz>: ");
    } else {
        const void *bytes;
        size_t nbytes;
        bool numeric = decode(t, &bytes, &nbytes);
        if (numeric)
            runtime_roundtrip(t, bytes, nbytes);
        reencode(t, bytes, nbytes);
    }
    tconv_model_free(model);
    return 0;
}

FUZZ_ENTRY(fuzz_tensor_decode)
