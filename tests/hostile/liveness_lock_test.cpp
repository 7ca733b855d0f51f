// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The liveness lock: each cordon holds an flock on /dev/shm/cordon-cgroup-locks-<euid>/<name>.lock,
// and the next cordon ends the runs of cgroups whose lock is free. A leftover process that could
// open and lock a dead cordon's lock file would keep itself alive forever.
#include <signal.h>

#include "hostile_support.hpp"
#include "runtime/cgroup.hpp"

namespace cordon::hostile {
namespace {

using ::testing::IsEmpty;

fs::path lock_directory() {
    return "/dev/shm/cordon-cgroup-locks-" + std::to_string(::geteuid());
}

strings lock_files() {
    strings out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(lock_directory(), ec)) {
        out.push_back(entry.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// A cgroup host of this process, so that at least one live lock file exists; skips (not root)
// or fails when cgroups are unavailable.
std::shared_ptr<runtime::cgroup_host> live_host(std::string* why) {
    auto host = runtime::cgroup_host::create({.reap_stale = false, .lock_directory = {}});
    if (auto* reason = std::get_if<std::string>(&host)) {
        *why = *reason;
        return nullptr;
    }
    auto out = std::get<std::shared_ptr<runtime::cgroup_host>>(host);
    if (!out->unreapable().empty()) *why = out->unreapable();
    return out->unreapable().empty() ? out : nullptr;
}

class LivenessLock : public BackendAndModeTest {};

TEST_P(LivenessLock, LockFilesCannotBeOpened) {
    std::string why;
    const auto host = live_host(&why);
    if (!host && ::geteuid() != 0) GTEST_SKIP() << "needs root for run cgroups: " << why;
    ASSERT_TRUE(host) << why;
    const strings locks = lock_files();
    ASSERT_FALSE(locks.empty()) << "no lock file under " << lock_directory();

    strings args{"lock-probe", lock_directory().string()};
    args.insert(args.end(), locks.begin(), locks.end());
    // The same files through this process's own descriptors (/proc/PID/fd/N).
    for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const fs::path target = fs::read_symlink(entry.path(), ec);
        if (!ec && target.parent_path() == lock_directory()) {
            args.push_back("/proc/" + std::to_string(::getpid()) + "/fd/" +
                           entry.path().filename().string());
        }
    }
    ASSERT_GT(args.size(), 2 + locks.size()) << "this process holds no lock file open";
    const attempts seen = attack(args);
    // Listing the directory yields names, not a lock: what matters is that no file opens.
    const std::string listing = "list " + lock_directory().string();
    strings opened;
    for (const auto& what : seen.allowed) {
        if (what != listing) opened.push_back(what);
    }
    EXPECT_THAT(opened, IsEmpty()) << describe(record_);
    for (std::size_t i = 2; i < args.size(); ++i) {
        EXPECT_TRUE(denial_of(seen, "open-read " + args[i]).has_value()) << args[i];
        EXPECT_TRUE(denial_of(seen, "open-rw " + args[i]).has_value()) << args[i];
    }
}

CORDON_HOSTILE_BOTH_MODES(LivenessLock);

// The whole scenario under the Landlock backend (no pid namespace: only the cgroup ends a tree):
// cordon runs a command that leaves a background process trying to open and flock every lock
// file it can see; cordon is SIGKILLed; the next cgroup host must end the leftovers.
TEST(LivenessLockScenario, ALeftoverOfAKilledCordonCannotKeepItselfAliveWithItsLock) {
    std::string why;
    if (!live_host(&why) && ::geteuid() != 0) GTEST_SKIP() << "needs root for run cgroups: " << why;
    const selection& landlock = selected(backend_choice::landlock);
    if (!landlock.rung) CORDON_SKIP_OR_FAIL(landlock.reason);

    host_tree tree;
    const std::string marker = "cordon-hostile-squatter-" + unique_suffix();
    spawned_process cordon(
        {test::cordon_path().string(), "run", "--backend", "landlock", "--mode", "workspace-write",
         "--accept-partial", "--workspace", tree.workspace().string(), "--", child(),
         "lock-squat-bg", lock_directory().string(), "60000", marker},
        {});
    ASSERT_TRUE(cordon.wait_for_output("STARTED"))
        << "stdout: " << cordon.out() << "\nstderr: " << cordon.err();
    // Let the squatter make its rounds over the lock directory.
    std::this_thread::sleep_for(1s);
    EXPECT_GE(live_processes_with_cmdline(marker).size(), 2U)
        << "the command and its squatter are running";

    cordon.kill(SIGKILL);
    cordon.wait();
    // cordon died without cleaning up. (Another test's cgroup host, created in parallel, may
    // already have ended the leftovers: that is the mechanism under test too.)

    auto next = runtime::cgroup_host::create();
    ASSERT_TRUE(std::holds_alternative<std::shared_ptr<runtime::cgroup_host>>(next))
        << std::get<std::string>(next);
    EXPECT_THAT(survivors_after(marker), IsEmpty())
        << "a leftover of the killed cordon kept itself alive (its lock was held)";

    // The dead cordon's cgroups are gone too: at once, or, when a reaper was still at it (another
    // test's host holding the dead cordon's lock while its rmdir waits for the killed tree to
    // leave, or this one giving up on a cgroup that had not emptied on a loaded machine), by the
    // next host, for which the lock file stays until the removal succeeds.
    const fs::path base =
        std::get<std::shared_ptr<runtime::cgroup_host>>(next)->directory().parent_path();
    const std::string prefix = "cordon-" + std::to_string(cordon.pid()) + "-";
    const auto left_behind = [&] {
        std::vector<fs::path> out;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(base, ec)) {
            if (entry.path().filename().string().rfind(prefix, 0) == 0) {
                out.push_back(entry.path());
            }
        }
        return out;
    };
    const auto deadline = std::chrono::steady_clock::now() + generous;
    while (!left_behind().empty() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100ms);
        (void)runtime::cgroup_host::create();
    }
    EXPECT_THAT(left_behind(), IsEmpty()) << "left behind by the killed cordon";
}

}  // namespace
}  // namespace cordon::hostile
