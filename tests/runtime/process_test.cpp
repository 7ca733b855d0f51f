// Process trees end to end (runtime/process.hpp, and the executor where a backend is involved):
// who ended a run (timeout, cancellation, the command itself), the kill plan's escalation, trees
// that try to outlive their run (grandchildren holding the pipes, setsid(), double-fork daemons)
// under every containment cordon has (process group, cgroup, bwrap's pid namespace, the Landlock
// launcher with a cgroup), and the output pipeline: tails, spill files, the denial scanner.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "runtime/cgroup.hpp"
#include "runtime/executor.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/process.hpp"
#include "runtime/render.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using std::chrono::steady_clock;
namespace fs = std::filesystem;

std::string child() {
    return test::test_child_path().string();
}

process_spec spec_for(std::vector<std::string> argv) {
    process_spec spec;
    spec.argv = std::move(argv);
    spec.env = test::child_env();
    spec.cwd = "/";
    spec.timeout = 30s;
    spec.plan = kill_plan::standard(3000ms);
    return spec;
}

double elapsed_ms(steady_clock::time_point since) {
    return std::chrono::duration<double, std::milli>(steady_clock::now() - since).count();
}

// --- who ended the run ---------------------------------------------------------------------------

TEST(ProcessTimeout, TermObeyingChildEndsOnSigtermWellBeforeTheGrace) {
    auto spec = spec_for({child(), "sleep", "30000"});
    spec.timeout = 300ms;
    spec.plan = kill_plan::standard(3000ms);
    const auto start = steady_clock::now();
    auto outcome = run_process(std::move(spec));
    const double wall = elapsed_ms(start);
    ASSERT_FALSE(outcome.spawn_failure);
    EXPECT_TRUE(outcome.timed_out);
    EXPECT_FALSE(outcome.aborted);
    EXPECT_EQ(outcome.signal, SIGTERM);
    EXPECT_FALSE(outcome.exit_code);
    EXPECT_GE(outcome.duration_ms, 290.0);
    EXPECT_LT(outcome.duration_ms, 2500.0) << "SIGTERM should end it, not the SIGKILL after 3 s";
    EXPECT_LT(wall, 2500.0);
}

TEST(ProcessTimeout, TermTrappingChildIsKilledAfterTheGrace) {
    auto spec = spec_for({child(), "ignore-term", "30000"});
    // Long enough for the child to have installed SIG_IGN before the SIGTERM comes.
    spec.timeout = 1000ms;
    spec.plan = kill_plan::standard(300ms);
    auto outcome = run_process(std::move(spec));
    ASSERT_FALSE(outcome.spawn_failure);
    EXPECT_EQ(outcome.stdout_output.text, "ready\n");
    EXPECT_TRUE(outcome.timed_out);
    EXPECT_FALSE(outcome.aborted);
    EXPECT_EQ(outcome.signal, SIGKILL);
    EXPECT_GE(outcome.duration_ms, 1000.0 + 300.0 - 20.0);
    EXPECT_LT(outcome.duration_ms, 5000.0);
}

TEST(ProcessTimeout, PlanWithImmediateKillSkipsTheGrace) {
    auto spec = spec_for({child(), "ignore-term", "30000"});
    spec.timeout = 1000ms;
    spec.plan = kill_plan{{{SIGKILL, 0ms}}, 3000ms};
    auto outcome = run_process(std::move(spec));
    EXPECT_TRUE(outcome.timed_out);
    EXPECT_EQ(outcome.signal, SIGKILL);
    EXPECT_LT(outcome.duration_ms, 3000.0);
}

