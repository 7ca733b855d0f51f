// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Process trees and output through the executor (runtime::run(provider, request)), under each
// backend: a setsid() child, a double-fork daemon and a daemon that outlives a timeout must all be
// gone when the run ends, whatever contains them (the run's cgroup under danger-full-access and
// the Landlock launcher, bwrap's pid namespace); the record's tails and spill files; and bwrap's
// denial report, which must see a denial early in a long stderr. The same trees at the
// process_tree level are in process_test.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cordon/executor.hpp"
#include "runtime/child_and_clock.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/render.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;
namespace fs = std::filesystem;

using test::child;
using test::elapsed_ms;

// --- trees that try to outlive the run, under every backend --------------------------------------

enum class backend { none, bwrap, landlock, landlock_via_launcher };
enum class escape { setsid_child, daemonize, daemonize_then_timeout };

std::string backend_name(backend value) {
    switch (value) {
        case backend::none:
            return "danger_full_access";
        case backend::bwrap:
            return "bwrap";
        case backend::landlock:
            return "landlock";
        case backend::landlock_via_launcher:
            return "landlock_via_launcher";
    }
    return "invalid";
}

std::string escape_name(escape value) {
    switch (value) {
        case escape::setsid_child:
            return "setsid_child";
        case escape::daemonize:
            return "daemonize";
        case escape::daemonize_then_timeout:
            return "daemonize_then_timeout";
    }
    return "invalid";
}

// The provider a run under `which` uses, or nullptr with why that backend is unusable here.
// danger-full-access never consults its provider; it gets the default one, as cordon run does.
std::shared_ptr<sandbox::local_provider> provider_for(backend which, std::string& why) {
    switch (which) {
        case backend::none:
            return make_local_provider();
        case backend::bwrap:
            return test::provider_for(sandbox::backend_choice::bwrap, why);
        case backend::landlock:
        case backend::landlock_via_launcher:
            return test::provider_for(sandbox::backend_choice::landlock, why);
    }
    return nullptr;
}

class ExecutorEscapeTest : public ::testing::TestWithParam<std::tuple<backend, escape>> {};

INSTANTIATE_TEST_SUITE_P(
    Backends, ExecutorEscapeTest,
    ::testing::Combine(::testing::Values(backend::none, backend::bwrap, backend::landlock,
                                         backend::landlock_via_launcher),
                       ::testing::Values(escape::setsid_child, escape::daemonize,
                                         escape::daemonize_then_timeout)),
    [](const auto& param_info) {
        return backend_name(std::get<0>(param_info.param)) + "_" +
               escape_name(std::get<1>(param_info.param));
    });

TEST_P(ExecutorEscapeTest, NothingTheCommandStartedSurvivesTheRun) {
    const auto [which, how] = GetParam();
    std::string skip_reason;
    auto provider = provider_for(which, skip_reason);
    if (!provider) CORDON_SKIP_OR_FAIL(skip_reason);
    std::string why;
    if (which != backend::bwrap && !test::cgroup_host_or(why)) {
        // Outside a pid namespace only the run's cgroup can find a setsid()/double-fork escapee.
        CORDON_SKIP_OR_FAIL(why);
    }

    test::temp_dir workspace;
    const auto pid_file = workspace / "escapee.pid";
    run_request request;
    request.mode = which == backend::none ? sandbox::sandbox_mode::danger_full_access
                                          : sandbox::sandbox_mode::workspace_write;
    request.workspace_root = workspace.path();
    request.rules.accept_partial = true;  // the Landlock rung (real_backend.hpp, rules_for)
    const std::string program = test::test_child_in(workspace.path());
    switch (how) {
        case escape::setsid_child:
            request.argv = {program, "setsid-child", pid_file.string(), "30000"};
            break;
        case escape::daemonize:
            request.argv = {program, "daemonize", pid_file.string(), "30000"};
            break;
        case escape::daemonize_then_timeout:
            request.argv = {"bash", "-c", "\"$0\" daemonize \"$1\" 30000 && sleep 30", program,
                            pid_file.string()};
            request.timeout = 500ms;
            break;
    }
    executor_options options;
    options.plan = kill_plan::standard(300ms);
    options.spill = false;
    options.landlock_in_child = which != backend::landlock_via_launcher;

    const auto start = steady_clock::now();
    run_record record = run(provider, request, options);
    const double wall = elapsed_ms(start);
    ASSERT_NE(record.outcome.kind, classify::outcome_kind::not_started) << record.outcome.message;
    EXPECT_LT(wall, 10000.0);
    if (how == escape::daemonize_then_timeout) {
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::timed_out) << render(record);
        // Under every backend the command's death by signal is a signal (under bwrap the
        // launcher reports it; bwrap alone would say 128+N).
        EXPECT_EQ(record.outcome.signal, std::optional<int>(SIGTERM)) << render(record);
        EXPECT_EQ(record.outcome.exit_code, std::nullopt) << render(record);
    } else {
        EXPECT_EQ(record.outcome.exit_code, 0) << render(record);
        EXPECT_NE(record.outcome.kind, classify::outcome_kind::timed_out);
    }
    EXPECT_FALSE(record.sandbox.denied);
    switch (which) {
        case backend::none:
            EXPECT_FALSE(record.sandbox.backend);
            break;
        case backend::bwrap:
            EXPECT_EQ(record.sandbox.backend, sandbox::backend_kind::bwrap);
            break;
        case backend::landlock:
        case backend::landlock_via_launcher:
            EXPECT_EQ(record.sandbox.backend, sandbox::backend_kind::landlock);
            break;
    }

    auto pid = test::read_pid_file(pid_file);
    ASSERT_TRUE(pid) << "the escapee never wrote its pid file; " << render(record);
    // Every process the run started carried the pid file's (unique) path in its argv; none may
    // be alive any more. This also works for bwrap, whose pids are those of its namespace.
    EXPECT_TRUE(test::wait_no_process_with_cmdline(pid_file.string(), 2s))
        << "survivors: " << test::live_processes_with_cmdline(pid_file.string()).size();
    if (which != backend::bwrap) {
        EXPECT_TRUE(test::wait_dead(*pid, 2s)) << "escapee " << *pid << " survived";
    }
    // Do not leave a failed run's survivors behind for the next test.
    for (pid_t survivor : test::live_processes_with_cmdline(pid_file.string())) {
        ::kill(survivor, SIGKILL);
    }
}

