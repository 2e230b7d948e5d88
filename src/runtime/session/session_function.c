/* ONNX functions: a node whose op has no kernel runs as a function body, expanded when the
 * session is planned (the model is never changed): the body is planned as a subgraph of the
 * node's step (its own scope, no outer values) and the step's kernel runs it with the node's
 * inputs. Two sources, in this order:
 *   - the model's own functions (ModelProto.functions) of the node's domain, name and overload.
 *     Bodies whose attributes refer to the caller's (ref_attr_name) are refused for now: running
 *     them needs a copy of the body per call with the values put in;
 *   - the session's function library (tc_session_options.function_library: ONNX's schema
 *     bodies as its node tests expand them, scripts/generate_onnx_functions.py). Those bodies
 *     were built by ONNX for one node context each (most are context dependent), so one is used
 *     only for a node of the same op, opset, attributes (names and values), input presence,
 *     types and static shapes: the key the library records (FunctionProto.attribute_proto and
 *     value_info). Types and shapes are checked on the actual inputs when the node runs. */
#include "runtime/kernels/kernels.h"
#include "runtime/session/session_internal.h"

#include <stdlib.h>
#include <string.h>

static bool same_string(const char *a, const char *b) {
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* "" and "ai.onnx" are one domain. */
static const char *domain_of(const char *d) {
    return d && *d && strcmp(d, "ai.onnx") != 0 ? d : "";
}

static bool same_bytes(tc_bytes a, tc_bytes b) {
    return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static bool same_tensor(tconv_tensor *a, tconv_tensor *b) {
    if (!a || !b || a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++) {
        if (a->dims[i] != b->dims[i])
            return false;
    }
    const void *da, *db;
    size_t na, nb;
    tc_error ignored;
    if (tc_tensor_data(a, &da, &na, &ignored) != TCONV_OK ||
        tc_tensor_data(b, &db, &nb, &ignored) != TCONV_OK)
        return false;
    return na == nb && (na == 0 || memcmp(da, db, na) == 0);
}

/* Whether two attributes hold the same value (graphs never compare equal). */
static bool same_attr(const tc_attr *a, const tc_attr *b) {
    if (a->type != b->type || a->ref_attr_name || b->ref_attr_name)
        return false;
    switch (a->type) {
    case TCONV_ATTR_FLOAT:
        return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case TCONV_ATTR_INT:
        return a->i == b->i;
    case TCONV_ATTR_STRING:
        return same_bytes(a->s, b->s);
    case TCONV_ATTR_TENSOR:
        return same_tensor(a->t, b->t);
    case TCONV_ATTR_FLOATS:
        return a->n == b->n &&
               (a->n == 0 || memcmp(a->floats, b->floats, a->n * sizeof(float)) == 0);
    case TCONV_ATTR_INTS:
        return a->n == b->n && (a->n == 0 || memcmp(a->ints, b->ints, a->n * sizeof(int64_t)) == 0);
    case TCONV_ATTR_STRINGS:
        if (a->n != b->n)
            return false;
        for (size_t i = 0; i < a->n; i++) {
            if (!same_bytes(a->strings[i], b->strings[i]))
                return false;
        }
        return true;
    default:
        return false;
    }
}

/* The node's attributes are exactly the function's recorded ones. */
static bool same_attrs(const tconv_node *node, const tc_function *fn) {
    if (node->n_attrs != fn->n_attrs)
        return false;
    for (size_t i = 0; i < node->n_attrs; i++) {
        const tc_attr *want = NULL;
        for (size_t k = 0; k < fn->n_attrs && !want; k++) {
            if (same_string(fn->attrs[k].name, node->attrs[i].name))
                want = &fn->attrs[k];
        }
        if (!want || !same_attr(&node->attrs[i], want))
            return false;
    }
    return true;
}

static int64_t function_opset(const tc_function *fn, const char *domain) {
    for (size_t i = 0; i < fn->n_opsets; i++) {
        if (strcmp(domain_of(fn->opsets[i].domain), domain) == 0)
            return fn->opsets[i].version;
    }
    return 0;
}

/* Inputs the node gives, trailing omitted ones not counted. */
static size_t given_inputs(const tconv_node *node) {
    size_t n = node->n_inputs;
    while (n > 0 && !node->inputs[n - 1])
        n--;
    return n;
}

/* Outputs the node asks for, trailing omitted ones not counted. */
static size_t given_outputs(const tconv_node *node) {
    size_t n = node->n_outputs;
    while (n > 0 && !node->outputs[n - 1])
        n--;
    return n;
}

/* A formal input of a library body with no type stands for an input the node omits. */
static bool formal_given(const tconv_graph *body, size_t i) {
    return body->inputs[i].value && body->inputs[i].value->type.kind == TCONV_TYPE_TENSOR;
}

/* Input presence and the types the model declares fit the library body (shapes and the actual
 * types are checked when it runs). */
static bool library_inputs_fit(const tc_type_table *types, const tconv_node *node,
                               const tc_function *fn) {
    const tconv_graph *body = fn->body;
    if (given_inputs(node) != body->n_inputs || given_outputs(node) != body->n_outputs)
        return false;
    for (size_t i = 0; i < body->n_inputs; i++) {
        const tconv_value *in = node->inputs[i];
        if ((in != NULL) != formal_given(body, i))
            return false;
        const tc_type *t = in ? tc_type_seen(types, in) : NULL;
        if (t && t->kind == TCONV_TYPE_TENSOR && t->dtype != TCONV_DTYPE_UNDEFINED &&
            t->dtype != body->inputs[i].value->type.dtype)
            return false;
    }
    return true;
}

static bool body_refers_to_attrs(const tconv_graph *body) {
    for (const tconv_node *n = body->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_attrs; i++) {
            if (n->attrs[i].ref_attr_name)
                return true;
        }
    }
    return false;
}

static bool add_function(tc_session *s, tc_step_plan *step, const tc_function *fn) {
    const tc_function **grown = tc_arena_alloc(s->arena, (step->n_functions + 1) * sizeof *grown);
    if (!grown)
        return false;
    if (step->n_functions)
        memcpy(grown, step->functions, step->n_functions * sizeof *grown);
    grown[step->n_functions++] = fn;
    step->functions = grown;
    return true;
}

static bool omits_inputs(const tconv_node *node) {
    for (size_t i = 0; i < node->n_inputs; i++) {
        if (!node->inputs[i])
            return true;
    }
    return false;
}

/* *found: the model has a function of the node's name (then the status says whether it runs). */
static tconv_status local_function(tc_session *s, tc_step_plan *step, bool *found, tc_error *err) {
    const tconv_node *node = step->node;
    const tconv_model *m = s->model;
    for (size_t i = 0; i < m->n_functions; i++) {
        const tc_function *fn = m->functions[i];
        if (strcmp(domain_of(fn->domain), domain_of(node->domain)) != 0 || /* op names as data */
            !same_string(fn->name, node->op_type) || !same_string(fn->overload, node->overload))
            continue;
        *found = true;
        if (body_refers_to_attrs(fn->body))
            return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                                "model function %s: its body refers to the caller's attributes, "
                                "which the runtime does not substitute yet",
                                node->op_type);
        if (omits_inputs(node) || node->n_inputs != fn->body->n_inputs ||
            given_outputs(node) != fn->body->n_outputs)
            return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                                "model function %s takes %zu inputs and %zu outputs, the node "
                                "gives %zu and %zu (omitted ones are not supported yet)",
                                node->op_type, fn->body->n_inputs, fn->body->n_outputs,
                                given_inputs(node), given_outputs(node));
        return add_function(s, step, fn) ? TCONV_OK : tc_error_nomem(err, "an execution plan");
    }
    return TCONV_OK;
}

