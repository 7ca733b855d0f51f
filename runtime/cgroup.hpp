// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Run containment with cgroups: every run gets its own cgroup, the child joins it before exec,
// and `cgroup.kill` (cgroup v2, Linux 5.14) ends every process in it at once. Membership is
// inherited and cannot be left without write access to another cgroup (confined commands have
// none, and clone3's CLONE_INTO_CGROUP is refused by the launcher's filter), so processes that
// call setsid() or double-fork are still found. This is how cordon ends whole trees under the
// Landlock launcher and danger-full-access, where no pid namespace exists; under bwrap the pid
// namespace does the same and the cgroup is a second net.
//
// The run's cgroup also carries its limits: `pids.max` (a fork bomb stops there instead of at the
// host's pid_max) and `memory.max` (by default half the host's memory, limits.hpp). They are set
// in the cgroup v2 tree when its controllers are delegated to cordon, and otherwise in the cgroup
// v1 `pids` and `memory` hierarchies of a hybrid host, which the child joins as well. An OOM at
// the memory limit ends the whole run and only the run: `memory.oom.group` in v2; in v1, which
// has no such file, the scope hands over an eventfd the kernel signals on an OOM
// (cgroup.event_control on memory.oom_control), and the run's loop then kills the rest.
//
// It needs a writable cgroup v2 hierarchy at the process's own cgroup (root, or a delegated
// subtree such as a systemd unit with Delegate=yes). Without one, cgroup_host::create() says why
// and the executor falls back to signalling the process group alone; `cordon probe` reports it.
//
// A cordon killed outright cannot end its runs itself: its watchdog does (cgroup_watchdog.hpp),
// as soon as it is gone. As a second net, each host holds an exclusive flock(2) on a lock
// file for its lifetime, which records the host's cgroups in every hierarchy, and the next host
// to start, in whatever cgroup scope, ends what is left in the cgroups whose lock is free. The lock
// files live under /dev/shm, which no confined command can open (Landlock grants /dev node by node;
// bwrap mounts a private /dev), so a leftover process cannot hold a dead cordon's lock to keep
// itself alive.
//
// An executor takes the process's host (for_this_process): one cgroup `cordon-<pid>-<random>`
// and one watchdog per process, however many executors and runs it makes, removed when the
// process exits. create() makes a host of its own (cordon probe's, which reaps nothing).
//
// Removal never waits: a scope's directories are removed once the kernel has freed the run's
// processes, by the run's own timer (process.cpp) or, for a scope destroyed before that, by the
// host at its next new_scope() or at its end. The lock files and the reaping of dead hosts are
// cgroup_reaper.hpp's; what is read and written in cgroupfs is cgroup_files.hpp's.
//
// Thread safety: new_scope() may be called from any thread; a scope belongs to one run.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cordon/limits.hpp"
#include "runtime/cgroup_watchdog.hpp"
#include "runtime/unique_fd.hpp"

namespace cordon::runtime {

class cgroup_scope;

struct cgroup_host_options {
    // End the trees of cordons that are gone before creating this host (cordon probe, which
    // only reports, passes false).
    bool reap_stale = true;
    // Where the liveness locks live; empty: /dev/shm/cordon-cgroup-locks-<euid>. Trusted only
    // when it is a directory of this uid that nobody else may enter.
    std::filesystem::path lock_directory;
};

// What a run's socket buffers may hold under cgroup v1 (memory.kmem.tcp.limit_in_bytes): its
// memory limit, or a quarter of the host's net.ipv4.tcp_mem threshold when that is lower.
[[nodiscard]] std::uint64_t socket_memory_limit(std::uint64_t max_memory);

class cgroup_host : public std::enable_shared_from_this<cgroup_host> {
public:
    // Finds the cgroup v2 mount and this process's cgroup, and creates a private parent
    // `cordon-<pid>-<random>` under it; the reason when any step is impossible.
    [[nodiscard]] static std::variant<std::shared_ptr<cgroup_host>, std::string> create(
        cgroup_host_options options = {});
    // The host every executor of this process shares, created by the first call with the default
    // options and ended when the process exits: a run pays for no host of its own (the mount
    // table read, the reaping of dead cordons' hosts, the lock, the cgroup, the watchdog's fork).
    // A failure is not kept: the next call tries again. In a child forked without exec, the
    // host it inherited is its parent's: the child closes its copies of the host's descriptors
    // at once (pthread_atfork), never ends that host, and gets a host of its own at its first
    // call. A call made while the process exits gets a host of the caller's own (create()).
    [[nodiscard]] static std::variant<std::shared_ptr<cgroup_host>, std::string> for_this_process();
    ~cgroup_host();
    cgroup_host(const cgroup_host&) = delete;
    cgroup_host& operator=(const cgroup_host&) = delete;

    // A fresh cgroup for one run with `limits` applied, or why there is none. A limit this host
    // cannot set is an error, never silently dropped: check can_limit() first to degrade.
    [[nodiscard]] std::variant<std::unique_ptr<cgroup_scope>, std::string> new_scope(
        const run_limits& limits);

    // Which limits this host can set; the reason when it cannot ("" when it can).
    [[nodiscard]] const std::string& processes_unlimitable() const noexcept { return no_pids_; }
    [[nodiscard]] const std::string& memory_unlimitable() const noexcept { return no_memory_; }
    // Why the next cordon could not end this host's runs if it were killed ("" when it could).
    [[nodiscard]] const std::string& unreapable() const noexcept { return no_lock_; }

    [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }

    // How many directories of ended scopes are still waiting to be removed, after trying once
    // more. They are tried at every new_scope() and when the host ends.
    [[nodiscard]] std::size_t leftovers();

