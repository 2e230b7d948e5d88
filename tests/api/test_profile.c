/* Public API, profiling (tconv_runner_set_profiling): the trace is valid JSON in onnxruntime's
 * layout (checked here by a small JSON reader; cli.run_profile_* check it with python3's json
 * too), holds one event per node per profiled run and none while profiling is off, and its
 * errors name the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <unistd.h>

#include "api_test_util.h"

#define DCGAN API_MODEL("dcgan_generator")

/* ---- a JSON reader that only checks the syntax (RFC 8259) */

typedef struct json_in {
    const char *p;
    int depth;
} json_in;

static bool json_value(json_in *in);

static void json_space(json_in *in) {
    while (*in->p == ' ' || *in->p == '\n' || *in->p == '\r' || *in->p == '\t')
        in->p++;
}

static bool json_string(json_in *in) {
    if (*in->p++ != '"')
        return false;
    while (*in->p != '"') {
        unsigned char c = (unsigned char)*in->p++;
        if (c < 0x20)
            return false;
        if (c == '\\') {
            char e = *in->p++;
            if (e == 'u') {
                for (int i = 0; i < 4; i++)
                    if (!isxdigit((unsigned char)*in->p++))
                        return false;
            } else if (!strchr("\"\\/bfnrt", e) || e == '\0') {
                return false;
            }
        }
    }
    in->p++;
    return true;
}

static bool json_number(json_in *in) {
    const char *start = in->p;
    if (*in->p == '-')
        in->p++;
    if (*in->p == '0')
        in->p++;
    else if (isdigit((unsigned char)*in->p))
        while (isdigit((unsigned char)*in->p))
            in->p++;
    else
        return false;
    if (*in->p == '.') {
        in->p++;
        if (!isdigit((unsigned char)*in->p))
            return false;
        while (isdigit((unsigned char)*in->p))
            in->p++;
    }
    if (*in->p == 'e' || *in->p == 'E') {
        in->p++;
        if (*in->p == '+' || *in->p == '-')
            in->p++;
        if (!isdigit((unsigned char)*in->p))
            return false;
        while (isdigit((unsigned char)*in->p))
            in->p++;
    }
    return in->p > start;
}

/* An object or array: `close` ends it; objects have "key": before each value. */
static bool json_container(json_in *in, char close, bool object) {
    in->p++;
    if (++in->depth > 64)
        return false;
    json_space(in);
    if (*in->p == close) {
        in->p++;
        in->depth--;
        return true;
    }
    for (;;) {
        json_space(in);
        if (object) {
            if (!json_string(in))
                return false;
            json_space(in);
            if (*in->p++ != ':')
                return false;
        }
        if (!json_value(in))
            return false;
        json_space(in);
        if (*in->p == ',') {
            in->p++;
            continue;
        }
        if (*in->p++ != close)
            return false;
        in->depth--;
        return true;
    }
}

static bool json_value(json_in *in) {
    json_space(in);
    switch (*in->p) {
    case '{':
        return json_container(in, '}', true);
    case '[':
        return json_container(in, ']', false);
    case '"':
        return json_string(in);
    case 't':
        return strncmp(in->p, "true", 4) == 0 && (in->p += 4);
    case 'f':
        return strncmp(in->p, "false", 5) == 0 && (in->p += 5);
    case 'n':
        return strncmp(in->p, "null", 4) == 0 && (in->p += 4);
    default:
        return json_number(in);
    }
}

static bool json_valid(const char *text) {
    json_in in = {text, 0};
    if (!json_value(&in))
        return false;
    json_space(&in);
    return *in.p == '\0';
}

