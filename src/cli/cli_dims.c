/* --dim checks of the command-line tools (cli_dims.h). */
#include "cli_dims.h"

#include <string.h>

static bool is_data_input(const tconv_value *v) {
    return !tconv_value_initializer(v);
}

static bool has_dim_param(tconv_value *v, const char *name) {
    for (int a = 0; v && a < tconv_value_rank(v); a++) {
        const char *p = tconv_value_dim_param(v, a);
        if (p && strcmp(p, name) == 0)
            return true;
    }
    return false;
}

/* Whether `name` is the dim_param of some dim of a data input. */
static bool is_dynamic_dim(tconv_graph *g, const char *name) {
    for (size_t i = 0; i < tconv_graph_input_count(g); i++) {
        tconv_value *v = tconv_graph_input(g, i);
        if (is_data_input(v) && has_dim_param(v, name))
            return true;
    }
    return false;
}

/* Whether `name` is the dim_param of a dim of any value of `g` or of its subgraphs (declared in
 * value_info, an output, an input): the local proof takes --dim values for the dims that reach a
 * rewritten node, wherever they are named. */
static bool is_model_dim(tconv_graph *g, const char *name) {
    for (size_t i = 0; i < tconv_graph_input_count(g); i++) {
        if (has_dim_param(tconv_graph_input(g, i), name))
            return true;
    }
    for (size_t i = 0; i < tconv_graph_output_count(g); i++) {
        if (has_dim_param(tconv_graph_output(g, i), name))
            return true;
    }
    for (tconv_node *n = tconv_graph_first_node(g); n; n = tconv_node_next(n)) {
        for (size_t i = 0; i < tconv_node_output_count(n); i++) {
            if (has_dim_param(tconv_node_output(n, i), name))
                return true;
        }
        for (size_t i = 0; i < tconv_node_subgraph_count(n); i++) {
            if (is_model_dim(tconv_node_subgraph(n, i), name))
                return true;
        }
    }
    return false;
}

static bool is_bound(const tc_cli_dim *dims, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(dims[i].name, name) == 0)
            return true;
    }
    return false;
}

/* Prints the dynamic dims of the data inputs, "input 'x': N, W; input 'y': B"; with
 * only_missing, those without a value. Returns how many it printed (counts only when out is
 * NULL). */
static size_t print_dynamic_dims(tconv_graph *g, const tc_cli_dim *dims, size_t n_dims,
                                 bool only_missing, FILE *out) {
    size_t printed = 0;
    for (size_t i = 0; i < tconv_graph_input_count(g); i++) {
        tconv_value *v = tconv_graph_input(g, i);
        size_t in_input = 0;
        for (int a = 0; is_data_input(v) && a < tconv_value_rank(v); a++) {
            if (tconv_value_dim(v, a) >= 0)
                continue;
            const char *p = tconv_value_dim_param(v, a);
            if (only_missing && p && is_bound(dims, n_dims, p))
                continue;
            if (out && !in_input)
                fprintf(out, "%sinput '%s': ", printed ? "; " : "", tconv_value_name(v));
            else if (out)
                fputs(", ", out);
            if (out && p)
                fputs(p, out);
            else if (out)
                fprintf(out, "dim %d (unnamed: cannot be given)", a);
            in_input++;
            printed++;
        }
    }
    return printed;
}

bool tc_cli_dims_check(tconv_model *model, const tc_cli_dim *dims, size_t n_dims, bool need_all,
                       const char *prog, const char *path, FILE *out) {
    tconv_graph *g = tconv_model_graph(model);
    bool ok = true;
    for (size_t i = 0; i < n_dims; i++) {
        if (is_dynamic_dim(g, dims[i].name) || is_model_dim(g, dims[i].name))
            continue;
        fprintf(out, "%s: %s: --dim %s: %s; the dynamic dims of its inputs are: ", prog, path,
                dims[i].name,
                tconv_graph_lookup(g, dims[i].name)
                    ? "that is a value of the model, not a dynamic dim"
                    : "the model has no dynamic dim of that name");
        if (!print_dynamic_dims(g, dims, n_dims, false, out))
            fputs("(none)", out);
        fputc('\n', out);
        ok = false;
    }
    if (!need_all || !ok)
        return ok;
    size_t missing = print_dynamic_dims(g, dims, n_dims, true, NULL);
    if (missing) {
        fprintf(out,
                "%s: %s: give every dynamic dim a value with --dim NAME=VALUE (missing: ", prog,
                path);
        print_dynamic_dims(g, dims, n_dims, true, out);
        fputs(")\n", out);
    }
    return missing == 0;
}
