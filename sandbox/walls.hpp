// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The walls of the Landlock rung, raised in one order by both of its paths: cordon-landlock
// (sandbox/launcher/), which raises them in itself before it execs the command, and the forked
// child of an in-process spawn (child_confinement.hpp), which raises them between fork and exec.
// Written once so that the two paths cannot drift apart (docs/sandbox.md, "The walls' order"):
//
//   1. a private IPC namespace, while the capability to make one is still held; where none can
//      be made, the seccomp filter of step 4 refuses SysV IPC and POSIX message queues instead;
//      under network deny with plan::unshare_net, a private network namespace with its loopback
//      up (a failure fails the run: the caller chose it because one can be made); without one,
//      the network ruleset of step 3 and the filter's socket rules deny the network instead;
//      then the run's kernel quotas (quotas.hpp): the rlimits lowered and, under bwrap, the user
//      namespace's user.max_* limits written while CAP_SYS_RESOURCE is still held;
//   2. every capability dropped (all rule paths are open by now: nothing below needs one);
//   3. no_new_privs and landlock_restrict_self (no_new_privs alone for --no-landlock), then the
//      network ruleset, a second layer, when there is one;
//   4. the network witness's filter, when there is a channel for its listener (sent over it, then
//      closed: confinement_extras.hpp, install_witness), where the kernel has user
//      notification; then the seccomp filter, last, so that it need not allow the calls of the
//      steps before it;
//   5. the partial-enforcement notice on stderr, once, when the ruleset's ABI is older than
//      landlock::full_filesystem_abi.
//
// libc only and async-signal-safe (raw system calls, no allocation, no locks, no logging), like
// landlock_ruleset.hpp and confinement_extras.hpp: the launcher is static and libc-only, and the
// in-child path runs under CLONE_VM, where nothing but the child's own stack may be written.
// Everything that allocates or may fail for want of memory (the ruleset, the filters) is built
// before apply() is called.
#pragma once

#include "sandbox/confinement_extras.hpp"
#include "sandbox/launcher_status.hpp"

namespace cordon::sandbox::walls {

// The line both paths write when Landlock enforces only part of a mode (backends.hpp exposes it,
// without the newline, as launcher_notice_line).
inline constexpr char partial_notice[] =
    "cordon-landlock: partial enforcement (older Landlock ABI)\n";

// The steps of apply() that can fail, in their order.
enum class step : unsigned char {
    network,       // making the private network namespace, bringing its loopback up
    quotas,        // lowering the rlimits, writing the user namespace's limits
    identity,      // switching to the run's uid and gid (identity.hpp)
    capabilities,  // dropping the capability sets
    landlock,      // no_new_privs + landlock_restrict_self
    no_new_privs,  // no_new_privs alone (plan::landlock false)
    seccomp,       // installing the filter
};

// The launcher's status-record stage for a failed step.
[[nodiscard]] launcher_stage stage_of(step failed) noexcept;
// The launcher's words for a failed step, before ": <strerror>" ("cannot drop capabilities").
[[nodiscard]] const char* reason_of(step failed) noexcept;

struct plan {
    // Restrict the process to `ruleset` (an invalid fd fails the step: never a silent pass);
    // false only for the launcher's --no-landlock, which sets no_new_privs alone.
    bool landlock = true;
    int ruleset = -1;
    bool own_ipc_given = false;  // the caller already gave the process its own IPC namespace
    // A directory fd of /proc/sys/user of a writable proc, through which the user namespace's
    // user.max_* limits are written (bwrap's runs); -1: the rlimits alone. Not closed.
    int user_sysctls = -1;
    const extras::filter_program* own_ipc = nullptr;  // the filter with an IPC namespace of its own
    const extras::filter_program* shared_ipc = nullptr;  // the filter when it shares the host's
    bool partial_notice = false;  // write partial_notice once the walls stand
    bool unshare_net = false;     // network deny: make a private network namespace
    // network deny without a namespace: a Landlock ruleset refusing TCP connects (and binds)
    // (landlock::create_network_ruleset), restricted to after the filesystem one; -1: none.
    // Not closed.
    int network_ruleset = -1;
    // Network deny or proxy: the witness's filter, and the SOCK_SEQPACKET socket its listener is
    // sent over; closed by apply() once sent (a kernel without user notification, or a listener
    // already in place, sends none). -1: no witness.
    const extras::filter_program* witness = nullptr;
    int witness_channel = -1;
    // The run's uid and gid (identity.hpp), switched to after the namespaces and quotas, which
    // need root, and before the capabilities go; -1: none (the process keeps its own).
    long become_uid = -1;
    long become_gid = -1;
};

// Raises the walls of `walls` in the calling process, in the order above. Returns 0, or an errno
// with `*failed` set to the step that failed (nothing after it was attempted). The ruleset fd is
// not closed. Both filters must be set.
[[nodiscard]] int apply(const plan& walls, step* failed) noexcept;

}  // namespace cordon::sandbox::walls
