// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Shared test helpers: locating built executables, scoped environment variables, and turning
// real-backend skips into failures; with support/files.hpp (scratch directories, reading and
// writing files), which every suite gets through this file.
//
// Every suite includes this file, the launcher suite too, which links cordon_sandbox only: keep
// it free of cordon_runtime. The rest of the shared support is split by concern in support/:
// processes.hpp (/proc), spawned_process.hpp (a process the test acts on while it runs),
// cordon_cli.hpp (running the cordon program; needs cordon_runtime); runtime-level helpers live in
// tests/runtime/runtime_test_util.hpp.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "support/files.hpp"

namespace cordon::test {

// The UTF-8 form of one code point.
inline std::string utf8(char32_t c) {
    std::string out;
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
    return out;
}

// Directory holding cordon, cordon-landlock and cordon-test-child (CMake's bin/ directory).
inline std::filesystem::path bin_dir() {
    return std::filesystem::canonical("/proc/self/exe").parent_path();
}

// cordon and cordon-landlock as the tests run them: beside the test executables. A build tree
// under /tmp cannot run the Landlock workspace-write tests (cordon refuses a run under which the
// command could rewrite a runner or the program that links the library, and that rung's
// workspace-write profile writes the host's /tmp); scripts/build-root keeps builds out of it.
inline const std::filesystem::path& runner_dir() {
    static const std::filesystem::path dir = bin_dir();
    return dir;
}

inline std::filesystem::path launcher_path() {
    return runner_dir() / "cordon-landlock";
}
inline std::filesystem::path test_child_path() {
    return bin_dir() / "cordon-test-child";
}
inline std::filesystem::path cordon_path() {
    return runner_dir() / "cordon";
}

// The name under `covered` (/tmp or /var/tmp) of the directory there that holds the test
// programs, or "" when they are elsewhere: a test that gives a mount namespace a /tmp or /var/tmp
// of its own binds it back (CI builds under /var/tmp/cordon-build-*), or cordon and its launcher
// are gone from that namespace.
inline std::string programs_under(const std::filesystem::path& covered) {
    const std::filesystem::path programs = std::filesystem::weakly_canonical(bin_dir());
    const std::filesystem::path relative = programs.lexically_relative(covered);
    if (relative.empty() || *relative.begin() == "..") return {};
    return relative.begin()->string();
}

// CI sets CORDON_REQUIRE_REAL_BACKENDS=1 so that a suite which would skip because bwrap or
// Landlock is missing fails instead: CI must prove that both real backends ran.
// Where `directory` keeps the verdict of `ladder` ("verdict-<ladder>-<hash>", one per prober:
// sandbox/verdict_cache.hpp), or a name no file has when it keeps none.
inline std::filesystem::path verdict_file_in(const std::filesystem::path& directory,
                                             std::string_view ladder) {
    const std::string prefix = "verdict-" + std::string(ladder) + "-";
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(directory, ignored)) {
        if (entry.path().filename().string().starts_with(prefix)) return entry.path();
    }
    return directory / prefix;
}

inline bool real_backends_required() {
    const char* value = std::getenv("CORDON_REQUIRE_REAL_BACKENDS");
    return value != nullptr && std::string(value) == "1";
}

// The test child copied into `dir` (once), for runs whose sandbox may not see the build tree:
// bwrap's workspace-write profile hides /tmp behind a private tmpfs, so a build tree under /tmp
// (where a CI clone may live) is invisible to the command, while the workspace is always visible.
inline std::string test_child_in(const std::filesystem::path& dir) {
    const auto copy = dir / "cordon-test-child";
    if (!std::filesystem::exists(copy)) std::filesystem::copy_file(test_child_path(), copy);
    return copy.string();
}

// Sets (or unsets, for nullopt) one environment variable for the scope and restores it after.
class scoped_env {
public:
    scoped_env(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
        if (const char* old = std::getenv(name_.c_str())) old_ = old;
        if (value) {
            ::setenv(name_.c_str(), value->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }
    ~scoped_env() {
        if (old_) {
            ::setenv(name_.c_str(), old_->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    std::string name_;
    std::optional<std::string> old_;
};

}  // namespace cordon::test

// Skips the test with `reason`, or fails it when CI requires the real backends.
#define CORDON_SKIP_OR_FAIL(reason)                                                          \
    do {                                                                                     \
        if (::cordon::test::real_backends_required()) {                                      \
            FAIL() << "real backend required by CORDON_REQUIRE_REAL_BACKENDS: " << (reason); \
        }                                                                                    \
        GTEST_SKIP() << (reason);                                                            \
    } while (0)
