# The ONNX v1.22.0 node conformance suite, vendored as tests/data/onnx-node-tests-v1.22.0.tar.xz
# (tests/data/MANIFEST.md: where it came from, how the archive is made). It is unpacked here, at
# configure time, into the build tree, and only when the unpacked copy is missing or was made
# from a different archive (the archive's SHA-256 is kept beside it). Sets
#   TCONV_ONNX_NODE_TESTS   the folder that directly holds the 1,765 test_* folders
# which tests/CMakeLists.txt also passes to the C tests as a compile definition of that name.
set(TCONV_ONNX_NODE_TESTS_ARCHIVE "${PROJECT_SOURCE_DIR}/tests/data/onnx-node-tests-v1.22.0.tar.xz")
set(TCONV_ONNX_NODE_TESTS "${PROJECT_BINARY_DIR}/onnx-node-tests-v1.22.0")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${TCONV_ONNX_NODE_TESTS_ARCHIVE}")

function(tconv_unpack_onnx_node_tests archive dest)
  file(SHA256 "${archive}" hash)
  set(stamp "${dest}.sha256")
  if(IS_DIRECTORY "${dest}" AND EXISTS "${stamp}")
    file(READ "${stamp}" unpacked_from)
    if(unpacked_from STREQUAL hash)
      return()
    endif()
  endif()
  # Unpacked beside and renamed into place, so an interrupted configure never leaves a partial
  # folder that a later one would take for complete.
  set(tmp "${dest}.unpacking")
  file(REMOVE_RECURSE "${tmp}" "${dest}" "${stamp}")
  file(MAKE_DIRECTORY "${tmp}")
  string(TIMESTAMP start "%s")
  file(ARCHIVE_EXTRACT INPUT "${archive}" DESTINATION "${tmp}")
  get_filename_component(top "${dest}" NAME)
  if(NOT IS_DIRECTORY "${tmp}/${top}")
    message(FATAL_ERROR "${archive}: expected a single folder ${top}/ in the archive")
  endif()
  file(RENAME "${tmp}/${top}" "${dest}")
  file(REMOVE_RECURSE "${tmp}")
  file(WRITE "${stamp}" "${hash}")
  string(TIMESTAMP end "%s")
  math(EXPR seconds "${end} - ${start}")
  message(STATUS "Unpacked the ONNX node tests into ${dest} (${seconds} s)")
endfunction()

if(NOT EXISTS "${TCONV_ONNX_NODE_TESTS_ARCHIVE}")
  message(FATAL_ERROR "${TCONV_ONNX_NODE_TESTS_ARCHIVE} is missing: the tests need it "
                      "(it is part of the repository; a checkout without it is incomplete)")
endif()
tconv_unpack_onnx_node_tests("${TCONV_ONNX_NODE_TESTS_ARCHIVE}" "${TCONV_ONNX_NODE_TESTS}")
