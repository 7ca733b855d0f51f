// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// See confinement_extras.hpp. Raw prctl/capset/seccomp/unshare only: no allocation, no libc state.
//
// Longer than the ~500 lines a file here stays under: the seccomp filter's program is one table
// of system calls and the arguments each is refused on, read as a whole.
#include "sandbox/confinement_extras.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/ioprio.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cordon::sandbox::extras {

namespace {

#if defined(__x86_64__)
constexpr std::uint32_t native_arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t native_arch = AUDIT_ARCH_AARCH64;
#else
#error "cordon's seccomp filter knows x86_64 and aarch64 only"
#endif

constexpr std::uint32_t allow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t eperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
constexpr std::uint32_t enosys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);

// System calls newer than the highest number this filter was written against are refused with
// ENOSYS (callers fall back to older calls), so that a future call in one of the refused families
// cannot slip through. 469 is file_setattr (Linux 6.17).
constexpr std::uint32_t highest_known_syscall = 469;

// The metadata family. Numbers from 424 on are shared by every architecture; older ones come
// from <sys/syscall.h> where the architecture has them (aarch64 has only the *at forms).
constexpr long metadata_calls[] = {
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
};

// Under read-only, ioctl is an allowlist: Landlock does not govern ioctls on regular files and
// directories (only on devices, from ABI 5), and filesystems keep adding ones that change an
// inode through a read-only fd (chattr's FS_IOC_SETFLAGS, FS_IOC_SETVERSION, ext4's SETVERSION,
// fs-verity, btrfs snapshots that bypass the path hooks). Allowed: the terminal and socket
// families (0x54xx, 0x89xx: their setters act on the caller's own tty or socket, or need a
// capability nobody here holds), the FIO* descriptor flags among them, and the inode getters.
constexpr std::uint32_t read_only_ioctls[] = {
    0x80086601U,  // FS_IOC_GETFLAGS
    0x80046601U,  // FS_IOC32_GETFLAGS
    0x80087601U,  // FS_IOC_GETVERSION
    0x80047601U,  // FS_IOC32_GETVERSION
    0x801c581fU,  // FS_IOC_FSGETXATTR
    0xc020660bU,  // FS_IOC_FIEMAP
    0x81009431U,  // FS_IOC_GETFSLABEL
    0x80111500U,  // FS_IOC_GETFSUUID
    0x00000002U,  // FIGETBSZ
    0x00005460U,  // FIOQSIZE
};
constexpr std::uint32_t read_only_ioctl_families[] = {
    0x5400U,  // terminals (TCGETS, TIOCGWINSZ, ...) and FIONREAD, FIONBIO, FIOCLEX, FIOASYNC
    0x8900U,  // sockets (SIOCGIF*, SIOCGSTAMP, ...)
};

// Refused in every confined mode (see the header for why): typing into a terminal, a console's
// paste.
constexpr std::uint32_t terminal_input_ioctls[] = {TIOCSTI, TIOCLINUX};

// Refused in every confined mode (see the header for why).
constexpr long refused_calls[] = {
    SYS_add_key,        SYS_request_key,    SYS_keyctl,
    SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
};

constexpr long sysv_ipc_calls[] = {
    SYS_shmget,    SYS_shmat,         SYS_shmdt,        SYS_shmctl,
    SYS_semget,    SYS_semop,         SYS_semtimedop,   SYS_semctl,
    SYS_msgget,    SYS_msgsnd,        SYS_msgrcv,       SYS_msgctl,
    SYS_mq_open,   SYS_mq_unlink,     SYS_mq_timedsend, SYS_mq_timedreceive,
    SYS_mq_notify, SYS_mq_getsetattr,
#ifdef SYS_ipc
    SYS_ipc,
#endif
};

// Setting the set-user-ID or set-group-ID bit: a root command would otherwise leave a setuid-root
// program behind in its workspace, a privilege escalation for every local user once it ended.
// {call, index of the mode argument}; open/openat only matter with O_CREAT or O_TMPFILE.
constexpr std::uint32_t setid_bits = S_ISUID | S_ISGID;
struct mode_argument {
    long call;
    unsigned index;
};
constexpr mode_argument setid_modes[] = {
#ifdef SYS_chmod
    {SYS_chmod, 1},
#endif
#ifdef SYS_creat
    {SYS_creat, 1},
#endif
#ifdef SYS_mknod
    {SYS_mknod, 1},
#endif
    {SYS_fchmod, 1},  {SYS_fchmodat, 2}, {452, 2},  // fchmodat2 (Linux 6.6)
    {SYS_mknodat, 2},
};
// O_TMPFILE without the O_DIRECTORY bit it carries, so that a plain O_DIRECTORY open never counts.
constexpr std::uint32_t creating = O_CREAT | 020000000;

