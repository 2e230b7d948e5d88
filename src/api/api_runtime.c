/* Public API: runners, a session of the runtime plus the inputs and outputs of its last run. */
#include "api/api_internal.h"
#include "ir/vec.h"
#include "runtime/session/session.h"

#include <stdlib.h>
#include <string.h>

/* The IR tensor lives in a scratch model only long enough to be copied out. */
tconv_status tc_api_tensor_load_pb(const char *path, size_t max_bytes, tc_rt_tensor *dst,
                                   tc_error *err) {
    tconv_model *scratch = NULL;
    tconv_tensor *t = NULL;
    tconv_status st = tc_model_create(&scratch, err);
    if (st == TCONV_OK)
        st = tc_tensor_load_pb_within(scratch, path, max_bytes, &t, err);
    if (st == TCONV_OK && (st = tc_rt_tensor_from_ir(t, dst, err)) != TCONV_OK)
        tc_error_prefix(err, st, "%s: ", path);
    tconv_model_free(scratch);
    return st;
}

/* ---------------------------------------------------------------- dim bindings */

tconv_status tc_api_dims_bind(tc_api_dims *dims, const char *name, int64_t value, tc_error *err) {
    if (!name || !*name || value < 0)
        return tc_error_set(err, TCONV_ERR_USAGE,
                            "a dim binding needs a name and a value >= 0 (got %lld)",
                            (long long)value);
    for (size_t i = 0; i < dims->count; i++) {
        if (strcmp(dims->items[i].name, name) == 0) {
            dims->items[i].value = value;
            return TCONV_OK;
        }
    }
    if (!TC_VEC_RESERVE(dims->items, dims->cap, dims->count + 1))
        return tc_error_nomem(err, "a dim binding");
    char *copy = strdup(name);
    if (!copy)
        return tc_error_nomem(err, "a dim binding");
    dims->items[dims->count].name = copy;
    dims->items[dims->count++].value = value;
    return TCONV_OK;
}

void tc_api_dims_free(tc_api_dims *dims) {
    for (size_t i = 0; i < dims->count; i++)
        free((char *)dims->items[i].name);
    free(dims->items);
    memset(dims, 0, sizeof *dims);
}

/* ---------------------------------------------------------------- life cycle */

static void release_all(tc_rt_tensor *tensors, size_t n) {
    for (size_t i = 0; tensors && i < n; i++)
        tc_rt_tensor_release(&tensors[i]);
}

void tconv_runner_free(tconv_runner *runner) {
    if (!runner)
        return;
    release_all(runner->inputs, runner->n_inputs);
    release_all(runner->outputs, runner->n_outputs);
    free(runner->inputs);
    free(runner->outputs);
    tc_api_dims_free(&runner->dims);
    tc_session_free(runner->session);
    tc_profile_free(runner->profile);
    free(runner);
}

tconv_status tconv_runner_new(tconv_model *model, const tconv_limits *limits, tconv_runner **out) {
    return tconv_runner_new_with(model, limits, TCONV_CONVENTION_ONNX, true, out);
}

tconv_status tconv_runner_new_with(tconv_model *model, const tconv_limits *limits,
                                   tconv_convention convention, bool fused, tconv_runner **out) {
    if (out)
        *out = NULL;
    if (!model)
        return TCONV_ERR_USAGE;
    if (!out)
        return tc_api_usage(model, "tconv_runner_new: out is NULL");
    if ((unsigned)convention > (unsigned)TCONV_CONVENTION_ORT_LEGACY)
        return tc_api_usage(model, "tconv_runner_new_with: unknown convention %d", (int)convention);
    tc_error *err = tc_api_begin(model);
    tconv_runner *r = calloc(1, sizeof *r);
    if (!r)
        return tc_api_end(model, tc_error_nomem(err, "a runner"));
    r->model = model;
    tc_session_options options;
    tc_api_session_options(limits, &options);
    options.convention = convention;
    options.unfused = !fused;
    tconv_status st = tc_api_session_create(model, &options, &r->session, err);
    if (st == TCONV_OK) {
        r->n_inputs = tc_session_input_count(r->session);
        r->n_outputs = tc_session_output_count(r->session);
        r->inputs = calloc(r->n_inputs + 1, sizeof *r->inputs);
        r->outputs = calloc(r->n_outputs + 1, sizeof *r->outputs);
        if (!r->inputs || !r->outputs)
            st = tc_error_nomem(err, "runner buffers");
    }
    if (st != TCONV_OK) {
        tconv_runner_free(r);
        return tc_api_end(model, st);
    }
    *out = r;
    return tc_api_end(model, TCONV_OK);
}

