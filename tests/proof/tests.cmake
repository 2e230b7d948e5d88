# proof.*: what `tconv-import --check` proves, on the models of tests/proof/generate.py: nodes
# found by identity (unnamed, shared names), real shapes, exit codes of models the runtime cannot
# run, external data named after the output.
set(proof_data "${CMAKE_CURRENT_LIST_DIR}")
set(proof_work "${PROJECT_BINARY_DIR}/proof")
file(MAKE_DIRECTORY "${proof_work}")

function(tconv_proof_test name)
  cmake_parse_arguments(T "" "EXIT;STDERR;STDOUT;NOT_EXIST;EXIST" "CMD" ${ARGN})
  string(REPLACE ";" "|" cmd "${T_CMD}")
  set(args "-DCMD=${cmd}" "-DEXPECT_EXIT=${T_EXIT}")
  foreach(opt STDERR STDOUT)
    if(DEFINED T_${opt})
      list(APPEND args "-DEXPECT_${opt}=${T_${opt}}")
    endif()
  endforeach()
  if(DEFINED T_NOT_EXIST)
    list(APPEND args "-DMUST_NOT_EXIST=${T_NOT_EXIST}")
  endif()
  if(DEFINED T_EXIST)
    list(APPEND args "-DMUST_EXIST=${T_EXIST}")
  endif()
  add_test(NAME "proof.${name}" COMMAND "${CMAKE_COMMAND}" ${args} -P
           "${PROJECT_SOURCE_DIR}/tests/cli/cli_expect.cmake")
endfunction()

# Identity, not names: ONNX's node tests leave nodes unnamed; exporters may repeat a name.
tconv_proof_test(unnamed_nodes CMD $<TARGET_FILE:tconv-import> ${proof_data}/unnamed.onnx --check 1
                 -o ${proof_work}/unnamed.onnx EXIT 0
                 STDERR "check: node 'u' alone: ok on x\\[1,2,3,4\\] \\(1 runs\\).*check: node 'y' alone: ok on u\\[1,3,6,8\\] \\(1 runs\\)"
                 EXIST ${proof_work}/unnamed.onnx)
tconv_proof_test(same_name_nodes CMD $<TARGET_FILE:tconv-import> ${proof_data}/same_name.onnx --check 1
                 -o ${proof_work}/same_name.onnx EXIT 0
                 STDERR "check: node 'up' alone: ok on x\\[1,2,3,4\\] \\(1 runs\\).*check: node 'up' alone: ok on u\\[1,3,6,8\\] \\(1 runs\\)"
                 EXIST ${proof_work}/same_name.onnx)
tconv_proof_test(onnx_autopad_same CMD $<TARGET_FILE:tconv-import>
                 ${TCONV_ONNX_NODE_TESTS}/test_convtranspose_autopad_same/model.onnx
                 --check 2 --dry-run EXIT 0 STDERR "check: node 'Y' alone: ok on X\\[1,1,3,3\\]")

# A model the runtime cannot run (an op of a custom domain, twice, in an If's else branch): exit 2
# in every mode, the op named once with its count and its nodes by their subgraph path. The
# rewrite in the same branch is still proven alone.
set(missing_text "com.example.Scale x2 .If_1422/else_branch/scale_1, If_1422/else_branch/scale_2.")
tconv_proof_test(run_dir_cannot_run CMD $<TARGET_FILE:tconv-run> ${proof_data}/nested_missing EXIT 2
                 STDOUT "FAIL .*no kernel for ${missing_text}.*0 passed, 1 failed")
tconv_proof_test(run_file_cannot_run CMD $<TARGET_FILE:tconv-run> ${proof_data}/nested_missing/model.onnx
                 EXIT 2 STDERR "no kernel for ${missing_text}")
tconv_proof_test(import_check_cannot_run CMD $<TARGET_FILE:tconv-import>
                 ${proof_data}/nested_missing/model.onnx --check 1 -o ${proof_work}/nested_missing.onnx
                 EXIT 0 STDERR "check: node 'If_1422/else_branch/up' alone: ok on s1\\[1,2,4,4\\].*whole model: skipped: the runtime lacks ${missing_text}"
                 EXIST ${proof_work}/nested_missing.onnx)

# External data named after the output (torch 2.x-style model.onnx.data exports).
add_test(NAME proof.external_data_named_after_output
         COMMAND "${CMAKE_COMMAND}" -DIMPORT=$<TARGET_FILE:tconv-import> -DRUN=$<TARGET_FILE:tconv-run>
                 -DDATA=${proof_data} -DWORK=${proof_work}/external
                 -P "${CMAKE_CURRENT_LIST_DIR}/external_case.cmake")
