# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The cordon Authors

# The Debian packages, built by `cpack -G DEB` in a configured build tree (included at the end of
# the top-level CMakeLists.txt, after every install() rule).
#
# Three components, one package each (CPACK_DEB_COMPONENT_INSTALL), as Debian splits a library:
#   runtime -> cordon:       bin/cordon, libexec/cordon/cordon-landlock, the man pages and the
#                            bash completion;
#   library -> libcordon0.1: the shared library, named after its SONAME as Debian names
#                            libraries (libcordon.so.0.1: a 0.x minor may break the ABI); it
#                            depends on cordon of its own version for the launcher every confined
#                            run starts, whose status protocol is the library's;
#   dev     -> cordon-dev:   the headers, the static library, the CMake package configuration and
#                            the pkg-config file, for building against the library.
# An agent's host needs cordon alone, a program that links the library libcordon0.1, a developer
# cordon-dev. An install() rule names its component (COMPONENT runtime|library|dev); a component
# with no rule yet has no package, and a rule without COMPONENT would land in a fourth package
# ("Unspecified"), which nothing should. Each package carries its copyright file and changelog in
# share/doc/<package>/ (packaging/), and lintian passes on all three (scripts/check-install).
#
# The packages install where the tree was configured to (CMAKE_INSTALL_PREFIX, /usr/local unless
# told), since the library's absolute path to the launcher is compiled in
# (sandbox/CMakeLists.txt): configure with -DCMAKE_INSTALL_PREFIX=/usr for a package to hand out,
# as scripts/test does. cordon itself finds its launcher relative to its own directory either way.
set(CORDON_PACKAGE_MAINTAINER
    "cordon maintainers <maintainers@users.noreply.a-seed-f668f7d0.example>"
    CACHE STRING "The Maintainer field of the Debian packages")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cordon)
set(CPACK_PACKAGE_VENDOR cordon)
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
# Without the line tables of RelWithDebInfo: a quarter of the size, and they belong in a separate
# debug package if anywhere.
set(CPACK_STRIP_FILES ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
# Named, so that one component alone still makes its own package (CPack otherwise treats a single
# component as a monolithic install, under the package-wide settings).
get_cmake_property(CPACK_COMPONENTS_ALL COMPONENTS)
if("Unspecified" IN_LIST CPACK_COMPONENTS_ALL)
  message(FATAL_ERROR "an install() rule names no COMPONENT: give it COMPONENT runtime, library "
                      "or dev (cmake/packaging.cmake says which is which)")
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <name>_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CORDON_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# gzip: as small as xz within a few percent here, and compressed in a fraction of the time
# (scripts/check-install builds the package on every CI run).
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
# The dependencies of what the packages link dynamically (the shared library and cordon;
# cordon-landlock is static), as dpkg-shlibdeps (dpkg-dev) finds them.
find_program(CORDON_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(CORDON_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()

# The shared library's shlibs file (a program built against it then depends on
# libcordon0.1 (>= this version)) and the ldconfig trigger instead of CPack's maintainer scripts
# (packaging/deb-ldconfig-trigger.cmake).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/packaging/deb-ldconfig-trigger.cmake)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME cordon)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION utils)
# `cordon run -c` runs bash, which is essential (never listed); bwrap is the first rung of the
# ladder, and without it cordon still confines with its Landlock launcher.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS bubblewrap)
# The first line is the synopsis (CPACK_PACKAGE_DESCRIPTION_SUMMARY, if set, would be put before
# it); the rest, wrapped for Debian's 80 columns, the long description.
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
    "confined execution of an AI agent's shell commands
cordon runs the shell commands an AI agent asks for under a file-effect
policy (read-only, workspace-write or danger-full-access) enforced by
bubblewrap or its own Landlock launcher, in a process group and cgroup of
their own, and reports how each run ended. It also serves them as an MCP
shell tool.")

set(CPACK_DEBIAN_LIBRARY_PACKAGE_NAME
    libcordon${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set(CPACK_DEBIAN_LIBRARY_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIBRARY_PACKAGE_DEPENDS "cordon (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_LIBRARY_DESCRIPTION
    "cordon's C++ library: confined execution of an AI agent's commands
The shared library of cordon, for agents that confine the shell commands
they run in process: one call runs a command under a sandbox mode and
returns the record of what happened; background jobs, approval and the
MCP server are there too.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME cordon-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# What the package configuration finds (cordonConfig.cmake's find_dependency, cordon.pc's
# Requires): the headers the public headers include; and libvterm's development files, which the
# static library links (-lvterm) and cordon.pc's Requires.private names. libvterm0 itself, which
# the shared library and cordon link, dpkg-shlibdeps finds.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${CPACK_DEBIAN_LIBRARY_PACKAGE_NAME} (= ${PROJECT_VERSION}), nlohmann-json3-dev (>= 3.11), libboost-dev (>= 1.81) | libboost1.81-dev, libvterm-dev (>= 0.1)")
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "development files of cordon's library
The headers, the static library, the CMake package configuration and the
pkg-config file of cordon's C++ library, for agents that confine commands
in process.")

# Each package's copyright file and changelog (compressed as gzip -9n: the same bytes each
# build), and the lintian overrides, each with its reason (packaging/cordon.lintian-overrides).
set(cordon_changelog_gz ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(
  OUTPUT ${cordon_changelog_gz}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging
  COMMAND sh -c "gzip -9n < \"$1\" > \"$2\"" sh ${PROJECT_SOURCE_DIR}/packaging/changelog
          ${cordon_changelog_gz}
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog
  COMMENT "Compressing the changelog" VERBATIM)
add_custom_target(cordon_changelog ALL DEPENDS ${cordon_changelog_gz})
get_cmake_property(cordon_components COMPONENTS)
foreach(component IN LISTS cordon_components)
  string(TOUPPER ${component} upper)
  set(package ${CPACK_DEBIAN_${upper}_PACKAGE_NAME})
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${cordon_changelog_gz}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component})
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/packaging/cordon.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME cordon COMPONENT runtime)

include(CPack)
