/* Hard limits for untrusted models, shared by tconv-import and tconv-run:
 *   --max-file-mb N  --max-tensor-mb N  --max-memory-mb N  --max-work N  --max-depth N
 *   --max-nodes N
 * Defaults come from tc_load_options_init and tc_session_options_init; 0 turns a size or
 * node-count limit off. */
#ifndef TCONV_CLI_LIMITS_H
#define TCONV_CLI_LIMITS_H

#include <stdio.h>

#include "importer/importer.h"
#include "runtime/session.h"

typedef struct tc_cli_limits {
    tc_load_options load;
    size_t max_memory_bytes;
    uint64_t max_work;
    bool nodes_given; /* --max-nodes given: --max-memory-mb no longer moves the node limit */
} tc_cli_limits;

void tc_cli_limits_init(tc_cli_limits *limits);

/* If argv[*i] is a limit option ("--opt N" or "--opt=N"), parses it (advancing *i past its
 * value) and returns 1; returns 0 for other arguments and -1 after printing a usage error that
 * starts with `prog`. */
int tc_cli_limits_parse(tc_cli_limits *limits, const char *prog, int argc, char **argv, int *i);

/* The option lines for --help, with the current defaults. */
void tc_cli_limits_usage(FILE *out);

/* After an error of status st: a line saying which option raises the limit (nothing for other
 * statuses). */
void tc_cli_limits_hint(FILE *out, const char *prog, tconv_status st);

#endif