// A plan that names no SIGKILL still ends: a SIGKILL follows its last wait. A TERM-only plan
// against a child that ignores TERM used to let the child run to its own end.
TEST(ProcessTimeout, APlanWithoutSigkillStillEndsWithOne) {
    for (const kill_plan& plan : {kill_plan{{{SIGTERM, 200ms}}, 200ms}, kill_plan{{}, 200ms}}) {
        auto spec = spec_for({child(), "ignore-term", "30000"});
        spec.timeout = 300ms;
        spec.plan = plan;
        auto outcome = run_process(std::move(spec));
        EXPECT_TRUE(outcome.timed_out);
        EXPECT_EQ(outcome.signal, SIGKILL);
        EXPECT_LT(outcome.duration_ms, 10000.0) << "the child ran to its own end";
    }
    const kill_plan normalized =
        kill_plan{{{SIGTERM, 200ms}, {SIGINT, 100ms}}, 1s}.ending_in_sigkill();
    ASSERT_EQ(normalized.steps.size(), 3U);
    EXPECT_EQ(normalized.steps.back().signal, SIGKILL);
    EXPECT_EQ(normalized.drain_grace, 1s);
    // Steps after a SIGKILL are never run.
    const kill_plan killed_first{{{SIGKILL, 0ms}, {SIGTERM, 1s}}, 1s};
    EXPECT_EQ(killed_first.ending_in_sigkill().steps.size(), 1U);
}

TEST(ProcessCancel, CancelFromAnotherThreadIsAbortedNotTimedOut) {
    boost::asio::io_context io;
    std::optional<process_outcome> result;
    auto spec = spec_for({child(), "sleep", "30000"});
    spec.timeout = 30s;
    auto handle = start_process(io.get_executor(), std::move(spec),
                                [&](process_outcome outcome) { result = std::move(outcome); });
    std::thread canceller([handle] {
        std::this_thread::sleep_for(200ms);
        handle.cancel();
        handle.cancel();  // idempotent
    });
    const auto start = steady_clock::now();
    io.run();
    canceller.join();
    handle.cancel();  // after completion: harmless
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->aborted);
    EXPECT_FALSE(result->timed_out);
    EXPECT_EQ(result->signal, SIGTERM);
    EXPECT_LT(elapsed_ms(start), 2500.0);
}

TEST(ProcessCancel, CancelBeforeTheLoopRunsStillEndsTheRun) {
    boost::asio::io_context io;
    std::optional<process_outcome> result;
    auto handle = start_process(io.get_executor(), spec_for({child(), "sleep", "30000"}),
                                [&](process_outcome outcome) { result = std::move(outcome); });
    handle.cancel();  // queued behind the launch on the tree's strand
    const auto start = steady_clock::now();
    io.run();
    ASSERT_TRUE(result);
    EXPECT_FALSE(result->spawn_failure);
    EXPECT_TRUE(result->aborted);
    EXPECT_EQ(result->signal, SIGTERM);
    EXPECT_LT(elapsed_ms(start), 2500.0);
}

TEST(ProcessCancel, CancelOfTermTrappingChildEscalatesToSigkill) {
    boost::asio::io_context io;
    std::optional<process_outcome> result;
    auto spec = spec_for({child(), "ignore-term", "30000"});
    spec.plan = kill_plan::standard(300ms);
    process_handle handle;
    // Cancel once the child says it is ignoring SIGTERM.
    spec.on_stdout = [&handle](std::string_view chunk) {
        if (chunk.find("ready") != std::string_view::npos) handle.cancel();
    };
    handle = start_process(io.get_executor(), std::move(spec),
                           [&](process_outcome outcome) { result = std::move(outcome); });
    io.run();
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->aborted);
    EXPECT_FALSE(result->timed_out);
    EXPECT_EQ(result->signal, SIGKILL);
    EXPECT_GE(result->duration_ms, 280.0);
    EXPECT_LT(result->duration_ms, 5000.0);
}

// The command exits at once but leaves a process holding the pipes; a cancel then ends the
// leftovers without waiting out the drain grace, and the run is not "aborted": the command
// itself had finished.
TEST(ProcessCancel, CancelDuringTheDrainEndsTheLeftoversAtOnce) {
    boost::asio::io_context io;
    std::optional<process_outcome> result;
    test::temp_dir dir;
    auto spec = spec_for({child(), "grandchild-pidfile", (dir / "pid").string(), "30000"});
    spec.plan = kill_plan::standard(20s);
    auto handle = start_process(io.get_executor(), std::move(spec),
                                [&](process_outcome outcome) { result = std::move(outcome); });
    std::thread canceller([handle] {
        std::this_thread::sleep_for(500ms);
        handle.cancel();
    });
    const auto start = steady_clock::now();
    io.run();
    canceller.join();
    ASSERT_TRUE(result);
    EXPECT_EQ(result->exit_code, 0);
    EXPECT_FALSE(result->aborted);
    EXPECT_LT(elapsed_ms(start), 10000.0);
    auto pid = test::read_pid_file(dir / "pid");
    ASSERT_TRUE(pid);
    EXPECT_TRUE(test::wait_dead(*pid, 2s));
}

