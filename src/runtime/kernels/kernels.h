/* The kernels room's door: the kernel interface (kernel.h: the context, outputs, scratch, kept
 * node data, the host the executor gives, the registry) and the helpers kernels share
 * (kernel_util.h). The room holds every kernel of the op table and their private helpers
 * (conv_common, conv_lattice, kernels_f64, resize); it calls compute and budget, never the
 * session. */
#ifndef TC_RUNTIME_KERNELS_H
#define TC_RUNTIME_KERNELS_H

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

#endif