// Calls whose first argument names a process, allowed on the caller itself (0) only.
constexpr long self_only_calls[] = {
    SYS_prlimit64,     SYS_sched_setscheduler, SYS_sched_setparam,
    SYS_sched_setattr, SYS_sched_setaffinity,
};

constexpr std::uint32_t sysno(long nr) {
    return static_cast<std::uint32_t>(nr);
}

// A seccomp-BPF program built in place. Every rule is a block that starts with the system call
// number in the accumulator and either returns or falls through to the next block with the
// number loaded again, so that the blocks compose in any order, none can shadow another, and no
// jump is long.
class program {
public:
    [[nodiscard]] bool full() const noexcept { return overflow_; }
    [[nodiscard]] sock_fprog fprog() noexcept {
        return sock_fprog{static_cast<unsigned short>(size_), code_};
    }

    void load_arch() noexcept { load(offsetof(seccomp_data, arch)); }
    void load_nr() noexcept { load(offsetof(seccomp_data, nr)); }
    // The low word of an argument: on both little-endian targets it comes first, and the kernel
    // reads int, mode_t and pid_t arguments from it alone.
    void load_arg(unsigned index) noexcept {
        load(offsetof(seccomp_data, args) + index * sizeof(std::uint64_t));
    }
    void ret(std::uint32_t action) noexcept { emit(stmt(BPF_RET | BPF_K, action)); }
    void jump_eq(std::uint32_t value, std::uint8_t jt, std::uint8_t jf) noexcept {
        emit(jmp(BPF_JMP | BPF_JEQ | BPF_K, value, jt, jf));
    }
    void jump_gt(std::uint32_t value, std::uint8_t jt, std::uint8_t jf) noexcept {
        emit(jmp(BPF_JMP | BPF_JGT | BPF_K, value, jt, jf));
    }
    void jump_set(std::uint32_t bits, std::uint8_t jt, std::uint8_t jf) noexcept {
        emit(jmp(BPF_JMP | BPF_JSET | BPF_K, bits, jt, jf));
    }
    void jump_always(std::uint32_t offset) noexcept {
        emit(stmt(BPF_JMP | BPF_JA | BPF_K, offset));
    }

    // nr == call: `action`.
    void refuse(long call, std::uint32_t action) noexcept {
        jump_eq(sysno(call), 0, 1);
        ret(action);
    }
    // nr == call: `action` unless argument `index` is 0.
    void refuse_unless_zero(long call, unsigned index, std::uint32_t action) noexcept {
        jump_eq(sysno(call), 0, 4);
        load_arg(index);
        jump_eq(0, 1, 0);
        ret(action);
        load_nr();
    }
    // nr == call: `action` unless argument 0 is `which` and argument 1 is 0 (the caller itself).
    void refuse_unless_self(long call, std::uint32_t which, std::uint32_t action) noexcept {
        jump_eq(sysno(call), 0, 6);
        load_arg(0);
        jump_eq(which, 0, 2);
        load_arg(1);
        jump_eq(0, 1, 0);
        ret(action);
        load_nr();
    }
    // nr == call: `action` when argument `index` (its low 32 bits) is `value`.
    void refuse_argument(long call, unsigned index, std::uint32_t value,
                         std::uint32_t action) noexcept {
        jump_eq(sysno(call), 0, 4);
        load_arg(index);
        jump_eq(value, 0, 1);
        ret(action);
        load_nr();
    }
    // nr == call: `action` when any of `bits` is set in argument `index`.
    void refuse_flags(long call, unsigned index, std::uint32_t bits,
                      std::uint32_t action) noexcept {
        jump_eq(sysno(call), 0, 4);
        load_arg(index);
        jump_set(bits, 0, 1);
        ret(action);
        load_nr();
    }
    // nr == call: `action` when any of `when_bits` is set in argument `when` and any of `bits`
    // in argument `index`.
    void refuse_flags_when(long call, unsigned when, std::uint32_t when_bits, unsigned index,
                           std::uint32_t bits, std::uint32_t action) noexcept {
        jump_eq(sysno(call), 0, 6);
        load_arg(when);
        jump_set(when_bits, 0, 3);
        load_arg(index);
        jump_set(bits, 0, 1);
        ret(action);
        load_nr();
    }
    // nr == ioctl: `action` unless the request (argument 1) is one of `requests` or its high
    // bytes (request & 0xffffff00) are one of `families`.
    template <std::size_t N, std::size_t F>
    void refuse_ioctls_except(const std::uint32_t (&requests)[N],
                              const std::uint32_t (&families)[F], std::uint32_t action) noexcept {
        // Body: load, N tests, and, F tests, ret, load_nr. A match jumps to the final load_nr.
        jump_eq(sysno(SYS_ioctl), 0, static_cast<std::uint8_t>(N + F + 4));
        load_arg(1);
        for (std::size_t i = 0; i < N; ++i) {
            jump_eq(requests[i], static_cast<std::uint8_t>(N - i + F + 1), 0);
        }
        emit(stmt(BPF_ALU | BPF_AND | BPF_K, 0xffffff00U));
        for (std::size_t i = 0; i < F; ++i) {
            jump_eq(families[i], static_cast<std::uint8_t>(F - i), 0);
        }
        ret(action);
        load_nr();
    }

