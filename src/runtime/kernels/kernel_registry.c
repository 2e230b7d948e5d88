/* The kernel registry: the kernels ir/ops.def names, indexed by op table entry, and the adapter
 * that gives an unprepared kernel (K) the prepared form (KP) the executor runs. */
#include "runtime/kernels/kernel.h"
#include "ir/check.h"

#include <string.h>

typedef struct kernel_entry {
    tc_kernel_fn run;             /* K(fn): the unprepared kernel */
    tc_kernel_prepare_fn prepare; /* KP(fn): the prepared kernel's prepare */
} kernel_entry;

#define K(fn)                                                                                      \
    { fn, NULL }
#define KP(fn)                                                                                     \
    { NULL, fn }
#define K0                                                                                         \
    { NULL, NULL }
#define TC_OP(dom, name, since, until, in_min, in_max, out_min, out_max, attrs, shape, kernel)     \
    [TC_OP_##name##_##since] = kernel,
static const kernel_entry KERNELS[TC_OP_COUNT] = {
#include "ir/ops.def"
};
#undef TC_OP
#undef K
#undef KP
#undef K0

static const kernel_entry *entry_of(tc_op op) {
    /* TC_OP_NONE: an op the table lacks; anything past the table is a corrupt node */
    return op > TC_OP_NONE && TC_ALWAYS(op < TC_OP_COUNT) ? &KERNELS[op] : NULL;
}

tc_kernel_fn tc_kernel_for(tc_op op) {
    const kernel_entry *e = entry_of(op);
    if (!e)
        return NULL;
    return e->prepare ? tc_kernel_prepare_and_run : e->run;
}

tconv_status tc_kernel_prepare(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    memset(out, 0, sizeof *out);
    const kernel_entry *e = entry_of(pc->op);
    if (!e || (!e->run && !e->prepare))
        return tc_error_set(pc->err, TCONV_ERR_UNSUPPORTED, "%s has no kernel", pc->node->op_type);
    if (e->prepare)
        return e->prepare(pc, out);
    /* the adapter: nothing to prepare, the kernel reads its node on every call */
    out->run = e->run;
    out->reads_node = true;
    return TCONV_OK;
}

tconv_status tc_kernel_prepare_and_run(tc_kernel_ctx *ctx) {
    const tconv_node *node = ctx->node;
    tc_arena *arena = tc_arena_create();
    if (!arena)
        return tc_error_nomem(ctx->err, "a kernel's parameters");
    /* a node built by hand has no op resolved yet */
    tc_op op =
        node->op != TC_OP_NONE ? node->op : tc_op_find(node->domain, node->op_type, ctx->opset);
    tc_kernel_prepare_ctx pc = {
        .node = node, .op = op, .opset = ctx->opset, .arena = arena, .err = ctx->err};
    tc_kernel_prepared prepared;
    tconv_status st = tc_kernel_prepare(&pc, &prepared);
    size_t n_names = ctx->n_inputs > node->n_inputs ? ctx->n_inputs : node->n_inputs;
    const char **names = tc_arena_calloc(arena, n_names + 1, sizeof *names);
    if (st == TCONV_OK && !names)
        st = tc_error_nomem(ctx->err, "a kernel's parameters");
    if (st == TCONV_OK) {
        for (size_t i = 0; i < n_names; i++)
            names[i] = i < node->n_inputs && node->inputs[i] && node->inputs[i]->name
                           ? node->inputs[i]->name
                           : "";
        tc_kernel_ctx run = *ctx;
        run.node = prepared.reads_node ? node : NULL;
        run.params = prepared.params;
        run.work = prepared.work;
        run.op_type = node->op_type;
        run.input_names = names;
        st = prepared.run(&run);
    }
    tc_arena_destroy(arena);
    return st;
}

tconv_status tc_kernel_check_node_attrs(const tconv_node *node, tc_op op, int64_t opset,
                                        tc_error *err) {
    for (size_t i = 0; i < node->n_attrs; i++) {
        const char *name = node->attrs[i].name ? node->attrs[i].name : "";
        if (!tc_op_attr_find(op, name))
            return tc_error_set(err, TCONV_ERR_UNSUPPORTED,
                                "unsupported attribute '%s' for %s at opset %lld", name,
                                node->op_type, (long long)opset);
    }
    return TCONV_OK;
}
