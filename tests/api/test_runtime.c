/* Public API, runtime: runners (inputs from memory, TensorProto files or seeded random data,
 * outputs read back, saved and checked against golden data) and comparisons of two models
 * (tconv-import --check's logic): equal, mismatching, different interfaces, symbolic dims. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

#include "api_test_util.h"

#define KERAS API_MODEL("keras_decoder")
#define KERAS_DATA TCONV_SOURCE_DIR "/models/keras_decoder/test_data_set_0/"

static tconv_runner *new_runner(tconv_model *m) {
    tconv_runner *r = NULL;
    API_OK(m, tconv_runner_new(m, NULL, &r));
    return r;
}

static void test_run_against_golden_data(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_runner *r = new_runner(m);
    assert_int_equal(tconv_runner_input_count(r), 1);
    assert_string_equal(tconv_runner_input_name(r, 0), "z");
    assert_int_equal(tconv_runner_input_dtype(r, 0), TCONV_DTYPE_FLOAT);
    assert_int_equal(tconv_runner_input_rank(r, 0), 4);
    assert_int_equal(tconv_runner_input_dim(r, 0, 1), 128);
    size_t index = 99;
    assert_int_equal(tconv_runner_find_input(r, "z", &index), TCONV_OK);
    assert_int_equal(index, 0);
    assert_int_equal(tconv_runner_find_input(r, "deconv1.weight", &index), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_runner_last_error(r), "deconv1.weight"));

    assert_int_equal(tconv_runner_output_count(r), 1);
    assert_string_equal(tconv_runner_output_name(r, 0), "image");
    assert_null(tconv_runner_output_data(r, 0, NULL)); /* no run yet */
    assert_int_equal(tconv_runner_run(r), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_runner_last_error(r), "'z' was not set"));

    assert_int_equal(tconv_runner_load_input(r, 0, KERAS_DATA "input_0.pb"), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    assert_string_equal(tconv_runner_last_error(r), "");
    assert_int_equal(tconv_runner_output_dtype(r, 0), TCONV_DTYPE_FLOAT);
    assert_int_equal(tconv_runner_output_rank(r, 0), 4);
    int64_t expected_dims[] = {2, 1, 56, 40};
    for (int i = 0; i < 4; i++)
        assert_int_equal(tconv_runner_output_dim(r, 0, i), expected_dims[i]);
    size_t nbytes = 0;
    assert_non_null(tconv_runner_output_data(r, 0, &nbytes));
    assert_int_equal(nbytes, 2 * 56 * 40 * sizeof(float));
    double max_abs = -1, max_rel = -1;
    assert_int_equal(
        tconv_runner_check_output(r, 0, KERAS_DATA "output_0.pb", 1e-4, 1e-5, &max_abs, &max_rel),
        TCONV_OK);
    assert_true(max_abs >= 0 && max_abs < 1e-4);

    /* The input file against the output: different shapes, a mismatch that says so. */
    assert_int_equal(
        tconv_runner_check_output(r, 0, KERAS_DATA "input_0.pb", 1e-4, 1e-5, NULL, NULL),
        TCONV_ERR_MISMATCH);
    assert_non_null(strstr(tconv_runner_last_error(r), "image"));
    assert_int_equal(tconv_runner_check_output(r, 0, "/nonexistent.pb", 1e-4, 1e-5, NULL, NULL),
                     TCONV_ERR_IO);
    tconv_runner_free(r);
    tconv_model_free(m);
}

/* A large output (98 KiB, past the size the session recycles) goes back to the session between
 * runs: every run must still give exactly what a fresh runner gives for the same input. */
static void test_repeated_runs_reuse_output_buffers(void **state) {
    (void)state;
    tconv_model *m = api_read(API_MODEL("dcgan_generator"));
    tconv_runner *r = new_runner(m);
    size_t nbytes = 0;
    float *want[3];
    for (int seed = 0; seed < 3; seed++) {
        tconv_runner *fresh = new_runner(m);
        assert_int_equal(tconv_runner_set_random_inputs(fresh, (uint64_t)seed + 1), TCONV_OK);
        assert_int_equal(tconv_runner_run(fresh), TCONV_OK);
        const void *out = tconv_runner_output_data(fresh, 0, &nbytes);
        assert_true(nbytes >= 64 * 1024);
        want[seed] = malloc(nbytes);
        assert_non_null(want[seed]);
        memcpy(want[seed], out, nbytes);
        tconv_runner_free(fresh);
    }
    for (int round = 0; round < 2; round++) {
        for (int seed = 0; seed < 3; seed++) {
            assert_int_equal(tconv_runner_set_random_inputs(r, (uint64_t)seed + 1), TCONV_OK);
            assert_int_equal(tconv_runner_run(r), TCONV_OK);
            assert_memory_equal(tconv_runner_output_data(r, 0, NULL), want[seed], nbytes);
        }
    }
    for (int seed = 0; seed < 3; seed++)
        free(want[seed]);
    tconv_runner_free(r);
    tconv_model_free(m);
}

