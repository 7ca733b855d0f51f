# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The cordon Authors

# cordon_gtest_suites(TARGET LABEL label TIMEOUT seconds [ENVIRONMENT var=value...]): one ctest
# test per GoogleTest suite of TARGET, named TARGET.Suite and running `TARGET --gtest_filter=Suite.*`.
#
# Why suites and not cases (gtest_discover_tests): every ctest test is a process, and a process of
# an instrumented suite costs 0.05-0.15 s of CPU before its first test (ASan maps its shadow and
# registers every global; LSan scans at exit). A process per case made that a third of the
# sanitizer phases' CPU: the CLI and runtime suites took 215 s of CPU under ASan case by case and
# 151 s in one process each (docs/testing.md). A suite still runs in parallel with the others, and
# `ctest -R TARGET.Suite` still selects one; one case is `TARGET --gtest_filter=Suite.Case`.
#
# As with gtest_discover_tests(DISCOVERY_MODE PRE_TEST), the suites are listed when ctest runs,
# from the built executable (`--gtest_list_tests`), and listed again only when it was rebuilt.
function(cordon_gtest_suites target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LABEL;TIMEOUT" "ENVIRONMENT")
  set(list_script "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gtest_suites_list.cmake")
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  file(GENERATE OUTPUT "${include_file}" CONTENT
"set(CORDON_SUITE_EXECUTABLE [==[$<TARGET_FILE:${target}>]==])
set(CORDON_SUITE_TARGET [==[${target}]==])
set(CORDON_SUITE_LABEL [==[${arg_LABEL}]==])
set(CORDON_SUITE_TIMEOUT [==[${arg_TIMEOUT}]==])
set(CORDON_SUITE_ENVIRONMENT [==[${arg_ENVIRONMENT}]==])
set(CORDON_SUITE_CTEST_FILE [==[${ctest_file}]==])
include([==[${list_script}]==])
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
