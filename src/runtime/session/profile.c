/* The runtime's profiler (profile.h): events in one growing array, their shape lists as JSON
 * text in one buffer, the trace and the summary written from them at the end. */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "runtime/session/profile.h"
#include "ir/vec.h"
#include "runtime/compute/compute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ir/strbuf.h"

typedef struct profile_event {
    const tconv_node *node;       /* NULL: a run ("model_run") */
    const tconv_node *fused_into; /* the node whose kernel computed this one's result */
    int64_t start_ns, dur_ns;     /* from the profile's origin */
    int threads;
    /* Fused steps hang off their producer's event, in run order: first_fused/next_fused. */
    int64_t first_fused, last_fused, next_fused;
    size_t in_off, in_len, out_off, out_len; /* shape lists in the profile's text */
} profile_event;

struct tc_profile {
    int64_t origin_ns;
    profile_event *events;
    size_t n, cap;
    size_t dropped;
    int64_t current; /* the innermost step running */
    int64_t run;     /* the run in progress, or -1 */
    tc_strbuf text;  /* shape lists */
    long pid, tid;   /* the process and the thread that made the profile */
};

tc_profile *tc_profile_create(void) {
    tc_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->origin_ns = tc_parallel_clock_ns();
    p->current = -1;
    p->run = -1;
    tc_strbuf_init(&p->text);
    p->pid = (long)getpid();
    p->tid = (long)syscall(SYS_gettid);
    return p;
}

void tc_profile_free(tc_profile *profile) {
    if (!profile)
        return;
    free(profile->events);
    tc_strbuf_free(&profile->text);
    free(profile);
}

/* A new event starting now, or -1 (dropped past the cap, or out of memory). */
static int64_t new_event(tc_profile *p, const tconv_node *node) {
    if (p->n == TC_PROFILE_MAX_EVENTS) {
        p->dropped++;
        return -1;
    }
    if (!TC_VEC_RESERVE(p->events, p->cap, p->n + 1)) {
        p->dropped++;
        return -1;
    }
    profile_event *e = &p->events[p->n];
    memset(e, 0, sizeof *e);
    e->node = node;
    e->threads = 1;
    e->first_fused = e->last_fused = e->next_fused = -1;
    e->start_ns = tc_parallel_clock_ns() - p->origin_ns;
    return (int64_t)p->n++;
}

void tc_profile_run_begin(tc_profile *profile) {
    profile->run = new_event(profile, NULL);
}

void tc_profile_run_end(tc_profile *profile) {
    if (profile->run >= 0) {
        profile_event *e = &profile->events[profile->run];
        e->dur_ns = tc_parallel_clock_ns() - profile->origin_ns - e->start_ns;
    }
    profile->run = -1;
    profile->current = -1;
}

/* Appends {"float":[1,3,8,8]} ({} for an omitted optional value) to the text. */
static void append_shape(tc_profile *p, const tc_rt_tensor *t, bool first) {
    if (!first)
        tc_strbuf_append(&p->text, ",");
    if (!t || t->dtype == TCONV_DTYPE_UNDEFINED) {
        tc_strbuf_append(&p->text, "{}");
        return;
    }
    tc_strbuf_append(&p->text, "{");
    const char *dtype = tconv_dtype_name(t->dtype);
    tc_strbuf_append_json_string(&p->text, dtype, strlen(dtype));
    tc_strbuf_append(&p->text, ":[");
    for (int d = 0; d < t->rank; d++) {
        if (d)
            tc_strbuf_append(&p->text, ",");
        tc_strbuf_append_int(&p->text, (long long)t->dims[d]);
    }
    tc_strbuf_append(&p->text, "]}");
}

/* The text from `off` on as one shape list: its length (0 when memory ran out). */
static size_t close_shapes(tc_profile *p, size_t off) {
    tc_strbuf_append(&p->text, "]");
    return p->text.failed ? 0 : p->text.len - off;
}

/* The latest event of the run in progress for `node`, or -1. */
static int64_t find_in_run(const tc_profile *p, const tconv_node *node) {
    for (size_t i = p->n; i-- > 0 && (int64_t)i > p->run;) {
        if (p->events[i].node == node)
            return (int64_t)i;
    }
    return -1;
}

int64_t tc_profile_step_begin(tc_profile *profile, const tconv_node *node,
                              const tconv_node *fused_into, const tc_rt_tensor *const *inputs,
                              size_t n_inputs) {
    int64_t producer = fused_into ? find_in_run(profile, fused_into) : -1;
    int64_t index = new_event(profile, node);
    if (index < 0)
        return -1;
    profile_event *e = &profile->events[index];
    e->fused_into = fused_into;
    e->in_off = profile->text.len;
    tc_strbuf_append(&profile->text, "[");
    for (size_t i = 0; i < n_inputs; i++)
        append_shape(profile, inputs[i], i == 0);
    e->in_len = close_shapes(profile, e->in_off);
    if (producer >= 0) {
        profile_event *p = &profile->events[producer];
        if (p->last_fused >= 0)
            profile->events[p->last_fused].next_fused = index;
        else
            p->first_fused = index;
        p->last_fused = index;
    }
    e->start_ns = tc_parallel_clock_ns() - profile->origin_ns; /* after the bookkeeping above */
    return index;
}

