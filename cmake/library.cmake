# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The cordon Authors

# The installable library: libcordon.a and libcordon.so, made of the objects of the internal
# libraries (base, sandbox, classify, runtime, proxy, policy, mcp, and the spdlog implementation
# they log through), with include/cordon/ as their one interface. Built in trees without a
# sanitizer. docs/library.md says how a program uses it; the private tree is never installed.
#
# Visibility: every internal library is compiled with hidden visibility, and the public headers
# export what they declare (cordon/export.hpp). The linker's version script (cordon.map) then also
# keeps out the standard library's template instantiations, so that libcordon.so exports the
# cordon API and nothing else.

set(cordon_library_parts cordon_base cordon_sandbox cordon_classify cordon_runtime cordon_proxy
                         cordon_policy cordon_mcp cordon_logging)
foreach(part IN LISTS cordon_library_parts)
  set_target_properties(${part} PROPERTIES POSITION_INDEPENDENT_CODE ON
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endforeach()

set(cordon_library_objects)
foreach(part IN LISTS cordon_library_parts)
  list(APPEND cordon_library_objects $<TARGET_OBJECTS:${part}>)
endforeach()

# The installed target's interface is written out here, not inherited from the parts: their
# logging and Asio definitions stay theirs (a program that includes no spdlog header has no
# business with SPDLOG_COMPILED_LIB).
function(cordon_installed_library name type)
  add_library(${name} ${type} ${cordon_library_objects})
  set_target_properties(${name} PROPERTIES OUTPUT_NAME cordon EXPORT_NAME ${name}
                                           ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
                                           LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
  target_include_directories(${name} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${name} INTERFACE cxx_std_20)
  # libvterm by its plain name, not pkg-config's imported target: the static library's exported
  # interface then asks a program's link for -lvterm, and its package configuration needs no
  # pkg-config to find it.
  target_link_libraries(${name} PUBLIC nlohmann_json::nlohmann_json Boost::headers
                        PRIVATE Threads::Threads ${CMAKE_DL_LIBS} vterm)
endfunction()

cordon_installed_library(cordon_static STATIC)
cordon_installed_library(cordon_shared SHARED)
set_target_properties(cordon_shared PROPERTIES
  VERSION ${PROJECT_VERSION}
  # 0.x: a minor release may break the ABI, so the SONAME names the minor (libcordon.so.0.1).
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/cordon.map)
target_link_options(cordon_shared PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/cordon.map
                    -Wl,--no-undefined)

include(CMakePackageConfigHelpers)
set(cordon_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)

install(TARGETS cordon_static cordon_shared EXPORT cordonTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT dev)
install(DIRECTORY include/cordon DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/cordon/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cordon COMPONENT dev)
install(EXPORT cordonTargets NAMESPACE cordon:: DESTINATION ${cordon_cmake_dir} COMPONENT dev)

configure_package_config_file(cmake/cordonConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cordonConfig.cmake INSTALL_DESTINATION ${cordon_cmake_dir}
  PATH_VARS CMAKE_INSTALL_LIBEXECDIR)
# 0.x: only the same minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cordonConfig.cmake ${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
        DESTINATION ${cordon_cmake_dir} COMPONENT dev)

# pkg-config: the shared library by default; `pkg-config --static` adds what the static one needs.
file(RELATIVE_PATH cordon_pc_prefix /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
# dladdr1 (sandbox/runner_path.cpp) is in libc from glibc 2.34 on, in libdl before.
set(CMAKE_DL_LIBS_FLAG)
foreach(lib IN LISTS CMAKE_DL_LIBS)
  string(APPEND CMAKE_DL_LIBS_FLAG " -l${lib}")
endforeach()
configure_file(cmake/cordon.pc.in ${PROJECT_BINARY_DIR}/cordon.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cordon.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)
