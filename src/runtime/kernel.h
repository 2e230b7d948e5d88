/* The kernel interface: kernels are pure functions of their inputs and the node's attributes.
 * They never call a pass. Each kernel file exports a table of tc_kernel_def; the registry
 * (kernel_registry.c) looks kernels up by (domain, op_type, opset). */
#ifndef TCONV_RUNTIME_KERNEL_H
#define TCONV_RUNTIME_KERNEL_H

#include "ir/ir.h"
#include "runtime/rt_tensor.h"

typedef struct tc_session tc_session;
typedef struct tc_kernel_ctx tc_kernel_ctx;

/* A Slice -> Pad -> Add chain the executor fused into this step (ConvTranspose only, see
 * session_fuse.c; each part optional). Output 0 must come out as that chain's result: the
 * Slice's window [start, end) on its axes (ONNX Slice normalization against the uncropped output
 * dims, step 1), extended by extend_begin/extend_end zeros per axis (the Pad), plus `bias` per
 * output channel everywhere (the Add; bias_len values) when not NULL. */
typedef struct tc_kernel_crop {
    size_t n;
    int axes[TCONV_MAX_RANK];
    int64_t starts[TCONV_MAX_RANK], ends[TCONV_MAX_RANK];
    int64_t extend_begin[TCONV_MAX_RANK], extend_end[TCONV_MAX_RANK]; /* by axis */
    const float *bias;
    int64_t bias_len;
} tc_kernel_crop;

struct tc_kernel_ctx {
    const tconv_node *node;
    int64_t opset;                     /* version of the node's domain imported by the model */
    const tc_rt_tensor *const *inputs; /* NULL entries: omitted optional inputs */
    size_t n_inputs;
    tc_rt_tensor *outputs; /* n_outputs empty tensors: the kernel allocates them */
    size_t n_outputs;
    tc_session *session; /* for control flow (If) and the thread count */
    int n_threads;
    tc_error *err;               /* messages need not name the node: the executor prefixes it */
    const tc_kernel_crop *crop;  /* NULL unless the executor fused a Slice/Pad/Add chain */
    tconv_convention convention; /* the session's: how ConvTranspose splits SAME padding */
};

typedef tconv_status (*tc_kernel_fn)(tc_kernel_ctx *ctx);

typedef struct tc_kernel_def {
    const char *domain; /* "" for ai.onnx */
    const char *op_type;
    int since_version; /* first opset this implementation covers */
    int until_version; /* last opset it covers (inclusive) */
    tc_kernel_fn run;
} tc_kernel_def;

/* Allocates output `index` with the given dtype and shape, honouring the session's memory
 * limit. The kernel writes into (*out)->data. */
tconv_status tc_kernel_alloc_output(tc_kernel_ctx *ctx, size_t index, tconv_dtype dtype, int rank,
                                    const int64_t *dims, tc_rt_tensor **out);

/* Scratch memory for one kernel call: `bytes` bytes in buf->data (NULL when bytes is 0), not
 * zeroed, 64-byte aligned. It comes from the session's scratch arena (counted against its memory
 * limit, and the same bytes serve every kernel call: see session_internal.h). The kernel gives
 * pieces back with tc_kernel_scratch_release, in reverse order of their requests, before it
 * returns. */
tconv_status tc_kernel_scratch(tc_kernel_ctx *ctx, size_t bytes, tc_rt_tensor *buf);
void tc_kernel_scratch_release(tc_kernel_ctx *ctx, tc_rt_tensor *buf);

/* Work that depends only on constant inputs (packed weights) can be kept across runs.
 * tc_kernel_input_is_constant: input `index` is one of the session's initializers, which no
 * run changes (false outside a session, and for an initializer a run's inputs override).
 * tc_kernel_cache_find: the node's kept block when it was stored with an equal key and
 * size, else NULL. tc_kernel_cache_store: replaces the node's block with `nbytes` new,
 * uninitialized bytes for `key` (counted as constant bytes against the memory limit; the
 * session frees them); the kernel fills them before it returns. Fails outside a session. */
typedef struct tc_kernel_cache_key {
    const void *source; /* the constant input's data */
    int64_t layout[6];  /* whatever else the block depends on */
} tc_kernel_cache_key;
bool tc_kernel_input_is_constant(const tc_kernel_ctx *ctx, size_t index);
void *tc_kernel_cache_find(const tc_kernel_ctx *ctx, const tc_kernel_cache_key *key, size_t nbytes);
tconv_status tc_kernel_cache_store(tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                                   size_t nbytes, void **data);

/* The input at index, or NULL if absent/omitted. */
const tc_rt_tensor *tc_kernel_input(const tc_kernel_ctx *ctx, size_t index);

/* Kernel tables, each ending with an entry whose op_type is NULL. */
extern const tc_kernel_def tc_kernels_conv_transpose[]; /* ConvTranspose */
extern const tc_kernel_def tc_kernels_conv[];           /* Conv */
extern const tc_kernel_def tc_kernels_pool[];        /* MaxPool, AveragePool, GlobalAveragePool */
extern const tc_kernel_def tc_kernels_linalg[];      /* MatMul, Gemm */
extern const tc_kernel_def tc_kernels_elementwise[]; /* Add..Div, Relu, LeakyRelu, ... */
extern const tc_kernel_def tc_kernels_tensor[];      /* Slice, Pad, Concat, Reshape, ... */
extern const tc_kernel_def tc_kernels_nn[];          /* BatchNormalization, Softmax, Resize, ... */
extern const tc_kernel_def tc_kernels_control[];     /* If */

/* The kernel for a node at the model's opset, or NULL (then the executor reports the op,
 * domain and opset as unsupported). */
const tc_kernel_def *tc_kernel_lookup(const char *domain, const char *op_type, int64_t opset);

#endif
