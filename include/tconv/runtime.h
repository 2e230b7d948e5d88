/* Running a model in tconv's own runtime, and comparing two models on the same inputs.
 *
 * A runner prepares a model's main graph once (every node needs a kernel) and runs it as often
 * as wanted. Tensors cross the API as dtype + dims + little-endian row-major bytes; the runner
 * copies inputs in and keeps outputs until the next run.
 *
 *   tconv_runner *r;
 *   if (tconv_runner_new(model, NULL, &r) != TCONV_OK) { ... tconv_model_last_error(model) ... }
 *   tconv_runner_set_input(r, 0, TCONV_DTYPE_FLOAT, 4, dims, pixels, sizeof pixels);
 *   if (tconv_runner_run(r) == TCONV_OK) {
 *       size_t nbytes;
 *       const float *y = tconv_runner_output_data(r, 0, &nbytes);
 *   }
 *   tconv_runner_free(r);
 *
 * A comparison runs two models (an original and its rewrite) on seeded random inputs and checks
 * every output with |candidate - reference| <= atol + rtol * |reference|: what
 * `tconv-import --check` does. */
#ifndef TCONV_RUNTIME_H
#define TCONV_RUNTIME_H

#include "tconv/limits.h"
#include "tconv/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tconv_runner tconv_runner;
typedef struct tconv_report tconv_report;
typedef struct tconv_comparison tconv_comparison;
typedef struct tconv_threadpool tconv_threadpool;

/* ---------------------------------------------------------------- thread pools */

/* Helper threads for multi-threaded runs (TCONV_LIMIT_THREADS other than 1). Every runner owns a
 * pool by default, whose threads start on its first multi-threaded kernel and stop when it is
 * freed. A program with many runners can give them one pool instead
 * (tconv_runner_set_threadpool), so that they share its threads; the pool must outlive them.
 * A pool is used by one kernel at a time: runners that share one may run in separate threads
 * (each on its own model), and a kernel that finds the pool busy runs in its calling thread.
 * The library keeps no thread of its own outside the pools. */

/* A pool with no thread yet (they start on first use, as many as a run asks for, at most 63).
 * On success *out is the pool; free it with tconv_threadpool_free. Errors: TCONV_ERR_USAGE (out
 * is NULL), TCONV_ERR_NOMEM. */
tconv_status tconv_threadpool_new(tconv_threadpool **out);
/* Stops and joins the pool's threads and frees it. Free (or switch away) every runner that uses
 * it first. NULL is ignored. */
void tconv_threadpool_free(tconv_threadpool *pool);
/* Threads the pool has started so far (0 for NULL). */
int tconv_threadpool_thread_count(const tconv_threadpool *pool);

/* ---------------------------------------------------------------- runners */

/* Prepares `model` for running within `limits` (TCONV_LIMIT_THREADS, TCONV_LIMIT_MEMORY_BYTES;
 * NULL: the defaults, one thread per core and 16 GiB). The model must outlive the runner and must
 * not be edited while it exists. On success *out is the runner (free it with
 * tconv_runner_free). A failure's message is tconv_model_last_error(model). Errors:
 * TCONV_ERR_USAGE, TCONV_ERR_UNSUPPORTED (an op, dtype or opset the runtime lacks; the node is
 * named), TCONV_ERR_LIMIT (the planned memory exceeds the limit), TCONV_ERR_INVALID,
 * TCONV_ERR_NOMEM. */
tconv_status tconv_runner_new(tconv_model *model, const tconv_limits *limits, tconv_runner **out);
/* tconv_runner_new with the two choices that shape the plan:
 * - convention: whose pad split ConvTranspose uses for auto_pad SAME_UPPER/SAME_LOWER
 *   (TCONV_CONVENTION_ONNX: the spec; ORT / ORT_LEGACY: onnxruntime's, as the legalization's
 *   convention), so a rewrite made for a backend can be run beside its original;
 * - fused: true lets the runtime compute ConvTranspose -> Slice -> Pad -> Add in one call (what
 *   tconv_runner_new does); false runs every node as written, as a backend would (a proof).
 * Errors: those of tconv_runner_new, and TCONV_ERR_USAGE for a convention outside the enum. */
