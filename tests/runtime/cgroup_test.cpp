// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The cgroup host's liveness lock and the run limits, against the real cgroup hierarchies of this
// host (root, or a delegated subtree; skipped or failed as CI requires otherwise).
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cgroup.hpp"
#include "runtime/cgroup_reaper.hpp"
#include "runtime/spawn.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

namespace fs = std::filesystem;

// The cgroups a test makes by hand, removed however the test ends (an ASSERT part-way included):
// each tree bottom-up, since a cgroup goes only by rmdir(2) once it has no child.
class made_cgroups {
public:
    made_cgroups() = default;
    made_cgroups(const made_cgroups&) = delete;
    made_cgroups& operator=(const made_cgroups&) = delete;
    ~made_cgroups() {
        for (auto tree = trees_.rbegin(); tree != trees_.rend(); ++tree)
            remove_tree(*tree);
    }
    // Makes `directory` (its parent must exist) and takes it over; false with errno if it could
    // not.
    bool make(const fs::path& directory) {
        if (::mkdir(directory.c_str(), 0755) != 0) return false;
        trees_.push_back(directory);
        return true;
    }

private:
    static void remove_tree(const fs::path& directory) {
        std::error_code ec;
        std::vector<fs::path> children;
        for (const auto& child : fs::directory_iterator(directory, ec)) {
            if (child.is_directory(ec) && !child.is_symlink(ec)) children.push_back(child.path());
        }
        for (const fs::path& child : children)
            remove_tree(child);
        (void)::rmdir(directory.c_str());
    }
    std::vector<fs::path> trees_;
};

// The lock directory is trusted only as a private directory of this uid: anyone else who could
// delete or plant lock files could make the next cordon end live runs, or keep dead ones alive.
TEST(CgroupLocks, OnlyAPrivateDirectoryOfThisUidIsTrusted) {
    test::temp_dir dir;
    struct layout {
        const char* name;
        void (*make)(const fs::path&);
        const char* says;
    };
    const layout untrusted[] = {
        {"open-to-others",
         [](const fs::path& p) {
             fs::create_directory(p);
             fs::permissions(p, fs::perms(0755));
         },
         "is not a private directory"},
        {"a-symlink",
         [](const fs::path& p) {
             fs::create_directory(p.string() + ".real");
             fs::permissions(p.string() + ".real", fs::perms(0700));
             fs::create_directory_symlink(p.string() + ".real", p);
         },
         "cannot open"},
        {"a-file", [](const fs::path& p) { std::ofstream(p) << "x"; }, "cannot"},
    };
    for (const auto& c : untrusted) {
        SCOPED_TRACE(c.name);
        const fs::path locks = dir / c.name;
        c.make(locks);
        std::string why;
        auto host = test::cgroup_host_or(why, {.reap_stale = true, .lock_directory = locks});
        if (!host) CORDON_SKIP_OR_FAIL(why);
        EXPECT_NE(host->unreapable().find(c.says), std::string::npos) << host->unreapable();
    }
    if (::geteuid() == 0) {
        const fs::path foreign = dir / "foreign";
        fs::create_directory(foreign);
        fs::permissions(foreign, fs::perms(0700));
        ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
        std::string why;
        auto host = test::cgroup_host_or(why, {.reap_stale = true, .lock_directory = foreign});
        ASSERT_TRUE(host) << why;
        EXPECT_NE(host->unreapable().find("owner 65534"), std::string::npos) << host->unreapable();
    }
}

