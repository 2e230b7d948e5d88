# The Python package tconv (python/tconv: pure Python over libtconv through ctypes).
#   build tree:  ${PROJECT_BINARY_DIR}/python/tconv, with _libpath.py naming the built
#                libtconv.so: PYTHONPATH=${PROJECT_BINARY_DIR}/python python3 -c 'import tconv'
#   installed:   ${TCONV_PYTHON_INSTALL_DIR}/tconv under the prefix, its _libpath.py finding the
#                installed libtconv.so.N relative to itself (so a prefix can be moved)
set(TCONV_PYTHON_INSTALL_DIR "lib/python3/dist-packages" CACHE STRING
    "Where cmake --install puts the Python package tconv (relative: under the prefix)")
file(GLOB tconv_python_sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/python/tconv/*.py")
set(tconv_python_build "${PROJECT_BINARY_DIR}/python/tconv")

file(GENERATE OUTPUT "${tconv_python_build}/_libpath.py" CONTENT
"\"\"\"Where this build tree's libtconv is (written by CMake, cmake/tconv_python.cmake).\"\"\"


def library():
    return \"$<TARGET_FILE:tconv_shared>\"
")
set(tconv_python_copies "")
foreach(source ${tconv_python_sources})
  get_filename_component(name "${source}" NAME)
  add_custom_command(OUTPUT "${tconv_python_build}/${name}"
                     COMMAND "${CMAKE_COMMAND}" -E copy "${source}" "${tconv_python_build}/${name}"
                     DEPENDS "${source}" VERBATIM)
  list(APPEND tconv_python_copies "${tconv_python_build}/${name}")
endforeach()
add_custom_target(tconv_python ALL DEPENDS ${tconv_python_copies} tconv_shared)

set(tconv_lib_file "libtconv.so.${PROJECT_VERSION_MAJOR}")
if(IS_ABSOLUTE "${TCONV_PYTHON_INSTALL_DIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(tconv_python_libpath "return \"${CMAKE_INSTALL_FULL_LIBDIR}/${tconv_lib_file}\"")
else()
  file(RELATIVE_PATH tconv_python_rel "/prefix/${TCONV_PYTHON_INSTALL_DIR}/tconv"
       "/prefix/${CMAKE_INSTALL_LIBDIR}/${tconv_lib_file}")
  set(tconv_python_libpath
      "return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), \"${tconv_python_rel}\"))")
endif()
file(WRITE "${PROJECT_BINARY_DIR}/python-install/_libpath.py"
"\"\"\"Where the installed libtconv is (written by CMake, cmake/tconv_python.cmake).\"\"\"
import os


def library():
    ${tconv_python_libpath}
")
install(FILES ${tconv_python_sources} "${PROJECT_BINARY_DIR}/python-install/_libpath.py"
        DESTINATION "${TCONV_PYTHON_INSTALL_DIR}/tconv")
