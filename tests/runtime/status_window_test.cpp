// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon's deadline and the caller's cancellation, landing at each step of the launcher's status
// protocol, on both rungs that run cordon-landlock (bwrap with --report-ending inside it, and the
// Landlock rung through the launcher). The test build of the launcher (cordon-landlock-test-hooks,
// sandbox/launcher/test_hook.hpp) waits at the step named in the command's argv for SIGCONT and
// says so on stderr; the cancellation then sends SIGTERM and only afterwards SIGCONT, so the TERM
// lands exactly there: each window is hit every time, with no sleep.
//
// Whatever the step, the run is the deadline's or the caller's (never a runner failure), and the
// shared probe verdict stays (a runner failure would have dropped it, and the next run probed
// again).
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cordon/executor.hpp"
#include "real_backend.hpp"
#include "runtime/child_and_clock.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
using classify::outcome_kind;
using sandbox::sandbox_mode;
using test::child;
using test::real_backend;
namespace fs = std::filesystem;

// SIGTERM, then SIGCONT once the TERM is pending, then (never needed) SIGKILL.
kill_plan term_then_continue() {
    return kill_plan{{{SIGTERM, 0ms}, {SIGCONT, 30s}, {SIGKILL, 0ms}}, 3000ms};
}

struct window {
    real_backend backend;
    std::string step;
    // The command: it sleeps, except at after-ended, where it must have ended on its own.
    bool command_exits = false;
    // How the run ended besides who ended it: the signal that ended the command (or, when the
    // command never ran, the launcher), or the command's own exit code.
    std::optional<int> signal;
    std::optional<int> exit_code;
};

void PrintTo(const window& w, std::ostream* out) {
    *out << test::to_string(w.backend) << "/" << w.step;
}

std::string window_name(const ::testing::TestParamInfo<window>& info) {
    std::string name = std::string(test::to_string(info.param.backend)) + "_" + info.param.step;
    for (char& c : name) {
        if (c == '-') c = '_';
    }
    return name;
}

class StatusWindow : public ::testing::TestWithParam<window> {
protected:
    void SetUp() override {
        const window& w = GetParam();
        sandbox::local_provider_options options;
        options.choice = test::choice_of(w.backend);
        options.launcher_path = test::bin_dir() / "cordon-landlock-test-hooks";
        options.probe_timeout = 60s;
        options.verdict_directory = verdicts_ / "cache";
        provider_ = make_local_provider(std::move(options));
        if (!provider_->selected()) CORDON_SKIP_OR_FAIL("no usable rung for this backend");
        std::string why;
        if (!test::cgroup_host_or(why, {.reap_stale = false, .lock_directory = {}})) {
            // Under bwrap the polite signals reach the launcher through the run's cgroup.
            CORDON_SKIP_OR_FAIL(why);
        }
        verdict_ = test::verdict_file_in(verdicts_ / "cache",
                                         w.backend == real_backend::bwrap ? "bwrap" : "landlock");
        ASSERT_TRUE(fs::exists(verdict_));
    }

    // Runs the command stopped at the step; `deadline`: ends it by a timeout instead of a
    // cancellation (the launcher waits at the step for it).
    run_record run(std::optional<std::chrono::milliseconds> deadline) {
        const window& w = GetParam();
        executor_options options;
        options.landlock_in_child = test::landlock_in_child(w.backend);
        options.plan = term_then_continue();
        boost::asio::io_context io;
        executor exec(io.get_executor(), provider_, options);
        run_request request;
        request.argv = {child(), w.command_exits ? "exit" : "sleep",
                        w.command_exits ? "3" : "60000", "cordon-test-stop-at=" + w.step};
        request.mode = sandbox_mode::read_only;
        request.workspace_root = workspace_.path();
        request.rules = test::rules_for(w.backend);
        request.timeout = deadline.value_or(120s);
        run_handle handle;
        std::string said;
        const std::string line = "cordon-landlock: test hook: stopped at " + w.step + "\n";
        request.on_stderr = [&](std::string_view chunk) {
            said.append(chunk);
            if (!deadline && said.find(line) != std::string::npos) handle.cancel();
        };
        std::optional<run_record> result;
        handle = exec.async_run(std::move(request), [&](run_record r) { result = std::move(r); });
        io.run();
        EXPECT_NE(said.find(line), std::string::npos) << "the launcher never stopped: " << said;
        return std::move(result).value();
    }

