// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The Landlock rung applied in the forked child of an in-process spawn, instead of exec'ing
// cordon-landlock: the parent builds the ruleset and the seccomp filter once per run, and the
// child, between fork and exec, only applies them. One exec fewer per run, and the same walls in
// the same order as the launcher: both raise them with walls::apply() (walls.hpp).
//
// The record says the same on both paths: the rung, its enforcement and gaps come from
// confine(); a failure to confine is a runner failure with the launcher's own line; the
// command's exec failure is the command's (not started), as when the launcher reports it.
// confine() still returns the launcher's argv for consumers that spawn an argv themselves.
#pragma once

#include <memory>
#include <string>
#include <variant>

#include "cordon/confined_argv.hpp"
#include "cordon/unique_fd.hpp"
#include "sandbox/confinement_extras.hpp"
#include "sandbox/launcher_status.hpp"

namespace cordon::sandbox {

struct child_confinement {
    unique_fd ruleset;  // CLOEXEC: the child uses it before exec, the command never holds it
    bool partial_notice = false;        // the ABI is older than full_filesystem_abi
    extras::filter_program own_ipc;     // the child made its own IPC namespace
    extras::filter_program shared_ipc;  // it could not: SysV IPC and message queues refused
    bool unshare_net = false;           // network deny: a private network namespace
    unique_fd network_ruleset;          // network deny without one: TCP refused (ABI 4+)
    // Network deny: the witness's filter, its listener sent over network_witness_fd
    // (sandbox/walls.hpp).
    bool witness = false;
    extras::filter_program witness_filter;
};

// Builds the confinement for `plan` in the parent; the launcher's failure line when it cannot
// (the caller then runs the launcher, which fails the same way and reports it).
[[nodiscard]] std::variant<std::shared_ptr<const child_confinement>, std::string>
build_child_confinement(const landlock_in_child& plan);

// The numbers of the confinement's descriptors in the child that applies it.
struct child_confinement_fds {
    int ruleset = -1;
    int network_ruleset = -1;  // -1: none
};

// Child side, before the child places its own descriptors: copies of the confinement's
// descriptors at or above `floor` (CLOEXEC), which no placement reaches. The parent's numbers are
// whatever was free when the confinement was built, and may be the number a pipe of the child's
// is placed at: used there, the walls would find the pipe, not the ruleset. 0 or an errno.
[[nodiscard]] int lift_child_confinement(const child_confinement& confinement, int floor,
                                         child_confinement_fds* out) noexcept;

// Child side: async-signal-safe, no allocation, writes nothing but the calling process's own
// state (safe under CLONE_VM). `fds`: lift_child_confinement()'s. `become_uid` and `become_gid`
// (>= 0): the run's own ids, switched to by the walls (identity.hpp). Returns 0, or an errno with
// `*failed` set to the step.
[[nodiscard]] int apply_child_confinement(const child_confinement& confinement,
                                          const child_confinement_fds& fds, launcher_stage* failed,
                                          long become_uid = -1, long become_gid = -1) noexcept;

// The launcher's line for a failure at `stage` with `error`, word for word.
[[nodiscard]] std::string child_confinement_failure(launcher_stage stage, int error);

}  // namespace cordon::sandbox
