# One regression model end to end (see tests.cmake). Run with cmake -P.
include("${CMAKE_CURRENT_LIST_DIR}/../common/run_step.cmake")

set(tolerances --rtol 1e-3 --atol 1e-4)
if(TOLERANCES)
  string(REPLACE "|" ";" tolerances "${TOLERANCES}")
endif()
string(REPLACE "|" ";" CHECK_ARGS "${CHECK_ARGS}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/converted")
run_step("original model against golden data" "${RUN}" "${MODEL_DIR}" ${tolerances})
run_step("convert with --check 3"
         "${IMPORT}" "${MODEL_DIR}/model.onnx" -o "${WORK_DIR}/converted/model.onnx"
         --check 3 ${CHECK_ARGS} --report "${WORK_DIR}/report.json")
file(READ "${WORK_DIR}/report.json" report)
# "node" appears once per rewrite in "rewritten" and once in the proof's "rewrites".
string(REGEX MATCHALL "\"node\": " rewritten "${report}")
list(LENGTH rewritten n_rewritten)
math(EXPR n_rewritten "${n_rewritten} / 2")
if(NOT n_rewritten EQUAL EXPECTED_REWRITES)
  message(FATAL_ERROR "expected ${EXPECTED_REWRITES} rewritten nodes, the report lists ${n_rewritten}")
endif()
# Every rewrite proven alone, and the whole model proven (every model here runs in tconv).
string(REGEX MATCHALL "\"proven\": true" proven "${report}")
list(LENGTH proven n_proven)
if(NOT n_proven EQUAL EXPECTED_REWRITES OR NOT report MATCHES "\"whole_model\": {\"status\": \"proven\"")
  message(FATAL_ERROR "expected ${EXPECTED_REWRITES} rewrites proven alone and the whole model proven: ${report}")
endif()
file(GLOB data_sets LIST_DIRECTORIES true "${MODEL_DIR}/test_data_set_*")
foreach(data_set ${data_sets})
  file(COPY "${data_set}" DESTINATION "${WORK_DIR}/converted")
endforeach()
run_step("converted model against the same golden data" "${RUN}" "${WORK_DIR}/converted" ${tolerances})
