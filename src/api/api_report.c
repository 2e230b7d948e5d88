/* Public API: the report of a pipeline run (rewrites, warnings, op counts, JSON). */
#include "api/api_internal.h"

#include <stdlib.h>
#include <string.h>

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

/* The op types of before, then those only after (each list is sorted). */
size_t tconv_report_op_type_count(const tconv_report *report) {
    if (!report)
        return 0;
    size_t n = report->before.count;
    for (size_t i = 0; i < report->after.count; i++)
        n += tc_op_counts_get(&report->before, report->after.items[i].op_type) == 0;
    return n;
}

const char *tconv_report_op_type(const tconv_report *report, size_t index) {
    if (!report)
        return NULL;
    if (index < report->before.count)
        return report->before.items[index].op_type;
    index -= report->before.count;
    for (size_t i = 0; i < report->after.count; i++) {
        const char *op = report->after.items[i].op_type;
        if (tc_op_counts_get(&report->before, op) == 0 && index-- == 0)
            return op;
    }
    return NULL;
}

tconv_status tconv_report_write_file(const tconv_report *report, const char *path, char *message,
                                     size_t message_size) {
    tc_error err;
    tc_error_clear(&err);
    char *json = NULL;
    tconv_status st = report && path ? tconv_report_to_json(report, &json) : TCONV_ERR_USAGE;
    if (st == TCONV_OK)
        st = tc_write_file_atomic(path, json, strlen(json), &err);
    else
        tc_error_set(&err, st, "%s: cannot write the report (%s)", path ? path : "(null)",
                     tconv_status_name(st));
    tconv_free(json);
    tc_api_copy_message(message, message_size, err.message);
    return st;
}
