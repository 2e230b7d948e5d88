/* Fuzz target (a): ModelProto bytes -> load + verify -> decode every initializer -> save ->
 * reload -> save again. Properties: a failed load names "<memory>" and leaves no model; a
 * loaded model verifies, saves, reloads, and saves to the same bytes. */
#include "fuzz_common.h"

#include "importer/importer.h"
#include "ir/verify.h"

static volatile uint8_t fuzz_sink;

static void touch_tensor(tconv_tensor *t) {
    tc_error err;
    tc_error_clear(&err);
    if (!t)
        return;
    tconv_status st;
    if (t->dtype == TCONV_DTYPE_STRING) {
        const tc_bytes *strings;
        size_t count;
        st = tc_tensor_strings(t, &strings, &count, &err);
    } else {
        const void *data;
        size_t nbytes;
        st = tc_tensor_data(t, &data, &nbytes, &err);
        uint8_t sum = 0; /* read every byte, so ASan sees a short buffer */
        for (size_t i = 0; st == TCONV_OK && i < nbytes; i++)
            sum = (uint8_t)(sum + ((const uint8_t *)data)[i]);
        fuzz_sink = sum;
    }
    /* Sparse placeholders have no data; everything else was validated at load time. */
    if (st != TCONV_OK)
        FUZZ_REQUIRE(err.message[0] != '\0' && (t->storage == TCONV_STORAGE_NONE || !t->origin),
                     &err);
}

static void touch_graph(tconv_graph *g, int depth) {
    for (size_t i = 0; i < g->n_initializers; i++)
        touch_tensor(g->initializers[i]);
    for (tconv_node *n = g->first; n; n = n->next) {
        for (size_t a = 0; a < n->n_attrs; a++) {
            tc_attr *attr = &n->attrs[a];
            if (attr->type == TCONV_ATTR_TENSOR)
                touch_tensor(attr->t);
            for (size_t k = 0; attr->type == TCONV_ATTR_TENSORS && k < attr->n; k++)
                touch_tensor(attr->tensors[k]);
            if (attr->type == TCONV_ATTR_GRAPH && attr->g && depth < 64)
                touch_graph(attr->g, depth + 1);
            for (size_t k = 0; attr->type == TCONV_ATTR_GRAPHS && k < attr->n && depth < 64; k++)
                touch_graph(attr->graphs[k], depth + 1);
        }
    }
}

int fuzz_load_save(const uint8_t *data, size_t size) {
    tconv_model *model = fuzz_load(data, size, 0);
    if (!model)
        return 0;
    tc_load_options options;
    tc_load_options_init(&options);
    tc_error err;
    tc_error_clear(&err);
    tconv_status st;
    FUZZ_REQUIRE(tc_model_verify(model, &err) == TCONV_OK, &err);
    touch_graph(model->graph, 0);
    void *saved = NULL;
    size_t saved_size = 0;
    st = tc_model_save_buffer(model, &saved, &saved_size, &err);
    FUZZ_REQUIRE(st == TCONV_OK, &err);
    tconv_model *again = NULL;
    st = tc_model_load_buffer(saved, saved_size, NULL, &options, &again, NULL, &err);
    FUZZ_REQUIRE(st == TCONV_OK, &err);
    void *resaved = NULL;
    size_t resaved_size = 0;
    st = tc_model_save_buffer(again, &resaved, &resaved_size, &err);
    FUZZ_REQUIRE(st == TCONV_OK, &err);
    FUZZ_REQUIRE(resaved_size == saved_size && memcmp(resaved, saved, saved_size) == 0, NULL);
    free(resaved);
    free(saved);
    tconv_model_free(again);
    tconv_model_free(model);
    return 0;
}

FUZZ_ENTRY(fuzz_load_save)
