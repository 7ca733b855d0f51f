// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The runs of a cordon that dies outright (SIGKILL, a crash, the OOM killer) end with it, on every
// path that runs commands (`cordon run`, background jobs, `cordon mcp`): each cgroup host starts a
// small watchdog process that holds the read end of a pipe whose only writer is this process, and
// that writes `1` to the host's cgroup.kill when it reads end-of-file. The kernel closes the write
// end when this process dies, however it dies; cgroup.kill then ends every run's whole tree at
// once (setsid() and double-forks included), where the leader's PR_SET_PDEATHSIG would end the
// leader only. Under bwrap the pid namespace and --die-with-parent already did the same.
//
// The watchdog is the launcher, exec'd (`cordon-landlock --watch-cgroup`,
// sandbox/launcher/watchdog.hpp): found and trusted as the Landlock rung finds and trusts it
// (runner_path.hpp), spawned through the one spawn path, it forks the watchdog and exits, so that
// the watchdog is not this process's child (nothing here waits for it, and no waitpid(-1) of the
// host sees it). A fork of this process instead would cost every `cordon run` two copies of its
// page tables and keep a copy-on-write image of it (of an embedding agent's whole heap) for as
// long as the watchdog lives. The watchdog is in a session of its own (a terminal's ^C does not
// end it), non-dumpable (a command of the same uid cannot ptrace it or read its memory), ignores
// the polite signals and holds no descriptor but its two. A confined command cannot signal it
// where Landlock scopes signals (ABI 6); where it cannot be scoped, a command that kills it only
// takes back the leftovers to the next cordon's sweep (cgroup_reaper.hpp), which still happens.
// Without a launcher there is no watchdog, and the same sweep is all there is.
//
// An orderly end (the host destroyed) closes the pipe the same way: the watchdog then kills an
// empty cgroup, or one already removed (the write fails), and exits.
#pragma once

#include <filesystem>
#include <string>
#include <variant>

#include "runtime/unique_fd.hpp"

namespace cordon::runtime {

class cgroup_watchdog {
public:
    // Starts the watchdog of the cgroup `directory` (its cgroup.kill); the reason when it cannot.
    [[nodiscard]] static std::variant<cgroup_watchdog, std::string> start(
        const std::filesystem::path& directory);

    cgroup_watchdog() = default;
    // Closing the pipe is the watchdog's signal: moves keep exactly one write end.
    cgroup_watchdog(cgroup_watchdog&&) noexcept = default;
    cgroup_watchdog& operator=(cgroup_watchdog&&) noexcept = default;

    // Whether a watchdog still reads the pipe: false when none was started, or when it is gone (a
    // command that could signal it killed it; the pipe then has no reader).
    [[nodiscard]] bool running() const noexcept;
    // In a child forked without exec: closes the child's copy of the pipe, which is the parent's
    // to hold (async-signal-safe).
    void forget() noexcept;

private:
    explicit cgroup_watchdog(unique_fd alive) : alive_(std::move(alive)) {}
    unique_fd alive_;  // the write end: open while this process lives
};

}  // namespace cordon::runtime
