/* Fixture: the runtime including the importer and reading a file. fopen( in a comment and in
 * the string below does not count; the call does. */
#include <stdio.h>

#include "importer/i.h"
#include "runtime/r.h"

static const char *text = "fopen(";

FILE *fixture_open(void) {
    return fopen(text, "r");
}
