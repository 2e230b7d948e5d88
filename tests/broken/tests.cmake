# broken.<case>: every row of tests/broken/cases.tsv runs its CLI on a committed broken model
# through run_case.cmake (exit code, error text, no output written, input and existing output
# untouched).
set(tconv_broken_dir "${CMAKE_CURRENT_LIST_DIR}")
# Semicolons and square brackets would change how CMake splits the list of rows: keep them
# out of it.
file(READ "${tconv_broken_dir}/cases.tsv" tconv_broken_text)
string(REPLACE ";" "<tconv-sc>" tconv_broken_text "${tconv_broken_text}")
string(REPLACE "[" "<tconv-lb>" tconv_broken_text "${tconv_broken_text}")
string(REPLACE "]" "<tconv-rb>" tconv_broken_text "${tconv_broken_text}")
string(REPLACE "\n" ";" tconv_broken_rows "${tconv_broken_text}")
foreach(row ${tconv_broken_rows})
  if(row STREQUAL "")
    continue()
  endif()
  string(REPLACE "<tconv-sc>" ";" row "${row}")
  string(REPLACE "<tconv-lb>" "[" row "${row}")
  string(REPLACE "<tconv-rb>" "]" row "${row}")
  if(row MATCHES "^#" OR row MATCHES "^case\t")
    continue()
  endif()
  if(NOT row MATCHES "^([A-Za-z0-9_]+)\t([^\t]+)\t(tconv-import|tconv-run)\t([^\t]+)\t([0-9]+)\t(.*)$")
    message(FATAL_ERROR "tests/broken/cases.tsv: bad row '${row}'")
  endif()
  set(case_name "${CMAKE_MATCH_1}")
  set(case_file "${CMAKE_MATCH_2}")
  set(case_tool "${CMAKE_MATCH_3}")
  set(case_args "${CMAKE_MATCH_4}")
  set(case_exit "${CMAKE_MATCH_5}")
  set(case_regex "${CMAKE_MATCH_6}")
  add_test(NAME "broken.${case_name}"
           COMMAND "${CMAKE_COMMAND}" "-DTOOL=$<TARGET_FILE:${case_tool}>" "-DTOOL_NAME=${case_tool}"
                   "-DIMPORT=$<TARGET_FILE:tconv-import>" "-DINPUT=${tconv_broken_dir}/${case_file}"
                   "-DARGS=${case_args}" "-DEXIT=${case_exit}" "-DREGEX=${case_regex}"
                   "-DWORK=${PROJECT_BINARY_DIR}/broken/${case_name}" "-DCASE_DIR=${tconv_broken_dir}"
                   -P "${tconv_broken_dir}/run_case.cmake")
  set_tests_properties("broken.${case_name}" PROPERTIES TIMEOUT 300 LABELS broken)
endforeach()
