/* The kernel registry: every kernel table, looked up by (domain, op type, opset). */
#include "runtime/kernel.h"
#include "runtime/session_internal.h"

#include <string.h>

static const tc_kernel_def *const KERNEL_TABLES[] = {
    tc_kernels_conv_transpose, tc_kernels_conv,   tc_kernels_pool, tc_kernels_linalg,
    tc_kernels_elementwise,    tc_kernels_tensor, tc_kernels_nn,   tc_kernels_control,
};

#define N_TABLES (sizeof KERNEL_TABLES / sizeof KERNEL_TABLES[0])

static bool is_default_domain(const char *domain) {
    return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

static bool same_domain(const char *a, const char *b) {
    if (is_default_domain(a) || is_default_domain(b))
        return is_default_domain(a) && is_default_domain(b);
    return strcmp(a, b) == 0;
}

static bool same_op(const tc_kernel_def *def, const char *domain, const char *op_type) {
    return strcmp(def->op_type, op_type) == 0 && same_domain(def->domain, domain);
}

const tc_kernel_def *tc_kernel_lookup(const char *domain, const char *op_type, int64_t opset) {
    if (!op_type)
        return NULL;
    for (size_t t = 0; t < N_TABLES; t++) {
        for (const tc_kernel_def *def = KERNEL_TABLES[t]; def->op_type; def++) {
            if (same_op(def, domain, op_type) && opset >= def->since_version &&
                opset <= def->until_version)
                return def;
        }
    }
    return NULL;
}

bool tc_kernel_opset_span(const char *domain, const char *op_type, int *first, int *last) {
    bool found = false;
    for (size_t t = 0; op_type && t < N_TABLES; t++) {
        for (const tc_kernel_def *def = KERNEL_TABLES[t]; def->op_type; def++) {
            if (!same_op(def, domain, op_type))
                continue;
            if (!found || def->since_version < *first)
                *first = def->since_version;
            if (!found || def->until_version > *last)
                *last = def->until_version;
            found = true;
        }
    }
    return found;
}
