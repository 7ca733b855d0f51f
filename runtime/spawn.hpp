// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one spawn path for every backend (docs/execution.md, "Spawning"). The parent prepares every
// array (argv, envp, fd map, the resolved program path) before the child exists; the child side
// lives in spawn_child_linux.cpp and only makes async-signal-safe system calls. The child starts a
// new session (so it leads its own process group, pgid = pid, and has no controlling terminal),
// optionally joins a cgroup, sees exactly the fds it is given at their target numbers (0-2 plus any
// extra), and reports a failure before exec as a {stage, errno} record through a CLOEXEC pipe; on
// that path the child is reaped before spawn() returns, so no zombie is left.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/outcome.hpp"
#include "cordon/run.hpp"
#include "runtime/unique_fd.hpp"
#include "sandbox/child_confinement.hpp"
#include "sandbox/identity.hpp"

namespace cordon::runtime {

// Where a spawn failed, and why: the outcome vocabulary (cordon/outcome.hpp).
using classify::describe;
using classify::spawn_error;
using classify::spawn_stage;

inline constexpr std::size_t max_cgroups = 4;

struct fd_mapping {
    int parent_fd;  // open in the parent
    int child_fd;   // the number it gets in the child
};

struct spawn_request {
    std::vector<std::string> argv;  // argv[0] is looked up in the PATH of `env` unless it has '/'
    std::vector<std::string> env;   // "NAME=value"
    std::filesystem::path cwd;
    std::vector<fd_mapping> fds;  // must map 0, 1 and 2; every other fd is closed on exec
    // Open files the child writes `0` (itself) to before exec, joining the run's cgroups: the v2
    // cgroup's cgroup.procs first, then v1 hierarchies' `tasks` (at most max_cgroups).
    std::vector<int> cgroup_join_fds;
    // The v2 cgroup's directory (>= 0): the child is born in it where the kernel can (clone3's
    // CLONE_INTO_CGROUP, Linux 5.7, spawn_method::vfork) and then skips the first join, which
    // would cost an RCU grace period (runtime/clone3.hpp). Elsewhere it joins as above.
    int cgroup_birth_fd = -1;
    // When >= 0, the program is this fd (execveat(AT_EMPTY_PATH)) and argv[0] is only its name.
    int exec_fd = -1;
    spawn_method method = default_spawn_method();
    // SIGKILL the child when the thread that spawned it exits (PR_SET_PDEATHSIG, which fires on
    // the death of the parent *thread*, not the process): only for a spawner whose thread lives
    // as long as its children may, such as a supervisor's own event-loop thread. It covers the
    // direct child, which under the Landlock launcher is the command itself.
    bool die_with_spawning_thread = false;
    // Applied in the child after its working directory and before exec (child_confinement.hpp):
    // the Landlock rung without the launcher's exec. Must outlive the call.
    const sandbox::child_confinement* confinement = nullptr;
    // Fd 0 is a terminal that becomes the child's controlling terminal (TIOCSCTTY in its new
    // session): a run under a pseudo-terminal whose program takes no terminal of its own.
    bool controlling_terminal = false;
    // The run's identity (sandbox/identity.hpp): its trees idmapped in a mount namespace of its
    // own, made before the descriptors are placed; and the switch to its uid, by the walls above
    // when `confinement` is set, else just before exec when the plan says so (bwrap). Must
    // outlive the call.
    const sandbox::identity_plan* identity = nullptr;
};

struct spawned_child {
    pid_t pid = -1;   // also the process group and session id
    unique_fd pidfd;  // CLOEXEC; invalid when the kernel has no pidfds
};

using spawn_result = std::variant<spawned_child, spawn_error>;

[[nodiscard]] spawn_result spawn(const spawn_request& request);

// Looks `program` up the way execvp would, in the PATH of `env` (default PATH when unset), in
// the parent, so that the child needs no allocation. Empty with errno-like code on failure.
// Unlike execvp, nothing retries a file without a `#!` line under /bin/sh: it fails ENOEXEC,
// as it does inside the sandbox, so the same program gives the same answer under every backend.
// execvp runs in the child after its chdir, so a relative PATH entry ("bin", ".", an empty one)
// names a directory under the child's working directory `cwd`, not under the spawner's.
[[nodiscard]] std::variant<std::string, int> resolve_program(std::string_view program,
                                                             const std::vector<std::string>& env,
                                                             const std::filesystem::path& cwd = {});

}  // namespace cordon::runtime
