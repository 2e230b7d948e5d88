/* compute includes a room above it. */
#include "runtime/kernels/kernels.h"