tconv_status tconv_runner_new_with(tconv_model *model, const tconv_limits *limits,
                                   tconv_convention convention, bool fused, tconv_runner **out);
/* Frees the runner with its inputs and outputs. NULL is ignored. */
void tconv_runner_free(tconv_runner *runner);

/* The message of the runner's last failed call; "" after a success. Owned by the runner. */
const char *tconv_runner_last_error(const tconv_runner *runner);

/* The graph inputs that need data (inputs that are not initializers), in graph order: name,
 * dtype, rank, and dim `axis` (-1 for a symbolic or unknown dim). NULL / UNDEFINED / -1 when an
 * index is out of range. */
size_t tconv_runner_input_count(const tconv_runner *runner);
const char *tconv_runner_input_name(const tconv_runner *runner, size_t index);
tconv_dtype tconv_runner_input_dtype(const tconv_runner *runner, size_t index);
int tconv_runner_input_rank(const tconv_runner *runner, size_t index);
int64_t tconv_runner_input_dim(const tconv_runner *runner, size_t index, int axis);
/* The index of the input called `name`. Errors: TCONV_ERR_USAGE (no such input). */
tconv_status tconv_runner_find_input(tconv_runner *runner, const char *name, size_t *index);

/* Sets input `index` to a copy of `nbytes` bytes at `data` with the given dtype and dims.
 * The float8 types take their 8-bit codes; int4, uint4, int2, uint2 and float4e2m1 take one byte
 * an element (the value, sign-extended, or the 4-bit code), not TensorProto's packed layout, and
 * outputs of those types come back the same way (.pb files are packed as ONNX packs them).
 * Errors: TCONV_ERR_USAGE (bad index, rank or dims, nbytes that does not match, a dtype the
 * runtime does not compute with), TCONV_ERR_NOMEM. Dtype and static dims are checked against
 * the graph when it runs. */
tconv_status tconv_runner_set_input(tconv_runner *runner, size_t index, tconv_dtype dtype, int rank,
                                    const int64_t *dims, const void *data, size_t nbytes);
/* tconv_runner_set_input without the copy: the runner reads the caller's `data` in place in
 * every run until input `index` is set again or the runner is freed, and never writes or frees
 * it; the caller keeps it alive and unchanged meanwhile (the Python package passes numpy
 * buffers this way). Errors: those of tconv_runner_set_input but NOMEM. */
tconv_status tconv_runner_set_input_borrowed(tconv_runner *runner, size_t index, tconv_dtype dtype,
                                             int rank, const int64_t *dims, const void *data,
                                             size_t nbytes);
/* Runs the runner's kernels on `pool` (not owned: it must outlive the runner, or until the next
 * call here) instead of the runner's own; NULL goes back to the runner's own. Errors:
 * TCONV_ERR_USAGE (NULL runner). */
tconv_status tconv_runner_set_threadpool(tconv_runner *runner, tconv_threadpool *pool);
/* Measured thread caps, on by default for a runner with several threads. After a warm-up (5
 * runs and 10 ms) with given input shapes, the runner times every node at its thread count,
 * half of it, a quarter ... and one thread (24 runs at 2 threads, 42 at 16), then keeps each
 * node at the count it ran quickest at, or all nodes at one count when that ran quicker as a
 * whole. A node whose split costs more than it saves (its data moving between the cores'
 * caches) runs on fewer threads, and a model does not run slower than on one thread. Afterwards
 * the runner times whole runs only, and measures again when they get 20% slower than what it
 * chose (the machine changed: other load, a virtual machine's host) and after 256 runs, then
 * 512, ... up to 16384 while its decision stays the same. The outputs are the same bits
 * whatever the counts. Off: every node on the count the cost model gives it, run after run.
 * Turning it on again measures anew. Errors: TCONV_ERR_USAGE (NULL runner). */
