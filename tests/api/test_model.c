/* Public API, models: version, reading files and buffers, writing, cloning, error messages kept
 * by the model, metadata and opsets, and that no call crashes on NULL or bad arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

#include "api_test_util.h"

#define KERAS API_MODEL("keras_decoder")

static void *read_whole_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    void *data = malloc((size_t)n);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

static void test_version(void **state) {
    (void)state;
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", TCONV_VERSION_MAJOR, TCONV_VERSION_MINOR,
             TCONV_VERSION_PATCH);
    assert_string_equal(tconv_version(), expected);
    assert_int_equal(tconv_version_number(), TCONV_VERSION_NUMBER);
    assert_string_equal(tconv_status_name(TCONV_ERR_PARSE), "parse");
    assert_string_equal(tconv_dtype_name(TCONV_DTYPE_FLOAT), "float");
    assert_string_equal(tconv_dtype_name(12345), "undefined");
    assert_string_equal(tconv_attr_type_name(TCONV_ATTR_INTS), "INTS");
    assert_string_equal(tconv_attr_type_name(-3), "UNKNOWN");
}

static void test_read_file_and_metadata(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    assert_string_equal(tconv_model_last_error(m), "");
    assert_int_equal(tconv_model_last_status(m), TCONV_OK);
    assert_int_equal(tconv_model_ir_version(m), 7);
    assert_string_equal(tconv_model_producer_name(m), "tconv-models-generate");
    assert_string_equal(tconv_model_path(m), KERAS);
    assert_int_equal(tconv_model_sorted_graph_count(m), 0);
    assert_int_equal(tconv_model_opset_count(m), 1);
    const char *domain = NULL;
    int64_t version = 0;
    assert_true(tconv_model_opset_at(m, 0, &domain, &version));
    assert_string_equal(domain, "");
    assert_int_equal(version, 9);
    assert_false(tconv_model_opset_at(m, 1, &domain, &version));
    assert_int_equal(tconv_model_opset_version(m, NULL), 9);
    assert_int_equal(tconv_model_opset_version(m, "ai.onnx"), 9);
    assert_int_equal(tconv_model_opset_version(m, "com.example"), 0);
    assert_int_equal(tconv_graph_node_count(tconv_model_graph(m)), 8);
    tconv_model_free(m);
}

static void test_read_errors_go_to_the_message_buffer(void **state) {
    (void)state;
    tconv_model *m = (tconv_model *)(uintptr_t)1; /* must be reset to NULL */
    char message[256];
    assert_int_equal(
        tconv_model_read_file("/nonexistent/model.onnx", NULL, &m, message, sizeof message),
        TCONV_ERR_IO);
    assert_null(m);
    assert_non_null(strstr(message, "/nonexistent/model.onnx"));

    /* Truncated to the buffer, always NUL-terminated; NULL buffer allowed. */
    char small[8];
    assert_int_equal(
        tconv_model_read_file("/nonexistent/model.onnx", NULL, &m, small, sizeof small),
        TCONV_ERR_IO);
    assert_int_equal(strlen(small), 7);
    assert_int_equal(tconv_model_read_file("/nonexistent/model.onnx", NULL, &m, NULL, 0),
                     TCONV_ERR_IO);

    assert_int_equal(tconv_model_read_file(NULL, NULL, &m, message, sizeof message),
                     TCONV_ERR_USAGE);
    assert_true(strlen(message) > 0);
    assert_int_equal(tconv_model_read_file(KERAS, NULL, NULL, message, sizeof message),
                     TCONV_ERR_USAGE);

    static const unsigned char garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x99};
    assert_int_equal(
        tconv_model_read_buffer(garbage, sizeof garbage, NULL, NULL, &m, message, sizeof message),
        TCONV_ERR_PARSE);
    assert_null(m);
    assert_true(strlen(message) > 0);
    assert_int_equal(tconv_model_read_buffer(NULL, 10, NULL, NULL, &m, message, sizeof message),
                     TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_read_buffer(NULL, 0, NULL, NULL, &m, message, sizeof message),
                     TCONV_ERR_PARSE);
    assert_null(m);
    assert_non_null(strstr(message, "empty"));
}

/* Limits for untrusted models: defaults, each reading limit refusing a model with
 * TCONV_ERR_LIMIT, bad settings refused with a message. */
