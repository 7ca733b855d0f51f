// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The kernel quotas a run is charged against its uid, bounded for the run (docs/sandbox.md,
// "Kernel quotas").
//
// inotify instances and watches, fanotify groups and marks and the namespaces a process makes are
// counted per uid in every user namespace up to the initial one (kernel/ucount.c: inc_ucount
// checks each level's user.max_* limit), so a command that takes them all takes them from every
// process of cordon's uid on the host. Each user namespace has its own user.max_* limits: under
// bwrap the launcher, still holding CAP_SYS_RESOURCE in the sandbox's user namespace (bwrap's
// --cap-add), writes them low through a /proc/sys/user directory of a writable proc that cordon
// hands it (the sandbox's own /proc is read-only), before it drops every capability. The sysctl
// set a write reaches is the writer's current user namespace's (set_is_seen()), so the launcher
// reaches the sandbox's limits, never the host's.
//
// Pending signals, POSIX message-queue bytes and locked memory are counted per uid too, but
// checked against the counting process's own rlimit: lowering the rlimit bounds what the run can
// add to its uid's count, with or without a user namespace.
//
// libc only and async-signal-safe: called by the launcher and between fork and exec.
#pragma once

#include <sys/resource.h>

namespace cordon::sandbox::quotas {

// user.max_* of the sandbox's user namespace. The command holds no capability and its seccomp
// filter refuses new user namespaces, so it can make no namespace at all: zero says so to the
// kernel as well. A missing file fails the step (a wrong directory must not pass for a bound),
// except those a kernel bwrap runs on may lack: fanotify's (Linux 5.13, before which fanotify
// needed CAP_SYS_ADMIN, which the command never holds) and time namespaces' (Linux 5.6).
struct namespace_limit {
    const char* name;   // the file in /proc/sys/user
    const char* value;  // what is written there
    bool optional;      // absent on some kernels: skipped when missing
};
inline constexpr namespace_limit namespace_limits[] = {
    {"max_inotify_instances", "16", false},  // the host's default is 128 per uid
    {"max_inotify_watches", "16384", false},
    {"max_fanotify_groups", "8", true},  // 128 per uid by default
    {"max_fanotify_marks", "1024", true},
    {"max_user_namespaces", "0", false},
    {"max_mnt_namespaces", "0", false},
    {"max_pid_namespaces", "0", false},
    {"max_net_namespaces", "0", false},
    {"max_ipc_namespaces", "0", false},
    {"max_uts_namespaces", "0", false},
    {"max_cgroup_namespaces", "0", false},
    {"max_time_namespaces", "0", true},
};

// The rlimits lowered for every confined run (never raised: a lower limit cordon was started
// with stays). RLIMIT_NPROC is not among them: the kernel ignores it for root, and without a user
// namespace it counts every process of the uid on the host; the run's cgroup (pids.max) bounds
// the run's processes instead.
struct resource_limit {
    int resource;
    rlim_t value;
};
inline constexpr resource_limit resource_limits[] = {
    {RLIMIT_SIGPENDING, 1024},      // queued signals (the host's default is tens of thousands)
    {RLIMIT_MSGQUEUE, 256 * 1024},  // three queues of the default size (819200 bytes by default)
    {RLIMIT_MEMLOCK, 1024 * 1024},  // shm locks, io_uring and BPF buffers (8 MiB by default)
};

// Lowers each of resource_limits, soft and hard. Returns 0 or an errno.
[[nodiscard]] int lower_rlimits() noexcept;

// Writes namespace_limits through `user_sysctls`, a directory fd of /proc/sys/user of a writable
// proc, as the calling process's current user namespace sees it. Returns 0, or an errno with
// `*failed` set to the file.
[[nodiscard]] int limit_user_namespace(int user_sysctls, const char** failed) noexcept;

}  // namespace cordon::sandbox::quotas
