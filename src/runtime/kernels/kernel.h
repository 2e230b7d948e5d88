/* The kernel interface: a kernel's outputs depend only on its inputs and the node's attributes.
 * It is not stateless: it may keep work derived from constant inputs (packed weights) in the
 * node's cache across runs (tc_kernel_cache_store, owned and freed by the session) and borrows
 * scratch memory per call. It never calls a pass. The op table (ir/ops.def) names each kernel
 * beside the op versions it runs; the registry (kernel_registry.c) indexes them by the node's
 * tc_op.
 *
 * Two forms (ops.def's kernel column):
 *   K(fn)    an unprepared kernel `tconv_status fn(tc_kernel_ctx *)`: it reads the node
 *            (ctx->node, its attributes) on every call.
 *   KP(fn)   a prepared kernel: `tconv_status fn(const tc_kernel_prepare_ctx *,
 *            tc_kernel_prepared *)` runs once when the session plans the node; it reads the
 *            attributes, checks them and keeps what the run needs in plan-owned parameters
 *            (pc->arena), and names the run function. The run gets those parameters
 *            (ctx->params) with the tensors, and ctx->node is NULL: it reads no IR (a test
 *            proves it: tc_test_watch_prepared_runs, runtime/test_hooks.h).
 * The executor sees one form: tc_kernel_prepare gives an unprepared kernel a trivial prepare
 * (the adapter: its run is fn itself, with the node). Migrating an op: split its attribute
 * reading and checks into a prepare function that fills a params struct, make the run take
 * ctx->params, name KP(prepare) in ops.def, declare its work (tc_kernel_prepared.work) when
 * its op's cost function reads an attribute, and the epilogues its run applies. */
#ifndef TC_RUNTIME_KERNEL_H
#define TC_RUNTIME_KERNEL_H

#include "ir/arena.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "ir/type_table.h"
#include "runtime/budget/budget.h"
#include "runtime/compute/compute.h"

typedef struct tc_session tc_session;
typedef struct tc_kernel_ctx tc_kernel_ctx;

/* What a kernel may ask of the executor that runs it, through functions the executor gives it
 * (the session, session.c): the kernels room calls nothing of the session's, so that kernels
 * and executor form no call circle. Control flow (If, Loop, Scan) stays a kernel, listed in the
 * op table like any other, and runs its subgraphs through run_subgraph. */
typedef struct tc_kernel_host {
    /* tc_kernel_input_is_constant */
    bool (*input_is_constant)(const tc_kernel_ctx *ctx, size_t index);
    /* tc_kernel_run_subgraph */
    tconv_status (*run_subgraph)(tc_kernel_ctx *ctx, const tconv_graph *graph,
                                 const tc_rt_tensor *inputs, size_t n_inputs, tc_rt_tensor *outputs,
                                 size_t n_outputs);
} tc_kernel_host;

/* A Slice -> Pad -> Add chain the executor fused into this step (ConvTranspose only, see
 * session_fuse.c; each part optional). Output 0 must come out as that chain's result: the
 * Slice's window [start, end) on its axes (ONNX Slice normalization against the uncropped output
 * dims, step 1), extended by extend_begin/extend_end zeros per axis (the Pad), plus `bias` per
 * output channel everywhere (the Add; bias_len values) when not NULL. */
typedef struct tc_kernel_crop {
    size_t n;
    int axes[TC_MAX_RANK];
    int64_t starts[TC_MAX_RANK], ends[TC_MAX_RANK];
    int64_t extend_begin[TC_MAX_RANK], extend_end[TC_MAX_RANK]; /* by axis */
    const float *bias;
    int64_t bias_len;
} tc_kernel_crop;

/* An elementwise activation the executor fused into this step (an op with TC_OPF_EPILOGUE and a
 * float32 output, see session_fuse.c): output 0 must come out as the activation of what the
 * kernel computes (after a fused crop, its zeros and bias included), by the very float operations
 * of the standalone kernel, which applies it through tc_kernel_activation_apply as well. kind:
 * one of ops.def's ACT(fn, cost) (tc_activation_kind, ir/ops.h); alpha and beta its parameters
 * (Clip: [lo, hi]). */
typedef struct tc_kernel_activation {
    tc_activation_kind kind;
    float alpha, beta;
} tc_kernel_activation;

/* dst[i] = act(src[i]) for i < n; dst may be src (in place). */
void tc_kernel_activation_apply(const tc_kernel_activation *act, float *dst, const float *src,
                                int64_t n);
/* tc_kernel_activation_apply over the kernel's threads: a large n is split (tc_parallel_ranges),
 * a small one runs in the calling thread. */
void tc_kernel_activation_apply_threads(const tc_kernel_ctx *ctx, const tc_kernel_activation *act,
                                        float *dst, const float *src, int64_t n);
/* dst[i] = act(src[i] + bias) (the float sum, then the activation) for i < n; dst may be src (in
 * place), else they do not overlap. One pass for a Conv block's bias and activation. */
void tc_kernel_activation_apply_plus(const tc_kernel_activation *act, float *dst, const float *src,
                                     float bias, int64_t n);

