// Landlock ruleset construction over the raw UAPI (landlock(7), kernel
// samples/landlock/sandboxer.c). Everything here may run between fork and exec: raw syscalls,
// open/fstat/close and errno only; no allocation, locks, stdio or exceptions.
#include "sandbox/landlock_ruleset.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

// Debian 12's kernel headers predate some rights; the values are UAPI and never change, so the
// launcher must not depend on how new the build machine's headers are.
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

namespace cordon::sandbox::landlock {

namespace {

// ABI 1: EXECUTE .. MAKE_SYM, bits 0..12.
constexpr std::uint64_t abi1_access = (1ULL << 13) - 1;

// Handled rights by ABI, index = ABI. ABI 4 added only network rights, which cordon does not
// handle, so its row repeats ABI 3. Rows past max_abi are reached by clamping, never by index.
constexpr std::uint64_t handled_by_abi[max_abi + 1] = {
    0,
    abi1_access,
    abi1_access | LANDLOCK_ACCESS_FS_REFER,
    abi1_access | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE,
    abi1_access | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE,
    abi1_access | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE |
        LANDLOCK_ACCESS_FS_IOCTL_DEV,
};

constexpr std::uint64_t read_only_rights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

// The kernel's ACCESS_FILE set (security/landlock/fs.c): rights that make sense on a file.
// Anything else on a non-directory rule makes landlock_add_rule fail with EINVAL.
constexpr std::uint64_t file_rights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                      LANDLOCK_ACCESS_FS_IOCTL_DEV;

// open(2) with O_PATH does not block, but a signal can still interrupt it on some filesystems
// (FUSE); retrying keeps a stray signal from turning into a spurious launcher failure.
int open_path(const char* path) noexcept {
    int fd;
    do {
        fd = ::open(path, O_PATH | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

int fail(failure* out, launcher_stage stage, int error, const char* path) noexcept {
    if (out != nullptr) {
        out->stage = stage;
        out->error = error;
        out->path = path;
    }
    return -1;
}

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

int build_ruleset(int abi, const grant* grants, std::size_t count, failure* out) noexcept {
    const std::uint64_t handled = handled_access(abi);
    // Zero-initialised: on headers with newer fields (handled_access_net, scoped) they stay 0,
    // which the kernel reads as "not handled".
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = handled;
    const long ruleset = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0U);
    if (ruleset < 0) return fail(out, launcher_stage::ruleset, errno, nullptr);
    const int ruleset_fd = static_cast<int>(ruleset);

    for (std::size_t i = 0; i < count; ++i) {
        const grant& g = grants[i];
        const int path_fd = open_path(g.path);
        if (path_fd < 0) {
            const int error = errno;
            ::close(ruleset_fd);
            return fail(out, launcher_stage::open_rule_path, error, g.path);
        }
        std::uint64_t allowed = g.writable ? handled : read_only_access(abi);
        struct stat st {};
        if (::fstat(path_fd, &st) != 0) {
            const int error = errno;
            ::close(path_fd);
            ::close(ruleset_fd);
            return fail(out, launcher_stage::open_rule_path, error, g.path);
        }
        if (!S_ISDIR(st.st_mode)) allowed &= file_rights;

        landlock_path_beneath_attr beneath{};
        beneath.allowed_access = allowed;
        beneath.parent_fd = path_fd;
        const long added =
            ::syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0U);
        if (added != 0) {
            const int error = errno;
            ::close(path_fd);
            ::close(ruleset_fd);
            return fail(out, launcher_stage::ruleset, error, nullptr);
        }
        ::close(path_fd);
    }
    return ruleset_fd;
}

int restrict_self(int ruleset_fd) noexcept {
    // no_new_privs lets an unprivileged process restrict itself and keeps a setuid binary from
    // gaining privileges the ruleset was meant to bound (landlock_restrict_self(2)).
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) return errno;
    if (::syscall(SYS_landlock_restrict_self, ruleset_fd, 0U) != 0) return errno;
    return 0;
}

}  // namespace cordon::sandbox::landlock
