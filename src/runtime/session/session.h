/* The session room's door: the executor, which plans a model's main graph once and runs it on
 * given inputs, with its profiler (profile.h). The room holds planning (fusion, folding, constant
 * folding, function bodies, the planned memory and work checks) and running (steps, subgraphs,
 * random inputs); it is the top room of the runtime and what src/api uses. */
#ifndef TC_RUNTIME_SESSION_H
#define TC_RUNTIME_SESSION_H

#include "ir/ir.h"
#include "ir/type_table.h"
#include "runtime/budget/budget.h"
#include "runtime/compute/compute.h"
#include "runtime/session/profile.h"

typedef struct tc_session tc_session;

typedef struct tc_dim_binding {
    const char *name; /* a symbolic dim_param of a graph input */
    int64_t value;
} tc_dim_binding;

typedef struct tc_session_options {
    int n_threads; /* 0: one per core (at most 2 used by default builds' kernels) */
    /* Tensor bytes held at once: initializer copies + live intermediate values; default
     * 16 GiB, 0: no limit. A graph whose planned memory (declared shapes replayed over the
     * buffer lifetimes) exceeds it is refused before anything is allocated; values of unknown
     * shape are held to it as they are allocated. */
    size_t max_memory_bytes;
    /* The helper threads of multi-threaded kernels: a pool shared with other sessions (borrowed:
     * it must outlive the session), or NULL for the session's own (made when n_threads is not 1,
     * its threads started on first use and stopped by tc_session_free). */
    tc_thread_pool *pool;
    /* Every step on the thread count the cost model gives for n_threads, run after run. By
     * default a session with several threads measures its steps over its first runs and caps
     * each at the count it ran quickest at (thread_tuning.h); the results are the same bits
     * either way. */
    bool fixed_threads;
    /* Run the graph as written: no ConvTranspose -> Slice -> Pad -> Add fusion and no activation
     * fusion into Conv/ConvTranspose (session_fuse.c).
     * A proof sets it, so that the Slice, Pad and Add a backend runs are what it checks. */
    bool unfused;
    /* Whose pad split the ConvTranspose kernel uses for SAME auto_pad (ONNX by default): what
     * the legalization used, when a proof runs the original beside its rewrite. */
    tconv_convention convention;
    /* Work units one run may do: multiply-adds of the contractions (Conv, ConvTranspose, Gemm,
     * MatMul), window taps of pooling, one per element read or written elsewhere (see
     * session_work.c); default TC_DEFAULT_MAX_WORK, 0: no limit. Refused before the run
     * computes, from the declared shapes, or before the node computes, from the actual ones. */
    uint64_t max_work;
    /* While constants are folded (session_constfold.c), called in plan order for each step of
     * the main graph that is not folded, with the plan constants among its inputs (NULL where
     * an input is not one): it may sharpen the IR types of the node's outputs from them, so
     * that a Shape of a value whose shape only folded constants tell (a Pad whose pads a
     * Reshape/Slice/Transpose chain computes) is folded too. NULL: types as the model has
     * them. src/api sets it to shape inference into `types` below. */
    void (*refine_types)(void *ctx, const tconv_node *node, const tc_rt_tensor *const *constants);
    void *refine_ctx;
    /* Types inferred beside the model (ir/type_table.h), or NULL: planning and the kernels that
     * read a value's type read it here first (tc_session_type), so the model is never written.
     * src/api fills it by shape inference and refine_types adds to it. The session owns it once
     * tc_session_create succeeds (frees it with the session); on failure the caller keeps it. */
    tc_type_table *types;
    /* ONNX function bodies for ops without a kernel (src/api's built-in library, loaded from
     * src/runtime/data/onnx_functions.onnx): a model whose `functions` are borrowed (it must
     * outlive the session), or NULL for none. The model's own functions come first. */
    const tconv_model *function_library;
} tc_session_options;

/* 2^38 (2.7e11) multiply-adds: minutes of one core at tconv's speed. The largest model of
 * models/ plans 1.6e9 and conformance tests far less; a 120-byte model can ask for 1e12. */
#define TC_DEFAULT_MAX_WORK ((uint64_t)1 << 38)

void tc_session_options_init(tc_session_options *options);

/* (tc_session_stats, the memory and work counters: budget.h) */

/* Prepares to run `model` (which must outlive the session): checks every node has a kernel
 * (error names node, op, domain and opset), plans buffer lifetimes. */
tconv_status tc_session_create(tconv_model *model, const tc_session_options *options,
                               tc_session **out, tc_error *err);
void tc_session_free(tc_session *session);
/* Runs the session's kernels on `pool` from now on (borrowed, as tc_session_options.pool); NULL
 * goes back to the session's own pool. */
