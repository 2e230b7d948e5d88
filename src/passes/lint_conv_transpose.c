/* Warnings for ConvTranspose nodes whose meaning depends on whose convention a runtime follows
 * (DESIGN.md section 1, table of disagreements). The rewrite follows ONNX; these warnings tell a
 * user when a model that was tuned against onnxruntime would change. */
#include <stdio.h>

#include "passes/conv_transpose_match.h"

static const char *convention_label(tconv_convention c) {
    switch (c) {
    case TCONV_CONVENTION_ONNX:
        return "ONNX";
    case TCONV_CONVENTION_ORT:
        return "onnxruntime>=1.14";
    case TCONV_CONVENTION_ORT_LEGACY:
        return "onnxruntime<=1.12";
    }
    return "?";
}

static bool same_pads(const tc_conv_transpose_geometry *a, const tc_conv_transpose_geometry *b) {
    for (int i = 0; i < a->spatial_rank; i++) {
        if (a->pad_begin[i] != b->pad_begin[i] || a->pad_end[i] != b->pad_end[i])
            return false;
    }
    return true;
}

/* "[b0,b1]+[e0,e1]": begin pads then end pads, per spatial axis. */
static void format_pads(const tc_conv_transpose_geometry *g, char *buf, size_t size) {
    size_t used = 0;
    for (int side = 0; side < 2; side++) {
        const int64_t *pads = side ? g->pad_end : g->pad_begin;
        used += (size_t)snprintf(buf + used, size - used, side ? "+[" : "[");
        for (int i = 0; i < g->spatial_rank && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "",
                                     (long long)pads[i]);
        if (used < size)
            used += (size_t)snprintf(buf + used, size - used, "]");
        if (used >= size)
            return;
    }
}

/* One warning per node: the pads each convention would use (begin+end per axis). */
static void warn_convention_split(const char *where, const tc_conv_transpose_match m[3],
                                  tc_diagnostics *diags) {
    char pads[3][160];
    for (int c = 0; c < 3; c++)
        format_pads(&m[c].geometry, pads[c], sizeof pads[c]);
    tc_diagnostics_add(diags,
                       "%s: odd or negative total pads are split differently by runtimes: "
                       "%s pads %s, %s %s, %s %s; tconv follows ONNX",
                       where, convention_label(TCONV_CONVENTION_ONNX), pads[0],
                       convention_label(TCONV_CONVENTION_ORT), pads[1],
                       convention_label(TCONV_CONVENTION_ORT_LEGACY), pads[2]);
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
                           "%s: auto_pad %s with output_padding: the output is x*stride; "
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
                                            tc_diagnostics *diagnostics, tc_error *err) {
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
    if (others_resolved && m[0].geometry.pads_known &&
        (!same_pads(&m[0].geometry, &m[1].geometry) || !same_pads(&m[0].geometry, &m[2].geometry)))
        warn_convention_split(where, m, diagnostics);
    warn_attribute_corners(where, &m[0].attrs, diagnostics);
    return TCONV_OK;
}

static tconv_status lint_graph(tconv_graph *graph, void *ctx) {
    const tc_pass_options *options = ctx;
    size_t index = 0;
    for (tconv_node *node = graph->first; node; node = node->next, index++) {
        /* A node the lint cannot resolve is the legalization's to report; the lint only warns. */
        if (tc_is_conv_transpose(node))
            (void)tc_conv_transpose_lint_node_at(node, index, options->diagnostics, NULL);
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