// Without cgroup containment a setsid() process can keep stdin open past the run; a pending
// stdin write must not keep the run alive after the sweep.
TEST(ProcessStdin, PendingStdinWriteDoesNotOutliveTheRun) {
    test::temp_dir dir;
    const auto pid_file = dir / "pid";
    auto spec = spec_for({"bash", "-c",
                          "setsid sh -c 'echo $$ > \"$0\"; exec sleep 20' \"$0\" <&0 & echo done",
                          pid_file.string()});
    spec.cgroups = nullptr;
    spec.plan = kill_plan::standard(300ms);
    spec.stdin_data = std::string(4 << 20, 'x');  // far more than a pipe buffer
    const auto start = steady_clock::now();
    auto outcome = run_process(std::move(spec));
    const double took = elapsed_ms(start);
    EXPECT_EQ(outcome.stdout_output.text, "done\n");
    EXPECT_LT(took, 10000.0);
    // The setsid() process escaped the process group (no cgroup here); end it ourselves.
    for (int i = 0; i < 100 && !test::read_pid_file(pid_file); ++i)
        std::this_thread::sleep_for(10ms);
    if (auto pid = test::read_pid_file(pid_file)) ::kill(*pid, SIGKILL);
}

TEST(ProcessOutcome, SelfSignalledCommandIsNeitherTimedOutNorAborted) {
    auto outcome = run_process(spec_for({child(), "kill-self", "15"}));
    EXPECT_EQ(outcome.signal, SIGTERM);
    EXPECT_FALSE(outcome.exit_code);
    EXPECT_FALSE(outcome.timed_out);
    EXPECT_FALSE(outcome.aborted);
}

TEST(ProcessOutcome, LiveOutputCallbacksSeeEveryByte) {
    auto spec = spec_for({"bash", "-c", "\"$0\" bytes 200000 a; echo err >&2", child()});
    std::string seen_out, seen_err;
    spec.on_stdout = [&](std::string_view chunk) { seen_out.append(chunk); };
    spec.on_stderr = [&](std::string_view chunk) { seen_err.append(chunk); };
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_EQ(seen_out, std::string(200000, 'a'));
    EXPECT_EQ(seen_err, "err\n");
    EXPECT_EQ(outcome.stdout_output.bytes, 200000U);
}

// --- trees that try to outlive the run -----------------------------------------------------------

enum class containment { process_group, cgroup };

class ProcessTreeTest : public ::testing::TestWithParam<containment> {
protected:
    void SetUp() override {
        if (GetParam() == containment::cgroup) {
            std::string why;
            cgroups_ = test::cgroup_host_or(why);
            if (!cgroups_) CORDON_SKIP_OR_FAIL(why);
        }
    }
    std::shared_ptr<cgroup_host> cgroups_;
};

INSTANTIATE_TEST_SUITE_P(Containment, ProcessTreeTest,
                         ::testing::Values(containment::process_group, containment::cgroup),
                         [](const auto& param_info) {
                             return param_info.param == containment::cgroup ? "cgroup"
                                                                            : "process_group";
                         });

// The leader exits at once, a grandchild in its group keeps stdout/stderr open for 30 s: the run
// may wait one grace period (300 ms) for it, then the group is killed and the run ends.
TEST_P(ProcessTreeTest, GrandchildHoldingThePipesCannotKeepTheRunPastTheGrace) {
    test::temp_dir dir;
    const auto pid_file = dir / "grandchild.pid";
    auto spec = spec_for({child(), "grandchild-pidfile", pid_file.string(), "30000"});
    spec.plan = kill_plan::standard(300ms);
    spec.cgroups = cgroups_;
    const auto start = steady_clock::now();
    auto outcome = run_process(std::move(spec));
    const double wall = elapsed_ms(start);
    ASSERT_FALSE(outcome.spawn_failure);
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_EQ(outcome.stdout_output.text, "parent done\n");
    EXPECT_FALSE(outcome.timed_out);
    EXPECT_FALSE(outcome.aborted);
    EXPECT_LT(wall, 5000.0);
    auto grandchild = test::read_pid_file(pid_file);
    ASSERT_TRUE(grandchild) << "the grandchild never wrote its pid";
    EXPECT_TRUE(test::wait_dead(*grandchild, 2s)) << "grandchild " << *grandchild << " survived";
    test::kill_if_alive(*grandchild);
}

