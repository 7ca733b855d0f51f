// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The cgroup host's liveness lock and the run limits, against the real cgroup hierarchies of this
// host (root, or a delegated subtree; skipped or failed as CI requires otherwise).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "runtime/cgroup.hpp"
#include "runtime/cgroup_reaper.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

namespace fs = std::filesystem;

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
    ASSERT_EQ(::mkdir((base / dead).c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((base / dead / "run-1").c_str(), 0755), 0);
    for (const std::string& file : {dead + ".lock", elsewhere + ".lock", starting}) {
        std::ofstream(locks / file) << "";
    }

    auto second = test::cgroup_host_or(why, {.reap_stale = true, .lock_directory = locks});
    ASSERT_TRUE(second) << why;
    EXPECT_FALSE(fs::exists(base / dead)) << "the dead host's cgroup was left";
    EXPECT_FALSE(fs::exists(locks / (dead + ".lock")));
    EXPECT_TRUE(fs::exists(locks / (elsewhere + ".lock")))
        << "the lock of a host whose cgroups are elsewhere was removed";
    EXPECT_TRUE(fs::exists(locks / starting));
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
    ASSERT_EQ(::mkdir(scope.c_str(), 0755), 0) << std::strerror(errno);
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

    ::rmdir((scope / foreign).c_str());
    ::rmdir(scope.c_str());
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

}  // namespace
}  // namespace cordon::runtime
