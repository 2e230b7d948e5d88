#include "passes/rewrite_report.h"
#include "ir/vec.h"

#include <stdlib.h>
#include <string.h>

#include "ir/strbuf.h"

void tc_rewrite_report_init(tc_rewrite_report *report) {
    report->records = NULL;
    report->count = report->capacity = 0;
}

void tc_rewrite_report_free(tc_rewrite_report *report) {
    for (size_t i = 0; i < report->count; i++) {
        free(report->records[i].node);
        free(report->records[i].old_attributes);
        free(report->records[i].new_nodes);
        free(report->records[i].new_ids);
    }
    free(report->records);
    tc_rewrite_report_init(report);
}

static void append_attr_value(tc_strbuf *sb, const tc_attr *a) {
    switch (a->type) {
    case TCONV_ATTR_INT:
        tc_strbuf_append_int(sb, (long long)a->i);
        break;
    case TCONV_ATTR_FLOAT:
        tc_strbuf_appendf(sb, "%.9g", (double)a->f);
        break;
    case TCONV_ATTR_STRING:
        tc_strbuf_append_json_string(sb, (const char *)a->s.data, a->s.len);
        break;
    case TCONV_ATTR_INTS:
        tc_strbuf_append(sb, "[");
        for (size_t k = 0; k < a->n; k++) {
            if (k)
                tc_strbuf_append(sb, ", ");
            tc_strbuf_append_int(sb, (long long)a->ints[k]);
        }
        tc_strbuf_append(sb, "]");
        break;
    case TCONV_ATTR_FLOATS:
        tc_strbuf_append(sb, "[");
        for (size_t k = 0; k < a->n; k++)
            tc_strbuf_appendf(sb, "%s%.9g", k ? ", " : "", (double)a->floats[k]);
        tc_strbuf_append(sb, "]");
        break;
    default: /* tensors, graphs, ...: their kind is enough for a report */
        tc_strbuf_appendf(sb, "\"<%s>\"", tconv_attr_type_name(a->type));
        break;
    }
}

char *tc_node_attributes_json(const tconv_node *node) {
    tc_strbuf sb;
    tc_strbuf_init(&sb);
    tc_strbuf_append(&sb, "{");
    for (size_t i = 0; i < node->n_attrs; i++) {
        const tc_attr *a = &node->attrs[i];
        if (i)
            tc_strbuf_append(&sb, ", ");
        const char *name = a->name ? a->name : "";
        tc_strbuf_append_json_string(&sb, name, strlen(name));
        tc_strbuf_append(&sb, ": ");
        append_attr_value(&sb, a);
    }
    tc_strbuf_append(&sb, "}");
    if (sb.failed) {
        tc_strbuf_free(&sb);
        return NULL;
    }
    return tc_strbuf_take(&sb);
}

static void append_value_names(tc_strbuf *sb, tconv_value *const *values, size_t n) {
    tc_strbuf_append(sb, "[");
    for (size_t i = 0; i < n; i++) {
        const char *name = values[i] ? values[i]->name : "";
        if (i)
            tc_strbuf_append(sb, ", ");
        tc_strbuf_append_json_string(sb, name, strlen(name));
    }
    tc_strbuf_append(sb, "]");
}

char *tc_node_json(const tconv_node *node) {
    char *attrs = tc_node_attributes_json(node);
    if (!attrs)
        return NULL;
    tc_strbuf sb;
    tc_strbuf_init(&sb);
    const char *name = node->name ? node->name : "";
    tc_strbuf_append(&sb, "{\"name\": ");
    tc_strbuf_append_json_string(&sb, name, strlen(name));
    tc_strbuf_append(&sb, ", \"op_type\": ");
    tc_strbuf_append_json_string(&sb, node->op_type, strlen(node->op_type));
    tc_strbuf_append(&sb, ", \"inputs\": ");
    append_value_names(&sb, node->inputs, node->n_inputs);
    tc_strbuf_append(&sb, ", \"outputs\": ");
    append_value_names(&sb, node->outputs, node->n_outputs);
    tc_strbuf_append(&sb, ", \"attributes\": ");
    tc_strbuf_append(&sb, attrs);
    tc_strbuf_append(&sb, "}");
    free(attrs);
    if (sb.failed) {
        tc_strbuf_free(&sb);
        return NULL;
    }
    return tc_strbuf_take(&sb);
}

