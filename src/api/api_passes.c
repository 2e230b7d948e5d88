/* Public API: pipelines. A pipeline is configuration only (pass list, options, the caller's own
 * passes); running it resolves the list, runs each pass through the pass manager (which
 * verifies the IR after it) and collects the report. */
#include "api/api_internal.h"
#include "ir/vec.h"

#include <stdlib.h>
#include <string.h>

#include "passes/pass.h"
#include "passes/target.h"

typedef struct custom_pass {
    char *name; /* malloc'd */
    tconv_pass_callback run;
    void *user_data;
} custom_pass;

struct tconv_pipeline {
    char *passes; /* malloc'd comma-separated list */
    tconv_policy policy;
    tconv_convention convention;
    custom_pass *custom;
    size_t n_custom, cap_custom;
    tconv_after_pass_callback after_pass;
    void *after_pass_data;
    tc_target *target; /* malloc'd; NULL: none */
    tc_error last_error;
};

/* One entry of a resolved pass list: a built-in pass or one of the caller's. */
typedef struct pass_step {
    const tc_pass_def *builtin;
    const custom_pass *custom;
} pass_step;

/* ---------------------------------------------------------------- built-in passes and options */

size_t tconv_builtin_pass_count(void) {
    size_t n;
    tc_pass_table(&n);
    return n;
}

const char *tconv_builtin_pass_name(size_t index) {
    size_t n;
    const tc_pass_def *table = tc_pass_table(&n);
    return index < n ? table[index].name : NULL;
}

const char *tconv_builtin_pass_summary(size_t index) {
    size_t n;
    const tc_pass_def *table = tc_pass_table(&n);
    return index < n ? table[index].summary : NULL;
}

/* tconv_policy_name and tconv_convention_name are the pass library's own (they take any value). */

bool tconv_policy_from_name(const char *name, tconv_policy *out) {
    return name && out && tc_policy_parse(name, out);
}

bool tconv_convention_from_name(const char *name, tconv_convention *out) {
    return name && out && tc_convention_parse(name, out);
}

/* ---------------------------------------------------------------- configuration */

tconv_status tconv_pipeline_new(tconv_pipeline **out) {
    if (!out)
        return TCONV_ERR_USAGE;
    *out = NULL;
    tconv_pipeline *p = calloc(1, sizeof *p);
    char *passes = strdup(TCONV_DEFAULT_PASSES);
    if (!p || !passes) {
        free(p);
        free(passes);
        return TCONV_ERR_NOMEM;
    }
    p->passes = passes;
    p->policy = TCONV_POLICY_SAME_OR_ASYMMETRIC;
    p->convention = TCONV_CONVENTION_ONNX;
    *out = p;
    return TCONV_OK;
}

void tconv_pipeline_free(tconv_pipeline *pipeline) {
    if (!pipeline)
        return;
    for (size_t i = 0; i < pipeline->n_custom; i++)
        free(pipeline->custom[i].name);
    free(pipeline->custom);
    free(pipeline->target);
    free(pipeline->passes);
    free(pipeline);
}

const char *tconv_pipeline_last_error(const tconv_pipeline *pipeline) {
    return pipeline ? pipeline->last_error.message : "";
}

tconv_status tconv_pipeline_set_passes(tconv_pipeline *pipeline, const char *pass_list) {
    if (!pipeline)
        return TCONV_ERR_USAGE;
    tc_error_clear(&pipeline->last_error);
    if (!pass_list)
        return tc_error_set(&pipeline->last_error, TCONV_ERR_USAGE,
                            "tconv_pipeline_set_passes: the list is NULL");
    char *copy = strdup(pass_list);
    if (!copy)
        return tc_error_nomem(&pipeline->last_error, "a pass list");
    free(pipeline->passes);
    pipeline->passes = copy;
    return TCONV_OK;
}

tconv_status tconv_pipeline_set_policy(tconv_pipeline *pipeline, tconv_policy policy) {
    if (!pipeline)
        return TCONV_ERR_USAGE;
    tc_error_clear(&pipeline->last_error);
    if (policy != TCONV_POLICY_SAME_OR_ASYMMETRIC && policy != TCONV_POLICY_VALID_ONLY)
        return tc_error_set(&pipeline->last_error, TCONV_ERR_USAGE, "unknown policy %d",
                            (int)policy);
    pipeline->policy = policy;
    return TCONV_OK;
}

tconv_status tconv_pipeline_set_convention(tconv_pipeline *pipeline, tconv_convention convention) {
    if (!pipeline)
        return TCONV_ERR_USAGE;
    tc_error_clear(&pipeline->last_error);
    if (convention != TCONV_CONVENTION_ONNX && convention != TCONV_CONVENTION_ORT &&
        convention != TCONV_CONVENTION_ORT_LEGACY)
        return tc_error_set(&pipeline->last_error, TCONV_ERR_USAGE, "unknown convention %d",
                            (int)convention);
    pipeline->convention = convention;
    return TCONV_OK;
}