tconv_status tconv_runner_set_thread_tuning(tconv_runner *runner, bool enabled);
/* Gives symbolic dim `name` (a dim_param of an input) a value for the random inputs below. */
tconv_status tconv_runner_bind_dim(tconv_runner *runner, const char *name, int64_t value);
/* Fills input `index` with seeded random data of its declared type: floats in [-1, 1], small
 * non-negative integers, random bools. Errors: TCONV_ERR_USAGE (a symbolic dim without a
 * binding, an unknown dim; the input and dim are named), TCONV_ERR_UNSUPPORTED, NOMEM. */
tconv_status tconv_runner_set_random_input(tconv_runner *runner, size_t index, uint64_t seed);
/* Every input at once, input i with seed + i (what `tconv-run model.onnx --seed S` feeds). */
tconv_status tconv_runner_set_random_inputs(tconv_runner *runner, uint64_t seed);
/* Sets input `index` from a serialized ONNX TensorProto file (input_0.pb of ONNX test data).
 * Errors: TCONV_ERR_IO, TCONV_ERR_PARSE, TCONV_ERR_INVALID, TCONV_ERR_UNSUPPORTED, NOMEM. */
tconv_status tconv_runner_load_input(tconv_runner *runner, size_t index, const char *pb_path);

/* Runs the graph on the inputs set. Errors: TCONV_ERR_USAGE (an input was never set; it is
 * named), TCONV_ERR_INVALID (inputs that do not fit the graph, bad data met by a kernel),
 * TCONV_ERR_UNSUPPORTED, TCONV_ERR_LIMIT, TCONV_ERR_NOMEM. */
tconv_status tconv_runner_run(tconv_runner *runner);

/* The graph outputs, in graph order. Name is known before a run; dtype, rank, dims and data
 * after a successful run (UNDEFINED / -1 / NULL before). Data is owned by the runner and valid
 * until the next run or tconv_runner_free; *nbytes (may be NULL) gets its size. */
size_t tconv_runner_output_count(const tconv_runner *runner);
const char *tconv_runner_output_name(const tconv_runner *runner, size_t index);
tconv_dtype tconv_runner_output_dtype(const tconv_runner *runner, size_t index);
int tconv_runner_output_rank(const tconv_runner *runner, size_t index);
int64_t tconv_runner_output_dim(const tconv_runner *runner, size_t index, int axis);
const void *tconv_runner_output_data(const tconv_runner *runner, size_t index, size_t *nbytes);
/* Hands output `index` of the last run to the caller without a copy: *data (64-byte aligned;
 * free it with tconv_free; NULL for an empty tensor) and *nbytes (may be NULL). Read its dtype
 * and dims first: afterwards the runner no longer holds that output (its dtype is UNDEFINED,
 * its data NULL, and save/check/checksum refuse it) until the next run. Errors:
 * TCONV_ERR_USAGE (no such output, no successful run, taken already, data NULL),
 * TCONV_ERR_NOMEM. */
tconv_status tconv_runner_take_output(tconv_runner *runner, size_t index, void **data,
                                      size_t *nbytes);

/* Writes output `index` of the last run as a serialized TensorProto file, atomically
 * (tconv/files.h). Errors: TCONV_ERR_USAGE (no such output, no run yet, a target that is not a
 * regular file or is one of the model's own files, as tconv_model_check_output_path),
 * TCONV_ERR_IO, TCONV_ERR_NOMEM. */
tconv_status tconv_runner_save_output(tconv_runner *runner, size_t index, const char *pb_path);

