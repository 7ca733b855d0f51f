// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// clone3(2) for a child that shares the caller's memory and runs a function on a stack of its
// own, as glibc's clone() does for clone(2). glibc (2.36) has no public clone3 wrapper, and a child
// of clone3 with CLONE_VM cannot return into the caller's frames: it starts on the new stack, so
// the function is called from a few lines of assembly, as glibc's own clone3.S does.
//
// Why spawn needs it: CLONE_INTO_CGROUP places the child in the run's cgroup v2 at birth. Joining
// afterwards (a write to cgroup.procs) takes the kernel's cgroup_threadgroup_rwsem for writing,
// whose percpu_down_write waits an RCU grace period (~10 ms measured on this kernel) whenever no
// other migration ran within the last one: in every `cordon run`, the largest single cost of a
// call. A child born in the cgroup takes the same semaphore for reading only.
#pragma once

#include <linux/sched.h>
#include <sys/types.h>

namespace cordon::runtime::detail {

// Whether this build has the entry code (x86_64 and aarch64); elsewhere clone3_call fails with
// ENOSYS and the caller uses clone(2). Whether the kernel takes clone3 is known by calling it.
[[nodiscard]] bool clone3_entry_built() noexcept;

// clone3(args) whose child runs fn(arg) on the stack args describes and exits with what it
// returns (it may also never return). Returns the child's pid in the parent, or -1 with errno set
// (ENOSYS: no clone3 here, a kernel before 5.3, or a seccomp filter that refuses it).
// args must ask for CLONE_VM and give a stack.
[[nodiscard]] pid_t clone3_call(clone_args& args, int (*fn)(void*), void* arg) noexcept;

}  // namespace cordon::runtime::detail
