// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Internal to spawn.cpp: the plan the parent hands to the child, and the child's entry point.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>

#include "runtime/spawn.hpp"
#include "sandbox/identity_child.hpp"

// Marks the code that runs in the child between clone and exec. Under AddressSanitizer it is
// left uninstrumented: sharing the parent's memory (spawn_method::vfork), the child runs on a
// stack ASan does not know as this thread's, and an instrumented call of a function that never
// returns (run_child itself) makes ASan try to clear "its" stack and print a warning into the
// command's stderr. What the child calls in other files (the Landlock rung's walls, the PATH
// search) stays instrumented; the shadow its frames leave behind is cleared once the child is gone
// (child_stack::unpoison).
#define CORDON_CHILD_SIDE __attribute__((no_sanitize("address")))

namespace cordon::runtime::detail {

// Everything the child needs, prepared by the parent. The child reads it and writes only to
// `moved` and the trees' `tree_fd`, arrays of its own that the parent sized and never reads: under
// CLONE_VM they are the parent's memory, and the child may not allocate.
struct child_plan {
    const char* path;  // resolved program
    char* const* argv;
    char* const* envp;
    const char* cwd;
    const fd_mapping* fds;
    std::size_t fd_count;
    int* moved;                  // fd_count entries: where each source is moved before it is placed
    const int* cgroup_join_fds;  // written `0` in order before exec
    std::size_t cgroup_count;
    bool born_in_first_cgroup;  // clone3 placed the child in the first one: it is not written
    int exec_fd;                // -1: execve(path); else execveat(exec_fd, "", AT_EMPTY_PATH)
    int error_fd;               // CLOEXEC write end of the error pipe
    int scratch_fd_floor;       // fds are first moved at or above this number
    pid_t parent;  // > 0: die with the spawning thread; the parent's pid, to close the race
    const sandbox::child_confinement* confinement;  // applied just before exec, when set
    bool controlling_terminal;  // fd 0 becomes the controlling terminal once placed
    // > 0: the soft RLIMIT_NOFILE set just before exec (cordon/limits.hpp,
    // commands_descriptor_limit): the one the program was started with, not the one it raised.
    rlim_t descriptor_limit;
    // The run's trees, idmapped in a mount namespace of its own (sandbox/identity_child.hpp);
    // the child writes their tree_fd fields only.
    sandbox::child_tree* trees;
    std::size_t tree_count;
    const char* passwd;  // the run's account files (identity_plan), or null
    const char* group;
    // >= 0: the ids the child takes, through the walls of `confinement` when set, else just
    // before exec.
    long become_uid;
    long become_gid;
};

// The fixed failure record written to error_fd: nothing read means exec succeeded
// (docs/execution.md, "Spawning").
struct child_failure {
    int stage;
    int error;
    int step;  // spawn_stage::confine: the launcher_stage that failed
};

// Runs in the child; never returns. Async-signal-safe only.
[[noreturn]] CORDON_CHILD_SIDE void run_child(const child_plan& plan) noexcept;

}  // namespace cordon::runtime::detail