// A trusted directory holds one locked file per live host, named after its cgroup; it goes
// with the host.
TEST(CgroupLocks, ALiveHostHoldsItsLockAndRemovesItWhenDone) {
    test::temp_dir dir;
    const fs::path locks = dir / "locks";
    fs::create_directory(locks);
    fs::permissions(locks, fs::perms(0700));
    std::string why;
    auto host = test::cgroup_host_or(why, {.reap_stale = true, .lock_directory = locks});
    if (!host) CORDON_SKIP_OR_FAIL(why);
    EXPECT_EQ(host->unreapable(), "");
    const fs::path lock = locks / (host->directory().filename().string() + ".lock");
    ASSERT_TRUE(fs::exists(lock));
    unique_fd probe(::open(lock.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(probe);
    EXPECT_NE(::flock(probe.get(), LOCK_EX | LOCK_NB), 0) << "the host does not hold its lock";
    probe.reset();
    host.reset();
    EXPECT_FALSE(fs::exists(lock));
}

// A host whose lock file nobody holds is gone: the next host ends what it left under this
// process's cgroup bases and removes its lock file. A free lock file whose host has no cgroup
// under these bases belongs to a cordon elsewhere (another service, another scope): it stays,
// or no cordon could ever end that host's runs. A lock file not yet under its final name is a
// host still starting.
TEST(CgroupLocks, OnlyDeadHostsUnderTheseBasesAreReaped) {
    test::temp_dir dir;
    const fs::path locks = dir / "locks";
    fs::create_directory(locks);
    fs::permissions(locks, fs::perms(0700));
    std::string why;
    auto first = test::cgroup_host_or(why, {.reap_stale = false, .lock_directory = locks});
    if (!first) CORDON_SKIP_OR_FAIL(why);
    const fs::path base = first->directory().parent_path();
    const std::string suffix = std::to_string(::getpid());
    const std::string dead = "cordon-deadtest-" + suffix;
    const std::string elsewhere = "cordon-elsewhere-" + suffix;
    const std::string starting = ".cordon-startingtest-" + suffix + ".lock";
    const std::string killed_starting = ".cordon-killedtest-" + suffix + ".lock";
    made_cgroups made;
    ASSERT_TRUE(made.make(base / dead)) << std::strerror(errno);
    ASSERT_EQ(::mkdir((base / dead / "run-1").c_str(), 0755), 0);
    for (const std::string& file :
         {dead + ".lock", elsewhere + ".lock", starting, killed_starting}) {
        std::ofstream(locks / file) << "";
    }
    // One a cordon was killed while making (between its O_EXCL create and its rename): a minute
    // old, it is nobody's.
    const timespec two_minutes_ago[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (locks / killed_starting).c_str(), two_minutes_ago, 0), 0);

    auto second = test::cgroup_host_or(why, {.reap_stale = true, .lock_directory = locks});
    ASSERT_TRUE(second) << why;
    EXPECT_FALSE(fs::exists(base / dead)) << "the dead host's cgroup was left";
    EXPECT_FALSE(fs::exists(locks / (dead + ".lock")));
    EXPECT_TRUE(fs::exists(locks / (elsewhere + ".lock")))
        << "the lock of a host whose cgroups are elsewhere was removed";
    EXPECT_TRUE(fs::exists(locks / starting)) << "the lock of a host still starting was removed";
    EXPECT_FALSE(fs::exists(locks / killed_starting))
        << "the hidden lock of a cordon killed while making it was left";
    EXPECT_TRUE(fs::exists(first->directory())) << "a live host was reaped";
    const fs::path live_lock = locks / (first->directory().filename().string() + ".lock");
    EXPECT_TRUE(fs::exists(live_lock));
}

// A host's lock file records its cgroups in every hierarchy, wherever they lie: a reaper whose
// own bases hold none of them (a cordon in another cgroup scope) ends and removes them, and
// removes the lock file only once all are gone, so that what could not go yet is found again by
// the reaper after it. A record seen from other namespaces is left to a reaper there; a path in a
// record that is not a cgroup named after the host is never touched.
TEST(CgroupLocks, ADeadHostsRecordedCgroupsGoWhereverTheyLieAndItsLockLast) {
    test::temp_dir dir;
    const fs::path locks = dir / "locks";
    fs::create_directory(locks);
    fs::permissions(locks, fs::perms(0700));
    std::string why;
    auto first = test::cgroup_host_or(why, {.reap_stale = false, .lock_directory = locks});
    if (!first) CORDON_SKIP_OR_FAIL(why);
    const std::string suffix = std::to_string(::getpid());
    // Another scope: a cgroup beside this process's, which no base of the reaper holds.
    const fs::path scope = first->directory().parent_path() / ("cordon-test-scope-" + suffix);
    made_cgroups made;
    ASSERT_TRUE(made.make(scope)) << std::strerror(errno);
    const std::string dead = "cordon-recorded-" + suffix;
    const std::string foreign = "cordon-foreign-" + suffix;
    const std::string planted = "cordon-planted-" + suffix;
    ASSERT_EQ(::mkdir((scope / dead).c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((scope / dead / "run-1").c_str(), 0755), 0);
    // A cgroup below the run's: the run cannot go until it does (as while its processes die).
    ASSERT_EQ(::mkdir((scope / dead / "run-1" / "held").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((scope / foreign).c_str(), 0755), 0);
    const fs::path not_cgroup = dir / planted;
    fs::create_directory(not_cgroup);
    std::ofstream(locks / (dead + ".lock")) << runtime::cgroup_reaper::lock_record({scope / dead});
    std::ofstream(locks / (foreign + ".lock")) << "cordon-cgroups 1\nnamespaces 0:1 0:2\ncgroup "
                                               << (scope / foreign).string() << "\nend\n";
    std::ofstream(locks / (planted + ".lock")) << runtime::cgroup_reaper::lock_record({not_cgroup});

    auto second = test::cgroup_host_or(why, {.reap_stale = true, .lock_directory = locks});
    ASSERT_TRUE(second) << why;
    EXPECT_TRUE(fs::exists(scope / dead / "run-1")) << "a cgroup with a child cgroup went";
    EXPECT_TRUE(fs::exists(locks / (dead + ".lock"))) << "the lock went before its cgroups";
    EXPECT_TRUE(fs::exists(scope / foreign)) << "a host of other namespaces was reaped";
    EXPECT_TRUE(fs::exists(locks / (foreign + ".lock")));
    EXPECT_TRUE(fs::exists(not_cgroup)) << "a path that is not a cgroup was removed";

    ASSERT_EQ(::rmdir((scope / dead / "run-1" / "held").c_str()), 0);
    auto third = test::cgroup_host_or(why, {.reap_stale = true, .lock_directory = locks});
    ASSERT_TRUE(third) << why;
    EXPECT_FALSE(fs::exists(scope / dead)) << "the dead host's cgroup in another scope was left";
    EXPECT_FALSE(fs::exists(locks / (dead + ".lock")));
    EXPECT_TRUE(fs::exists(first->directory())) << "a live host was reaped";
}

// A host's record is verified by identity, not by the namespaces it was written from: a reaper in
// another mount namespace (a restarted service's private /tmp, a container sharing /dev/shm) ends
// a dead host's cgroups as one in the same would. And only what is provably the host's goes: a
// record whose cgroup is not the one at its path (forged, or of another view) is placed through
// the reaper's own bases or not at all (its lock then stays), and a directory another uid made is
// never removed.
TEST(CgroupLocks, ARecordIsVerifiedByIdentityFromAnyMountNamespace) {
    test::temp_dir dir;
    const fs::path locks = dir / "locks";
    fs::create_directory(locks);
    fs::permissions(locks, fs::perms(0700));
    std::string why;
    auto live = test::cgroup_host_or(why, {.reap_stale = false, .lock_directory = locks});
    if (!live) CORDON_SKIP_OR_FAIL(why);
    const std::string suffix = std::to_string(::getpid());
    const fs::path base = live->directory().parent_path();
    const fs::path scope = base / ("cordon-test-idscope-" + suffix);
    const fs::path other = base / ("cordon-test-idother-" + suffix);
    made_cgroups made;
    ASSERT_TRUE(made.make(scope)) << std::strerror(errno);
    ASSERT_TRUE(made.make(other)) << std::strerror(errno);
    const std::string dead = "cordon-idtest-" + suffix;
    const std::string forged = "cordon-idforged-" + suffix;
    const std::string moved = "cordon-idmoved-" + suffix;
    const std::string foreign_uid = "cordon-iduid-" + suffix;
    const std::string unplaced = "cordon-idunplaced-" + suffix;
    for (const std::string& name : {dead, forged, moved, foreign_uid}) {
        ASSERT_EQ(::mkdir((scope / name).c_str(), 0755), 0) << name;
        ASSERT_EQ(::mkdir((scope / name / "run-1").c_str(), 0755), 0) << name;
    }
    ASSERT_EQ(::chown((scope / foreign_uid).c_str(), 65534, 65534), 0) << std::strerror(errno);
    const auto write_lock = [&](const std::string& name, const std::string& record) {
        std::ofstream(locks / (name + ".lock")) << record;
    };
    struct stat other_st {};
    ASSERT_EQ(::stat(other.c_str(), &other_st), 0);
    const std::string other_identity =
        std::to_string(other_st.st_dev) + ":" + std::to_string(other_st.st_ino);
    struct stat scope_st {};
    ASSERT_EQ(::stat(scope.c_str(), &scope_st), 0);
    const std::string scope_identity =
        std::to_string(scope_st.st_dev) + ":" + std::to_string(scope_st.st_ino);
    write_lock(dead, runtime::cgroup_reaper::lock_record({scope / dead}));
    // Names the cgroup `other` as the parent of a directory in `scope`: the directory of that
    // name in `other` (none) is the host's, never the one at the path.
    write_lock(forged, "cordon-cgroups 2\ncgroup " + other_identity + " " +
                           (scope / forged).string() + "\nend\n");
    // A cgroup nothing here is: its lock stays for a reaper that can place it.
    write_lock(unplaced, "cordon-cgroups 2\ncgroup 0:0 /nonexistent/" + unplaced + "\nend\n");
    // Seen at another path (another cgroup namespace's view): placed by the reaper's base that
    // is the recorded cgroup.
    write_lock(moved, "cordon-cgroups 2\ncgroup " + scope_identity + " /nonexistent/view/" + moved +
                          "\nend\n");
    write_lock(foreign_uid, runtime::cgroup_reaper::lock_record({scope / foreign_uid}));

    // The reaper: a child in a mount namespace of its own, with its own /tmp over the test's (so
    // the lock directory, perhaps under the test's /tmp, is opened before).
    const unique_fd lock_directory(::open(locks.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(lock_directory) << std::strerror(errno);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0) << std::strerror(errno);
    if (child == 0) {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", "/tmp", "tmpfs", 0, nullptr) != 0) {
            ::_exit(3);
        }
        runtime::cgroup_reaper::reap_stale_hosts(lock_directory.get(), {other, scope});
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    ASSERT_EQ(WEXITSTATUS(status), 0) << "the child could not make its mount namespace";

    EXPECT_FALSE(fs::exists(scope / dead)) << "a dead host was not reaped from another namespace";
    EXPECT_FALSE(fs::exists(locks / (dead + ".lock")));
    EXPECT_FALSE(fs::exists(scope / moved)) << "a host seen at another path was not placed";
    EXPECT_FALSE(fs::exists(locks / (moved + ".lock")));
    EXPECT_TRUE(fs::exists(scope / forged / "run-1")) << "a cgroup the record does not name went";
    EXPECT_FALSE(fs::exists(locks / (forged + ".lock"))) << "the recorded cgroup is gone";
    EXPECT_TRUE(fs::exists(locks / (unplaced + ".lock"))) << "an unplaced record's lock went";
    EXPECT_TRUE(fs::exists(scope / foreign_uid / "run-1")) << "another uid's cgroup was removed";
    EXPECT_TRUE(fs::exists(locks / (foreign_uid + ".lock")));
    EXPECT_TRUE(fs::exists(live->directory())) << "a live host was reaped";
}

// ---- removal never waits ------------------------------------------------------------------------

// A scope destroyed while its directory cannot be removed yet (here: a child cgroup holds it, as a
// dying process would for a moment) does not wait for it: the host removes it once it can, at
// its next scope, and never loses track of it.
TEST(CgroupScope, WhatADestroyedScopeCannotRemoveIsLeftToTheHost) {
    std::string why;
    auto host = test::cgroup_host_or(why);
    if (!host) CORDON_SKIP_OR_FAIL(why);
    run_limits limits;
    if (host->processes_unlimitable().empty()) limits.max_processes = 64;  // a v1 directory too
    auto made = host->new_scope(limits);
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(made))
        << std::get<std::string>(made);
    auto scope = std::move(std::get<std::unique_ptr<cgroup_scope>>(made));
    const scope_paths paths = scope->paths();
    const fs::path held = paths.unified / "held";
    ASSERT_EQ(::mkdir(held.c_str(), 0755), 0) << std::strerror(errno);
    EXPECT_FALSE(scope->remove()) << "a cgroup with a child cgroup cannot be removed";
    if (paths.pids && *paths.pids != paths.unified) {
        EXPECT_FALSE(fs::exists(*paths.pids)) << "the v1 directory went at once";
    }
    scope.reset();
    EXPECT_TRUE(fs::exists(paths.unified));
    EXPECT_EQ(host->leftovers(), 1u);

    ASSERT_EQ(::rmdir(held.c_str()), 0) << std::strerror(errno);
    auto next = host->new_scope({});
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(next));
    EXPECT_FALSE(fs::exists(paths.unified)) << "the host's next scope removes what was left";
    EXPECT_EQ(host->leftovers(), 0u);
}

// A scope that is removed by its run leaves nothing behind for the host.
TEST(CgroupScope, AnEmptyScopeIsRemovedAtOnceWithAllItsDirectories) {
    std::string why;
    auto host = test::cgroup_host_or(why);
    if (!host) CORDON_SKIP_OR_FAIL(why);
    run_limits limits;
    if (host->processes_unlimitable().empty()) limits.max_processes = 64;
    if (host->memory_unlimitable().empty()) limits.max_memory = 64 << 20;
    auto made = host->new_scope(limits);
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(made))
        << std::get<std::string>(made);
    auto scope = std::move(std::get<std::unique_ptr<cgroup_scope>>(made));
    const scope_paths paths = scope->paths();
    EXPECT_TRUE(scope->remove());
    EXPECT_TRUE(scope->remove()) << "removing again is a no-op";
    for (const auto& directory :
         {std::optional<fs::path>(paths.unified), paths.pids, paths.memory}) {
        if (directory) {
            EXPECT_FALSE(fs::exists(*directory)) << *directory;
        }
    }
    scope.reset();
    EXPECT_EQ(host->leftovers(), 0u);
}

// ---- joining: born in the v2 cgroup, each v1 hierarchy joined as the child's one thread ---------

// What the child of `request` says /proc/self/cgroup is; empty with the failure when it failed.
std::string cgroups_seen_by(spawn_request request, std::string& failure) {
    unique_fd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    pipe_pair out;
    if (!make_pipe(out)) {
        failure = "no pipe";
        return {};
    }
    request.argv = {"cat", "/proc/self/cgroup"};
    request.env = test::child_env();
    request.cwd = "/";
    request.fds = {{dev_null.get(), 0}, {out.write.get(), 1}, {out.write.get(), 2}};
    spawn_result result = spawn(request);
    out.write.reset();
    if (const auto* error = std::get_if<spawn_error>(&result)) {
        failure = describe(*error, "cat");
        return {};
    }
    std::string text;
    char buf[4096];
    for (ssize_t got; (got = ::read(out.read.get(), buf, sizeof buf)) != 0;) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) break;
        text.append(buf, static_cast<std::size_t>(got));
    }
    int status = 0;
    while (::waitpid(std::get<spawned_child>(result).pid, &status, 0) < 0 && errno == EINTR) {
    }
    return text;
}