static void test_inputs_from_memory_and_random(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_runner *r = new_runner(m);
    static const int64_t dims[] = {2, 128, 7, 5};
    size_t n = 2 * 128 * 7 * 5;
    float *x = calloc(n, sizeof *x);
    assert_non_null(x);
    assert_int_equal(tconv_runner_set_input(r, 0, TCONV_DTYPE_FLOAT, 4, dims, x, n * 4 - 1),
                     TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_runner_last_error(r), "bytes"));
    assert_int_equal(tconv_runner_set_input(r, 1, TCONV_DTYPE_FLOAT, 4, dims, x, n * 4),
                     TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_set_input(r, 0, TCONV_DTYPE_STRING, 4, dims, x, n * 4),
                     TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_set_input(r, 0, TCONV_DTYPE_FLOAT, 4, NULL, x, n * 4),
                     TCONV_ERR_USAGE);
    /* The wrong shape is caught when the graph runs, naming the input. */
    static const int64_t wrong[] = {2, 64, 7, 5};
    assert_int_equal(tconv_runner_set_input(r, 0, TCONV_DTYPE_FLOAT, 4, wrong, x, n * 2), TCONV_OK);
    assert_int_not_equal(tconv_runner_run(r), TCONV_OK);
    assert_non_null(strstr(tconv_runner_last_error(r), "z"));

    /* Zeros in: the output is a Sigmoid's, inside (0, 1). */
    assert_int_equal(tconv_runner_set_input(r, 0, TCONV_DTYPE_FLOAT, 4, dims, x, n * 4), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    const float *y = tconv_runner_output_data(r, 0, NULL);
    for (size_t i = 0; i < 2 * 56 * 40; i++)
        assert_true(y[i] > 0.0f && y[i] < 1.0f);

    /* Seeded random inputs: same seed, same outputs. */
    assert_int_equal(tconv_runner_set_random_inputs(r, 7), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    size_t nbytes = 0;
    float *first = malloc(2 * 56 * 40 * sizeof(float));
    assert_non_null(first);
    const void *out = tconv_runner_output_data(r, 0, &nbytes); /* sets nbytes first */
    assert_int_equal(nbytes, 2 * 56 * 40 * sizeof(float));
    memcpy(first, out, nbytes);
    assert_int_equal(tconv_runner_set_random_input(r, 0, 7), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    assert_memory_equal(first, tconv_runner_output_data(r, 0, NULL), nbytes);

    /* Saved and compared with itself. */
    char dir[] = "/tmp/tconv-api-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/output_0.pb", dir);
    assert_int_equal(tconv_runner_save_output(r, 0, path), TCONV_OK);
    double max_abs = -1;
    assert_int_equal(tconv_runner_check_output(r, 0, path, 0, 0, &max_abs, NULL), TCONV_OK);
    assert_true(max_abs == 0.0);
    assert_int_equal(tconv_runner_save_output(r, 3, path), TCONV_ERR_USAGE);
    unlink(path);
    rmdir(dir);
    free(first);
    free(x);
    tconv_runner_free(r);
    tconv_model_free(m);
}

static void test_runner_on_unsupported_op(void **state) {
    (void)state;
    tconv_model *m = api_build_conv_transpose(NULL, "NoSuchOp");
    tconv_runner *r = (tconv_runner *)(uintptr_t)1;
    assert_int_equal(tconv_runner_new(m, NULL, &r), TCONV_ERR_UNSUPPORTED);
    assert_null(r);
    assert_non_null(strstr(tconv_model_last_error(m), "NoSuchOp"));
    tconv_model_free(m);
}

/* Memory and thread limits reach the runtime: a graph that needs more memory than allowed is
 * refused when the runner is made, and in a comparison. */
static void test_runtime_limits(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_limits *limits = NULL;
    assert_int_equal(tconv_limits_new(&limits), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_THREADS, 2), TCONV_OK);
    tconv_runner *r = NULL;
    API_OK(m, tconv_runner_new(m, limits, &r));
    tconv_runner_free(r);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 4096), TCONV_OK);
    assert_int_equal(tconv_runner_new(m, limits, &r), TCONV_ERR_LIMIT);
    assert_null(r);
    assert_true(strlen(tconv_model_last_error(m)) > 0);

    tconv_comparison *c = NULL;
    assert_int_equal(tconv_comparison_new(&c), TCONV_OK);
    assert_int_equal(tconv_comparison_set_limits(c, limits), TCONV_OK);
    tconv_limits_free(limits); /* copied */
    assert_int_equal(tconv_comparison_run(c, m, m), TCONV_ERR_LIMIT);
    assert_int_equal(tconv_comparison_set_limits(c, NULL), TCONV_OK);
    assert_int_equal(tconv_comparison_run(c, m, m), TCONV_OK);
    assert_true(tconv_comparison_max_abs_error(c, 0) == 0.0);
    tconv_comparison_free(c);
    tconv_model_free(m);
}

