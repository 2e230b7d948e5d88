/* Limit options of the command-line tools (cli_limits.h). */
#include "cli/cli_limits.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)

typedef enum limit_kind { LIMIT_MB, LIMIT_COUNT, LIMIT_DEPTH } limit_kind;

typedef struct limit_option {
    const char *name;
    limit_kind kind;
    const char *help;
} limit_option;

static const limit_option OPTIONS[] = {
    {"--max-file-mb", LIMIT_MB, "largest model file to read, MiB"},
    {"--max-tensor-mb", LIMIT_MB, "largest tensor in the model, MiB"},
    {"--max-memory-mb", LIMIT_MB, "tensor memory the runtime may hold at once, MiB"},
    {"--max-depth", LIMIT_DEPTH, "nesting of subgraphs (If/Loop/Scan bodies)"},
    {"--max-nodes", LIMIT_COUNT, "nodes in all graphs of the model (--max-memory-mb moves it)"},
    {"--max-work", LIMIT_COUNT, "multiply-adds (or elements, see tconv/limits.h) one run may do"},
};
#define N_OPTIONS (sizeof OPTIONS / sizeof OPTIONS[0])

void tc_cli_limits_init(tc_cli_limits *limits) {
    tc_load_options_init(&limits->load);
    tc_session_options so;
    tc_session_options_init(&so);
    limits->max_memory_bytes = so.max_memory_bytes;
    limits->max_work = so.max_work;
    limits->nodes_given = false;
}

static size_t mb_to_bytes(uint64_t mb) {
    if (mb > SIZE_MAX / MIB)
        return SIZE_MAX;
    return (size_t)(mb * MIB);
}

static void store(tc_cli_limits *limits, size_t index, uint64_t value) {
    switch (index) {
    case 0:
        limits->load.max_file_bytes = mb_to_bytes(value);
        break;
    case 1:
        limits->load.max_tensor_bytes = mb_to_bytes(value);
        break;
    case 2:
        limits->max_memory_bytes = mb_to_bytes(value);
        if (!limits->nodes_given) /* the IR of the nodes must fit the memory too */
            limits->load.max_nodes = tc_load_max_nodes_for_memory(limits->max_memory_bytes);
        break;
    case 3:
        limits->load.max_graph_depth = (int)value;
        break;
    case 4:
        limits->load.max_nodes = value > SIZE_MAX ? SIZE_MAX : (size_t)value;
        limits->nodes_given = true;
        break;
    default:
        limits->max_work = value;
        break;
    }
}

static bool parse_u64(const char *text, uint64_t max, uint64_t *out) {
    char *end;
    errno = 0;
    if (!text || !*text || *text == '-' || *text == '+')
        return false;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v > max)
        return false;
    *out = v;
    return true;
}

static const limit_option *find_option(const char *arg, size_t *index) {
    for (size_t k = 0; k < N_OPTIONS; k++) {
        size_t n = strlen(OPTIONS[k].name);
        if (strncmp(arg, OPTIONS[k].name, n) == 0 && (arg[n] == '\0' || arg[n] == '=')) {
            *index = k;
            return &OPTIONS[k];
        }
    }
    return NULL;
}

int tc_cli_limits_parse(tc_cli_limits *limits, const char *prog, int argc, char **argv, int *i) {
    size_t index;
    const limit_option *opt = find_option(argv[*i], &index);
    if (!opt)
        return 0;
    const char *value = NULL;
    size_t n = strlen(opt->name);
    if (argv[*i][n] == '=')
        value = argv[*i] + n + 1;
    else if (*i + 1 < argc)
        value = argv[++*i];
    uint64_t max = opt->kind == LIMIT_DEPTH ? 100000 : UINT64_MAX;
    uint64_t v;
    if (!value || !parse_u64(value, max, &v)) {
        fprintf(stderr, "%s: %s needs a non-negative integer%s, got '%s'\n(see %s --help)\n", prog,
                opt->name, opt->kind == LIMIT_DEPTH ? " up to 100000" : "", value ? value : "",
                prog);
        return -1;
    }
    store(limits, index, v);
    return 1;
}

static void print_size(FILE *out, size_t bytes) {
    if (bytes == 0)
        fputs("none", out);
    else if (bytes == SIZE_MAX)
        fputs("max", out);
    else
        fprintf(out, "%zu", (size_t)(bytes / MIB));
}

void tc_cli_limits_usage(FILE *out) {
    tc_cli_limits d;
    tc_cli_limits_init(&d);
    fputs("Limits for untrusted models (0 turns a size or count limit off):\n", out);
    fprintf(out, "  %-22s %s (default ", OPTIONS[0].name, OPTIONS[0].help);
    print_size(out, d.load.max_file_bytes);
    fprintf(out, ")\n  %-22s %s (default ", OPTIONS[1].name, OPTIONS[1].help);
    print_size(out, d.load.max_tensor_bytes);
    fprintf(out, ")\n  %-22s %s (default ", OPTIONS[2].name, OPTIONS[2].help);
    print_size(out, d.max_memory_bytes);
    fprintf(out, ")\n  %-22s %s (default %d)\n", OPTIONS[3].name, OPTIONS[3].help,
            d.load.max_graph_depth);
    fprintf(out, "  %-22s %s (default %zu)\n", OPTIONS[4].name, OPTIONS[4].help, d.load.max_nodes);
    fprintf(out, "  %-22s %s (default %llu)\n", OPTIONS[5].name, OPTIONS[5].help,
            (unsigned long long)d.max_work);
}

void tc_cli_limits_hint(FILE *out, const char *prog, tconv_status st) {
    if (st == TCONV_ERR_LIMIT)
        fprintf(out,
                "%s: a limit was reached; if the model is trusted, raise it with --max-file-mb, "
                "--max-tensor-mb, --max-memory-mb, --max-work, --max-depth or --max-nodes\n",
                prog);
}
