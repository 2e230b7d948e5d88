/* compiler_pass: how a compiler embeds tconv, using only <tconv/tconv.h>.
 *
 * It loads a model, adds a tiny pass of its own ("relu-to-clip": lowers Relu to Clip(x, 0) for a
 * backend that has no Relu), runs it between tconv's passes:
 *     shape-infer, relu-to-clip, legalize-conv-transpose, dce
 * then checks the result against the original model on seeded random inputs and saves it.
 *
 *   usage: compiler_pass IN.onnx OUT.onnx
 *   exit:  0 ok, 1 the converted model computes something else (nothing written), 2 bad input
 */
#include <stdio.h>
#include <string.h>

#include <tconv/tconv.h>

enum { EXIT_OK = 0, EXIT_MISMATCH = 1, EXIT_BAD_INPUT = 2 };

typedef struct relu_to_clip_stats {
    size_t lowered;
} relu_to_clip_stats;

/* Clip(x, 0) for one Relu: before Clip-11 the bound is an attribute, from Clip-11 an input (one
 * shared scalar initializer, `*zero`, made on first use). */
static tconv_status add_clip_for(tconv_node *relu, tconv_value **zero, tconv_node **out) {
    tconv_graph *graph = tconv_node_graph(relu);
    tconv_model *model = tconv_graph_model(graph);
    tconv_status st = tconv_graph_new_node(graph, "Clip", NULL, tconv_node_name(relu), relu, out);
    if (st == TCONV_OK)
        st = tconv_node_append_input(*out, tconv_node_input(relu, 0));
    if (st != TCONV_OK || tconv_model_opset_version(model, "") < 11)
        return st == TCONV_OK ? tconv_attr_set_float(*out, "min", 0.0f) : st;
    if (!*zero) {
        static const float zero_value = 0.0f;
        st = tconv_graph_new_initializer(tconv_model_graph(model), "clip_zero", TCONV_DTYPE_FLOAT,
                                         0, NULL, &zero_value, sizeof zero_value, zero);
    }
    return st == TCONV_OK ? tconv_node_append_input(*out, *zero) : st;
}

/* The pass: every float Relu of the main graph becomes a Clip that defines the Relu's output
 * value, so names, graph outputs and consumers stay as they were. */
static tconv_status relu_to_clip(tconv_model *model, void *user_data) {
    relu_to_clip_stats *stats = user_data;
    tconv_value *zero = NULL;
    tconv_node *next;
    for (tconv_node *node = tconv_graph_first_node(tconv_model_graph(model)); node; node = next) {
        next = tconv_node_next(node);
        tconv_value *x = tconv_node_input(node, 0);
        if (strcmp(tconv_node_op_type(node), "Relu") != 0 || strcmp(tconv_node_domain(node), "") ||
            tconv_value_dtype(x) != TCONV_DTYPE_FLOAT)
            continue;
        tconv_value *y = tconv_node_output(node, 0);
        tconv_node *clip = NULL;
        tconv_status st = add_clip_for(node, &zero, &clip);
        if (st == TCONV_OK)
            st = tconv_node_remove(node); /* y loses its producer ... */
        if (st == TCONV_OK)
            st = tconv_node_append_output(clip, y); /* ... and gets the Clip */
        if (st != TCONV_OK)
            return st; /* the message is in the model already */
        stats->lowered++;
    }
    return TCONV_OK;
}

static tconv_status legalize(tconv_model *model, relu_to_clip_stats *stats, tconv_report **report) {
    tconv_pipeline *pipeline = NULL;
    tconv_status st = tconv_pipeline_new(&pipeline);
    if (st == TCONV_OK)
        st = tconv_pipeline_add_pass(pipeline, "relu-to-clip", relu_to_clip, stats);
    if (st == TCONV_OK)
        st = tconv_pipeline_set_passes(pipeline,
                                       "shape-infer,relu-to-clip,legalize-conv-transpose,dce");
    if (st != TCONV_OK) {
        fprintf(stderr, "compiler_pass: pipeline: %s\n", tconv_pipeline_last_error(pipeline));
    } else if ((st = tconv_pipeline_run(pipeline, model, report)) != TCONV_OK) {
        fprintf(stderr, "compiler_pass: %s\n", tconv_model_last_error(model));
    }
    tconv_pipeline_free(pipeline);
    return st;
}

