// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Background jobs and their supervisor with real processes: the handle that returns at once,
// cursor reads (retried, after exit, lossy past the spill cap), kill, the kill plan, stdin, the
// per-owner cap, runner failures, overlapping confined jobs, many jobs at once, and shutdown
// leaving nothing behind.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cordon/jobs.hpp"
#include "real_backend.hpp"
#include "runtime/child_and_clock.hpp"
#include "runtime/job_stream.hpp"
#include "runtime/render.hpp"
#include "runtime/runtime_test_util.hpp"
#include "runtime/spawn.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using sandbox::sandbox_mode;
using ::testing::HasSubstr;

std::chrono::steady_clock::time_point in(std::chrono::milliseconds from_now) {
    return std::chrono::steady_clock::now() + from_now;
}

using test::child;
// ---- one stream ---------------------------------------------------------------------------------

TEST(JobStream, ReadsByCursorAndARetriedReadGetsTheSameBytes) {
    job_stream stream("s", 1024, 1 << 20, nullptr);
    stream.append("hello ");
    stream.append("world");
    const stream_read first = stream.read(0, 5);
    EXPECT_EQ(first.data, "hello");
    EXPECT_EQ(first.next_offset, 5U);
    EXPECT_FALSE(first.lossy);
    EXPECT_FALSE(first.complete);
    // The client lost that answer: the same offset again gives the same bytes.
    EXPECT_EQ(stream.read(0, 5).data, "hello");
    const stream_read rest = stream.read(first.next_offset, 100);
    EXPECT_EQ(rest.data, " world");
    EXPECT_EQ(rest.next_offset, 11U);
    // Past the end: nothing, from the end.
    const stream_read beyond = stream.read(50, 10);
    EXPECT_EQ(beyond.data, "");
    EXPECT_EQ(beyond.next_offset, 11U);
    stream.seal();
    EXPECT_TRUE(stream.read(11, 10).complete);
    EXPECT_FALSE(stream.read(0, 3).complete) << "bytes remain after the read";
}

TEST(JobStream, OldOffsetsComeBackFromTheSpillFile) {
    auto spill =
        std::make_shared<spill_directory>(fs::path("/var/tmp"), spill_retention::remove_on_destroy);
    job_stream stream("spilled", 16, 1 << 20, spill);
    std::string all;
    for (int i = 0; i < 100; ++i) {
        const std::string line = "line " + std::to_string(i) + "\n";
        stream.append(line);
        all += line;
    }
    std::string read_back;
    std::uint64_t offset = 0;
    for (;;) {
        const stream_read got = stream.read(offset, 7);
        ASSERT_FALSE(got.lossy) << "at " << offset;
        if (got.data.empty()) break;
        read_back += got.data;
        offset = got.next_offset;
    }
    EXPECT_EQ(read_back, all);
    ASSERT_TRUE(stream.spill_path());
    const fs::path path = *stream.spill_path();
    EXPECT_EQ(test::read_file(path), all);
}

TEST(JobStream, BytesBeyondTheSpillCapAreLossyNeverWrong) {
    auto spill =
        std::make_shared<spill_directory>(fs::path("/var/tmp"), spill_retention::remove_on_destroy);
    job_stream stream("capped", 10, 100, spill);
    std::string all;
    for (int i = 0; i < 40; ++i) {
        const std::string chunk(5, static_cast<char>('a' + i % 26));
        stream.append(chunk);
        all += chunk;
    }
    EXPECT_FALSE(stream.spill_path()) << "the stream outgrew its cap: the file is gone";
    const stream_read old = stream.read(0, 1000);
    EXPECT_TRUE(old.lossy);
    EXPECT_GT(old.offset, 0U);
    EXPECT_EQ(old.data, all.substr(old.offset)) << "what is returned is what was at those offsets";
    EXPECT_EQ(old.next_offset, all.size());
}

TEST(JobStream, AWaiterWakesForNewBytesAndForTheSeal) {
    job_stream stream("w", 1024, 1 << 20, nullptr);
    EXPECT_FALSE(stream.wait_for(0, in(20ms)));
    // Woken, not timed out: well before the deadline.
    const auto begin = std::chrono::steady_clock::now();
    std::thread writer([&] {
        std::this_thread::sleep_for(20ms);
        stream.append("x");
    });
    EXPECT_TRUE(stream.wait_for(0, in(30s)));
    writer.join();
    std::thread sealer([&] {
        std::this_thread::sleep_for(20ms);
        stream.seal();
    });
    EXPECT_TRUE(stream.wait_for(1, in(30s)));
    sealer.join();
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 10s);
}

// ---- jobs ---------------------------------------------------------------------------------------

