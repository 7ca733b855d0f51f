// Landlock ruleset construction, reusable outside the launcher's main(): the launcher calls it
// today, and a spawner may call it in a forked child before exec. Everything here is
// async-signal-safe (raw syscalls, open/fstat/close, no allocation, no locks, no logging) and
// uses libc only, so it can run between fork and exec.
//
// Rights and ABI handling follow landlock(7) and the kernel's samples/landlock/sandboxer.c: the
// handled-rights mask comes from a table indexed by ABI, clamped to max_abi.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sandbox/launcher_status.hpp"

namespace cordon::sandbox::landlock {

// The highest ABI whose filesystem rights we know. ABI 5 adds IOCTL_DEV, the last filesystem
// right cordon's modes need, so from 5 on enforcement is full; below it is partial.
inline constexpr int max_abi = 5;
inline constexpr int full_enforcement_abi = 5;

// The kernel's Landlock ABI version (>= 1), or -errno: -ENOSYS when the kernel was built
// without Landlock, -EOPNOTSUPP when it was built with it but Landlock is disabled at boot.
[[nodiscard]] int query_abi() noexcept;

// Filesystem rights the ruleset handles for `abi` (clamped to max_abi).
[[nodiscard]] std::uint64_t handled_access(int abi) noexcept;
// Rights a --ro grant gives: execute, read file, read directory (masked by handled_access).
[[nodiscard]] std::uint64_t read_only_access(int abi) noexcept;
// The subset of rights the kernel accepts on a non-directory (directory-only bits give EINVAL).
[[nodiscard]] std::uint64_t file_access_mask() noexcept;

struct grant {
    const char* path;
    bool writable;  // --rw: every handled right; --ro: read_only_access
};

struct failure {
    launcher_stage stage;
    int error;         // errno
    const char* path;  // the grant path for open_rule_path, else nullptr
};

// Creates a ruleset handling handled_access(abi) and adds one PATH_BENEATH rule per grant (the
// path opened O_PATH|O_CLOEXEC; on a non-directory the rights are masked to file_access_mask()).
// Returns the ruleset fd (CLOEXEC), or -1 with *out filled in. Never narrows silently: a grant
// path that cannot be opened is a failure, not a skipped rule.
[[nodiscard]] int build_ruleset(int abi, const grant* grants, std::size_t count,
                                failure* out) noexcept;

// PR_SET_NO_NEW_PRIVS then landlock_restrict_self(ruleset_fd). Returns 0 or an errno. Does not
// close the fd.
[[nodiscard]] int restrict_self(int ruleset_fd) noexcept;

}  // namespace cordon::sandbox::landlock