// --- output: tails, spill files, stdout_max_bytes ------------------------------------------------

// A patterned ASCII stream (no two adjacent 1000-byte windows alike), so that a tail off by one
// byte anywhere is caught.
std::string pattern(std::size_t size) {
    std::string out;
    out.reserve(size + 16);
    for (std::size_t i = 0; out.size() < size; ++i)
        out += std::to_string(i) + ",";
    out.resize(size);
    return out;
}

class ExecutorOutputTest : public ::testing::Test {
protected:
    ExecutorOutputTest() {
        options_.limits.tail_bytes = 1000;
        options_.spill_root = spill_root_.path();
        options_.plan = kill_plan::standard(300ms);
    }
    run_record run_dfa(std::vector<std::string> argv, std::optional<std::string> stdin_data = {},
                       std::optional<std::size_t> stdout_max = {}) {
        run_request request;
        request.argv = std::move(argv);
        request.mode = sandbox::sandbox_mode::danger_full_access;
        request.workspace_root = workspace_.path();
        request.stdin_data = std::move(stdin_data);
        request.stdout_max_bytes = stdout_max;
        return run(make_local_provider(), std::move(request), options_);
    }
    // Regular files anywhere under the spill root.
    std::vector<fs::path> spill_files() const {
        std::vector<fs::path> files;
        for (const auto& entry : fs::recursive_directory_iterator(spill_root_.path())) {
            if (entry.is_regular_file()) files.push_back(entry.path());
        }
        return files;
    }
    test::temp_dir spill_root_;
    test::temp_dir workspace_;
    executor_options options_;
};

