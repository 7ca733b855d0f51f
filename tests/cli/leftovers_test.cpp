// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What cordon leaves in /var/tmp: nothing a reader will not ask for. A run whose output all
// reached cordon's reader leaves no spill file (--json, whose record names the files, keeps
// them, under the budget a later cordon enforces: runtime/output_collector.hpp), and a probe's
// workspace left by a probe killed outright is removed by the next probe.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/file.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <string>

#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

// The spill files cordon process `pid` made under /var/tmp: "<pid>-<n>-<random>-<stream>.log".
std::vector<fs::path> spill_files_of(const std::string& pid) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& directory : fs::directory_iterator("/var/tmp", ec)) {
        if (!directory.path().filename().string().starts_with("cordon-spill-")) continue;
        std::error_code inner;
        for (const auto& file : fs::directory_iterator(directory.path(), inner)) {
            if (file.path().filename().string().starts_with(pid + "-")) out.push_back(file.path());
        }
    }
    return out;
}

// The command prints cordon's pid (its parent, unconfined), then more than the 64,000-byte tail
// on both streams: both spill.
const std::string spilling = "echo $PPID; seq 1 100000; seq 1 100000 >&2";

TEST(Leftovers, ARunWhoseOutputAllArrivedLeavesNoSpillFile) {
    temp_dir workspace{"/var/tmp"};
    const cli_result r =
        run_cordon({"run", "--mode", "danger-full-access", "-c", spilling}, workspace.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string pid = r.out.substr(0, r.out.find('\n'));
    ASSERT_FALSE(pid.empty());
    EXPECT_TRUE(spill_files_of(pid).empty());
    EXPECT_EQ(r.err.find("not shown"), std::string::npos) << r.err;

    // --json names them: they stay for whoever reads the record.
    runtime::process_spec spec;
    spec.argv = {cordon_path().string(), "run", "--json", "--mode",
                 "danger-full-access",   "-c",  spilling};
    spec.env = runtime::build_environment(environ, {});
    spec.cwd = workspace.path();
    spec.timeout = std::chrono::seconds(60);
    spec.stdout_limits.tail_bytes = 1 << 20;  // the whole record
    const runtime::process_outcome json = runtime::run_process(std::move(spec));
    ASSERT_EQ(json.exit_code, 0) << json.stderr_output.text;
    const nlohmann::json record = nlohmann::json::parse(json.stdout_output.text);
    const std::string kept = record["stdout"]["spillPath"].get<std::string>();
    EXPECT_TRUE(fs::exists(kept)) << kept;
    EXPECT_TRUE(fs::exists(record["stderr"]["spillPath"].get<std::string>()));
    fs::remove_all(fs::path(kept).parent_path());
}

// A probe killed outright leaves its (empty, unlocked) workspace; the next probe removes it, and
// one that a live process holds (its lock taken) stays.
TEST(Leftovers, TheNextProbeRemovesAProbeWorkspaceWhoseProbeIsGone) {
    std::string dead = "/var/tmp/cordon-probe-XXXXXX";
    ASSERT_NE(::mkdtemp(dead.data()), nullptr);
    std::string held = "/var/tmp/cordon-probe-XXXXXX";
    ASSERT_NE(::mkdtemp(held.data()), nullptr);
    const unique_fd lock(::open(held.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(lock);
    ASSERT_EQ(::flock(lock.get(), LOCK_EX | LOCK_NB), 0);
    const cli_result r = run_cordon({"probe", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(fs::exists(dead)) << dead;
    EXPECT_TRUE(fs::exists(held)) << "a live process's";
    fs::remove(held);
}

}  // namespace
}  // namespace cordon::test
