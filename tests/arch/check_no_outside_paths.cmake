# cmake -DSOURCE=<dir> [-DSELF_TEST=<work dir>] -P check_no_outside_paths.cmake
# The repository stands alone: no tracked file may name the `shared` folder beside a checkout
# that once held the ONNX test data and design notes (as a relative path from the checkout, or
# its absolute path under /work) or the removed CMake option that pointed at it; the build, tests, fuzzers, generators and docs read tests/data and
# docs/ instead. Lists the tracked files with `git grep` (text files; binary data cannot name a
# path). Not a git checkout (a source tarball): prints "not a git checkout" (ctest: skipped).
# SELF_TEST: makes a small git repository in that folder with one violation of each kind and
# fails unless every one is reported, so a checker that finds nothing cannot pass.
cmake_minimum_required(VERSION 3.25)

# Spelled in pieces so that this file does not name them itself.
set(dotdot "..")
set(work "/work")
set(option "TCONV")
set(patterns "${dotdot}/shared" "${work}/shared" "${option}_SHARED")

find_program(TCONV_GIT git)

function(find_outside_paths dir out_found out_report)
  set(args)
  foreach(p IN LISTS patterns)
    list(APPEND args -e "${p}")
  endforeach()
  execute_process(COMMAND "${TCONV_GIT}" -C "${dir}" -c core.quotepath=off grep -n -I -F ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE hits ERROR_VARIABLE err)
  if(rc EQUAL 1)
    set(${out_found} FALSE PARENT_SCOPE)
  elseif(rc EQUAL 0)
    set(${out_found} TRUE PARENT_SCOPE)
  else()
    message(FATAL_ERROR "git grep in ${dir} failed (${rc}): ${err}")
  endif()
  set(${out_report} "${hits}" PARENT_SCOPE)
endfunction()

if(DEFINED SELF_TEST)
  if(NOT TCONV_GIT)
    message(FATAL_ERROR "git is needed (Debian: apt-get install git)")
  endif()
  file(REMOVE_RECURSE "${SELF_TEST}")
  file(MAKE_DIRECTORY "${SELF_TEST}/docs")
  execute_process(COMMAND "${TCONV_GIT}" init -q "${SELF_TEST}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git init ${SELF_TEST} failed")
  endif()
  file(WRITE "${SELF_TEST}/clean.md" "see docs/semantics.md and tests/data\n")
  execute_process(COMMAND "${TCONV_GIT}" -C "${SELF_TEST}" add clean.md)
  find_outside_paths("${SELF_TEST}" found report)
  if(found)
    message(FATAL_ERROR "a clean tree was reported:\n${report}")
  endif()
  set(i 0)
  foreach(p IN LISTS patterns)
    file(WRITE "${SELF_TEST}/docs/bad${i}.md" "line one\nsee ${p}/onnx\n")
    math(EXPR i "${i} + 1")
  endforeach()
  file(WRITE "${SELF_TEST}/untracked.md" "${dotdot}/shared is fine in a file git does not track\n")
  execute_process(COMMAND "${TCONV_GIT}" -C "${SELF_TEST}" add docs)
  find_outside_paths("${SELF_TEST}" found report)
  set(i 0)
  foreach(p IN LISTS patterns)
    if(NOT report MATCHES "docs/bad${i}.md:2:")
      message(FATAL_ERROR "docs/bad${i}.md (naming ${p}) was not reported:\n${report}")
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
  if(report MATCHES "untracked.md")
    message(FATAL_ERROR "an untracked file was reported:\n${report}")
  endif()
  message(STATUS "the check reports every kind of violation:\n${report}")
  return()
endif()

if(NOT EXISTS "${SOURCE}/.git")
  message(STATUS "${SOURCE} is not a git checkout: no tracked files to check")
  return()
endif()
if(NOT TCONV_GIT)
  message(FATAL_ERROR "${SOURCE} is a git checkout but git is missing: it lists the tracked "
                      "files (Debian: apt-get install git)")
endif()
find_outside_paths("${SOURCE}" found report)
if(found)
  message(FATAL_ERROR "tracked files name a folder outside the repository (use tests/data, "
                      "TCONV_ONNX_NODE_TESTS or docs/ instead):\n${report}")
endif()
message(STATUS "no tracked file names a folder outside the repository")
