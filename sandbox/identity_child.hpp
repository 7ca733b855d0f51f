// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The child side of a run's identity (identity.hpp): libc only and async-signal-safe, for the
// spawn child between clone and exec and for cordon-landlock.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace cordon::sandbox {

// Child side: async-signal-safe, no allocation; writes only the caller's own state and the
// `trees` array's tree_fd fields, which the parent sized for it and never reads.
struct child_tree {
    const char* path;
    dev_t device;
    ino_t inode;
    int mapping;  // the user namespace fd
    int bind_fd;
    bool read_only;
    int tree_fd;  // written by the child
};

// Makes the calling process a mount namespace of its own (a slave of the host's) and attaches
// each tree idmapped over itself, in order; the trees keep their fds in tree_fd, above `floor`.
// `passwd` and `group` (or null) are bound over /etc/passwd and /etc/group. Nothing without a
// tree or an account file. Returns 0 or an errno.
[[nodiscard]] int attach_idmapped_trees(child_tree* trees, std::size_t count, int floor,
                                        const char* passwd = nullptr,
                                        const char* group = nullptr) noexcept;

// Puts each attached tree at its bind_fd, once the fds are placed (the trees' own fds are
// close-on-exec).
[[nodiscard]] int place_idmapped_trees(const child_tree* trees, std::size_t count) noexcept;

// Drops the supplementary groups and switches every uid and gid to `uid` and `gid`, keeping the
// parent-death signal the process had (a change of credentials clears it). The kernel then clears
// every capability: refused (EPERM) where securebits would keep them; the ambient set is cleared
// first. Returns 0 or an errno (ESRCH: the parent died meanwhile).
[[nodiscard]] int become(uid_t uid, gid_t gid) noexcept;

}  // namespace cordon::sandbox
