// Two shorthands the runtime suites share: the test child's path as a string, and the
// milliseconds since a point on the steady clock.
#pragma once

#include <chrono>
#include <string>

#include "support.hpp"

namespace cordon::test {

inline std::string child() {
    return test_child_path().string();
}

inline double elapsed_ms(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
        .count();
}

}  // namespace cordon::test
