/* The pass registry and the pass manager: run a named list, verify the IR after each pass. */
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

#include "ir/print.h"

static const tc_pass_def PASSES[] = {
    {"shape-infer", "infer static and symbolic shapes and record them as value_info",
     tc_pass_shape_infer},
    {"lint-conv-transpose",
     "warn about ConvTranspose nodes whose meaning differs between ONNX and onnxruntime",
     tc_pass_lint_conv_transpose},
    {"legalize-conv-transpose",
     "rewrite SAME/asymmetric/output_shape/output_padding ConvTranspose into VALID + "
     "Slice/Pad/Add",
     tc_pass_legalize_conv_transpose},
    {"lower-for-target",
     "rewrite every ConvTranspose into a form the target (--target) takes, or fail naming each "
     "node left; nothing without a target",
     tc_pass_lower_for_target},
    {"dce", "remove nodes and initializers that nothing uses", tc_pass_dce},
};

const tc_pass_def *tc_pass_table(size_t *count) {
    *count = sizeof PASSES / sizeof PASSES[0];
    return PASSES;
}

/* "unknown pass 'name' (passes: a, b, ...)": the message names what the table holds. */
static tconv_status unknown_pass(tc_error *err, const char *what, const char *name) {
    char known[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof PASSES / sizeof PASSES[0] && len < sizeof known; i++) {
        int n = snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", PASSES[i].name);
        len += n > 0 ? (size_t)n : 0;
    }
    return tc_error_set(err, TCONV_ERR_USAGE, "%sunknown pass '%s' (passes: %s)", what, name,
                        known);
}

const tc_pass_def *tc_pass_find(const char *name) {
    for (size_t i = 0; i < sizeof PASSES / sizeof PASSES[0]; i++) {
        if (strcmp(PASSES[i].name, name) == 0)
            return &PASSES[i];
    }
    return NULL;
}

const char *tconv_policy_name(tconv_policy policy) {
    return policy == TCONV_POLICY_VALID_ONLY ? "valid-only" : "same-or-asymmetric";
}

bool tc_policy_parse(const char *text, tconv_policy *out) {
    if (strcmp(text, "same-or-asymmetric") == 0) {
        *out = TCONV_POLICY_SAME_OR_ASYMMETRIC;
        return true;
    }
    if (strcmp(text, "valid-only") == 0) {
        *out = TCONV_POLICY_VALID_ONLY;
        return true;
    }
    return false;
}

void tc_pass_options_init(tc_pass_options *options) {
    memset(options, 0, sizeof *options);
    options->policy = TCONV_POLICY_SAME_OR_ASYMMETRIC;
    options->convention = TCONV_CONVENTION_ONNX;
}

/* Checks every name of the list before anything runs, so a typo never leaves a half-done model. */
static tconv_status resolve_pass_list(const char *list, const tc_pass_def **passes, size_t max,
                                      size_t *count, tc_error *err) {
    *count = 0;
    if (!list || !*list || strcmp(list, "none") == 0)
        return TCONV_OK;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        char name[64];
        if (len == 0 || len >= sizeof name)
            return tc_error_set(err, TCONV_ERR_USAGE, "bad pass list '%s'", list);
        memcpy(name, p, len);
        name[len] = '\0';
        const tc_pass_def *def = tc_pass_find(name);
        if (!def)
            return unknown_pass(err, "", name);
        if (*count == max)
            return tc_error_set(err, TCONV_ERR_USAGE, "too many passes in '%s'", list);
        passes[(*count)++] = def;
        p += len;
        if (*p == ',')
            p++;
    }
    return TCONV_OK;
}

tconv_status tc_run_passes(tconv_model *model, const char *pass_list,
                           const tc_pass_options *options, const char *print_after, FILE *print_out,
                           tc_error *err) {
    const tc_pass_def *passes[32];
    size_t n;
    tconv_status st = resolve_pass_list(pass_list, passes, 32, &n, err);
    if (st == TCONV_OK && print_after && strcmp(print_after, "all") != 0 &&
        !tc_pass_find(print_after))
        st = unknown_pass(err, "print_after: ", print_after);
    for (size_t i = 0; st == TCONV_OK && i < n; i++) {
        st = passes[i]->run(model->graph, options, err);
        if (st != TCONV_OK) {
            tc_error_prefix(err, st, "pass %s: ", passes[i]->name);
            break;
        }
        st = tc_model_verify(model, err);
        if (st != TCONV_OK) {
            tc_error_prefix(err, st, "IR invalid after pass %s: ", passes[i]->name);
            break;
        }
        if (print_after && print_out &&
            (strcmp(print_after, "all") == 0 || strcmp(print_after, passes[i]->name) == 0)) {
            fprintf(print_out, "// IR after %s\n", passes[i]->name);
            tc_model_print(model, print_out);
        }
    }
    return st;
}
