// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Memory a run holds but no process owns. A tmpfs page belongs to no process: filling bwrap's
// private /dev/shm and /tmp, or the Landlock rung's private /tmp where the host's /tmp is a tmpfs,
// once left the kernel's OOM killer to pick the biggest process of the host (the agent, then
// cordon). Every run now has a memory cgroup limit (the tmpfs pages are charged to the writer's),
// every tmpfs cordon mounts has a size, an OOM ends the whole run and only the run, and the record
// says so. Each test is run by the test process itself: that it survives is part of the proof.
#include <sys/statvfs.h>

#include "cordon/limits.hpp"
#include "hostile_support.hpp"
#include "runtime/render.hpp"

namespace cordon::hostile {
namespace {

constexpr std::uint64_t small_limit = 64ULL << 20;

bool no_space(const runtime::run_record& record, const std::string& path) {
    return record.stderr_output.text.find("fill " + path + ": No space left on device") !=
           std::string::npos;
}

// Filling the tmpfs mounts a run can write ends inside the run: the size bound answers ENOSPC
// before the limit, or the OOM killer ends the run at its limit; never anything outside it.
// Under the Landlock rung the run's /tmp is a directory of the host's /tmp: this test gives the
// test process (and so its runs) a /tmp that is a tmpfs, in a mount namespace of its own.
class TmpfsFill : public BackendTest {
protected:
    void SetUp() override {
        if (::geteuid() != 0) GTEST_SKIP() << "mounts need root";
        // Before anything starts a thread (the provider's probes).
        ASSERT_TRUE(in_private_mount_namespace());
        ASSERT_EQ(::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1g,mode=1777"), 0)
            << std::strerror(errno);
        BackendTest::SetUp();
    }
};

TEST_P(TmpfsFill, EndsInsideTheRunAndFreesItsPages) {
    const std::string fill_shm = "/dev/shm/cordon-fill";
    const std::string script = "\"$0\" fill " + fill_shm + " 256; \"$0\" fill \"${TMPDIR:-/tmp}" +
                               "/cordon-fill\" 256; echo survived";
    auto req = request({"sh", "-c", script, child()}, sandbox_mode::workspace_write);
    req.max_memory = small_limit;
    const runtime::run_record record = run(std::move(req));
    SCOPED_TRACE(runtime::render(record));
    EXPECT_EQ(record.limits.max_memory, std::optional<std::uint64_t>(small_limit));
    if (kind_ == backend_kind::bwrap) {
        // /dev/shm (a quarter of the limit) and /tmp (half of it) are full long before the limit.
        EXPECT_TRUE(no_space(record, fill_shm));
        EXPECT_TRUE(no_space(record, "/tmp/cordon-fill"));
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::exited);
        EXPECT_EQ(record.stdout_output.text, "survived\n");
    } else {
        // The host's /dev/shm is not the run's to write; its private /tmp is a directory of a
        // tmpfs with room for all of it, and the pages are the run's: the limit ends it. (The
        // shell may still echo before the rest of the run goes, where cgroup v1 leaves that
        // to cordon.)
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::out_of_memory);
        EXPECT_TRUE(record.limits_hit.memory);
    }
    // The run's /tmp is gone with what it held: the host's tmpfs is as empty as before.
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator("/tmp"))
        left.push_back(entry.path().filename().string());
    EXPECT_THAT(left, IsEmpty());
    struct statvfs tmp {};
    ASSERT_EQ(::statvfs("/tmp", &tmp), 0);
    EXPECT_EQ(tmp.f_bfree, tmp.f_blocks);
}

CORDON_HOSTILE_BACKENDS(TmpfsFill);

class Memory : public BackendTest {};

// Anonymous memory past the limit: the OOM killer picks inside the run, and the whole run goes at
// once (memory.oom.group; in v1 cordon ends the rest): the shell waits for a sleeper that would
// otherwise keep the run alive until its timeout.
TEST_P(Memory, AnonymousMemoryPastTheLimitEndsTheWholeRun) {
    const std::string marker = "cordon-oom-sleeper-" + unique_suffix();
    auto req = request(
        {"sh", "-c", "\"$0\" sleep 60000 " + marker + " & \"$0\" allocate 512; wait", child()},
        sandbox_mode::read_only);
    req.max_memory = small_limit;
    const runtime::run_record record = run(std::move(req));
    SCOPED_TRACE(runtime::render(record));
    EXPECT_EQ(record.outcome.kind, classify::outcome_kind::out_of_memory);
    EXPECT_TRUE(record.limits_hit.memory);
    EXPECT_EQ(record.stdout_output.text.find("allocated"), std::string::npos);
    EXPECT_LT(record.duration_ms, 30'000);
    EXPECT_THAT(survivors_after(marker, 0ms), IsEmpty());
    EXPECT_NE(runtime::render_markers(record).find(
                  "[out of memory: the kernel's OOM killer ended the run (memory limit 64 MiB)]"),
              std::string::npos);
}

// The command and its runner are the OOM killer's first choice, outside any cgroup's pressure
// too; the process that started them keeps its own score (a vfork child's write must not reach
// the parent that shares its memory until exec).
TEST_P(Memory, TheCommandIsFirstInLineForTheOomKiller) {
    const std::string before = read_file("/proc/self/oom_score_adj");
    const runtime::run_record record =
        run(request({"/bin/cat", "/proc/self/oom_score_adj"}, sandbox_mode::read_only));
    EXPECT_EQ(record.stdout_output.text, "1000\n") << runtime::render(record);
    EXPECT_EQ(read_file("/proc/self/oom_score_adj"), before);
}

// No --max-memory: the default limit, in the run's own cgroup as the kernel holds it. Read from
// inside on the Landlock rung, which leaves the cgroup paths as the host has them (bwrap gives the
// command a cgroup namespace of its own).
TEST_P(Memory, TheDefaultLimitIsInTheRunsCgroup) {
    const runtime::run_record record =
        run(request({child(), "memory-limit"}, sandbox_mode::read_only));
    const auto expected = runtime::default_max_memory();
    ASSERT_TRUE(expected);
    EXPECT_EQ(record.limits.max_memory, expected) << runtime::render(record);
    if (kind_ == backend_kind::landlock) {
        EXPECT_EQ(record.stdout_output.text, std::to_string(*expected) + "\n")
            << runtime::render(record);
    }
}

CORDON_HOSTILE_BACKENDS(Memory);

}  // namespace
}  // namespace cordon::hostile
