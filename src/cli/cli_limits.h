/* Hard limits for untrusted models, shared by tconv-import and tconv-run:
 *   --max-file-mb N  --max-tensor-mb N  --max-memory-mb N  --max-work N  --max-depth N
 *   --max-nodes N
 * kept in a public tconv_limits (whose defaults are the library's); 0 turns a size or
 * node-count limit off. */
#ifndef TC_CLI_LIMITS_H
#define TC_CLI_LIMITS_H

#include <stdio.h>

#include "tconv/tconv.h"

typedef struct tc_cli_limits {
    tconv_limits *limits; /* NULL only when out of memory: then the defaults apply */
} tc_cli_limits;

void tc_cli_limits_init(tc_cli_limits *limits);
void tc_cli_limits_free(tc_cli_limits *limits);

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
