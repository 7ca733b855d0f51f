// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Landlock ruleset construction over the raw UAPI (landlock(7), kernel
// samples/landlock/sandboxer.c). Everything here may run between fork and exec: raw syscalls,
// open/fstat/close and errno only; no allocation, locks, stdio or exceptions.
//
// Longer than the ~500 lines a file here stays under: the child-side ruleset builder, whose
// allocation-free walk of the read grants must stay beside the rules it emits.
#include "sandbox/landlock_ruleset.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

// Debian 12's kernel headers predate some rights and the scopes; the values are UAPI and never
// change, so the launcher must not depend on how new the build machine's headers are.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace cordon::sandbox::landlock {

namespace {

// The type of what `fd` refers to, from the attributes the kernel already holds
// (AT_STATX_DONT_SYNC): a FUSE or NFS mount that stopped answering must not hang the caller,
// which may be cordon itself building the ruleset for a run's child. 0 or an errno.
int file_type(int fd, mode_t* type) noexcept {
    struct statx attributes {};
    if (::statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &attributes) != 0) {
        return errno;
    }
    *type = attributes.stx_mode & S_IFMT;
    return 0;
}

// A file's identity: which file of several names it is.
struct file_identity {
    std::uint32_t major = 0;
    std::uint32_t minor = 0;
    std::uint64_t inode = 0;
    bool operator==(const file_identity&) const = default;
};

// The type, the link count and the identity of the entry `name` of `dir` (or of `dir` itself
// when `name` is ""), as file_type() takes them. 0 or an errno.
int entry_attributes(int dir, const char* name, mode_t* type, unsigned* links,
                     file_identity* id) noexcept {
    struct statx attributes {};
    const int flags =
        (name[0] == '\0' ? AT_EMPTY_PATH : 0) | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC;
    if (::statx(dir, name, flags, STATX_TYPE | STATX_NLINK | STATX_INO, &attributes) != 0) {
        return errno;
    }
    *type = attributes.stx_mode & S_IFMT;
    *links = attributes.stx_nlink;
    *id = {attributes.stx_dev_major, attributes.stx_dev_minor, attributes.stx_ino};
    return 0;
}

// struct landlock_ruleset_attr as of ABI 6. The kernel accepts a larger struct than it knows as
// long as the fields it does not know are zero, and a smaller one as if the missing fields were
// zero (copy_struct_from_user), so one layout serves every ABI: `scoped` is only set from ABI 6.
struct ruleset_attr {
    std::uint64_t handled_access_fs;
    std::uint64_t handled_access_net;
    std::uint64_t scoped;
};

constexpr std::uint64_t scope_abstract_unix_socket = 1ULL
                                                     << 0;  // LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
constexpr std::uint64_t scope_signal = 1ULL << 1;           // LANDLOCK_SCOPE_SIGNAL

// ABI 1: EXECUTE .. MAKE_SYM, bits 0..12.
constexpr std::uint64_t abi1_access = (1ULL << 13) - 1;

// Handled rights by ABI, index = ABI. ABI 4 added only network rights, which cordon does not
// handle, so its row repeats ABI 3; ABI 6 added only scopes, so its row repeats ABI 5. Rows past
// max_abi are reached by clamping, never by index.
constexpr std::uint64_t abi3_access =
    abi1_access | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE;
constexpr std::uint64_t abi5_access = abi3_access | LANDLOCK_ACCESS_FS_IOCTL_DEV;
constexpr std::uint64_t handled_by_abi[max_abi + 1] = {
    0,           abi1_access, abi1_access | LANDLOCK_ACCESS_FS_REFER, abi3_access, abi3_access,
    abi5_access, abi5_access,
};

constexpr std::uint64_t read_only_rights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

// The kernel's ACCESS_FILE set (security/landlock/fs.c): rights that make sense on a file.
// Anything else on a non-directory rule makes landlock_add_rule fail with EINVAL.
constexpr std::uint64_t file_rights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                      LANDLOCK_ACCESS_FS_IOCTL_DEV;

