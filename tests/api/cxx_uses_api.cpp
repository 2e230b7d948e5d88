// The public API from C++: tconv.h compiles as C++11 and the library links and runs. Builds a
// one-node model, validates it, runs it, and checks the output. Exit status 0 on success.
#include <cstdio>
#include <cstring>

#include "tconv/tconv.h"

static int fail(const char *what, tconv_model *model) {
    std::fprintf(stderr, "%s: %s\n", what, tconv_model_last_error(model));
    return 1;
}

int main() {
    if (tconv_version_number() != TCONV_VERSION_NUMBER)
        return 1;
    tconv_model *model = nullptr;
    if (tconv_model_new(&model) != TCONV_OK)
        return 1;
    tconv_graph *graph = tconv_model_graph(model);
    const int64_t dims[] = {4};
    tconv_value *x = nullptr, *y = nullptr;
    tconv_node *relu = nullptr;
    if (tconv_model_set_opset_version(model, "", 13) != TCONV_OK ||
        tconv_graph_new_input(graph, "x", TCONV_DTYPE_FLOAT, 1, dims, &x) != TCONV_OK ||
        tconv_graph_new_node(graph, "Relu", nullptr, "relu", nullptr, &relu) != TCONV_OK ||
        tconv_node_append_input(relu, x) != TCONV_OK ||
        tconv_node_new_output(relu, "y", &y) != TCONV_OK ||
        tconv_graph_append_output(graph, y) != TCONV_OK || tconv_model_validate(model) != TCONV_OK)
        return fail("building", model);

    tconv_runner *runner = nullptr;
    if (tconv_runner_new(model, NULL, &runner) != TCONV_OK)
        return fail("runner", model);
    const float in[] = {-1.0f, 2.0f, -3.0f, 4.0f};
    int rc = 1;
    if (tconv_runner_set_input(runner, 0, TCONV_DTYPE_FLOAT, 1, dims, in, sizeof in) == TCONV_OK &&
        tconv_runner_run(runner) == TCONV_OK) {
        size_t nbytes = 0;
        const float *out = static_cast<const float *>(tconv_runner_output_data(runner, 0, &nbytes));
        rc = nbytes == sizeof in && out[0] == 0.0f && out[1] == 2.0f && out[3] == 4.0f ? 0 : 1;
    } else {
        std::fprintf(stderr, "run: %s\n", tconv_runner_last_error(runner));
    }
    tconv_runner_free(runner);
    tconv_model_free(model);
    return rc;
}