TEST_P(ProcessTreeTest, TimeoutKillsTheWholeGroup) {
    test::temp_dir dir;
    const auto pid_file = dir / "grandchild.pid";
    // The leader keeps running after the grandchild starts, so the timeout is what ends it.
    auto spec = spec_for({"bash", "-c", "\"$0\" grandchild-pidfile \"$1\" 30000; sleep 30", child(),
                          pid_file.string()});
    spec.timeout = 500ms;
    spec.plan = kill_plan::standard(300ms);
    spec.cgroups = cgroups_;
    auto outcome = run_process(std::move(spec));
    EXPECT_TRUE(outcome.timed_out);
    EXPECT_LT(outcome.duration_ms, 5000.0);
    auto grandchild = test::read_pid_file(pid_file);
    ASSERT_TRUE(grandchild);
    EXPECT_TRUE(test::wait_dead(*grandchild, 2s)) << "grandchild " << *grandchild << " survived";
    test::kill_if_alive(*grandchild);
}

// The timeout's SIGTERM ends the leader, but a grandchild that ignores SIGTERM keeps the pipes:
// the escalation still reaches it with SIGKILL after the grace, although its leader is gone.
TEST_P(ProcessTreeTest, TermTrappingGrandchildGetsTheSigkillAfterItsLeaderExited) {
    auto spec =
        spec_for({"bash", "-c", "\"$0\" ignore-term 30000 & echo pid=$!; sleep 30", child()});
    spec.timeout = 1000ms;
    spec.plan = kill_plan::standard(300ms);
    spec.cgroups = cgroups_;
    const auto start = steady_clock::now();
    auto outcome = run_process(std::move(spec));
    const double wall = elapsed_ms(start);
    EXPECT_TRUE(outcome.timed_out);
    EXPECT_EQ(outcome.signal, SIGTERM) << "bash obeys SIGTERM";
    EXPECT_GE(wall, 1000.0 + 300.0 - 20.0);
    EXPECT_LT(wall, 5000.0);
    const auto& text = outcome.stdout_output.text;
    EXPECT_NE(text.find("ready\n"), std::string::npos) << text;
    auto at = text.find("pid=");
    ASSERT_NE(at, std::string::npos) << text;
    const pid_t grandchild = static_cast<pid_t>(std::stol(text.substr(at + 4)));
    EXPECT_TRUE(test::wait_dead(grandchild, 2s)) << "grandchild " << grandchild << " survived";
    test::kill_if_alive(grandchild);
}

TEST_P(ProcessTreeTest, ChildRunsInItsOwnCgroupWhenContained) {
    auto outcome = run_process([&] {
        auto spec = spec_for({"cat", "/proc/self/cgroup"});
        spec.cgroups = cgroups_;
        return spec;
    }());
    ASSERT_EQ(outcome.exit_code, 0);
    std::string v2_line;
    for (const auto& line : test::split_lines(outcome.stdout_output.text)) {
        if (line.rfind("0::", 0) == 0) v2_line = line;
    }
    const std::string own = "cordon-" + std::to_string(::getpid()) + "-";
    if (GetParam() == containment::cgroup) {
        EXPECT_NE(v2_line.find(own), std::string::npos) << v2_line;
        EXPECT_NE(v2_line.find("/run-"), std::string::npos) << v2_line;
    } else {
        EXPECT_EQ(v2_line.find(own), std::string::npos) << v2_line;
    }
}