class JobsTest : public ::testing::Test {
protected:
    supervisor_options options(std::chrono::milliseconds grace = 3000ms) const {
        supervisor_options out;
        out.executor.plan = kill_plan::standard(grace);
        out.executor.spill_root = fs::path("/var/tmp");
        return out;
    }

    job_request request(std::vector<std::string> argv,
                        sandbox_mode mode = sandbox_mode::danger_full_access) const {
        job_request out;
        out.run.argv = std::move(argv);
        out.run.mode = mode;
        out.run.workspace_root = workspace_.path();
        // The Landlock rung refuses protected names unless the gap is accepted (policy.hpp);
        // these tests are about supervision.
        out.run.rules.accept_partial = true;
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

    // Every byte of `which`, read by cursor in small pieces until the stream is complete.
    static std::string read_all(const job& each, job_output which, std::size_t piece = 4096) {
        std::string out;
        std::uint64_t offset = 0;
        for (;;) {
            const stream_read got = each.read(which, offset, piece);
            EXPECT_FALSE(got.lossy);
            out += got.data;
            offset = got.next_offset;
            if (got.complete) return out;
            if (got.data.empty()) each.wait_output(which, offset, in(100ms));
        }
    }

    static job_snapshot settled(const job& each) {
        EXPECT_EQ(each.completion().wait_for(60s), std::future_status::ready) << each.id();
        return each.completion().get();
    }

    test::temp_dir workspace_;
};

TEST_F(JobsTest, StartReturnsARunningJobAtOnceWithAnIdOfItsOwn) {
    supervisor jobs(nullptr, options());
    const auto begin = std::chrono::steady_clock::now();
    auto first = started(jobs.start(request({child(), "sleep", "30000"})));
    ASSERT_TRUE(first);
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 5s);
    EXPECT_EQ(first->id(), "job-1");
    EXPECT_EQ(first->snapshot().status(), job_status::running);
    auto second = started(jobs.start(request({child(), "exit", "3"})));
    EXPECT_EQ(second->id(), "job-2");
    EXPECT_EQ(jobs.find("job-1"), first);
    EXPECT_EQ(jobs.find("job-99"), nullptr);
    const job_snapshot done = settled(*second);
    EXPECT_EQ(done.status(), job_status::completed);
    EXPECT_EQ(done.outcome->exit_code, 3);
    EXPECT_TRUE(done.finished_at);
    EXPECT_TRUE(first->kill());
    EXPECT_EQ(settled(*first).status(), job_status::killed);
}

TEST_F(JobsTest, OutputIsReadByCursorWhileRunningAndAfterExit) {
    supervisor jobs(nullptr, options());
    // Each line waits for the test to have read the one before (a release file), so that the
    // merged order is the order written, however slow the machine: no clock decides it.
    test::temp_dir releases;
    const std::string second = (releases / "second").string();
    const std::string third = (releases / "third").string();
    auto each = started(
        jobs.start(request({"/bin/sh", "-c",
                            "echo one; until [ -e \"$0\" ]; do sleep 0.01; done; echo two >&2; "
                            "until [ -e \"$1\" ]; do sleep 0.01; done; echo three; exit 4",
                            second, third})));
    ASSERT_TRUE(each);
    // A read while it runs, then the same offset once more: the same bytes.
    ASSERT_TRUE(each->wait_output(job_output::merged, 0, in(30s)));
    const stream_read early = each->read(job_output::merged, 0, 4);
    EXPECT_EQ(early.data, "one\n");
    EXPECT_EQ(each->read(job_output::merged, 0, 4).data, "one\n");
    test::write_file(second, "");
    ASSERT_TRUE(each->wait_output(job_output::merged, 4, in(30s)));
    test::write_file(third, "");
    const job_snapshot done = settled(*each);
    EXPECT_EQ(done.status(), job_status::completed);
    EXPECT_EQ(done.outcome->exit_code, 4);
    EXPECT_EQ(read_all(*each, job_output::merged, 3), "one\ntwo\nthree\n");
    EXPECT_EQ(read_all(*each, job_output::stdout_only), "one\nthree\n");
    EXPECT_EQ(read_all(*each, job_output::stderr_only), "two\n");
    EXPECT_EQ(each->snapshot().output_bytes, 14U);
    ASSERT_TRUE(each->record());
    EXPECT_EQ(each->record()->outcome.exit_code, 4);
}

TEST_F(JobsTest, TheWholeStreamIsReadableBeyondTheMemoryWindow) {
    supervisor_options small = options();
    small.memory_bytes_per_stream = 4096;
    supervisor jobs(nullptr, small);
    auto each = started(jobs.start(request({child(), "bytes", "1000000", "q"})));
    ASSERT_TRUE(each);
    EXPECT_EQ(settled(*each).status(), job_status::completed);
    const std::string all = read_all(*each, job_output::stdout_only, 65536);
    EXPECT_EQ(all, std::string(1000000, 'q'));
}

