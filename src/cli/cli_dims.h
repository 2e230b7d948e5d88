/* --dim NAME=VALUE of the command-line tools: values for the symbolic (dynamic) dims of a
 * model's inputs, checked against the model before anything runs. */
#ifndef TC_CLI_DIMS_H
#define TC_CLI_DIMS_H

#include <stdint.h>
#include <stdio.h>

#include "tconv/tconv.h"

typedef struct tc_cli_dim {
    const char *name;
    int64_t value;
} tc_cli_dim;

/* Every --dim names a symbolic dim of the model: of an input of its main graph (not an
 * initializer), or of any other value of any graph, declared in value_info or an output; and,
 * when `need_all`, every dynamic dim of the main graph's inputs has a value. Prints one message for
 * all that is wrong ("prog: PATH: ...") and returns false; true when all is well. */
bool tc_cli_dims_check(tconv_model *model, const tc_cli_dim *dims, size_t n_dims, bool need_all,
                       const char *prog, const char *path, FILE *out);

#endif