// Only a cgroup finds a process that left the group with setsid(); the process group alone
// cannot (documented in cgroup.hpp), so this one is cgroup-only.
TEST(ProcessTreeCgroup, SetsidChildIsKilledThroughTheCgroup) {
    std::string why;
    auto cgroups = test::cgroup_host_or(why);
    if (!cgroups) CORDON_SKIP_OR_FAIL(why);
    test::temp_dir dir;
    const auto pid_file = dir / "setsid.pid";
    auto spec = spec_for({child(), "setsid-child", pid_file.string(), "30000"});
    spec.plan = kill_plan::standard(300ms);
    spec.cgroups = cgroups;
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_LT(outcome.duration_ms, 5000.0);
    auto pid = test::read_pid_file(pid_file);
    ASSERT_TRUE(pid);
    EXPECT_TRUE(test::wait_dead(*pid, 2s)) << "setsid child " << *pid << " survived";
    test::kill_if_alive(*pid);
    // The run's cgroup is gone again; only the host's own directory remains.
    std::size_t scopes = 0;
    for (const auto& entry : fs::directory_iterator(cgroups->directory())) {
        if (entry.is_directory()) ++scopes;
    }
    EXPECT_EQ(scopes, 0U);
}

// --- the same through the executor, under every backend ------------------------------------------

enum class backend { none, bwrap, landlock };
enum class escape { setsid_child, daemonize, daemonize_then_timeout };

std::string backend_name(backend value) {
    switch (value) {
        case backend::none:
            return "danger_full_access";
        case backend::bwrap:
            return "bwrap";
        case backend::landlock:
            return "landlock";
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

// A provider restricted to one backend, or a skip (failure in CI) when that backend is not
// usable on this host.
std::shared_ptr<sandbox::local_provider> provider_for(backend which, std::string& skip_reason) {
    sandbox::local_provider_options options;
    switch (which) {
        case backend::none:
            return make_local_provider();
        case backend::bwrap:
            options.choice = sandbox::backend_choice::bwrap;
            break;
        case backend::landlock:
            options.choice = sandbox::backend_choice::landlock;
            options.launcher_path = test::launcher_path();
            break;
    }
    auto provider = make_local_provider(options);
    if (!provider->selected()) {
        auto reports = provider->probe_all();
        skip_reason = backend_name(which) + " unusable: " +
                      (reports.empty() ? std::string("no rung") : reports.front().reason);
        return nullptr;
    }
    return provider;
}

class ExecutorEscapeTest : public ::testing::TestWithParam<std::tuple<backend, escape>> {};

INSTANTIATE_TEST_SUITE_P(
    Backends, ExecutorEscapeTest,
    ::testing::Combine(::testing::Values(backend::none, backend::bwrap, backend::landlock),
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

    const auto start = steady_clock::now();
    run_record record = run(provider, request, options);
    const double wall = elapsed_ms(start);
    ASSERT_NE(record.outcome.kind, classify::outcome_kind::not_started) << record.outcome.message;
    EXPECT_LT(wall, 10000.0);
    if (how == escape::daemonize_then_timeout) {
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::timed_out) << render(record);
        if (which == backend::bwrap) {
            // bwrap reports the command's death by SIGTERM as 128+15 (its leader is spared the
            // polite signal: it forwards none, and its death would SIGKILL the sandbox).
            EXPECT_EQ(record.outcome.exit_code, 128 + SIGTERM) << render(record);
        } else {
            EXPECT_TRUE(record.outcome.signal) << render(record);
        }
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

// --- the denial scanner sees the whole stderr stream ---------------------------------------------

TEST(DenialScanner, DenialEarlyInALongStderrIsSeenThoughTheTailDropsIt) {
    auto spec = spec_for({child(), "stderr-bytes", "200000", "Read-only file system"});
    spec.denial_signatures = {"read-only file system"};
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 3);
    EXPECT_TRUE(outcome.denial_seen);
    EXPECT_TRUE(outcome.stderr_output.truncated);
    EXPECT_EQ(outcome.stderr_output.text.find("Read-only"), std::string::npos);
    EXPECT_EQ(outcome.stderr_output.bytes, 200000U + 22U);
}

TEST(DenialScanner, NoSignatureNoDenial) {
    auto spec = spec_for({child(), "stderr-bytes", "200000", "some other error"});
    spec.denial_signatures = {"read-only file system"};
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 3);
    EXPECT_FALSE(outcome.denial_seen);
}

class BwrapDenialTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string reason;
        provider_ = provider_for(backend::bwrap, reason);
        if (!provider_) CORDON_SKIP_OR_FAIL(reason);
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