static void test_read_limits(void **state) {
    (void)state;
    assert_int_equal(tconv_limits_get(NULL, TCONV_LIMIT_FILE_BYTES), 4ull << 30);
    assert_int_equal(tconv_limits_get(NULL, TCONV_LIMIT_GRAPH_DEPTH), 64);
    assert_int_equal(tconv_limits_get(NULL, TCONV_LIMIT_THREADS), 0);
    tconv_limits *limits = NULL;
    assert_int_equal(tconv_limits_new(&limits), TCONV_OK);
    assert_int_equal(tconv_limits_get(limits, TCONV_LIMIT_NODES), 4194304);
    assert_int_equal(tconv_limits_get(limits, TCONV_LIMIT_MEMORY_BYTES),
                     tconv_limits_get(NULL, TCONV_LIMIT_MEMORY_BYTES));

    tconv_model *m = NULL;
    char message[512];
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_FILE_BYTES, 1000), TCONV_OK);
    assert_int_equal(tconv_model_read_file(KERAS, limits, &m, message, sizeof message),
                     TCONV_ERR_LIMIT);
    assert_null(m);
    assert_true(strlen(message) > 0);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_FILE_BYTES, 0), TCONV_OK); /* off */
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_NODES, 3), TCONV_OK);
    assert_int_equal(tconv_model_read_file(KERAS, limits, &m, message, sizeof message),
                     TCONV_ERR_LIMIT);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_NODES, 0), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_TENSOR_BYTES, 1024), TCONV_OK);
    assert_int_equal(tconv_model_read_file(KERAS, limits, &m, message, sizeof message),
                     TCONV_ERR_LIMIT);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_TENSOR_BYTES, 0), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_GRAPH_DEPTH, 0), TCONV_OK);
    assert_int_equal(
        tconv_model_read_file(API_MODEL("if_branch"), limits, &m, message, sizeof message),
        TCONV_ERR_LIMIT);
    assert_int_equal(tconv_model_read_file(KERAS, limits, &m, message, sizeof message), TCONV_OK);
    /* A clone is not held to the limits the original was read with. */
    tconv_model *copy = NULL;
    API_OK(m, tconv_model_clone(m, &copy));
    tconv_model_free(copy);
    tconv_model_free(m);

    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_THREADS, 5000), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_limits_last_error(limits), "THREADS"));
    assert_int_equal(tconv_limits_set(limits, (tconv_limit)99, 1), TCONV_ERR_USAGE);
    assert_int_equal(tconv_limits_get(limits, (tconv_limit)99), 0);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_THREADS, 4), TCONV_OK);
    assert_string_equal(tconv_limits_last_error(limits), "");
    tconv_limits_free(limits);
    tconv_limits_free(NULL);
    assert_int_equal(tconv_limits_new(NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_limits_set(NULL, TCONV_LIMIT_THREADS, 1), TCONV_ERR_USAGE);
    assert_string_equal(tconv_limits_last_error(NULL), "");
}

/* The node limit follows the memory limit (a node's IR and plans take up to 4 KiB) until it is
 * set itself (issue 16, item 7). */
static void test_node_limit_follows_memory(void **state) {
    (void)state;
    tconv_limits *limits = NULL;
    assert_int_equal(tconv_limits_new(&limits), TCONV_OK);
    assert_int_equal(tconv_limits_get(limits, TCONV_LIMIT_NODES),
                     tconv_limits_get(limits, TCONV_LIMIT_MEMORY_BYTES) / 4096);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 64u << 20), TCONV_OK);
    assert_int_equal(tconv_limits_get(limits, TCONV_LIMIT_NODES), 16384);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 0), TCONV_OK);
    assert_int_equal(tconv_limits_get(limits, TCONV_LIMIT_NODES), 0); /* both off */
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_NODES, 5), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 64u << 20), TCONV_OK);
    assert_int_equal(tconv_limits_get(limits, TCONV_LIMIT_NODES), 5);
    tconv_limits_free(limits);
}

