# arch.*: the architecture as a test (tests/arch/arch_check.c says which rules it enforces).
add_executable(arch_check "${CMAKE_CURRENT_LIST_DIR}/arch_check.c")
target_compile_options(arch_check PRIVATE ${TCONV_WARNINGS})
add_test(NAME arch.includes COMMAND arch_check "${PROJECT_SOURCE_DIR}")
# The checker on a small tree that breaks every rule once: each break must be reported with
# its file and line, or a checker that finds nothing would pass arch.includes.
add_test(NAME arch.catches_violations
         COMMAND "${CMAKE_COMMAND}" "-DCHECKER=$<TARGET_FILE:arch_check>"
                 "-DTREE=${CMAKE_CURRENT_LIST_DIR}/violations" -P "${CMAKE_CURRENT_LIST_DIR}/expect_violations.cmake")
# The repository stands alone: no tracked file names the folder beside a checkout
# (check_no_outside_paths.cmake says what it looks for), and the check itself reports a planted
# violation of each kind.
add_test(NAME arch.self_contained
         COMMAND "${CMAKE_COMMAND}" "-DSOURCE=${PROJECT_SOURCE_DIR}"
                 -P "${CMAKE_CURRENT_LIST_DIR}/check_no_outside_paths.cmake")
set_tests_properties(arch.self_contained PROPERTIES SKIP_REGULAR_EXPRESSION "is not a git checkout")
add_test(NAME arch.self_contained_catches_violations
         COMMAND "${CMAKE_COMMAND}" "-DSELF_TEST=${PROJECT_BINARY_DIR}/arch_self_contained"
                 -P "${CMAKE_CURRENT_LIST_DIR}/check_no_outside_paths.cmake")
# Calls follow the arrows too, and no call circle joins the files of src/runtime: read from the
# library's objects (nm), which see what a header's declarations hide from arch.includes.
add_test(NAME arch.calls
         COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DCHECKER=$<TARGET_FILE:arch_check>"
                 "-DOBJECTS=$<JOIN:$<TARGET_OBJECTS:tconv_obj>,|>"
                 "-DOUT=${CMAKE_CURRENT_BINARY_DIR}/arch_calls_symbols.txt"
                 -P "${CMAKE_CURRENT_LIST_DIR}/check_calls.cmake")
# The same check on objects that break each rule once (calls/: a call up between runtime rooms,
# one between rooms of src/, a circle across rooms and one inside a room): each must be named.
file(GLOB_RECURSE arch_call_fixture CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/calls/*.c")
add_library(arch_calls_fixture OBJECT ${arch_call_fixture})
target_compile_options(arch_calls_fixture PRIVATE ${TCONV_WARNINGS})
add_test(NAME arch.calls_catch_violations
         COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DCHECKER=$<TARGET_FILE:arch_check>"
                 "-DOBJECTS=$<JOIN:$<TARGET_OBJECTS:arch_calls_fixture>,|>"
                 "-DOUT=${CMAKE_CURRENT_BINARY_DIR}/arch_calls_fixture_symbols.txt" -DMIN=9
                 "-DEXPECT_FILE=${CMAKE_CURRENT_LIST_DIR}/calls/expected.txt"
                 -P "${CMAKE_CURRENT_LIST_DIR}/check_calls.cmake")
