// Shared test helpers: locating built executables and turning real-backend skips into failures.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace cordon::test {

// Directory holding cordon, cordon-landlock and cordon-test-child (CMake's bin/ directory).
inline std::filesystem::path bin_dir() {
    return std::filesystem::canonical("/proc/self/exe").parent_path();
}

inline std::filesystem::path launcher_path() { return bin_dir() / "cordon-landlock"; }
inline std::filesystem::path test_child_path() { return bin_dir() / "cordon-test-child"; }
inline std::filesystem::path cordon_path() { return bin_dir() / "cordon"; }

// CI sets CORDON_REQUIRE_REAL_BACKENDS=1 so that a suite which would skip because bwrap or
// Landlock is missing fails instead: CI must prove that both real backends ran.
inline bool real_backends_required() {
    const char* value = std::getenv("CORDON_REQUIRE_REAL_BACKENDS");
    return value != nullptr && std::string(value) == "1";
}

}  // namespace cordon::test

// Skips the test with `reason`, or fails it when CI requires the real backends.
#define CORDON_SKIP_OR_FAIL(reason)                                                    \
    do {                                                                               \
        if (::cordon::test::real_backends_required()) {                                \
            FAIL() << "real backend required by CORDON_REQUIRE_REAL_BACKENDS: " << (reason); \
        }                                                                              \
        GTEST_SKIP() << (reason);                                                      \
    } while (0)