/* Inputs count against the memory limit before they are made or copied (issue 16, item 1), and
 * the work limit refuses a run before it computes (item 6). */
static void test_inputs_and_work_count_against_limits(void **state) {
    (void)state;
    tconv_model *m = api_read(API_MODEL("dynamic_same")); /* x [N, 8, H, W] */
    tconv_limits *limits = NULL;
    assert_int_equal(tconv_limits_new(&limits), TCONV_OK);
    assert_int_equal(tconv_limits_get(limits, TCONV_LIMIT_WORK), 1ull << 38);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 1u << 20), TCONV_OK);
    tconv_runner *r = NULL;
    API_OK(m, tconv_runner_new(m, limits, &r));
    assert_int_equal(tconv_runner_bind_dim(r, "N", 1), TCONV_OK);
    assert_int_equal(tconv_runner_bind_dim(r, "H", 32768), TCONV_OK);
    assert_int_equal(tconv_runner_bind_dim(r, "W", 32768), TCONV_OK); /* 32 GiB */
    assert_int_equal(tconv_runner_set_random_inputs(r, 1), TCONV_ERR_LIMIT);
    assert_non_null(strstr(tconv_runner_last_error(r), "of graph inputs"));
    assert_int_equal(tconv_runner_bind_dim(r, "H", 4), TCONV_OK);
    assert_int_equal(tconv_runner_bind_dim(r, "W", 4), TCONV_OK);
    assert_int_equal(tconv_runner_set_random_inputs(r, 1), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    static float big[1 * 8 * 128 * 256]; /* 1 MiB: with the initializers, over the limit */
    int64_t dims[] = {1, 8, 128, 256};
    assert_int_equal(tconv_runner_set_input(r, 0, TCONV_DTYPE_FLOAT, 4, dims, big, sizeof big),
                     TCONV_ERR_LIMIT);
    assert_non_null(strstr(tconv_runner_last_error(r), "input 'x'"));
    tconv_runner_free(r);

    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 0), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_WORK, 1000), TCONV_OK);
    assert_int_equal(tconv_limits_get(limits, TCONV_LIMIT_WORK), 1000);
    API_OK(m, tconv_runner_new(m, limits, &r)); /* nothing known before the dims are bound */
    assert_int_equal(tconv_runner_bind_dim(r, "N", 1), TCONV_OK);
    assert_int_equal(tconv_runner_bind_dim(r, "H", 16), TCONV_OK);
    assert_int_equal(tconv_runner_bind_dim(r, "W", 16), TCONV_OK);
    /* the session keeps the inferred shapes (its type table): once the dims are bound, the
     * inputs' replay already knows every Conv's work */
    assert_int_equal(tconv_runner_set_random_inputs(r, 1), TCONV_ERR_LIMIT);
    assert_non_null(strstr(tconv_runner_last_error(r), "work limit of 1000"));
    tconv_runner_free(r);
    tconv_limits_free(limits);
    tconv_model_free(m);
}

/* Where the model declares no intermediate shapes, the plan takes them from shape inference and
 * refuses before any kernel runs (issue 16, item 9); the caller's model is left as it was. */
static void test_plan_from_inferred_shapes(void **state) {
    (void)state;
    tconv_model *m = api_read(TCONV_SOURCE_DIR "/tests/broken/undeclared_bomb.onnx");
    void *before = NULL, *after = NULL;
    size_t before_size = 0, after_size = 0;
    API_OK(m, tconv_model_write_buffer(m, &before, &before_size));
    tconv_limits *limits = NULL;
    assert_int_equal(tconv_limits_new(&limits), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 2u << 20), TCONV_OK);
    tconv_runner *r = NULL;
    assert_int_equal(tconv_runner_new(m, limits, &r), TCONV_ERR_LIMIT);
    assert_null(r);
    /* two 4 MiB intermediates (pad's output and relu's) alive at once, planned, not met */
    assert_non_null(strstr(tconv_model_last_error(m), "planned memory of 8405056 bytes"));
    assert_non_null(strstr(tconv_model_last_error(m), "peak at node 'relu'"));
    tconv_comparison *c = NULL;
    assert_int_equal(tconv_comparison_new(&c), TCONV_OK);
    assert_int_equal(tconv_comparison_set_limits(c, limits), TCONV_OK);
    assert_int_equal(tconv_comparison_run(c, m, m), TCONV_ERR_LIMIT);
    assert_non_null(strstr(tconv_comparison_last_error(c), "planned memory of 8405056 bytes"));
    tconv_comparison_free(c);

    assert_int_equal(tconv_value_rank(tconv_graph_lookup(tconv_model_graph(m), "P")), -1);
    API_OK(m, tconv_model_write_buffer(m, &after, &after_size));
    assert_int_equal(after_size, before_size);
    assert_memory_equal(after, before, before_size);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 9u << 20), TCONV_OK);
    API_OK(m, tconv_runner_new(m, limits, &r));
    assert_int_equal(tconv_runner_set_random_inputs(r, 1), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    tconv_runner_free(r);
    tconv_limits_free(limits);
    tconv_free(before);
    tconv_free(after);
    tconv_model_free(m);
}

