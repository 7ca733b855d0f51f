// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What cordon leaves behind: nothing a reader will not ask for, and nothing for good when it is
// killed outright. A run whose output all reached cordon's reader leaves no spill file (--json,
// whose record names the files, keeps them, under the budget a later cordon enforces:
// runtime/output_collector.hpp); a probe's workspace and a private /tmp left by a cordon killed
// outright are removed by any later cordon, one that takes a cached verdict too
// (sandbox/leftovers.hpp), however deep the tree in them (base/tree_removal.hpp); and a killed
// cordon's cgroups, in every hierarchy, by a later cordon in another cgroup scope
// (runtime/cgroup_reaper.hpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/mountinfo.hpp"
#include "base/small_file.hpp"
#include "runtime/cgroup.hpp"
#include "runtime/cgroup_files.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"
#include "support/spawned_process.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

// The spill files cordon process `pid` made under /var/tmp: "<pid>-<n>-<random>-<stream>.log".
std::vector<fs::path> spill_files_of(const std::string& pid) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& directory : fs::directory_iterator("/var/tmp", ec)) {
        if (!directory.path().filename().string().starts_with("cordon-spill-")) continue;
        std::error_code inner;
        for (const auto& file : fs::directory_iterator(directory.path(), inner)) {
            if (file.path().filename().string().starts_with(pid + "-")) out.push_back(file.path());
        }
    }
    return out;
}

// The command prints cordon's pid (its parent, unconfined), then more than the 64,000-byte tail
// on both streams: both spill.
const std::string spilling = "echo $PPID; seq 1 100000; seq 1 100000 >&2";

