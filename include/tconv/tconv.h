/* tconv: load ONNX models, legalize their ConvTranspose nodes, run them to prove a rewrite right.
 * The one header a program includes; docs/api.md has an overview and an example.
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
#include "tconv/runtime.h"

#endif
