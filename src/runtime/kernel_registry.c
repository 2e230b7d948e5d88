/* The kernel registry: the kernels ir/ops.def names, indexed by op table entry. */
#include "runtime/kernel.h"
#include "ir/check.h"

#define K(fn) fn
#define K0 NULL
#define TC_OP(dom, name, since, until, in_min, in_max, out_min, out_max, attrs, shape, kernel)     \
    [TC_OP_##name##_##since] = kernel,
static const tc_kernel_fn KERNELS[TC_OP_COUNT] = {
#include "ir/ops.def"
};
#undef TC_OP
#undef K
#undef K0

tc_kernel_fn tc_kernel_for(tc_op op) {
    /* TC_OP_NONE: an op the table lacks; anything past the table is a corrupt node */
    return op > TC_OP_NONE && TC_ALWAYS(op < TC_OP_COUNT) ? KERNELS[op] : NULL;
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