/* Compares output `index` of the last run with the TensorProto in expected_pb_path (same dtype
 * and shape, |got - expected| <= atol + rtol * |expected|, NaN equal to NaN), what `tconv-run
 * DIR` does per output. *max_abs_err and *max_rel_err (either may be NULL) get the largest
 * errors. Errors: TCONV_ERR_MISMATCH (the message says where), TCONV_ERR_USAGE, TCONV_ERR_IO,
 * TCONV_ERR_PARSE. */
tconv_status tconv_runner_check_output(tconv_runner *runner, size_t index,
                                       const char *expected_pb_path, double rtol, double atol,
                                       double *max_abs_err, double *max_rel_err);

/* Sum and sum of |x| of output `index` of the last run, as doubles: the checksum `tconv-run
 * MODEL` prints. Errors: TCONV_ERR_USAGE (no such output, no run yet, a NULL pointer). */
tconv_status tconv_runner_output_checksum(tconv_runner *runner, size_t index, double *sum,
                                          double *abs_sum);

/* ---------------------------------------------------------------- profiling */

/* Profiling: with `enabled`, every following run records, per executed step (node), its start
 * and duration, the threads its kernel used, its input and output shapes, and for a step that
 * computes several nodes (a fused ConvTranspose -> Slice -> Pad -> Add chain, an activation or
 * a BatchNormalization folded into a Conv) which ones; the fused nodes get their own (short)
 * events naming the node that computed them. Turning it on starts a new, empty profile;
 * turning it off stops recording and keeps what was recorded. Off (the default), a run costs
 * what it did before: one pointer test per step. Nodes folded into constants when the runner
 * was made run no more and are not in the profile. At most 1000000 events are kept (as
 * onnxruntime); the summary says how many more were not. Errors: TCONV_ERR_USAGE,
 * TCONV_ERR_NOMEM. */
tconv_status tconv_runner_set_profiling(tconv_runner *runner, bool enabled);
/* The profile as a Chrome trace (chrome://tracing, Perfetto), in the layout onnxruntime's
 * profiler writes: a JSON array of complete events ("ph": "X", "ts" and "dur" in microseconds,
 * "pid", "tid"), one "model_run" event (cat "Session") per run and one "<node>_kernel_time"
 * event (cat "Node") per step, whose args hold op_name, node_name, provider ("tconv"),
 * thread_count, input_type_shape and output_type_shape ([{"float": [1, 3, 8, 8]}, ...]; {} for
 * an omitted optional value), fused_ops (the op types this step's kernel computed besides its
 * own) or fused_into (the node that computed this one). On success *json is NUL-terminated;
 * free it with tconv_free. Errors: TCONV_ERR_USAGE (profiling was never turned on),
 * TCONV_ERR_NOMEM. */
tconv_status tconv_runner_profile_json(tconv_runner *runner, char **json);
/* Writes that trace to `path` atomically (tconv/files.h). Errors (the message names the file):
 * those of tconv_runner_profile_json, TCONV_ERR_USAGE (a target that is not a regular file or
 * is one of the model's own files), TCONV_ERR_IO. */
tconv_status tconv_runner_write_profile(tconv_runner *runner, const char *path);
/* The `top` nodes with the most time over all profiled runs, one line each after a header:
 * total ms, share of the time in main-graph nodes, calls, mean ms, op and node name, and the
 * ops fused into it ("profile:   1.234 ms  40.1%      3 x     0.411 ms  ConvTranspose  up1
 * (fused: Slice + Add)"). What `tconv-run --profile` prints on stderr. On success *text is
 * NUL-terminated; free it with tconv_free. Errors: those of tconv_runner_profile_json. */
tconv_status tconv_runner_profile_summary(tconv_runner *runner, size_t top, char **text);

/* The matrix-multiply instruction set the runtime's kernels use on this machine ("avx512",
 * "avx2" or "portable"). A static string. */
const char *tconv_runtime_gemm_isa(void);

