/* tconv: load ONNX models, legalize their ConvTranspose nodes, run them to prove a rewrite right.
 * The one header a program includes; docs/api.md has an overview and a longer example.
 *
 * Example: read a model, run the default pipeline (shape inference, ConvTranspose legalization,
 * dead-code elimination), compare the result with the original on seeded random inputs, write
 * it. Build with `cc quickstart.c $(pkg-config --cflags --libs tconv)`; ctest compiles this very
 * text (examples/quickstart/quickstart.c, kept identical by the test examples.quickstart.header)
 * against the static library and runs it.
 *
 * ---- begin example
 *   #include <stdio.h>
 *
 *   #include <tconv/tconv.h>
 *
 *   int main(int argc, char **argv) {
 *       char message[1024];
 *       tconv_model *model = NULL, *original = NULL;
 *       tconv_pipeline *pipeline = NULL;
 *       tconv_comparison *check = NULL;
 *       if (argc != 3) {
 *           fprintf(stderr, "usage: %s in.onnx out.onnx\n", argv[0]);
 *           return 2;
 *       }
 *       if (tconv_model_read_file(argv[1], NULL, &model, message, sizeof message) != TCONV_OK) {
 *           fprintf(stderr, "%s\n", message);
 *           return 1;
 *       }
 *       tconv_status st = tconv_model_clone(model, &original);
 *       if (st == TCONV_OK)
 *           st = tconv_pipeline_new(&pipeline);
 *       if (st == TCONV_OK && (st = tconv_pipeline_run(pipeline, model, NULL)) != TCONV_OK)
 *           fprintf(stderr, "%s\n", tconv_model_last_error(model));
 *       if (st == TCONV_OK)
 *           st = tconv_comparison_new(&check);
 *       if (st == TCONV_OK && (st = tconv_comparison_run(check, original, model)) != TCONV_OK)
 *           fprintf(stderr, "%s\n", tconv_comparison_last_error(check));
 *       if (st == TCONV_OK && (st = tconv_model_write_file(model, argv[2])) != TCONV_OK)
 *           fprintf(stderr, "%s\n", tconv_model_last_error(model));
 *       tconv_comparison_free(check);
 *       tconv_pipeline_free(pipeline);
 *       tconv_model_free(original);
 *       tconv_model_free(model);
 *       printf("%s: %s\n", argv[2], tconv_status_name(st));
 *       return st == TCONV_OK ? 0 : 1;
 *   }
 * ---- end example
 *
 *   tconv/types.h    handles, dtypes, attribute types, policy and convention, tconv_free
 *   tconv/status.h   status codes
 *   tconv/version.h  library version
 *   tconv/limits.h   limits for untrusted models (sizes, depth, nodes, memory, threads)
 *   tconv/model.h    read / write / clone / validate models, error messages, opsets
 *   tconv/files.h    atomic writing, output paths, temp file cleanup for signal handlers
 *   tconv/graph.h    walk and edit graphs: nodes, values, attributes, initializers
 *   tconv/passes.h   pass pipelines (built-in and own passes) and the rewrite report
 *   tconv/runtime.h  run a model on inputs, compare two models */
#ifndef TCONV_TCONV_H
#define TCONV_TCONV_H

#include "tconv/status.h"
#include "tconv/types.h"
#include "tconv/version.h"
#include "tconv/limits.h"
#include "tconv/model.h"
#include "tconv/files.h"
#include "tconv/graph.h"
#include "tconv/passes.h"
#include "tconv/targets.h"
#include "tconv/runtime.h"

#endif