void tc_profile_note_outputs(tc_profile *profile, const tc_rt_tensor *slots,
                             const uint32_t *outputs, size_t n_outputs) {
    if (profile->current < 0)
        return;
    profile_event *e = &profile->events[profile->current];
    e->out_off = profile->text.len;
    tc_strbuf_append(&profile->text, "[");
    for (size_t i = 0; i < n_outputs; i++)
        append_shape(profile, outputs[i] == UINT32_MAX ? NULL : &slots[outputs[i]], i == 0);
    e->out_len = close_shapes(profile, e->out_off);
}

void tc_profile_step_end(tc_profile *profile, int64_t event, int threads) {
    if (event < 0)
        return;
    profile_event *e = &profile->events[event];
    e->dur_ns = tc_parallel_clock_ns() - profile->origin_ns - e->start_ns;
    e->threads = threads > 1 ? threads : 1;
}

int64_t tc_profile_current(const tc_profile *profile) {
    return profile->current;
}

void tc_profile_set_current(tc_profile *profile, int64_t event) {
    profile->current = event;
}

/* ---------------------------------------------------------------- the trace */

static const char *node_name(const tconv_node *node, char *buf, size_t size) {
    if (node->name && *node->name)
        return node->name;
    snprintf(buf, size, "%s_%llu", node->op_type, (unsigned long long)node->id);
    return buf;
}

static void append_json(tc_strbuf *sb, const char *s) {
    tc_strbuf_append_json_string(sb, s, strlen(s));
}