TEST_F(JobsTest, PastTheSpillCapOldBytesAreLossy) {
    supervisor_options small = options();
    small.memory_bytes_per_stream = 4096;
    small.executor.limits.spill_max_bytes = 64 * 1024;
    supervisor jobs(nullptr, small);
    auto each = started(jobs.start(request({child(), "bytes", "300000", "z"})));
    ASSERT_TRUE(each);
    settled(*each);
    const stream_read old = each->read(job_output::stdout_only, 0, 1 << 20);
    EXPECT_TRUE(old.lossy);
    EXPECT_EQ(old.next_offset, 300000U);
    EXPECT_EQ(old.data, std::string(300000 - old.offset, 'z'));
}

// A job killed once it runs. (One killed while it is still being prepared never runs:
// jobs_prepare_test.cpp.)
TEST_F(JobsTest, KillIsTrueOnceThenFalse) {
    supervisor jobs(nullptr, options());
    const std::string marker = "cordon-jobs-kill-" + std::to_string(::getpid());
    auto each = started(jobs.start(request({child(), "sleep", "30000", marker})));
    ASSERT_TRUE(each);
    ASSERT_TRUE(test::wait_for_processes_with_cmdline(marker, 1, 30s));
    EXPECT_TRUE(each->kill());
    EXPECT_FALSE(each->kill());
    const job_snapshot done = settled(*each);
    EXPECT_EQ(done.status(), job_status::killed);
    EXPECT_EQ(done.outcome->signal, SIGTERM);
    EXPECT_FALSE(each->kill()) << "a settled job cannot be killed";
}

TEST_F(JobsTest, ATermTrappingJobDiesBySigkillAfterTheGrace) {
    supervisor jobs(nullptr, options(300ms));
    auto each = started(jobs.start(request({child(), "ignore-term", "30000"})));
    ASSERT_TRUE(each);
    ASSERT_TRUE(each->wait_output(job_output::stdout_only, 0, in(30s)));
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_TRUE(each->kill());
    const job_snapshot done = settled(*each);
    EXPECT_EQ(done.status(), job_status::killed);
    EXPECT_EQ(done.outcome->signal, SIGKILL);
    EXPECT_GE(std::chrono::steady_clock::now() - begin, 250ms) << "the grace was skipped";
}