const char *tconv_runner_last_error(const tconv_runner *runner) {
    return runner ? runner->last_error.message : "";
}

/* Starts a fallible call on a runner: resets its error; checks the input index when asked. */
static tconv_status begin_call(tconv_runner *runner, size_t index, size_t limit, const char *what) {
    if (!runner)
        return TCONV_ERR_USAGE;
    tc_error_clear(&runner->last_error);
    if (index >= limit)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                            "%s: index %zu is out of range (%zu)", what, index, limit);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- inputs */

static const tconv_value *input_value(const tconv_runner *runner, size_t index) {
    return runner && index < runner->n_inputs ? tc_session_input(runner->session, index) : NULL;
}

size_t tconv_runner_input_count(const tconv_runner *runner) {
    return runner ? runner->n_inputs : 0;
}

const char *tconv_runner_input_name(const tconv_runner *runner, size_t index) {
    return tconv_value_name(input_value(runner, index));
}

tconv_dtype tconv_runner_input_dtype(const tconv_runner *runner, size_t index) {
    return tconv_value_dtype(input_value(runner, index));
}

int tconv_runner_input_rank(const tconv_runner *runner, size_t index) {
    return tconv_value_rank(input_value(runner, index));
}

int64_t tconv_runner_input_dim(const tconv_runner *runner, size_t index, int axis) {
    return tconv_value_dim(input_value(runner, index), axis);
}

tconv_status tconv_runner_find_input(tconv_runner *runner, const char *name, size_t *index) {
    tconv_status st = begin_call(runner, 0, 1, "tconv_runner_find_input");
    if (st != TCONV_OK)
        return st;
    if (!name || !index)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                            "tconv_runner_find_input: name and index must not be NULL");
    for (size_t i = 0; i < runner->n_inputs; i++) {
        if (strcmp(tconv_runner_input_name(runner, i), name) == 0) {
            *index = i;
            return TCONV_OK;
        }
    }
    return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                        "the model has no input '%s' that takes data (initializers cannot be "
                        "fed)",
                        name);
}

/* On success the new tensor replaces input `index` (the old one is released); on failure the
 * new tensor is released and the old input stays. Returns st. */
static tconv_status adopt_input(tconv_runner *runner, size_t index, tc_rt_tensor *t,
                                tconv_status st) {
    if (st != TCONV_OK) {
        tc_rt_tensor_release(t);
        return st;
    }
    tc_rt_tensor_release(&runner->inputs[index]);
    runner->inputs[index] = *t;
    return TCONV_OK;
}

/* The bytes of the inputs held besides input `index`. */
static uint64_t other_inputs_bytes(const tconv_runner *runner, size_t index) {
    uint64_t held = 0;
    for (size_t i = 0; i < runner->n_inputs; i++) {
        if (i != index)
            held += runner->inputs[i].nbytes;
    }
    return held;
}

/* Inputs are the caller's data held for the run: refuses, before the copy is made, an input of
 * `bytes` that would take the inputs held (with the initializers) past the memory limit. */
static tconv_status check_room(tconv_runner *runner, size_t index, uint64_t bytes) {
    return tc_session_check_input_bytes(runner->session, bytes + other_inputs_bytes(runner, index),
                                        tconv_runner_input_name(runner, index),
                                        &runner->last_error);
}

/* Starts a call that sets input `index`: the rank, dims and dtype the caller gives. */
static tconv_status begin_set_input(tconv_runner *runner, size_t index, tconv_dtype dtype, int rank,
                                    const int64_t *dims, const char *what) {
    tconv_status st = begin_call(runner, index, runner ? runner->n_inputs : 0, what);
    if (st != TCONV_OK)
        return st;
    tc_error *err = &runner->last_error;
    if (tc_api_check_dims(NULL, "", rank, dims, false, false) != TCONV_OK)
        return tc_error_set(err, TCONV_ERR_USAGE, "input '%s': bad rank %d or dims",
                            tconv_runner_input_name(runner, index), rank);
    if (tc_rt_dtype_size(dtype) == 0)
        return tc_error_set(err, TCONV_ERR_USAGE,
                            "input '%s': the runtime does not compute with %s",
                            tconv_runner_input_name(runner, index), tconv_dtype_name(dtype));
    return TCONV_OK;
}

