# Runtime conformance over the ONNX node tests in ${TCONV_ONNX_NODE_TESTS}.
# conformance.tsv lists every test directory (columns: test, status run|skip, reason). Each `run`
# test becomes the ctest runtime.conformance.<test>, which runs tconv-run on its directory (a
# missing directory makes tconv-run, and so the test, fail). runtime.conformance_list checks that
# the list names all 291 directories, each once, and gives every skip a reason.
set(TCONV_CONFORMANCE_TSV "${CMAKE_CURRENT_LIST_DIR}/conformance.tsv")
set(TCONV_NODE_TESTS_DIR "${TCONV_ONNX_NODE_TESTS}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${TCONV_CONFORMANCE_TSV}")

# Tests run at tconv-run's default tolerances (rtol 1e-4, atol 1e-5), except where ONNX's own
# expected data is too coarse for them: test_averagepool_2d_ceil_last_window_starts_on_pad stores
# outputs rounded to 4 decimals (0.1511 for sum/9 = 0.151056), so it gets the tolerances ONNX's
# backend test runner itself uses (rtol 1e-3, atol 1e-7).
set(tconv_conformance_tolerance_test_averagepool_2d_ceil_last_window_starts_on_pad
    --rtol 1e-3 --atol 1e-7)

file(STRINGS "${TCONV_CONFORMANCE_TSV}" tconv_conformance_lines)
foreach(line IN LISTS tconv_conformance_lines)
  if(line MATCHES "^([^\t]+)\trun\t")
    set(test "${CMAKE_MATCH_1}")
    add_test(NAME "runtime.conformance.${test}"
             COMMAND tconv-run "${TCONV_NODE_TESTS_DIR}/${test}"
                     ${tconv_conformance_tolerance_${test}})
    set_tests_properties("runtime.conformance.${test}" PROPERTIES TIMEOUT 300
                         LABELS conformance)
  endif()
endforeach()

add_test(NAME runtime.conformance_list
         COMMAND "${CMAKE_COMMAND}" "-DTSV=${TCONV_CONFORMANCE_TSV}"
                 "-DNODE_TESTS=${TCONV_NODE_TESTS_DIR}"
                 "-DSUBSET=${PROJECT_SOURCE_DIR}/tests/data/onnx-node-tests-subset.tsv" -DEXPECTED=291
                 -P "${CMAKE_CURRENT_LIST_DIR}/check_conformance_list.cmake")

# Golden data of the reductions and normalizations (tests/golden/ops/generate_reduce_norm.py, numpy
# and torch as oracles): each case listed in reduce_norm_cases.txt becomes golden.ops.<case>, run
# by tconv-run at its default tolerances.
set(TCONV_REDUCE_NORM_CASES "${PROJECT_SOURCE_DIR}/tests/golden/ops/reduce_norm_cases.txt")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${TCONV_REDUCE_NORM_CASES}")
file(STRINGS "${TCONV_REDUCE_NORM_CASES}" tconv_reduce_norm_cases)
foreach(case IN LISTS tconv_reduce_norm_cases)
  add_test(NAME "golden.ops.${case}"
           COMMAND tconv-run "${PROJECT_SOURCE_DIR}/tests/golden/ops/${case}")
  set_tests_properties("golden.ops.${case}" PROPERTIES LABELS golden_ops)
endforeach()

