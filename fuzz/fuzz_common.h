/* Shared by the fuzz targets and by tests/fuzz_regressions: each target is a function
 * fuzz_<name>(data, size) that runs one input through the library and aborts (a finding)
 * when a property fails; the libFuzzer entry point is only compiled into the fuzzer binaries
 * (TC_FUZZ_NO_MAIN leaves it out of the regression test). */
#ifndef TC_FUZZ_COMMON_H
#define TC_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importer/importer.h"
#include "ir/error.h"

int fuzz_load_save(const uint8_t *data, size_t size);
int fuzz_legalize_check(const uint8_t *data, size_t size);
int fuzz_tensor_decode(const uint8_t *data, size_t size);
int fuzz_plan_proof(const uint8_t *data, size_t size);

/* A broken property is a finding: print why and abort so libFuzzer keeps the input. */
static inline void fuzz_fail(const char *file, int line, const char *cond, const tc_error *err) {
    fprintf(stderr, "fuzz: %s:%d: property failed: %s\n  error: %s\n", file, line, cond,
            err ? err->message : "-");
    abort();
}

#define FUZZ_REQUIRE(cond, err)                                                                    \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz_fail(__FILE__, __LINE__, #cond, (err));                                           \
    } while (0)

/* A failing call must say what went wrong, prefixed with where (`label`). */
static inline void fuzz_require_message(tconv_status st, const tc_error *err, const char *label) {
    FUZZ_REQUIRE(st != TCONV_OK && err->status == st, err);
    size_t n = strlen(label);
    FUZZ_REQUIRE(strncmp(err->message, label, n) == 0 && err->message[n] != '\0', err);
}

/* The fuzzer's bytes as a model (max_nodes: the node limit, 0 for the default), or NULL. A
 * failed load must leave no model and say where it failed ("<memory>: ..."): a finding
 * otherwise. */
static inline tconv_model *fuzz_load(const uint8_t *data, size_t size, size_t max_nodes) {
    tc_load_options options;
    tc_load_options_init(&options);
    if (max_nodes)
        options.max_nodes = max_nodes;
    tconv_model *model = (tconv_model *)1; /* must be reset on failure */
    tc_error err;
    tc_error_clear(&err);
    tconv_status st = tc_model_load_buffer(data, size, NULL, &options, &model, NULL, &err);
    if (st == TCONV_OK)
        return model;
    FUZZ_REQUIRE(model == NULL, &err);
    fuzz_require_message(st, &err, "<memory>: ");
    return NULL;
}

/* The libFuzzer entry point of a target, left out of the regression test (TC_FUZZ_NO_MAIN). */
#ifndef TC_FUZZ_NO_MAIN
#define FUZZ_ENTRY(target)                                                                         \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                  \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {                                 \
        return target(data, size);                                                                 \
    }
#else
#define FUZZ_ENTRY(target)
#endif

#endif
