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
};

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
    // kernel's capability list; EPERM means we lack CAP_SETPCAP, i.e. hold no capabilities.
    for (unsigned long cap = 0; cap < 64; ++cap) {
        if (::prctl(PR_CAPBSET_DROP, cap, 0L, 0L, 0L) != 0) {
            if (errno == EINVAL) break;
            if (errno == EPERM) return 0;
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
    // [load arch] [arch ok?] [load nr] [x32?] then one test per system call, then allow.
    sock_filter program[5 + metadata_count + 2];
    std::size_t n = 0;
    program[n++] = statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
    program[n++] = jump(BPF_JMP | BPF_JEQ | BPF_K, native_arch, 1, 0);
    program[n++] = statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    program[n++] = statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
    // x32 system calls carry bit 30; their numbers would alias the native ones.
    program[n++] = jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U,
                        static_cast<std::uint8_t>(metadata_count + 1), 0);
#else
    program[n++] = jump(BPF_JMP | BPF_JA, 0, 0, 0);
#endif
    for (std::size_t i = 0; i < metadata_count; ++i) {
        // Match: jump over the remaining tests and the allow, onto the deny.
        auto remaining = static_cast<std::uint8_t>(metadata_count - i);
        program[n++] = jump(BPF_JMP | BPF_JEQ | BPF_K,
                            static_cast<std::uint32_t>(metadata_syscalls[i]), remaining, 0);
    }
    program[n++] = statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    program[n++] = statement(BPF_RET | BPF_K, deny);

    sock_fprog fprog{static_cast<unsigned short>(n), program};
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0L, 0L) != 0) return errno;
    return 0;
}

}  // namespace cordon::sandbox::extras