/* The caller's `nbytes` at `data` must be what t's dtype and dims take. */
static tconv_status check_input_bytes(tconv_runner *runner, size_t index, const tc_rt_tensor *t,
                                      const void *data, size_t nbytes) {
    if (t->nbytes == nbytes && (nbytes == 0 || data))
        return TCONV_OK;
    return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                        "input '%s': %zu bytes given, %s[%lld] needs %zu",
                        tconv_runner_input_name(runner, index), nbytes, tconv_dtype_name(t->dtype),
                        (long long)t->n_elements, t->nbytes);
}

tconv_status tconv_runner_set_input(tconv_runner *runner, size_t index, tconv_dtype dtype, int rank,
                                    const int64_t *dims, const void *data, size_t nbytes) {
    tconv_status st = begin_set_input(runner, index, dtype, rank, dims, "tconv_runner_set_input");
    if (st != TCONV_OK)
        return st;
    tc_rt_tensor t = {0};
    st = check_room(runner, index, nbytes);
    if (st == TCONV_OK)
        st = tc_rt_tensor_alloc(&t, dtype, rank, dims, &runner->last_error);
    if (st == TCONV_OK)
        st = check_input_bytes(runner, index, &t, data, nbytes);
    if (st == TCONV_OK && nbytes)
        memcpy(t.data, data, nbytes);
    return adopt_input(runner, index, &t, st);
}

tconv_status tconv_runner_set_input_borrowed(tconv_runner *runner, size_t index, tconv_dtype dtype,
                                             int rank, const int64_t *dims, const void *data,
                                             size_t nbytes) {
    tconv_status st =
        begin_set_input(runner, index, dtype, rank, dims, "tconv_runner_set_input_borrowed");
    if (st != TCONV_OK)
        return st;
    tc_rt_tensor t = {0}; /* the caller's data: never freed here (owns_data false) */
    st = tc_rt_tensor_view(&t, dtype, rank, dims, (void *)data, &runner->last_error);
    if (st == TCONV_OK)
        st = check_input_bytes(runner, index, &t, data, nbytes);
    if (st == TCONV_OK)
        st = check_room(runner, index, nbytes);
    return adopt_input(runner, index, &t, st);
}

tconv_status tconv_runner_set_threadpool(tconv_runner *runner, tconv_threadpool *pool) {
    tconv_status st = begin_call(runner, 0, 1, "tconv_runner_set_threadpool");
    if (st == TCONV_OK)
        tc_session_set_pool(runner->session, pool ? pool->pool : NULL);
    return st;
}

tconv_status tconv_runner_set_thread_tuning(tconv_runner *runner, bool enabled) {
    tconv_status st = begin_call(runner, 0, 1, "tconv_runner_set_thread_tuning");
    if (st == TCONV_OK)
        tc_session_set_thread_tuning(runner->session, enabled);
    return st;
}

tconv_status tconv_runner_bind_dim(tconv_runner *runner, const char *name, int64_t value) {
    tconv_status st = begin_call(runner, 0, 1, "tconv_runner_bind_dim");
    if (st != TCONV_OK)
        return st;
    return tc_api_dims_bind(&runner->dims, name, value, &runner->last_error);
}

/* Random inputs take the declared shapes: the plan over those shapes (all inputs, initializers
 * and intermediates) must fit before the first one is made. */
static tconv_status check_random_inputs(tconv_runner *runner) {
    return tc_session_check_inputs(runner->session, runner->dims.items, runner->dims.count,
                                   &runner->last_error);
}

static tconv_status random_input(tconv_runner *runner, size_t index, uint64_t seed) {
    tc_rt_tensor t = {0};
    tconv_status st = tc_session_random_input(input_value(runner, index), seed, runner->dims.items,
                                              runner->dims.count, &t, &runner->last_error);
    if (st == TCONV_OK)
        st = check_room(runner, index, t.nbytes);
    return adopt_input(runner, index, &t, st);
}

