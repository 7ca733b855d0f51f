// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Shorthands the runtime suites share: the test child's path as a string, a command line that
// ignores SIGTERM from its first instruction, and the milliseconds since a point on the steady
// clock.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "support.hpp"

namespace cordon::test {

inline std::string child() {
    return test_child_path().string();
}

// argv run with SIGTERM already ignored when it starts: a shell ignores it and execs argv, which
// inherits the disposition. A test whose timeout must meet a TERM-ignoring command cannot rely on
// the command's own signal() call: on a loaded machine (or under TSan, whose start-up is slow) the
// timeout can come first, and SIGTERM ends the command before it has said it ignores it.
inline std::vector<std::string> ignoring_term(std::vector<std::string> argv) {
    std::vector<std::string> wrapped{"/bin/sh", "-c", "trap '' TERM; exec \"$@\"", "sh"};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    return wrapped;
}

inline double elapsed_ms(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
        .count();
}

}  // namespace cordon::test
