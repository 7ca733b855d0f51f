// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network proxy's forwarder (network policy proxy, docs/network.md): the launcher listens on
// the loopback of the run's private network namespace and hands every connection the command
// makes there to cordon's proxy, as a descriptor over an inherited socketpair (SCM_RIGHTS). The
// proxy then serves the connection itself; nothing is copied here. The socketpair has no name:
// no other user and no other process of the run can reach the proxy except through this port.
//
// It runs in the launcher that waits for the command (report_ending.hpp), inside every wall the
// command has. It fails closed: when the proxy's end is gone or refuses a connection, the listener
// is closed and every later connection is refused; the command never reaches anything else.
#pragma once

#include <sys/types.h>

#include "sandbox/launcher/reporter.hpp"

namespace cordon::launcher {

struct forwarder {
    int channel = -1;      // --proxy-fd: the sandbox's end of the proxy session's socketpair
    int listener = -1;     // listening on 127.0.0.1:port
    int child_exits = -1;  // a signalfd for SIGCHLD (blocked in the waiting launcher)
};

// Checks --proxy-fd (a socket), listens on 127.0.0.1:`port` and opens the SIGCHLD signalfd, all
// close-on-exec, before the command is started: the port is the proxy's before the command runs.
// Every failure is the launcher's (exit 125).
[[nodiscard]] forwarder start_forwarder(const reporter& report, int channel, int port) noexcept;

// Hands connections to the proxy until `child` has exited (it is left to be reaped).
void forward_until_exit(forwarder& state, pid_t child) noexcept;

}  // namespace cordon::launcher