    // In a child forked without exec (async-signal-safe): the host is the parent's. The child's
    // copies of the lock and the watchdog's pipe are closed, so that they answer for the parent
    // alone, and no watchdog is started for it from here.
    void forget_after_fork() noexcept;
    // Logs nothing from now on: a host ended as the process exits, when the program's log sink
    // may already be gone.
    void silence() noexcept { quiet_ = true; }

private:
    friend class cgroup_scope;
    cgroup_host() = default;
    void leave(std::vector<std::filesystem::path> directories);
    void remove_leftovers();
    // Starts the watchdog again when it is gone (a command that could signal it killed it): the
    // runs of a long-lived process stay tied to its life.
    void keep_watchdog();

    std::filesystem::path directory_;  // cgroup v2
    std::string name_;
    unique_fd lock_;  // flock(LOCK_EX) held for the host's lifetime: proof that it is alive
    unique_fd lock_directory_;
    std::mutex watchdog_mutex_;
    cgroup_watchdog watchdog_;            // ends every run of this host when this process dies
    bool no_watchdog_ = false;            // none could start with the host (cgroup_watchdog.hpp)
    std::atomic<bool> inherited_{false};  // a forked parent's (forget_after_fork)
    std::atomic<bool> quiet_{false};
    bool pids_v2_ = false;
    bool memory_v2_ = false;
    std::optional<std::filesystem::path> pids_v1_;    // this host's directory there
    std::optional<std::filesystem::path> memory_v1_;  // this host's directory there
    std::string no_pids_;
    std::string no_memory_;
    std::string no_lock_;
    std::atomic<unsigned long> counter_{0};
    std::mutex leftovers_mutex_;
    std::vector<std::filesystem::path> leftovers_;
};

// Where one run's cgroup lives: always in the v2 tree, and in a v1 hierarchy for a limit that
// the v2 tree cannot carry on this host.
struct scope_paths {
    std::filesystem::path unified;
    std::optional<std::filesystem::path> pids;    // where pids.max is set, when limited
    std::optional<std::filesystem::path> memory;  // where the memory limit is set, when limited
    bool memory_v1 = false;                       // memory.limit_in_bytes rather than memory.max
    std::uint64_t socket_bound = 0;  // what the run's sockets may hold (0: not watched)
};

class cgroup_scope {
public:
    // `joins`: what the child writes to join the run's cgroups (join_fds); `birth`: the v2
    // directory (birth_fd).
    cgroup_scope(std::shared_ptr<cgroup_host> host, scope_paths paths, std::vector<unique_fd> joins,
                 unique_fd birth = {}, unique_fd oom_notice = {});
    // Kills what is left and removes the directories it can at once; the rest, still busy while
    // the kernel frees the killed processes, is left to the host (never waited for here).
    ~cgroup_scope();
    cgroup_scope(const cgroup_scope&) = delete;
    cgroup_scope& operator=(const cgroup_scope&) = delete;

    // The open files the child writes `0` (itself) to before exec: the v2 cgroup's cgroup.procs
    // first, then each v1 hierarchy's `tasks`: the child has one thread, so moving it moves the
    // whole process, and a kernel that moves a single thread without its global threadgroup lock
    // (as 6.18 here does; older ones take it for both) spares the grace period that lock's write
    // waits (docs/execution.md, "Joining the run's cgroups").
    [[nodiscard]] std::vector<int> join_fds() const;
    // The v2 cgroup's directory, for the child to be born in (clone3's CLONE_INTO_CGROUP), which
    // spares it the first join.
    [[nodiscard]] int birth_fd() const noexcept { return birth_.get(); }
    // An eventfd that becomes readable when the OOM killer acts in the run's v1 memory cgroup
    // (once: the caller owns it). Empty in v2, where memory.oom.group makes the kernel end the
    // whole run itself, and without a memory limit.
    [[nodiscard]] unique_fd take_oom_notice() noexcept { return std::move(oom_notice_); }

    // Sends `signal` to every member but `except` (a snapshot: used for the polite phase).
    void signal_all(int signal, pid_t except = -1) const;
    // SIGKILLs every member through cgroup.kill, or member by member on older kernels.
    void kill_all() const;
    // True while any process is in the cgroup.
    [[nodiscard]] bool populated() const;
    // Whether the run met its limits.
    [[nodiscard]] limit_events events() const;
    // Whether the run's v1 memory cgroup has been at its limit: a charge failed there
    // (memory.failcnt, or memsw's), or its peak usage reached the limit (Linux 6.18 had counted no
    // failure when its OOM notice came, with the peak at the limit). What an OOM notice must be
    // backed by to be one. False without a v1 memory limit.
    [[nodiscard]] bool memory_v1_limit_met() const;
    // What the run's socket buffers hold now (v1 memory.kmem.tcp.usage_in_bytes, v2 `sock` of
    // memory.stat), and their bound; nullopt without a memory cgroup or a counter.
    [[nodiscard]] std::optional<std::uint64_t> socket_bytes() const;
    [[nodiscard]] std::uint64_t socket_bound() const noexcept { return paths_.socket_bound; }
    // One rmdir of each of the run's directories still there, without waiting: true once all
    // are gone. A cgroup is removable only once the kernel has freed its processes, a little
    // after they died (longer in a v1 hierarchy): the caller retries on its own clock
    // (process.cpp: a timer on the run's loop).
    [[nodiscard]] bool remove();

    [[nodiscard]] const scope_paths& paths() const noexcept { return paths_; }

private:
    std::shared_ptr<cgroup_host> host_;
    scope_paths paths_;
    std::vector<unique_fd> joins_;
    unique_fd birth_;
    unique_fd oom_notice_;
    std::vector<std::filesystem::path> pending_;  // directories not removed yet
};

}  // namespace cordon::runtime