// The cgroup the line of /proc/self/cgroup for `hierarchy` ("" for v2, else a v1 controller)
// names, relative to its mount.
std::string cgroup_of(const std::string& text, const std::string& hierarchy) {
    for (const std::string& line : test::split_lines(text)) {
        const auto first = line.find(':');
        const auto second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        const bool match = hierarchy.empty() ? line.substr(0, first) == "0" && controllers.empty()
                                             : controllers == hierarchy;
        if (match) return line.substr(second + 1);
    }
    return {};
}

bool names(const fs::path& directory, const std::string& relative) {
    return !relative.empty() && relative != "/" && directory.string().ends_with(relative);
}

class CgroupJoin : public ::testing::TestWithParam<spawn_method> {
protected:
    void SetUp() override {
        CORDON_SKIP_VFORK_UNDER_TSAN(GetParam());
        std::string why;
        host_ = test::cgroup_host_or(why);
        if (!host_) CORDON_SKIP_OR_FAIL(why);
        run_limits limits;
        if (host_->processes_unlimitable().empty()) limits.max_processes = 64;
        if (host_->memory_unlimitable().empty()) limits.max_memory = 256 << 20;
        auto made = host_->new_scope(limits);
        ASSERT_TRUE(std::holds_alternative<std::unique_ptr<cgroup_scope>>(made))
            << std::get<std::string>(made);
        scope_ = std::move(std::get<std::unique_ptr<cgroup_scope>>(made));
    }
    spawn_request request() const {
        spawn_request out;
        out.method = GetParam();
        out.cgroup_join_fds = scope_->join_fds();
        out.cgroup_birth_fd = scope_->birth_fd();
        return out;
    }
    std::shared_ptr<cgroup_host> host_;
    std::unique_ptr<cgroup_scope> scope_;
};

