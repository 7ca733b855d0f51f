// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Landlock ruleset construction, reusable outside the launcher's main(). Everything here is
// async-signal-safe (raw syscalls, open/fstat/close, getdents64; no allocation, no locks, no
// logging) and uses libc only, so it can run between fork and exec.
//
// Rights and ABI handling follow landlock(7) and the kernel's samples/landlock/sandboxer.c: the
// handled-rights mask comes from a table indexed by ABI, clamped to max_abi. From ABI 6 the
// ruleset also scopes signals and abstract unix sockets to the sandbox's own domain.
//
// Rules are only ever added for descriptors opened once: a path is opened with O_PATH and without
// following any symlink (openat2 RESOLVE_NO_SYMLINKS), or the caller hands over a descriptor it
// validated itself. Nothing here resolves a path twice.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sandbox/launcher_status.hpp"

namespace cordon::sandbox::landlock {

// The highest ABI whose rights and scopes we know. ABI 5 adds IOCTL_DEV, the last filesystem
// right cordon's modes need; ABI 6 adds the signal and abstract-unix-socket scopes. ABI 7 only
// adds audit logging, which cordon does not use.
inline constexpr int max_abi = 6;
inline constexpr int full_filesystem_abi = 5;
inline constexpr int scopes_abi = 6;
inline constexpr int network_abi = 4;  // TCP bind and connect rights

// The kernel's Landlock ABI version (>= 1), or -errno: -ENOSYS when the kernel was built
// without Landlock, -EOPNOTSUPP when it was built with it but Landlock is disabled at boot.
[[nodiscard]] int query_abi() noexcept;

// Filesystem rights the ruleset handles for `abi` (clamped to max_abi).
[[nodiscard]] std::uint64_t handled_access(int abi) noexcept;
// Rights a read grant gives: execute, read file, read directory (masked by handled_access).
[[nodiscard]] std::uint64_t read_only_access(int abi) noexcept;
// The subset of rights the kernel accepts on a non-directory (directory-only bits give EINVAL).
[[nodiscard]] std::uint64_t file_access_mask() noexcept;
// The scopes the ruleset sets for `abi`: signals and abstract unix sockets from ABI 6, else 0.
[[nodiscard]] std::uint64_t scopes(int abi) noexcept;

enum class access {
    read,   // execute, read file, read directory
    write,  // every handled right
};

struct failure {
    launcher_stage stage;
    int error;         // errno
    const char* path;  // the rule path for open_rule_path, else nullptr
};

// Creates a ruleset handling handled_access(abi) and scopes(abi). Returns its fd (CLOEXEC), or -1
// with *out filled in.
[[nodiscard]] int create_ruleset(int abi, failure* out) noexcept;

// Creates a ruleset that governs no filesystem right, only scopes(abi): restricting itself with
// it puts a process in a nested domain that can no longer signal, ptrace or reach the abstract
// sockets of the domain it came from. It handles REFER and grants it beneath "/" (opened here),
// since the kernel would otherwise deny REFER in this layer and break every cross-directory link
// and rename. Needs ABI 6 (EOPNOTSUPP below). Returns its fd (CLOEXEC), or -1 with *out filled in.
[[nodiscard]] int create_scope_ruleset(int abi, failure* out) noexcept;

// Creates a ruleset that handles TCP connect and, unless `allow_bind`, TCP bind, with no port
// allowed: restricting itself with it (a second layer beside the filesystem ruleset) leaves a
// process no TCP connect to any port, on any host. Like create_scope_ruleset(), it grants REFER
// beneath "/" so that it leaves links and renames to the filesystem layer. Needs ABI 4
// (EOPNOTSUPP below). Returns its fd (CLOEXEC), or -1 with *out filled in.
[[nodiscard]] int create_network_ruleset(int abi, bool allow_bind, failure* out) noexcept;

// Adds a PATH_BENEATH rule for `target` (any open fd; O_PATH is enough). On a non-directory the
// rights are masked to file_access_mask(). Returns 0, or -1 with *out filled in. Does not close
// `target`.
[[nodiscard]] int add_fd_rule(int ruleset_fd, int abi, int target, access rights,
                              failure* out) noexcept;

// Opens `path` once (O_PATH, no symlink followed in any component) and adds a rule for it. An
// `optional` path that does not exist is skipped: a missing grant only ever narrows. Any other
// failure fails closed. Returns 0, or -1 with *out filled in.
[[nodiscard]] int add_path_rule(int ruleset_fd, int abi, const char* path, access rights,
                                bool optional, failure* out) noexcept;

// The most paths add_root_read_rules takes besides /dev.
inline constexpr std::size_t max_denied_reads = 256;

// Read access to the whole filesystem except /dev and the `denied` paths (absolute, canonical,
// without a trailing slash), built as their complement: the root directory itself may be listed,
// every entry of / other than `dev` gets a read rule, and an entry that holds a denied path gets
// listing only and its own entries are granted the same way, down to the denied path, which gets
// nothing. Symlinks get no rule (their targets have their own), nor does a file of several names
// in a directory that holds a denied path (it may be one of the denied files under another
// name: a grant is on the inode). Devices are then granted node by
// node by the caller, so that a command can never open a terminal, an input device or a disk just
// because reads are allowed. Returns 0, or -1 with *out filled in (E2BIG: more than
// max_denied_reads paths).
[[nodiscard]] int add_root_read_rules(int ruleset_fd, int abi, const char* const* denied,
                                      std::size_t denied_count, failure* out) noexcept;

// PR_SET_NO_NEW_PRIVS then landlock_restrict_self(ruleset_fd). Returns 0 or an errno. Does not
// close the fd.
[[nodiscard]] int restrict_self(int ruleset_fd) noexcept;

// open(2) of `path` with O_PATH|O_CLOEXEC (plus `flags`), following no symlink in any component
// (openat2 RESOLVE_NO_SYMLINKS; O_NOFOLLOW on the last component where openat2 is missing).
// Returns the fd or -1 with errno set.
[[nodiscard]] int open_no_symlinks(const char* path, int flags = 0) noexcept;

}  // namespace cordon::sandbox::landlock
