/* Limit options of the command-line tools (cli_limits.h). */
#include "cli_limits.h"

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
    {"--max-nodes", LIMIT_COUNT, "nodes in all graphs of the model"},
};
#define N_OPTIONS (sizeof OPTIONS / sizeof OPTIONS[0])

void tc_cli_limits_init(tc_cli_limits *limits) {
    limits->limits = NULL;
    tconv_limits_new(&limits->limits);
}

void tc_cli_limits_free(tc_cli_limits *limits) {
    tconv_limits_free(limits->limits);
    limits->limits = NULL;
}

/* The limit each option sets, in OPTIONS order. */
static const tconv_limit LIMIT_OF[] = {TCONV_LIMIT_FILE_BYTES, TCONV_LIMIT_TENSOR_BYTES,
                                       TCONV_LIMIT_MEMORY_BYTES, TCONV_LIMIT_GRAPH_DEPTH,
                                       TCONV_LIMIT_NODES};

static uint64_t mb_to_bytes(uint64_t mb) {
    return mb > SIZE_MAX / MIB ? SIZE_MAX : mb * MIB;
}

static void store(tc_cli_limits *limits, size_t index, uint64_t value) {
    if (OPTIONS[index].kind == LIMIT_MB)
        value = mb_to_bytes(value);
    else if (value > SIZE_MAX)
        value = SIZE_MAX;
    tconv_limits_set(limits->limits, LIMIT_OF[index], value);
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

static void print_size(FILE *out, uint64_t bytes) {
    if (bytes == 0)
        fputs("none", out);
    else if (bytes >= SIZE_MAX)
        fputs("max", out);
    else
        fprintf(out, "%llu", (unsigned long long)(bytes / MIB));
}

void tc_cli_limits_usage(FILE *out) {
    fputs("Limits for untrusted models (0 turns a size or count limit off):\n", out);
    for (size_t k = 0; k < N_OPTIONS; k++) {
        uint64_t d = tconv_limits_get(NULL, LIMIT_OF[k]);
        fprintf(out, "  %-22s %s (default ", OPTIONS[k].name, OPTIONS[k].help);
        if (OPTIONS[k].kind == LIMIT_MB)
            print_size(out, d);
        else
            fprintf(out, "%llu", (unsigned long long)d);
        fputs(")\n", out);
    }
}

void tc_cli_limits_hint(FILE *out, const char *prog, tconv_status st) {
    if (st == TCONV_ERR_LIMIT)
        fprintf(out,
                "%s: a limit was reached; if the model is trusted, raise it with --max-file-mb, "
                "--max-tensor-mb, --max-memory-mb, --max-depth or --max-nodes\n",
                prog);
}