/* A library body made for this node's op, opset, attributes and inputs. */
static bool library_body_matches(const tc_type_table *types, const tc_function *fn,
                                 const tconv_node *node, int64_t opset) {
    const char *domain = domain_of(node->domain);
    /* op names as data: a function is found by the name the node calls it by */
    return strcmp(domain_of(fn->domain), domain) == 0 && same_string(fn->name, node->op_type) &&
           function_opset(fn, domain) == opset && same_attrs(node, fn) &&
           library_inputs_fit(types, node, fn);
}

static tconv_status library_functions(tc_session *s, tc_step_plan *step, tc_error *err) {
    const tconv_model *lib = s->options.function_library;
    for (size_t i = 0; lib && i < lib->n_functions; i++) {
        const tc_function *fn = lib->functions[i];
        if (library_body_matches(s->options.types, fn, step->node, step->opset) &&
            !add_function(s, step, fn))
            return tc_error_nomem(err, "an execution plan");
    }
    return TCONV_OK;
}

bool tc_function_body_available(const tconv_model *model, const tconv_model *library,
                                const tconv_node *node) {
    for (size_t i = 0; model && i < model->n_functions; i++) {
        const tc_function *fn = model->functions[i];
        if (strcmp(domain_of(fn->domain), domain_of(node->domain)) == 0 && /* op names as data */
            same_string(fn->name, node->op_type) && same_string(fn->overload, node->overload))
            return true; /* planning says whether it runs (and why not) */
    }
    int64_t opset = tc_graph_opset(node->graph, node->domain);
    for (size_t i = 0; library && i < library->n_functions; i++) {
        if (library_body_matches(NULL, library->functions[i], node, opset))
            return true;
    }
    return false;
}