/* Microseconds with nanosecond digits: the trace format's unit. */
static void append_us(tc_strbuf *sb, int64_t ns) {
    tc_strbuf_appendf(sb, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

static void append_text(tc_strbuf *sb, const tc_profile *p, size_t off, size_t len) {
    if (len == 0) {
        tc_strbuf_append(sb, "[]");
        return;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        sb->failed = true;
        return;
    }
    memcpy(copy, tc_strbuf_str(&p->text) + off, len);
    copy[len] = '\0';
    tc_strbuf_append(sb, copy);
    free(copy);
}

static void append_node_args(tc_strbuf *sb, const tc_profile *p, const profile_event *e) {
    char buf[128];
    tc_strbuf_append(sb, "\"args\":{\"op_name\":");
    append_json(sb, e->node->op_type);
    tc_strbuf_append(sb, ",\"provider\":\"tconv\",\"node_name\":");
    append_json(sb, node_name(e->node, buf, sizeof buf));
    tc_strbuf_appendf(sb, ",\"thread_count\":%d,\"input_type_shape\":", e->threads);
    append_text(sb, p, e->in_off, e->in_len);
    tc_strbuf_append(sb, ",\"output_type_shape\":");
    append_text(sb, p, e->out_off, e->out_len);
    if (e->fused_into) {
        tc_strbuf_append(sb, ",\"fused_into\":");
        append_json(sb, node_name(e->fused_into, buf, sizeof buf));
    }
    if (e->first_fused >= 0) {
        tc_strbuf_append(sb, ",\"fused_ops\":[");
        for (int64_t f = e->first_fused; f >= 0; f = p->events[f].next_fused) {
            if (f != e->first_fused)
                tc_strbuf_append(sb, ",");
            append_json(sb, p->events[f].node->op_type);
        }
        tc_strbuf_append(sb, "]");
    }
    tc_strbuf_append(sb, "}");
}

static void append_event(tc_strbuf *sb, const tc_profile *p, const profile_event *e) {
    char buf[128];
    tc_strbuf_appendf(sb, "{\"cat\":\"%s\",\"pid\":%ld,\"tid\":%ld,\"dur\":",
                      e->node ? "Node" : "Session", p->pid, p->tid);
    append_us(sb, e->dur_ns);
    tc_strbuf_append(sb, ",\"ts\":");
    append_us(sb, e->start_ns);
    tc_strbuf_append(sb, ",\"ph\":\"X\",\"name\":");
    if (!e->node) {
        tc_strbuf_append(sb, "\"model_run\",\"args\":{}}");
        return;
    }
    size_t len = strlen(node_name(e->node, buf, sizeof buf));
    char *name = malloc(len + sizeof "_kernel_time");
    if (!name) {
        sb->failed = true;
        return;
    }
    memcpy(name, node_name(e->node, buf, sizeof buf), len);
    memcpy(name + len, "_kernel_time", sizeof "_kernel_time");
    append_json(sb, name);
    free(name);
    tc_strbuf_append(sb, ",");
    append_node_args(sb, p, e);
    tc_strbuf_append(sb, "}");
}

tconv_status tc_profile_json(const tc_profile *profile, char **json, tc_error *err) {
    *json = NULL;
    tc_strbuf sb;
    tc_strbuf_init(&sb);
    tc_strbuf_append(&sb, "[\n");
    for (size_t i = 0; i < profile->n; i++) {
        if (i)
            tc_strbuf_append(&sb, ",\n");
        append_event(&sb, profile, &profile->events[i]);
    }
    tc_strbuf_append(&sb, "\n]\n");
    if (sb.failed || profile->text.failed) {
        tc_strbuf_free(&sb);
        return tc_error_nomem(err, "the profile's trace");
    }
    *json = tc_strbuf_take(&sb);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- the summary */

typedef struct node_total {
    const tconv_node *node;
    int64_t ns;
    size_t calls;
    int64_t first_event; /* for its fused ops */
} node_total;

static int by_node(const void *a, const void *b) {
    const node_total *x = a, *y = b;
    if (x->node != y->node)
        return (uintptr_t)x->node < (uintptr_t)y->node ? -1 : 1;
    return x->first_event < y->first_event ? -1 : x->first_event > y->first_event;
}

static int by_time(const void *a, const void *b) {
    const node_total *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return x->first_event < y->first_event ? -1 : x->first_event > y->first_event;
}

/* Per node, its events' total time (merged from one entry per event); *n_nodes of them. */
static node_total *node_totals(const tc_profile *p, size_t *n_nodes, int64_t *all_ns) {
    node_total *t = malloc((p->n ? p->n : 1) * sizeof *t);
    size_t n = 0;
    *all_ns = 0;
    for (size_t i = 0; t && i < p->n; i++) {
        if (!p->events[i].node)
            continue;
        t[n++] = (node_total){p->events[i].node, p->events[i].dur_ns, 1, (int64_t)i};
        if (!p->events[i].node->graph->parent)
            *all_ns += p->events[i].dur_ns; /* subgraph steps run inside their node's */
    }
    if (!t)
        return NULL;
    qsort(t, n, sizeof *t, by_node);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && t[m - 1].node == t[i].node) {
            t[m - 1].ns += t[i].ns;
            t[m - 1].calls++;
        } else {
            t[m++] = t[i];
        }
    }
    qsort(t, m, sizeof *t, by_time);
    *n_nodes = m;
    return t;
}

tconv_status tc_profile_summary(const tc_profile *profile, size_t top, char **text, tc_error *err) {
    *text = NULL;
    size_t n = 0;
    int64_t all_ns = 0;
    node_total *t = node_totals(profile, &n, &all_ns);
    if (!t)
        return tc_error_nomem(err, "the profile's summary");
    tc_strbuf sb;
    tc_strbuf_init(&sb);
    tc_strbuf_appendf(&sb, "profile: top %zu of %zu nodes by total time (%.3f ms in nodes",
                      top < n ? top : n, n, (double)all_ns / 1e6);
    if (profile->dropped)
        tc_strbuf_appendf(&sb, "; %zu events past the cap of %zu not recorded", profile->dropped,
                          TC_PROFILE_MAX_EVENTS);
    tc_strbuf_append(&sb, "):\n");
    char buf[128], shown[256];
    for (size_t i = 0; i < n && i < top; i++) {
        const profile_event *first = &profile->events[t[i].first_event];
        tc_strbuf_appendf(&sb, "profile: %10.3f ms %5.1f%% %6zu x %9.3f ms  %-18s ",
                          (double)t[i].ns / 1e6,
                          all_ns ? 100.0 * (double)t[i].ns / (double)all_ns : 0.0, t[i].calls,
                          (double)t[i].ns / 1e6 / (double)t[i].calls, t[i].node->op_type);
        const char *name = node_name(t[i].node, buf, sizeof buf);
        tc_strbuf_append(&sb, tc_escape_text(shown, sizeof shown, name, strlen(name)));
        for (int64_t f = first->first_fused; f >= 0; f = profile->events[f].next_fused)
            tc_strbuf_appendf(&sb, "%s%s", f == first->first_fused ? " (fused: " : " + ",
                              profile->events[f].node->op_type);
        if (first->first_fused >= 0)
            tc_strbuf_append(&sb, ")");
        if (first->fused_into)
            tc_strbuf_append(&sb, " (fused)");
        tc_strbuf_append(&sb, "\n");
    }
    free(t);
    if (sb.failed) {
        tc_strbuf_free(&sb);
        return tc_error_nomem(err, "the profile's summary");
    }
    *text = tc_strbuf_take(&sb);
    return TCONV_OK;
}
