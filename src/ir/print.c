/* Text form of the IR for --print-ir and debugging. Only reads the IR; output errors are
 * reported once, at the end, through ferror. */
#include "ir/print.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#define PRINT_MAX_LIST 16 /* longer attribute lists are cut with "..." */

static void print_indent(FILE *out, int depth) {
    for (int i = 0; i < depth; i++)
        fputs("  ", out);
}

static void print_quoted(FILE *out, const char *data, size_t len) {
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (isprint(c))
            fputc(c, out);
        else
            fprintf(out, "\\x%02x", c);
    }
    fputc('"', out);
}

static void print_type(FILE *out, const tc_type *type) {
    if (type->kind == TCONV_TYPE_OTHER) {
        fputs(": (non-tensor)", out);
        return;
    }
    if (type->kind != TCONV_TYPE_TENSOR)
        return;
    fprintf(out, ": %s", tconv_dtype_name(type->dtype));
    if (type->rank < 0)
        return;
    fputc('[', out);
    for (int i = 0; i < type->rank; i++) {
        const tc_dim *d = &type->dims[i];
        if (i)
            fputc(',', out);
        if (d->kind == TCONV_DIM_STATIC)
            fprintf(out, "%" PRId64, d->value);
        else if (d->kind == TCONV_DIM_SYMBOLIC && d->param)
            fputs(d->param, out);
        else
            fputc('?', out);
    }
    fputc(']', out);
}

static void print_value(FILE *out, const tconv_value *v, bool with_type) {
    if (!v) {
        fputs("_", out); /* omitted optional input or output */
        return;
    }
    fprintf(out, "%%%s", v->name ? v->name : "");
    if (with_type)
        print_type(out, &v->type);
}

static void print_value_list(FILE *out, tconv_value *const *values, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", out);
        print_value(out, values[i], true);
    }
}

static void print_value_infos(FILE *out, const tc_value_info *list, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", out);
        print_value(out, list[i].value, true);
    }
}

static void print_tensor_summary(FILE *out, const tconv_tensor *t) {
    if (!t) {
        fputs("<no tensor>", out);
        return;
    }
    fprintf(out, "<tensor %s[", tconv_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++)
        fprintf(out, i ? ",%" PRId64 : "%" PRId64, t->dims[i]);
    fputs("]>", out);
}

static void print_graph_ref(FILE *out, const tconv_graph *g) {
    fprintf(out, "<graph '%s'>", g && g->name ? g->name : "");
}

static void print_list_end(FILE *out, size_t n) {
    fputs(n > PRINT_MAX_LIST ? ", ...]" : "]", out);
}

static void print_attr_list(FILE *out, const tc_attr *a) {
    size_t shown = a->n < PRINT_MAX_LIST ? a->n : PRINT_MAX_LIST;
    fputc('[', out);
    for (size_t k = 0; k < shown; k++) {
        if (k)
            fputs(", ", out);
        switch (a->type) {
        case TCONV_ATTR_FLOATS:
            fprintf(out, "%g", (double)a->floats[k]);
            break;
        case TCONV_ATTR_INTS:
            fprintf(out, "%" PRId64, a->ints[k]);
            break;
        case TCONV_ATTR_STRINGS:
            print_quoted(out, (const char *)a->strings[k].data, a->strings[k].len);
            break;
        case TCONV_ATTR_TENSORS:
            print_tensor_summary(out, a->tensors[k]);
            break;
        case TCONV_ATTR_GRAPHS:
            print_graph_ref(out, a->graphs[k]);
            break;
        default:
            break;
        }
    }
    print_list_end(out, a->n);
}

static void print_attr_value(FILE *out, const tc_attr *a) {
    switch (a->type) {
    case TCONV_ATTR_FLOAT:
        fprintf(out, "%g", (double)a->f);
        break;
    case TCONV_ATTR_INT:
        fprintf(out, "%" PRId64, a->i);
        break;
    case TCONV_ATTR_STRING:
        print_quoted(out, (const char *)a->s.data, a->s.len);
        break;
    case TCONV_ATTR_TENSOR:
        print_tensor_summary(out, a->t);
        break;
    case TCONV_ATTR_GRAPH:
        print_graph_ref(out, a->g);
        break;
    case TCONV_ATTR_FLOATS:
    case TCONV_ATTR_INTS:
    case TCONV_ATTR_STRINGS:
    case TCONV_ATTR_TENSORS:
    case TCONV_ATTR_GRAPHS:
        print_attr_list(out, a);
        break;
    default:
        fprintf(out, "<%s>", tconv_attr_type_name(a->type));
        break;
    }
}