void tc_session_set_pool(tc_session *session, tc_thread_pool *pool);

/* Turns the measured thread caps on (the default: they are measured anew) or off (every step on
 * the cost model's count from now on): tc_session_options.fixed_threads. */
void tc_session_set_thread_tuning(tc_session *session, bool enabled);
void tc_session_get_stats(const tc_session *session, tc_session_stats *stats);
/* Records every step of the following runs in `profile` (borrowed: it must outlive the session
 * or be detached first); NULL stops recording. */
struct tc_profile;
void tc_session_set_profile(tc_session *session, struct tc_profile *profile);

/* The graph inputs that need data (inputs that are not initializers), in graph order. */
size_t tc_session_input_count(const tc_session *session);
const tconv_value *tc_session_input(const tc_session *session, size_t index);
size_t tc_session_output_count(const tc_session *session);
const tconv_value *tc_session_output(const tc_session *session, size_t index);

/* Runs the graph. inputs[i] feeds tc_session_input(i); dtypes and static dims are checked
 * against the graph (error names the input). outputs: an array of tc_session_output_count
 * tensors the caller provides (empty); filled with owned data that the caller releases with
 * tc_rt_tensor_release. */
tconv_status tc_session_run(tc_session *session, const tc_rt_tensor *inputs, size_t n_inputs,
                            tc_rt_tensor *outputs, tc_error *err);

/* Gives an output of an earlier run back instead of releasing it (t is emptied): the next run
 * reuses its buffer. A large output freed and allocated again every run came back as fresh
 * zero pages, a page fault each 4 KiB (a DCGAN generator's last layer took 5x its compute). */
void tc_session_recycle_output(tc_session *session, tc_rt_tensor *t);

/* Fills t (allocated) for graph input `value` with seeded random data: float in [-1, 1], ints
 * small non-negative, bool random. Symbolic dims take their value from bindings; an unbound
 * dynamic dim is an error naming the input and the dim. */
tconv_status tc_session_random_input(const tconv_value *value, uint64_t seed,
                                     const tc_dim_binding *bindings, size_t n_bindings,
                                     tc_rt_tensor *t, tc_error *err);

/* Two sessions run one after the other on the same inputs (a comparison): `done` has run and
 * its caller keeps its outputs while `next` runs. Frees what `done` keeps only for speed (cached
 * buffers, scratch) and makes `next` count `done`'s initializer copies and the outputs as held,
 * so that both together stay within next's memory limit. */
void tc_session_yield_to(tc_session *done, const tc_rt_tensor *outputs, size_t n_outputs,
                         tc_session *next);

/* Refuses (TCONV_ERR_LIMIT, before anything is allocated) inputs that would not fit the memory
 * limit: every graph input at its declared shape, symbolic dims from `bindings`, counted with
 * the initializers and the planned intermediates. Call it before making random inputs; inputs
 * whose shape is not known are held to the limit when they are given (tc_session_run). */
tconv_status tc_session_check_inputs(const tc_session *session, const tc_dim_binding *bindings,
                                     size_t n_bindings, tc_error *err);
/* Refuses `bytes` of caller inputs in all (with the initializers) past the memory limit; for a
 * caller about to copy or load input data. `what` names the input in the message. */
tconv_status tc_session_check_input_bytes(const tc_session *session, uint64_t bytes,
                                          const char *what, tc_error *err);

/* The bytes one more input may take when `held` bytes of other inputs are held (with the
 * initializers) within the memory limit; SIZE_MAX without a limit. For a caller about to read
 * input data from a file, to refuse it before it is read. */
size_t tc_session_input_room(const tc_session *session, uint64_t held);

/* Compares actual to expected: same dtype and shape, and |a - e| <= atol + rtol * |e| for every
 * element (NaN equal to NaN). Reports the largest absolute and relative errors. A shape or dtype
 * difference or a failed tolerance is TCONV_ERR_MISMATCH with a message saying where. */
tconv_status tc_rt_tensor_compare(const tc_rt_tensor *actual, const tc_rt_tensor *expected,
                                  double rtol, double atol, double *max_abs_err,
                                  double *max_rel_err, tc_error *err);

/* Whether the session would run `node`, whose op has no kernel, as a function body: one of the
 * model's own functions of the node's domain and name (planning says whether that body runs),
 * or a body of `library` made for the node's op, opset, attributes and inputs (types and static
 * shapes are checked when it runs). For naming what a model lacks before planning it. */
bool tc_function_body_available(const tconv_model *model, const tconv_model *library,
                                const tconv_node *node);

#endif
