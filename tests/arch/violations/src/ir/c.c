/* Fixture: the IR reaching into the passes. */
#include "passes/p.h"
#include "tconv/tconv.h"