static void print_attrs(FILE *out, const tconv_node *node) {
    if (!node->n_attrs)
        return;
    fputs(" {", out);
    for (size_t i = 0; i < node->n_attrs; i++) {
        fprintf(out, "%s%s=", i ? ", " : "", node->attrs[i].name ? node->attrs[i].name : "");
        print_attr_value(out, &node->attrs[i]);
    }
    fputc('}', out);
}

static void print_graph_at(FILE *out, const tconv_graph *graph, const char *keyword, int depth);

static void print_subgraphs(FILE *out, const tconv_node *node, int depth) {
    for (size_t i = 0; i < node->n_attrs; i++) {
        const tc_attr *a = &node->attrs[i];
        if (a->type == TCONV_ATTR_GRAPH && a->g)
            print_graph_at(out, a->g, a->name, depth + 1);
        for (size_t k = 0; a->type == TCONV_ATTR_GRAPHS && k < a->n; k++) {
            if (a->graphs[k])
                print_graph_at(out, a->graphs[k], a->name, depth + 1);
        }
    }
}

static void print_node(FILE *out, const tconv_node *node, int depth) {
    print_indent(out, depth);
    if (node->n_outputs) {
        print_value_list(out, node->outputs, node->n_outputs);
        fputs(" = ", out);
    }
    if (!tc_node_is_onnx_domain(node))
        fprintf(out, "%s.", node->domain);
    fprintf(out, "%s(", node->op_type ? node->op_type : "");
    print_value_list(out, node->inputs, node->n_inputs);
    fputc(')', out);
    print_attrs(out, node);
    if (node->name && *node->name)
        fprintf(out, "  # %s", node->name);
    fputc('\n', out);
    print_subgraphs(out, node, depth);
}

static void print_graph_at(FILE *out, const tconv_graph *graph, const char *keyword, int depth) {
    print_indent(out, depth);
    fprintf(out, "%s '%s'(", keyword, graph->name ? graph->name : "");
    print_value_infos(out, graph->inputs, graph->n_inputs);
    fputs(") -> (", out);
    print_value_infos(out, graph->outputs, graph->n_outputs);
    fputs(") {\n", out);
    for (size_t i = 0; i < graph->n_initializers; i++) {
        print_indent(out, depth + 1);
        fputs("initializer ", out);
        if (graph->initializers[i]->value)
            print_value(out, graph->initializers[i]->value, true);
        fputc('\n', out);
    }
    for (const tconv_node *n = graph->first; n; n = n->next)
        print_node(out, n, depth + 1);
    print_indent(out, depth);
    fputs("}\n", out);
}

static void print_model_header(FILE *out, const tconv_model *model) {
    fputs("model", out);
    if (model->has_ir_version)
        fprintf(out, " ir_version=%" PRId64, model->ir_version);
    if (model->producer_name) {
        fputs(" producer=", out);
        print_quoted(out, model->producer_name, strlen(model->producer_name));
    }
    fputs(" opsets={", out);
    for (size_t i = 0; i < model->n_opsets; i++) {
        const tc_opset *op = &model->opsets[i];
        fprintf(out, "%s%s:%" PRId64, i ? ", " : "",
                op->domain && *op->domain ? op->domain : "ai.onnx", op->version);
    }
    fputs("}\n", out);
}

tconv_status tc_model_print(const tconv_model *model, FILE *out) {
    print_model_header(out, model);
    if (model->graph)
        print_graph_at(out, model->graph, "graph", 0);
    for (size_t i = 0; i < model->n_functions; i++) {
        const tc_function *fn = model->functions[i];
        char keyword[256];
        snprintf(keyword, sizeof keyword, "function %s", fn->domain ? fn->domain : "");
        if (fn->body)
            print_graph_at(out, fn->body, keyword, 0);
    }
    return ferror(out) ? TCONV_ERR_IO : TCONV_OK;
}