int fail(failure* out, launcher_stage stage, int error, const char* path) noexcept {
    if (out != nullptr) {
        out->stage = stage;
        out->error = error;
        out->path = path;
    }
    return -1;
}

// A signal can interrupt an open on some filesystems (FUSE); retrying keeps a stray signal from
// turning into a spurious launcher failure.
int retry_open(int dirfd, const char* path, int flags) noexcept {
    int fd;
    do {
        fd = ::openat(dirfd, path, flags);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

struct linux_dirent64 {
    std::uint64_t d_ino;
    std::int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];
};

}  // namespace

int query_abi() noexcept {
    const long abi =
        ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0) return -errno;
    // The kernel never returns 0 here; if it did, nothing could be handled, so say so as an
    // error rather than hand callers an ABI that handled_access() maps to "no rights".
    if (abi == 0) return -EINVAL;
    return static_cast<int>(abi);
}

std::uint64_t handled_access(int abi) noexcept {
    if (abi < 1) return 0;
    return handled_by_abi[abi > max_abi ? max_abi : abi];
}

std::uint64_t read_only_access(int abi) noexcept {
    return read_only_rights & handled_access(abi);
}

std::uint64_t file_access_mask() noexcept {
    return file_rights;
}

std::uint64_t scopes(int abi) noexcept {
    return abi >= scopes_abi ? (scope_abstract_unix_socket | scope_signal) : 0;
}

int open_no_symlinks(const char* path, int flags) noexcept {
    open_how how{};
    how.flags = static_cast<unsigned int>(O_PATH | O_CLOEXEC | flags);
    how.resolve = RESOLVE_NO_SYMLINKS;
    long fd;
    do {
        fd = ::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    } while (fd < 0 && errno == EINTR);
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
    // Before Linux 5.6: the last component at least is never followed.
    return retry_open(AT_FDCWD, path, O_PATH | O_CLOEXEC | O_NOFOLLOW | flags);
}

int create_ruleset(int abi, failure* out) noexcept {
    ruleset_attr attr{};
    attr.handled_access_fs = handled_access(abi);
    attr.scoped = scopes(abi);
    const long ruleset = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0U);
    if (ruleset < 0) return fail(out, launcher_stage::ruleset, errno, nullptr);
    return static_cast<int>(ruleset);
}

namespace {

// The kernel denies REFER in every layer of a domain that handles any filesystem right, even in a
// layer that does not handle it (_LANDLOCK_ACCESS_FS_INITIALLY_DENIED, security/landlock/
// access.h): stacked on the filesystem ruleset, a scope or network layer with no rule would answer
// every link or rename into another directory with EXDEV. Such a layer handles REFER and grants
// it beneath "/", so that the filesystem layer alone decides; REFER alone grants nothing, and the
// filesystem layer still refuses a move that would gain a file any right. 0, or -1 with *out set.
int allow_refer_everywhere(int ruleset, failure* out) noexcept {
    const int root = retry_open(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return fail(out, launcher_stage::open_rule_path, errno, "/");
    landlock_path_beneath_attr beneath{};
    beneath.allowed_access = LANDLOCK_ACCESS_FS_REFER;
    beneath.parent_fd = root;
    const long added =
        ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0U);
    const int error = errno;
    ::close(root);
    if (added != 0) return fail(out, launcher_stage::ruleset, error, nullptr);
    return 0;
}

// Creates a ruleset from `attr` (`size` bytes of it), REFER handled and granted everywhere.
int create_refer_neutral_ruleset(ruleset_attr& attr, std::size_t size, failure* out) noexcept {
    attr.handled_access_fs = LANDLOCK_ACCESS_FS_REFER;
    const long ruleset = ::syscall(SYS_landlock_create_ruleset, &attr, size, 0U);
    if (ruleset < 0) return fail(out, launcher_stage::ruleset, errno, nullptr);
    if (allow_refer_everywhere(static_cast<int>(ruleset), out) != 0) {
        ::close(static_cast<int>(ruleset));
        return -1;
    }
    return static_cast<int>(ruleset);
}

}  // namespace