    // nr == socket: `action` for the families the options refuse (argument 0), except, with
    // allow_streams, AF_INET and AF_INET6 of type SOCK_STREAM (argument 1, flags masked off) and
    // protocol 0 or IPPROTO_TCP (argument 2): not MPTCP, which Landlock's TCP rights may not see.
    // With `namespaced_only` instead of other_families: every family but AF_INET, AF_INET6 and
    // AF_NETLINK (and AF_UNIX, decided by `unix_family`).
    void refuse_sockets(bool unix_family, bool other_families, bool allow_streams,
                        bool namespaced_only, std::uint32_t action) noexcept {
        // After the first jump: load, unix test, unix verdict, `others`, load_nr. A mismatch on
        // the number skips the final load_nr too: the number is still loaded.
        std::uint8_t others = 0;
        if (other_families) others = allow_streams ? 9 : 1;
        if (!other_families && namespaced_only) others = 4;
        jump_eq(sysno(SYS_socket), 0, static_cast<std::uint8_t>(3 + others + 1));
        load_arg(0);
        jump_eq(AF_UNIX, 0, 1);
        if (unix_family) {
            ret(action);
        } else {
            jump_always(others);  // to the final load_nr
        }
        if (other_families) {
            if (allow_streams) {
                jump_eq(AF_INET, 1, 0);
                jump_eq(AF_INET6, 0, 6);
                load_arg(1);
                emit(stmt(BPF_ALU | BPF_AND | BPF_K, 0xfU));  // the type without its flags
                jump_eq(SOCK_STREAM, 0, 3);
                load_arg(2);
                jump_eq(0, 2, 0);
                jump_eq(IPPROTO_TCP, 1, 0);
            }
            ret(action);
        } else if (namespaced_only) {
            jump_eq(AF_INET, 3, 0);  // to the final load_nr
            jump_eq(AF_INET6, 2, 0);
            jump_eq(AF_NETLINK, 1, 0);
            ret(action);
        }
        load_nr();
    }

    // nr == call: `action` when argument 1 is `level` and argument 2 is `option` (setsockopt).
    void refuse_option(long call, std::uint32_t level, std::uint32_t option,
                       std::uint32_t action) noexcept {
        jump_eq(sysno(call), 0, 6);
        load_arg(1);
        jump_eq(level, 0, 3);  // to the final load_nr
        load_arg(2);
        jump_eq(option, 0, 1);
        ret(action);
        load_nr();
    }

    // nr == socketpair: `action` unless the family (argument 0) is AF_UNIX (AF_TIPC makes pairs
    // too, of sockets that are the host's network where there is no namespace) and, with
    // `streams_only`, the type (argument 1, flags masked off) is SOCK_STREAM or SOCK_SEQPACKET:
    // an allowlist, because AF_UNIX turns SOCK_RAW into SOCK_DGRAM, and a datagram socket may
    // sendto() or connect() to any named one.
    void refuse_socketpairs(bool streams_only, std::uint32_t action) noexcept {
        // After the first jump: load, family test, verdict, (load, and, two type tests,
        // verdict), load_nr. A mismatch on the number skips the final load_nr too.
        jump_eq(sysno(SYS_socketpair), 0, streams_only ? 9 : 4);
        load_arg(0);
        jump_eq(AF_UNIX, 1, 0);
        ret(action);
        if (streams_only) {
            load_arg(1);
            emit(stmt(BPF_ALU | BPF_AND | BPF_K, 0xfU));  // the type without its flags
            jump_eq(SOCK_STREAM, 2, 0);                   // to the final load_nr
            jump_eq(SOCK_SEQPACKET, 1, 0);
            ret(action);
        }
        load_nr();
    }

private:
    static constexpr std::size_t capacity = filter_program::capacity;