tconv_status tc_plan_function_call(tc_session *session, tc_step_plan *step, tc_error *err) {
    if (session->function_depth >= TC_MAX_FUNCTION_DEPTH)
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "function bodies nest deeper than %d (a function that calls itself?)",
                            TC_MAX_FUNCTION_DEPTH);
    bool found = false;
    tconv_status st = local_function(session, step, &found, err);
    if (st == TCONV_OK && !found)
        st = library_functions(session, step, err);
    if (st != TCONV_OK || !step->n_functions)
        return st;
    step->kernel = tc_run_function_call;
    step->half_native = true; /* the body's own steps widen what they compute in float */
    return TCONV_OK;
}

/* ---------------------------------------------------------------- running */

static bool input_fits(const tconv_value *formal, const tc_rt_tensor *t) {
    const tc_type *type = &formal->type;
    if (type->kind != TCONV_TYPE_TENSOR)
        return true;
    if (type->dtype != TCONV_DTYPE_UNDEFINED && type->dtype != t->dtype)
        return false;
    if (type->rank < 0)
        return true;
    if (type->rank != t->rank)
        return false;
    for (int i = 0; i < t->rank; i++) {
        if (type->dims[i].kind == TCONV_DIM_STATIC && type->dims[i].value != t->dims[i])
            return false;
    }
    return true;
}

static bool body_fits(const tc_kernel_ctx *ctx, const tconv_graph *body) {
    for (size_t i = 0; i < body->n_inputs; i++) {
        const tc_rt_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
        if (t && !input_fits(body->inputs[i].value, t))
            return false;
    }
    return true;
}

tconv_status tc_run_function_call(tc_kernel_ctx *ctx) {
    const tc_step_plan *step = ctx->session ? ctx->session->current_step : NULL;
    if (!step || !step->n_functions)
        return tc_error_set(ctx->err, TCONV_ERR_USAGE, "a function call needs its session plan");
    const tc_function *fn = NULL;
    for (size_t i = 0; i < step->n_functions && !fn; i++) {
        if (body_fits(ctx, step->functions[i]->body))
            fn = step->functions[i];
    }
    if (!fn) {
        char shape[256] = "";
        const tc_rt_tensor *x = ctx->n_inputs ? ctx->inputs[0] : NULL;
        if (x)
            tc_shape_format(x->rank, x->dims, shape, sizeof shape);
        return tc_error_set(ctx->err, TCONV_ERR_UNSUPPORTED,
                            "no function body of %s fits these inputs (input 0: %s %s): the "
                            "library's bodies were built for other input types or shapes",
                            ctx->node->op_type, x ? tconv_dtype_name(x->dtype) : "none", shape);
    }
    const tconv_graph *body = fn->body;
    size_t n = body->n_inputs;
    tc_rt_tensor *ins = calloc(n ? n : 1, sizeof *ins);
    size_t n_out = body->n_outputs < ctx->n_outputs ? body->n_outputs : ctx->n_outputs;
    tc_rt_tensor *outs = calloc(n_out ? n_out : 1, sizeof *outs);
    if (!ins || !outs) {
        free(ins);
        free(outs);
        return tc_error_nomem(ctx->err, "function call arguments");
    }
    for (size_t i = 0; i < n; i++) {
        const tc_rt_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
        if (t) {
            ins[i] = *t;
            ins[i].owns_data = false;
        } else { /* an omitted input the body never reads: an empty placeholder */
            ins[i].dtype = TCONV_DTYPE_FLOAT;
            ins[i].rank = 1;
        }
    }
    tconv_status st = tc_kernel_run_subgraph(ctx, body, ins, n, outs, n_out);
    if (st == TCONV_OK) {
        for (size_t i = 0; i < n_out; i++)
            ctx->outputs[i] = outs[i];
    }
    free(ins);
    free(outs);
    return st;
}
