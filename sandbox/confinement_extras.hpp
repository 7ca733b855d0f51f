// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What Landlock leaves ungoverned, closed by other means (libc only, async-signal-safe, usable
// between fork and exec like landlock_ruleset.hpp). The launcher applies all of it in every
// confined mode and under both backends (inside bwrap it runs after bwrap's setup), so that a gap
// in one wall must line up with a gap in another before anything escapes.
//
//   - Capabilities. A launcher started as root would hand the command every capability: chown
//     any file, load modules, remount. They are dropped from the bounding, ambient, effective,
//     permitted and inheritable sets, so that even uid 0 execs with none (capabilities(7),
//     "Capabilities and execution of programs by root").
//   - System calls that neither mounts nor Landlock govern, refused by one seccomp filter:
//       * clone3 (ENOSYS, so that libc falls back to clone): CLONE_INTO_CGROUP would start a
//         child outside the run's cgroup, out of reach of its kill and its limits;
//       * a new user namespace (clone/unshare with CLONE_NEWUSER): inside one a command holds
//         every capability again over what its uid owns;
//       * clone with CLONE_PARENT: the child would be a sibling of the command, so a child of
//         cordon itself under the Landlock rung, which cordon never reaps (zombies that use up
//         a long-lived host's pids);
//       * keyrings (add_key, request_key, keyctl): the user keyring of a uid is shared with
//         every process of that uid on the host and outlives the run;
//       * process attributes of other processes: prlimit64, setpriority, ioprio_set and the
//         sched_set* calls on anything but the caller itself. A command that shares cordon's uid
//         could otherwise set cordon's CPU limit to zero (and so kill it), starve it, or renice
//         every process of the uid;
//       * io_uring, whose operations do not pass through seccomp at all;
//       * Linux AIO contexts (io_setup, ENOSYS so that callers fall back to threads, as libaio's
//         users and glibc's POSIX AIO do): every context takes events from fs.aio-max-nr, one
//         counter for the whole host, and a command that took them all would fail every host
//         process's io_setup while it ran (docs/sandbox.md, "Host-wide kernel resources");
//       * typing into a terminal (the TIOCSTI ioctl) and driving a virtual console (TIOCLINUX):
//         whatever terminal the command holds, its own pseudo-terminal's included, its input is
//         the person's (or the agent's), never the command's;
//       * SysV IPC and POSIX message queues when the command has no IPC namespace of its own:
//         their objects are shared with the host and outlive the run;
//       * under network deny, socket(AF_UNIX): a network namespace does not separate pathname
//         unix sockets (a container daemon's, the session bus's), and neither a read-only mount
//         nor Landlock stops a connect() to one; socketpair() stays, so that a command's own
//         processes still talk over unix sockets they never name, but for stream and seqpacket
//         pairs only (a datagram socket can sendto() any named one, or connect() to it, and
//         AF_UNIX makes a SOCK_RAW pair a datagram one), and of AF_UNIX only wherever a socket
//         family is refused (AF_TIPC makes pairs too). Where the command has no
//         network namespace of its own, socket() of every other family as well (TCP, UDP, raw,
//         packet, netlink: the host's network and its interfaces) and, with socket(AF_UNIX)
//         refused too, bind() (a socketpair's socket bound to an abstract name would take it in
//         the host's namespace), with, for allow_local_binding,
//         TCP stream sockets alone let through (Landlock's network rights refuse their connects)
//         and SO_REUSEPORT refused on them (it would join a host service's listener of the same
//         uid and take a share of its connections);
//         and where it has one, every family but AF_INET, AF_INET6 and AF_NETLINK beside
//         AF_UNIX: a namespace does not separate the others (AF_VSOCK reaches the hypervisor);
//       * under read-only, changes of file metadata (chmod, chown, utime, xattrs and the
//         inode-flag ioctls), which Landlock does not govern (landlock(7)). Under
//         workspace-write a filter cannot tell the workspace's paths apart, which is why a
//         Landlock workspace-write run without bwrap's read-only mounts is `partial`;
//       * system calls of a foreign architecture (i386 on x86_64, x32) and ones newer than the
//         filter knows (ENOSYS), whose numbers would otherwise slip past every rule above.
#pragma once