# tests/golden/dtype_ops (tests/golden/generate_dtypes.py): Conv, Gemm, MatMul, BatchNormalization,
# pools, elementwise ops and activations in float64 (native double paths) and float16/bfloat16
# (float32 kernels, rounded on store), and Cast between float types, integers and bool. Golden: float64 from the rounded inputs, rounded once.
# Tolerances: float64 1e-12 (double sums; a float32 detour would miss by ~1e-7); float16 and
# bfloat16 one unit in the last place, 2^-10 and 2^-7 relative (the float32 result rounds to the
# neighbour of the golden value at most), atol 1e-5 for float32's error near zero.
set(tconv_dtype_tolerance_float64 --rtol 1e-12 --atol 1e-12)
set(tconv_dtype_tolerance_float16 --rtol 9.77e-4 --atol 1e-5)
set(tconv_dtype_tolerance_bfloat16 --rtol 7.82e-3 --atol 1e-5)
# Cast (cast_<from>_to_<to>): exact, one rounding to nearest even (NaN equal to NaN).
set(tconv_dtype_tolerance_cast --rtol 0 --atol 0)
file(GLOB tconv_dtype_op_dirs LIST_DIRECTORIES true CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/tests/golden/dtype_ops/*")
foreach(dir IN LISTS tconv_dtype_op_dirs)
  get_filename_component(case "${dir}" NAME)
  if(NOT case MATCHES "^(float64|float16|bfloat16|cast)_")
    message(FATAL_ERROR "tests/golden/dtype_ops/${case}: name must start with its dtype")
  endif()
  add_test(NAME "runtime.dtype_ops.${case}"
           COMMAND tconv-run "${dir}" ${tconv_dtype_tolerance_${CMAKE_MATCH_1}})
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/golden_tensor.cmake")
# Golden data of single ops (tests/golden/ops, numpy-computed by the committed generators there):
# every row of every tests/golden/ops/*.tsv (columns: case, op, opset, dtypes, rtol, atol, what)
# becomes runtime.golden_ops.<case>, tconv-run on tests/golden/ops/<case> at the row's tolerances
# (tconv-run's defaults where they are empty).
file(GLOB tconv_golden_ops_tsvs CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/golden/ops/*.tsv")
foreach(tsv IN LISTS tconv_golden_ops_tsvs)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${tsv}")
  file(STRINGS "${tsv}" tconv_golden_ops_lines)
  foreach(line IN LISTS tconv_golden_ops_lines)
    if(NOT line MATCHES "^([^\t]+)\t[^\t]*\t[0-9]+\t[^\t]*\t([^\t]*)\t([^\t]*)\t")
      continue() # the header
    endif()
    set(case "${CMAKE_MATCH_1}")
    set(rtol "${CMAKE_MATCH_2}")
    set(atol "${CMAKE_MATCH_3}")
    set(tolerances "")
    if(NOT rtol STREQUAL "")
      list(APPEND tolerances --rtol ${rtol})
    endif()
    if(NOT atol STREQUAL "")
      list(APPEND tolerances --atol ${atol})
    endif()
    add_test(NAME "runtime.golden_ops.${case}"
             COMMAND tconv-run "${PROJECT_SOURCE_DIR}/tests/golden/ops/${case}" ${tolerances})
    set_tests_properties("runtime.golden_ops.${case}" PROPERTIES LABELS golden_ops)
  endforeach()
endforeach()

# ONNX v1.22.0 node tests from the whole suite (${TCONV_ONNX_NODE_TESTS}) that tconv-run passes at
# ONNX's backend-test tolerances (rtol 1e-3, atol 1e-7): each line of node_tests_passed.txt
# becomes runtime.node.<test>. scripts/node-suite.sh measures the whole suite and rewrites the list.
set(TCONV_NODE_TESTS_PASSED "${CMAKE_CURRENT_LIST_DIR}/node_tests_passed.txt")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${TCONV_NODE_TESTS_PASSED}")
file(STRINGS "${TCONV_NODE_TESTS_PASSED}" tconv_node_tests_passed REGEX "^test_")
foreach(test IN LISTS tconv_node_tests_passed)
  add_test(NAME "runtime.node.${test}"
           COMMAND tconv-run "${TCONV_ONNX_NODE_TESTS}/${test}" --rtol 1e-3 --atol 1e-7)
  set_tests_properties("runtime.node.${test}" PROPERTIES TIMEOUT 300 LABELS node_tests)
endforeach()

# ONNX functions (tests/golden/ops/generate_functions.py): model-local functions run as their
# bodies (fn_* cases, registered from functions.tsv above); these must be refused, saying why.
set(tconv_function_refusals
    "error_fn_local_attr_ref|its body refers to the caller's attributes"
    "error_fn_library_context|cannot run this model: it has no kernel for RMSNormalization x1")
foreach(entry IN LISTS tconv_function_refusals)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 case)
  list(GET parts 1 message)
  add_test(NAME "runtime.golden.${case}"
           COMMAND tconv-run "${PROJECT_SOURCE_DIR}/tests/golden/ops/${case}")
  set_tests_properties("runtime.golden.${case}" PROPERTIES LABELS golden
                       PASS_REGULAR_EXPRESSION "${message}"
                       FAIL_REGULAR_EXPRESSION "[1-9][0-9]* passed")
endforeach()
