/* Fixture for arch.catches_violations: a.h and b.h include each other. */
#include "ir/b.h"
