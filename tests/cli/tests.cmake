# cli.*: the command-line contract (exit codes, messages, no partial output files).
set(cli_work "${PROJECT_BINARY_DIR}/cli")
# test_signals.c tests the CLIs' signal handlers themselves.
target_sources(test_cli_signals PRIVATE "${PROJECT_SOURCE_DIR}/src/cli/cli_signals.c")
file(MAKE_DIRECTORY "${cli_work}")
set(keras "${PROJECT_SOURCE_DIR}/models/keras_decoder/model.onnx")
set(ct_pads "${TCONV_ONNX_NODE_TESTS}/test_convtranspose_pads")

# Callable from other areas' tests.cmake too (tests/proof): the script's path is fixed here.
set(tconv_cli_expect "${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
function(tconv_cli_test name)
  cmake_parse_arguments(T "" "EXIT;STDERR;STDOUT;NOT_EXIST;EXIST;NO_TEMP_IN" "CMD;SAME_FILES" ${ARGN})
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
  if(DEFINED T_NO_TEMP_IN)
    list(APPEND args "-DNO_TEMP_IN=${T_NO_TEMP_IN}")
  endif()
  if(DEFINED T_SAME_FILES)
    string(REPLACE ";" "|" same "${T_SAME_FILES}")
    list(APPEND args "-DSAME_FILES=${same}")
  endif()
  add_test(NAME "cli.${name}" COMMAND "${CMAKE_COMMAND}" ${args} -P "${tconv_cli_expect}")
endfunction()

tconv_cli_test(import_help CMD $<TARGET_FILE:tconv-import> --help EXIT 0 STDOUT "usage: tconv-import")
# --version prints the library's version (tconv_version(), include/tconv/version.h, which the
# build checks against the project's version), with or without other arguments.
string(REPLACE "." "\\." tconv_version_re "${PROJECT_VERSION}")
tconv_cli_test(import_version CMD $<TARGET_FILE:tconv-import> --version EXIT 0
               STDOUT "^tconv-import ${tconv_version_re}\n$")
tconv_cli_test(run_version CMD $<TARGET_FILE:tconv-run> --version EXIT 0
               STDOUT "^tconv-run ${tconv_version_re}\n$")
tconv_cli_test(import_version_with_args CMD $<TARGET_FILE:tconv-import> ${keras} --version EXIT 0
               STDOUT "^tconv-import ${tconv_version_re}\n$")
# The output as a second file argument (as onnxsim takes it) writes what -o writes; both given
# must agree; a third file argument, or an output with --dry-run, is a usage error (exit 2) that
# says what to do.
tconv_cli_test(import_output_o CMD $<TARGET_FILE:tconv-import> ${keras} -o ${cli_work}/by_o.onnx
               EXIT 0 EXIST ${cli_work}/by_o.onnx)
set_tests_properties(cli.import_output_o PROPERTIES FIXTURES_SETUP cli_output_by_o)
tconv_cli_test(import_output_positional CMD $<TARGET_FILE:tconv-import> ${keras} ${cli_work}/positional.onnx
               EXIT 0 EXIST ${cli_work}/positional.onnx
               SAME_FILES ${cli_work}/positional.onnx ${cli_work}/by_o.onnx)
set_tests_properties(cli.import_output_positional PROPERTIES FIXTURES_REQUIRED cli_output_by_o)
tconv_cli_test(import_output_both_same CMD $<TARGET_FILE:tconv-import> ${keras} ${cli_work}/both.onnx
               -o ${cli_work}/both.onnx EXIT 0 EXIST ${cli_work}/both.onnx)
tconv_cli_test(import_output_both_differ CMD $<TARGET_FILE:tconv-import> ${keras} ${cli_work}/differ_a.onnx
               -o ${cli_work}/differ_b.onnx EXIT 2
               STDERR "two outputs given, '.*differ_a.onnx' and -o '.*differ_b.onnx': give the output once"
               NOT_EXIST ${cli_work}/differ_a.onnx)
tconv_cli_test(import_three_files CMD $<TARGET_FILE:tconv-import> ${keras} ${cli_work}/three_a.onnx
               ${cli_work}/three_b.onnx EXIT 2
               STDERR "too many file arguments \\('.*three_b.onnx'\\): give IN.onnx and at most one OUT.onnx"
               NOT_EXIST ${cli_work}/three_a.onnx)
tconv_cli_test(import_positional_dry_run CMD $<TARGET_FILE:tconv-import> ${keras} ${cli_work}/dry.onnx
               --dry-run EXIT 2 STDERR "--dry-run writes nothing: drop the output" NOT_EXIST ${cli_work}/dry.onnx)
tconv_cli_test(import_usage_says_what_to_do CMD $<TARGET_FILE:tconv-import> ${keras} --rtol abc EXIT 2
               STDERR "--rtol needs a number >= 0 \\(e.g. 1e-4\\), got 'abc'\n\\(tconv-import --help lists every option\\)")
tconv_cli_test(import_help_positional CMD $<TARGET_FILE:tconv-import> --help EXIT 0
               STDOUT "usage: tconv-import IN.onnx \\[OUT.onnx\\] \\[options\\]")
tconv_cli_test(run_no_input CMD $<TARGET_FILE:tconv-run> EXIT 2
               STDERR "no test directory or model given: tconv-run DIR... or tconv-run MODEL.onnx")
tconv_cli_test(run_bad_threads CMD $<TARGET_FILE:tconv-run> ${ct_pads} --threads 0 EXIT 2
               STDERR "--threads needs an integer from 1 to 1024, got '0'")
tconv_cli_test(import_list_passes CMD $<TARGET_FILE:tconv-import> --list-passes EXIT 0
               STDOUT "shape-infer.*lint-conv-transpose.*legalize-conv-transpose.*dce")
tconv_cli_test(import_no_input CMD $<TARGET_FILE:tconv-import> EXIT 2 STDERR "no input model")
tconv_cli_test(import_unknown_option CMD $<TARGET_FILE:tconv-import> ${keras} --frobnicate EXIT 2
               STDERR "unknown option '--frobnicate'")
tconv_cli_test(import_unknown_pass CMD $<TARGET_FILE:tconv-import> ${keras} --passes shape-infer,nope
               -o ${cli_work}/unknown_pass.onnx EXIT 2 STDERR "unknown pass 'nope'" NOT_EXIST ${cli_work}/unknown_pass.onnx)
tconv_cli_test(import_missing_file CMD $<TARGET_FILE:tconv-import> ${cli_work}/does-not-exist.onnx
               -o ${cli_work}/missing.onnx EXIT 2 STDERR "does-not-exist.onnx" NOT_EXIST ${cli_work}/missing.onnx)
tconv_cli_test(import_not_a_model CMD $<TARGET_FILE:tconv-import> ${PROJECT_SOURCE_DIR}/README.md
               -o ${cli_work}/garbage.onnx EXIT 2 STDERR "README.md" NOT_EXIST ${cli_work}/garbage.onnx)
tconv_cli_test(import_summary CMD $<TARGET_FILE:tconv-import> ${keras} EXIT 0
               STDOUT "ConvTranspose nodes.*deconv1.*SAME_UPPER.*-> rewrite")
tconv_cli_test(import_print_ir CMD $<TARGET_FILE:tconv-import> ${keras} --print-ir EXIT 0 STDOUT "ConvTranspose")
tconv_cli_test(import_passes_none CMD $<TARGET_FILE:tconv-import> ${keras} --passes none
               -o ${cli_work}/none.onnx EXIT 0 EXIST ${cli_work}/none.onnx)
tconv_cli_test(import_dry_run CMD $<TARGET_FILE:tconv-import> ${keras} --dry-run EXIT 0
               STDERR "rewrote 4 ConvTranspose node\\(s\\)")
tconv_cli_test(import_report CMD $<TARGET_FILE:tconv-import> ${ct_pads}/model.onnx --policy valid-only
               --report ${cli_work}/report.json -o ${cli_work}/pads.onnx EXIT 0 EXIST ${cli_work}/report.json)
tconv_cli_test(import_check_passes CMD $<TARGET_FILE:tconv-import> ${keras} --check 3 --seed 5
               -o ${cli_work}/checked.onnx EXIT 0 STDERR "check: output 'image': .*ok" EXIST ${cli_work}/checked.onnx)
# A wrong rewrite (here: a Slice kernel that crops one too far, in a tconv-import built with the
# test hook) must be caught by --check, which then writes nothing.
add_executable(tconv-import-faulty "${CMAKE_CURRENT_LIST_DIR}/faulty_import.c"
               "${PROJECT_SOURCE_DIR}/src/cli/tconv_import.c" ${cli_extra})
target_compile_definitions(tconv-import-faulty PRIVATE main=tconv_import_main
                           TCONV_VERSION_STRING="${PROJECT_VERSION}")
target_include_directories(tconv-import-faulty PRIVATE "${PROJECT_SOURCE_DIR}/src")
target_link_libraries(tconv-import-faulty PRIVATE tconv_internal)
tconv_cli_test(import_check_mismatch_writes_nothing CMD $<TARGET_FILE:tconv-import-faulty> ${keras}
               --check 2 -o ${cli_work}/mismatch.onnx EXIT 1
               STDERR "MISMATCH.*was not written" NOT_EXIST ${cli_work}/mismatch.onnx)
# Rewriting with onnxruntime<=1.12's pad split: the check runs the original under the same
# convention, so both sides mean the same and the rewrite is proven.
tconv_cli_test(import_check_same_convention CMD $<TARGET_FILE:tconv-import> ${keras}
               --convention ort-legacy --check 2 -o ${cli_work}/legacy.onnx EXIT 0
               STDERR "check: output 'image': .*ok" EXIST ${cli_work}/legacy.onnx)
# A float16 rewrite moves a rounding (the bias Add after the rounded ConvTranspose output): the
# proof holds at float16's tolerances (tconv_comparison_set_tolerance), not at float32's, and
# float64 is proven at the default ones.
set(half_case "${PROJECT_SOURCE_DIR}/tests/golden/dtypes/float16_output_padding_past_full_bias")
tconv_cli_test(import_check_float16 CMD $<TARGET_FILE:tconv-import> ${half_case}/model.onnx
               --check 3 -o ${cli_work}/half.onnx EXIT 0
               STDERR "check: output 'Y': max_abs_err=[0-9.e-]+ .*ok" EXIST ${cli_work}/half.onnx)
tconv_cli_test(import_check_float64 CMD $<TARGET_FILE:tconv-import>
               ${PROJECT_SOURCE_DIR}/tests/golden/dtypes/float64_output_shape_nc_prefix/model.onnx
               --check 3 -o ${cli_work}/double.onnx EXIT 0
               STDERR "check: output 'Y': .*ok" EXIST ${cli_work}/double.onnx)
tconv_cli_test(run_random_bfloat16 CMD $<TARGET_FILE:tconv-run>
               ${PROJECT_SOURCE_DIR}/tests/golden/dtypes/bfloat16_group3_bias/model.onnx EXIT 0
               STDOUT "Y bfloat16 .1,6,6,6. sum=")
set(dyn "${PROJECT_SOURCE_DIR}/models/dynamic_same/model.onnx")
tconv_cli_test(import_check_dims_all_named CMD $<TARGET_FILE:tconv-import> ${dyn} --check 1
               --dim H=4 -o ${cli_work}/dyn_all.onnx EXIT 2
               STDERR "missing: input 'x': N, W\\)" NOT_EXIST ${cli_work}/dyn_all.onnx)
tconv_cli_test(import_dim_unknown CMD $<TARGET_FILE:tconv-import> ${dyn} --check 1 --dim N=1
               --dim H=4 --dim W=4 --dim Q=2 -o ${cli_work}/dyn_q.onnx EXIT 2
               STDERR "--dim Q: the model has no dynamic dim of that name.*input 'x': N, H, W"
               NOT_EXIST ${cli_work}/dyn_q.onnx)
tconv_cli_test(import_dim_not_dynamic CMD $<TARGET_FILE:tconv-import> ${dyn} --dry-run --dim x=2
               EXIT 2 STDERR "--dim x: that is a value of the model, not a dynamic dim")
tconv_cli_test(import_dim_zero CMD $<TARGET_FILE:tconv-import> ${dyn} --check 1 --dim N=0 EXIT 2
               STDERR "--dim needs NAME=VALUE with VALUE >= 1, got 'N=0'")
tconv_cli_test(import_check_dims_given CMD $<TARGET_FILE:tconv-import> ${dyn} --check 2 --dim N=2
               --dim H=5 --dim W=3 -o ${cli_work}/dyn_ok.onnx EXIT 0 STDERR "check: output 'y': .*ok"
               EXIST ${cli_work}/dyn_ok.onnx)
set(ct_same "${TCONV_ONNX_NODE_TESTS}/test_convtranspose_autopad_same")
tconv_cli_test(run_convention_legacy_differs CMD $<TARGET_FILE:tconv-run> ${ct_same}
               --convention ort-legacy EXIT 1 STDOUT "FAIL .*0 passed, 1 failed")
tconv_cli_test(run_convention_bad CMD $<TARGET_FILE:tconv-run> ${ct_same} --convention nope EXIT 2
               STDERR "unknown convention 'nope'")
tconv_cli_test(run_no_fusion CMD $<TARGET_FILE:tconv-run> ${ct_same} --no-fusion EXIT 0
               STDOUT "PASS .*1 passed, 0 failed")
tconv_cli_test(run_dim_unknown CMD $<TARGET_FILE:tconv-run> ${dyn} --dim Q=3 EXIT 2
               STDERR "--dim Q: the model has no dynamic dim")
tconv_cli_test(import_check_needs_dims CMD $<TARGET_FILE:tconv-import>
               ${PROJECT_SOURCE_DIR}/models/dynamic_same/model.onnx --check 1 -o ${cli_work}/dyn.onnx
               EXIT 2 STDERR "--dim NAME=VALUE .missing: input 'x': N, H, W."
               NOT_EXIST ${cli_work}/dyn.onnx)
# The library names its own passes; the CLI names its flag.
tconv_cli_test(import_print_ir_after_unknown CMD $<TARGET_FILE:tconv-import> ${keras}
               --print-ir-after nope -o ${cli_work}/print_after.onnx EXIT 2
               STDERR "--print-ir-after: unknown pass 'nope'" NOT_EXIST ${cli_work}/print_after.onnx)
tconv_cli_test(run_test_dir CMD $<TARGET_FILE:tconv-run> ${ct_pads} EXIT 0
               STDOUT "PASS .*test_data_set_0 max_abs_err=.*1 passed, 0 failed")
tconv_cli_test(run_random_inputs CMD $<TARGET_FILE:tconv-run> ${keras} --seed 3 EXIT 0 STDOUT "image")
# A test directory whose golden output belongs to another model must fail with exit 1.
set(wrong "${cli_work}/wrong_golden")
file(MAKE_DIRECTORY "${wrong}/test_data_set_0")
file(COPY "${ct_pads}/model.onnx" DESTINATION "${wrong}")
file(COPY "${ct_pads}/test_data_set_0/input_0.pb" "${ct_pads}/test_data_set_0/input_1.pb"
     DESTINATION "${wrong}/test_data_set_0")
file(COPY "${TCONV_ONNX_NODE_TESTS}/test_convtranspose/test_data_set_0/output_0.pb"
     DESTINATION "${wrong}/test_data_set_0")
tconv_cli_test(run_wrong_golden CMD $<TARGET_FILE:tconv-run> ${wrong} ${ct_pads} EXIT 1
               STDOUT "FAIL .*wrong_golden.*PASS .*1 passed, 1 failed")

# Outputs (issue 16 items 3, 10, 12): only regular files are replaced; a symlink is refused; a
# write past the file size limit fails (SIGXFSZ ignored) and leaves no temp file; -o naming the
# input's external data file is refused. Shell commands set up FIFOs, links and limits.
set(out_work "${cli_work}/outputs")
file(MAKE_DIRECTORY "${out_work}")
tconv_cli_test(import_output_fifo CMD sh -c "rm -f '${out_work}/fifo' && mkfifo '${out_work}/fifo' && exec '$<TARGET_FILE:tconv-import>' '${keras}' -o '${out_work}/fifo'"
               EXIT 2 STDERR "fifo: is a FIFO.*regular files" NO_TEMP_IN ${out_work})
tconv_cli_test(import_report_fifo CMD sh -c "rm -f '${out_work}/rfifo' && mkfifo '${out_work}/rfifo' && exec '$<TARGET_FILE:tconv-import>' '${keras}' --report '${out_work}/rfifo'"
               EXIT 2 STDERR "rfifo: is a FIFO" NO_TEMP_IN ${out_work})
tconv_cli_test(import_output_directory CMD $<TARGET_FILE:tconv-import> ${keras} -o ${out_work}
               EXIT 2 STDERR "outputs: is a directory" NO_TEMP_IN ${out_work})
tconv_cli_test(import_output_symlink CMD sh -c "printf old > '${out_work}/target.onnx' && ln -sfn target.onnx '${out_work}/link.onnx' && exec '$<TARGET_FILE:tconv-import>' '${keras}' -o '${out_work}/link.onnx'"
               EXIT 2 STDERR "link.onnx: is a symbolic link" NO_TEMP_IN ${out_work})
tconv_cli_test(run_save_outputs_fifo CMD sh -c "mkdir -p '${out_work}/saved' && rm -f '${out_work}/saved/output_0.pb' && mkfifo '${out_work}/saved/output_0.pb' && exec '$<TARGET_FILE:tconv-run>' '${keras}' --save-outputs '${out_work}/saved'"
               EXIT 2 STDERR "output_0.pb: is a FIFO" NO_TEMP_IN ${out_work}/saved)
# The keras model is 509 KiB; ulimit -f counts 512-byte blocks.
tconv_cli_test(import_file_size_limit CMD sh -c "ulimit -f 200 && exec '$<TARGET_FILE:tconv-import>' '${keras}' -o '${out_work}/big.onnx'"
               EXIT 2 STDERR "big.onnx: write failed: File too large" NOT_EXIST ${out_work}/big.onnx
               NO_TEMP_IN ${out_work})
file(COPY "${PROJECT_SOURCE_DIR}/tests/broken/external_ok" DESTINATION "${out_work}")
tconv_cli_test(import_output_is_input_data CMD $<TARGET_FILE:tconv-import>
               ${out_work}/external_ok/model.onnx -o ${out_work}/external_ok/w.bin
               EXIT 2 STDERR "w.bin: is the input model's external data file"
               SAME_FILES ${out_work}/external_ok/w.bin ${PROJECT_SOURCE_DIR}/tests/broken/external_ok/w.bin
               NO_TEMP_IN ${out_work}/external_ok)
# --report and --save-outputs naming one of the input's own files (the model, its external data,
# by device and inode: a hard link too) are refused before the work, and the files stay as they
# were.
tconv_cli_test(import_report_is_input_data CMD $<TARGET_FILE:tconv-import>
               ${out_work}/external_ok/model.onnx --report ${out_work}/external_ok/w.bin
               EXIT 2 STDERR "w.bin: is the input model's external data file"
               SAME_FILES ${out_work}/external_ok/w.bin ${PROJECT_SOURCE_DIR}/tests/broken/external_ok/w.bin
               NO_TEMP_IN ${out_work}/external_ok)
tconv_cli_test(import_report_is_input CMD $<TARGET_FILE:tconv-import>
               ${out_work}/external_ok/model.onnx --dry-run --report ${out_work}/external_ok/model.onnx
               EXIT 2 STDERR "model.onnx: is the input model"
               SAME_FILES ${out_work}/external_ok/model.onnx ${PROJECT_SOURCE_DIR}/tests/broken/external_ok/model.onnx
               NO_TEMP_IN ${out_work}/external_ok)
tconv_cli_test(run_save_outputs_is_input_data CMD sh -c "rm -rf '${out_work}/linked' && mkdir -p '${out_work}/linked' && ln '${out_work}/external_ok/w.bin' '${out_work}/linked/output_0.pb' && exec '$<TARGET_FILE:tconv-run>' '${out_work}/external_ok/model.onnx' --save-outputs '${out_work}/linked'"
               EXIT 2 STDERR "output_0.pb: is the input model's external data file"
               SAME_FILES ${out_work}/external_ok/w.bin ${PROJECT_SOURCE_DIR}/tests/broken/external_ok/w.bin
               NO_TEMP_IN ${out_work}/linked)
# A model with ops the runtime lacks: every rewrite is proven alone, every missing op is named
# with its count in one message, the whole-model run is skipped and the output is written.
set(missing_ops "${CMAKE_CURRENT_LIST_DIR}/data/missing_ops.onnx")
tconv_cli_test(import_check_missing_ops CMD $<TARGET_FILE:tconv-import> ${missing_ops} --check 2
               --report ${cli_work}/missing_ops.json -o ${cli_work}/missing_ops.onnx EXIT 0
               STDERR "node 'up1' alone: ok on x.1,4,5,6. .2 runs.*node 'up2' alone: ok.*whole model: skipped: the runtime lacks MeanVarianceNormalization x2 .mvn1, mvn2., Bernoulli x1 .bernoulli..*wrote"
               EXIST ${cli_work}/missing_ops.onnx)
tconv_cli_test(import_check_missing_ops_faulty CMD $<TARGET_FILE:tconv-import-faulty> ${missing_ops}
               --check 1 -o ${cli_work}/missing_ops_bad.onnx EXIT 1
               STDERR "node 'up1' alone: MISMATCH.*was not written" NOT_EXIST ${cli_work}/missing_ops_bad.onnx)
tconv_cli_test(run_missing_ops CMD $<TARGET_FILE:tconv-run> ${missing_ops} EXIT 2
               STDERR "unsupported|MeanVarianceNormalization")
# No shape reaches the ConvTranspose (a custom op before it): the proof takes rank and channels
# from the weights and tries five sizes (3-5, then 1 and 2); a wrong crop is still caught.
set(unknown_shape "${CMAKE_CURRENT_LIST_DIR}/data/unknown_shape.onnx")
tconv_cli_test(import_check_unknown_shape CMD $<TARGET_FILE:tconv-import> ${unknown_shape} --check 1
               -o ${cli_work}/unknown_shape.onnx EXIT 0
               STDERR "node 'up' alone: ok on s.3 guessed,4,3 guessed,3 guessed.. s.4 guessed,4,4 guessed,4 guessed.. s.5 guessed,4,5 guessed,5 guessed.. s.1,4,1,1.. s.2,4,2,2. .5 runs, shape guessed.*whole model: skipped: the runtime lacks com.example.Scale x1"
               EXIST ${cli_work}/unknown_shape.onnx)
tconv_cli_test(import_check_unknown_shape_faulty CMD $<TARGET_FILE:tconv-import-faulty> ${unknown_shape}
               --check 1 -o ${cli_work}/unknown_shape_bad.onnx EXIT 1
               STDERR "node 'up' alone: MISMATCH.*was not written" NOT_EXIST ${cli_work}/unknown_shape_bad.onnx)
# tconv-run --profile: the trace is onnxruntime's profile layout, holds every node of every run
# (validated by python3's json in check_profile.py, registered where python3-onnx exists), and
# a bad target is refused before the run, naming the file, with nothing written.
execute_process(COMMAND /usr/bin/python3 -c "import onnx" RESULT_VARIABLE tconv_cli_no_onnx
                OUTPUT_QUIET ERROR_QUIET)
if(tconv_cli_no_onnx EQUAL 0)
  set(check_profile /usr/bin/python3 "${CMAKE_CURRENT_LIST_DIR}/check_profile.py" $<TARGET_FILE:tconv-run>)
  add_test(NAME cli.run_profile_model COMMAND ${check_profile}
           "${PROJECT_SOURCE_DIR}/models/dcgan_generator/model.onnx" "${cli_work}/profile_dcgan.json" 1
           --threads 2)
  add_test(NAME cli.run_profile_fused COMMAND ${check_profile} ${keras}
           "${cli_work}/profile_keras.json" 1 --import $<TARGET_FILE:tconv-import>)
  add_test(NAME cli.run_profile_unfused COMMAND ${check_profile} ${keras}
           "${cli_work}/profile_keras_unfused.json" 1 --import $<TARGET_FILE:tconv-import> --no-fusion)
  add_test(NAME cli.run_profile_test_dir COMMAND ${check_profile}
           "${PROJECT_SOURCE_DIR}/tests/golden/dynamic_output_shape/notset_k3_s2_2d"
           "${cli_work}/profile_dir.json" 5)
endif()
tconv_cli_test(run_profile_is_folder CMD $<TARGET_FILE:tconv-run> ${keras} --profile ${cli_work}
               EXIT 2 STDERR "${cli_work}")
tconv_cli_test(run_profile_is_model CMD sh -c "cp '${keras}' '${cli_work}/profiled.onnx' && exec '$<TARGET_FILE:tconv-run>' '${cli_work}/profiled.onnx' --profile '${cli_work}/profiled.onnx'"
               EXIT 2 STDERR "profiled.onnx")
tconv_cli_test(run_profile_two_dirs CMD $<TARGET_FILE:tconv-run> ${ct_pads} ${ct_pads} --profile
               ${cli_work}/two.json EXIT 2 STDERR "--profile takes one model or one test directory"
               NOT_EXIST ${cli_work}/two.json)
tconv_cli_test(run_profile_failed_run CMD $<TARGET_FILE:tconv-run> ${missing_ops} --profile
               ${cli_work}/failed.json EXIT 2 STDERR "cannot run this model.*MeanVarianceNormalization" NOT_EXIST ${cli_work}/failed.json)
# The Python package's API tests (python/tests/test_api.py: inputs, dtypes, profiles, errors and
# leaks, python3 -m tconv against tconv-import, the README's example) where /usr/bin/python3 has
# numpy, onnx and pytest; scripts/test-python.sh runs them with the golden suites and the install.
execute_process(COMMAND /usr/bin/python3 -c "import numpy, onnx, pytest" RESULT_VARIABLE tconv_cli_no_pytest
                OUTPUT_QUIET ERROR_QUIET)
# Not in a sanitizer build: python3 cannot load a libtconv built with AddressSanitizer.
if(tconv_cli_no_pytest EQUAL 0 AND NOT TCONV_SANITIZE)
  add_test(NAME python.api COMMAND /usr/bin/python3 -m pytest -q -p no:cacheprovider
           "${PROJECT_SOURCE_DIR}/python/tests/test_api.py")
  set_tests_properties(python.api PROPERTIES TIMEOUT 600
                       ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;TCONV_BUILD=${PROJECT_BINARY_DIR}")
endif()
