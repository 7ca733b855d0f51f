// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A confined run ends with its command: when the leader exits, what it left running (here a
// background child that holds stdout and stderr) is killed at once, on the Landlock rung as
// bwrap's pid namespace does, instead of keeping the pipes for the kill plan's 3 s drain grace.
// The record comes back well inside that grace, with what was written before.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "cordon/executor.hpp"
#include "real_backend.hpp"
#include "runtime/child_and_clock.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"
#include "support/processes.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
using test::child;
using test::real_backend;
namespace fs = std::filesystem;

class LeaderExit : public ::testing::TestWithParam<real_backend> {};

TEST_P(LeaderExit, TheRestOfAConfinedRunEndsWithItsCommand) {
    const real_backend backend = GetParam();
    std::string why;
    auto provider = test::provider_for(test::choice_of(backend), why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    if (!test::cgroup_host_or(why, {.reap_stale = false, .lock_directory = {}})) {
        CORDON_SKIP_OR_FAIL(why);
    }
    test::temp_dir workspace;
    const fs::path pid_file = workspace / "grandchild.pid";
    executor_options options;
    options.landlock_in_child = test::landlock_in_child(backend);
    run_request request;
    // The leader prints, and exits once its child (which keeps both pipes) has written its pid.
    request.argv = {child(), "grandchild-pidfile", pid_file.string(), "60000"};
    request.mode = sandbox::sandbox_mode::workspace_write;
    request.workspace_root = workspace.path();
    request.rules = test::rules_for(backend);
    request.timeout = 60s;
    const auto start = std::chrono::steady_clock::now();
    const run_record record = runtime::run(provider, std::move(request), options);
    const double took = test::elapsed_ms(start);

    const std::optional<pid_t> grandchild = test::read_pid_file(pid_file);
    ASSERT_TRUE(grandchild) << "the background child never started";
    const bool dead = test::process_dead(*grandchild);
    test::kill_if_alive(*grandchild);
    EXPECT_EQ(record.outcome.kind, classify::outcome_kind::exited) << record.outcome.message;
    EXPECT_EQ(record.outcome.exit_code, 0);
    EXPECT_EQ(record.stdout_output.text, "parent done\n");
    // The drain grace is 3 s: a record back in under 2 s did not wait for it.
    EXPECT_LT(took, 2000.0) << "the run waited for its leftover to close the pipes";
    EXPECT_TRUE(dead) << "the background child outlived its run";
}

// bwrap does the same through its pid namespace (whose pids the pid file would not name here).
INSTANTIATE_TEST_SUITE_P(Backends, LeaderExit,
                         ::testing::Values(real_backend::landlock,
                                           real_backend::landlock_via_launcher),
                         test::real_backend_name);

}  // namespace
}  // namespace cordon::runtime
