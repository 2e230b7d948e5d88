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
