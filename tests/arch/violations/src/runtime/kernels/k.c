/* A kernel that includes a header of compute past its door (compute.h). */
#include "runtime/compute/g.h"
