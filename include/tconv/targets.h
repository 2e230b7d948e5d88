/* Backend targets (issue 21): what a backend accepts for ConvTranspose, as a description (a
 * built-in one, or a text file in the format README "Target files" gives), and a checker that
 * says which nodes of a model a target would reject. A pipeline given a target
 * (tconv_pipeline_set_target, tconv/passes.h) rewrites every ConvTranspose into a form the
 * target takes.
 *
 *   tconv_target *t;
 *   char message[512];
 *   if (tconv_target_open("tflite", &t, message, sizeof message) != TCONV_OK) ...
 *   size_t n;
 *   char *text;
 *   tconv_target_check(t, model, &n, &text);   // n nodes' constraints broken, listed in text
 */
#ifndef TCONV_TARGETS_H
#define TCONV_TARGETS_H

#include <stddef.h>

#include "tconv/model.h"
#include "tconv/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tconv_target tconv_target;

/* The built-in targets ("tensorrt", "tflite", "coreml", "qnn", "ethos-u", "rknn", "tidl",
 * "conv-only"): name of target `index`, NULL past the end. Static strings. */
size_t tconv_target_builtin_count(void);
const char *tconv_target_builtin_name(size_t index);

/* A built-in target by name, or one described in a file. On failure the reason (an unknown
 * name with the known ones; a file's error naming file, line and field) goes into
 * message[0 .. message_size-1]. Errors: TCONV_ERR_USAGE (NULL, unknown name), TCONV_ERR_IO,
 * TCONV_ERR_INVALID (a parse error), TCONV_ERR_NOMEM. Free with tconv_target_free. */
tconv_status tconv_target_open(const char *name, tconv_target **out, char *message,
                               size_t message_size);
tconv_status tconv_target_open_file(const char *path, tconv_target **out, char *message,
                                    size_t message_size);
/* NULL is ignored. */
void tconv_target_free(tconv_target *target);
/* The target's name (owned by the target). */
const char *tconv_target_name(const tconv_target *target);

/* Each constraint of the target with its source, one a line (what --list-targets prints).
 * *text is freed with tconv_free. Errors: TCONV_ERR_USAGE, TCONV_ERR_NOMEM. */
tconv_status tconv_target_describe(const tconv_target *target, char **text);

/* Checks every node of the model (subgraphs included) against the target, reading the graph
 * only: *n_broken is the number of constraints broken and *text lists them, one a line naming
 * the node and the constraint with its source ("" when none; freed with tconv_free). Errors:
 * TCONV_ERR_USAGE, TCONV_ERR_NOMEM (the message in the model). */
tconv_status tconv_target_check(const tconv_target *target, tconv_model *model, size_t *n_broken,
                                char **text);

#ifdef __cplusplus
}
#endif

#endif