/* Installs a parsed target (or with NULL, none). */
static tconv_status install_target(tconv_pipeline *pipeline, tc_target *target) {
    free(pipeline->target);
    pipeline->target = target;
    return TCONV_OK;
}

tconv_status tconv_pipeline_set_target(tconv_pipeline *pipeline, const char *name) {
    if (!pipeline)
        return TCONV_ERR_USAGE;
    tc_error *err = &pipeline->last_error;
    tc_error_clear(err);
    if (!name)
        return install_target(pipeline, NULL);
    tc_target *target = malloc(sizeof *target);
    if (!target)
        return tc_error_nomem(err, "a target");
    tconv_status st = tc_target_builtin(name, target, err);
    if (st != TCONV_OK) {
        free(target);
        return st;
    }
    return install_target(pipeline, target);
}

/* Target files are small: 64 KiB is far above any description. */
#define TARGET_FILE_MAX (64 * 1024)

tconv_status tc_api_target_read_file(const char *path, tc_target *out, tc_error *err) {
    void *text = NULL;
    size_t size = 0;
    tconv_status st = tc_read_file(path, TARGET_FILE_MAX, &text, &size, err);
    if (st == TCONV_OK)
        st = tc_target_parse(text, size, path, out, err);
    free(text);
    return st;
}

tconv_status tconv_pipeline_set_target_file(tconv_pipeline *pipeline, const char *path) {
    if (!pipeline)
        return TCONV_ERR_USAGE;
    tc_error *err = &pipeline->last_error;
    tc_error_clear(err);
    if (!path)
        return tc_error_set(err, TCONV_ERR_USAGE, "tconv_pipeline_set_target_file: no path");
    tc_target *target = malloc(sizeof *target);
    if (!target)
        return tc_error_nomem(err, "a target");
    tconv_status st = tc_api_target_read_file(path, target, err);
    if (st != TCONV_OK) {
        free(target);
        return st;
    }
    return install_target(pipeline, target);
}

static const custom_pass *find_custom(const tconv_pipeline *pipeline, const char *name,
                                      size_t len) {
    for (size_t i = 0; i < pipeline->n_custom; i++) {
        if (strlen(pipeline->custom[i].name) == len &&
            strncmp(pipeline->custom[i].name, name, len) == 0)
            return &pipeline->custom[i];
    }
    return NULL;
}

tconv_status tconv_pipeline_add_pass(tconv_pipeline *pipeline, const char *name,
                                     tconv_pass_callback pass, void *user_data) {
    if (!pipeline)
        return TCONV_ERR_USAGE;
    tc_error *err = &pipeline->last_error;
    tc_error_clear(err);
    if (!name || !*name || !pass || strchr(name, ','))
        return tc_error_set(err, TCONV_ERR_USAGE,
                            "tconv_pipeline_add_pass: needs a pass and a non-empty name "
                            "without ','");
    if (tc_pass_find(name) || find_custom(pipeline, name, strlen(name)) ||
        strcmp(name, "none") == 0)
        return tc_error_set(err, TCONV_ERR_USAGE, "a pass named '%s' exists already", name);
    if (!TC_VEC_RESERVE(pipeline->custom, pipeline->cap_custom, pipeline->n_custom + 1))
        return tc_error_nomem(err, "a pass");
    char *copy = strdup(name);
    if (!copy)
        return tc_error_nomem(err, "a pass name");
    pipeline->custom[pipeline->n_custom++] = (custom_pass){copy, pass, user_data};
    return TCONV_OK;
}

