#include <stdio.h>

#include <tconv/tconv.h>

int main(int argc, char **argv) {
    char message[1024];
    tconv_model *model = NULL, *original = NULL;
    tconv_pipeline *pipeline = NULL;
    tconv_comparison *check = NULL;
    if (argc != 3) {
        fprintf(stderr, "usage: %s in.onnx out.onnx\n", argv[0]);
        return 2;
    }
    if (tconv_model_read_file(argv[1], NULL, &model, message, sizeof message) != TCONV_OK) {
        fprintf(stderr, "%s\n", message);
        return 1;
    }
    tconv_status st = tconv_model_clone(model, &original);
    if (st == TCONV_OK)
        st = tconv_pipeline_new(&pipeline);
    if (st == TCONV_OK && (st = tconv_pipeline_run(pipeline, model, NULL)) != TCONV_OK)
        fprintf(stderr, "%s\n", tconv_model_last_error(model));
    if (st == TCONV_OK)
        st = tconv_comparison_new(&check);
    if (st == TCONV_OK && (st = tconv_comparison_run(check, original, model)) != TCONV_OK)
        fprintf(stderr, "%s\n", tconv_comparison_last_error(check));
    if (st == TCONV_OK && (st = tconv_model_write_file(model, argv[2])) != TCONV_OK)
        fprintf(stderr, "%s\n", tconv_model_last_error(model));
    tconv_comparison_free(check);
    tconv_pipeline_free(pipeline);
    tconv_model_free(original);
    tconv_model_free(model);
    printf("%s: %s\n", argv[2], tconv_status_name(st));
    return st == TCONV_OK ? 0 : 1;
}
