# The library as a package: the shared and the static library export exactly the public API, and
# `cmake --install` installs both libraries, the public headers, the CLIs, a CMake package
# (find_package(tconv) -> tconv::tconv, tconv::tconv_static) and a pkg-config file (tconv.pc).
# Included from the top-level CMakeLists.txt after the library and CLI targets exist.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
include("${CMAKE_CURRENT_LIST_DIR}/tconv_public_api.cmake")

file(GLOB TCONV_PUBLIC_HEADERS CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/tconv/*.h")
# Re-run configure when a header changes: the version script is generated from them.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${TCONV_PUBLIC_HEADERS})

# --- the headers' version must be the project's
file(STRINGS "${PROJECT_SOURCE_DIR}/include/tconv/version.h" tconv_version_lines
     REGEX "^#define TCONV_VERSION_(MAJOR|MINOR|PATCH) [0-9]+$")
list(LENGTH tconv_version_lines tconv_version_parts)
if(NOT tconv_version_parts EQUAL 3)
  message(FATAL_ERROR "include/tconv/version.h must define TCONV_VERSION_MAJOR, _MINOR and _PATCH")
endif()
foreach(part MAJOR MINOR PATCH)
  list(FILTER tconv_version_lines EXCLUDE REGEX "^#define TCONV_VERSION_${part} ${PROJECT_VERSION_${part}}$")
endforeach()
if(tconv_version_lines)
  message(FATAL_ERROR "include/tconv/version.h does not match project(VERSION ${PROJECT_VERSION}): "
                      "${tconv_version_lines}")
endif()

# --- exported symbols: a version script listing the public functions, everything else local
tconv_public_functions(TCONV_PUBLIC_FUNCTIONS ${TCONV_PUBLIC_HEADERS})
list(JOIN TCONV_PUBLIC_FUNCTIONS ";\n    " tconv_map_globals)
set(TCONV_VERSION_SCRIPT "${PROJECT_BINARY_DIR}/tconv.map")
file(CONFIGURE OUTPUT "${TCONV_VERSION_SCRIPT}" CONTENT
     "/* Generated from include/tconv/*.h by cmake/tconv_package.cmake. */\n{\n  global:\n    ${tconv_map_globals};\n  local:\n    *;\n};\n")
# --no-undefined: an internal symbol missing from the library is a link error here, not a crash
# in a program that loads it.
target_link_options(tconv_shared PRIVATE "LINKER:--version-script=${TCONV_VERSION_SCRIPT}"
                    "LINKER:--no-undefined-version" "LINKER:--no-undefined")
set_property(TARGET tconv_shared APPEND PROPERTY LINK_DEPENDS "${TCONV_VERSION_SCRIPT}")

# --- the installed static library: every object linked into one relocatable object (ld -r) in
# which only the public functions stay global (objcopy --keep-global-symbols, same list as the
# version script); every internal symbol, protobuf-c's generated ONNX code included, becomes local
# to that object, so a program linking libtconv.a sees the public API alone and cannot clash with
# tconv's internals. Code that calls internal functions links tconv_internal instead.
set(TCONV_PUBLIC_SYMBOLS "${PROJECT_BINARY_DIR}/tconv.public")
list(JOIN TCONV_PUBLIC_FUNCTIONS "\n" tconv_public_lines)
file(CONFIGURE OUTPUT "${TCONV_PUBLIC_SYMBOLS}" CONTENT "${tconv_public_lines}\n")
set(tconv_static_object "${PROJECT_BINARY_DIR}/tconv_public_api.o")
add_custom_command(
  OUTPUT "${tconv_static_object}"
  COMMAND "${CMAKE_LINKER}" -r -o "${tconv_static_object}.all" $<TARGET_OBJECTS:tconv_obj>
          $<TARGET_OBJECTS:tconv_proto>
  COMMAND "${CMAKE_OBJCOPY}" "--keep-global-symbols=${TCONV_PUBLIC_SYMBOLS}"
          "${tconv_static_object}.all" "${tconv_static_object}"
  COMMAND "${CMAKE_COMMAND}" -E rm -f "${tconv_static_object}.all"
  DEPENDS tconv_obj tconv_proto $<TARGET_OBJECTS:tconv_obj> $<TARGET_OBJECTS:tconv_proto>
          "${TCONV_PUBLIC_SYMBOLS}"
  COMMAND_EXPAND_LISTS VERBATIM
  COMMENT "Linking libtconv.a's single object: only the public API stays global")
add_library(tconv_static STATIC "${tconv_static_object}")
set_target_properties(tconv_static PROPERTIES OUTPUT_NAME tconv LINKER_LANGUAGE C)
target_link_libraries(tconv_static PUBLIC ${TCONV_LINK_LIBS})

# --- usage requirements of the installed targets: public headers only
target_include_directories(tconv_shared PUBLIC
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>" "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
target_include_directories(tconv_static INTERFACE
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>" "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
set_target_properties(tconv_shared PROPERTIES EXPORT_NAME tconv)
set_target_properties(tconv_static PROPERTIES EXPORT_NAME tconv_static)

# --- install
install(TARGETS tconv_shared tconv_static EXPORT tconvTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(TARGETS tconv-import tconv-run RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES ${TCONV_PUBLIC_HEADERS} DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tconv")

set(tconv_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/tconv")
install(EXPORT tconvTargets NAMESPACE tconv:: DESTINATION "${tconv_cmake_dir}")
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/tconvConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/tconvConfig.cmake"
                              INSTALL_DESTINATION "${tconv_cmake_dir}")
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tconvConfigVersion.cmake"
                                 VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tconvConfig.cmake" "${PROJECT_BINARY_DIR}/tconvConfigVersion.cmake"
        DESTINATION "${tconv_cmake_dir}")

# pkg-config: the prefix is found relative to the .pc file, so `cmake --install --prefix DIR`
# (and moving the tree) keeps it right.
file(RELATIVE_PATH TCONV_PC_PREFIX_FROM_PCDIR "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" TCONV_PC_PREFIX_FROM_PCDIR "${TCONV_PC_PREFIX_FROM_PCDIR}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/tconv.pc.in" "${PROJECT_BINARY_DIR}/tconv.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/tconv.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
install(FILES "${PROJECT_SOURCE_DIR}/docs/api.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
