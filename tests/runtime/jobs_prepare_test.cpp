// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A job is prepared (the program's lookup, the refusal, confine(), the ruleset) off the
// supervisor's loop thread: a preparation that does not return stalls no other job's output or
// completion, a job killed while it is prepared never runs, and a shutdown while a job is prepared
// leaves no process and no thread behind. The provider here holds confine() until the test opens
// its gate.
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cordon/jobs.hpp"
#include "runtime/child_and_clock.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using sandbox::sandbox_mode;
using test::child;
using ::testing::HasSubstr;

// confine() waits until open() (as a mount that stopped answering would), then hands the argv
// back as it came: a test double, which confines nothing, so that the command can prove it ran.
class gated_provider : public sandbox::provider {
public:
    sandbox::confined_argv confine(std::span<const std::string> argv,
                                   const sandbox::sandbox_policy&,
                                   const std::filesystem::path&) override {
        std::unique_lock lock(mutex_);
        ++entered_;
        changed_.notify_all();
        changed_.wait(lock, [this] { return open_; });
        sandbox::confined_argv out;
        out.argv.assign(argv.begin(), argv.end());
        out.level = sandbox::enforcement::full;
        out.backend = sandbox::backend_kind::landlock;
        return out;
    }

    // Until `count` calls of confine() have begun, or `within`.
    bool wait_entered(int count, std::chrono::milliseconds within) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, within, [&] { return entered_ >= count; });
    }

    void open() {
        std::lock_guard lock(mutex_);
        open_ = true;
        changed_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    int entered_ = 0;
    bool open_ = false;
};

// Opens the gate when the test ends, passed or failed, so that no preparation waits forever.
struct opened_at_exit {
    gated_provider& gate;
    ~opened_at_exit() { gate.open(); }
};

std::size_t thread_count() {
    std::size_t count = 0;
    DIR* tasks = ::opendir("/proc/self/task");
    if (tasks == nullptr) return 0;
    while (const dirent* entry = ::readdir(tasks)) {
        if (entry->d_name[0] != '.') ++count;
    }
    ::closedir(tasks);
    return count;
}

class PreparingJobs : public ::testing::Test {
protected:
    static supervisor_options options() {
        supervisor_options out;
        out.executor.plan = kill_plan::standard(300ms);
        out.executor.spill_root = fs::path("/var/tmp");
        return out;
    }

    job_request request(std::vector<std::string> argv, sandbox_mode mode) const {
        job_request out;
        out.run.argv = std::move(argv);
        out.run.mode = mode;
        out.run.workspace_root = workspace_.path();
        out.owner = "test";
        return out;
    }

    static std::shared_ptr<job> started(std::variant<std::shared_ptr<job>, job_refused> result) {
        if (auto* refused = std::get_if<job_refused>(&result)) {
            ADD_FAILURE() << "refused: " << refused->message;
            return nullptr;
        }
        return std::get<std::shared_ptr<job>>(std::move(result));
    }

    static std::string all_of(const job& each, job_output which) {
        return each.read(which, 0, 1 << 20).data;
    }

    test::temp_dir workspace_;
    std::shared_ptr<gated_provider> gate_ = std::make_shared<gated_provider>();
};

TEST_F(PreparingJobs, ASlowPreparationDelaysNoOtherJobsOutputOrEnd) {
    supervisor jobs(gate_, options());
    opened_at_exit opener{*gate_};
    // Running before the slow one is prepared: it answers each line given to it.
    job_request echoing = request({"/bin/sh", "-c", "read line; echo \"got $line\""},
                                  sandbox_mode::danger_full_access);
    echoing.keep_stdin_open = true;
    auto running = started(jobs.start(std::move(echoing)));
    ASSERT_TRUE(running);

    auto slow = started(jobs.start(request({child(), "exit", "7"}, sandbox_mode::read_only)));
    ASSERT_TRUE(slow);
    ASSERT_TRUE(gate_->wait_entered(1, 30s)) << "the slow job's confine() was never called";

    // While confine() holds the slow job: the running job's output arrives and it ends ...
    ASSERT_FALSE(running->write("x\n", true).error);
    ASSERT_EQ(running->completion().wait_for(30s), std::future_status::ready);
    EXPECT_EQ(all_of(*running, job_output::stdout_only), "got x\n");
    EXPECT_EQ(running->completion().get().status(), job_status::completed);
    // ... and a job started after it runs to its end.
    auto fast = started(
        jobs.start(request({"/bin/sh", "-c", "echo fast"}, sandbox_mode::danger_full_access)));
    ASSERT_TRUE(fast);
    ASSERT_EQ(fast->completion().wait_for(30s), std::future_status::ready);
    EXPECT_EQ(all_of(*fast, job_output::merged), "fast\n");
    EXPECT_EQ(fast->completion().get().outcome->exit_code, 0);

    EXPECT_EQ(slow->snapshot().status(), job_status::running) << "it is still being prepared";
    gate_->open();
    ASSERT_EQ(slow->completion().wait_for(30s), std::future_status::ready);
    const job_snapshot done = slow->completion().get();
    EXPECT_EQ(done.status(), job_status::completed);
    EXPECT_EQ(done.outcome->exit_code, 7);
    EXPECT_EQ(done.sandbox.backend, sandbox::backend_kind::landlock);
}