    static constexpr sock_filter stmt(std::uint16_t code, std::uint32_t k) {
        return sock_filter{code, 0, 0, k};
    }
    static constexpr sock_filter jmp(std::uint16_t code, std::uint32_t k, std::uint8_t jt,
                                     std::uint8_t jf) {
        return sock_filter{code, jt, jf, k};
    }
    void load(std::size_t offset) noexcept {
        emit(stmt(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offset)));
    }
    void emit(sock_filter instruction) noexcept {
        if (size_ == capacity) {
            overflow_ = true;
            return;
        }
        code_[size_++] = instruction;
    }

    sock_filter code_[capacity];
    std::size_t size_ = 0;
    bool overflow_ = false;
};

}  // namespace

int drop_bounding_set() noexcept {
    // EINVAL marks the end of the kernel's capability list. EPERM means CAP_SETPCAP is missing,
    // which says nothing about the other capabilities (a container may drop only SETPCAP): the
    // bounding set then stays, and the capset of drop_capabilities() plus no_new_privs (set
    // before exec) keep uid 0 from regaining any.
    for (unsigned long cap = 0; cap < 64; ++cap) {
        if (::prctl(PR_CAPBSET_DROP, cap, 0L, 0L, 0L) != 0) {
            if (errno == EINVAL || errno == EPERM) break;
            return errno;
        }
    }
    return 0;
}

int drop_capabilities() noexcept {
    // The bounding set first: it caps what any later exec can gain.
    if (const int error = drop_bounding_set(); error != 0) return error;
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L) != 0 && errno != EINVAL) {
        return errno;
    }
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capset, &header, data) != 0) return errno;
    return 0;
}

int private_ipc_namespace() noexcept {
    if (::unshare(CLONE_NEWIPC) != 0) return errno;
    return 0;
}

int private_network_namespace() noexcept {
    if (::unshare(CLONE_NEWNET) != 0) return errno;
    // The new namespace's loopback is down: up, it has 127.0.0.1 and ::1 of its own.
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    ifreq request{};
    std::memcpy(request.ifr_name, "lo", 3);
    int error = 0;
    if (::ioctl(fd, SIOCGIFFLAGS, &request) != 0) {
        error = errno;
    } else {
        request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
        if (::ioctl(fd, SIOCSIFFLAGS, &request) != 0) error = errno;
    }
    ::close(fd);
    return error;
}

