/* Fixture: a public header including an internal one. */
#include "ir/a.h"