tconv_status tconv_pipeline_set_after_pass(tconv_pipeline *pipeline,
                                           tconv_after_pass_callback callback, void *user_data) {
    if (!pipeline)
        return TCONV_ERR_USAGE;
    tc_error_clear(&pipeline->last_error);
    pipeline->after_pass = callback;
    pipeline->after_pass_data = user_data;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- running */

/* Resolves one name of a pass list (`len` bytes at `name`, not NUL-terminated). */
static tconv_status resolve_one(const tconv_pipeline *pipeline, const char *name, size_t len,
                                pass_step *step, tc_error *err) {
    char buf[128];
    if (len == 0)
        return tc_error_set(err, TCONV_ERR_USAGE, "empty pass name in '%s'", pipeline->passes);
    if (len >= sizeof buf)
        return tc_error_set(err, TCONV_ERR_USAGE, "pass name too long in '%s'", pipeline->passes);
    memcpy(buf, name, len);
    buf[len] = '\0';
    step->custom = find_custom(pipeline, buf, len);
    step->builtin = step->custom ? NULL : tc_pass_find(buf);
    if (!step->custom && !step->builtin)
        return tc_error_set(err, TCONV_ERR_USAGE,
                            "unknown pass '%s' (neither built in nor added to the pipeline)", buf);
    return TCONV_OK;
}

/* Resolves every name of the list before anything runs, so a typo never leaves a half-done
 * model. *steps is malloc'd (count entries). */
static tconv_status resolve_steps(const tconv_pipeline *pipeline, pass_step **steps, size_t *count,
                                  tc_error *err) {
    const char *list = pipeline->passes;
    *steps = NULL;
    *count = 0;
    if (!*list || strcmp(list, "none") == 0)
        return TCONV_OK;
    size_t max = 1;
    for (const char *c = list; *c; c++)
        max += *c == ',';
    /* with a target, lower-for-target follows each legalize-conv-transpose */
    pass_step *out = calloc(pipeline->target ? 2 * max : max, sizeof *out);
    if (!out)
        return tc_error_nomem(err, "the pass list");
    const char *p = list;
    const tc_pass_def *legalize = tc_pass_find("legalize-conv-transpose");
    const tc_pass_def *lower = tc_pass_find("lower-for-target");
    size_t n = 0;
    bool lowers = false;
    for (size_t i = 0; i < max; i++) {
        size_t len = strcspn(p, ",");
        tconv_status st = resolve_one(pipeline, p, len, &out[n], err);
        if (st != TCONV_OK) {
            free(out);
            return st;
        }
        if (pipeline->target && out[n].builtin == legalize && !strstr(list, "lower-for-target"))
            out[++n] = (pass_step){lower, NULL};
        lowers |= out[n].builtin == lower;
        n++;
        p += len + (p[len] == ',');
    }
    if (pipeline->target && !lowers) {
        free(out);
        return tc_error_set(err, TCONV_ERR_USAGE,
                            "target %s: the pass list '%s' has neither legalize-conv-transpose "
                            "nor lower-for-target",
                            pipeline->target->name, list);
    }
    *steps = out;
    *count = n;
    return TCONV_OK;
}

static const char *step_name(const pass_step *step) {
    return step->custom ? step->custom->name : step->builtin->name;
}

/* Runs one of the caller's passes and verifies the IR after it. */
static tconv_status run_custom(const custom_pass *pass, tconv_model *model, tc_error *err) {
    tconv_status st = pass->run(model, pass->user_data);
    if (st != TCONV_OK) {
        if (model->last_error.status == TCONV_OK || !model->last_error.message[0])
            tc_error_set(err, st, "failed: %s", tconv_status_name(st));
        err->status = st;
        return tc_error_prefix(err, st, "pass %s: ", pass->name);
    }
    tc_error_clear(err);
    st = tc_model_verify(model, err);
    if (st != TCONV_OK)
        tc_error_prefix(err, st, "IR invalid after pass %s: ", pass->name);
    return st;
}

static tconv_status run_steps(const tconv_pipeline *pipeline, const pass_step *steps, size_t count,
                              tconv_model *model, tconv_report *report, tc_error *err) {
    tc_pass_options options;
    tc_pass_options_init(&options);
    options.policy = pipeline->policy;
    options.convention = pipeline->convention;
    options.diagnostics = &report->warnings;
    options.report = &report->rewrites;
    options.target = pipeline->target;
    for (size_t i = 0; i < count; i++) {
        tconv_status st = steps[i].custom ? run_custom(steps[i].custom, model, err)
                                          : tc_run_passes(model, steps[i].builtin->name, &options,
                                                          NULL, NULL, err);
        if (st != TCONV_OK)
            return st;
        if (pipeline->after_pass)
            pipeline->after_pass(step_name(&steps[i]), model, pipeline->after_pass_data);
    }
    return TCONV_OK;
}

static tconv_status run_pipeline(const tconv_pipeline *pipeline, tconv_model *model,
                                 tconv_report *report, tc_error *err) {
    pass_step *steps = NULL;
    size_t count = 0;
    tconv_status st = resolve_steps(pipeline, &steps, &count, err);
    if (st == TCONV_OK && (st = tc_model_verify(model, err)) != TCONV_OK)
        tc_error_prefix(err, st, "IR invalid before the pipeline: ");
    if (st == TCONV_OK)
        st = tc_op_counts_collect(model, &report->before, err);
    if (st == TCONV_OK)
        st = run_steps(pipeline, steps, count, model, report, err);
    if (st == TCONV_OK)
        st = tc_op_counts_collect(model, &report->after, err);
    free(steps);
    return st;
}

tconv_status tconv_pipeline_run(const tconv_pipeline *pipeline, tconv_model *model,
                                tconv_report **report) {
    if (report)
        *report = NULL;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!pipeline)
        return tc_api_usage(model, "tconv_pipeline_run: the pipeline is NULL");
    tc_error *err = tc_api_begin(model);
    tconv_report *r = tc_api_report_new();
    if (!r)
        return tc_api_end(model, tc_error_nomem(err, "a report"));
    r->policy = pipeline->policy;
    r->convention = pipeline->convention;
    tconv_status st = model->path && !(r->model_path = strdup(model->path))
                          ? tc_error_nomem(err, "a report")
                          : run_pipeline(pipeline, model, r, err);
    if (st == TCONV_OK && report)
        *report = r;
    else
        tconv_report_free(r);
    return tc_api_end(model, st);
}