int build_filter(const filter_options& options, filter_program& out) noexcept {
    program p;
    p.load_arch();
    p.jump_eq(native_arch, 1, 0);
    p.ret(enosys);
    p.load_nr();
    // x32 numbers carry bit 30 and are therefore also above the highest known number.
    p.jump_gt(highest_known_syscall, 0, 1);
    p.ret(enosys);

    p.refuse(SYS_clone3, enosys);
    p.refuse(SYS_io_setup, enosys);
    // openat2 carries its mode in a struct the filter cannot read; libc falls back to openat.
    p.refuse(SYS_openat2, enosys);
    for (const mode_argument& m : setid_modes)
        p.refuse_flags(m.call, m.index, setid_bits, eperm);
#ifdef SYS_open
    p.refuse_flags_when(SYS_open, 1, creating, 2, setid_bits, eperm);
#endif
    p.refuse_flags_when(SYS_openat, 2, creating, 3, setid_bits, eperm);
    // CLONE_PARENT would make the child cordon's own (under the Landlock rung, the command is
    // cordon's child): cordon reaps only the command, so every such child would stay a zombie
    // of a long-lived host until it exits, and enough of them use up the host's pids.
    p.refuse_flags(SYS_clone, 0, CLONE_NEWUSER | CLONE_PARENT, eperm);
    p.refuse_flags(SYS_unshare, 0, CLONE_NEWUSER, eperm);
    // A terminal's input is not the command's to write: TIOCSTI would type into whatever
    // terminal it holds, TIOCLINUX drive a virtual console (paste, console switching). The
    // kernel compares the request as an unsigned int (fs/ioctl.c), the filter its low 32 bits.
    for (const std::uint32_t request : terminal_input_ioctls)
        p.refuse_argument(SYS_ioctl, 1, request, eperm);
    // A lease stalls every other opener of the file for the lease-break time (45 s by default)
    // and needs only ownership: the command owns its workspace's files (docs/sandbox.md,
    // "Identity"), which cordon reads to plan the next run (git configurations), and whatever
    // else its uid owns. Nothing a command needs takes one.
    p.refuse_argument(SYS_fcntl, 1, F_SETLEASE, eperm);
    for (long call : refused_calls)
        p.refuse(call, eperm);
    for (long call : self_only_calls)
        p.refuse_unless_zero(call, 0, eperm);
    p.refuse_unless_self(SYS_setpriority, PRIO_PROCESS, eperm);
    p.refuse_unless_self(SYS_ioprio_set, IOPRIO_WHO_PROCESS, eperm);
    if (options.deny_sysv_ipc) {
        for (long call : sysv_ipc_calls)
            p.refuse(call, eperm);
    }
    if (options.deny_unix_sockets || options.deny_other_sockets ||
        options.namespaced_sockets_only) {
        p.refuse_sockets(options.deny_unix_sockets, options.deny_other_sockets,
                         options.allow_tcp_streams, options.namespaced_sockets_only, eperm);
    }
    if (options.deny_unix_sockets || options.deny_other_sockets ||
        options.namespaced_sockets_only) {
        // socketpair() makes sockets the socket() rules never see: only AF_UNIX pairs are kept.
        // Without socket(AF_UNIX), an unnamed datagram socket could still sendto() or connect()
        // to any named one of the host (a datagram socket may change peers), and AF_UNIX makes
        // a SOCK_RAW pair a datagram one: only stream and seqpacket pairs are kept, which stay
        // connected to each other for good.
        p.refuse_socketpairs(options.deny_unix_sockets, eperm);
    }
    if (options.deny_unix_sockets && options.deny_other_sockets && !options.allow_tcp_streams) {
        // Without a namespace of its own the command can make no socket but a socketpair's,
        // which needs no name; bound to an abstract one (Landlock's scopes govern connects and
        // sends, not bind), it would take that name in the host's namespace from the daemon
        // that binds it later.
        p.refuse(SYS_bind, eperm);
    }
    if (options.deny_other_sockets && options.allow_tcp_streams) {
        // A listener on the host's own interfaces, with SO_REUSEPORT, joins the group of a host
        // service listening on the same port under the same uid, and the kernel hands it a
        // share of that service's connections: the command would intercept them.
        p.refuse_option(SYS_setsockopt, SOL_SOCKET, SO_REUSEPORT, eperm);
    }
    if (options.deny_metadata) {
        p.refuse_ioctls_except(read_only_ioctls, read_only_ioctl_families, eperm);
        for (long call : metadata_calls)
            p.refuse(call, eperm);
    }
    p.ret(allow);

    if (p.full()) return E2BIG;
    const sock_fprog built = p.fprog();
    for (unsigned short i = 0; i < built.len; ++i)
        out.code[i] = built.filter[i];
    out.size = built.len;
    return 0;
}

int build_witness_filter(filter_program& out) noexcept {
    program p;
    p.load_arch();
    p.jump_eq(native_arch, 1, 0);
    p.ret(allow);  // the main filter refuses every other architecture
    p.load_nr();
    p.refuse(SYS_connect, SECCOMP_RET_USER_NOTIF);
    p.ret(allow);
    if (p.full()) return E2BIG;
    const sock_fprog built = p.fprog();
    for (unsigned short i = 0; i < built.len; ++i)
        out.code[i] = built.filter[i];
    out.size = built.len;
    return 0;
}

int install_witness(const filter_program& program) noexcept {
    sock_fprog fprog{program.size, const_cast<sock_filter*>(program.code)};
#ifdef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
    // Once handed over, a call waits for its answer through signals (Linux 5.19): otherwise a
    // signal restarts it, and a program signalled often (Go's preemption) could restart for good.
    const long killable = ::syscall(
        SYS_seccomp, SECCOMP_SET_MODE_FILTER,
        SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &fprog);
    if (killable >= 0) return static_cast<int>(killable);
    if (errno != EINVAL) return -1;
#endif
    const long listener =
        ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
    return listener < 0 ? -1 : static_cast<int>(listener);
}

int send_fd(int channel, int fd, int flags) noexcept {
    char byte = 'c';
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
    for (;;) {
        if (::sendmsg(channel, &message, flags | MSG_NOSIGNAL) == 1) return 0;
        if (errno != EINTR) return errno;
    }
}

int install_program(const filter_program& program) noexcept {
    // The kernel copies the program; the cast only satisfies sock_fprog's non-const pointer.
    sock_fprog fprog{program.size, const_cast<sock_filter*>(program.code)};
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0L, 0L) != 0) return errno;
    return 0;
}

int install_filter(const filter_options& options) noexcept {
    filter_program built;
    if (const int error = build_filter(options, built); error != 0) return error;
    return install_program(built);
}

}  // namespace cordon::sandbox::extras