static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* A float TensorProto file: dims, data_type FLOAT, raw_data of data_bytes zeros. */
static void write_float_pb(const char *path, const int64_t *dims, int rank, size_t data_bytes) {
    uint8_t head[128];
    size_t n = 0;
    for (int i = 0; i < rank; i++) {
        head[n++] = 0x08; /* field 1 (dims), varint */
        n += put_varint(head + n, (uint64_t)dims[i]);
    }
    head[n++] = 0x10; /* field 2 (data_type) */
    head[n++] = 1;    /* FLOAT */
    head[n++] = 0x4a; /* field 9 (raw_data), length-delimited */
    n += put_varint(head + n, data_bytes);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(head, 1, n, f), n);
    static const uint8_t zeros[4096];
    for (size_t done = 0; done < data_bytes; done += sizeof zeros) {
        size_t k = data_bytes - done < sizeof zeros ? data_bytes - done : sizeof zeros;
        assert_int_equal(fwrite(zeros, 1, k, f), k);
    }
    assert_int_equal(fclose(f), 0);
}

/* A .pb input is refused by its file size, or by the size its dims declare, before it is read
 * or decoded (issue 16, item 2). */
static void test_pb_input_counted_before_reading(void **state) {
    (void)state;
    tconv_model *m = api_read(API_MODEL("dynamic_same")); /* x [N, 8, H, W] */
    tconv_limits *limits = NULL;
    assert_int_equal(tconv_limits_new(&limits), TCONV_OK);
    assert_int_equal(tconv_limits_set(limits, TCONV_LIMIT_MEMORY_BYTES, 1u << 20), TCONV_OK);
    tconv_runner *r = NULL;
    API_OK(m, tconv_runner_new(m, limits, &r));
    char dir[] = "/tmp/tconv-api-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char big[128], declared[128], small[128];
    snprintf(big, sizeof big, "%s/big.pb", dir);
    snprintf(declared, sizeof declared, "%s/declared.pb", dir);
    snprintf(small, sizeof small, "%s/small.pb", dir);
    int64_t big_dims[] = {1, 8, 256, 256}; /* 2 MiB */
    write_float_pb(big, big_dims, 4, 8 * 256 * 256 * sizeof(float));
    int64_t huge_dims[] = {1, 8, 32768, 32768}; /* 32 GiB declared, no data */
    write_float_pb(declared, huge_dims, 4, 0);
    int64_t small_dims[] = {1, 8, 4, 4};
    write_float_pb(small, small_dims, 4, 8 * 4 * 4 * sizeof(float));

    assert_int_equal(tconv_runner_load_input(r, 0, big), TCONV_ERR_LIMIT);
    const char *e = tconv_runner_last_error(r);
    assert_non_null(strstr(e, "within the memory limit"));
    assert_non_null(strstr(e, "file is 2097169 bytes")); /* refused by its size: not read */
    assert_int_equal(tconv_runner_load_input(r, 0, declared), TCONV_ERR_LIMIT);
    e = tconv_runner_last_error(r);
    assert_non_null(strstr(e, "declare 34359738368 bytes of data")); /* not decoded */
    assert_int_equal(tconv_runner_load_input(r, 0, small), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);

    unlink(big);
    unlink(declared);
    unlink(small);
    rmdir(dir);
    tconv_runner_free(r);
    tconv_limits_free(limits);
    tconv_model_free(m);
}