// kill() with a plan of its own: the first signal is the one asked for, and the plan still ends
// in SIGKILL after its grace.
TEST_F(JobsTest, KillTakesAPlanOfItsOwn) {
    supervisor jobs(nullptr, options(30'000ms));
    auto term_ignoring = started(jobs.start(request({child(), "ignore-term", "30000"})));
    ASSERT_TRUE(term_ignoring);
    ASSERT_TRUE(term_ignoring->wait_output(job_output::stdout_only, 0, in(30s)));
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_TRUE(term_ignoring->kill(kill_plan{{{SIGKILL, 0ms}}, 3000ms}));
    const job_snapshot killed = settled(*term_ignoring);
    EXPECT_EQ(killed.outcome->signal, SIGKILL);
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 20s) << "the 30 s grace was waited out";

    const std::string marker = "cordon-jobs-plan-" + std::to_string(::getpid());
    auto sleeper = started(jobs.start(request({child(), "sleep", "30000", marker})));
    ASSERT_TRUE(sleeper);
    ASSERT_TRUE(test::wait_for_processes_with_cmdline(marker, 1, 30s));
    EXPECT_TRUE(sleeper->kill(kill_plan{{{SIGINT, 30'000ms}}, 3000ms}));
    EXPECT_FALSE(sleeper->kill(kill_plan{{{SIGKILL, 0ms}}, 3000ms})) << "only the first counts";
    EXPECT_EQ(settled(*sleeper).outcome->signal, SIGINT);
}

// A host that must be gone soon shuts down with a short grace, whatever the supervisor's own
// plan says.
TEST_F(JobsTest, ShutdownWithAShortPlanDoesNotWaitOutTheLongGrace) {
    supervisor jobs(nullptr, options(60'000ms));
    auto term_ignoring = started(jobs.start(request({child(), "ignore-term", "60000"})));
    ASSERT_TRUE(term_ignoring);
    ASSERT_TRUE(term_ignoring->wait_output(job_output::stdout_only, 0, in(30s)));
    const auto begin = std::chrono::steady_clock::now();
    jobs.shutdown(kill_plan::standard(200ms));
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 30s);
    EXPECT_EQ(term_ignoring->snapshot().outcome->signal, SIGKILL);
}

// SIGUSR1 rather than SIGSEGV: under ASan the test child's own handler would turn a SIGSEGV into
// an abort.
TEST_F(JobsTest, ASelfSignalledJobIsKilledWithItsSignal) {
    supervisor jobs(nullptr, options());
    auto each = started(jobs.start(request({child(), "kill-self", std::to_string(SIGUSR1)})));
    ASSERT_TRUE(each);
    const job_snapshot done = settled(*each);
    EXPECT_EQ(done.status(), job_status::killed);
    EXPECT_EQ(done.outcome->signal, SIGUSR1);
    EXPECT_EQ(done.outcome->exit_code, std::nullopt);
}

TEST_F(JobsTest, ALifetimeThatRunsOutIsATimeout) {
    supervisor jobs(nullptr, options(300ms));
    job_request short_lived = request({child(), "sleep", "30000"});
    short_lived.run.timeout = 200ms;
    auto each = started(jobs.start(std::move(short_lived)));
    ASSERT_TRUE(each);
    EXPECT_EQ(settled(*each).status(), job_status::timed_out);
}

TEST_F(JobsTest, AProgramThatIsNotThereFailsToStartAndSaysWhy) {
    supervisor jobs(nullptr, options());
    auto each = started(jobs.start(request({"/nonexistent/program"})));
    ASSERT_TRUE(each);
    const job_snapshot done = settled(*each);
    EXPECT_EQ(done.status(), job_status::failed_to_start);
    EXPECT_NE(done.outcome->kind, outcome_kind::runner_failed);
    EXPECT_THAT(done.outcome->message, HasSubstr("No such file or directory"));
    EXPECT_THAT(read_all(*each, job_output::merged), HasSubstr("No such file or directory"));
}

// A reader's place is kept with the job, per stream, and goes when the job does.
TEST_F(JobsTest, EachJobKeepsItsReadersPlacePerStream) {
    supervisor jobs(nullptr, options());
    auto each = started(jobs.start(request({child(), "exit", "0"})));
    ASSERT_TRUE(each);
    for (const auto which : {job_output::merged, job_output::stdout_only, job_output::stderr_only})
        EXPECT_EQ(each->cursor(which), 0U);
    each->set_cursor(job_output::merged, 12);
    each->set_cursor(job_output::stderr_only, 3);
    EXPECT_EQ(each->cursor(job_output::merged), 12U);
    EXPECT_EQ(each->cursor(job_output::stdout_only), 0U);
    EXPECT_EQ(each->cursor(job_output::stderr_only), 3U);
    settled(*each);
}

TEST_F(JobsTest, StdinIsWrittenWhileTheJobRunsAndClosedAtEof) {
    supervisor jobs(nullptr, options());
    job_request cat = request({child(), "cat"});
    cat.keep_stdin_open = true;
    cat.run.stdin_data = "first\n";
    auto each = started(jobs.start(std::move(cat)));
    ASSERT_TRUE(each);
    ASSERT_TRUE(each->wait_output(job_output::stdout_only, 0, in(30s)));
    const job_write_result second = each->write("second\n", false);
    EXPECT_EQ(second.written, 7U);
    EXPECT_FALSE(second.error);
    EXPECT_FALSE(each->write("third\n", true).error);
    const job_snapshot done = settled(*each);
    EXPECT_EQ(done.status(), job_status::completed) << "EOF ended cat";
    EXPECT_EQ(read_all(*each, job_output::stdout_only), "first\nsecond\nthird\n");
    const job_write_result late = each->write("late\n", false);
    ASSERT_TRUE(late.error);
    EXPECT_EQ(late.error->kind, job_write_error::ended);
    EXPECT_EQ(late.error->message, "the job has ended");

    auto closed = started(jobs.start(request({child(), "sleep", "30000"})));
    ASSERT_TRUE(closed);
    const job_write_result not_open = closed->write("x", false);
    ASSERT_TRUE(not_open.error);
    EXPECT_EQ(not_open.error->kind, job_write_error::not_open);
    EXPECT_EQ(not_open.error->message, "the job's stdin is not open");
    closed->kill();
    settled(*closed);
}

TEST_F(JobsTest, TheCapPerOwnerRefusesAndListsTheRunningJobs) {
    supervisor_options two = options();
    two.max_running_per_owner = 2;
    supervisor jobs(nullptr, two);
    auto a = started(jobs.start(request({child(), "sleep", "30000"})));
    auto b = started(jobs.start(request({child(), "sleep", "30000"})));
    ASSERT_TRUE(a && b);
    auto refused = jobs.start(request({child(), "sleep", "30000"}));
    ASSERT_TRUE(std::holds_alternative<job_refused>(refused));
    const job_refused& why = std::get<job_refused>(refused);
    EXPECT_EQ(why.kind, job_refusal::too_many);
    EXPECT_THAT(why.running, ::testing::ElementsAre("job-1", "job-2"));
    EXPECT_THAT(why.message, HasSubstr("job-1 job-2"));
    // Another owner has a cap of its own; a finished job frees its place.
    job_request other = request({child(), "exit", "0"});
    other.owner = "other";
    EXPECT_TRUE(started(jobs.start(std::move(other))));
    a->kill();
    settled(*a);
    EXPECT_TRUE(started(jobs.start(request({child(), "exit", "0"}))));
    // Nothing was pruned: every job is listed, running ones first.
    const auto listed = jobs.list();
    ASSERT_EQ(listed.size(), 4U);
    EXPECT_EQ(listed.front().status(), job_status::running);
}

TEST_F(JobsTest, AHundredJobsAtOnceLoseNoByte) {
    supervisor_options many = options();
    many.max_running_per_owner = 100;
    many.memory_bytes_per_stream = 8192;
    supervisor jobs(nullptr, many);
    std::vector<std::shared_ptr<job>> started_jobs;
    for (int i = 0; i < 100; ++i) {
        const std::string script = "i=0; while [ $i -lt 200 ]; do echo " + std::to_string(i) +
                                   "-$i; echo err" + std::to_string(i) +
                                   "-$i >&2; i=$((i+1)); done";
        auto each = started(jobs.start(request({"/bin/sh", "-c", script})));
        ASSERT_TRUE(each);
        started_jobs.push_back(each);
    }
    // Readers interleave with the writers, by cursor, a few bytes at a time.
    std::vector<std::thread> readers;
    std::vector<std::string> seen(started_jobs.size());
    for (std::size_t i = 0; i < started_jobs.size(); ++i) {
        readers.emplace_back(
            [&, i] { seen[i] = read_all(*started_jobs[i], job_output::stdout_only, 13); });
    }
    for (auto& reader : readers)
        reader.join();
    for (std::size_t i = 0; i < started_jobs.size(); ++i) {
        std::string expected;
        for (int line = 0; line < 200; ++line)
            expected += std::to_string(i) + "-" + std::to_string(line) + "\n";
        EXPECT_EQ(seen[i], expected) << started_jobs[i]->id();
        EXPECT_EQ(settled(*started_jobs[i]).status(), job_status::completed);
        EXPECT_EQ(
            started_jobs[i]->snapshot().output_bytes,
            started_jobs[i]->snapshot().stdout_bytes + started_jobs[i]->snapshot().stderr_bytes);
    }
}

TEST_F(JobsTest, ShutdownEndsEveryTreeAndRefusesNewJobs) {
    const std::string marker = "cordon-jobs-shutdown-" + std::to_string(::getpid());
    {
        supervisor jobs(nullptr, options(300ms));
        for (int i = 0; i < 3; ++i) {
            // A leader that ignores TERM and a child of its own that outlives it.
            ASSERT_TRUE(
                started(jobs.start(request({"/bin/sh", "-c",
                                            "trap '' TERM; \"$0\" sleep 60000 " + marker +
                                                " & \"$0\" sleep 60000 " + marker + "; wait",
                                            child()}))));
        }
        ASSERT_TRUE(test::wait_for_processes_with_cmdline(marker, 6, 30s));
        jobs.shutdown();
        for (const auto& each : jobs.list())
            EXPECT_EQ(each.status(), job_status::killed) << each.id;
        auto refused = jobs.start(request({child(), "exit", "0"}));
        ASSERT_TRUE(std::holds_alternative<job_refused>(refused));
        EXPECT_EQ(std::get<job_refused>(refused).kind, job_refusal::shut_down);
    }
    EXPECT_TRUE(test::wait_no_process_with_cmdline(marker, 10s))
        << "a job's tree outlived shutdown";
}

// The live-output callbacks run on the supervisor's loop thread: a call that would wait there
// (and deadlock the loop) throws instead.
TEST_F(JobsTest, CallsThatWaitAreRefusedOnTheLoopThread) {
    supervisor jobs(nullptr, options());
    std::atomic<int> refused{0};
    job_request talkative = request({"/bin/sh", "-c", "echo hi"});
    talkative.run.on_stdout = [&](std::string_view) {
        try {
            (void)jobs.start(request({child(), "exit", "0"}));
        } catch (const std::logic_error&) {
            ++refused;
        }
        try {
            jobs.shutdown();
        } catch (const std::logic_error&) {
            ++refused;
        }
    };
    auto each = started(jobs.start(std::move(talkative)));
    ASSERT_TRUE(each);
    EXPECT_EQ(settled(*each).status(), job_status::completed);
    EXPECT_EQ(refused.load(), 2);
    EXPECT_EQ(jobs.list().size(), 1U) << "nothing was started from the loop";
}

// A live-output callback of the caller's that throws on the supervisor's loop ends its own job
// (killed, its tree gone), and the loop goes on serving every other job.
TEST_F(JobsTest, ACallbackThatThrowsEndsItsJobAndTheLoopGoesOn) {
    supervisor jobs(nullptr, options());
    // What the command writes after the throw, as it is being ended, still reaches the job's
    // streams: it says so on SIGTERM, on both streams.
    job_request failing = request({"/bin/sh", "-c",
                                   "trap 'echo ending; echo ending >&2; exit 0' TERM; echo hi; "
                                   "while :; do sleep 0.05; done"});
    int calls = 0;
    failing.run.on_stdout = [&calls](std::string_view) {
        ++calls;
        throw std::runtime_error("the agent's callback failed");
    };
    auto each = started(jobs.start(std::move(failing)));
    ASSERT_TRUE(each);
    const job_snapshot ended = settled(*each);
    EXPECT_EQ(ended.status(), job_status::killed);
    ASSERT_TRUE(each->record());
    EXPECT_EQ(each->record()->outcome.kind, outcome_kind::aborted);
    EXPECT_EQ(read_all(*each, job_output::stdout_only), "hi\nending\n");
    // (The shell may also say its sleep was Terminated.)
    EXPECT_THAT(read_all(*each, job_output::stderr_only), ::testing::EndsWith("ending\n"));
    EXPECT_EQ(calls, 1);

    auto next = started(jobs.start(request({"/bin/sh", "-c", "echo still here"})));
    ASSERT_TRUE(next);
    EXPECT_EQ(settled(*next).status(), job_status::completed);
    EXPECT_EQ(read_all(*next, job_output::stdout_only), "still here\n");
}

// The job a throwing callback ended is gone, its process group with it, by the time its record
// is there, and the record says why; the loop runs the next job to its normal end.
TEST_F(JobsTest, AJobEndedByItsCallbackIsKilledAndItsRecordSaysWhy) {
    supervisor jobs(nullptr, options());
    const fs::path pid_file = workspace_.path() / "pid";
    job_request failing =
        request({"/bin/sh", "-c", "echo $$ > \"$0\"; printf x; exec sleep 30", pid_file.string()});
    failing.run.on_stdout = [](std::string_view) {
        throw std::runtime_error("the agent's callback failed");
    };
    auto each = started(jobs.start(std::move(failing)));
    ASSERT_TRUE(each);
    const job_snapshot ended = settled(*each);
    const auto pid = test::read_pid_file(pid_file);
    ASSERT_TRUE(pid);
    // Reaped before the record was made (process.hpp): no process, no zombie, no group.
    errno = 0;
    EXPECT_EQ(::kill(*pid, 0), -1);
    EXPECT_EQ(errno, ESRCH) << "the job's process is still there";
    errno = 0;
    EXPECT_EQ(::kill(-*pid, 0), -1);
    EXPECT_EQ(errno, ESRCH) << "the job's process group is still there";
    test::kill_if_alive(*pid);
    EXPECT_EQ(ended.status(), job_status::killed);
    ASSERT_TRUE(ended.outcome);
    EXPECT_EQ(ended.outcome->kind, outcome_kind::aborted);
    EXPECT_EQ(ended.outcome->message,
              "a callback of the caller's threw: the agent's callback failed");
    ASSERT_TRUE(each->record());
    EXPECT_THAT(render_markers(*each->record()),
                HasSubstr("[aborted: a callback of the caller's threw: the agent's callback "
                          "failed]\n"));
    EXPECT_EQ(read_all(*each, job_output::stdout_only), "x");

    auto next = started(jobs.start(request({"/bin/sh", "-c", "printf y; exit 3"})));
    ASSERT_TRUE(next);
    const job_snapshot normal = settled(*next);
    EXPECT_EQ(normal.status(), job_status::completed);
    ASSERT_TRUE(normal.outcome);
    EXPECT_EQ(normal.outcome->kind, outcome_kind::exited);
    EXPECT_EQ(normal.outcome->exit_code, 3);
    EXPECT_EQ(read_all(*next, job_output::stdout_only), "y");
}

// The job streams' files are what read() trusts: a workspace that holds them is refused, as the
// executor's own spill files are.
TEST_F(JobsTest, AWorkspaceHoldingTheStreamFilesIsRefused) {
    std::string why;
    auto provider = test::provider_for(sandbox::backend_choice::landlock, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    supervisor_options here = options();
    here.executor.spill_root = workspace_.path();
    supervisor jobs(provider, here);
    auto first = started(jobs.start(request({child(), "bytes", "10"})));
    ASSERT_TRUE(first);
    settled(*first);
    auto writer =
        started(jobs.start(request({child(), "exit", "0"}, sandbox_mode::workspace_write)));
    ASSERT_TRUE(writer);
    const job_snapshot done = settled(*writer);
    EXPECT_EQ(done.status(), job_status::failed_to_start);
    EXPECT_NE(done.outcome->kind, outcome_kind::runner_failed);
    EXPECT_THAT(done.outcome->message, HasSubstr("cordon-spill")) << done.outcome->message;
}

// ---- confined jobs ------------------------------------------------------------------------------

class ConfinedJobs : public JobsTest, public ::testing::WithParamInterface<test::real_backend> {
protected:
    // The supervisor options that take this test's path through its backend.
    [[nodiscard]] supervisor_options path_options(std::chrono::milliseconds grace = 3000ms) const {
        supervisor_options out = options(grace);
        out.executor.landlock_in_child = test::landlock_in_child(GetParam());
        return out;
    }
};

TEST_P(ConfinedJobs, OverlappingJobsKeepTheirOwnSandboxFacts) {
    std::string why;
    auto provider = test::provider_for(test::choice_of(GetParam()), why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    supervisor jobs(provider, path_options());
    const fs::path target = workspace_ / "written";
    // A read-only job is refused the write, a workspace-write job beside it makes it.
    auto refused = started(
        jobs.start(request({"/bin/sh", "-c", "sleep 0.3; echo x > '" + target.string() + "'"},
                           sandbox_mode::read_only)));
    auto allowed = started(
        jobs.start(request({"/bin/sh", "-c", "sleep 0.3; echo x > '" + target.string() + ".2'"},
                           sandbox_mode::workspace_write)));
    ASSERT_TRUE(refused && allowed);
    const job_snapshot denied = settled(*refused);
    const job_snapshot wrote = settled(*allowed);
    EXPECT_EQ(denied.sandbox.mode, sandbox_mode::read_only);
    EXPECT_TRUE(denied.sandbox.denied) << read_all(*refused, job_output::merged);
    EXPECT_EQ(wrote.sandbox.mode, sandbox_mode::workspace_write);
    EXPECT_FALSE(wrote.sandbox.denied);
    EXPECT_EQ(wrote.outcome->exit_code, 0);
    for (const auto& facts : {denied, wrote}) {
        EXPECT_TRUE(facts.sandbox.enforcement);
        EXPECT_TRUE(facts.sandbox.backend);
        EXPECT_NE(facts.outcome->kind, outcome_kind::runner_failed);
    }
    EXPECT_FALSE(fs::exists(target));
    EXPECT_TRUE(fs::exists(target.string() + ".2"));
}

TEST_P(ConfinedJobs, ShutdownLeavesNoProcessOfAConfinedJob) {
    std::string why;
    auto provider = test::provider_for(test::choice_of(GetParam()), why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    const std::string marker = "cordon-jobs-confined-" + std::to_string(::getpid());
    {
        supervisor jobs(provider, path_options(300ms));
        ASSERT_TRUE(started(jobs.start(
            request({"/bin/sh", "-c",
                     "\"$0\" sleep 60000 " + marker + " & \"$0\" sleep 60000 " + marker + "; wait",
                     child()},
                    sandbox_mode::workspace_write))));
        ASSERT_TRUE(test::wait_for_processes_with_cmdline(marker, 2, 30s));
    }
    EXPECT_TRUE(test::wait_no_process_with_cmdline(marker, 10s));
}

INSTANTIATE_TEST_SUITE_P(Backends, ConfinedJobs, test::all_real_backends(),
                         test::real_backend_name);

// A launcher that exits 0 without running the command: the job settles as a runner failure,
// never as a completed job, and denied is false. (Through the launcher, which the Landlock rung
// in the child never execs.)
TEST_F(JobsTest, ARunnerFailureSettlesWithRunnerFailed) {
    test::temp_dir dir("/var/tmp");
    const fs::path launcher = dir.path() / "cordon-fake-launcher";
    fs::copy_file(test::test_child_path(), launcher);
    sandbox::local_provider_options provider_options;
    provider_options.choice = sandbox::backend_choice::landlock;
    provider_options.launcher_path = launcher;
    auto provider = make_local_provider(provider_options);
    ASSERT_TRUE(provider->selected());
    supervisor_options through_the_launcher = options();
    through_the_launcher.executor.landlock_in_child = false;
    supervisor jobs(provider, through_the_launcher);
    auto each = started(jobs.start(request({"/bin/sh", "-c", "exit 0"}, sandbox_mode::read_only)));
    ASSERT_TRUE(each);
    const job_snapshot done = settled(*each);
    EXPECT_EQ(done.status(), job_status::failed_to_start);
    EXPECT_EQ(done.outcome->kind, outcome_kind::runner_failed);
    EXPECT_FALSE(done.sandbox.denied);
    EXPECT_EQ(done.sandbox.backend, sandbox::backend_kind::landlock);
    EXPECT_THAT(done.outcome->message, HasSubstr("without starting the command"));
    // The failed backend is typed, in the record every consumer reads.
    ASSERT_TRUE(done.outcome->runner);
    EXPECT_EQ(done.outcome->runner->backend, sandbox::backend_kind::landlock);
    ASSERT_TRUE(done.outcome->runner->detail);
    const std::optional<run_record> record = each->record();
    ASSERT_TRUE(record);
    EXPECT_EQ(record->outcome.kind, outcome_kind::runner_failed);
    EXPECT_EQ(record->outcome.message, done.outcome->message);
}

// A job's status is its outcome's, through one mapping.
TEST(JobStatus, EachOutcomeHasOneStatus) {
    EXPECT_EQ(job_snapshot{}.status(), job_status::running);
    EXPECT_EQ(status_of(outcome_kind::exited), job_status::completed);
    EXPECT_EQ(status_of(outcome_kind::signaled), job_status::killed);
    EXPECT_EQ(status_of(outcome_kind::aborted), job_status::killed);
    EXPECT_EQ(status_of(outcome_kind::timed_out), job_status::timed_out);
    EXPECT_EQ(status_of(outcome_kind::not_started), job_status::failed_to_start);
    EXPECT_EQ(status_of(outcome_kind::runner_failed), job_status::failed_to_start);
}

// ---- a SIGKILLed host ---------------------------------------------------------------------------

// The supervisor's process is SIGKILLed with jobs running (tests/helper/job_host.cpp): it cannot
// end anything itself. Under bwrap, --die-with-parent and the pid namespace end every job's tree;
// elsewhere each leader dies with the supervisor's loop thread (PR_SET_PDEATHSIG) and what it
// started is swept from its cgroup by the next cordon that starts.
class HostKilled : public ::testing::TestWithParam<std::string> {};

TEST_P(HostKilled, NoJobTreeOutlivesASigkilledHost) {
    const std::string backend = GetParam();
    std::string why;
    if (backend != "none") {
        const auto choice =
            backend == "bwrap" ? sandbox::backend_choice::bwrap : sandbox::backend_choice::landlock;
        if (!test::provider_for(choice, why)) CORDON_SKIP_OR_FAIL(why);
    }
    const bool sweeps =
        test::cgroup_host_or(why, {.reap_stale = false, .lock_directory = {}}) != nullptr;
    if (backend != "bwrap" && !sweeps) CORDON_SKIP_OR_FAIL(why);

    const std::string marker = "cordon-job-host-" + backend + "-" + std::to_string(::getpid());
    test::temp_dir workspace;
    int out[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    unique_fd read_end(out[0]);
    unique_fd write_end(out[1]);
    unique_fd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    spawn_request host;
    host.argv = {(test::bin_dir() / "cordon-test-job-host").string(),
                 backend,
                 test::launcher_path().string(),
                 test::test_child_path().string(),
                 workspace.path().string(),
                 marker};
    host.env = test::child_env();
    host.cwd = "/";
    host.fds = {{dev_null.get(), 0}, {write_end.get(), 1}, {STDERR_FILENO, 2}};
    spawn_result spawned = spawn(host);
    ASSERT_TRUE(std::holds_alternative<spawned_child>(spawned));
    const pid_t pid = std::get<spawned_child>(spawned).pid;
    write_end.reset();

    std::string said;
    char buffer[64];
    ssize_t n;
    while (said.find("READY\n") == std::string::npos &&
           (n = ::read(read_end.get(), buffer, sizeof buffer)) > 0) {
        said.append(buffer, static_cast<std::size_t>(n));
    }
    const bool ready = said.find("READY\n") != std::string::npos &&
                       test::wait_for_processes_with_cmdline(marker, 6, 60s);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(ready) << "the host never started its jobs: " << said;

    if (backend == "bwrap") {
        EXPECT_TRUE(test::wait_no_process_with_cmdline(marker, 10s))
            << "a bwrap job outlived its host";
        return;
    }
    // The leaders (the shells) went with the host's loop thread.
    const auto shells = [&] {
        std::vector<pid_t> found;
        for (pid_t each : test::live_processes_with_cmdline(marker)) {
            if (test::read_file("/proc/" + std::to_string(each) + "/cmdline").rfind("/bin/sh", 0) ==
                0) {
                found.push_back(each);
            }
        }
        return found;
    };
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!shells().empty() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(shells().empty()) << "a job's leader outlived its host";
    // The next cordon to start sweeps what they started.
    auto next = test::cgroup_host_or(why);
    ASSERT_TRUE(next) << why;
    const bool swept = test::wait_no_process_with_cmdline(marker, 10s);
    if (!swept) {
        for (pid_t each : test::live_processes_with_cmdline(marker))
            ::kill(each, SIGKILL);
    }
    EXPECT_TRUE(swept) << "the next start did not sweep a dead host's jobs";
}

INSTANTIATE_TEST_SUITE_P(Backends, HostKilled,
                         ::testing::Values("none", "bwrap", "landlock", "landlock_via_launcher"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace cordon::runtime
