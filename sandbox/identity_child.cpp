// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// =================================================================================================
//  CHILD-SIDE CODE: between clone and exec (runtime/spawn_child_linux.cpp) and in cordon-landlock.
//  Async-signal-safe system calls only; no allocation, no libc state.
// =================================================================================================

#include "sandbox/identity_child.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace cordon::sandbox {

int attach_idmapped_trees(child_tree* trees, std::size_t count, int floor, const char* passwd,
                          const char* group) noexcept {
    if (count == 0 && passwd == nullptr && group == nullptr) return 0;
    if (::unshare(CLONE_NEWNS) != 0) return errno;
    // Nothing mounted here reaches the host; what the host mounts still reaches the run.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return errno;
    // The run's account, over the host's files (a host without them gets none).
    const char* const accounts[][2] = {{passwd, "/etc/passwd"}, {group, "/etc/group"}};
    for (const auto& account : accounts) {
        if (account[0] == nullptr) continue;
        if (::mount(account[0], account[1], nullptr, MS_BIND, nullptr) != 0 && errno != ENOENT) {
            return errno;
        }
    }
    // Every source is opened before anything is attached: a tree under another mapped one is
    // copied from the filesystem's own mount, never from an idmapped one (which cannot be mapped
    // twice).
    for (std::size_t i = 0; i < count; ++i) {
        const int source = ::open(trees[i].path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (source < 0) return errno;
        struct stat st {};
        const bool same = ::fstat(source, &st) == 0 && st.st_dev == trees[i].device &&
                          st.st_ino == trees[i].inode;
        int tree = -1;
        if (same) {
            // With the mounts beneath it (a home bound elsewhere, a writable root that is a
            // mount of its own), which keep their own mapping: only the top is idmapped.
            tree = static_cast<int>(
                ::syscall(SYS_open_tree, source, "",
                          AT_EMPTY_PATH | AT_RECURSIVE | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
        }
        const int error = same ? errno : ESTALE;
        ::close(source);
        if (tree < 0) return error;
        const int high = ::fcntl(tree, F_DUPFD_CLOEXEC, floor);
        const int dup_error = errno;
        ::close(tree);
        if (high < 0) return dup_error;
        trees[i].tree_fd = high;
        mount_attr attributes{};
        attributes.attr_set = MOUNT_ATTR_IDMAP | (trees[i].read_only ? MOUNT_ATTR_RDONLY : 0);
        attributes.userns_fd = static_cast<decltype(attributes.userns_fd)>(trees[i].mapping);
        if (::syscall(SYS_mount_setattr, high, "", AT_EMPTY_PATH, &attributes, sizeof attributes) !=
            0) {
            return errno;
        }
    }
    // Each goes over its own directory as the namespace shows it by then: beneath a tree
    // attached before it, not under it. The directory must still be the one planned.
    for (std::size_t i = 0; i < count; ++i) {
        const int target = ::open(trees[i].path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (target < 0) return errno;
        struct stat st {};
        int error = 0;
        if (::fstat(target, &st) != 0) {
            error = errno;
        } else if (st.st_dev != trees[i].device || st.st_ino != trees[i].inode) {
            error = ESTALE;
        } else if (::syscall(SYS_move_mount, trees[i].tree_fd, "", target, "",
                             MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
            error = errno;
        }
        ::close(target);
        if (error != 0) return error;
    }
    return 0;
}

int place_idmapped_trees(const child_tree* trees, std::size_t count) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
        if (trees[i].bind_fd >= 0 && ::dup2(trees[i].tree_fd, trees[i].bind_fd) < 0) return errno;
    }
    return 0;
}

int become(uid_t uid, gid_t gid) noexcept {
    // The switch must leave no capability: securebits that keep them across a change of uid
    // (SECBIT_KEEP_CAPS, SECBIT_NO_SETUID_FIXUP, inherited from a unit or a container) refuse it,
    // and the ambient set, which would survive it, goes first.
    const int securebits = ::prctl(PR_GET_SECUREBITS, 0L, 0L, 0L, 0L);
    if (securebits < 0) return errno;
    if (securebits != 0) return EPERM;
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L) != 0 && errno != EINVAL) {
        return errno;
    }
    int death_signal = 0;
    if (::prctl(PR_GET_PDEATHSIG, &death_signal, 0L, 0L, 0L) != 0) return errno;
    const pid_t parent = ::getppid();
    // Raw system calls: libc's wrappers would signal every thread of the process to change its
    // credentials too, and under CLONE_VM those are the parent's.
    if (::syscall(SYS_setgroups, 0, nullptr) != 0) return errno;
    if (::syscall(SYS_setresgid, gid, gid, gid) != 0) return errno;
    if (::syscall(SYS_setresuid, uid, uid, uid) != 0) return errno;
    if (death_signal != 0) {
        if (::prctl(PR_SET_PDEATHSIG, death_signal, 0L, 0L, 0L) != 0) return errno;
        if (::getppid() != parent) return ESRCH;
    }
    return 0;
}

}  // namespace cordon::sandbox