tconv_status tc_rewrite_report_add(tc_rewrite_report *report, const char *node_path,
                                   uint64_t node_id, char *old_attributes,
                                   tconv_node *const *new_nodes, size_t n_new_nodes,
                                   tc_error *err) {
    tc_strbuf nodes;
    tc_strbuf_init(&nodes);
    tc_strbuf_append(&nodes, "[");
    for (size_t i = 0; i < n_new_nodes; i++) {
        char *json = tc_node_json(new_nodes[i]);
        if (!json) {
            nodes.failed = true;
            break;
        }
        if (i)
            tc_strbuf_append(&nodes, ", ");
        tc_strbuf_append(&nodes, json);
        free(json);
    }
    tc_strbuf_append(&nodes, "]");
    char *name = strdup(node_path);
    uint64_t *ids = calloc(n_new_nodes + 1, sizeof *ids);
    for (size_t i = 0; ids && i < n_new_nodes; i++)
        ids[i] = new_nodes[i]->id;
    bool room = TC_VEC_RESERVE(report->records, report->capacity, report->count + 1);
    if (!name || !ids || nodes.failed || !old_attributes || !room) {
        free(ids);
        free(name);
        free(old_attributes);
        tc_strbuf_free(&nodes);
        return tc_error_nomem(err, "the rewrite report");
    }
    tc_rewrite_record *rec = &report->records[report->count++];
    rec->node = name;
    rec->node_id = node_id;
    rec->old_attributes = old_attributes;
    rec->new_nodes = tc_strbuf_take(&nodes);
    rec->new_ids = ids;
    rec->n_new = n_new_nodes;
    return TCONV_OK;
}

