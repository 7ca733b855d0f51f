// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-landlock's command line: the flags, parsed into fixed arrays (no allocation), with every
// usage error reported through the reporter (exit 125). The flags are listed in main.cpp.
#pragma once

#include <cstddef>

#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/launcher/reporter.hpp"

namespace cordon::launcher {

// Cordon's profiles use about a dozen grants; the limit only bounds the fixed array.
inline constexpr std::size_t max_grants = 256;

struct grant {
    const char* path;  // the path, or nullptr for an fd grant
    int fd;            // the descriptor of an fd grant, else -1
    sandbox::landlock::access rights;
    bool optional;  // --*-try: a missing path is skipped
};

struct command_line {
    grant grants[max_grants];  // read grants first, then write grants, each in caller order
    std::size_t grant_count = 0;
    bool read_root = false;                                   // --read-root
    const char* denied[sandbox::landlock::max_denied_reads];  // --deny-read PATH, in order
    std::size_t denied_count = 0;
    bool landlock = true;        // --no-landlock clears it
    bool private_ipc = false;    // --private-ipc: the caller gave the command its own IPC namespace
    bool deny_metadata = false;  // --deny-metadata: read-only's metadata rules
    // Network deny (sandbox/walls.hpp): --unshare-net makes the command a network namespace of
    // its own; --deny-unix-sockets refuses socket(AF_UNIX); --deny-sockets (no namespace)
    // refuses every other family and, from Landlock ABI 4, TCP connects and binds;
    // --local-binding lets TCP stream sockets bind with --deny-sockets.
    bool unshare_net = false;
    bool deny_unix_sockets = false;
    bool deny_sockets = false;
    bool local_binding = false;
    bool namespaced_sockets_only = false;  // --namespaced-sockets-only: AF_INET/6, netlink, unix
    // --proxy-fd N --proxy-port P (with --report-ending): forward connections to 127.0.0.1:P
    // to cordon's network proxy over fd N (forwarder.hpp).
    int proxy_fd = -1;
    int proxy_port = 0;
    // --witness-fd N: send the network witness's listener over fd N (sandbox/walls.hpp).
    int witness_fd = -1;
    int env_fd = -1;             // --env-fd
    int quota_fd = -1;           // --quota-fd: /proc/sys/user to write the namespace's limits
    bool probe = false;          // --probe
    bool watch_cgroup = false;   // --watch-cgroup (watchdog.hpp)
    int abi_cap = 0;             // --abi-cap N: use at most ABI N (0: no cap)
    bool report_ending = false;  // --report-ending: run the command as a child, report its end
    // --controlling-tty: fd 0 is a terminal the command takes as its controlling terminal, in a
    // session of its own (after bwrap's --new-session, or cordon's spawn, left it none).
    bool controlling_tty = false;
    // --identity UID:GID: the run's own ids, switched to by the walls (sandbox/identity.hpp).
    long become_uid = -1;
    long become_gid = -1;
    char** command = nullptr;  // argv after "--", NULL-terminated
};

// Flags in any order before the first "--"; each flag that takes a value takes the next argument,
// which may not be "--" (that is the end of the flags, not a value). --status-fd is adopted by
// `report` as soon as it is read, so that later usage errors reach it.
void parse(int argc, char** argv, reporter& report, command_line& out) noexcept;

}  // namespace cordon::launcher
