/* tconv-import with a wrong Slice kernel (test_hooks.h: every Slice start one too far), to show
 * that --check catches a wrong rewrite and then writes nothing. Built from the CLI's own sources
 * (tconv_import.c compiled with main renamed to tconv_import_main). */
#undef main
#include "runtime/compute/test_hooks.h"

int tconv_import_main(int argc, char **argv);

int main(int argc, char **argv) {
    tc_test_slice_start_shift = 1;
    return tconv_import_main(argc, argv);
}
