# conventions.*: the generated cases of tests/golden/generate_conventions.py, without onnxruntime
# (scripts/ort/conventions.js checks the same cases against onnxruntime itself).
#   conventions.dynamic.<case>  output_shape on a dynamic input: the original and the rewritten
#                               model (crop computed at run time) against ONNX's result at every
#                               input size of the case
#   conventions.ort.<case>      a row of docs/semantics.md's table: the rewrite under --convention onnx
#                               gives ONNX's result; under --convention ort, onnxruntime 1.30's
#                               (its measured rule) where it runs the node, else ONNX's with the
#                               lint's warning that onnxruntime refuses the node
set(tconv_conv_golden "${PROJECT_SOURCE_DIR}/tests/golden")
# The rewritten models also pass onnx.checker (full check) where python3-onnx exists.
set(tconv_conv_checker "")
execute_process(COMMAND /usr/bin/python3 -c "import onnx" RESULT_VARIABLE tconv_conv_no_onnx
                OUTPUT_QUIET ERROR_QUIET)
if(tconv_conv_no_onnx EQUAL 0)
  set(tconv_conv_checker "${PROJECT_SOURCE_DIR}/tests/models/onnx_check.py")
endif()
foreach(kind dynamic ort)
  if(kind STREQUAL "dynamic")
    set(dir "${tconv_conv_golden}/dynamic_output_shape")
  else()
    set(dir "${tconv_conv_golden}/ort_conventions")
  endif()
  file(STRINGS "${dir}/cases.tsv" rows)
  list(POP_FRONT rows)
  foreach(row ${rows})
    if(NOT row MATCHES "^([A-Za-z0-9_]+)\t([^\t]*)\t([^\t]*)\t")
      message(FATAL_ERROR "${dir}/cases.tsv: bad row '${row}'")
    endif()
    set(name "${CMAKE_MATCH_1}")
    set(ort_flags "-")
    if(kind STREQUAL "ort")
      set(ort_flags "${CMAKE_MATCH_3}")
    endif()
    add_test(NAME "conventions.${kind}.${name}"
             COMMAND "${CMAKE_COMMAND}" -DIMPORT=$<TARGET_FILE:tconv-import> -DRUN=$<TARGET_FILE:tconv-run>
                     "-DCASE_DIR=${dir}/${name}" "-DWORK_DIR=${PROJECT_BINARY_DIR}/conventions/${kind}/${name}"
                     "-DORT_FLAGS=${ort_flags}" "-DONNX_CHECK=${tconv_conv_checker}"
                     -P "${CMAKE_CURRENT_LIST_DIR}/convention_case.cmake")
    set_tests_properties("conventions.${kind}.${name}" PROPERTIES TIMEOUT 300)
  endforeach()
endforeach()