tconv_status tconv_runner_set_random_input(tconv_runner *runner, size_t index, uint64_t seed) {
    tconv_status st =
        begin_call(runner, index, runner ? runner->n_inputs : 0, "tconv_runner_set_random_input");
    if (st == TCONV_OK)
        st = check_random_inputs(runner);
    return st == TCONV_OK ? random_input(runner, index, seed) : st;
}

tconv_status tconv_runner_set_random_inputs(tconv_runner *runner, uint64_t seed) {
    tconv_status st = begin_call(runner, 0, 1, "tconv_runner_set_random_inputs");
    if (st == TCONV_OK)
        st = check_random_inputs(runner);
    for (size_t i = 0; st == TCONV_OK && runner && i < runner->n_inputs; i++)
        st = random_input(runner, i, seed + i);
    return st;
}

tconv_status tconv_runner_load_input(tconv_runner *runner, size_t index, const char *pb_path) {
    tconv_status st =
        begin_call(runner, index, runner ? runner->n_inputs : 0, "tconv_runner_load_input");
    if (st != TCONV_OK)
        return st;
    if (!pb_path)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                            "tconv_runner_load_input: the path is NULL");
    /* the file is refused by its size, and its tensor by its dims, before either is read into
     * memory that the limit does not count */
    size_t room = tc_session_input_room(runner->session, other_inputs_bytes(runner, index));
    tc_rt_tensor t = {0};
    st = tc_api_tensor_load_pb(pb_path, room == SIZE_MAX ? 0 : room, &t, &runner->last_error);
    if (st == TCONV_ERR_LIMIT && room != SIZE_MAX)
        tc_error_prefix(&runner->last_error, st,
                        "input '%s': %zu bytes are left for it within the memory limit: ",
                        tconv_runner_input_name(runner, index), room);
    if (st == TCONV_OK)
        st = check_room(runner, index, t.nbytes);
    return adopt_input(runner, index, &t, st);
}

/* ---------------------------------------------------------------- running */

tconv_status tconv_runner_run(tconv_runner *runner) {
    tconv_status st = begin_call(runner, 0, 1, "tconv_runner_run");
    if (st != TCONV_OK)
        return st;
    for (size_t i = 0; i < runner->n_inputs; i++) {
        if (runner->inputs[i].dtype == TCONV_DTYPE_UNDEFINED)
            return tc_error_set(&runner->last_error, TCONV_ERR_USAGE, "input '%s' was not set",
                                tconv_runner_input_name(runner, i));
    }
    for (size_t i = 0; i < runner->n_outputs; i++)
        tc_session_recycle_output(runner->session, &runner->outputs[i]);
    runner->has_run = false;
    st = tc_session_run(runner->session, runner->inputs, runner->n_inputs, runner->outputs,
                        &runner->last_error);
    if (st != TCONV_OK) {
        release_all(runner->outputs, runner->n_outputs);
        return st;
    }
    runner->has_run = true;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- outputs */

/* Output `index` of the last run while the runner holds it (not taken). */
static const tc_rt_tensor *output_at(const tconv_runner *runner, size_t index) {
    return runner && runner->has_run && index < runner->n_outputs &&
                   runner->outputs[index].dtype != TCONV_DTYPE_UNDEFINED
               ? &runner->outputs[index]
               : NULL;
}

size_t tconv_runner_output_count(const tconv_runner *runner) {
    return runner ? runner->n_outputs : 0;
}

const char *tconv_runner_output_name(const tconv_runner *runner, size_t index) {
    return runner && index < runner->n_outputs
               ? tconv_value_name(tc_session_output(runner->session, index))
               : NULL;
}

tconv_dtype tconv_runner_output_dtype(const tconv_runner *runner, size_t index) {
    const tc_rt_tensor *t = output_at(runner, index);
    return t ? t->dtype : TCONV_DTYPE_UNDEFINED;
}

int tconv_runner_output_rank(const tconv_runner *runner, size_t index) {
    const tc_rt_tensor *t = output_at(runner, index);
    return t ? t->rank : -1;
}

int64_t tconv_runner_output_dim(const tconv_runner *runner, size_t index, int axis) {
    const tc_rt_tensor *t = output_at(runner, index);
    return t && axis >= 0 && axis < t->rank ? t->dims[axis] : -1;
}

const void *tconv_runner_output_data(const tconv_runner *runner, size_t index, size_t *nbytes) {
    const tc_rt_tensor *t = output_at(runner, index);
    if (nbytes)
        *nbytes = t ? t->nbytes : 0;
    return t ? t->data : NULL;
}

/* Starts a call about output `index` of the last run. */
static tconv_status begin_output_call(tconv_runner *runner, size_t index, const char *path,
                                      const char *what) {
    tconv_status st = begin_call(runner, index, runner ? runner->n_outputs : 0, what);
    if (st != TCONV_OK)
        return st;
    if (!runner->has_run)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE, "%s: no successful run yet",
                            what);
    if (!output_at(runner, index))
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                            "%s: output %zu was taken (tconv_runner_take_output)", what, index);
    if (!path)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE, "%s: the path is NULL", what);
    return TCONV_OK;
}

