/* Fixture: a benchmark including the IR. */
#include "ir/a.h"