    void expect_window(const run_record& record, outcome_kind who) {
        const window& w = GetParam();
        EXPECT_EQ(record.outcome.kind, who) << record.outcome.message;
        EXPECT_FALSE(record.outcome.runner);
        EXPECT_EQ(record.outcome.signal, w.signal);
        EXPECT_EQ(record.outcome.exit_code, w.exit_code);
        EXPECT_TRUE(fs::exists(verdict_)) << "the shared verdict was dropped";
    }

    test::temp_dir verdicts_;
    test::temp_dir workspace_;
    std::shared_ptr<sandbox::local_provider> provider_;
    fs::path verdict_;
};

TEST_P(StatusWindow, ACancellationThereIsTheCallers) {
    expect_window(run(std::nullopt), outcome_kind::aborted);
}

// The deadline's TERM is the cancellation's (process.cpp's one kill path); what differs is who is
// said to have ended the run. Tested at the window of the report (a deadline of 40-55 ms under
// bwrap ended as a runner failure in about one run of four). The deadline must come after the
// launcher reached the step: it is given more than a launcher needs to get there (it then waits
// for it, stopped).
class StatusWindowDeadline : public StatusWindow {};

TEST_P(StatusWindowDeadline, ADeadlineThereIsTheDeadlines) {
    expect_window(run(1500ms), outcome_kind::timed_out);
}

// bwrap: the launcher runs the command as its child (--report-ending) and blocks every signal
// until the child has written `started`. The Landlock rung: the launcher is the leader and execs
// the command in place.
INSTANTIATE_TEST_SUITE_P(
    Steps, StatusWindow,
    ::testing::Values(
        // Before anything was confined: the launcher dies, nothing ran.
        window{real_backend::bwrap, "setup", false, std::nullopt, 128 + SIGTERM},
        window{real_backend::landlock_via_launcher, "setup", false, SIGTERM, std::nullopt},
        // bwrap: every signal is blocked and the command's child not forked yet; the TERM is
        // pending in the launcher, which forwards it to the child it forks (on main: lost until
        // the kill plan's SIGKILL).
        window{real_backend::bwrap, "before-fork", false, SIGTERM, std::nullopt},
        // bwrap: the TERM waits in the child's mask until `started` is written, then ends it
        // before its exec: `started` and `ended` by SIGTERM (on main: `ended` alone, "status
        // record out of order", a runner failure). The Landlock rung: the launcher dies before
        // `started`: silence, which cordon's own signal explains.
        window{real_backend::bwrap, "before-started", false, SIGTERM, std::nullopt},
        window{real_backend::landlock_via_launcher, "before-started", false, SIGTERM, std::nullopt},
        // `started`, then the TERM before the exec.
        window{real_backend::bwrap, "after-started", false, SIGTERM, std::nullopt},
        window{real_backend::landlock_via_launcher, "after-started", false, SIGTERM, std::nullopt},
        // The command exited 3 on its own and the launcher wrote `ended`: the parent blocks the
        // TERM and exits as the command did.
        window{real_backend::bwrap, "after-ended", true, std::nullopt, 3}),
    window_name);

INSTANTIATE_TEST_SUITE_P(Steps, StatusWindowDeadline,
                         ::testing::Values(window{real_backend::bwrap, "before-started", false,
                                                  SIGTERM, std::nullopt},
                                           window{real_backend::landlock_via_launcher,
                                                  "before-started", false, SIGTERM, std::nullopt}),
                         window_name);

// The production launcher has no stop: the arming word is only an argument of the command.
TEST(StatusWindowHook, TheInstalledLauncherIgnoresTheArmingWord) {
    sandbox::local_provider_options options;
    options.choice = sandbox::backend_choice::landlock;
    options.launcher_path = test::launcher_path();
    options.probe_timeout = 60s;
    auto provider = make_local_provider(std::move(options));
    if (!provider->selected()) CORDON_SKIP_OR_FAIL("the Landlock rung is unusable");
    test::temp_dir workspace;
    executor_options exec_options;
    exec_options.landlock_in_child = false;
    run_request request;
    request.argv = {child(), "exit", "0", "cordon-test-stop-at=setup"};
    request.mode = sandbox_mode::read_only;
    request.workspace_root = workspace.path();
    request.timeout = 60s;  // a stopped launcher fails the test instead of hanging it
    const run_record record = runtime::run(provider, std::move(request), exec_options);
    EXPECT_EQ(record.outcome.kind, outcome_kind::exited);
    EXPECT_EQ(record.outcome.exit_code, 0);
}

}  // namespace
}  // namespace cordon::runtime
