# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The cordon Authors

# Run by ctest (TEST_INCLUDE_FILES, tests/gtest_suites.cmake): lists the suites of one test
# executable and adds a test for each. The CORDON_SUITE_* variables come from the include file.
if(NOT EXISTS "${CORDON_SUITE_EXECUTABLE}")
  add_test("${CORDON_SUITE_TARGET}_NOT_BUILT" "${CORDON_SUITE_TARGET}_NOT_BUILT")
  return()
endif()

if(NOT EXISTS "${CORDON_SUITE_CTEST_FILE}" OR
   "${CORDON_SUITE_EXECUTABLE}" IS_NEWER_THAN "${CORDON_SUITE_CTEST_FILE}")
  execute_process(COMMAND "${CORDON_SUITE_EXECUTABLE}" --gtest_list_tests
                  OUTPUT_VARIABLE listing ERROR_VARIABLE listing_errors RESULT_VARIABLE status
                  TIMEOUT 60)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${CORDON_SUITE_EXECUTABLE} --gtest_list_tests failed (${status}):\n"
                        "${listing}${listing_errors}")
  endif()
  # A suite is a line that does not start with a space: "Suite." or "Prefix/Suite.  # TypeParam".
  string(REPLACE ";" "\\;" listing "${listing}")
  string(REPLACE "\n" ";" lines "${listing}")
  set(script "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([^ #]+)\\.( |$)")
      set(suite "${CMAKE_MATCH_1}")
      set(name "${CORDON_SUITE_TARGET}.${suite}")
      string(APPEND script
             "add_test([==[${name}]==] [==[${CORDON_SUITE_EXECUTABLE}]==] "
             "[==[--gtest_filter=${suite}.*]==])\n"
             "set_tests_properties([==[${name}]==] PROPERTIES "
             "LABELS [==[${CORDON_SUITE_LABEL}]==] TIMEOUT ${CORDON_SUITE_TIMEOUT} "
             "ENVIRONMENT [==[${CORDON_SUITE_ENVIRONMENT}]==])\n")
    endif()
  endforeach()
  if(script STREQUAL "")
    message(FATAL_ERROR "${CORDON_SUITE_EXECUTABLE} lists no test suite")
  endif()
  file(WRITE "${CORDON_SUITE_CTEST_FILE}" "${script}")
endif()
include("${CORDON_SUITE_CTEST_FILE}")
