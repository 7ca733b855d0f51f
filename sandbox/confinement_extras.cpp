// See confinement_extras.hpp. Raw prctl/capset/seccomp only: no allocation, no libc state.
#include "sandbox/confinement_extras.hpp"

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace cordon::sandbox::extras {

namespace {

#if defined(__x86_64__)
constexpr std::uint32_t native_arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t native_arch = AUDIT_ARCH_AARCH64;
#else
#error "cordon's metadata filter knows x86_64 and aarch64 only"
#endif

// The metadata family. Numbers from 424 on are shared by every architecture; older ones come
// from <sys/syscall.h> where the architecture has them (aarch64 has only the *at forms).
constexpr long metadata_syscalls[] = {
#ifdef SYS_chmod
    SYS_chmod,
#endif
#ifdef SYS_chown
    SYS_chown,
#endif
#ifdef SYS_lchown
    SYS_lchown,
#endif
#ifdef SYS_utime
    SYS_utime,
#endif
#ifdef SYS_utimes
    SYS_utimes,
#endif
#ifdef SYS_futimesat
    SYS_futimesat,
#endif
    SYS_fchmod,    SYS_fchmodat,  SYS_fchown,      SYS_fchownat,     SYS_utimensat,    SYS_setxattr,
    SYS_lsetxattr, SYS_fsetxattr, SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr,
    452,  // fchmodat2 (Linux 6.6)
    463,  // setxattrat (Linux 6.13)
    466,  // removexattrat (Linux 6.13)
    469,  // file_setattr (Linux 6.17)
    // io_uring submits its operations (IORING_OP_FSETXATTR, ...) without passing this filter.
    SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
};

// System calls newer than the highest number this filter was written against are refused with
// ENOSYS (callers fall back to older calls), so a future metadata call cannot slip through.
constexpr std::uint32_t highest_known_syscall = 469;

// ioctls that change inode flags or attributes on a read-only fd: chattr's FS_IOC_SETFLAGS (and
// its 32-bit spelling), FS_IOC_FSSETXATTR, and fs-verity's FS_IOC_ENABLE_VERITY.
constexpr std::uint32_t metadata_ioctls[] = {
    0x40086602U,  // FS_IOC_SETFLAGS   _IOW('f', 2, long)
    0x40046602U,  // FS_IOC32_SETFLAGS _IOW('f', 2, int)
    0x401c5820U,  // FS_IOC_FSSETXATTR _IOW('X', 32, struct fsxattr)
    0x40806685U,  // FS_IOC_ENABLE_VERITY _IOW('f', 133, struct fsverity_enable_arg)
};
constexpr std::size_t ioctl_count = sizeof metadata_ioctls / sizeof metadata_ioctls[0];

constexpr std::size_t metadata_count = sizeof metadata_syscalls / sizeof metadata_syscalls[0];

constexpr sock_filter statement(std::uint16_t code, std::uint32_t k) {
    return sock_filter{code, 0, 0, k};
}
constexpr sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    return sock_filter{code, jt, jf, k};
}

}  // namespace

int drop_capabilities() noexcept {
    // The bounding set first: it caps what any later exec can gain. EINVAL marks the end of the
    // kernel's capability list. EPERM means CAP_SETPCAP is missing, which says nothing about the
    // other capabilities (a container may drop only SETPCAP): the bounding set then stays, and
    // the capset below plus no_new_privs (set before exec) keep uid 0 from regaining any.
    for (unsigned long cap = 0; cap < 64; ++cap) {
        if (::prctl(PR_CAPBSET_DROP, cap, 0L, 0L, 0L) != 0) {
            if (errno == EINVAL || errno == EPERM) break;
            return errno;
        }
    }
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L) != 0 && errno != EINVAL) {
        return errno;
    }
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capset, &header, data) != 0) return errno;
    return 0;
}

int deny_metadata_changes() noexcept {
    constexpr std::uint32_t deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    constexpr std::uint32_t unknown = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
    // Layout, by index:
    //   0 load arch; 1 native? -> 3; 2 jump to ENOSYS (a foreign architecture)
    //   3 load nr;   4 x32 (bit 30) or newer than known -> ENOSYS
    //   5 not ioctl -> first system-call test
    //   6 load args[1] (the request, low word); one test per ioctl -> deny; load nr
    //   then one test per system call -> deny; allow; deny; ENOSYS
    constexpr std::size_t ioctl_block = 1 + ioctl_count + 1;
    constexpr std::size_t size = 6 + ioctl_block + metadata_count + 3;
    constexpr std::size_t allow_at = size - 3, deny_at = size - 2, enosys_at = size - 1;
    sock_filter program[size];
    std::size_t n = 0;
    // A conditional jump's offsets count the instructions between it and its target.
    const auto offset = [&n](std::size_t target) { return static_cast<std::uint8_t>(target - n - 1); };
    const auto emit = [&program, &n](sock_filter instruction) { program[n++] = instruction; };
    const auto load = [&emit](std::size_t field) {
        emit(statement(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(field)));
    };

    load(offsetof(seccomp_data, arch));
    emit(jump(BPF_JMP | BPF_JEQ | BPF_K, native_arch, 1, 0));
    emit(statement(BPF_JMP | BPF_JA, static_cast<std::uint32_t>(enosys_at - n - 1)));
    load(offsetof(seccomp_data, nr));
    emit(jump(BPF_JMP | BPF_JGT | BPF_K, highest_known_syscall, offset(enosys_at), 0));
    emit(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, static_cast<std::uint8_t>(ioctl_block)));
    load(offsetof(seccomp_data, args[1]));  // little-endian: the low word comes first
    for (std::uint32_t request : metadata_ioctls) {
        emit(jump(BPF_JMP | BPF_JEQ | BPF_K, request, offset(deny_at), 0));
    }
    load(offsetof(seccomp_data, nr));
    for (long nr : metadata_syscalls) {
        emit(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), offset(deny_at), 0));
    }
    emit(statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    emit(statement(BPF_RET | BPF_K, deny));
    emit(statement(BPF_RET | BPF_K, unknown));
    static_assert(allow_at + 3 == size);

    sock_fprog fprog{static_cast<unsigned short>(n), program};
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0L, 0L) != 0) return errno;
    return 0;
}

}  // namespace cordon::sandbox::extras