int create_scope_ruleset(int abi, failure* out) noexcept {
    ruleset_attr attr{};
    attr.scoped = scopes(abi);
    if (attr.scoped == 0) return fail(out, launcher_stage::ruleset, EOPNOTSUPP, nullptr);
    return create_refer_neutral_ruleset(attr, sizeof attr, out);
}

int create_network_ruleset(int abi, bool allow_bind, failure* out) noexcept {
    if (abi < network_abi) return fail(out, launcher_stage::ruleset, EOPNOTSUPP, nullptr);
    constexpr std::uint64_t bind_tcp = 1ULL << 0;     // LANDLOCK_ACCESS_NET_BIND_TCP
    constexpr std::uint64_t connect_tcp = 1ULL << 1;  // LANDLOCK_ACCESS_NET_CONNECT_TCP
    ruleset_attr attr{};
    attr.handled_access_net = connect_tcp | (allow_bind ? 0 : bind_tcp);
    // No scopes: the struct ends before `scoped` for the kernel's check.
    return create_refer_neutral_ruleset(attr, offsetof(ruleset_attr, scoped), out);
}

int add_fd_rule(int ruleset_fd, int abi, int target, access rights, failure* out) noexcept {
    mode_t type = 0;
    if (const int error = file_type(target, &type); error != 0) {
        return fail(out, launcher_stage::open_rule_path, error, nullptr);
    }
    std::uint64_t allowed = rights == access::write ? handled_access(abi) : read_only_access(abi);
    if (!S_ISDIR(type)) allowed &= file_rights;
    landlock_path_beneath_attr beneath{};
    beneath.allowed_access = allowed;
    beneath.parent_fd = target;
    if (::syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0U) !=
        0) {
        return fail(out, launcher_stage::ruleset, errno, nullptr);
    }
    return 0;
}

int add_path_rule(int ruleset_fd, int abi, const char* path, access rights, bool optional,
                  failure* out) noexcept {
    const int fd = open_no_symlinks(path);
    if (fd < 0) {
        if (optional && errno == ENOENT) return 0;
        return fail(out, launcher_stage::open_rule_path, errno, path);
    }
    const int result = add_fd_rule(ruleset_fd, abi, fd, rights, out);
    if (result != 0 && out != nullptr && out->stage == launcher_stage::open_rule_path) {
        out->path = path;
    }
    ::close(fd);
    return result;
}

namespace {

// True when `path` (length `length`) is `denied` itself.
bool same_path(const char* path, std::size_t length, const char* denied) noexcept {
    return std::strlen(denied) == length && std::memcmp(path, denied, length) == 0;
}

// True when `denied` lies beneath `path` (length `length`).
bool holds(const char* path, std::size_t length, const char* denied) noexcept {
    // The root holds everything; any other directory holds what continues after a '/'.
    if (length == 1 && path[0] == '/') return denied[0] == '/' && denied[1] != '\0';
    return std::strncmp(denied, path, length) == 0 && denied[length] == '/' &&
           denied[length + 1] != '\0';
}

// The files of several names among the denied paths and what the denied directories hold, a few
// levels deep and a few thousand entries in all: another name of one, in a directory on the way,
// gets no grant (a grant is on the inode). Where more of them are found than fit, every file of
// several names on the way goes ungranted. A deeper file, or one past the entries looked at (a
// browser's profile), is not looked for: docs/sandbox.md says so.
inline constexpr std::size_t most_linked = 512;
inline constexpr std::size_t most_looked_at = 8192;
inline constexpr int linked_depth = 4;

struct linked_files {
    file_identity ids[most_linked];
    std::size_t count = 0;
    std::size_t looked_at = 0;
    bool every = false;      // more than fit: no file of several names on the way is granted
    bool collected = false;  // looked for, at the first file of several names on the way

    void add(const file_identity& id) noexcept {
        if (count == most_linked) {
            every = true;
            return;
        }
        ids[count++] = id;
    }
    [[nodiscard]] bool holds(const file_identity& id) const noexcept {
        if (every) return true;
        for (std::size_t i = 0; i < count; ++i) {
            if (ids[i] == id) return true;
        }
        return false;
    }
};

struct read_walk {
    int ruleset_fd;
    int abi;
    const char* const* denied;
    std::size_t denied_count;
    failure* out;
    char path[4096];
    linked_files* linked;

