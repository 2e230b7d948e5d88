# cli.proof_* and proof.*: what `tconv-import --check` proves, on the models of tests/proof/generate.py: nodes
# found by identity (unnamed, shared names), real shapes, exit codes of models the runtime cannot
# run, external data named after the output.
set(proof_data "${CMAKE_CURRENT_LIST_DIR}")
set(proof_work "${PROJECT_BINARY_DIR}/proof")
file(MAKE_DIRECTORY "${proof_work}")

# The CLI runs go through tests/cli's tconv_cli_test (cli_expect.cmake), named cli.proof_*.

# Identity, not names: ONNX's node tests leave nodes unnamed; exporters may repeat a name.
tconv_cli_test(proof_unnamed_nodes CMD $<TARGET_FILE:tconv-import> ${proof_data}/unnamed.onnx --check 1
                 -o ${proof_work}/unnamed.onnx EXIT 0
                 STDERR "check: node 'u' alone: ok on x\\[1,2,3,4\\] \\(1 runs, shape inferred\\).*check: node 'y' alone: ok on u\\[1,3,6,8\\] \\(1 runs, shape inferred\\)"
                 EXIST ${proof_work}/unnamed.onnx)
tconv_cli_test(proof_same_name_nodes CMD $<TARGET_FILE:tconv-import> ${proof_data}/same_name.onnx --check 1
                 -o ${proof_work}/same_name.onnx EXIT 0
                 STDERR "check: node 'up' alone: ok on x\\[1,2,3,4\\] \\(1 runs, shape inferred\\).*check: node 'up' alone: ok on u\\[1,3,6,8\\] \\(1 runs, shape inferred\\)"
                 EXIST ${proof_work}/same_name.onnx)
tconv_cli_test(proof_onnx_autopad_same CMD $<TARGET_FILE:tconv-import>
                 ${TCONV_ONNX_NODE_TESTS}/test_convtranspose_autopad_same/model.onnx
                 --check 2 --dry-run EXIT 0 STDERR "check: node 'Y' alone: ok on X\\[1,1,3,3\\].*\\(2 runs, shape inferred\\)")

# A model the runtime cannot run (an op of a custom domain, twice, in an If's else branch): exit 2
# in every mode, the op named once with its count and its nodes by their subgraph path. The
# rewrite in the same branch is still proven alone.
set(missing_text "com.example.Scale x2 .If_1422/else_branch/scale_1, If_1422/else_branch/scale_2.")
tconv_cli_test(proof_run_dir_cannot_run CMD $<TARGET_FILE:tconv-run> ${proof_data}/nested_missing EXIT 2
                 STDOUT "FAIL .*no kernel for ${missing_text}.*0 passed, 1 failed")
tconv_cli_test(proof_run_file_cannot_run CMD $<TARGET_FILE:tconv-run> ${proof_data}/nested_missing/model.onnx
                 EXIT 2 STDERR "no kernel for ${missing_text}")
tconv_cli_test(proof_import_check_cannot_run CMD $<TARGET_FILE:tconv-import>
                 ${proof_data}/nested_missing/model.onnx --check 1 -o ${proof_work}/nested_missing.onnx
                 EXIT 0 STDERR "check: node 'If_1422/else_branch/up' alone: ok on s1\\[1,2,4,4\\].*whole model: skipped: the runtime lacks ${missing_text}"
                 EXIST ${proof_work}/nested_missing.onnx)

# External data named after the output (torch 2.x-style model.onnx.data exports).
add_test(NAME proof.external_data_named_after_output
         COMMAND "${CMAKE_COMMAND}" -DIMPORT=$<TARGET_FILE:tconv-import> -DRUN=$<TARGET_FILE:tconv-run>
                 -DDATA=${proof_data} -DWORK=${proof_work}/external
                 -P "${CMAKE_CURRENT_LIST_DIR}/external_case.cmake")

# Shapes: inferred where inference is complete (the ReflectionPad pads torch computes in the
# graph), taken from a run of the model where it cannot be (a Slice end from the data), the node
# then also proven on the values the run gives it.
tconv_cli_test(proof_melgan_real_shapes CMD $<TARGET_FILE:tconv-import> ${proof_data}/melgan_pad.onnx
                 --check 1 --policy valid-only --dry-run EXIT 0
                 STDERR "node '/up1/ConvTranspose' alone: ok on /act/LeakyRelu_output_0\\[1,16,32\\] \\(1 runs, shape inferred\\).*node '/up2/ConvTranspose' alone: ok on /pad_1/Pad_output_0\\[1,8,262\\] \\(1 runs, shape inferred\\)")
tconv_cli_test(proof_data_dependent_shape_from_run CMD $<TARGET_FILE:tconv-import>
                 ${proof_data}/data_dependent.onnx --check 2 --report ${proof_work}/data_dependent.json
                 --dry-run EXIT 0
                 STDERR "node 'up' alone: ok on s\\[1,2,6,[4-6]\\] and the values a run of the model gives; s\\[1,2,6,1\\]; s\\[1,2,6,2\\] \\(7 runs, shape from a run of the model\\)"
                 EXIST ${proof_work}/data_dependent.json)
# A wrong rewrite (tconv-import built with a Slice that crops one too far) is caught at that shape.
tconv_cli_test(proof_data_dependent_faulty CMD $<TARGET_FILE:tconv-import-faulty>
                 ${proof_data}/data_dependent.onnx --check 1 -o ${proof_work}/data_dependent_bad.onnx
                 EXIT 1 STDERR "node 'up' alone: MISMATCH on s\\[1,2,6,[3-6]\\] .1 runs, shape from a run of the model.*was not written"
                 NOT_EXIST ${proof_work}/data_dependent_bad.onnx)
# --dim takes any symbolic dim named in the model (here one of its output), not only the inputs'.
tconv_cli_test(proof_dim_named_anywhere CMD $<TARGET_FILE:tconv-import> ${proof_data}/data_dependent.onnx
                 --check 1 --dim W=5 --dry-run EXIT 0 STDERR "node 'up' alone: ok")
tconv_cli_test(proof_dim_named_nowhere CMD $<TARGET_FILE:tconv-import> ${proof_data}/data_dependent.onnx
                 --check 1 --dim Q=5 --dry-run EXIT 2 STDERR "--dim Q: the model has no dynamic dim of that name")
# Guessed: a custom op before the node, no declared shape: every guessed dim and the summary say so.
tconv_cli_test(proof_guessed_says_so CMD $<TARGET_FILE:tconv-import>
               ${PROJECT_SOURCE_DIR}/tests/cli/data/unknown_shape.onnx --check 1 --dry-run EXIT 0
               STDERR "ok on s\\[3 guessed,4,3 guessed,3 guessed\\].* \\(5 runs, shape guessed\\).*warning: 1 rewritten node\\(s\\) proven alone at guessed input sizes only")
