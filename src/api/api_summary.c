/* Public API: the summary of a model that `tconv-import MODEL` prints (tconv_model_format_summary).
 */
#include "api/api_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#include "passes/conv_transpose_match.h"

static void print_conv_transpose_nodes(const tconv_graph *graph, int depth, FILE *out) {
    for (tconv_node *node = graph->first; node; node = node->next) {
        if (tc_is_conv_transpose(node)) {
            char where[256];
            char *attrs = tc_node_attributes_json(node);
            tc_conv_transpose_match m;
            tc_error err;
            bool rewrite =
                tc_conv_transpose_match_node(node, TCONV_CONVENTION_ONNX, &m, &err) == TCONV_OK &&
                tc_conv_transpose_needs_rewrite(&m, TCONV_POLICY_SAME_OR_ASYMMETRIC);
            fprintf(out, "  %*s%s %s%s\n", 2 * depth, "",
                    tc_node_describe(node, where, sizeof where), attrs ? attrs : "{}",
                    rewrite ? "  -> rewrite" : "");
            free(attrs);
        }
        for (size_t i = 0; i < node->n_attrs; i++) {
            const tc_attr *a = &node->attrs[i];
            if (a->type == TCONV_ATTR_GRAPH && a->g)
                print_conv_transpose_nodes(a->g, depth + 1, out);
            for (size_t k = 0; a->type == TCONV_ATTR_GRAPHS && k < a->n; k++)
                print_conv_transpose_nodes(a->graphs[k], depth + 1, out);
        }
    }
}

static void print_op_counts(const tconv_model *model, FILE *out) {
    tc_op_counts counts;
    tc_error err;
    if (tc_op_counts_collect(model, &counts, &err) != TCONV_OK)
        return;
    size_t total = 0;
    for (size_t i = 0; i < counts.count; i++)
        total += counts.items[i].count;
    fprintf(out, "\nnodes:     %zu (", total);
    for (size_t i = 0; i < counts.count; i++)
        fprintf(out, "%s%s %zu", i ? ", " : "", counts.items[i].op_type, counts.items[i].count);
    fputs(")\n", out);
    tc_op_counts_free(&counts);
}

static tconv_status print_summary(const void *ctx, FILE *out) {
    const tconv_model *model = ctx;
    fprintf(out, "model:     %s\n", model->path ? model->path : "-");
    fprintf(out, "ir:        %" PRId64 "\n", model->has_ir_version ? model->ir_version : 0);
    fprintf(out, "producer:  %s %s\n", model->producer_name ? model->producer_name : "-",
            model->producer_version ? model->producer_version : "");
    fputs("opsets:   ", out);
    for (size_t i = 0; i < model->n_opsets; i++) {
        const char *d = model->opsets[i].domain;
        fprintf(out, " %s %" PRId64, d && *d ? d : "ai.onnx", model->opsets[i].version);
    }
    print_op_counts(model, out);
    fputs("ConvTranspose nodes (-> rewrite: the default policy changes it):\n", out);
    print_conv_transpose_nodes(model->graph, 0, out);
    return TCONV_OK;
}

tconv_status tconv_model_format_summary(tconv_model *model, char **text) {
    if (text)
        *text = NULL;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!text)
        return tc_api_usage(model, "tconv_model_format_summary: text is NULL");
    tc_error *err = tc_api_begin(model);
    tconv_status st = tc_api_capture_text(print_summary, model, text);
    if (st != TCONV_OK)
        tc_error_set(err, st, "formatting the summary: %s", tconv_status_name(st));
    return tc_api_end(model, st);
}