    // Whether the file `id`, of several names, is a denied one: the denied paths are looked at
    // the first time a file of several names is met on the way (most walks meet none, and pay
    // nothing).
    bool other_name(const file_identity& id) noexcept;
};

// Listing only, for a directory that holds a denied path.
int add_listing_rule(read_walk& walk, int dir) noexcept {
    landlock_path_beneath_attr listing{};
    listing.allowed_access = read_only_access(walk.abi) & LANDLOCK_ACCESS_FS_READ_DIR;
    listing.parent_fd = dir;
    if (::syscall(SYS_landlock_add_rule, walk.ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &listing,
                  0U) != 0) {
        return fail(walk.out, launcher_stage::ruleset, errno, nullptr);
    }
    return 0;
}

// Grants read on every entry of the directory open as `dir` (whose path is walk.path, `length`
// long) except the denied ones; an entry that holds a denied path is given listing only and
// walked in turn. Symlinks get no rule: what they lead to has its own.
int read_entries(read_walk& walk, int dir, std::size_t length) noexcept {
    alignas(linux_dirent64) char buffer[4096];
    for (;;) {
        const long got = ::syscall(SYS_getdents64, dir, buffer, sizeof buffer);
        if (got == 0) return 0;
        if (got < 0) {
            if (errno == EINTR) continue;
            return fail(walk.out, launcher_stage::open_rule_path, errno, walk.path);
        }
        for (long at = 0; at < got;) {
            const auto* entry = reinterpret_cast<const linux_dirent64*>(buffer + at);
            at += entry->d_reclen;
            const char* name = entry->d_name;
            if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
            // walk.path + "/" + name, restored before the next entry.
            const std::size_t name_length = std::strlen(name);
            const std::size_t sep = length == 1 ? 0 : 1;
            if (length + sep + name_length + 1 > sizeof walk.path) {
                return fail(walk.out, launcher_stage::open_rule_path, ENAMETOOLONG, walk.path);
            }
            if (sep != 0) walk.path[length] = '/';
            std::memcpy(walk.path + length + sep, name, name_length + 1);
            const std::size_t child_length = length + sep + name_length;
            bool denied = false;
            bool holds_denied = false;
            for (std::size_t i = 0; i < walk.denied_count; ++i) {
                denied = denied || same_path(walk.path, child_length, walk.denied[i]);
                holds_denied = holds_denied || holds(walk.path, child_length, walk.denied[i]);
            }
            int result = 0;
            if (!denied) {
                const int fd = retry_open(dir, name, O_PATH | O_CLOEXEC | O_NOFOLLOW);
                mode_t type = 0;
                unsigned links = 0;
                file_identity id;
                if (fd < 0) {
                    // Gone since the listing: nothing to grant.
                    if (errno != ENOENT) {
                        result = fail(walk.out, launcher_stage::open_rule_path, errno, "/");
                    }
                } else if (entry_attributes(fd, "", &type, &links, &id) != 0 || S_ISLNK(type)) {
                    // Nothing to grant: a symlink leads to another entry, with its own rule.
                } else if (!S_ISDIR(type) && links > 1 && walk.other_name(id)) {
                    // Another name of a denied file (`ln ~/.ssh/id_ed25519 ~/notes`, made on the
                    // host): a grant is on the inode, and would open it. Not granted.
                } else if (holds_denied && S_ISDIR(type)) {
                    result = add_listing_rule(walk, fd);
                    if (result == 0) {
                        const int listed =
                            retry_open(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        if (listed < 0 && (errno == EACCES || errno == EPERM)) {
                            // A directory this process may not list (another user's, for a
                            // cordon that is not root, or for the run's own id under bwrap):
                            // nothing beneath it is granted, which is never more than it may
                            // read.
                        } else if (listed < 0) {
                            result = fail(walk.out, launcher_stage::open_rule_path, errno, "/");
                        } else {
                            result = read_entries(walk, listed, child_length);
                            ::close(listed);
                        }
                    }
                } else {
                    result = add_fd_rule(walk.ruleset_fd, walk.abi, fd, access::read, walk.out);
                }
                if (fd >= 0) ::close(fd);
            }
            walk.path[length] = '\0';
            if (result != 0) return result;
        }
    }
}

// The files of several names at `name` of `dir` (a denied path, or an entry of a denied
// directory) and beneath it, `depth` levels at most.
void collect_linked(linked_files& linked, int dir, const char* name, int depth) noexcept {
    if (linked.every || ++linked.looked_at > most_looked_at) return;
    mode_t type = 0;
    unsigned links = 0;
    file_identity id;
    struct statx attributes {};
    if (::statx(dir, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MODE,
                &attributes) == 0 &&
        depth == linked_depth &&
        (((attributes.stx_mode & 07777) == 0 &&
          (S_ISDIR(attributes.stx_mode) || S_ISREG(attributes.stx_mode))) ||
         ((attributes.stx_mode & 07777) == 0111 && S_ISDIR(attributes.stx_mode)))) {
        // A denied path bwrap has already covered with its mask (mode 0000, or 0111 where an
        // allowed path is bound back into it): the file behind it is out of sight here, and so
        // is which file another name is. Every file of several names on the way goes ungranted.
        linked.every = true;
        return;
    }
    if (entry_attributes(dir, name, &type, &links, &id) != 0) return;  // not there: nothing
    if (!S_ISDIR(type)) {
        if (links > 1) linked.add(id);
        return;
    }
    if (depth == 0) return;
    const int listed = retry_open(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (listed < 0) return;
    alignas(linux_dirent64) char buffer[2048];
    for (;;) {
        const long got = ::syscall(SYS_getdents64, listed, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        for (long at = 0; at < got && !linked.every && linked.looked_at <= most_looked_at;) {
            const auto* entry = reinterpret_cast<const linux_dirent64*>(buffer + at);
            at += entry->d_reclen;
            if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0)
                continue;
            collect_linked(linked, listed, entry->d_name, depth - 1);
        }
        if (linked.every || linked.looked_at > most_looked_at) break;
    }
    ::close(listed);
}

bool read_walk::other_name(const file_identity& id) noexcept {
    if (!linked->collected) {
        linked->collected = true;
        // denied[0] is /dev, granted node by node by the caller: not a file's other name.
        for (std::size_t i = 1; i < denied_count; ++i)
            collect_linked(*linked, AT_FDCWD, denied[i], linked_depth);
    }
    return linked->holds(id);
}

}  // namespace

int add_root_read_rules(int ruleset_fd, int abi, const char* const* denied,
                        std::size_t denied_count, failure* out) noexcept {
    // /dev is denied like any other path: devices are granted node by node by the caller.
    const char* all[max_denied_reads + 1];
    if (denied_count > max_denied_reads) {
        return fail(out, launcher_stage::open_rule_path, E2BIG, nullptr);
    }
    all[0] = "/dev";
    for (std::size_t i = 0; i < denied_count; ++i)
        all[i + 1] = denied[i];
    // What the denied paths are, by identity, before anything is granted.
    // On the caller's stack (8 KiB): a static would be shared by the threads of a library host
    // that confine runs at once.
    linked_files linked;
    read_walk walk{ruleset_fd, abi, all, denied_count + 1, out, {}, &linked};
    walk.path[0] = '/';
    walk.path[1] = '\0';
    const int root = retry_open(AT_FDCWD, "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return fail(out, launcher_stage::open_rule_path, errno, "/");
    // The root itself: listing only. A read right on "/" would cover /dev beneath it.
    int result = add_listing_rule(walk, root);
    if (result == 0) result = read_entries(walk, root, 1);
    ::close(root);
    return result;
}

int restrict_self(int ruleset_fd) noexcept {
    // no_new_privs lets an unprivileged process restrict itself and keeps a setuid binary from
    // gaining privileges the ruleset was meant to bound (landlock_restrict_self(2)).
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) return errno;
    if (::syscall(SYS_landlock_restrict_self, ruleset_fd, 0U) != 0) return errno;
    return 0;
}

}  // namespace cordon::sandbox::landlock
