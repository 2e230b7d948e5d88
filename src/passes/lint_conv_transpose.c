/* Warnings for ConvTranspose nodes whose meaning depends on whose convention a runtime follows
 * (docs/semantics.md, where runtimes disagree). The rewrite follows ONNX; these warnings tell a
 * user when a model that was tuned against onnxruntime would change. */
#include <stdio.h>

#include "passes/conv_transpose_match.h"

static const char *convention_label(tconv_convention c) {
    switch (c) {
    case TCONV_CONVENTION_ONNX:
        return "ONNX";
    case TCONV_CONVENTION_ORT:
        return "onnxruntime 1.30";
    case TCONV_CONVENTION_ORT_LEGACY:
        return "onnxruntime<=1.12";
    }
    return "?";
}

/* Same pads and output sizes (what a runtime computes for the node). */
static bool same_result(const tc_conv_transpose_geometry *a, const tc_conv_transpose_geometry *b) {
    for (int i = 0; i < a->spatial_rank; i++) {
        if (a->pad_begin[i] != b->pad_begin[i] || a->pad_end[i] != b->pad_end[i] ||
            a->out[i] != b->out[i])
            return false;
    }
    return true;
}

/* Appends "<open>v0,v1,...]"; negative values print as "?" when they mean unknown (sizes). */
static size_t append_list(char *buf, size_t size, size_t used, const char *open,
                          const int64_t *values, int n, bool negative_is_unknown) {
    if (used < size)
        used += (size_t)snprintf(buf + used, size - used, "%s", open);
    for (int i = 0; i < n && used < size; i++) {
        if (negative_is_unknown && values[i] < 0)
            used += (size_t)snprintf(buf + used, size - used, "%s?", i ? "," : "");
        else
            used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "",
                                     (long long)values[i]);
    }
    if (used < size)
        used += (size_t)snprintf(buf + used, size - used, "]");
    return used;
}

/* "pads [b0,b1]+[e0,e1] out [o0,o1]" (out sizes "?" where the input size is unknown), or
 * "refuses it" for a convention whose runtime refuses the node. */
static void format_result(const tc_conv_transpose_geometry *g, char *buf, size_t size) {
    if (g->convention_refusal) {
        snprintf(buf, size, "refuses it");
        return;
    }
    size_t used = append_list(buf, size, 0, "pads [", g->pad_begin, g->spatial_rank, false);
    used = append_list(buf, size, used, "+[", g->pad_end, g->spatial_rank, false);
    append_list(buf, size, used, " out [", g->out, g->spatial_rank, true);
}

/* One warning per node whose pads or output size differ between runtimes. */
static void warn_convention_split(const char *where, const tc_conv_transpose_match m[3],
                                  tconv_convention followed, tc_diagnostics *diags) {
    char results[3][200];
    if (followed == TCONV_CONVENTION_ORT && m[1].geometry.convention_refusal)
        followed = TCONV_CONVENTION_ONNX; /* where onnxruntime refuses, --convention ort is ONNX */
    for (int c = 0; c < 3; c++)
        format_result(&m[c].geometry, results[c], sizeof results[c]);
    tc_diagnostics_add(diags,
                       "%s: runtimes resolve this node differently (odd or negative total "
                       "pads): %s %s; %s %s; %s %s; tconv follows %s",
                       where, convention_label(TCONV_CONVENTION_ONNX), results[0],
                       convention_label(TCONV_CONVENTION_ORT), results[1],
                       convention_label(TCONV_CONVENTION_ORT_LEGACY), results[2],
                       convention_label(followed));
}

/* onnxruntime 1.30 refuses the node (docs/semantics.md): the original model does not run
 * there, the rewritten one does. */
static void warn_ort_refusal(const char *where, const tc_conv_transpose_geometry *ort,
                             tconv_convention followed, tc_diagnostics *diags) {
    const char *tail =
        followed == TCONV_CONVENTION_ORT ? "; --convention ort follows ONNX for this node" : "";
    if (ort->convention_refusal)
        tc_diagnostics_add(diags,
                           "%s: onnxruntime 1.30 refuses this node: %s; the rewritten model "
                           "runs there%s",
                           where, ort->convention_refusal, tail);
    else if (ort->convention_refusal_depends_on_size)
        tc_diagnostics_add(diags,
                           "%s: onnxruntime 1.30 refuses this node for input sizes where "
                           "output_shape's total padding is too negative; the rewritten model "
                           "runs there at every size%s",
                           where,
                           followed == TCONV_CONVENTION_ORT
                               ? "; --convention ort follows ONNX at those sizes"
                               : "");
}