/* The ops of `model` (all graphs) that the runtime has no kernel for at the model's opset, each
 * once with its count and the paths of its first three nodes: *count of them, and *text
 * "ConstantOfShape x2 (cos_1, cos_2), com.example.Scale x1 (If_1/else_branch/scale)" (names
 * escaped; free it with tconv_free; "" when none). Errors: TCONV_ERR_USAGE, TCONV_ERR_NOMEM. */
tconv_status tconv_runtime_missing_ops(tconv_model *model, size_t *count, char **text);

/* ---------------------------------------------------------------- ONNX test data */

/* An ONNX test directory: DIR/model.onnx and the data sets DIR/test_data_set_N, each with
 * input_0.pb, input_1.pb, ... (the graph inputs that take data, in order) and output_0.pb, ...
 * (the expected graph outputs), as ONNX's node tests and `tconv-run DIR` use them.
 *
 *   tconv_runner_load_data_set(r, set);    inputs from the set's input_N.pb
 *   tconv_runner_run(r);
 *   tconv_runner_check_data_set(r, set, rtol, atol, &abs_err, &rel_err);
 *
 * or tconv_runner_run_data_set for the three at once. */
typedef struct tconv_test_dir tconv_test_dir;

/* Lists the test_data_set_* folders of `dir` (sorted by their number). On success *out is the
 * listing; free it with tconv_test_dir_free. On failure *out is NULL and, when `message` is not
 * NULL, the reason is written into message[0 .. message_size-1]. Errors: TCONV_ERR_USAGE (NULL
 * arguments, no test_data_set_* folder), TCONV_ERR_IO (dir cannot be read), TCONV_ERR_NOMEM. */
tconv_status tconv_test_dir_open(const char *dir, tconv_test_dir **out, char *message,
                                 size_t message_size);
/* NULL is ignored. */
void tconv_test_dir_free(tconv_test_dir *test_dir);
/* DIR/model.onnx (trailing slashes of DIR dropped); owned by the listing. */
const char *tconv_test_dir_model_path(const tconv_test_dir *test_dir);
/* The data sets: count, and the path DIR/test_data_set_N of set `index` (NULL when out of
 * range); owned by the listing. */
size_t tconv_test_dir_data_set_count(const tconv_test_dir *test_dir);
const char *tconv_test_dir_data_set(const tconv_test_dir *test_dir, size_t index);

/* Sets every input from data_set_dir/input_N.pb. Errors: TCONV_ERR_INVALID (the set has not
 * one file per input), TCONV_ERR_IO, TCONV_ERR_PARSE, TCONV_ERR_UNSUPPORTED, TCONV_ERR_USAGE,
 * TCONV_ERR_NOMEM; the message names the file. */
tconv_status tconv_runner_load_data_set(tconv_runner *runner, const char *data_set_dir);
/* Compares every output of the last run with data_set_dir/output_N.pb, as
 * tconv_runner_check_output; *max_abs_err and *max_rel_err (may be NULL) get the largest errors
 * over all outputs. Errors: TCONV_ERR_MISMATCH (the message names the first output that differs,
 * or says that the set has not one file per output), TCONV_ERR_USAGE (no run yet),
 * TCONV_ERR_IO, TCONV_ERR_PARSE, TCONV_ERR_NOMEM. */
tconv_status tconv_runner_check_data_set(tconv_runner *runner, const char *data_set_dir,
                                         double rtol, double atol, double *max_abs_err,
                                         double *max_rel_err);
/* Load, run and check one data set. Errors: those of the three calls. */
tconv_status tconv_runner_run_data_set(tconv_runner *runner, const char *data_set_dir, double rtol,
                                       double atol, double *max_abs_err, double *max_rel_err);

/* ---------------------------------------------------------------- comparing two models */

/* A comparison with tconv-import's --check defaults: 1 run, seed 1, rtol 1e-4, atol 1e-5.
 * On success *out is the comparison; free it with tconv_comparison_free. Errors:
 * TCONV_ERR_USAGE (out is NULL), TCONV_ERR_NOMEM. */
