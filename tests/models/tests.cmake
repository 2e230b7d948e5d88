# models.*: every regression model in models/ (listed in models/models.tsv) is
#   models.<name>            run against its golden data, converted with tconv-import --check 3
#                            (report checked for the expected number of rewrites), and the
#                            converted model run against the same golden data;
#   models.<name>.onnx_checker  the converted model loads in python3-onnx and passes
#                            onnx.checker.check_model (registered where python3-onnx exists).
set(TCONV_MODELS_DIR "${PROJECT_SOURCE_DIR}/models")
file(STRINGS "${TCONV_MODELS_DIR}/models.tsv" tconv_model_rows)
list(POP_FRONT tconv_model_rows) # header
execute_process(COMMAND /usr/bin/python3 -c "import onnx" RESULT_VARIABLE tconv_no_python_onnx
                OUTPUT_QUIET ERROR_QUIET)
if(NOT tconv_no_python_onnx EQUAL 0)
  message(STATUS "python3-onnx not found: models.*.onnx_checker tests are not registered")
endif()
# Symbolic input dims need values for --check's random inputs.
set(tconv_check_dims_dynamic_same "--dim|N=2|--dim|H=5|--dim|W=7") # "|" separates arguments
# Golden-data tolerances (default --rtol 1e-3 --atol 1e-4). The float16 model: tconv rounds to
# float16 after every op while its golden is torch's float32 forward rounded once, so the
# outputs (|y| < 1, after Tanh) differ by a few float16 units of the intermediates (measured
# max 2.7e-3).
set(tconv_tolerances_dcgan_generator_fp16 "--rtol|1e-2|--atol|5e-3")
foreach(row ${tconv_model_rows})
  # The last column holds ';'-separated notes, which CMake splits into extra list items: match
  # the first five columns of real rows only.
  if(NOT row MATCHES "^([A-Za-z0-9_]+)\t[^\t]*\t[^\t]*\t[^\t]*\t([0-9]+)\t")
    continue()
  endif()
  set(model_name "${CMAKE_MATCH_1}")
  set(model_rewrites "${CMAKE_MATCH_2}")
  set(work "${PROJECT_BINARY_DIR}/models/${model_name}")
  add_test(NAME "models.${model_name}"
           COMMAND "${CMAKE_COMMAND}" -DIMPORT=$<TARGET_FILE:tconv-import> -DRUN=$<TARGET_FILE:tconv-run>
                   "-DMODEL_DIR=${TCONV_MODELS_DIR}/${model_name}" "-DWORK_DIR=${work}"
                   "-DEXPECTED_REWRITES=${model_rewrites}"
                   "-DCHECK_ARGS=${tconv_check_dims_${model_name}}"
                   "-DTOLERANCES=${tconv_tolerances_${model_name}}"
                   -P "${CMAKE_CURRENT_LIST_DIR}/model_test.cmake")
  set_tests_properties("models.${model_name}" PROPERTIES TIMEOUT 900)
  if(tconv_no_python_onnx EQUAL 0)
    add_test(NAME "models.${model_name}.onnx_checker"
             COMMAND /usr/bin/python3 "${CMAKE_CURRENT_LIST_DIR}/onnx_check.py" "${work}/converted/model.onnx")
    set_tests_properties("models.${model_name}.onnx_checker" PROPERTIES DEPENDS "models.${model_name}")
  endif()
endforeach()

# models.detectors.<name>: torchvision's Mask R-CNN and Keypoint R-CNN, narrowed (models/detectors/,
# written by its generate.py), the same three steps against torch's own outputs: NonMaxSuppression,
# RoiAlign, TopK, Loop and the data-dependent shapes of a real detector. Their ConvTransposes (k2 s2
# p0; k4 s2 p1) need no default-policy rewrite. Tolerances: tconv-run's defaults (rtol 1e-4, atol
# 1e-5): float32 differences of summation order through ~25 layers (measured max abs 3.8e-6, on masks
# in [0, 1]); the detection counts, labels and keypoint positions must match exactly, as they are
# data-dependent shapes and argmaxes, which the generator keeps away from ties (spread logits).
file(GLOB tconv_detector_dirs LIST_DIRECTORIES true CONFIGURE_DEPENDS
     "${TCONV_MODELS_DIR}/detectors/*")
foreach(dir IN LISTS tconv_detector_dirs)
  if(NOT EXISTS "${dir}/model.onnx")
    continue()
  endif()
  get_filename_component(model_name "${dir}" NAME)
  set(work "${PROJECT_BINARY_DIR}/models/detectors/${model_name}")
  add_test(NAME "models.detectors.${model_name}"
           COMMAND "${CMAKE_COMMAND}" -DIMPORT=$<TARGET_FILE:tconv-import> -DRUN=$<TARGET_FILE:tconv-run>
                   "-DMODEL_DIR=${dir}" "-DWORK_DIR=${work}" -DEXPECTED_REWRITES=0
                   "-DTOLERANCES=--rtol|1e-4|--atol|1e-5"
                   -P "${CMAKE_CURRENT_LIST_DIR}/model_test.cmake")
  set_tests_properties("models.detectors.${model_name}" PROPERTIES TIMEOUT 900)
  if(tconv_no_python_onnx EQUAL 0)
    add_test(NAME "models.detectors.${model_name}.onnx_checker"
             COMMAND /usr/bin/python3 "${CMAKE_CURRENT_LIST_DIR}/onnx_check.py" "${work}/converted/model.onnx")
    set_tests_properties("models.detectors.${model_name}.onnx_checker" PROPERTIES
                         DEPENDS "models.detectors.${model_name}")
  endif()
endforeach()
