/* Fixture: a CLI including the runtime beside the public header. */
#include <stdio.h>

#include "runtime/r.h"
#include "tconv/tconv.h"
