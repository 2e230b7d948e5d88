# One generated convention case (see tests.cmake). Run with cmake -P.
include("${CMAKE_CURRENT_LIST_DIR}/../common/run_step.cmake")

set(tolerances --rtol 1e-4 --atol 1e-5)
file(REMOVE_RECURSE "${WORK_DIR}")
file(GLOB data_sets LIST_DIRECTORIES true "${CASE_DIR}/test_data_set_*")
list(LENGTH data_sets n_sets)
if(n_sets EQUAL 0)
  message(FATAL_ERROR "${CASE_DIR}: no test_data_set_*")
endif()

run_step("original model against ONNX's result" "${RUN}" "${CASE_DIR}" ${tolerances})

# Runs the converted model in WORK_DIR/<convention> on its data sets (already there), and
# onnx.checker on it where python3-onnx exists.
function(run_converted convention)
  run_step("converted (--convention ${convention}) against the expected result" "${RUN}"
           "${WORK_DIR}/${convention}" ${tolerances})
  if(ONNX_CHECK)
    run_step("onnx.checker (--convention ${convention})" /usr/bin/python3 "${ONNX_CHECK}"
             "${WORK_DIR}/${convention}/model.onnx")
  endif()
endfunction()

# --convention onnx (the default): ONNX's result, at every input size.
file(MAKE_DIRECTORY "${WORK_DIR}/onnx")
run_step("convert" "${IMPORT}" "${CASE_DIR}/model.onnx" -o "${WORK_DIR}/onnx/model.onnx")
foreach(data_set ${data_sets})
  file(COPY "${data_set}" DESTINATION "${WORK_DIR}/onnx")
endforeach()
run_converted(onnx)

if(ORT_FLAGS STREQUAL "-")
  return()
endif()
# --convention ort: ort_data_set_K holds onnxruntime 1.30's result (ONNX's where it refuses).
file(MAKE_DIRECTORY "${WORK_DIR}/ort")
run_step("convert with --convention ort" "${IMPORT}" "${CASE_DIR}/model.onnx"
         -o "${WORK_DIR}/ort/model.onnx" --convention ort)
if(ORT_FLAGS MATCHES "X" AND NOT step_stderr MATCHES "onnxruntime 1\\.30 refuses this node")
  message(FATAL_ERROR "onnxruntime 1.30 refuses this node (${ORT_FLAGS}) but the lint does not say so")
endif()
if(ORT_FLAGS MATCHES "X" AND NOT step_stderr MATCHES "--convention ort follows ONNX")
  message(FATAL_ERROR "the lint does not say that --convention ort follows ONNX where onnxruntime refuses")
endif()
if(NOT ORT_FLAGS MATCHES "X" AND step_stderr MATCHES "refuses")
  message(FATAL_ERROR "onnxruntime 1.30 runs this node but the lint says it refuses it")
endif()
if(step_stderr MATCHES "tconv follows ONNX$" OR step_stderr MATCHES "tconv follows ONNX\n")
  if(NOT ORT_FLAGS MATCHES "X")
    message(FATAL_ERROR "under --convention ort the lint says tconv follows ONNX")
  endif()
endif()
set(k 0)
foreach(data_set ${data_sets})
  get_filename_component(set_name "${data_set}" NAME)
  string(REGEX REPLACE "^test_data_set_" "" k "${set_name}")
  file(COPY "${data_set}/input_0.pb" DESTINATION "${WORK_DIR}/ort/${set_name}")
  file(COPY "${CASE_DIR}/ort_data_set_${k}/output_0.pb" DESTINATION "${WORK_DIR}/ort/${set_name}")
endforeach()
run_converted(ort)
# The original, run by tconv's runtime under --convention ort, gives the same.
file(MAKE_DIRECTORY "${WORK_DIR}/ort_original")
file(COPY "${CASE_DIR}/model.onnx" DESTINATION "${WORK_DIR}/ort_original")
file(GLOB ort_sets LIST_DIRECTORIES true "${WORK_DIR}/ort/test_data_set_*")
foreach(data_set ${ort_sets})
  file(COPY "${data_set}" DESTINATION "${WORK_DIR}/ort_original")
endforeach()
run_step("original under tconv-run --convention ort against onnxruntime 1.30's result" "${RUN}"
         "${WORK_DIR}/ort_original" --convention ort ${tolerances})
