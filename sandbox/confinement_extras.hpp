// What Landlock leaves ungoverned, closed by other means (libc only, async-signal-safe, usable
// between fork and exec like landlock_ruleset.hpp):
//
//   - Capabilities. A launcher started as root would hand the command every capability: chown
//     any file, load modules, remount. bwrap drops them all inside its user namespace; the
//     launcher drops them from the bounding, ambient, effective, permitted and inheritable sets,
//     so that even uid 0 execs with none (capabilities(7), "Capabilities and execution of
//     programs by root").
//   - File metadata. landlock(7): chmod, chown, utime and xattr changes are not access rights
//     Landlock handles, so a read-only command could still change the metadata of files its uid
//     owns (for root: of /etc). Under read-only, a seccomp filter makes that family of system
//     calls fail with EPERM, as bwrap's read-only bind does with EROFS. Under workspace-write it
//     is not installed (chmod inside the workspace is legitimate and seccomp cannot tell paths
//     apart), which is why a Landlock workspace-write run reports `partial`.
#pragma once

namespace cordon::sandbox::extras {

// Drops every capability; returns 0 or an errno. Without CAP_SETPCAP the bounding set cannot be
// changed; the effective, permitted, inheritable and ambient sets are emptied all the same, and
// no_new_privs (set before exec) keeps exec from granting any back, also to uid 0.
[[nodiscard]] int drop_capabilities() noexcept;

// Installs the metadata filter (needs no_new_privs or CAP_SYS_ADMIN); returns 0 or an errno.
// System calls of a foreign architecture (i386 on x86_64, x32) and ones newer than the filter
// knows fail with ENOSYS, since their numbers would otherwise slip past it. io_uring is refused
// (its operations bypass seccomp), and so are the inode-flag ioctls (chattr, fsxattr, verity).
[[nodiscard]] int deny_metadata_changes() noexcept;

}  // namespace cordon::sandbox::extras
