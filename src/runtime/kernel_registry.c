/* The kernel registry: every kernel table, looked up by (domain, op type, opset). */
#include "runtime/kernel.h"
#include "runtime/session_internal.h"

#include <string.h>

static const tconv_kernel_def *const KERNEL_TABLES[] = {
    tconv_kernels_conv_transpose, tconv_kernels_conv,   tconv_kernels_pool, tconv_kernels_linalg,
    tconv_kernels_elementwise,    tconv_kernels_tensor, tconv_kernels_nn,   tconv_kernels_control,
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

static bool same_op(const tconv_kernel_def *def, const char *domain, const char *op_type) {
    return strcmp(def->op_type, op_type) == 0 && same_domain(def->domain, domain);
}

const tconv_kernel_def *tconv_kernel_lookup(const char *domain, const char *op_type,
                                            int64_t opset) {
    if (!op_type)
        return NULL;
    for (size_t t = 0; t < N_TABLES; t++) {
        for (const tconv_kernel_def *def = KERNEL_TABLES[t]; def->op_type; def++) {
            if (same_op(def, domain, op_type) && opset >= def->since_version &&
                opset <= def->until_version)
                return def;
        }
    }
    return NULL;
}

bool tconv_kernel_opset_span(const char *domain, const char *op_type, int *first, int *last) {
    bool found = false;
    for (size_t t = 0; op_type && t < N_TABLES; t++) {
        for (const tconv_kernel_def *def = KERNEL_TABLES[t]; def->op_type; def++) {
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
