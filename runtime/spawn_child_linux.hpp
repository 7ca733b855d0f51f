// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Internal to spawn.cpp: the plan the parent hands to the child, and the child's entry point.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>

#include "runtime/spawn.hpp"

namespace cordon::runtime::detail {

// Everything the child needs, prepared by the parent. The child reads it and never writes to it:
// under CLONE_VM it is the parent's memory.
struct child_plan {
    const char* path;  // resolved program
    char* const* argv;
    char* const* envp;
    const char* cwd;
    const fd_mapping* fds;
    std::size_t fd_count;
    const int* cgroup_procs_fds;  // joined in order before exec
    std::size_t cgroup_count;
    int exec_fd;           // -1: execve(path); else execveat(exec_fd, "", AT_EMPTY_PATH)
    int error_fd;          // CLOEXEC write end of the error pipe
    int scratch_fd_floor;  // fds are first moved at or above this number
    pid_t parent;          // > 0: die with the spawning thread; the parent's pid, to close the race
    const sandbox::child_confinement* confinement;  // applied just before exec, when set
};

// The fixed failure record written to error_fd: nothing read means exec succeeded
// (docs/execution.md, "Spawning").
struct child_failure {
    int stage;
    int error;
    int step;  // spawn_stage::confine: the launcher_stage that failed
};

// Runs in the child; never returns. Async-signal-safe only.
[[noreturn]] void run_child(const child_plan& plan) noexcept;

}  // namespace cordon::runtime::detail