TEST_F(ExecutorOutputTest, TailIsByteExactAtBelowAndAboveTheCap) {
    for (std::size_t size : {0UL, 1UL, 999UL, 1000UL, 1001UL, 4096UL, 250'000UL}) {
        SCOPED_TRACE("bytes " + std::to_string(size));
        auto record = run_dfa({child(), "bytes", std::to_string(size), "q"});
        ASSERT_NE(record.outcome.kind, classify::outcome_kind::not_started);
        EXPECT_EQ(record.outcome.exit_code, 0);
        const bool over = size > 1000;
        EXPECT_EQ(record.stdout_output.text, std::string(over ? 1000 : size, 'q'));
        EXPECT_EQ(record.stdout_output.bytes, size);
        EXPECT_EQ(record.stdout_output.truncated, over);
        EXPECT_EQ(record.stdout_output.spill_path.has_value(), over);
        EXPECT_FALSE(record.stderr_output.truncated);
    }
}

TEST_F(ExecutorOutputTest, PatternedTailIsTheLastBytesOfTheStream) {
    for (std::size_t size : {999UL, 1000UL, 1001UL, 65'537UL, 300'001UL}) {
        SCOPED_TRACE("size " + std::to_string(size));
        const std::string data = pattern(size);
        auto record = run_dfa({child(), "cat"}, data);
        ASSERT_EQ(record.outcome.exit_code, 0);
        const std::size_t kept = std::min<std::size_t>(size, 1000);
        EXPECT_TRUE(record.stdout_output.text == data.substr(size - kept))
            << "tail differs from the stream's last " << kept << " bytes";
        EXPECT_EQ(record.stdout_output.bytes, size);
        if (size > 1000) {
            ASSERT_TRUE(record.stdout_output.spill_path);
            EXPECT_TRUE(test::read_file(*record.stdout_output.spill_path) == data)
                << "spill file differs from the stream";
        }
    }
}

TEST_F(ExecutorOutputTest, SpillFileIsPrivateAndHoldsTheWholeStream) {
    const std::string data = pattern(500'000);
    auto record = run_dfa({child(), "cat"}, data);
    ASSERT_EQ(record.outcome.exit_code, 0);
    ASSERT_TRUE(record.stdout_output.truncated);
    ASSERT_TRUE(record.stdout_output.spill_path);
    const fs::path file = *record.stdout_output.spill_path;
    EXPECT_TRUE(test::read_file(file) == data);

    struct stat file_stat {};
    ASSERT_EQ(::stat(file.c_str(), &file_stat), 0);
    EXPECT_TRUE(S_ISREG(file_stat.st_mode));
    EXPECT_EQ(file_stat.st_mode & 07777, 0600U);
    struct stat dir_stat {};
    ASSERT_EQ(::stat(file.parent_path().c_str(), &dir_stat), 0);
    EXPECT_EQ(dir_stat.st_mode & 07777, 0700U);
    EXPECT_EQ(fs::canonical(file.parent_path().parent_path()), spill_root_.path());
    EXPECT_EQ(file.parent_path().filename().string().rfind("cordon-spill-", 0), 0U);
    // Output that fits has no spill file.
    EXPECT_FALSE(record.stderr_output.spill_path);
}

TEST_F(ExecutorOutputTest, OversizeSpillIsRemovedAndHasNoPath) {
    options_.limits.spill_max_bytes = 4000;
    auto record = run_dfa({child(), "bytes", "20000"});
    ASSERT_EQ(record.outcome.exit_code, 0);
    EXPECT_TRUE(record.stdout_output.truncated);
    EXPECT_EQ(record.stdout_output.bytes, 20000U);
    EXPECT_EQ(record.stdout_output.text, std::string(1000, 'x'));
    EXPECT_FALSE(record.stdout_output.spill_path);
    EXPECT_TRUE(spill_files().empty()) << "an abandoned spill file was left behind";
}

TEST_F(ExecutorOutputTest, StdoutMaxBytesRaisesTheStdoutTailForOneCallOnly) {
    const std::vector<std::string> argv = {
        "bash", "-c", "\"$0\" bytes 3000 o && \"$0\" stderr-bytes 3000 marker", child()};
    auto raised = run_dfa(argv, std::nullopt, 5000);
    EXPECT_EQ(raised.outcome.exit_code, 3);
    EXPECT_FALSE(raised.stdout_output.truncated);
    EXPECT_EQ(raised.stdout_output.text, std::string(3000, 'o'));
    // stderr keeps the executor's limit.
    EXPECT_TRUE(raised.stderr_output.truncated);
    EXPECT_EQ(raised.stderr_output.text.size(), 1000U);

    auto normal = run_dfa(argv);
    EXPECT_TRUE(normal.stdout_output.truncated);
    EXPECT_EQ(normal.stdout_output.text, std::string(1000, 'o'));
}

// --- bwrap's denial report -----------------------------------------------------------------------

class BwrapDenialTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        provider_ = test::provider_for(sandbox::backend_choice::bwrap, why);
        if (!provider_) CORDON_SKIP_OR_FAIL(why);
    }
    run_record run_read_only(std::string command) {
        run_request request;
        request.argv = {"bash", "-c", std::move(command)};
        request.mode = sandbox::sandbox_mode::read_only;
        request.workspace_root = workspace_.path();
        executor_options options;
        options.spill_root = spill_root_.path();
        return run(provider_, std::move(request), options);
    }
    std::shared_ptr<sandbox::local_provider> provider_;
    test::temp_dir workspace_;
    test::temp_dir spill_root_;
};

TEST_F(BwrapDenialTest, DenialEarlyInALongStderrIsStillCaught) {
    auto record = run_read_only(
        "echo \"x: Read-only file system\" >&2; head -c 300000 /dev/zero | tr \"\\0\" . >&2; exit "
        "3");
    ASSERT_NE(record.outcome.kind, classify::outcome_kind::not_started);
    EXPECT_EQ(record.outcome.exit_code, 3);
    EXPECT_TRUE(record.sandbox.denied);
    EXPECT_EQ(record.sandbox.backend, sandbox::backend_kind::bwrap);
    EXPECT_TRUE(record.stderr_output.truncated);
    EXPECT_EQ(record.stderr_output.bytes, 300000U + 25U);
    EXPECT_EQ(record.stderr_output.text.find("Read-only"), std::string::npos);
    EXPECT_NE(render(record).find("[sandbox: file access denied under read-only mode]"),
              std::string::npos);
}

TEST_F(BwrapDenialTest, RealWriteIsDeniedAndReported) {
    auto record = run_read_only("echo hi > \"$PWD/denied.txt\"");
    EXPECT_NE(record.outcome.exit_code, 0);
    EXPECT_TRUE(record.sandbox.denied) << record.stderr_output.text;
    EXPECT_FALSE(fs::exists(workspace_ / "denied.txt"));
}

TEST_F(BwrapDenialTest, SignatureWithExitZeroIsNotADenial) {
    auto record = run_read_only("echo \"x: Read-only file system\" >&2; exit 0");
    EXPECT_EQ(record.outcome.exit_code, 0);
    EXPECT_FALSE(record.sandbox.denied);
}

}  // namespace
}  // namespace cordon::runtime
