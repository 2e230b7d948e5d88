# Two torch 2.x-style exports (weights in model.onnx.data beside model.onnx) converted into one
# folder, in place, and into another folder: each output's data goes to a file named after it
# (out/a.onnx -> out/a.onnx.data), and every converted model runs to the original's checksum.
# Run with cmake -P and IMPORT, RUN (the two CLIs), DATA (tests/proof), WORK (a scratch folder).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/out")
file(COPY "${DATA}/ext_a" "${DATA}/ext_b" DESTINATION "${WORK}")

function(must_run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGN}: exit ${rc}\n${out}${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

# The checksum line of a model's output on seeded inputs.
function(checksum model var)
  must_run("${RUN}" "${model}" --seed 3)
  set(${var} "${last_out}" PARENT_SCOPE)
endfunction()

checksum("${WORK}/ext_a/model.onnx" want_a)
checksum("${WORK}/ext_b/model.onnx" want_b)

# One folder, two models: no clash.
must_run("${IMPORT}" "${WORK}/ext_a/model.onnx" -o "${WORK}/out/a.onnx" --check 2 --quiet)
must_run("${IMPORT}" "${WORK}/ext_b/model.onnx" -o "${WORK}/out/b.onnx" --check 2 --quiet)
foreach(f a.onnx a.onnx.data b.onnx b.onnx.data)
  if(NOT EXISTS "${WORK}/out/${f}")
    message(FATAL_ERROR "out/${f} was not written")
  endif()
endforeach()
if(EXISTS "${WORK}/out/model.onnx.data")
  message(FATAL_ERROR "out/model.onnx.data written: the data file must be named after the output")
endif()
checksum("${WORK}/out/a.onnx" got_a)
checksum("${WORK}/out/b.onnx" got_b)

# Another folder, made on the way.
must_run("${IMPORT}" "${WORK}/ext_b/model.onnx" -o "${WORK}/other/sub/model.onnx" --quiet)
checksum("${WORK}/other/sub/model.onnx" got_other)

# In place, twice: the model and its data file are replaced together and keep working.
must_run("${IMPORT}" "${WORK}/ext_a/model.onnx" -o "${WORK}/ext_a/model.onnx" --check 2 --quiet)
must_run("${IMPORT}" "${WORK}/ext_a/model.onnx" -o "${WORK}/ext_a/model.onnx" --check 2 --quiet)
checksum("${WORK}/ext_a/model.onnx" got_in_place)
file(GLOB left "${WORK}/ext_a/*")
list(LENGTH left n_left)
if(NOT n_left EQUAL 2)
  message(FATAL_ERROR "in place: expected model.onnx and model.onnx.data, found ${left}")
endif()

foreach(pair "want_a;got_a" "want_b;got_b" "want_b;got_other" "want_a;got_in_place")
  list(GET pair 0 want)
  list(GET pair 1 got)
  if(NOT "${${want}}" STREQUAL "${${got}}")
    message(FATAL_ERROR "${got}: '${${got}}' differs from the original's '${${want}}'")
  endif()
endforeach()
message("ok: ${want_a}${want_b}")