TEST(Leftovers, ARunWhoseOutputAllArrivedLeavesNoSpillFile) {
    temp_dir workspace{"/var/tmp"};
    const cli_result r =
        run_cordon({"run", "--mode", "danger-full-access", "-c", spilling}, workspace.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string pid = r.out.substr(0, r.out.find('\n'));
    ASSERT_FALSE(pid.empty());
    EXPECT_TRUE(spill_files_of(pid).empty());
    EXPECT_EQ(r.err.find("not shown"), std::string::npos) << r.err;

    // --json names them: they stay for whoever reads the record.
    runtime::process_spec spec;
    spec.argv = {cordon_path().string(), "run", "--json", "--mode",
                 "danger-full-access",   "-c",  spilling};
    spec.env = runtime::build_environment(environ, {});
    spec.cwd = workspace.path();
    spec.timeout = std::chrono::seconds(60);
    spec.stdout_limits.tail_bytes = 1 << 20;  // the whole record
    const runtime::process_outcome json = runtime::run_process(std::move(spec));
    ASSERT_EQ(json.exit_code, 0) << json.stderr_output.text;
    const nlohmann::json record = nlohmann::json::parse(json.stdout_output.text);
    const std::string kept = record["stdout"]["spillPath"].get<std::string>();
    EXPECT_TRUE(fs::exists(kept)) << kept;
    EXPECT_TRUE(fs::exists(record["stderr"]["spillPath"].get<std::string>()));
    fs::remove_all(fs::path(kept).parent_path());
}

// A probe killed outright leaves its (empty, unlocked) workspace; the next probe removes it, and
// one that a live process holds (its lock taken) stays.
TEST(Leftovers, TheNextProbeRemovesAProbeWorkspaceWhoseProbeIsGone) {
    std::string dead = "/var/tmp/cordon-probe-XXXXXX";
    ASSERT_NE(::mkdtemp(dead.data()), nullptr);
    std::string held = "/var/tmp/cordon-probe-XXXXXX";
    ASSERT_NE(::mkdtemp(held.data()), nullptr);
    const unique_fd lock(::open(held.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(lock);
    ASSERT_EQ(::flock(lock.get(), LOCK_EX | LOCK_NB), 0);
    const cli_result r = run_cordon({"probe", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(fs::exists(dead)) << dead;
    EXPECT_TRUE(fs::exists(held)) << "a live process's";
    fs::remove(held);
}

// A mount namespace whose /var/tmp and /tmp are directories of the test's own and whose /dev/shm is
// empty (the rest is the host's): whatever goes from them, the cordons started in it removed, not
// the cordons of tests running beside this one, which sweep the host's; and the verdict they cache
// (in /dev/shm) is theirs alone, not replaced by a cordon of another namespace.
class private_host {
public:
    // /tmp first: both sources are under the host's /var/tmp, which the second bind covers. The
    // directory of the test programs (CI builds under /var/tmp) is bound into each first, and the
    // covering bind takes it along: cordon is started from it.
    private_host()
        : holder_({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                   keep_programs("/tmp", tmp_.path()) + keep_programs("/var/tmp", var_tmp_.path()) +
                       "mount --rbind \"$1\" /tmp && mount --rbind \"$0\" /var/tmp && "
                       "mount -t tmpfs -o mode=1777 tmpfs /dev/shm && echo ready && exec sleep 600",
                   var_tmp_.path().string(), tmp_.path().string()},
                  {}) {
        for (const temp_dir* dir : {&var_tmp_, &tmp_})
            fs::permissions(dir->path(), static_cast<fs::perms>(01777));
        ready_ = holder_.wait_for_output("ready\n");
    }
    [[nodiscard]] bool ready() const { return ready_; }
    // Where the namespace's /var/tmp and /tmp are, seen from the test.
    [[nodiscard]] const fs::path& var_tmp() const { return var_tmp_.path(); }
    [[nodiscard]] const fs::path& tmp() const { return tmp_.path(); }
    // The namespace's /dev/shm, seen from the test (through the holder's root).
    [[nodiscard]] fs::path dev_shm() const {
        return "/proc/" + std::to_string(holder_.pid()) + "/root/dev/shm";
    }
    // `argv` started in the namespace (nsenter execs it: the process is argv's).
    [[nodiscard]] std::vector<std::string> enter(const std::vector<std::string>& argv) const {
        std::vector<std::string> out{
            "/usr/bin/nsenter", "--mount=/proc/" + std::to_string(holder_.pid()) + "/ns/mnt", "--"};
        out.insert(out.end(), argv.begin(), argv.end());
        return out;
    }
    [[nodiscard]] std::vector<std::string> cordon(const std::vector<std::string>& args) const {
        std::vector<std::string> argv{cordon_path().string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return enter(argv);
    }

private:
    // The shell words that bind the test programs' directory under `covered` into `own`.
    static std::string keep_programs(const fs::path& covered, const fs::path& own) {
        const std::string programs = programs_under(covered);
        if (programs.empty()) return {};
        fs::create_directories(own / programs);
        return "mount --bind '" + (covered / programs).string() + "' '" +
               (own / programs).string() + "' && ";
    }

    temp_dir var_tmp_{"/var/tmp"};
    temp_dir tmp_{"/var/tmp"};
    spawned_process holder_;
    bool ready_ = false;
};

// ---- a private /tmp deeper than the descriptor limit ------------------------------------------

// The command's part: a chain of directories `depth` levels deep in its private /tmp, made by one
// mkdir (it keeps no descriptor per level), then its /tmp's name.
std::string deep_chain_command(int depth) {
    std::string chain;
    for (int level = 0; level < depth; ++level)
        chain += "d/";
    return "cd \"$TMPDIR\" && mkdir -p " + chain + " && touch " + chain + "bottom && echo built " +
           "\"$TMPDIR\"";
}

// Runs `cordon run ...` in `workspace` under a descriptor limit (soft and hard) of 64: the chain is
// several times deeper. The Landlock rung gives the run a directory of its own as /tmp.
std::vector<std::string> under_low_descriptor_limit(const fs::path& workspace,
                                                    const std::string& command) {
    return {"/bin/sh",
            "-c",
            "ulimit -n 64 && exec \"$0\" run --mode workspace-write --backend landlock "
            "--accept-partial --tmp private --workspace \"$1\" -c \"$2\"",
            cordon_path().string(),
            workspace.string(),
            command};
}

constexpr int chain_depth = 320;

std::string tmpdir_from(const std::string& out) {
    std::istringstream said(out);
    std::string word;
    std::string tmpdir;
    said >> word >> tmpdir;
    return word == "built" ? tmpdir : std::string();
}

// The run's own end removes it: the walk holds one directory open at a time
// (std::filesystem::remove_all held one per level, failed with EMFILE, and left it all).
TEST(Leftovers, APrivateTmpDeeperThanTheDescriptorLimitGoesWithItsRun) {
    temp_dir workspace{"/var/tmp"};
    const cli_result r =
        run_program(under_low_descriptor_limit(workspace.path(), deep_chain_command(chain_depth)),
                    workspace.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string tmpdir = tmpdir_from(r.out);
    ASSERT_EQ(tmpdir.rfind("/tmp/cordon-tmp-", 0), 0U) << r.out;
    EXPECT_FALSE(fs::exists(tmpdir)) << "the run's private /tmp was left";
}

// The same tree, its cordon killed outright: the next cordon removes it, one that runs under bwrap
// with a cached verdict (and so makes no private /tmp and probes nothing) too. Both run with a /tmp
// of their own, so that no cordon of a test beside this one sweeps it first.
TEST(Leftovers, APrivateTmpDeeperThanTheDescriptorLimitOfAKilledCordonGoesWithTheNext) {
    const private_host host;
    ASSERT_TRUE(host.ready()) << "no mount namespace of the test's own";
    fs::create_directory(host.var_tmp() / "workspace");
    spawned_process cordon(
        host.enter(under_low_descriptor_limit(
            "/var/tmp/workspace", deep_chain_command(chain_depth) + " && exec sleep 60")),
        {});
    ASSERT_TRUE(cordon.wait_for_output("\n")) << cordon.out() << cordon.err();
    const std::string tmpdir = tmpdir_from(cordon.out());
    ASSERT_EQ(tmpdir.rfind("/tmp/cordon-tmp-", 0), 0U) << cordon.out();
    const fs::path left = host.tmp() / fs::path(tmpdir).filename();
    cordon.kill(SIGKILL);
    (void)cordon.wait();
    ASSERT_TRUE(fs::exists(left)) << "nothing left to sweep: the test proves nothing";

    spawned_process next(host.cordon({"run", "--mode", "read-only", "--", "true"}), {});
    EXPECT_EQ(next.wait(), 0) << next.err();
    EXPECT_FALSE(fs::exists(left)) << "the killed cordon's private /tmp was left";
}

// ---- probe workspaces of killed cordons ---------------------------------------------------------

std::set<fs::path> probe_workspaces(const fs::path& var_tmp) {
    std::set<fs::path> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(var_tmp, ec)) {
        if (entry.path().filename().string().starts_with("cordon-probe-")) out.insert(entry.path());
    }
    return out;
}

// `cordon probe` (which always probes) killed while its workspace exists: that workspace, left.
// Caught by polling the directory as the probe runs; nullopt when no try caught one.
std::optional<fs::path> workspace_of_a_killed_probe(const private_host& host) {
    for (int attempt = 0; attempt < 20; ++attempt) {
        const std::set<fs::path> before = probe_workspaces(host.var_tmp());
        spawned_process probe(host.cordon({"probe"}), {});
        std::optional<fs::path> caught;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!caught && std::chrono::steady_clock::now() < deadline) {
            for (const fs::path& made : probe_workspaces(host.var_tmp())) {
                if (!before.contains(made)) caught = made;
            }
            if (!caught) ::sched_yield();
        }
        probe.kill(SIGKILL);
        (void)probe.wait();
        if (caught && fs::exists(*caught)) return caught;
    }
    return std::nullopt;
}

// Probe workspaces of cordons that are gone, the workspace of one killed while probing (the real
// path) and one a runner left something in, are removed by the next cordon even when it takes a
// cached verdict and probes nothing (the sweep used to run only when a cordon probed); one a live
// process holds stays, and a symlink left in one is removed, never followed. The cordons run with
// a /var/tmp, /tmp and /dev/shm of their own (private_host), so that only the cordon under test
// can have removed anything and its verdict is the one cached just before.
TEST(Leftovers, ProbeWorkspacesOfKilledCordonsGoWithALaterCordonThatProbesNothing) {
    const private_host host;
    ASSERT_TRUE(host.ready()) << "no mount namespace of the test's own";
    // In the namespace's /tmp, so that a followed link would reach it.
    const fs::path outside = host.tmp() / "outside";
    fs::create_directory(outside);
    write_file(outside / "kept", "outside");
    // The verdict of this namespace, cached (its key names the mount namespace).
    {
        spawned_process primer(host.cordon({"run", "--mode", "read-only", "--", "true"}), {});
        ASSERT_EQ(primer.wait(), 0) << primer.err();
    }
    const std::optional<fs::path> killed = workspace_of_a_killed_probe(host);
    ASSERT_TRUE(killed) << "no try caught a probe's workspace";
    // Never locked: one whose cordon is gone. Made under another name and renamed into place
    // whole, as a sweeper may come at any moment.
    std::string building = (host.var_tmp() / "building-XXXXXX").string();
    ASSERT_NE(::mkdtemp(building.data()), nullptr) << std::strerror(errno);
    fs::create_directories(fs::path(building) / "left" / "by" / "a" / "runner");
    fs::create_directory_symlink("/tmp/outside", fs::path(building) / "left" / "link");
    const fs::path dead = host.var_tmp() / "cordon-probe-deadtest";
    ASSERT_EQ(::rename(building.c_str(), dead.c_str()), 0) << std::strerror(errno);
    const fs::path held = host.var_tmp() / "cordon-probe-heldtest";
    fs::create_directory(held);
    const unique_fd lock(::open(held.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(lock);
    ASSERT_EQ(::flock(lock.get(), LOCK_EX | LOCK_NB), 0);

    spawned_process later(host.cordon({"--verbose", "run", "--mode", "read-only", "--", "true"}),
                          {});
    EXPECT_EQ(later.wait(), 0) << later.err();
    EXPECT_NE(later.err().find("sandbox verdict: cached"), std::string::npos)
        << "the later cordon probed: the cached case was not tried\n"
        << later.err();
    EXPECT_FALSE(fs::exists(*killed)) << *killed;
    EXPECT_FALSE(fs::exists(dead)) << dead;
    EXPECT_TRUE(fs::exists(held)) << "a live process's";
    EXPECT_EQ(read_file(outside / "kept"), "outside");
    fs::remove(held);
}

// ---- a killed cordon's cgroups, from another cgroup scope ---------------------------------------

// This process's own cgroup directory in each hierarchy cordon uses (the v2 tree; the v1 pids and
// memory ones where mounted), as cordon finds them.
std::vector<fs::path> own_cgroup_directories() {
    auto mounts = base::read_mountinfo();
    base::read_result cgroups = base::read_small_file("/proc/self/cgroup");
    if (!std::holds_alternative<std::vector<base::mount_entry>>(mounts) ||
        !std::holds_alternative<std::string>(cgroups)) {
        return {};
    }
    const runtime::cgroup_files::cgroup_view view{
        std::get<std::vector<base::mount_entry>>(std::move(mounts)),
        std::get<std::string>(std::move(cgroups))};
    std::vector<fs::path> out;
    for (const char* controller : {"", "pids", "memory"}) {
        auto own = runtime::cgroup_files::own_directory(view, controller);
        if (auto* directory = std::get_if<fs::path>(&own)) {
            if (std::find(out.begin(), out.end(), *directory) == out.end()) {
                out.push_back(*directory);
            }
        }
    }
    return out;
}

// A cgroup scope of the test's own under every hierarchy, removed (once empty) at scope end.
class test_scope {
public:
    test_scope(const std::vector<fs::path>& bases, const std::string& name) {
        // In every hierarchy or in none.
        for (const fs::path& base : bases) {
            if (::mkdir((base / name).c_str(), 0755) != 0) return;
            directories_.push_back(base / name);
        }
        made_ = true;
    }
    ~test_scope() {
        for (const fs::path& directory : directories_) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (::rmdir(directory.c_str()) != 0 && errno == EBUSY &&
                   std::chrono::steady_clock::now() < deadline) {
                ::sched_yield();
            }
        }
    }
    test_scope(const test_scope&) = delete;
    test_scope& operator=(const test_scope&) = delete;
    [[nodiscard]] bool made() const { return made_; }
    [[nodiscard]] const std::vector<fs::path>& directories() const { return directories_; }
    // `sh -c` words that put the shell into this scope in every hierarchy, then exec `argv`.
    [[nodiscard]] std::vector<std::string> exec_inside(const std::vector<std::string>& argv) const {
        std::string script;
        for (const fs::path& directory : directories_)
            script += "echo $$ > " + (directory / "cgroup.procs").string() + " && ";
        script += "exec \"$@\"";
        std::vector<std::string> out{"/bin/sh", "-c", script, "sh"};
        out.insert(out.end(), argv.begin(), argv.end());
        return out;
    }

private:
    std::vector<fs::path> directories_;
    bool made_ = false;
};

// The directories named `cordon-<pid>-*` under `scope`'s directories, and the lock files of that
// pid in `dev_shm`: what the cordon of `pid` made.
std::vector<fs::path> made_by(pid_t pid, const test_scope& scope, const fs::path& dev_shm) {
    const std::string prefix = "cordon-" + std::to_string(pid) + "-";
    std::vector<fs::path> out;
    std::vector<fs::path> places = scope.directories();
    places.push_back(dev_shm / ("cordon-cgroup-locks-" + std::to_string(::geteuid())));
    for (const fs::path& place : places) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(place, ec)) {
            if (entry.path().filename().string().starts_with(prefix)) out.push_back(entry.path());
        }
    }
    return out;
}

// A cordon killed outright leaves its cgroups in every hierarchy (the v2 tree and, on a hybrid
// host like this one, the v1 memory and pids hierarchies its limits live in) and its lock. A
// cordon started in another cgroup scope, whose own bases hold none of them, ends and removes them
// all, and the lock last: its reaper used to look under its own bases only, unlink the lock
// anyway, and orphan the v1 memory cgroup for good. Both run with a /dev/shm (and so a lock
// directory) of their own, so that no cordon of a test beside this one reaps the killed one first.
TEST(Leftovers, AKilledCordonsCgroupsGoInEveryHierarchyWithACordonInAnotherScope) {
    std::string why;
    if (!cgroup_host_or(why)) CORDON_SKIP_OR_FAIL(why);
    const private_host host;
    ASSERT_TRUE(host.ready()) << "no mount namespace of the test's own";
    const std::vector<fs::path> bases = own_cgroup_directories();
    ASSERT_FALSE(bases.empty());
    const std::string suffix = std::to_string(::getpid());
    const test_scope killed_in(bases, "cordon-test-scope-killed-" + suffix);
    const test_scope next_in(bases, "cordon-test-scope-next-" + suffix);
    if (!killed_in.made() || !next_in.made()) {
        CORDON_SKIP_OR_FAIL("cannot make cgroup scopes of the test's own under " +
                            bases.front().string());
    }
    // A memory limit (the default, said anyway): on a hybrid host it lives in v1's hierarchy.
    spawned_process cordon(
        host.enter(killed_in.exec_inside(
            {cordon_path().string(), "run", "--mode", "danger-full-access", "--max-memory", "256M",
             "--max-processes", "64", "-c", "echo started && exec sleep 60"})),
        {});
    ASSERT_TRUE(cordon.wait_for_output("started\n")) << cordon.out() << cordon.err();
    const std::vector<fs::path> left = made_by(cordon.pid(), killed_in, host.dev_shm());
    // Its host in each hierarchy, and its lock.
    ASSERT_EQ(left.size(), bases.size() + 1) << ::testing::PrintToString(left);
    cordon.kill(SIGKILL);
    (void)cordon.wait();
    for (const fs::path& path : left)
        ASSERT_TRUE(fs::exists(path)) << path << ": nothing left to reap: the test proves nothing";

    spawned_process next(host.enter(next_in.exec_inside({cordon_path().string(), "run", "--mode",
                                                         "danger-full-access", "--", "true"})),
                         {});
    EXPECT_EQ(next.wait(), 0) << next.err();
    for (const fs::path& path : left)
        EXPECT_FALSE(fs::exists(path)) << path << " was left";
}

// The same from another mount namespace: a cordon killed in one of its own (a service restarted
// with a new private /tmp; a container sharing /dev/shm) is reaped by a cordon outside it. Its
// lock record used to be honoured only from the namespaces it was written in, so it and its
// cgroups stayed for good. The two namespaces share a /dev/shm of the test's own (private_host).
TEST(Leftovers, AKilledCordonsCgroupsGoWithACordonOfAnotherMountNamespace) {
    std::string why;
    if (!cgroup_host_or(why)) CORDON_SKIP_OR_FAIL(why);
    const private_host host;
    ASSERT_TRUE(host.ready()) << "no mount namespace of the test's own";
    spawned_process cordon(
        host.enter({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                    "mount -t tmpfs tmpfs /tmp && exec \"$0\" run --mode danger-full-access "
                    "--max-memory 256M -c 'echo started && exec sleep 60'",
                    cordon_path().string()}),
        {});
    ASSERT_TRUE(cordon.wait_for_output("started\n")) << cordon.out() << cordon.err();
    const fs::path locks = host.dev_shm() / ("cordon-cgroup-locks-" + std::to_string(::geteuid()));
    const std::string prefix = "cordon-" + std::to_string(cordon.pid()) + "-";
    fs::path lock;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(locks, ec)) {
        if (entry.path().filename().string().starts_with(prefix)) lock = entry.path();
    }
    ASSERT_FALSE(lock.empty()) << "no lock of the cordon in " << locks;
    // Its cgroups, as its lock records them ("cgroup <parent's identity> <absolute path>").
    std::vector<fs::path> cgroups;
    std::istringstream record(read_file(lock));
    for (std::string line; std::getline(record, line);) {
        if (!line.starts_with("cgroup ")) continue;
        const std::string path = line.substr(std::min(line.find('/'), line.size()));
        if (fs::exists(path)) cgroups.emplace_back(path);
    }
    ASSERT_FALSE(cgroups.empty()) << "nothing left to reap: the test proves nothing";
    cordon.kill(SIGKILL);
    (void)cordon.wait();

    spawned_process next(host.cordon({"run", "--mode", "danger-full-access", "--", "true"}), {});
    EXPECT_EQ(next.wait(), 0) << next.err();
    for (const fs::path& path : cgroups)
        EXPECT_FALSE(fs::exists(path)) << path << " was left";
    EXPECT_FALSE(fs::exists(lock)) << "its lock was left";
}

}  // namespace
}  // namespace cordon::test