tconv_status tc_rewrite_report_extend(tc_rewrite_report *report, const char *lowered_path,
                                      uint64_t lowered_id, char *old_attributes,
                                      tconv_node *const *new_nodes, size_t n_new_nodes,
                                      tc_error *err) {
    tc_rewrite_record *rec = NULL;
    for (size_t r = report->count; r-- > 0 && !rec;) {
        for (size_t i = 0; i < report->records[r].n_new && !rec; i++) {
            if (report->records[r].new_ids[i] == lowered_id)
                rec = &report->records[r];
        }
    }
    const tconv_graph *graph = NULL; /* a node of the list may have been removed since */
    for (size_t i = 0; i < n_new_nodes && !graph; i++)
        graph = new_nodes[i]->prev || new_nodes[i]->next ? new_nodes[i]->graph : NULL;
    for (size_t i = 0; i < n_new_nodes && !graph; i++)
        graph = new_nodes[i]->graph;
    size_t cap = (rec ? rec->n_new : 0) + n_new_nodes, n = 0;
    tconv_node **all = calloc(cap ? cap : 1, sizeof *all);
    if (!all) {
        free(old_attributes);
        return tc_error_nomem(err, "the rewrite report");
    }
    /* the union, in graph order (the local proof runs the chain in the order given) */
    for (tconv_node *node = graph ? graph->first : NULL; node && n < cap; node = node->next) {
        bool member = false;
        for (size_t i = 0; i < n_new_nodes && !member; i++)
            member = new_nodes[i] == node;
        for (size_t i = 0; rec && i < rec->n_new && !member; i++)
            member = rec->new_ids[i] == node->id;
        if (member)
            all[n++] = node;
    }
    if (!rec) {
        tconv_status st =
            tc_rewrite_report_add(report, lowered_path, lowered_id, old_attributes, all, n, err);
        free(all);
        return st;
    }
    free(old_attributes);
    /* a fresh record for the union, moved over the old one (which keeps its place) */
    size_t index = (size_t)(rec - report->records); /* adding may move the records */
    char *attrs = strdup(rec->old_attributes ? rec->old_attributes : "{}");
    char *name = strdup(rec->node);
    tconv_status st = name ? tc_rewrite_report_add(report, name, rec->node_id, attrs, all, n, err)
                           : (free(attrs), tc_error_nomem(err, "the rewrite report"));
    free(name);
    free(all);
    if (st != TCONV_OK)
        return st;
    tc_rewrite_record fresh = report->records[--report->count];
    tc_rewrite_record *old = &report->records[index];
    free(old->new_ids);
    free(old->new_nodes);
    free(fresh.node);
    fresh.node = old->node;
    free(fresh.old_attributes);
    fresh.old_attributes = old->old_attributes;
    *old = fresh;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- op counts */

static int compare_op_count(const void *a, const void *b) {
    return strcmp(((const tc_op_count *)a)->op_type, ((const tc_op_count *)b)->op_type);
}

typedef struct op_count_walk {
    tc_op_counts *counts;
    size_t cap_items, cap_names; /* of counts->items and counts->names */
    bool failed;
} op_count_walk;

static void count_op(op_count_walk *w, const char *op_type) {
    tc_op_counts *c = w->counts;
    for (size_t i = 0; i < c->count; i++) {
        if (strcmp(c->items[i].op_type, op_type) == 0) {
            c->items[i].count++;
            return;
        }
    }
    if (!TC_VEC_RESERVE(c->items, w->cap_items, c->count + 1) ||
        !TC_VEC_RESERVE(c->names, w->cap_names, c->count + 1)) {
        w->failed = true;
        return;
    }
    char *name = malloc(strlen(op_type) + 1);
    if (!name) {
        w->failed = true;
        return;
    }
    strcpy(name, op_type);
    c->names[c->count] = name;
    c->items[c->count].op_type = name;
    c->items[c->count].count = 1;
    c->count++;
}

static tconv_status count_graph(tconv_graph *graph, void *ctx) {
    for (tconv_node *n = graph->first; n; n = n->next) {
        count_op(ctx, n->op_type);
        tc_node_for_each_subgraph(n, count_graph, ctx);
    }
    return TCONV_OK;
}

tconv_status tc_op_counts_collect(const tconv_model *model, tc_op_counts *out, tc_error *err) {
    memset(out, 0, sizeof *out);
    op_count_walk w = {out, 0, 0, false};
    count_graph(model->graph, &w);
    if (w.failed) {
        tc_op_counts_free(out);
        return tc_error_nomem(err, "op counts");
    }
    if (out->count)
        qsort(out->items, out->count, sizeof *out->items, compare_op_count);
    return TCONV_OK;
}

void tc_op_counts_free(tc_op_counts *counts) {
    for (size_t i = 0; i < counts->count; i++)
        free(counts->names[i]);
    free(counts->names);
    free(counts->items);
    memset(counts, 0, sizeof *counts);
}

size_t tc_op_counts_get(const tc_op_counts *counts, const char *op_type) {
    for (size_t i = 0; i < counts->count; i++) {
        if (strcmp(counts->items[i].op_type, op_type) == 0)
            return counts->items[i].count;
    }
    return 0;
}

static void write_counts(FILE *out, const tc_op_counts *counts) {
    fputc('{', out);
    for (size_t i = 0; counts && i < counts->count; i++)
        fprintf(out, "%s\"%s\": %zu", i ? ", " : "", counts->items[i].op_type,
                counts->items[i].count);
    fputc('}', out);
}

static void write_json_string(FILE *out, const char *s) {
    tc_strbuf sb;
    tc_strbuf_init(&sb);
    tc_strbuf_append_json_string(&sb, s ? s : "", s ? strlen(s) : 0);
    fputs(tc_strbuf_str(&sb), out);
    tc_strbuf_free(&sb);
}

tconv_status tc_rewrite_report_write_json(const tc_rewrite_report *report, const char *model_path,
                                          const char *policy, const char *convention,
                                          const tc_op_counts *before, const tc_op_counts *after,
                                          char *const *warnings, size_t n_warnings, FILE *out) {
    fputs("{\n  \"model\": ", out);
    write_json_string(out, model_path);
    fputs(",\n  \"policy\": ", out);
    write_json_string(out, policy);
    fputs(",\n  \"convention\": ", out);
    write_json_string(out, convention);
    fputs(",\n  \"rewritten\": [", out);
    for (size_t i = 0; i < report->count; i++) {
        const tc_rewrite_record *r = &report->records[i];
        fprintf(out, "%s\n    {\"node\": ", i ? "," : "");
        write_json_string(out, r->node);
        fprintf(out, ",\n     \"old_attributes\": %s,\n     \"new_nodes\": %s}", r->old_attributes,
                r->new_nodes);
    }
    fputs(report->count ? "\n  ],\n  \"ops_before\": " : "],\n  \"ops_before\": ", out);
    write_counts(out, before);
    fputs(",\n  \"ops_after\": ", out);
    write_counts(out, after);
    fputs(",\n  \"warnings\": [", out);
    for (size_t i = 0; i < n_warnings; i++) {
        fputs(i ? ", " : "", out);
        write_json_string(out, warnings[i]);
    }
    fputs("]\n}\n", out);
    return ferror(out) ? TCONV_ERR_IO : TCONV_OK;
}
