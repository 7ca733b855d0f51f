# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The cordon Authors

# A CPack post-build script (CPACK_POST_BUILD_SCRIPTS, cmake/packaging.cmake). CPack's DEB
# generator gives a package that holds a shared library under /usr/lib a postinst and a postrm that
# run ldconfig; Debian runs ldconfig once per dpkg run through its trigger instead (policy 8.1.1,
# lintian's lacks-ldconfig-trigger). The shared library's package is rebuilt here with the trigger
# and without the two scripts, which do nothing else. dpkg-deb keeps the files' owner (root),
# modes and md5sums as CPack wrote them.
foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT deb MATCHES "/libcordon[^/]*\\.deb$")
    continue()
  endif()
  set(root "${deb}.tree")
  file(REMOVE_RECURSE "${root}")
  execute_process(COMMAND dpkg-deb -R "${deb}" "${root}" RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -R ${deb} failed")
  endif()
  file(REMOVE "${root}/DEBIAN/postinst" "${root}/DEBIAN/postrm")
  file(WRITE "${root}/DEBIAN/triggers" "activate-noawait ldconfig\n")
  file(CHMOD "${root}/DEBIAN/triggers" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  execute_process(COMMAND dpkg-deb --root-owner-group -Zgzip -b "${root}" "${deb}"
                  OUTPUT_QUIET RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -b ${root} ${deb} failed")
  endif()
  file(REMOVE_RECURSE "${root}")
endforeach()
