/* The built-in ONNX function library: the bodies of ONNX ops tconv has no kernel for, as data
 * (src/runtime/data/onnx_functions.onnx, scripts/generate_onnx_functions.py says how they were
 * made), compiled into the library as bytes and loaded once per process by the importer. */
#include "api/api_internal.h"

#include <pthread.h>

/* cmake/embed_bytes.cmake's array of the file (generated into the build tree). */
extern const unsigned char tc_onnx_functions_data[];
extern const size_t tc_onnx_functions_data_size;

static pthread_once_t library_once = PTHREAD_ONCE_INIT;
static tconv_model *library; /* kept for the process: sessions borrow it */

static void load_library(void) {
    tc_error err;
    tc_load_options options;
    tc_load_options_init(&options);
    if (tc_model_load_buffer(tc_onnx_functions_data, tc_onnx_functions_data_size, NULL, &options,
                             &library, NULL, &err) != TCONV_OK)
        library = NULL; /* no library: ops without a kernel stay refused */
}

const tconv_model *tc_api_function_library(void) {
    pthread_once(&library_once, load_library);
    return library;
}