tconv_status tconv_comparison_new(tconv_comparison **out);
/* NULL is ignored. */
void tconv_comparison_free(tconv_comparison *comparison);

/* The message of the comparison's last failed call; "" after a success. Owned by the
 * comparison. */
const char *tconv_comparison_last_error(const tconv_comparison *comparison);

/* Number of seeded runs (1 .. 1000000); run r uses seed + r. Errors: TCONV_ERR_USAGE. */
tconv_status tconv_comparison_set_runs(tconv_comparison *comparison, size_t runs);
tconv_status tconv_comparison_set_seed(tconv_comparison *comparison, uint64_t seed);
/* Tolerances (>= 0). A float16 or bfloat16 output is compared at no less than two units of its
 * type (rtol 2^-9 or 2^-6, and atol that much of the output's largest magnitude): such models
 * round after every op, and a rewrite moves roundings. Errors: TCONV_ERR_USAGE. */
tconv_status tconv_comparison_set_tolerance(tconv_comparison *comparison, double rtol, double atol);
/* The runtime limits (threads, memory) for the models' runs; copied, NULL: the defaults. */
tconv_status tconv_comparison_set_limits(tconv_comparison *comparison, const tconv_limits *limits);
/* The ConvTranspose convention both models run under (TCONV_CONVENTION_ONNX by default): the
 * one the rewrite was made for, so that both sides mean the same. Comparisons always run the
 * graphs as written (unfused). Errors: TCONV_ERR_USAGE (a value outside the enum). */
tconv_status tconv_comparison_set_convention(tconv_comparison *comparison,
                                             tconv_convention convention);
/* A value for symbolic input dim `name` (copied), as tconv_runner_bind_dim. */
tconv_status tconv_comparison_bind_dim(tconv_comparison *comparison, const char *name,
                                       int64_t value);

/* Runs `reference` and `candidate` on the same random inputs (generated from the reference's
 * inputs; the candidate must have the same number of inputs and outputs) and compares every
 * output. TCONV_OK: every output of every run is within tolerance. TCONV_ERR_MISMATCH: some is
 * not (see the per-output results below; the message names the first), or the candidate returns
 * an empty output for inputs the reference refuses as invalid. Any other status: the
 * comparison could not run (a model that does not load into the runtime, bad dims, ...); the
 * message says which model. Messages are tconv_comparison_last_error. The models are not
 * changed. */
tconv_status tconv_comparison_run(tconv_comparison *comparison, tconv_model *reference,
                                  tconv_model *candidate);

/* ---------------------------------------------------------------- proving each rewrite alone */

/* The local proof: for every rewrite in `report` (what tconv_pipeline_run made of `rewritten`,
 * `original` being a copy made before: tconv_model_clone, or the same file read again), the
 * original node alone against the nodes that replaced it alone, found by identity (node ids, not
 * names), as two small models whose inputs are the node's inputs (initializers copied, the
 * others with the shapes shape inference gave them in `rewritten`), on the comparison's seeded
 * runs, in the node's dtype. No other op of the model is involved, so a model with ops the
 * runtime lacks can still be proven rewrite by rewrite. A symbolic input dim is tried at its
 * bound value (tconv_comparison_bind_dim) and at the two sizes above it; a dim shape inference
 * left open takes the size a run of `original` on the comparison's first seeded inputs gives it
 * (where the runtime has every op; the node is then also proven on the values of that run), else
 * it is guessed (3, 4, 5); tconv_comparison_rewrite_shapes says which. Where an input dim is not
 * static, every such dim is also tried at 1 and then 2, where a crop or pad can eat a whole
 * axis: there both models may refuse the inputs (sizes shows "(both fail)"); the rewrite
 * answering there with an empty tensor is a mismatch.
 * TCONV_OK: every rewrite proven. TCONV_ERR_MISMATCH: some rewrite differs. TCONV_ERR_USAGE:
 * `original` is not a copy of the model the report was made on. Another status: some rewrite
 * could not be proven (an input of unknown rank, ...); the message names the node. Per-rewrite
 * results below, in the report's order. */
