// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Process trees end to end (runtime/process.hpp): who ended a run (timeout, cancellation, the
// command itself), the kill plan's escalation, trees that try to outlive their run (grandchildren
// holding the pipes, setsid()) under the process group and under a cgroup, and the denial scanner
// over the whole stderr stream. The same escapes through the executor under each backend, and the
// executor's output pipeline, are in executor_escape_test.cpp.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/cgroup.hpp"
#include "runtime/child_and_clock.hpp"
#include "runtime/process.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using std::chrono::steady_clock;
namespace fs = std::filesystem;

using test::child;
using test::elapsed_ms;

// --- who ended the run ---------------------------------------------------------------------------

TEST(ProcessTimeout, TermObeyingChildEndsOnSigtermWellBeforeTheGrace) {
    auto spec = test::child_spec({child(), "sleep", "30000"});
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
    auto spec = test::child_spec(test::ignoring_term({child(), "ignore-term", "30000"}));
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
    auto spec = test::child_spec({child(), "ignore-term", "30000"});
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
        auto spec = test::child_spec(test::ignoring_term({child(), "ignore-term", "30000"}));
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
    const std::string marker = "cordon-cancel-" + std::to_string(::getpid());
    auto spec = test::child_spec({child(), "sleep", "30000", marker});
    spec.timeout = 30s;
    auto handle = start_process(io.get_executor(), std::move(spec),
                                [&](process_outcome outcome) { result = std::move(outcome); });
    // Cancelled once the command runs.
    std::thread canceller([handle, marker] {
        (void)test::wait_for_processes_with_cmdline(marker, 1, 30s);
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
    auto handle = start_process(io.get_executor(), test::child_spec({child(), "sleep", "30000"}),
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
    auto spec = test::child_spec({child(), "ignore-term", "30000"});
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
    auto spec = test::child_spec({child(), "grandchild-pidfile", (dir / "pid").string(), "30000"});
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
    auto spec = test::child_spec(
        {"bash", "-c", "setsid sh -c 'echo $$ > \"$0\"; exec sleep 20' \"$0\" <&0 & echo done",
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
    auto outcome = run_process(test::child_spec({child(), "kill-self", "15"}));
    EXPECT_EQ(outcome.signal, SIGTERM);
    EXPECT_FALSE(outcome.exit_code);
    EXPECT_FALSE(outcome.timed_out);
    EXPECT_FALSE(outcome.aborted);
}

TEST(ProcessOutcome, LiveOutputCallbacksSeeEveryByte) {
    auto spec = test::child_spec({"bash", "-c", "\"$0\" bytes 200000 a; echo err >&2", child()});
    std::string seen_out, seen_err;
    spec.on_stdout = [&](std::string_view chunk) { seen_out.append(chunk); };
    spec.on_stderr = [&](std::string_view chunk) { seen_err.append(chunk); };
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_EQ(seen_out, std::string(200000, 'a'));
    EXPECT_EQ(seen_err, "err\n");
    EXPECT_EQ(outcome.stdout_output.bytes, 200000U);
}

// A live-output callback or a pacing function that throws is the caller's failure, not the loop's:
// the run is ended as a cancel would end it (aborted, its tree gone), the callbacks are not called
// again, and nothing unwinds through the event loop the run shares with others.
TEST(ProcessOutcome, ACallbackThatThrowsEndsTheRunAndNothingEscapesTheLoop) {
    struct way {
        const char* name;
        std::function<void(process_spec&, int&)> arm;
    };
    const way ways[] = {
        {"on_stdout, a std::exception",
         [](process_spec& spec, int& calls) {
             spec.on_stdout = [&calls](std::string_view) {
                 ++calls;
                 throw std::runtime_error("the caller's callback failed");
             };
         }},
        {"on_stderr, not a std::exception",
         [](process_spec& spec, int& calls) {
             spec.on_stderr = [&calls](std::string_view) {
                 ++calls;
                 throw 42;
             };
         }},
        {"stdout_pace",
         [](process_spec& spec, int& calls) {
             spec.stdout_pace = [&calls](std::function<void()>) {
                 ++calls;
                 throw std::bad_alloc();
             };
         }},
    };
    for (const way& each : ways) {
        SCOPED_TRACE(each.name);
        boost::asio::io_context io;
        test::temp_dir dir;
        const fs::path pid_file = dir / "pid";
        // Writes on both streams until it is ended; its pid tells whether it was.
        auto spec = test::child_spec(
            {"bash", "-c", "echo $$ > \"$0\"; while :; do echo out; echo err >&2; sleep 0.01; done",
             pid_file.string()});
        int calls = 0;
        each.arm(spec, calls);
        std::optional<process_outcome> thrown_on;
        start_process(io.get_executor(), std::move(spec),
                      [&](process_outcome outcome) { thrown_on = std::move(outcome); });
        // A run beside it on the same loop is not disturbed.
        std::optional<process_outcome> beside;
        start_process(io.get_executor(), test::child_spec({child(), "exit", "7"}),
                      [&](process_outcome outcome) { beside = std::move(outcome); });
        EXPECT_NO_THROW(io.run());
        ASSERT_TRUE(thrown_on);
        EXPECT_TRUE(thrown_on->aborted);
        EXPECT_EQ(thrown_on->abort_reason.rfind("a callback of the caller's threw", 0), 0U)
            << thrown_on->abort_reason;
        EXPECT_FALSE(thrown_on->exit_code);
        EXPECT_EQ(calls, 1);
        const auto pid = test::read_pid_file(pid_file);
        ASSERT_TRUE(pid);
        EXPECT_TRUE(test::wait_dead(*pid, 5s));
        ASSERT_TRUE(beside);
        EXPECT_EQ(beside->exit_code, 7);
    }
}

// --- live output paced by its reader (process_spec::stdout_pace) ---------------------------------

// While `more` is withheld the command waits on its full pipe: it cannot get past a 1 MB write,
// however long the reader takes. Once the reader asks for more, every byte arrives, in order.
TEST(ProcessPace, AWithheldMoreHoldsTheCommandAndEveryByteArrivesOnceItComes) {
    boost::asio::io_context io;
    test::temp_dir dir;
    const fs::path done = dir / "done";
    auto spec = test::child_spec(
        {"bash", "-c", "\"$0\" bytes 1000000 a; touch \"$1\"", child(), done.string()});
    std::string seen;
    std::vector<std::function<void()>> waiting;
    std::size_t pauses = 0;
    spec.on_stdout = [&](std::string_view chunk) { seen.append(chunk); };
    spec.stdout_pace = [&](std::function<void()> more) {
        ++pauses;
        waiting.push_back(std::move(more));
    };
    std::optional<process_outcome> result;
    start_process(io.get_executor(), std::move(spec),
                  [&](process_outcome outcome) { result = std::move(outcome); });
    boost::asio::steady_timer reader(io);
    bool held = false;
    std::function<void(boost::system::error_code)> read_on = [&](boost::system::error_code) {
        if (result) return;
        for (auto& more : std::exchange(waiting, {}))
            more();
        reader.expires_after(1ms);
        reader.async_wait(read_on);
    };
    reader.expires_after(300ms);
    reader.async_wait([&](boost::system::error_code ec) {
        held = !fs::exists(done) && seen.size() < 1000000;
        read_on(ec);
    });
    io.run();
    ASSERT_TRUE(result);
    EXPECT_TRUE(held) << "the command got past its write while its reader read nothing";
    EXPECT_EQ(result->exit_code, 0);
    EXPECT_EQ(seen, std::string(1000000, 'a'));
    EXPECT_GT(pauses, 1U);
    EXPECT_TRUE(fs::exists(done));
}

// A reader that never asks for more cannot hold up the end of a run: the timeout ends the
// command, what is left is read without waiting, and the run completes.
TEST(ProcessPace, AReaderThatNeverAsksForMoreCannotHoldUpTheTimeout) {
    auto spec = test::child_spec({child(), "bytes", "100000000"});
    spec.timeout = 300ms;
    spec.plan = kill_plan::standard(300ms);
    std::vector<std::function<void()>> never_called;
    spec.stdout_pace = [&](std::function<void()> more) { never_called.push_back(std::move(more)); };
    const auto start = steady_clock::now();
    const process_outcome outcome = run_process(std::move(spec));
    EXPECT_TRUE(outcome.timed_out);
    EXPECT_LT(elapsed_ms(start), 10000.0);
    EXPECT_LT(outcome.stdout_output.bytes, 100000000U);
    // Called after the run: nothing happens (the run is gone; `more` holds it weakly).
    for (auto& more : never_called)
        more();
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
    auto spec = test::child_spec({child(), "grandchild-pidfile", pid_file.string(), "30000"});
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
    auto spec = test::child_spec({"bash", "-c", "\"$0\" grandchild-pidfile \"$1\" 30000; sleep 30",
                                  child(), pid_file.string()});
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
    auto spec = test::child_spec(
        {"bash", "-c", "(trap '' TERM; exec \"$0\" ignore-term 30000) & echo pid=$!; sleep 30",
         child()});
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
        auto spec = test::child_spec({"cat", "/proc/self/cgroup"});
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

// The descriptors of this process that name `path` (as /proc/self/fd shows them).
std::size_t descriptors_naming(const fs::path& path) {
    std::size_t found = 0;
    for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
        std::error_code error;
        if (fs::read_symlink(entry.path(), error) == path) ++found;
    }
    return found;
}

// Forks a child that runs `body` and leaves with std::exit() (the static destructors and atexit
// handlers it inherited run, as in a program's forked child); what it wrote to the descriptor it
// is given, and its exit status.
std::pair<std::string, int> in_forked_child(const std::function<int(int)>& body) {
    int told[2];
    if (::pipe2(told, O_CLOEXEC) != 0) return {std::strerror(errno), -1};
    const pid_t forked = ::fork();
    if (forked < 0) return {std::strerror(errno), -1};
    if (forked == 0) {
        ::close(told[0]);
        std::exit(body(told[1]));
    }
    ::close(told[1]);
    std::string said;
    char buffer[512];
    for (ssize_t n; (n = ::read(told[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        said.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(told[0]);
    int status = 0;
    while (::waitpid(forked, &status, 0) < 0 && errno == EINTR) {
    }
    return {said, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

// One host per process (cgroup_host::for_this_process): every call gives the same host. A child
// forked without exec holds nothing of its parent's host (its copy of the liveness lock is closed
// at the fork), makes a host of its own, removes it as it exits, and leaves its parent's in place;
// so does a child that never runs anything.
std::vector<pid_t> await_watchdogs(const cgroup_host& host, std::size_t count);

TEST(ProcessTreeCgroup, OneHostPerProcessAndAForkedChildKeepsToItsOwn) {
    auto first = cgroup_host::for_this_process();
    if (auto* reason = std::get_if<std::string>(&first)) {
        CORDON_SKIP_OR_FAIL("cgroup containment unavailable: " + *reason);
    }
    const auto parent = std::get<std::shared_ptr<cgroup_host>>(first);
    auto again = cgroup_host::for_this_process();
    ASSERT_TRUE(std::holds_alternative<std::shared_ptr<cgroup_host>>(again));
    EXPECT_EQ(std::get<std::shared_ptr<cgroup_host>>(again), parent);
    const fs::path lock = fs::path("/dev/shm/cordon-cgroup-locks-" + std::to_string(::geteuid())) /
                          (parent->directory().filename().string() + ".lock");
    ASSERT_EQ(descriptors_naming(lock), 1U) << lock;
    // The watchdog's pipe, as its read end names it (root's to read: the watchdog is not
    // dumpable), of which this process holds the write end.
    fs::path pipe;
    if (::geteuid() == 0) {
        const std::vector<pid_t> watchdogs = await_watchdogs(*parent, 1);
        ASSERT_EQ(watchdogs.size(), 1U);
        pipe = fs::read_symlink("/proc/" + std::to_string(watchdogs.front()) + "/fd/3");
        ASSERT_EQ(descriptors_naming(pipe), 1U) << pipe;
    }

    const auto [child_directory, status] = in_forked_child([&lock, &pipe](int tell) {
        if (descriptors_naming(lock) != 0) return 2;
        if (!pipe.empty() && descriptors_naming(pipe) != 0) return 5;
        std::string directory;
        {  // std::exit() ends statics only: no reference of this frame may keep the host
            auto own = cgroup_host::for_this_process();
            auto* host = std::get_if<std::shared_ptr<cgroup_host>>(&own);
            if (host == nullptr) return 3;
            directory = (*host)->directory().string();
        }
        const auto written = ::write(tell, directory.data(), directory.size());
        return written == static_cast<ssize_t>(directory.size()) ? 0 : 4;
    });
    ASSERT_EQ(status, 0) << child_directory;
    ASSERT_FALSE(child_directory.empty());
    EXPECT_NE(fs::path(child_directory), parent->directory());
    EXPECT_FALSE(fs::exists(child_directory)) << "the child's host outlived it";

    const auto [nothing, idle_status] = in_forked_child([](int) { return 0; });
    ASSERT_EQ(idle_status, 0) << nothing;

    EXPECT_TRUE(fs::is_directory(parent->directory())) << "a child removed its parent's host";
    EXPECT_TRUE(fs::exists(lock)) << "a child removed its parent's lock";
    EXPECT_EQ(descriptors_naming(lock), 1U);
    auto scope = parent->new_scope({});
    EXPECT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(scope));
}

// The watchdogs of `host`: the processes whose descriptor 4 is the host's cgroup.kill
// (runtime/cgroup_watchdog.cpp).
std::vector<pid_t> watchdogs_of(const cgroup_host& host);

// The watchdogs of `host` once there are `count` of them (a watchdog moves its descriptors into
// place after it has started), or as they are after a generous wait.
std::vector<pid_t> await_watchdogs(const cgroup_host& host, std::size_t count) {
    const auto deadline = steady_clock::now() + 10s;
    std::vector<pid_t> found = watchdogs_of(host);
    while (found.size() != count && steady_clock::now() < deadline) {
        std::this_thread::sleep_for(5ms);
        found = watchdogs_of(host);
    }
    return found;
}

std::vector<pid_t> watchdogs_of(const cgroup_host& host) {
    const fs::path kill_file = host.directory() / "cgroup.kill";
    std::vector<pid_t> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::error_code error;
        if (fs::read_symlink(entry.path() / "fd" / "4", error) == kill_file) {
            found.push_back(static_cast<pid_t>(std::stol(name)));
        }
    }
    return found;
}

// A watchdog that a command killed (possible where Landlock cannot scope signals) is started again
// at the host's next run: the runs of a long-lived process stay tied to its life.
TEST(ProcessTreeCgroup, AKilledWatchdogIsStartedAgainAtTheNextRun) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "a non-dumpable watchdog's descriptors are root's to read";
    auto made = cgroup_host::for_this_process();
    if (auto* reason = std::get_if<std::string>(&made)) {
        CORDON_SKIP_OR_FAIL("cgroup containment unavailable: " + *reason);
    }
    const auto host = std::get<std::shared_ptr<cgroup_host>>(made);
    // A run's process, in a scope made before the restart: closing the dead watchdog's pipe must
    // end nothing.
    auto earlier = host->new_scope({});
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(earlier));
    const pid_t run = ::fork();
    ASSERT_GE(run, 0);
    if (run == 0) {
        ::pause();
        ::_exit(0);
    }
    const std::string run_pid = std::to_string(run);
    const int procs = std::get<std::unique_ptr<cgroup_scope>>(earlier)->join_fds().front();
    ASSERT_EQ(::write(procs, run_pid.data(), run_pid.size()), static_cast<ssize_t>(run_pid.size()))
        << std::strerror(errno);

    const std::vector<pid_t> before = await_watchdogs(*host, 1);
    ASSERT_EQ(before.size(), 1U);
    ASSERT_EQ(::kill(before.front(), SIGKILL), 0);
    // Gone once its descriptors are (a zombie has none).
    ASSERT_TRUE(await_watchdogs(*host, 0).empty());

    auto scope = host->new_scope({});
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(scope));
    const std::vector<pid_t> after = await_watchdogs(*host, 1);
    ASSERT_EQ(after.size(), 1U);
    EXPECT_NE(after.front(), before.front());
    // A second run finds it there and starts no other.
    auto second = host->new_scope({});
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(second));
    EXPECT_EQ(watchdogs_of(*host), after);

    int run_status = 0;
    EXPECT_EQ(::waitpid(run, &run_status, WNOHANG), 0) << "the restart ended a run";
    ::kill(run, SIGKILL);
    ::waitpid(run, &run_status, 0);
}

// The watchdog is the launcher, exec'd, not a fork of this process: no copy of this process's
// memory lives on beside it, and it is nobody's child here, in a session of its own, holding the
// pipe, the kill file and /dev/null alone.
TEST(ProcessTreeCgroup, TheWatchdogIsTheExecdLauncherNotACopyOfThisProcess) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "a non-dumpable watchdog's descriptors are root's to read";
    auto made = cgroup_host::for_this_process();
    if (auto* reason = std::get_if<std::string>(&made)) {
        CORDON_SKIP_OR_FAIL("cgroup containment unavailable: " + *reason);
    }
    const auto host = std::get<std::shared_ptr<cgroup_host>>(made);
    auto scope = host->new_scope({});  // a run's scope: the watchdog is running by then
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(scope));
    const std::vector<pid_t> watchdogs = await_watchdogs(*host, 1);
    ASSERT_EQ(watchdogs.size(), 1U);
    const fs::path proc = "/proc/" + std::to_string(watchdogs.front());

    EXPECT_EQ(fs::read_symlink(proc / "exe"), fs::canonical(test::launcher_path()));
    // Its session and descriptors are its own once it has settled, right after the fork.
    const auto settled = [&](std::map<int, fs::path>& descriptors) {
        descriptors.clear();
        std::error_code error;
        for (const auto& entry : fs::directory_iterator(proc / "fd", error)) {
            descriptors[std::stoi(entry.path().filename().string())] =
                fs::read_symlink(entry.path(), error);
        }
        const auto stat = test::read_proc_stat(watchdogs.front());
        return stat && stat->session == watchdogs.front() && descriptors.size() == 5 &&
               descriptors[0] == "/dev/null";
    };
    std::map<int, fs::path> descriptors;
    const auto deadline = steady_clock::now() + 10s;
    while (!settled(descriptors) && steady_clock::now() < deadline) {
        std::this_thread::sleep_for(5ms);
    }
    const auto stat = test::read_proc_stat(watchdogs.front());
    ASSERT_TRUE(stat);
    EXPECT_NE(stat->ppid, ::getpid());
    EXPECT_EQ(stat->session, watchdogs.front());
    ASSERT_EQ(descriptors.size(), 5U);
    for (int fd = 0; fd <= 2; ++fd)
        EXPECT_EQ(descriptors[fd], "/dev/null") << fd;
    EXPECT_TRUE(descriptors[3].string().starts_with("pipe:")) << descriptors[3];
    EXPECT_EQ(descriptors[4], host->directory() / "cgroup.kill");
}

// Only a cgroup finds a process that left the group with setsid(); the process group alone
// cannot (documented in cgroup.hpp), so this one is cgroup-only.
TEST(ProcessTreeCgroup, SetsidChildIsKilledThroughTheCgroup) {
    std::string why;
    auto cgroups = test::cgroup_host_or(why);
    if (!cgroups) CORDON_SKIP_OR_FAIL(why);
    test::temp_dir dir;
    const auto pid_file = dir / "setsid.pid";
    auto spec = test::child_spec({child(), "setsid-child", pid_file.string(), "30000"});
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

// A run with limits has a directory in the v1 hierarchies of a hybrid host too; each is removed on
// the run's own timer before the run completes, and nothing is left for the host.
TEST(ProcessTreeCgroup, EveryDirectoryOfARunIsRemovedBeforeItCompletes) {
    std::string why;
    auto cgroups = test::cgroup_host_or(why);
    if (!cgroups) CORDON_SKIP_OR_FAIL(why);
    test::temp_dir dir;
    const auto pid_file = dir / "setsid.pid";
    auto spec = test::child_spec({child(), "setsid-child", pid_file.string(), "30000"});
    spec.plan = kill_plan::standard(300ms);
    spec.cgroups = cgroups;
    if (cgroups->processes_unlimitable().empty()) spec.limits.max_processes = 64;
    if (cgroups->memory_unlimitable().empty()) spec.limits.max_memory = 256 << 20;
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 0);
    auto pid = test::read_pid_file(pid_file);
    ASSERT_TRUE(pid);
    EXPECT_TRUE(test::wait_dead(*pid, 2s)) << "setsid child " << *pid << " survived";
    test::kill_if_alive(*pid);
    EXPECT_EQ(cgroups->leftovers(), 0u);
    std::size_t scopes = 0;
    for (const auto& entry : fs::directory_iterator(cgroups->directory())) {
        if (entry.is_directory()) ++scopes;
    }
    EXPECT_EQ(scopes, 0U);
}

// The eventfd a v1 memory cgroup signals before its OOM killer acts is signalled for more than
// that (the cgroup's removal, an OOM of a cgroup above it). A notice the run's own count of failed
// charges does not back ends nothing: here every eventfd the run opened is written to while the
// command waits, as the kernel would signal it, and the command goes on to exit 0.
TEST(ProcessTreeCgroup, AnOomNoticeWithoutTheLimitMetEndsNothing) {
    std::string why;
    auto cgroups = test::cgroup_host_or(why);
    if (!cgroups) CORDON_SKIP_OR_FAIL(why);
    if (!cgroups->memory_unlimitable().empty()) GTEST_SKIP() << cgroups->memory_unlimitable();
    constexpr std::uint64_t limit = 256 << 20;
    {
        auto scope = cgroups->new_scope({.max_processes = {}, .max_memory = limit});
        auto* made = std::get_if<std::unique_ptr<cgroup_scope>>(&scope);
        ASSERT_NE(made, nullptr) << std::get<std::string>(scope);
        if (!(*made)->paths().memory_v1) {
            GTEST_SKIP() << "the memory limit is cgroup v2's here: the kernel ends a run at it "
                            "itself, and there is no notice to forge";
        }
    }
    const auto eventfds = [] {
        std::set<int> out;
        for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
            std::error_code ec;
            if (fs::read_symlink(entry.path(), ec).string() == "anon_inode:[eventfd]")
                out.insert(std::stoi(entry.path().filename().string()));
        }
        return out;
    };
    const std::set<int> before = eventfds();
    test::temp_dir dir;
    const fs::path started = dir / "started";
    const fs::path release = dir / "release";
    auto spec = test::child_spec({"/bin/sh", "-c",
                                  "touch '" + started.string() + "'; while [ ! -e '" +
                                      release.string() + "' ]; do sleep 0.01; done; exit 0"});
    spec.cgroups = cgroups;
    spec.limits.max_memory = limit;
    std::optional<process_outcome> outcome;
    std::thread run([&] { outcome = run_process(std::move(spec)); });
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!fs::exists(started) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    // The run's notice is the eventfd nothing has signalled yet (Asio's own interrupter, the
    // other new one, is signalled when its loop starts and never read under epoll). Signalled as
    // the kernel would, it is read by the run's loop, which is then released.
    const auto unread = [](int fd) {
        std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
        for (std::string line; std::getline(info, line);) {
            if (line.rfind("eventfd-count:", 0) == 0)
                return std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
        }
        return ~0ULL;
    };
    std::vector<int> notices;
    for (const int fd : eventfds()) {
        if (before.count(fd) == 0 && unread(fd) == 0) notices.push_back(fd);
    }
    ASSERT_EQ(notices.size(), 1U) << "the run's OOM notice is not the one unsignalled eventfd";
    const std::uint64_t one = 1;
    ASSERT_EQ(::write(notices[0], &one, sizeof one), static_cast<ssize_t>(sizeof one));
    while (unread(notices[0]) != 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    EXPECT_EQ(unread(notices[0]), 0U) << "the run's loop never read the notice";
    test::write_file(release, "");
    run.join();
    ASSERT_TRUE(fs::exists(started)) << "the command never started";
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->exit_code, std::optional<int>(0));
    EXPECT_FALSE(outcome->signal);
    EXPECT_FALSE(outcome->limits_hit.memory);
}

// --- the denial scanner sees the whole stderr stream ---------------------------------------------

TEST(DenialScanner, DenialEarlyInALongStderrIsSeenThoughTheTailDropsIt) {
    auto spec = test::child_spec({child(), "stderr-bytes", "200000", "Read-only file system"});
    spec.denial_signatures = {"read-only file system"};
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 3);
    EXPECT_TRUE(outcome.denial_seen);
    EXPECT_TRUE(outcome.stderr_output.truncated);
    EXPECT_EQ(outcome.stderr_output.text.find("Read-only"), std::string::npos);
    EXPECT_EQ(outcome.stderr_output.bytes, 200000U + 22U);
}

TEST(DenialScanner, NoSignatureNoDenial) {
    auto spec = test::child_spec({child(), "stderr-bytes", "200000", "some other error"});
    spec.denial_signatures = {"read-only file system"};
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 3);
    EXPECT_FALSE(outcome.denial_seen);
}

}  // namespace
}  // namespace cordon::runtime