static void test_compare_original_with_legalized(void **state) {
    (void)state;
    tconv_model *original = api_read(KERAS);
    tconv_model *converted = NULL;
    API_OK(original, tconv_model_clone(original, &converted));
    tconv_pipeline *p = NULL;
    assert_int_equal(tconv_pipeline_new(&p), TCONV_OK);
    API_OK(converted, tconv_pipeline_run(p, converted, NULL));
    tconv_pipeline_free(p);
    assert_true(api_count_ops(converted, "Slice") > 0);

    tconv_comparison *c = NULL;
    assert_int_equal(tconv_comparison_new(&c), TCONV_OK);
    assert_int_equal(tconv_comparison_set_runs(c, 2), TCONV_OK);
    assert_int_equal(tconv_comparison_set_seed(c, 5), TCONV_OK);
    assert_int_equal(tconv_comparison_set_tolerance(c, 1e-4, 1e-5), TCONV_OK);
    assert_int_equal(tconv_comparison_run(c, original, converted), TCONV_OK);
    assert_string_equal(tconv_comparison_last_error(c), "");
    assert_int_equal(tconv_comparison_output_count(c), 1);
    assert_string_equal(tconv_comparison_output_name(c, 0), "image");
    assert_true(tconv_comparison_output_matches(c, 0));
    assert_null(tconv_comparison_output_failure(c, 0));
    assert_true(tconv_comparison_max_abs_error(c, 0) < 1e-5);
    assert_true(tconv_comparison_max_rel_error(c, 0) >= 0);

    assert_int_equal(tconv_comparison_set_runs(c, 0), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_comparison_last_error(c), "runs"));
    assert_int_equal(tconv_comparison_set_tolerance(c, -1, 0), TCONV_ERR_USAGE);
    tconv_comparison_free(c);
    tconv_model_free(converted);
    tconv_model_free(original);
}

static void test_compare_mismatch_and_interfaces(void **state) {
    (void)state;
    tconv_model *relu = api_build_conv_transpose(NULL, "Relu");
    tconv_model *sigmoid = api_build_conv_transpose(NULL, "Sigmoid");
    tconv_comparison *c = NULL;
    assert_int_equal(tconv_comparison_new(&c), TCONV_OK);
    assert_int_equal(tconv_comparison_set_runs(c, 3), TCONV_OK);
    assert_int_equal(tconv_comparison_run(c, relu, sigmoid), TCONV_ERR_MISMATCH);
    assert_non_null(strstr(tconv_comparison_last_error(c), "seed 1: output 'Z'"));
    assert_int_equal(tconv_comparison_output_count(c), 1);
    assert_false(tconv_comparison_output_matches(c, 0));
    assert_non_null(strstr(tconv_comparison_output_failure(c, 0), "seed 1"));
    assert_true(tconv_comparison_max_abs_error(c, 0) > 0.1);

    /* Different interfaces: one output vs the same model with a second output. */
    tconv_model *two = api_build_conv_transpose(NULL, "Relu");
    API_OK(two, tconv_graph_append_output(tconv_model_graph(two),
                                          tconv_graph_lookup(tconv_model_graph(two), "Y")));
    assert_int_equal(tconv_comparison_run(c, relu, two), TCONV_ERR_MISMATCH);
    assert_non_null(strstr(tconv_comparison_last_error(c), "differ"));
    assert_int_equal(tconv_comparison_output_count(c), 0);

    /* A model the runtime cannot load: not a mismatch, the message names the model. */
    tconv_model *bad = api_build_conv_transpose(NULL, "NoSuchOp");
    assert_int_equal(tconv_comparison_run(c, relu, bad), TCONV_ERR_UNSUPPORTED);
    assert_non_null(strstr(tconv_comparison_last_error(c), "candidate model"));
    assert_int_equal(tconv_comparison_run(c, NULL, bad), TCONV_ERR_USAGE);
    tconv_comparison_free(c);
    tconv_model_free(bad);
    tconv_model_free(two);
    tconv_model_free(sigmoid);
    tconv_model_free(relu);
}

