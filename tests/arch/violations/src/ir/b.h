/* Fixture: closes the cycle with a.h (a quoted include found beside the file). */
#include "a.h"