static void test_buffer_round_trip(void **state) {
    (void)state;
    size_t file_size;
    void *file_bytes = read_whole_file(KERAS, &file_size);
    tconv_model *m = NULL;
    char message[256];
    assert_int_equal(
        tconv_model_read_buffer(file_bytes, file_size, NULL, NULL, &m, message, sizeof message),
        TCONV_OK);
    assert_null(tconv_model_path(m));
    void *out = NULL;
    size_t out_size = 0;
    API_OK(m, tconv_model_write_buffer(m, &out, &out_size));
    /* Lossless: no edit gives the same bytes. */
    assert_int_equal(out_size, file_size);
    assert_memory_equal(out, file_bytes, file_size);
    tconv_free(out);
    tconv_model_free(m);
    free(file_bytes);
}

static void test_write_file_and_errors_in_the_model(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    char dir[] = "/tmp/tconv-api-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/out.onnx", dir);

    assert_int_equal(tconv_model_write_file(m, "/nonexistent-dir/out.onnx"), TCONV_ERR_IO);
    assert_int_equal(tconv_model_last_status(m), TCONV_ERR_IO);
    assert_non_null(strstr(tconv_model_last_error(m), "/nonexistent-dir"));
    /* The next call that succeeds clears it. */
    API_OK(m, tconv_model_write_file(m, path));
    assert_string_equal(tconv_model_last_error(m), "");
    assert_int_equal(tconv_model_last_status(m), TCONV_OK);

    tconv_model *back = api_read(path);
    assert_int_equal(tconv_graph_node_count(tconv_model_graph(back)), 8);
    tconv_model_free(back);
    unlink(path);
    rmdir(dir);
    tconv_model_free(m);
}

static void test_clone_is_independent(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_model *copy = NULL;
    API_OK(m, tconv_model_clone(m, &copy));
    assert_string_equal(tconv_model_path(copy), KERAS);
    tconv_node *relu = api_find_node(m, "deconv1_relu");
    API_OK(m, tconv_node_set_name(relu, "renamed"));
    tconv_model_free(m);
    assert_int_equal(tconv_graph_node_count(tconv_model_graph(copy)), 8);
    assert_non_null(api_find_node(copy, "deconv1_relu"));
    API_OK(copy, tconv_model_validate(copy));
    tconv_model_free(copy);
}

/* What tconv-import MODEL prints. */
static void test_format_summary(void **state) {
    (void)state;
    tconv_model *m = api_read(API_MODEL("keras_decoder"));
    char *text = NULL;
    API_OK(m, tconv_model_format_summary(m, &text));
    assert_non_null(strstr(text, "keras_decoder/model.onnx"));
    assert_non_null(strstr(text, "ConvTranspose 4"));
    assert_non_null(strstr(text, "deconv1"));
    assert_non_null(strstr(text, "-> rewrite"));
    tconv_free(text);
    assert_int_equal(tconv_model_format_summary(m, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_format_summary(NULL, &text), TCONV_ERR_USAGE);
    assert_null(text);
    tconv_model_free(m);
}

static void test_set_error_and_format_ir(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    assert_int_equal(tconv_model_set_error(m, TCONV_ERR_INVALID, "my pass: bad node"),
                     TCONV_ERR_INVALID);
    assert_string_equal(tconv_model_last_error(m), "my pass: bad node");
    assert_int_equal(tconv_model_last_status(m), TCONV_ERR_INVALID);
    assert_int_equal(tconv_model_set_error(m, TCONV_OK, "ignored"), TCONV_OK);
    assert_string_equal(tconv_model_last_error(m), "");

    char *text = NULL;
    API_OK(m, tconv_model_format_ir(m, &text));
    assert_non_null(strstr(text, "ConvTranspose("));
    assert_non_null(strstr(text, "# deconv4_sigmoid"));
    tconv_free(text);
    tconv_model_free(m);
}

static void test_new_model_round_trip(void **state) {
    (void)state;
    tconv_model *m = api_build_conv_transpose(NULL, "Relu");
    assert_int_equal(tconv_model_ir_version(m), 8);
    API_OK(m, tconv_model_set_ir_version(m, 9));
    assert_int_equal(tconv_model_set_ir_version(m, 0), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_set_opset_version(m, "", -1), TCONV_ERR_USAGE);
    API_OK(m, tconv_model_set_opset_version(m, "com.example", 1));
    void *bytes = NULL;
    size_t size = 0;
    API_OK(m, tconv_model_write_buffer(m, &bytes, &size));
    tconv_model *back = NULL;
    char message[256];
    assert_int_equal(
        tconv_model_read_buffer(bytes, size, NULL, NULL, &back, message, sizeof message), TCONV_OK);
    tconv_free(bytes);
    assert_int_equal(tconv_model_ir_version(back), 9);
    assert_int_equal(tconv_model_opset_version(back, ""), 13);
    assert_int_equal(tconv_model_opset_version(back, "com.example"), 1);
    assert_int_equal(tconv_graph_node_count(tconv_model_graph(back)), 2);
    assert_int_equal(tconv_graph_initializer_count(tconv_model_graph(back)), 2);
    tconv_model_free(back);
    tconv_model_free(m);
}

/* Every model call with NULL handles or out pointers returns a status or a neutral value. */
/* A model's own files (the file it was read from, its external data) are never an output
 * (issue 16, item 12). */
static void test_check_output_path_refuses_own_files(void **state) {
    (void)state;
    const char *path = TCONV_SOURCE_DIR "/tests/broken/external_ok/model.onnx";
    tconv_model *m = api_read(path);
    assert_int_equal(tconv_model_check_output_path(m, path), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_model_last_error(m), "is the input model"));
    assert_int_equal(
        tconv_model_check_output_path(m, TCONV_SOURCE_DIR "/tests/broken/external_ok/./w.bin"),
        TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_model_last_error(m), "external data file"));
    assert_int_equal(tconv_model_check_output_path(m, TCONV_SOURCE_DIR "/tests/broken/x.json"),
                     TCONV_OK);
    assert_int_equal(tconv_model_check_output_path(m, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_check_output_path(NULL, path), TCONV_ERR_USAGE);
    tconv_model_free(m);
}