tconv_status tconv_comparison_run_rewrites(tconv_comparison *comparison, tconv_model *original,
                                           tconv_model *rewritten, const tconv_report *report);
/* Per rewrite of the last tconv_comparison_run_rewrites: the node's name (with its subgraph path:
 * "If_1/else_branch/up"), the input shapes tried ("x[1,8,5,7] and the values a run of the model
 * gives; x[2,8,6,8]"; a guessed dim reads "3 guessed"), the runs made, the largest errors, whether
 * it was proven, and why not (NULL when proven). Strings owned by the comparison. 0 / NULL / false
 * out of range. */
size_t tconv_comparison_rewrite_count(const tconv_comparison *comparison);
const char *tconv_comparison_rewrite_node(const tconv_comparison *comparison, size_t index);
const char *tconv_comparison_rewrite_sizes(const tconv_comparison *comparison, size_t index);
size_t tconv_comparison_rewrite_runs(const tconv_comparison *comparison, size_t index);
double tconv_comparison_rewrite_max_abs_error(const tconv_comparison *comparison, size_t index);
double tconv_comparison_rewrite_max_rel_error(const tconv_comparison *comparison, size_t index);
bool tconv_comparison_rewrite_proven(const tconv_comparison *comparison, size_t index);
const char *tconv_comparison_rewrite_failure(const tconv_comparison *comparison, size_t index);
/* Where rewrite `index` took its input shapes from (a static string; NULL out of range):
 *   "inferred"  every dim static from shape inference or the model's declarations;
 *   "given"     some dims symbolic, at the values bound (tconv_comparison_bind_dim) and above;
 *   "run"       some dims left open by shape inference, at the sizes a run of the original on the
 *               comparison's first seeded inputs gave them (the node is also proven on those
 *               values themselves);
 *   "guessed"   some dim neither inferred, bound nor seen in a run (the runtime lacks an op of
 *               the model, say): tried at 3, 4 and 5, and marked "guessed" in the sizes. */
const char *tconv_comparison_rewrite_shapes(const tconv_comparison *comparison, size_t index);
/* The proof as JSON, for `tconv-import --report`: {"rewrites": [{"node", "proven", "sizes",
 * "runs", "max_abs_err", "max_rel_err", "failure"}...], "whole_model": {"status", "reason",
 * "outputs": [{"name", "max_abs_err", "max_rel_err", "ok"}...]}} with the caller's whole-model
 * status ("proven", "skipped", "mismatch") and reason (NULL: none); outputs are those of the last
 * tconv_comparison_run. On success *json is NUL-terminated; free it with tconv_free. Errors:
 * TCONV_ERR_USAGE, TCONV_ERR_NOMEM. */
tconv_status tconv_comparison_proof_json(const tconv_comparison *comparison,
                                         const char *whole_status, const char *whole_reason,
                                         char **json);

/* Per-output results of the last run (in the reference's output order): name (owned by the
 * comparison), the largest absolute and relative errors over all runs, whether every run was
 * within tolerance, and the first failure ("seed S: output 'y': ..."; NULL when it matched).
 * 0 / NULL / false when index is out of range or nothing ran. */
size_t tconv_comparison_output_count(const tconv_comparison *comparison);
const char *tconv_comparison_output_name(const tconv_comparison *comparison, size_t index);
double tconv_comparison_max_abs_error(const tconv_comparison *comparison, size_t index);
double tconv_comparison_max_rel_error(const tconv_comparison *comparison, size_t index);
bool tconv_comparison_output_matches(const tconv_comparison *comparison, size_t index);
const char *tconv_comparison_output_failure(const tconv_comparison *comparison, size_t index);

#ifdef __cplusplus
}
#endif

#endif
