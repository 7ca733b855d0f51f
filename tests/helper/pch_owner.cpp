// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The unit that owns the suites' precompiled header (tests/CMakeLists.txt): its compile makes the
// header, and the suites reuse it. It has no test of its own; gtest_main gives it a main().