static void test_compare_with_symbolic_dims(void **state) {
    (void)state;
    tconv_model *original = api_read(API_MODEL("dynamic_same"));
    tconv_model *converted = NULL;
    API_OK(original, tconv_model_clone(original, &converted));
    tconv_pipeline *p = NULL;
    assert_int_equal(tconv_pipeline_new(&p), TCONV_OK);
    API_OK(converted, tconv_pipeline_run(p, converted, NULL));
    tconv_pipeline_free(p);

    tconv_comparison *c = NULL;
    assert_int_equal(tconv_comparison_new(&c), TCONV_OK);
    tconv_status st = tconv_comparison_run(c, original, converted);
    assert_int_not_equal(st, TCONV_OK);
    assert_int_not_equal(st, TCONV_ERR_MISMATCH);
    assert_non_null(strstr(tconv_comparison_last_error(c), "N"));
    assert_int_equal(tconv_comparison_bind_dim(c, "N", 2), TCONV_OK);
    assert_int_equal(tconv_comparison_bind_dim(c, "H", 5), TCONV_OK);
    assert_int_equal(tconv_comparison_bind_dim(c, "W", 7), TCONV_OK);
    assert_int_equal(tconv_comparison_bind_dim(c, "W", 6), TCONV_OK); /* rebinding */
    assert_int_equal(tconv_comparison_bind_dim(c, "W", -6), TCONV_ERR_USAGE);
    assert_int_equal(tconv_comparison_run(c, original, converted), TCONV_OK);

    tconv_runner *r = new_runner(original);
    assert_int_equal(tconv_runner_input_dim(r, 0, 0), -1);
    assert_int_not_equal(tconv_runner_set_random_input(r, 0, 1), TCONV_OK);
    assert_int_equal(tconv_runner_bind_dim(r, "N", 1), TCONV_OK);
    assert_int_equal(tconv_runner_bind_dim(r, "H", 4), TCONV_OK);
    assert_int_equal(tconv_runner_bind_dim(r, "W", 4), TCONV_OK);
    assert_int_equal(tconv_runner_set_random_input(r, 0, 1), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    assert_int_equal(tconv_runner_output_dim(r, 0, 0), 1);
    tconv_runner_free(r);
    tconv_comparison_free(c);
    tconv_model_free(converted);
    tconv_model_free(original);
}

/* An ONNX test directory through the one runner of them (what tconv-run DIR and the tests use):
 * listing, a data set that passes, one whose golden output belongs to another model, checksums. */
static void test_test_directory(void **state) {
    (void)state;
    char message[512];
    tconv_test_dir *dir = NULL;
    assert_int_equal(tconv_test_dir_open(TCONV_SOURCE_DIR "/models/keras_decoder/", &dir, message,
                                         sizeof message),
                     TCONV_OK);
    assert_string_equal(tconv_test_dir_model_path(dir),
                        TCONV_SOURCE_DIR "/models/keras_decoder/model.onnx");
    assert_true(tconv_test_dir_data_set_count(dir) >= 1);
    assert_null(tconv_test_dir_data_set(dir, tconv_test_dir_data_set_count(dir)));
    tconv_model *m = api_read(tconv_test_dir_model_path(dir));
    tconv_runner *r = new_runner(m);
    double abs_err = -1, sum = 0, abs_sum = 0;
    assert_int_equal(tconv_runner_output_checksum(r, 0, &sum, &abs_sum), TCONV_ERR_USAGE);
    assert_int_equal(
        tconv_runner_run_data_set(r, tconv_test_dir_data_set(dir, 0), 1e-4, 1e-5, &abs_err, NULL),
        TCONV_OK);
    assert_true(abs_err >= 0 && abs_err < 1e-4);
    assert_int_equal(tconv_runner_output_checksum(r, 0, &sum, &abs_sum), TCONV_OK);
    assert_true(abs_sum > 0 && abs_sum >= sum && abs_sum >= -sum);
    /* The keras outputs are no inputs of another data set: a data set of the wrong model. */
    assert_int_equal(
        tconv_runner_check_data_set(r, TCONV_ONNX_NODE_TESTS "/test_convtranspose/test_data_set_0",
                                    1e-4, 1e-5, NULL, NULL),
        TCONV_ERR_MISMATCH);
    assert_non_null(strstr(tconv_runner_last_error(r), "output 'image'"));
    assert_int_equal(
        tconv_runner_load_data_set(r, TCONV_ONNX_NODE_TESTS "/test_convtranspose/test_data_set_0"),
        TCONV_ERR_INVALID);
    assert_non_null(strstr(tconv_runner_last_error(r), "2 input files, the model takes 1"));
    tconv_test_dir *none = dir;
    assert_int_equal(
        tconv_test_dir_open(TCONV_SOURCE_DIR "/models", &none, message, sizeof message),
        TCONV_ERR_USAGE);
    assert_null(none);
    assert_non_null(strstr(message, "no test_data_set_*"));
    assert_non_null(tconv_runtime_gemm_isa());
    tconv_runner_free(r);
    tconv_model_free(m);
    tconv_test_dir_free(dir);
}

/* The local proof: each rewrite alone (original node against its emitted nodes), also in a model
 * with ops the runtime lacks; the proof as JSON; the missing ops named with counts. */
static void test_local_proofs(void **state) {
    (void)state;
    static const char *const models[] = {KERAS,
                                         TCONV_SOURCE_DIR "/tests/cli/data/missing_ops.onnx"};
    static const size_t rewrites[] = {4, 2};
    for (size_t k = 0; k < 2; k++) {
        tconv_model *original = api_read(models[k]), *rewritten = api_read(models[k]);
        tconv_pipeline *p = NULL;
        tconv_report *report = NULL;
        assert_int_equal(tconv_pipeline_new(&p), TCONV_OK);
        API_OK(rewritten, tconv_pipeline_run(p, rewritten, &report));
        tconv_comparison *c = NULL;
        assert_int_equal(tconv_comparison_new(&c), TCONV_OK);
        assert_int_equal(tconv_comparison_set_runs(c, 2), TCONV_OK);
        assert_int_equal(tconv_comparison_run_rewrites(c, original, rewritten, report), TCONV_OK);
        assert_int_equal(tconv_comparison_rewrite_count(c), rewrites[k]);
        for (size_t i = 0; i < rewrites[k]; i++) {
            assert_string_equal(tconv_comparison_rewrite_node(c, i),
                                tconv_report_rewritten_node(report, i));
            assert_true(tconv_comparison_rewrite_proven(c, i));
            assert_int_equal(tconv_comparison_rewrite_runs(c, i), 2);
            assert_non_null(strchr(tconv_comparison_rewrite_sizes(c, i), '['));
            assert_null(tconv_comparison_rewrite_failure(c, i));
            assert_true(tconv_comparison_rewrite_max_abs_error(c, i) < 1e-5);
        }
        char *json = NULL, *missing = NULL;
        size_t n_missing = 99;
        assert_int_equal(tconv_comparison_proof_json(c, "skipped", "why", &json), TCONV_OK);
        assert_non_null(strstr(json, "\"proven\": true"));
        assert_non_null(
            strstr(json, "\"whole_model\": {\"status\": \"skipped\", \"reason\": \"why\""));
        tconv_free(json);
        API_OK(original, tconv_runtime_missing_ops(original, &n_missing, &missing));
        assert_int_equal(n_missing, k == 0 ? 0 : 2);
        assert_string_equal(missing, k == 0 ? ""
                                            : "MeanVarianceNormalization x2 (mvn1, mvn2), "
                                              "Bernoulli x1 (bernoulli)");
        tconv_free(missing);
        tconv_comparison_free(c);
        tconv_report_free(report);
        tconv_pipeline_free(p);
        tconv_model_free(rewritten);
        tconv_model_free(original);
    }
}

/* The runner's and the comparison's convention and fusion choices. */
static void test_convention_and_fusion(void **state) {
    (void)state;
    const char *dir = TCONV_ONNX_NODE_TESTS "/test_convtranspose_autopad_same";
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    tconv_model *m = api_read(path);
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    static const tconv_convention conventions[] = {TCONV_CONVENTION_ONNX, TCONV_CONVENTION_ORT,
                                                   TCONV_CONVENTION_ORT_LEGACY};
    static const tconv_status expected[] = {TCONV_OK, TCONV_OK, TCONV_ERR_MISMATCH};
    for (size_t i = 0; i < 3; i++) {
        for (int fused = 0; fused < 2; fused++) {
            tconv_runner *r = NULL;
            API_OK(m, tconv_runner_new_with(m, NULL, conventions[i], fused, &r));
            assert_int_equal(tconv_runner_run_data_set(r, path, 1e-4, 1e-5, NULL, NULL),
                             expected[i]);
            tconv_runner_free(r);
        }
    }
    tconv_runner *r = NULL;
    assert_int_equal(tconv_runner_new_with(m, NULL, (tconv_convention)7, true, &r),
                     TCONV_ERR_USAGE);
    assert_null(r);
    tconv_comparison *c = NULL;
    assert_int_equal(tconv_comparison_new(&c), TCONV_OK);
    assert_int_equal(tconv_comparison_set_convention(c, (tconv_convention)7), TCONV_ERR_USAGE);
    assert_int_equal(tconv_comparison_set_convention(c, TCONV_CONVENTION_ORT_LEGACY), TCONV_OK);
    assert_int_equal(tconv_comparison_run(c, m, m), TCONV_OK);
    tconv_comparison_free(c);
    char message[256];
    assert_int_equal(tconv_write_file("/nonexistent-dir/x", "a", 1, message, sizeof message),
                     TCONV_ERR_IO);
    assert_non_null(strstr(message, "nonexistent-dir"));
    tconv_model_free(m);
}

static void test_null_handles(void **state) {
    (void)state;
    assert_int_equal(tconv_runner_new(NULL, NULL, NULL), TCONV_ERR_USAGE);
    tconv_runner_free(NULL);
    assert_string_equal(tconv_runner_last_error(NULL), "");
    assert_int_equal(tconv_runner_input_count(NULL), 0);
    assert_null(tconv_runner_input_name(NULL, 0));
    assert_int_equal(tconv_runner_input_dtype(NULL, 0), TCONV_DTYPE_UNDEFINED);
    assert_int_equal(tconv_runner_input_rank(NULL, 0), -1);
    assert_int_equal(tconv_runner_input_dim(NULL, 0, 0), -1);
    assert_int_equal(tconv_runner_find_input(NULL, "x", NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_set_input(NULL, 0, TCONV_DTYPE_FLOAT, 0, NULL, NULL, 0),
                     TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_bind_dim(NULL, "N", 1), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_set_random_input(NULL, 0, 1), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_set_random_inputs(NULL, 1), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_load_input(NULL, 0, "x"), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_run(NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_output_count(NULL), 0);
    assert_null(tconv_runner_output_name(NULL, 0));
    assert_int_equal(tconv_runner_output_dtype(NULL, 0), TCONV_DTYPE_UNDEFINED);
    assert_int_equal(tconv_runner_output_rank(NULL, 0), -1);
    assert_int_equal(tconv_runner_output_dim(NULL, 0, 0), -1);
    size_t nbytes = 1;
    assert_null(tconv_runner_output_data(NULL, 0, &nbytes));
    assert_int_equal(nbytes, 0);
    assert_int_equal(tconv_runner_save_output(NULL, 0, "x"), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_check_output(NULL, 0, "x", 0, 0, NULL, NULL), TCONV_ERR_USAGE);

    assert_int_equal(tconv_comparison_new(NULL), TCONV_ERR_USAGE);
    tconv_comparison_free(NULL);
    assert_string_equal(tconv_comparison_last_error(NULL), "");
    assert_int_equal(tconv_comparison_set_runs(NULL, 1), TCONV_ERR_USAGE);
    assert_int_equal(tconv_comparison_set_seed(NULL, 1), TCONV_ERR_USAGE);
    assert_int_equal(tconv_comparison_set_limits(NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_comparison_set_tolerance(NULL, 0, 0), TCONV_ERR_USAGE);
    assert_int_equal(tconv_comparison_bind_dim(NULL, "N", 1), TCONV_ERR_USAGE);
    assert_int_equal(tconv_comparison_run(NULL, NULL, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_comparison_output_count(NULL), 0);
    assert_null(tconv_comparison_output_name(NULL, 0));
    assert_true(tconv_comparison_max_abs_error(NULL, 0) == 0.0);
    assert_true(tconv_comparison_max_rel_error(NULL, 0) == 0.0);
    assert_false(tconv_comparison_output_matches(NULL, 0));
    assert_null(tconv_comparison_output_failure(NULL, 0));
}

/* Inputs borrowed (read in place, never freed) and outputs taken (handed over, freed with
 * tconv_free): what the Python package does to cross without copies. */
static void test_borrowed_inputs_taken_outputs(void **state) {
    (void)state;
    tconv_model *m = api_read(KERAS);
    tconv_runner *r = new_runner(m);
    int64_t dims[4];
    int rank = tconv_runner_input_rank(r, 0);
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = tconv_runner_input_dim(r, 0, i);
        n *= (size_t)dims[i];
    }
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(i % 7) * 0.25f - 0.5f;
    assert_int_equal(tconv_runner_set_input(r, 0, TCONV_DTYPE_FLOAT, rank, dims, x, n * 4),
                     TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    size_t copied_bytes = 0;
    const void *copied = tconv_runner_output_data(r, 0, &copied_bytes);
    void *expected = malloc(copied_bytes);
    assert_non_null(expected);
    memcpy(expected, copied, copied_bytes);
    assert_int_equal(
        tconv_runner_set_input_borrowed(r, 0, TCONV_DTYPE_FLOAT, rank, dims, x, n * 4 - 4),
        TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_set_input_borrowed(r, 0, TCONV_DTYPE_FLOAT, rank, dims, x, n * 4),
                     TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    void *taken = NULL;
    size_t taken_bytes = 0;
    assert_int_equal(tconv_runner_take_output(r, 0, &taken, &taken_bytes), TCONV_OK);
    assert_int_equal(taken_bytes, copied_bytes);
    assert_memory_equal(taken, expected, copied_bytes);
    /* taken: the runner holds it no more */
    assert_null(tconv_runner_output_data(r, 0, NULL));
    assert_int_equal(tconv_runner_output_dtype(r, 0), TCONV_DTYPE_UNDEFINED);
    void *again = NULL;
    assert_int_equal(tconv_runner_take_output(r, 0, &again, NULL), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_runner_last_error(r), "taken"));
    double sum, abs_sum;
    assert_int_equal(tconv_runner_output_checksum(r, 0, &sum, &abs_sum), TCONV_ERR_USAGE);
    /* the next run uses the borrowed input again and makes a new output */
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    assert_memory_equal(tconv_runner_output_data(r, 0, NULL), expected, copied_bytes);
    tconv_free(taken);
    free(expected);
    tconv_runner_free(r);
    free(x); /* after the runner: it only borrowed it */
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_against_golden_data),
        cmocka_unit_test(test_inputs_from_memory_and_random),
        cmocka_unit_test(test_repeated_runs_reuse_output_buffers),
        cmocka_unit_test(test_runner_on_unsupported_op),
        cmocka_unit_test(test_runtime_limits),
        cmocka_unit_test(test_inputs_and_work_count_against_limits),
        cmocka_unit_test(test_compare_original_with_legalized),
        cmocka_unit_test(test_compare_mismatch_and_interfaces),
        cmocka_unit_test(test_compare_with_symbolic_dims),
        cmocka_unit_test(test_test_directory),
        cmocka_unit_test(test_local_proofs),
        cmocka_unit_test(test_convention_and_fusion),
        cmocka_unit_test(test_plan_from_inferred_shapes),
        cmocka_unit_test(test_pb_input_counted_before_reading),
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test(test_borrowed_inputs_taken_outputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