static bool any_output_padding(const tc_conv_transpose_attrs *a) {
    for (int i = 0; i < a->spatial_rank; i++) {
        if (a->output_padding[i])
            return true;
    }
    return false;
}

static void warn_attribute_corners(const char *where, const tc_conv_transpose_attrs *a,
                                   tc_diagnostics *diags) {
    bool same = tc_auto_pad_is_same(a->auto_pad);
    if (same && any_output_padding(a) && !a->has_output_shape)
        tc_diagnostics_add(diags,
                           "%s: auto_pad %s with output_padding: ONNX's output is x*stride; "
                           "onnxruntime <= 1.12 shape inference declared x*stride + "
                           "output_padding",
                           where, tc_auto_pad_name(a->auto_pad));
    if (a->has_output_shape && a->auto_pad != TCONV_AUTO_PAD_SAME_UPPER &&
        a->auto_pad != TCONV_AUTO_PAD_SAME_LOWER)
        tc_diagnostics_add(diags,
                           "%s: output_shape with auto_pad %s: ONNX's spec and onnxruntime "
                           ">= 1.14 put an odd extra pad at the beginning, onnxruntime <= "
                           "1.12 and ONNX's Python reference implementation at the end; "
                           "tconv follows the spec",
                           where, tc_auto_pad_name(a->auto_pad));
    if (a->output_shape_has_batch_channel)
        tc_diagnostics_add(diags,
                           "%s: output_shape has N,C in front; only the spatial sizes are "
                           "used",
                           where);
    if (a->has_pads && (same || a->auto_pad == TCONV_AUTO_PAD_VALID || a->has_output_shape))
        tc_diagnostics_add(diags, "%s: pads are ignored because %s is set", where,
                           a->has_output_shape ? "output_shape" : "auto_pad");
}

tconv_status tc_conv_transpose_lint_node_at(tconv_node *node, size_t index,
                                            tconv_convention followed, tc_diagnostics *diagnostics,
                                            tc_error *err) {
    tc_conv_transpose_match m[3];
    static const tconv_convention conventions[3] = {TCONV_CONVENTION_ONNX, TCONV_CONVENTION_ORT,
                                                    TCONV_CONVENTION_ORT_LEGACY};
    tconv_status st = tc_conv_transpose_match_node(node, conventions[0], &m[0], err);
    if (st != TCONV_OK)
        return st;
    char where[256];
    tc_node_describe_at(node, index, where, sizeof where);
    bool others_resolved = true;
    for (int c = 1; c < 3; c++) {
        tc_error ignored;
        if (tc_conv_transpose_match_node(node, conventions[c], &m[c], &ignored) != TCONV_OK)
            others_resolved = false;
    }
    if (others_resolved)
        warn_ort_refusal(where, &m[1].geometry, followed, diagnostics);
    if (others_resolved && m[0].geometry.pads_known &&
        (!same_result(&m[0].geometry, &m[1].geometry) ||
         !same_result(&m[0].geometry, &m[2].geometry)))
        warn_convention_split(where, m, followed, diagnostics);
    warn_attribute_corners(where, &m[0].attrs, diagnostics);
    return TCONV_OK;
}

static tconv_status lint_graph(tconv_graph *graph, void *ctx) {
    const tc_pass_options *options = ctx;
    size_t index = 0;
    for (tconv_node *node = graph->first; node; node = node->next, index++) {
        /* A node the lint cannot resolve is the legalization's to report; the lint only warns. */
        if (tc_is_conv_transpose(node))
            (void)tc_conv_transpose_lint_node_at(node, index, options->convention,
                                                 options->diagnostics, NULL);
        tc_node_for_each_subgraph(node, lint_graph, ctx);
    }
    return TCONV_OK;
}

tconv_status tc_pass_lint_conv_transpose(tconv_graph *graph, const tc_pass_options *options,
                                         tc_error *err) {
    (void)err;
    lint_graph(graph, (void *)options);
    return TCONV_OK;
}