static void print_report(const tconv_report *report, const relu_to_clip_stats *stats) {
    printf("relu-to-clip: lowered %zu Relu node(s)\n", stats->lowered);
    printf("legalize-conv-transpose: rewrote %zu ConvTranspose node(s)\n",
           tconv_report_rewrite_count(report));
    for (size_t i = 0; i < tconv_report_rewrite_count(report); i++)
        printf("  %s %s\n", tconv_report_rewritten_node(report, i),
               tconv_report_old_attributes(report, i));
    static const char *const ops[] = {"ConvTranspose", "Slice", "Pad", "Relu", "Clip"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        printf("  %-13s %zu -> %zu\n", ops[i], tconv_report_ops_before(report, ops[i]),
               tconv_report_ops_after(report, ops[i]));
    for (size_t i = 0; i < tconv_report_warning_count(report); i++)
        printf("warning: %s\n", tconv_report_warning(report, i));
}

/* What tconv-import --check 3 does: both models on the same seeded inputs, every output. */
static int check(tconv_model *original, tconv_model *converted) {
    tconv_comparison *comparison = NULL;
    tconv_status st = tconv_comparison_new(&comparison);
    if (st == TCONV_OK)
        st = tconv_comparison_set_runs(comparison, 3);
    if (st == TCONV_OK)
        st = tconv_comparison_run(comparison, original, converted);
    for (size_t i = 0; i < tconv_comparison_output_count(comparison); i++)
        printf("check: output '%s': max_abs_err=%.3g max_rel_err=%.3g: %s\n",
               tconv_comparison_output_name(comparison, i),
               tconv_comparison_max_abs_error(comparison, i),
               tconv_comparison_max_rel_error(comparison, i),
               tconv_comparison_output_matches(comparison, i) ? "ok" : "MISMATCH");
    if (st != TCONV_OK)
        fprintf(stderr, "compiler_pass: check: %s\n",
                comparison ? tconv_comparison_last_error(comparison) : tconv_status_name(st));
    tconv_comparison_free(comparison);
    return st == TCONV_OK ? EXIT_OK : st == TCONV_ERR_MISMATCH ? EXIT_MISMATCH : EXIT_BAD_INPUT;
}

static int convert(tconv_model *model, const char *out_path) {
    tconv_model *original = NULL;
    tconv_report *report = NULL;
    relu_to_clip_stats stats = {0};
    int rc = EXIT_BAD_INPUT;
    if (tconv_model_clone(model, &original) != TCONV_OK)
        fprintf(stderr, "compiler_pass: %s\n", tconv_model_last_error(model));
    else if (legalize(model, &stats, &report) == TCONV_OK) {
        print_report(report, &stats);
        rc = check(original, model);
    }
    if (rc == EXIT_OK && tconv_model_write_file(model, out_path) != TCONV_OK) {
        fprintf(stderr, "compiler_pass: %s\n", tconv_model_last_error(model));
        rc = EXIT_BAD_INPUT;
    } else if (rc == EXIT_OK) {
        printf("wrote %s\n", out_path);
    }
    tconv_report_free(report);
    tconv_model_free(original);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: compiler_pass IN.onnx OUT.onnx\n");
        return EXIT_BAD_INPUT;
    }
    printf("tconv %s\n", tconv_version());
    if (tconv_version_number() != TCONV_VERSION_NUMBER)
        fprintf(stderr, "compiler_pass: warning: built with tconv %d.%d.%d headers\n",
                TCONV_VERSION_MAJOR, TCONV_VERSION_MINOR, TCONV_VERSION_PATCH);
    char message[1024];
    tconv_model *model = NULL;
    if (tconv_model_read_file(argv[1], NULL, &model, message, sizeof message) != TCONV_OK) {
        fprintf(stderr, "compiler_pass: %s\n", message);
        return EXIT_BAD_INPUT;
    }
    int rc = convert(model, argv[2]);
    tconv_model_free(model);
    return rc;
}
