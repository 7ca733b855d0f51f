// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The ends of a process tree's life that the usual runs do not reach: an event loop destroyed
// with a run in flight (process_tree's destructor is the last line of defence), and a kernel
// without pidfds (the leader is polled instead of watched).
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/child_and_clock.hpp"
#include "runtime/process.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

process_spec long_spec(std::vector<std::string> argv) {
    return test::child_spec(std::move(argv), 60s);
}

// Polls `ready` every 10 ms for up to `within`.
template <typename Ready>
bool eventually(Ready ready, std::chrono::milliseconds within = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
        if (ready()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return ready();
}

// The loop goes away mid-run (a host shutting down): nothing the run started may outlive it,
// the leader is reaped, and `done` is never called on a destroyed loop.
TEST(ProcessTeardown, DestroyingTheLoopMidRunKillsTheTreeAndReapsTheLeader) {
    test::temp_dir dir;
    const fs::path pidfile = dir / "grandchild.pid";
    bool called = false;
    std::optional<pid_t> grandchild;
    {
        boost::asio::io_context io;
        (void)start_process(io.get_executor(),
                            long_spec({test::test_child_path().string(), "grandchild-pidfile",
                                       pidfile.string(), "60000"}),
                            [&called](process_outcome) { called = true; });
        // The leader exits at once and leaves its grandchild holding the pipes: the tree is in
        // its drain grace, with the grandchild alive, when the loop is destroyed.
        ASSERT_TRUE(eventually([&] {
            io.run_for(20ms);
            grandchild = test::read_pid_file(pidfile);
            return grandchild.has_value();
        }));
        io.run_for(50ms);
    }
    EXPECT_FALSE(called);
    ASSERT_TRUE(grandchild);
    EXPECT_TRUE(test::wait_dead(*grandchild, 10s)) << "the grandchild outlived the loop";
    EXPECT_TRUE(test::zombie_children().empty());
}

TEST(ProcessTeardown, DestroyingTheLoopWhileTheLeaderRunsKillsAndReapsIt) {
    const std::string marker = "cordon-teardown-" + std::to_string(::getpid());
    std::optional<boost::asio::io_context> loop(std::in_place);
    bool called = false;
    (void)start_process(loop->get_executor(),
                        long_spec({test::test_child_path().string(), "sleep", "60000", marker}),
                        [&called](process_outcome) { called = true; });
    std::vector<pid_t> before;
    ASSERT_TRUE(eventually([&] {
        loop->run_for(20ms);
        before = test::live_processes_with_cmdline(marker);
        return !before.empty();
    })) << "the leader never started";
    loop.reset();
    EXPECT_FALSE(called);
    for (const pid_t pid : before)
        EXPECT_TRUE(test::wait_dead(pid, 10s)) << pid;
    EXPECT_TRUE(test::zombie_children().empty());
}

// Without a pidfd the leader is polled; every ending still comes out the same.
class NoPidfd : public ::testing::Test {
protected:
    static process_spec polled(std::vector<std::string> argv) {
        process_spec spec = long_spec(std::move(argv));
        spec.use_pidfd = false;
        return spec;
    }
};

TEST_F(NoPidfd, ExitCodesAndSignalsAreSeen) {
    const process_outcome exited =
        run_process(polled({test::test_child_path().string(), "exit", "7"}));
    EXPECT_EQ(exited.exit_code, 7);
    const process_outcome signaled =
        run_process(polled({test::test_child_path().string(), "kill-self", "9"}));
    EXPECT_EQ(signaled.signal, SIGKILL);
    EXPECT_FALSE(signaled.exit_code);
}

TEST_F(NoPidfd, TheTimeoutEscalatesAndTheTreeIsSwept) {
    test::temp_dir dir;
    const fs::path pidfile = dir / "grandchild.pid";
    process_spec spec =
        polled({"/bin/sh", "-c",
                "trap '' TERM; " + test::child() + " grandchild-pidfile " + pidfile.string() +
                    " 60000; exec " + test::child() + " ignore-term 60000"});
    spec.timeout = 300ms;
    spec.plan = kill_plan::standard(200ms);
    const auto start = std::chrono::steady_clock::now();
    const process_outcome outcome = run_process(std::move(spec));
    EXPECT_TRUE(outcome.timed_out);
    EXPECT_EQ(outcome.signal, SIGKILL);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
    const auto grandchild = test::read_pid_file(pidfile);
    ASSERT_TRUE(grandchild);
    EXPECT_TRUE(test::wait_dead(*grandchild, 10s));
    EXPECT_TRUE(test::zombie_children().empty());
}

TEST_F(NoPidfd, OutputIsCollectedToTheEnd) {
    const process_outcome outcome =
        run_process(polled({test::test_child_path().string(), "bytes", "300000"}));
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_EQ(outcome.stdout_output.bytes, 300000U);
}

}  // namespace
}  // namespace cordon::runtime
