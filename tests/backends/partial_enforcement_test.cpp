// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Partial enforcement on the real kernel: the launcher capped to an older Landlock ABI
// (--abi-cap) confines as it would on such a kernel. What an older ABI does not govern really
// gets through (truncate(2) before ABI 3), which is why such a run is reported `partial`; what
// it governs is still refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/process.hpp"
#include "runtime/runtime_test_util.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;

runtime::process_outcome launch(const std::vector<std::string>& launcher_args,
                                const std::vector<std::string>& command) {
    runtime::process_spec spec;
    spec.argv = {test::launcher_path().string()};
    spec.argv.insert(spec.argv.end(), launcher_args.begin(), launcher_args.end());
    spec.argv.push_back("--");
    spec.argv.insert(spec.argv.end(), command.begin(), command.end());
    spec.env = test::child_env();
    spec.cwd = "/";
    spec.timeout = std::chrono::seconds(60);
    return runtime::run_process(std::move(spec));
}

class PartialEnforcement : public ::testing::Test {
protected:
    void SetUp() override {
        const int abi = landlock::query_abi();
        if (abi < 3) CORDON_SKIP_OR_FAIL("needs a kernel with Landlock ABI >= 3 to cap below it");
        test::write_file(file_, "host data\n", fs::perms::owner_read | fs::perms::owner_write);
    }

    std::vector<std::string> read_only(std::optional<int> cap) const {
        std::vector<std::string> args{"--read-root", "--rw", "/dev/null"};
        if (cap) {
            args.push_back("--abi-cap");
            args.push_back(std::to_string(*cap));
        }
        return args;
    }

    test::temp_dir dir_;
    fs::path file_ = dir_ / "file";
};

TEST_F(PartialEnforcement, AnOlderAbiLetsThroughWhatItDoesNotGovern) {
    // The kernel's own ABI governs truncation: refused, the file intact.
    const std::string child = test::test_child_path().string();
    const auto full = launch(read_only(std::nullopt), {child, "truncate", file_});
    EXPECT_NE(full.exit_code, 0);
    EXPECT_EQ(test::read_file(file_), "host data\n");

    // ABI 2 does not: the same command under the same profile truncates the host's file.
    const auto partial = launch(read_only(2), {child, "truncate", file_});
    EXPECT_EQ(partial.exit_code, 0) << partial.stderr_output.text;
    EXPECT_EQ(test::read_file(file_), "");
    // And the command was told: the launcher's notice precedes its output.
    EXPECT_EQ(partial.stderr_output.text, std::string(launcher_notice_line) + "\n");
}

TEST_F(PartialEnforcement, WhatTheOlderAbiGovernsIsStillRefused) {
    const auto write =
        launch(read_only(1), {"/bin/sh", "-c", "echo x >> '" + file_.string() + "'"});
    EXPECT_NE(write.exit_code, 0);
    EXPECT_EQ(test::read_file(file_), "host data\n");
    EXPECT_NE(write.stderr_output.text.find("Permission denied"), std::string::npos)
        << write.stderr_output.text;
}

TEST_F(PartialEnforcement, TheProbeAnswersWithTheCappedAbi) {
    runtime::process_spec spec;
    spec.argv = {test::launcher_path().string(), "--abi-cap", "2", "--probe"};
    spec.env = test::child_env();
    spec.cwd = "/";
    const auto answer = runtime::run_process(std::move(spec));
    EXPECT_EQ(answer.exit_code, 0);
    EXPECT_EQ(answer.stdout_output.text, "landlock: partially enforced (older ABI)\nabi: 2\n");
}

}  // namespace
}  // namespace cordon::sandbox