tconv_status tconv_runner_take_output(tconv_runner *runner, size_t index, void **data,
                                      size_t *nbytes) {
    if (data)
        *data = NULL;
    if (nbytes)
        *nbytes = 0;
    if (runner && !data)
        return tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                            "tconv_runner_take_output: data is NULL");
    /* a path of "" passes begin_output_call's check: this call writes no file */
    tconv_status st = begin_output_call(runner, index, "", "tconv_runner_take_output");
    if (st != TCONV_OK)
        return st;
    tc_rt_tensor *t = &runner->outputs[index];
    if (!t->owns_data && t->nbytes) { /* never so today: a run hands out owned outputs */
        void *copy = malloc(t->nbytes);
        if (!copy)
            return tc_error_nomem(&runner->last_error, "an output");
        memcpy(copy, t->data, t->nbytes);
        t->data = copy;
    }
    *data = t->nbytes ? t->data : NULL;
    if (!t->nbytes)
        tc_rt_tensor_release(t);
    if (nbytes)
        *nbytes = t->nbytes;
    memset(t, 0, sizeof *t);
    return TCONV_OK;
}

tconv_status tconv_runner_save_output(tconv_runner *runner, size_t index, const char *pb_path) {
    tconv_status st = begin_output_call(runner, index, pb_path, "tconv_runner_save_output");
    if (st != TCONV_OK)
        return st;
    tc_error *err = &runner->last_error;
    tconv_model *scratch = NULL;
    tconv_tensor *t = NULL;
    st = tc_model_refuse_own_file(runner->model, pb_path, err);
    if (st == TCONV_OK)
        st = tc_model_create(&scratch, err);
    if (st == TCONV_OK)
        st = tc_rt_tensor_to_ir(&runner->outputs[index], scratch,
                                tconv_runner_output_name(runner, index), &t, err);
    if (st == TCONV_OK)
        st = tc_tensor_save_pb(t, pb_path, err);
    tconv_model_free(scratch);
    return st;
}

tconv_status tconv_runner_check_output(tconv_runner *runner, size_t index,
                                       const char *expected_pb_path, double rtol, double atol,
                                       double *max_abs_err, double *max_rel_err) {
    double abs_err = 0, rel_err = 0;
    tconv_status st =
        begin_output_call(runner, index, expected_pb_path, "tconv_runner_check_output");
    if (st == TCONV_OK && !(rtol >= 0 && atol >= 0))
        st = tc_error_set(&runner->last_error, TCONV_ERR_USAGE,
                          "tconv_runner_check_output: tolerances must be >= 0");
    tc_rt_tensor expected = {0};
    if (st == TCONV_OK)
        st = tc_api_tensor_load_pb(expected_pb_path, 0, &expected, &runner->last_error);
    if (st == TCONV_OK &&
        (st = tc_rt_tensor_compare(&runner->outputs[index], &expected, rtol, atol, &abs_err,
                                   &rel_err, &runner->last_error)) != TCONV_OK)
        tc_error_prefix(&runner->last_error, st,
                        "output '%s': ", tconv_runner_output_name(runner, index));
    tc_rt_tensor_release(&expected);
    if (max_abs_err)
        *max_abs_err = abs_err;
    if (max_rel_err)
        *max_rel_err = rel_err;
    return st;
}
