/* Public API: the report of a pipeline run (rewrites, warnings, op counts, JSON). */
#include "api/api_internal.h"

#include <stdlib.h>

tconv_report *tc_api_report_new(void) {
    tconv_report *r = calloc(1, sizeof *r);
    if (r) {
        tc_rewrite_report_init(&r->rewrites);
        tc_diagnostics_init(&r->warnings);
    }
    return r;
}

void tconv_report_free(tconv_report *report) {
    if (!report)
        return;
    tc_rewrite_report_free(&report->rewrites);
    tc_diagnostics_free(&report->warnings);
    tc_op_counts_free(&report->before);
    tc_op_counts_free(&report->after);
    free(report->model_path);
    free(report);
}

static const tc_rewrite_record *record_at(const tconv_report *report, size_t index) {
    return report && index < report->rewrites.count ? &report->rewrites.records[index] : NULL;
}

size_t tconv_report_rewrite_count(const tconv_report *report) {
    return report ? report->rewrites.count : 0;
}

const char *tconv_report_rewritten_node(const tconv_report *report, size_t index) {
    const tc_rewrite_record *r = record_at(report, index);
    return r ? r->node : NULL;
}

const char *tconv_report_old_attributes(const tconv_report *report, size_t index) {
    const tc_rewrite_record *r = record_at(report, index);
    return r ? r->old_attributes : NULL;
}

const char *tconv_report_new_nodes(const tconv_report *report, size_t index) {
    const tc_rewrite_record *r = record_at(report, index);
    return r ? r->new_nodes : NULL;
}

size_t tconv_report_warning_count(const tconv_report *report) {
    return report ? report->warnings.count : 0;
}

const char *tconv_report_warning(const tconv_report *report, size_t index) {
    return report && index < report->warnings.count ? report->warnings.messages[index] : NULL;
}

size_t tconv_report_ops_before(const tconv_report *report, const char *op_type) {
    return report && op_type ? tc_op_counts_get(&report->before, op_type) : 0;
}

size_t tconv_report_ops_after(const tconv_report *report, const char *op_type) {
    return report && op_type ? tc_op_counts_get(&report->after, op_type) : 0;
}

static tconv_status write_report_json(const void *ctx, FILE *out) {
    const tconv_report *r = ctx;
    return tc_rewrite_report_write_json(&r->rewrites, r->model_path, tconv_policy_name(r->policy),
                                        tconv_convention_name(r->convention), &r->before, &r->after,
                                        r->warnings.messages, r->warnings.count, out);
}

tconv_status tconv_report_to_json(const tconv_report *report, char **json) {
    if (json)
        *json = NULL;
    if (!report || !json)
        return TCONV_ERR_USAGE;
    return tc_api_capture_text(write_report_json, report, json);
}
