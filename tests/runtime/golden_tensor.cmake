# Golden data for the tensor and shape ops (tests/golden/ops/generate_tensor.py): every case that
# tensor_cases.tsv lists becomes runtime.golden.<case>, tconv-run over its test directory at the
# default tolerances (a missing directory fails); *_threaded cases (outputs big enough to be cut
# into blocks for several threads) run with --threads 4. Rows with an expected failure (error_*
# cases) pass when tconv-run refuses the node with a message matching it.
set(TCONV_GOLDEN_TENSOR_TSV "${PROJECT_SOURCE_DIR}/tests/golden/ops/tensor_cases.tsv")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${TCONV_GOLDEN_TENSOR_TSV}")
file(STRINGS "${TCONV_GOLDEN_TENSOR_TSV}" tconv_golden_tensor_rows)
list(POP_FRONT tconv_golden_tensor_rows) # header
foreach(row IN LISTS tconv_golden_tensor_rows)
  if(row MATCHES "^([A-Za-z0-9_]+)\t[^\t]*\t[^\t]*\t?(.*)$")
    set(case "${CMAKE_MATCH_1}")
    set(expected_failure "${CMAKE_MATCH_2}")
    set(threads "")
    if(case MATCHES "_threaded")
      set(threads --threads 4)
    endif()
    add_test(NAME "runtime.golden.${case}"
             COMMAND tconv-run "${PROJECT_SOURCE_DIR}/tests/golden/ops/${case}" ${threads})
    set_tests_properties("runtime.golden.${case}" PROPERTIES TIMEOUT 120 LABELS golden)
    if(NOT expected_failure STREQUAL "")
      # error_* cases: tconv-run must refuse the node with this message (and report no pass).
      set_tests_properties("runtime.golden.${case}" PROPERTIES
                           PASS_REGULAR_EXPRESSION "\\]: ${expected_failure}"
                           FAIL_REGULAR_EXPRESSION "[1-9][0-9]* passed")
    endif()
  endif()
endforeach()
