# targets.*: --target, --target-file, --list-targets and the lint (tconv_cli_test of
# tests/cli/tests.cmake).
set(targets_work "${PROJECT_BINARY_DIR}/targets")
file(MAKE_DIRECTORY "${targets_work}")
set(targets_data "${CMAKE_CURRENT_LIST_DIR}/data")
set(import $<TARGET_FILE:tconv-import>)
set(models "${PROJECT_SOURCE_DIR}/models")
tconv_cli_test(targets_list CMD ${import} --list-targets EXIT 0
               STDOUT "tensorrt:.*tflite:.*coreml:.*qnn:.*ethos-u:.*rknn:.*tidl:.*conv-only:.*source: ")
tconv_cli_test(targets_list_file CMD ${import} --list-targets --target-file ${targets_data}/npu_example.txt
               EXIT 0 STDOUT "npu-example: .*example datasheet, section 4.6")
tconv_cli_test(targets_unknown CMD ${import} ${models}/unet/model.onnx --target npu9000 -o ${targets_work}/unknown.onnx
               EXIT 2 STDERR "unknown target 'npu9000'.*tflite" NOT_EXIST ${targets_work}/unknown.onnx)
tconv_cli_test(targets_bad_file CMD ${import} ${models}/unet/model.onnx --target-file ${targets_data}/bad_value.txt
               -o ${targets_work}/bad.onnx EXIT 2 STDERR "bad_value.txt:4: field 'pads': unknown pad form 'diagonal'"
               NOT_EXIST ${targets_work}/bad.onnx)
tconv_cli_test(targets_missing_file CMD ${import} ${models}/unet/model.onnx --target-file ${targets_data}/nope.txt
               EXIT 2 STDERR "nope.txt")
tconv_cli_test(targets_lint CMD ${import} ${models}/audio_upsampler/model.onnx --target tflite EXIT 0
               STDOUT "as is: 8 constraint\\(s\\) of target tflite broken:.*is 1-D.*rewrite: 4 ConvTranspose node\\(s\\) rewritten for tflite.*Unsqueeze.*Squeeze")
tconv_cli_test(targets_convert CMD ${import} ${models}/grouped_upsampler/model.onnx --target tflite --check 2
               -o ${targets_work}/grouped_tflite.onnx EXIT 0 STDERR "alone: ok.*output 'image'.*ok"
               EXIST ${targets_work}/grouped_tflite.onnx)
tconv_cli_test(targets_convert_file CMD ${import} ${models}/grouped_upsampler/model.onnx
               --target-file ${targets_data}/npu_example.txt --check 2 -o ${targets_work}/grouped_npu.onnx
               EXIT 0 STDERR "alone: ok" EXIST ${targets_work}/grouped_npu.onnx)
# A node the build cannot lower: exit 2 naming the node and the constraint, no output file.
tconv_cli_test(targets_refused CMD ${import} ${models}/decoder3d/model.onnx --target ethos-u
               -o ${targets_work}/decoder3d_ethos.onnx EXIT 2
               STDERR "3-D through 2-D is proven only for depth kernel 1.*node '[^']+' \\(#[0-9]+, ConvTranspose\\): is 3-D \\(ranks: " NOT_EXIST ${targets_work}/decoder3d_ethos.onnx)