#include <linux/filter.h>

#include <cstddef>

namespace cordon::sandbox::extras {

// Drops every capability; returns 0 or an errno. Without CAP_SETPCAP the bounding set cannot be
// changed; the effective, permitted, inheritable and ambient sets are emptied all the same, and
// no_new_privs (set before exec) keeps exec from granting any back, also to uid 0.
[[nodiscard]] int drop_capabilities() noexcept;

// The bounding set alone, emptied while CAP_SETPCAP is held (before a switch of uid takes it);
// 0 or an errno. Without CAP_SETPCAP it stays, as in drop_capabilities().
[[nodiscard]] int drop_bounding_set() noexcept;

struct filter_options {
    bool deny_metadata = false;       // read-only: refuse chmod/chown/utime/xattr and inode flags
    bool deny_sysv_ipc = false;       // no private IPC namespace: refuse SysV IPC and POSIX mqueues
    bool deny_unix_sockets = false;   // network deny: refuse socket(AF_UNIX)
    bool deny_other_sockets = false;  // deny, no network namespace: refuse every other family
    // deny with a network namespace: refuse the families it does not separate (vsock reaches the
    // hypervisor from any namespace): only AF_INET, AF_INET6 and AF_NETLINK beside AF_UNIX
    bool namespaced_sockets_only = false;
    bool allow_tcp_streams = false;  // with deny_other_sockets: AF_INET/AF_INET6 SOCK_STREAM
};

// The network witness (docs/network.md, "Denials"): a filter that hands every connect(2) of the
// process and its descendants to a supervisor holding its listener, which reads the address and
// lets the call go on unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE). It decides nothing: the network
// namespace, Landlock and the main filter refuse what they refuse whatever the supervisor says,
// so a command that rewrites its address after it was read only changes what is recorded. Built
// like the main filter, for the native architecture (other ones are refused by the main filter).
struct filter_program;
[[nodiscard]] int build_witness_filter(filter_program& out) noexcept;
// Installs the witness filter (needs no_new_privs) and returns its listener (close-on-exec), or
// -1 with errno: ENOSYS or EINVAL where the kernel has no user notification, EBUSY where a filter
// already in place has a listener (a sandbox inside another one).
[[nodiscard]] int install_witness(const filter_program& program) noexcept;
// Sends `fd` over the SOCK_SEQPACKET socket `channel` as one message of one byte with one
// descriptor (SCM_RIGHTS), waiting for room unless `flags` has MSG_DONTWAIT; 0 or an errno
// (EAGAIN: no room; EPIPE, ECONNRESET: the other end is gone). The witness's listener, and the
// launcher's forwarder's connections.
[[nodiscard]] int send_fd(int channel, int fd, int flags = 0) noexcept;

// A built filter: plain data, so that it can be built in one process (or before a fork) and
// installed in another place (between fork and exec, where nothing may be built).
struct filter_program {
    static constexpr std::size_t capacity = 256;
    sock_filter code[capacity];
    unsigned short size = 0;
};

// Builds the filter for `options` into `out`; returns 0 or an errno (E2BIG: it does not fit).
[[nodiscard]] int build_filter(const filter_options& options, filter_program& out) noexcept;
// Installs a built filter (needs no_new_privs or CAP_SYS_ADMIN); returns 0 or an errno.
[[nodiscard]] int install_program(const filter_program& program) noexcept;
// build_filter, then install_program.
[[nodiscard]] int install_filter(const filter_options& options) noexcept;

// Gives the caller a private IPC namespace (needs CAP_SYS_ADMIN, so call it before dropping
// capabilities); returns 0 or an errno. Its SysV objects and message queues are invisible to the
// host and disappear with the last process that uses them.
[[nodiscard]] int private_ipc_namespace() noexcept;

// Gives the caller a private network namespace and brings its loopback up (needs CAP_SYS_ADMIN
// and, for the loopback, CAP_NET_ADMIN over the new namespace: call it before dropping
// capabilities); returns 0 or an errno. Raw unshare, socket and ioctl: async-signal-safe.
[[nodiscard]] int private_network_namespace() noexcept;

}  // namespace cordon::sandbox::extras