/* A prepared kernel's work under max_work from the actual shapes (op_work.h), with its
 * parameters: false when the shapes it needs are unknown. */
typedef bool (*tc_kernel_work_fn)(const void *params, const tc_work_shapes *w, uint64_t *out);

struct tc_kernel_ctx {
    const tconv_node *node; /* NULL for a prepared kernel's run (params instead) */
    const void *params;     /* a prepared kernel's parameters (tc_kernel_prepared.params) */
    /* For messages, set by the executor (kernel_util.c reads them when node is NULL): the op,
     * and the names of the inputs (n_inputs of them, or NULL). */
    const char *op_type;
    const char *const *input_names;
    tc_kernel_work_fn work;            /* the prepared kernel's work, else NULL: the op table's */
    int64_t opset;                     /* version of the node's domain imported by the model */
    const tc_rt_tensor *const *inputs; /* NULL entries: omitted optional inputs */
    size_t n_inputs;
    tc_rt_tensor *outputs; /* n_outputs empty tensors: the kernel allocates them */
    size_t n_outputs;
    tc_session *session;  /* opaque here: for the session's own steps (function calls, float16) */
    tc_budget *budget;    /* memory and work; NULL: no limit (a kernel run outside a session) */
    tc_node_cache *cache; /* the node's kept blocks, or NULL (tc_kernel_cache_*, _shape_table) */
    const tc_kernel_host *host; /* NULL outside a session: no constant inputs, no subgraphs */
    /* The session's inferred types beside the model (ir/type_table.h: tc_type_seen), for the
     * declared types of subgraph outputs; NULL: the values' own. */
    const tc_type_table *types;
    int n_threads;
    tc_thread_pool *pool; /* the helpers for tc_parallel_for; NULL: everything in this thread */
    tc_error *err;        /* messages need not name the node: the executor prefixes it */
    const tc_kernel_crop *crop; /* NULL unless the executor fused a Slice/Pad/Add chain */
    const tc_kernel_activation *activation; /* NULL unless the executor fused one */
    /* A residual Add the executor fused into this step (TC_EPILOGUE_RESIDUAL, session_fuse.c):
     * output 0 must come out as act(Y + residual), Y the kernel's own float32 result (its bias
     * added), the sum rounded to float first, then the fused activation if any: the very float
     * operations of the Add and activation kernels. The planner fused it only where the declared
     * shapes of Y and the residual are one static shape; the kernel refuses a run where they
     * differ. NULL: none. */
    const tc_rt_tensor *residual;
    tconv_convention convention; /* the session's: how ConvTranspose splits SAME padding */
    /* Input 0's slot when this step is its last reader and it owns its buffer (session.c): a
     * kernel that only gives the data a new shape may take the buffer instead of copying it
     * (tc_kernel_forward_to_output). NULL otherwise. */
    tc_rt_tensor *donor;
};

typedef tconv_status (*tc_kernel_fn)(tc_kernel_ctx *ctx);

/* What a prepare function sees: the node at plan time, and where its parameters live. */
typedef struct tc_kernel_prepare_ctx {
    const tconv_node *node;
    tc_op op;
    int64_t opset;
    tc_arena *arena; /* plan-owned: the parameters live as long as the plan */
    tc_error *err;   /* messages need not name the node: the planner prefixes it */
} tc_kernel_prepare_ctx;

/* The epilogues the executor may fuse into a step (session_fuse.c, session_fold.c): a kernel's
 * prepare declares those its run applies (tc_kernel_prepared.epilogues); the planner fuses no
 * other. */
enum {
    TC_EPILOGUE_CROP = 1u << 0,       /* ctx->crop: a Slice/Pad/Add chain */
    TC_EPILOGUE_ACTIVATION = 1u << 1, /* ctx->activation */
    TC_EPILOGUE_FOLDED_BN = 1u << 2,  /* W and B with a BatchNormalization folded in */
    TC_EPILOGUE_RESIDUAL = 1u << 3,   /* ctx->residual: an Add of a same-shape tensor */
};

/* A kernel made ready for one node: run it with ctx->params = params. */
typedef struct tc_kernel_prepared {
    tc_kernel_fn run;
    const void *params;
    bool reads_node;        /* true only for the adapter: the run gets ctx->node */
    tc_kernel_work_fn work; /* NULL: the op table's cost function, with the node */
    unsigned epilogues;     /* TC_EPILOGUE_* the run applies; the adapter: none */
} tc_kernel_prepared;

typedef tconv_status (*tc_kernel_prepare_fn)(const tc_kernel_prepare_ctx *pc,
                                             tc_kernel_prepared *out);

/* Parameters of `size` zeroed bytes in pc->arena (a message on failure). */
void *tc_kernel_params_alloc(const tc_kernel_prepare_ctx *pc, size_t size);

/* Allocates output `index` with the given dtype and shape, honouring the session's memory
 * limit. The kernel writes into (*out)->data, which starts zeroed. */
tconv_status tc_kernel_alloc_output(tc_kernel_ctx *ctx, size_t index, tconv_dtype dtype, int rank,
                                    const int64_t *dims, tc_rt_tensor **out);
