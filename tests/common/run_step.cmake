# run_step(WHAT COMMAND...): runs a command for a cmake -P test script, prints its output and
# fails the test on a non-zero exit; the command's stderr is left in `step_stderr`.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${what}:\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc})")
  endif()
  set(step_stderr "${err}" PARENT_SCOPE)
endfunction()