static size_t count_text(const char *text, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_json_reader_rejects(void **state) {
    (void)state;
    assert_true(json_valid("[{\"a\":1.5,\"b\":[true,null,\"x\\n\"]}]\n"));
    assert_false(json_valid("[{\"a\":1.}]"));
    assert_false(json_valid("[{\"a\":1,}]"));
    assert_false(json_valid("[1] x"));
    assert_false(json_valid("{\"a\" 1}"));
}

/* ---- the profile */

static char *profile_json(tconv_runner *r) {
    char *json = NULL;
    assert_int_equal(tconv_runner_profile_json(r, &json), TCONV_OK);
    assert_non_null(json);
    assert_true(json_valid(json));
    return json;
}

static void test_profile_every_node_of_every_run(void **state) {
    (void)state;
    tconv_model *m = api_read(DCGAN);
    tconv_runner *r = NULL;
    API_OK(m, tconv_runner_new(m, NULL, &r));
    char *json = NULL;
    assert_int_equal(tconv_runner_profile_json(r, &json), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_runner_last_error(r), "never turned on"));
    assert_null(json);
    assert_int_equal(tconv_runner_set_random_inputs(r, 1), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK); /* not profiled */
    assert_int_equal(tconv_runner_set_profiling(r, true), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    assert_int_equal(tconv_runner_set_profiling(r, false), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK); /* not recorded */
    json = profile_json(r);
    assert_int_equal(json[0], '[');
    assert_int_equal(count_text(json, "\"name\":\"model_run\""), 2);
    size_t nodes = 0;
    for (tconv_node *n = tconv_graph_first_node(tconv_model_graph(m)); n; n = tconv_node_next(n)) {
        char needle[512];
        snprintf(needle, sizeof needle, "\"name\":\"%s_kernel_time\"", tconv_node_name(n));
        assert_int_equal(count_text(json, needle), 2);
        nodes++;
    }
    assert_int_equal(count_text(json, "\"cat\":\"Node\""), 2 * nodes);
    assert_int_equal(count_text(json, "\"ph\":\"X\""), 2 * nodes + 2);
    assert_int_equal(count_text(json, "\"dur\":-"), 0);
    /* the BatchNormalization and Relu after each ConvTranspose run in its kernel */
    assert_non_null(strstr(json, "\"fused_ops\":[\"BatchNormalization\",\"Relu\"]"));
    assert_non_null(strstr(json, "\"input_type_shape\":[{\"float\":[2,100,1,1]}"));
    tconv_free(json);

    char *summary = NULL;
    assert_int_equal(tconv_runner_profile_summary(r, 3, &summary), TCONV_OK);
    assert_non_null(strstr(summary, "profile: top 3 of"));
    assert_int_equal(count_text(summary, "\n"), 4);
    assert_non_null(strstr(summary, "2 x"));
    tconv_free(summary);

    /* turning it on again starts a new profile */
    assert_int_equal(tconv_runner_set_profiling(r, true), TCONV_OK);
    json = profile_json(r);
    assert_string_equal(json, "[\n\n]\n");
    tconv_free(json);
    tconv_runner_free(r);
    tconv_model_free(m);
}

static void test_profile_file(void **state) {
    (void)state;
    tconv_model *m = api_read(DCGAN);
    tconv_runner *r = NULL;
    API_OK(m, tconv_runner_new(m, NULL, &r));
    char path[] = TCONV_BINARY_DIR "/api_profile.json";
    assert_int_equal(tconv_runner_write_profile(r, path), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_set_profiling(r, true), TCONV_OK);
    assert_int_equal(tconv_runner_set_random_inputs(r, 2), TCONV_OK);
    assert_int_equal(tconv_runner_run(r), TCONV_OK);
    unlink(path);
    assert_int_equal(tconv_runner_write_profile(r, path), TCONV_OK);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_true(json_valid(text));
    /* the model's own file, a folder: refused, naming the file */
    assert_int_equal(tconv_runner_write_profile(r, DCGAN), TCONV_ERR_USAGE);
    assert_non_null(strstr(tconv_runner_last_error(r), "model.onnx"));
    assert_int_not_equal(tconv_runner_write_profile(r, TCONV_BINARY_DIR), TCONV_OK);
    assert_non_null(strstr(tconv_runner_last_error(r), TCONV_BINARY_DIR));
    unlink(path);
    tconv_runner_free(r);
    tconv_model_free(m);
}

static void test_profile_null_handles(void **state) {
    (void)state;
    char *text = (char *)"x";
    assert_int_equal(tconv_runner_set_profiling(NULL, true), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_profile_json(NULL, &text), TCONV_ERR_USAGE);
    assert_null(text);
    assert_int_equal(tconv_runner_profile_summary(NULL, 1, NULL), TCONV_ERR_USAGE);
    assert_int_equal(tconv_runner_write_profile(NULL, "x.json"), TCONV_ERR_USAGE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_reader_rejects),
        cmocka_unit_test(test_profile_every_node_of_every_run),
        cmocka_unit_test(test_profile_file),
        cmocka_unit_test(test_profile_null_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