/* The same without zeroing (a reused buffer holds an earlier tensor's bytes): only for kernels
 * that write every element of the output, which then save a pass over it. */
tconv_status tc_kernel_alloc_output_uninit(tc_kernel_ctx *ctx, size_t index, tconv_dtype dtype,
                                           int rank, const int64_t *dims, tc_rt_tensor **out);

/* Output `index` as src's data with the given shape (as many elements): src's buffer itself,
 * taken without a copy, when src is ctx->donor and index is 0 (src is then left empty: the
 * caller must not read it again), else a copy (tc_kernel_copy_to_output). For Reshape and its
 * kin, whose copy was their whole cost. */
tconv_status tc_kernel_forward_to_output(tc_kernel_ctx *ctx, size_t index, const tc_rt_tensor *src,
                                         int rank, const int64_t *dims);

/* Scratch memory for one kernel call: `bytes` bytes in buf->data (NULL when bytes is 0), not
 * zeroed, 64-byte aligned. It comes from the budget's scratch arena (counted against its memory
 * limit, and the same bytes serve every kernel call: see budget.h). The kernel gives
 * pieces back with tc_kernel_scratch_release, in reverse order of their requests, before it
 * returns. */
tconv_status tc_kernel_scratch(tc_kernel_ctx *ctx, size_t bytes, tc_rt_tensor *buf);
void tc_kernel_scratch_release(tc_kernel_ctx *ctx, tc_rt_tensor *buf);

/* Runs `graph`, a subgraph held by ctx->node, through the executor (ctx->host; session.h's
 * tc_session_run_subgraph says the contract). TCONV_ERR_USAGE outside a session. */
tconv_status tc_kernel_run_subgraph(tc_kernel_ctx *ctx, const tconv_graph *graph,
                                    const tc_rt_tensor *inputs, size_t n_inputs,
                                    tc_rt_tensor *outputs, size_t n_outputs);

/* Work that depends only on constant inputs (packed weights) can be kept across runs.
 * tc_kernel_input_is_constant: input `index` is one of the session's initializers, which no
 * run changes (false outside a session, and for an initializer a run's inputs override).
 * tc_kernel_cache_find: the node's kept block when it was stored with an equal key and
 * size, else NULL. tc_kernel_cache_store: replaces the node's block with `nbytes` new,
 * uninitialized bytes for `key` (counted as constant bytes against the memory limit; the
 * session frees them); the kernel fills them before it returns. Fails outside a session. */
/* (tc_kernel_cache_key: budget.h) */
bool tc_kernel_input_is_constant(const tc_kernel_ctx *ctx, size_t index);
void *tc_kernel_cache_find(const tc_kernel_ctx *ctx, const tc_kernel_cache_key *key, size_t nbytes);
tconv_status tc_kernel_cache_store(tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                                   size_t nbytes, void **data);

/* Work that depends only on the run's shapes (the Conv's tap masks) can be kept too, in the
 * node's second block: `made_for`, n values, says all the table depends on. *data: the kept
 * table of `nbytes` when it was made for equal values (*fresh false), else a new one the kernel
 * fills before it returns (*fresh true; the old one is freed). Outside a session *data is NULL
 * and the kernel makes the table in scratch. The table starts 8-byte aligned. */
tconv_status tc_kernel_shape_table(tc_kernel_ctx *ctx, const int64_t *made_for, size_t n,
                                   size_t nbytes, void **data, bool *fresh);

/* The input at index, or NULL if absent/omitted. */
const tc_rt_tensor *tc_kernel_input(const tc_kernel_ctx *ctx, size_t index);

/* The kernels ir/ops.def names (K(fn), KP(fn)), declared by expanding it. */
#define K(fn) tconv_status fn(tc_kernel_ctx *ctx);
#define KP(fn) tconv_status fn(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out);
#define K0
#define TC_OP(dom, name, since, until, in_min, in_max, out_min, out_max, attrs, shape, kernel)     \
    kernel
#include "ir/ops.def"
#undef TC_OP
#undef K
#undef KP
#undef K0

/* Prepares pc->node's kernel (pc->op's entry, which must have one): a prepared kernel's
 * prepare, else the adapter. Call tc_kernel_check_node_attrs first. */
tconv_status tc_kernel_prepare(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out);

/* A callable for an op table entry, or NULL when it has no kernel (then the executor reports the
 * op, domain and opset as unsupported): an unprepared kernel itself, or, for a prepared one,
 * tc_kernel_prepare_and_run. For callers without a plan (the kernel tests); the executor
 * prepares once (tc_kernel_prepare). */
tc_kernel_fn tc_kernel_for(tc_op op);
/* Prepares ctx->node's kernel in a temporary arena and runs it once. */
tconv_status tc_kernel_prepare_and_run(tc_kernel_ctx *ctx);

/* The node's attributes against its table entry `op`: one the entry does not list is
 * TCONV_ERR_UNSUPPORTED ("unsupported attribute 'x' for Op at opset N"). The executor checks
 * this once per node when it plans, so kernels need not. */
tconv_status tc_kernel_check_node_attrs(const tconv_node *node, tc_op op, int64_t opset,
                                        tc_error *err);

#endif