TEST_F(PreparingJobs, AJobKilledWhileItIsPreparedNeverRuns) {
    supervisor jobs(gate_, options());
    opened_at_exit opener{*gate_};
    const fs::path marker = workspace_ / "ran";
    auto each = started(jobs.start(request(
        {"/bin/sh", "-c", "echo ran > '" + marker.string() + "'"}, sandbox_mode::read_only)));
    ASSERT_TRUE(each);
    ASSERT_TRUE(gate_->wait_entered(1, 30s));
    EXPECT_TRUE(each->kill());
    EXPECT_FALSE(each->kill()) << "only the first kill counts";
    gate_->open();
    ASSERT_EQ(each->completion().wait_for(30s), std::future_status::ready);
    const job_snapshot done = each->completion().get();
    EXPECT_EQ(done.status(), job_status::killed);
    ASSERT_TRUE(done.outcome);
    EXPECT_EQ(done.outcome->kind, outcome_kind::aborted);
    EXPECT_FALSE(done.outcome->exit_code) << "nothing ran";
    EXPECT_FALSE(done.outcome->signal) << "nothing ran";
    EXPECT_THAT(done.outcome->message, HasSubstr("killed before its command started"));
    EXPECT_EQ(done.sandbox.mode, sandbox_mode::read_only);
    ASSERT_TRUE(each->record());
    EXPECT_EQ(each->record()->outcome.kind, outcome_kind::aborted);
    EXPECT_EQ(all_of(*each, job_output::merged), "");
    EXPECT_FALSE(fs::exists(marker)) << "a job killed while it was prepared ran";
    EXPECT_TRUE(jobs.list().front().finished_at);
}

TEST_F(PreparingJobs, AShutdownWhileAJobIsPreparedLeavesNothingBehind) {
    const std::string marker = "cordon-jobs-preparing-" + std::to_string(::getpid());
    // Counted once a supervisor has come and gone: a runtime may start a helper thread of its own
    // on first use (TSan's background thread starts with the process's second thread).
    { supervisor warm(gate_, options()); }
    const std::size_t threads_before = thread_count();
    {
        supervisor_options one_each = options();
        one_each.max_running_per_owner = 1;
        supervisor jobs(gate_, one_each);
        std::jthread stopping;  // joined after the gate opens, whatever happens
        opened_at_exit opener{*gate_};
        auto each = started(jobs.start(
            request({child(), "sleep", "60000", marker}, sandbox_mode::workspace_write)));
        ASSERT_TRUE(each);
        ASSERT_TRUE(gate_->wait_entered(1, 30s));

        stopping = std::jthread([&jobs] { jobs.shutdown(); });
        // The shutdown has begun once a start is refused for it rather than for the cap (the
        // owner's one job is running): it kills the job next, while its confine() still waits.
        for (;;) {
            auto refused = jobs.start(request({child(), "exit", "0"}, sandbox_mode::read_only));
            ASSERT_TRUE(std::holds_alternative<job_refused>(refused));
            if (std::get<job_refused>(refused).kind == job_refusal::shut_down) break;
            std::this_thread::yield();
        }
        gate_->open();
        stopping.join();
        const job_snapshot done = each->snapshot();
        EXPECT_EQ(done.status(), job_status::killed);
        EXPECT_TRUE(done.finished_at);
    }
    EXPECT_TRUE(test::wait_no_process_with_cmdline(marker, 10s)) << "a job outlived shutdown";
    EXPECT_LE(thread_count(), threads_before) << "a preparing thread outlived the supervisor";
}

}  // namespace
}  // namespace cordon::runtime
