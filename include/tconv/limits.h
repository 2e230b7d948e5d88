/* Hard limits for untrusted models (the CLIs' --max-* options): how big a file, a tensor, the
 * subgraph nesting and the node count may be when a model is read, and how much tensor memory,
 * work and how many threads a runner may use. Pass a tconv_limits to tconv_model_read_file,
 * tconv_model_read_buffer, tconv_runner_new or tconv_comparison_set_limits; NULL there means the
 * defaults below. Reaching a limit is TCONV_ERR_LIMIT with a message naming it.
 *
 *   tconv_limits *limits;
 *   tconv_limits_new(&limits);
 *   tconv_limits_set(limits, TCONV_LIMIT_FILE_BYTES, 64u << 20);
 *   tconv_model_read_file(path, limits, &model, message, sizeof message);
 *   tconv_limits_free(limits);
 */
#ifndef TCONV_LIMITS_H
#define TCONV_LIMITS_H

#include "tconv/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tconv_limits tconv_limits;

/* The largest TCONV_LIMIT_GRAPH_DEPTH: what an 8 MiB stack (Linux's default for the main thread
 * and for threads) provably holds. protobuf-c's unpacker recurses once per message (Graph >
 * Node > Attribute > Graph per level of subgraph), and so do the loader, verifier and passes:
 * measured, a model of nested If costs about 2.9 KiB of stack per level (2.85 MiB at 1000
 * levels, with or without AddressSanitizer), so 1000 levels leave a margin of almost 3x. A
 * caller that loads models on a thread with a smaller stack should lower the limit to match. */
#define TCONV_GRAPH_DEPTH_MAX 1000

/* What can be limited. For the byte and node counts, 0 turns the limit off. */
typedef enum tconv_limit {
    TCONV_LIMIT_FILE_BYTES = 0, /* a model file's (or buffer's) size; default 4 GiB */
    TCONV_LIMIT_TENSOR_BYTES,   /* one tensor's data (initializers, attributes); default 2 GiB */
    TCONV_LIMIT_GRAPH_DEPTH,    /* nesting of subgraphs (0: the main graph only); default 64 */
    TCONV_LIMIT_NODES,          /* nodes in all graphs; default MEMORY_BYTES / 4096 (the
                                   IR and plans of a node take up to 3.6 KB): 4194304, and
                                   setting MEMORY_BYTES moves it until NODES is set */
    TCONV_LIMIT_MEMORY_BYTES,   /* tensor bytes a runner holds at once (initializer copies and
                                   live values; a graph whose planned memory exceeds it is
                                   refused before anything is allocated), and the tensor data a
                                   model read with these limits may read from external files or
                                   decode from typed fields, counted before it is read; default
                                   16 GiB */
    TCONV_LIMIT_THREADS,        /* threads a runner uses (0: one per core); default 0 */
    TCONV_LIMIT_WORK            /* work one run may do, in multiply-adds (Conv, ConvTranspose,
                                   Gemm, MatMul, Einsum, LSTM/GRU/RNN), window taps (pooling,
                                   LRN), comparisons (TopK) or elements read and written (other
                                   ops); a run whose planned work exceeds it is refused before
                                   it computes, a node of unknown shape before that node
                                   computes; constant folding at planning charges it too, in
                                   total; default 2^38 (2.7e11) */
} tconv_limit;

/* Limits set to the defaults. On success *out is the object; free it with tconv_limits_free.
 * Errors: TCONV_ERR_USAGE (out is NULL), TCONV_ERR_NOMEM. */
tconv_status tconv_limits_new(tconv_limits **out);
/* NULL is ignored. */
void tconv_limits_free(tconv_limits *limits);

/* Sets one limit. Errors: TCONV_ERR_USAGE for an unknown `which` or a value out of range
 * (GRAPH_DEPTH above TCONV_GRAPH_DEPTH_MAX, THREADS above 1024, a byte count above SIZE_MAX); the
 * message is tconv_limits_last_error. */
tconv_status tconv_limits_set(tconv_limits *limits, tconv_limit which, uint64_t value);

/* The value of one limit; `limits` NULL gives the default. 0 for an unknown `which`. */
uint64_t tconv_limits_get(const tconv_limits *limits, tconv_limit which);

/* The message of the last failed tconv_limits_set; "" after a success. Owned by the object. */
const char *tconv_limits_last_error(const tconv_limits *limits);

#ifdef __cplusplus
}
#endif

#endif