INSTANTIATE_TEST_SUITE_P(Methods, CgroupJoin,
                         ::testing::Values(spawn_method::vfork, spawn_method::fork),
                         [](const auto& param_info) {
                             return test::method_name(param_info.param);
                         });

// Every hierarchy the run's limits use holds the child when it execs, however it got there.
TEST_P(CgroupJoin, TheChildExecsInTheRunsCgroupOfEveryHierarchy) {
    std::string failure;
    const std::string seen = cgroups_seen_by(request(), failure);
    ASSERT_TRUE(failure.empty()) << failure;
    const scope_paths& paths = scope_->paths();
    EXPECT_TRUE(names(paths.unified, cgroup_of(seen, ""))) << seen;
    if (paths.pids && *paths.pids != paths.unified) {
        EXPECT_TRUE(names(*paths.pids, cgroup_of(seen, "pids"))) << seen;
    }
    if (paths.memory && *paths.memory != paths.unified) {
        EXPECT_TRUE(names(*paths.memory, cgroup_of(seen, "memory"))) << seen;
    }
}

// Born in the v2 cgroup (clone3), the child does not join it again: a join that would fail
// (a descriptor not open for writing) is never made. A forked child, which cannot be born there,
// makes it and fails at the cgroup stage.
TEST_P(CgroupJoin, AChildBornInItsCgroupDoesNotJoinIt) {
    unique_fd read_only(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    spawn_request given = request();
    given.cgroup_join_fds.front() = read_only.get();
    std::string failure;
    const std::string seen = cgroups_seen_by(given, failure);
    if (GetParam() == spawn_method::fork) {
        EXPECT_NE(failure.find("cgroup"), std::string::npos) << failure << seen;
        return;
    }
    ASSERT_TRUE(failure.empty()) << failure << " (this kernel has clone3's CLONE_INTO_CGROUP)";
    EXPECT_TRUE(names(scope_->paths().unified, cgroup_of(seen, ""))) << seen;
}

// A directory that is no cgroup makes clone3 fail: the child is cloned as before and joins
// through cgroup.procs.
TEST_P(CgroupJoin, WhereTheChildCannotBeBornInItsCgroupItJoinsIt) {
    unique_fd not_a_cgroup(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    spawn_request given = request();
    given.cgroup_birth_fd = not_a_cgroup.get();
    std::string failure;
    const std::string seen = cgroups_seen_by(given, failure);
    ASSERT_TRUE(failure.empty()) << failure;
    EXPECT_TRUE(names(scope_->paths().unified, cgroup_of(seen, ""))) << seen;
}

}  // namespace
}  // namespace cordon::runtime
