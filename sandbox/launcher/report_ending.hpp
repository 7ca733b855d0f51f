// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-landlock --report-ending: the command runs as this process's child, in the same
// confinement, and this process reports how it ended (under bwrap the runner's exit status
// cannot: bwrap exits 128+N both for a command that exited 128+N and for one killed by signal N).
// The child writes the `started` record while every signal is still blocked, then restores the
// mask and execs, so that a signal can end it before `started` only if it is SIGKILL; an exec
// failure comes back through a
// close-on-exec pipe, and then only the child's failure record is written. This process blocks
// every signal it can (cordon's polite signals are for the command; its SIGKILL still ends both),
// holds none of the command's streams, and exits as the command did.
//
// The command must not be able to reach this process, which writes the record cordon trusts: it
// is made non-dumpable (no ptrace, no /proc/PID/mem or environ, no process_vm_* for a process
// without CAP_SYS_PTRACE), and where Landlock has scopes (`scope_abi` > 0) the child enters a
// nested domain first, from which this process can no longer be signalled. Without scopes a
// command of the same uid can still kill it; the record then carries the runner's status for the
// launcher's death, which the command chose as surely as it chooses its own exit code.
#pragma once

#include "sandbox/launcher/reporter.hpp"

namespace cordon::launcher {

// Runs `command` with `envp` as this process's child and exits as it did, after an `ended`
// record. `scope_abi` > 0: the child first enters a nested domain scoped at that ABI.
// `proxy_fd` >= 0: the network proxy's forwarder (forwarder.hpp) serves 127.0.0.1:`proxy_port`
// while the command runs.
[[noreturn]] void run_and_report(const reporter& report, int scope_abi, char** command, char** envp,
                                 int proxy_fd = -1, int proxy_port = 0) noexcept;

}  // namespace cordon::launcher
