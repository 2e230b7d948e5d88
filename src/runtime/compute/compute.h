/* The compute room's door: what the rooms above (budget, kernels, session) and src/api use of
 * it. The room holds the tensor type, element conversions and CPU probes, tensor copies and
 * broadcasting, the GEMM, the worker pool, the vector-math headers and the test hooks; it calls
 * no other room of the runtime. */
#ifndef TC_RUNTIME_COMPUTE_H
#define TC_RUNTIME_COMPUTE_H

#include "runtime/compute/broadcast.h"
#include "runtime/compute/convert.h"
#include "runtime/compute/cpu_features.h"
#include "runtime/compute/fast_exp.h"
#include "runtime/compute/fast_tanh.h"
#include "runtime/compute/gemm.h"
#include "runtime/compute/parallel.h"
#include "runtime/compute/rt_tensor.h"
#include "runtime/compute/tensor_copy.h"
#include "runtime/compute/test_hooks.h"
#include "runtime/compute/vec4.h"

#endif
