# cmake -DNM=<nm> -DCHECKER=<arch_check> -DOBJECTS=<a.o|b.o|...> -DOUT=<file> [-DMIN=<n>]
#       [-DEXPECT_FILE=<file>] -P check_calls.cmake
# Lists the objects' symbols (`nm -A -P`) in OUT and runs `arch_check --calls OUT` on them: no
# file calls a room it may not include, no call circle between the files of src/runtime
# (arch_check.c says how). EXPECT_FILE: the objects break those rules on purpose (the fixture
# under calls/): the check must fail and print every line of that file (a regex each), or a
# checker that finds nothing would pass arch.calls.
cmake_minimum_required(VERSION 3.25)

if(NOT NM)
  message(FATAL_ERROR "no nm: CMAKE_NM is empty (binutils lists the objects' symbols)")
endif()
string(REPLACE "|" ";" objects "${OBJECTS}")
execute_process(COMMAND "${NM}" -A -P ${objects} RESULT_VARIABLE rc OUTPUT_FILE "${OUT}"
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -A -P failed (${rc}): ${err}")
endif()
if(NOT DEFINED MIN)
  set(MIN 100)
endif()
execute_process(COMMAND "${CHECKER}" --calls "${OUT}" ${MIN} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message("exit ${rc}\n${out}")
if(NOT DEFINED EXPECT_FILE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "calls against the rooms' arrows (above)")
  endif()
  return()
endif()
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit 1, got ${rc}")
endif()
file(STRINGS "${EXPECT_FILE}" expected)
foreach(line IN LISTS expected)
  if(NOT out MATCHES "${line}")
    message(FATAL_ERROR "the report lacks '${line}'")
  endif()
endforeach()