static void test_null_arguments_never_crash(void **state) {
    (void)state;
    assert_int_equal(tconv_model_new(NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_write_file(NULL, "x"), TCONV_ERR_USAGE);
    void *data = (void *)1;
    size_t size = 1;
    assert_int_equal(tconv_model_write_buffer(NULL, &data, &size), TCONV_ERR_USAGE);
    assert_null(data);
    assert_int_equal(size, 0);
    assert_int_equal(tconv_model_clone(NULL, NULL), TCONV_ERR_USAGE);
    tconv_model_free(NULL);
    tconv_free(NULL);
    assert_string_equal(tconv_model_last_error(NULL), "");
    assert_int_equal(tconv_model_last_status(NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_set_error(NULL, TCONV_ERR_IO, "x"), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_validate(NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_format_ir(NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_ir_version(NULL), 0);
    assert_null(tconv_model_producer_name(NULL));
    assert_null(tconv_model_producer_version(NULL));
    assert_null(tconv_model_path(NULL));
    assert_int_equal(tconv_model_sorted_graph_count(NULL), 0);
    assert_int_equal(tconv_model_opset_count(NULL), 0);
    assert_false(tconv_model_opset_at(NULL, 0, NULL, NULL));
    assert_int_equal(tconv_model_opset_version(NULL, NULL), 0);
    assert_int_equal(tconv_model_set_opset_version(NULL, "", 1), TCONV_ERR_USAGE);
    assert_null(tconv_model_graph(NULL));

    tconv_model *m = api_read(KERAS);
    assert_int_equal(tconv_model_write_file(m, NULL), TCONV_ERR_USAGE);
    assert_true(strlen(tconv_model_last_error(m)) > 0);
    assert_int_equal(tconv_model_write_buffer(m, NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_clone(m, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_model_format_ir(m, NULL), TCONV_ERR_USAGE);
    assert_true(tconv_model_opset_at(m, 0, NULL, NULL));
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_read_file_and_metadata),
        cmocka_unit_test(test_read_errors_go_to_the_message_buffer),
        cmocka_unit_test(test_read_limits),
        cmocka_unit_test(test_node_limit_follows_memory),
        cmocka_unit_test(test_buffer_round_trip),
        cmocka_unit_test(test_write_file_and_errors_in_the_model),
        cmocka_unit_test(test_clone_is_independent),
        cmocka_unit_test(test_set_error_and_format_ir),
        cmocka_unit_test(test_format_summary),
        cmocka_unit_test(test_new_model_round_trip),
        cmocka_unit_test(test_check_output_path_refuses_own_files),
        cmocka_unit_test(test_null_arguments_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
