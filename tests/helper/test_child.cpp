// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-test-child: the real process the suites spawn (no mock stands in for one). One subcommand
// per behaviour a test needs; it prints what it is asked to and exits as told.
//
//   exit N                  exit with status N
//   sleep MS                sleep, then exit 0
//   ignore-term MS          ignore SIGTERM, print "ready", sleep
//   spawn-grandchild MS     fork a child that keeps stdout/stderr open and sleeps MS; exit 0
//   grandchild-pidfile PIDFILE MS
//                           as spawn-grandchild (same process group, pipes kept open), but the
//                           grandchild writes its pid to PIDFILE first, so a test can find it
//   daemonize PIDFILE MS    double-fork + setsid, write the daemon's pid to PIDFILE, daemon sleeps
//   setsid-child PIDFILE MS fork a child that calls setsid(), writes its pid, sleeps
//   detached-tree MS        fork a child that ignores SIGHUP, calls setsid() and sleeps MS (it
//                           keeps stdout and stderr); once it has, print "PIDS <own pid> <its pid>
//                           <TMPDIR or ->" and sleep MS
//   write PATH TEXT         write TEXT to PATH (exit 1 with strerror on failure)
//   link FROM TO            link(2) FROM as TO (exit 1 with strerror on failure)
//   rename FROM TO          rename(2) FROM to TO (exit 1 with strerror on failure)
//   map-write PATH TEXT [held]
//                           write TEXT over the start of the existing file PATH through a shared
//                           mapping (no write(2)), the rest of it newlines; its size stays. With
//                           `held`, the file is not closed but sent, with both ends of a socket
//                           pair, over that pair: it stays open after the process is gone, until
//                           the kernel collects the loop
//   print-env               print the environment, one NAME=value per line
//   list-fds                print the open fd numbers, one per line
//   cat                     copy stdin to stdout
//   bytes N [CHAR]          write N bytes of CHAR (default 'x') to stdout
//   stderr-bytes N TEXT     write TEXT to stderr, then N bytes of filler to stderr
//   kill-self SIG           raise signal SIG
//   truncate PATH           truncate(2) PATH to 0 bytes
//   setxattr PATH NAME VAL  set an extended attribute (exit 1 with strerror on failure)
//   setflags PATH           chattr +A through ioctl(FS_IOC_SETFLAGS) on a read-only fd
//   io-uring                create an io_uring instance (exit 1 with strerror on failure)
//   allocate MIB            touch MIB MiB of anonymous memory, one MiB at a time; print
//                           "allocated" when all of it was
//   fill PATH MIB           write MIB MiB to PATH (created), one MiB at a time: print "filled",
//                           or "fill PATH: <strerror>" on stderr and exit 1
//   memory-limit            print the memory limit of its own cgroup (v2 memory.max, else v1
//                           memory.limit_in_bytes) as the file says it
//
// Started under a name beginning with "cordon-fake-launcher", it is a launcher that lies: it
// answers --probe with a well-formed probe record (ABI 7) and, after "--", runs `true` honestly
// (a `started` record, then exec), but exits 0 without running any other command and without a
// record. A classifier that took exit 0 for proof would call that a successful run.
//
// Started as `bwrap` or `cordon-landlock` (bind-mounted over a runner in a mount namespace of a
// test's own: tests/cli/setup_signals_test.cpp), it is a runner that never answers: it waits until
// it is killed, so that a probe of that runner is seen in progress for as long as a test needs.
//
// Attack subcommands (tests/hostile). Each prints one line per attempt, `ALLOWED <what>` or
// `DENIED <what> <errno name>`, and exits 0 whatever the verdicts, so that a test asserts on
// the lines. Every attempt is harmless if it succeeds: files are opened for writing without
// writing, values are written back unchanged, signals are signal 0. Arguments beyond the listed
// ones are ignored, so a test may append a marker to find the processes by their command line.
//   open-write [PATH...]    open each PATH (else each line of stdin) O_WRONLY|O_NONBLOCK|O_NOCTTY
//                           and close it without writing
//   open-read PATH...       open each PATH O_RDONLY|O_NONBLOCK|O_NOCTTY and close it
//   write-existing TEXT PATH...
//                           open each existing PATH O_WRONLY|O_NONBLOCK (no O_CREAT), write TEXT
//   create-each TEXT PATH...
//                           create each PATH (O_CREAT|O_EXCL) and write TEXT into it
//   rewrite-same PATH...    read each PATH, open it for writing and write the same bytes back (a
//                           sysctl at its own value; nothing is written when the read failed)
//   wait-then-create WAITFILE TARGET MS
//                           print WAITING, wait up to MS for WAITFILE (READY or TIMEOUT), then
//                           create TARGET
//   shm-attach KEY          shmget(KEY) an existing segment, shmat it and write "pwned" into it
//   sysv-create KEY         create a shm segment (KEY), a semaphore set (KEY+1) and a message
//                           queue (KEY+2), plus IPC_PRIVATE ones, and leave them
//   mq-create NAME          mq_open(NAME, O_CREAT|O_EXCL) and leave the queue
//   keyring DESC            add_key("user", DESC) to the user keyring, keyctl, request_key
//   abstract-connect NAME   connect a unix stream socket to the abstract address NAME
//   abstract-send NAME      send a datagram to the abstract address NAME
//   reuseport-listen PORT   a TCP socket with SO_REUSEPORT bound to 127.0.0.1:PORT and listening:
//                           joins the host listener's group there, if the uid matches
//   odd-connects N          connects the network witness must see however they are written, all
//                           refused outside the sandbox: IPv6 with a 24-byte address to
//                           [2606:4700::1112]:81, IPv4 with a length whose high bits are set to
//                           93.184.216.35:82, then N processes at once (released together) to
//                           93.184.216.36:83;
//                           prints nothing
//   net-probe TCP UDP UNIX ABSTRACT [UNIX...]
//                           every network channel at once: a TCP connect to 127.0.0.1:TCP, a
//                           datagram to 127.0.0.1:UDP, a raw ICMP, a packet, a vsock and a ping
//                           socket, a
//                           connect to the pathname unix socket UNIX and to the abstract one
//                           ABSTRACT (stream), then to each further UNIX path, a datagram pair
//                           and a SOCK_RAW pair sending to the datagram socket UNIX.dgram, an
//                           AF_TIPC socketpair, a stream socketpair, and one bound to the
//                           abstract name ABSTRACT-squat
//   dev-use                 use the devices a command needs: /dev/null, /dev/zero, /dev/full,
//                           /dev/random, /dev/urandom, /dev/stdout
//   proc-attack TARGETFILE MS
//                           print WAITING, wait up to MS for TARGETFILE (one pid a line), then
//                           against each pid, getppid() and 1: kill 0, pidfd_open +
//                           pidfd_send_signal 0 + pidfd_getfd, prlimit64 / setpriority /
//                           sched_setscheduler / sched_setparam / sched_setattr /
//                           sched_setaffinity / ioprio_set to
//                           the values it already has, ptrace(PTRACE_SEIZE) (detached at once),
//                           process_vm_readv, /proc/PID/mem and /proc/PID/environ, and open-write
//                           of the /proc/PID files its owner may write (oom_score_adj, comm,
//                           ...); plus setpriority(PRIO_USER) and (PRIO_PGRP) for ids that own no
//                           process
//   ioctl PATH REQUEST...   open PATH read-only and ioctl each REQUEST (hex) on it, with a zeroed
//                           argument buffer; DENIED only for EPERM, the filter's answer (a
//                           request the file does not support fails otherwise: ALLOWED)
//   clone3 [CGROUP_DIR]     raw clone3, and clone3(CLONE_INTO_CGROUP) into CGROUP_DIR
//   userns                  clone(CLONE_NEWUSER), then unshare(CLONE_NEWUSER)
//   quota-fill KIND N       take up to N of a resource the kernel counts per uid and hold them:
//                           KIND inotify (instances), fanotify (groups), sigqueue (SIGRTMIN,
//                           blocked, queued to itself) or mqueue (POSIX queues of the default
//                           size), aio (io_setup contexts of 1024 events each, taken from the
//                           host's fs.aio-max-nr), pty (pseudo-terminals, opened and
//                           unlocked; kernel.pty.max counts them host-wide), tcp-queue (N MiB
//                           written, never read, into up to 256 loopback TCP connections of its
//                           own) or tcp-connections (N such connections, each written until the
//                           kernel takes no more, the descriptor limit raised to the hard one
//                           first), for both of which HELD counts the MiB the kernel took; print
//                           `MAX <value>` of the namespace's
//                           user.max_* file (inotify, fanotify), then `HELD <count> <errno name
//                           of the refusal, or NONE>`, and hold everything until stdin ends
//   quota-fill inotify-watches N DIR
//                           as quota-fill, for inotify watches (user.max_inotify_watches, MAX):
//                           an instance holds one watch per inode, so it makes files in DIR
//                           enough for the limit to be reached within the instances the
//                           namespace allows, and watches each of them from instance after
//                           instance; HELD counts the watches
//   clone-parent            clone(CLONE_PARENT): a child handed to the command's parent
//   daemonize-exec MARKER MS
//                           double-fork + setsid; the daemon execs `sleep MS MARKER` and the
//                           command returns once it has (print DAEMON <pid>)
//   fork-bomb MAX MS        fork children that sleep MS until fork fails or MAX were forked
//   cgroup-escape           open-write the membership and limit files of every cgroup in
//                           /proc/self/cgroup, of each of its ancestors up to the hierarchy's root
//   link-each DIR PATH...   hard-link each PATH into DIR (DIR/<basename>); the links are left
//   lock-probe DIR [PATH...]
//                           list DIR, open each entry and PATH (read, then read-write) and try
//                           flock(LOCK_EX|LOCK_NB)
//   lock-squat-bg DIR MS    fork a setsid'd process that for MS keeps opening and flocking
//                           whatever it can see in DIR (holding what it gets); print STARTED and
//                           sleep MS
//   lease PATH...           open each PATH read-only and take a read lease on it
//                           (fcntl(F_SETLEASE, F_RDLCK), given back at once): the kernel grants
//                           one to the file's owner only, or to CAP_LEASE
//   connect-unix PATH...    connect a unix stream socket to each pathname socket PATH
//   kill PID...             send SIGTERM to each PID
//   prlimit PID N           set RLIMIT_NOFILE of PID to N, soft and hard (prlimit(2))
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/if_packet.h>
#include <linux/io_uring.h>
#include <linux/ioprio.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/fanotify.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/launcher_status.hpp"

extern char** environ;

namespace {

void sleep_ms(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

bool write_text(const char* path, const std::string& text) {
    int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

// A pid file appears whole or not at all (written aside, then renamed into place): a test that
// waits for it, or a parent that exits once it exists, never reads it empty.
bool publish_text(const char* path, const std::string& text) {
    const std::string aside = std::string(path) + ".part";
    return write_text(aside.c_str(), text) && ::rename(aside.c_str(), path) == 0;
}

int usage() {
    std::fprintf(stderr, "cordon-test-child: bad arguments\n");
    return 64;
}

// ---- the attack subcommands' vocabulary ----------------------------------------------------

const char* errno_name(int error) {
    const char* name = ::strerrorname_np(error);
    return name != nullptr ? name : "EUNKNOWN";
}

// quota-fill's report: `HELD <count> <errno name>`, then what it took is held until stdin ends.
int hold(long held, int refusal) {
    std::printf("HELD %ld %s\n", held, refusal != 0 ? errno_name(refusal) : "NONE");
    std::fflush(stdout);
    for (;;) {
        char byte;
        const ssize_t n = ::read(STDIN_FILENO, &byte, 1);
        if (n > 0 || (n < 0 && errno == EINTR)) continue;
        return 0;
    }
}

void allowed(const std::string& what) {
    std::printf("ALLOWED %s\n", what.c_str());
    std::fflush(stdout);
}

void denied(const std::string& what, int error) {
    std::printf("DENIED %s %s\n", what.c_str(), errno_name(error));
    std::fflush(stdout);
}

// Runs `call` (true: the attempt succeeded) and reports it with the errno it left.
template <typename Call>
void attempt(const std::string& what, Call call) {
    errno = 0;
    const bool ok = call();
    const int error = errno;
    if (ok) {
        allowed(what);
    } else {
        denied(what, error);
    }
}

void say(const char* line) {
    std::printf("%s\n", line);
    std::fflush(stdout);
}

// Polls for `path` for at most `ms`; true once it exists.
bool wait_for_file(const char* path, long ms) {
    for (long waited = 0; waited <= ms; waited += 10) {
        if (::access(path, F_OK) == 0) return true;
        sleep_ms(10);
    }
    return false;
}

std::string read_all(int fd) {
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0)
        out.append(buf, static_cast<size_t>(n));
    return out;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// Redirects stdin, stdout and stderr to /dev/null (a background process must not hold the run's
// pipes).
void detach_stdio() {
    int null = ::open("/dev/null", O_RDWR);
    if (null < 0) return;
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (null > 2) ::close(null);
}

void open_write(const std::string& path) {
    int fd = -1;
    attempt("open-write " + path, [&] {
        fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        return fd >= 0;
    });
    if (fd >= 0) ::close(fd);
}

// The current RLIMIT_CORE of `pid` from /proc/PID/limits ("Max core file size  SOFT HARD bytes").
bool core_limit_of(long pid, rlimit* out) {
    int fd = ::open(("/proc/" + std::to_string(pid) + "/limits").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::string text = read_all(fd);
    ::close(fd);
    for (const std::string& line : lines_of(text)) {
        const std::string label = "Max core file size";
        if (line.compare(0, label.size(), label) != 0) continue;
        char soft[32] = {};
        char hard[32] = {};
        if (std::sscanf(line.c_str() + label.size(), "%31s %31s", soft, hard) != 2) return false;
        auto value = [](const char* text_value) {
            return std::strcmp(text_value, "unlimited") == 0
                       ? RLIM_INFINITY
                       : static_cast<rlim_t>(std::strtoull(text_value, nullptr, 10));
        };
        out->rlim_cur = value(soft);
        out->rlim_max = value(hard);
        return true;
    }
    return false;
}

// struct sched_attr of sched_setattr(2); <linux/sched/types.h> clashes with <sched.h>.
struct kernel_sched_attr {
    std::uint32_t size;
    std::uint32_t sched_policy;
    std::uint64_t sched_flags;
    std::int32_t sched_nice;
    std::uint32_t sched_priority;
    std::uint64_t sched_runtime;
    std::uint64_t sched_deadline;
    std::uint64_t sched_period;
    std::uint32_t sched_util_min;
    std::uint32_t sched_util_max;
};

// Every process-attribute and signal attack against `pid`, each set to what it already is.
void attack_process(long pid) {
    const std::string id = " " + std::to_string(pid);
    const auto target = static_cast<pid_t>(pid);

    attempt("kill" + id, [&] { return ::kill(target, 0) == 0; });

    long pidfd = ::syscall(SYS_pidfd_open, target, 0U);
    if (pidfd < 0) {
        const int error = errno;
        denied("pidfd_open" + id, error);
        denied("pidfd_send_signal" + id, error);
        denied("pidfd_getfd" + id, error);
    } else {
        allowed("pidfd_open" + id);
        attempt("pidfd_send_signal" + id,
                [&] { return ::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0U) == 0; });
        // EBADF: the permission check passed, the target just had no fd 0.
        long stolen = -1;
        attempt("pidfd_getfd" + id, [&] {
            stolen = ::syscall(SYS_pidfd_getfd, pidfd, 0, 0U);
            return stolen >= 0 || errno == EBADF;
        });
        if (stolen >= 0) ::close(static_cast<int>(stolen));
        ::close(static_cast<int>(pidfd));
    }

    // prlimit64 cannot read another process's limit under the filter, so the value it already
    // has comes from /proc/PID/limits; without it, there is nothing harmless to set.
    rlimit core{};
    if (core_limit_of(pid, &core)) {
        attempt("prlimit64" + id,
                [&] { return ::syscall(SYS_prlimit64, target, RLIMIT_CORE, &core, nullptr) == 0; });
    } else {
        const int error = errno;
        denied("prlimit64" + id + " (limits unreadable)", error);
    }

    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(pid));
    if (nice == -1 && errno != 0) {
        const int error = errno;
        denied("setpriority" + id + " (getpriority)", error);
    } else {
        attempt("setpriority" + id,
                [&] { return ::setpriority(PRIO_PROCESS, static_cast<id_t>(pid), nice) == 0; });
    }

    const int policy = ::sched_getscheduler(target);
    sched_param param{};
    if (policy < 0 || ::sched_getparam(target, &param) != 0) {
        const int error = errno;
        denied("sched_setscheduler" + id + " (sched_getscheduler)", error);
        denied("sched_setparam" + id + " (sched_getparam)", error);
    } else {
        attempt("sched_setscheduler" + id,
                [&] { return ::sched_setscheduler(target, policy, &param) == 0; });
        attempt("sched_setparam" + id, [&] { return ::sched_setparam(target, &param) == 0; });
    }

    kernel_sched_attr attr{};
    if (::syscall(SYS_sched_getattr, target, &attr, sizeof attr, 0U) != 0) {
        const int error = errno;
        denied("sched_setattr" + id + " (sched_getattr)", error);
    } else {
        attr.size = sizeof attr;
        attempt("sched_setattr" + id,
                [&] { return ::syscall(SYS_sched_setattr, target, &attr, 0U) == 0; });
    }

    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (::sched_getaffinity(target, sizeof cpus, &cpus) != 0) {
        const int error = errno;
        denied("sched_setaffinity" + id + " (sched_getaffinity)", error);
    } else {
        attempt("sched_setaffinity" + id,
                [&] { return ::sched_setaffinity(target, sizeof cpus, &cpus) == 0; });
    }

    long ioprio = ::syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, target);
    if (ioprio < 0) {
        const int error = errno;
        denied("ioprio_set" + id + " (ioprio_get)", error);
    } else {
        attempt("ioprio_set" + id,
                [&] { return ::syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, target, ioprio) == 0; });
    }

    // PTRACE_SEIZE does not stop the tracee; a successful seize is detached at once.
    attempt("ptrace-seize" + id, [&] {
        if (::syscall(SYS_ptrace, PTRACE_SEIZE, target, nullptr, nullptr) != 0) return false;
        ::syscall(SYS_ptrace, PTRACE_DETACH, target, nullptr, nullptr);
        return true;
    });

    // EFAULT means the permission check passed and only the address was wrong.
    char byte = 0;
    iovec local{&byte, 1};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x10000)), 1};
    attempt("process_vm_readv" + id, [&] {
        return ::process_vm_readv(target, &local, 1, &remote, 1, 0) >= 0 || errno == EFAULT;
    });

    for (const char* file : {"mem", "environ"}) {
        const std::string path = "/proc/" + std::to_string(pid) + "/" + file;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            const int error = errno;
            denied("open " + path, error);
            continue;
        }
        // /proc/PID/mem at offset 0 is unmapped (EIO) even when access is granted; environ
        // reads from its start.
        attempt("open " + path, [&] { return ::read(fd, &byte, 1) >= 0 || errno == EIO; });
        ::close(fd);
    }
    // Files of the process that its uid may write: the OOM killer's choice, its name, its
    // timer slack, its core dumps, its autogroup's nice value, its page reference bits.
    for (const char* file : {"oom_score_adj", "oom_adj", "comm", "timerslack_ns", "coredump_filter",
                             "autogroup", "clear_refs"}) {
        open_write("/proc/" + std::to_string(pid) + "/" + file);
    }
}

void lock_attempt(const std::string& path) {
    for (int flags : {O_RDONLY, O_RDWR}) {
        const std::string what = std::string(flags == O_RDONLY ? "open-read " : "open-rw ") + path;
        int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            const int error = errno;
            denied(what, error);
            continue;
        }
        allowed(what);
        attempt("flock " + path, [&] { return ::flock(fd, LOCK_EX | LOCK_NB) == 0; });
        ::close(fd);
    }
}

// Lists `dir`; entries other than "." and "..".
bool list_dir(const char* dir, std::vector<std::string>* out) {
    DIR* handle = ::opendir(dir);
    if (handle == nullptr) return false;
    while (dirent* entry = ::readdir(handle)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") out->push_back(std::string(dir) + "/" + name);
    }
    ::closedir(handle);
    return true;
}

}  // namespace

// The lying launcher of the header comment.
int fake_launcher(int argc, char** argv) {
    int status_fd = -1;
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == "--status-fd" && i + 1 < argc) status_fd = std::atoi(argv[i + 1]);
        if (word == "--probe" || word == "--") break;
    }
    const auto send = [status_fd](cordon::sandbox::launcher_record_kind kind, int abi) {
        cordon::sandbox::launcher_status_record record{};
        record.magic = cordon::sandbox::launcher_status_magic;
        record.kind = static_cast<std::uint32_t>(kind);
        record.abi = abi;
        if (status_fd >= 0) (void)!::write(status_fd, &record, sizeof record);
    };
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == "--probe") {
            send(cordon::sandbox::launcher_record_kind::probe, 7);
            return 0;
        }
        if (word == "--" && i + 1 < argc) {
            const std::string program = argv[i + 1];
            if (program.substr(program.rfind('/') + 1) != "true") return 0;  // the lie
            send(cordon::sandbox::launcher_record_kind::started, 0);
            ::execv(argv[i + 1], argv + i + 1);
            return 127;
        }
    }
    return 125;
}

// quota-fill tcp-queue: writes up to `mib` MiB into loopback TCP connections of its own and
// never reads them, each until the kernel takes no more (EAGAIN), a new connection for the rest;
// the connections stay open. Returns the MiB the kernel took and the errno that stopped it (0
// when all of it was taken).
std::pair<long, int> queue_on_loopback(long mib, int connections = 256) {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) return {0, errno};
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener, 256) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        return {0, errno};
    }
    const std::string chunk(64 * 1024, 'x');
    const long long wanted = static_cast<long long>(mib) << 20;
    long long queued = 0;
    int refusal = 0;
    for (int connection = 0; connection < connections && queued < wanted; ++connection) {
        const int writer = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (writer < 0 ||
            ::connect(writer, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC) < 0) {
            refusal = errno;
            break;
        }
        ::fcntl(writer, F_SETFL, O_NONBLOCK);
        while (queued < wanted) {
            const ssize_t sent = ::send(writer, chunk.data(), chunk.size(), MSG_NOSIGNAL);
            if (sent < 0) {
                if (errno != EAGAIN) refusal = errno;
                break;
            }
            queued += sent;
        }
        if (refusal != 0) break;
    }
    return {static_cast<long>(queued >> 20), refusal};
}

int main(int argc, char** argv) {
    const std::string invoked_as = argv[0];
    if (invoked_as.substr(invoked_as.rfind('/') + 1).rfind("cordon-fake-launcher", 0) == 0) {
        return fake_launcher(argc, argv);
    }
    if (const std::string name = invoked_as.substr(invoked_as.rfind('/') + 1);
        name == "bwrap" || name == "cordon-landlock") {
        for (;;)
            ::pause();
    }
    if (argc < 2) return usage();
    std::string cmd = argv[1];
    auto arg = [&](int i) -> const char* { return i < argc ? argv[i] : nullptr; };

    if (cmd == "exit" && arg(2)) return std::atoi(arg(2));
    if (cmd == "sleep" && arg(2)) {
        sleep_ms(std::atol(arg(2)));
        return 0;
    }
    if (cmd == "allocate" && arg(2)) {
        const long mib = std::atol(arg(2));
        for (long i = 0; i < mib; ++i) {
            auto* block = static_cast<char*>(std::malloc(1 << 20));
            if (block == nullptr) return 1;
            std::memset(block, 'm', 1 << 20);  // kept: the point is to hold it
        }
        say("allocated");
        return 0;
    }
    if (cmd == "fill" && arg(2) && arg(3)) {
        const int fd = ::open(arg(2), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        const std::string block(1 << 20, 'f');
        for (long i = 0, mib = std::atol(arg(3)); fd >= 0 && i < mib; ++i) {
            if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
                std::fprintf(stderr, "fill %s: %s\n", arg(2), std::strerror(errno));
                return 1;
            }
        }
        if (fd < 0) {
            std::fprintf(stderr, "fill %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        say("filled");
        return 0;
    }
    if (cmd == "memory-limit") {
        // /proc/self/cgroup: "N:memory:/path" (v1) or "0::/path" (v2); the hierarchy's mount from
        // /proc/self/mountinfo ("... ROOT POINT OPTIONS ... - TYPE SOURCE SUPER").
        const int cgroups = ::open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
        const int mounts = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (cgroups < 0 || mounts < 0) return 1;
        std::string v1_path, v2_path;
        for (const std::string& line : lines_of(read_all(cgroups))) {
            const auto first = line.find(':');
            const auto second = line.find(':', first + 1);
            if (second == std::string::npos) continue;
            const std::string controllers = line.substr(first + 1, second - first - 1);
            if (("," + controllers + ",").find(",memory,") != std::string::npos) {
                v1_path = line.substr(second + 1);
            } else if (line.rfind("0::", 0) == 0) {
                v2_path = line.substr(3);
            }
        }
        std::string v1_mount, v2_mount;
        for (const std::string& line : lines_of(read_all(mounts))) {
            std::vector<std::string> fields;
            for (std::size_t at = 0; at <= line.size();) {
                const std::size_t end = std::min(line.find(' ', at), line.size());
                fields.push_back(line.substr(at, end - at));
                at = end + 1;
            }
            const auto dash = std::find(fields.begin(), fields.end(), "-");
            if (fields.size() < 5 || dash == fields.end() || dash + 3 >= fields.end()) continue;
            if (*(dash + 1) == "cgroup2") v2_mount = fields[4];
            if (*(dash + 1) == "cgroup" &&
                ("," + *(dash + 3) + ",").find(",memory,") != std::string::npos) {
                v1_mount = fields[4];
            }
        }
        std::string text;
        if (!v2_mount.empty()) {
            const int fd = ::open((v2_mount + v2_path + "/memory.max").c_str(), O_RDONLY);
            if (fd >= 0) text = read_all(fd);
        }
        if (text.empty() && !v1_mount.empty()) {
            const int fd =
                ::open((v1_mount + v1_path + "/memory.limit_in_bytes").c_str(), O_RDONLY);
            if (fd >= 0) text = read_all(fd);
        }
        if (text.empty()) return 1;
        std::fputs(text.c_str(), stdout);
        return 0;
    }
    if (cmd == "truncate" && arg(2)) {
        // truncate(2) on a path, with no open for writing first (truncate(1) opens the file).
        if (::truncate(arg(2), 0) != 0) {
            std::fprintf(stderr, "truncate: %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "ignore-term" && arg(2)) {
        ::signal(SIGTERM, SIG_IGN);
        std::printf("ready\n");
        std::fflush(stdout);
        sleep_ms(std::atol(arg(2)));
        return 0;
    }
    if (cmd == "spawn-grandchild" && arg(2)) {
        if (::fork() == 0) {
            sleep_ms(std::atol(arg(2)));
            _exit(0);
        }
        std::printf("parent done\n");
        return 0;
    }
    if (cmd == "grandchild-pidfile" && arg(2) && arg(3)) {
        if (::fork() == 0) {
            publish_text(arg(2), std::to_string(::getpid()));
            sleep_ms(std::atol(arg(3)));
            _exit(0);
        }
        // Up to 30 s: a fork under TSan on a loaded machine took longer than the 1 s this was.
        for (int i = 0; i < 15000 && ::access(arg(2), F_OK) != 0; ++i)
            sleep_ms(2);
        std::printf("parent done\n");
        return 0;
    }
    if (cmd == "detached-tree" && arg(2)) {
        int ready[2];
        if (::pipe(ready) != 0) return 1;
        const pid_t grandchild = ::fork();
        if (grandchild == 0) {
            ::signal(SIGHUP, SIG_IGN);
            ::setsid();
            ::close(ready[0]);
            ::close(ready[1]);  // the leader reads EOF: this process is set up
            sleep_ms(std::atol(arg(2)));
            _exit(0);
        }
        ::close(ready[1]);
        char byte;
        while (::read(ready[0], &byte, 1) < 0 && errno == EINTR) {
        }
        const char* tmpdir = std::getenv("TMPDIR");
        std::printf("PIDS %d %d %s\n", static_cast<int>(::getpid()), static_cast<int>(grandchild),
                    tmpdir != nullptr ? tmpdir : "-");
        std::fflush(stdout);
        sleep_ms(std::atol(arg(2)));
        return 0;
    }
    if (cmd == "daemonize" && arg(2) && arg(3)) {
        pid_t first = ::fork();
        if (first == 0) {
            ::setsid();
            if (::fork() == 0) {
                int null = ::open("/dev/null", O_RDWR);
                ::dup2(null, 0);
                ::dup2(null, 1);
                ::dup2(null, 2);
                publish_text(arg(2), std::to_string(::getpid()));
                sleep_ms(std::atol(arg(3)));
                _exit(0);
            }
            _exit(0);
        }
        int status;
        ::waitpid(first, &status, 0);
        // Wait until the daemon has announced itself so the test can find it.
        for (int i = 0; i < 500 && ::access(arg(2), F_OK) != 0; ++i)
            sleep_ms(2);
        return 0;
    }
    if (cmd == "setsid-child" && arg(2) && arg(3)) {
        if (::fork() == 0) {
            ::setsid();
            publish_text(arg(2), std::to_string(::getpid()));
            sleep_ms(std::atol(arg(3)));
            _exit(0);
        }
        for (int i = 0; i < 500 && ::access(arg(2), F_OK) != 0; ++i)
            sleep_ms(2);
        return 0;
    }
    if (cmd == "write" && arg(2) && arg(3)) {
        if (!write_text(arg(2), arg(3))) {
            std::fprintf(stderr, "write %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if ((cmd == "link" || cmd == "rename") && arg(2) && arg(3)) {
        const int done = cmd == "link" ? ::link(arg(2), arg(3)) : ::rename(arg(2), arg(3));
        if (done != 0) {
            std::fprintf(stderr, "%s %s %s: %s\n", cmd.c_str(), arg(2), arg(3),
                         std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "map-write" && arg(2) && arg(3)) {
        const int fd = ::open(arg(2), O_RDWR | O_CLOEXEC);
        struct stat st {};
        const std::string_view text = arg(3);
        if (fd < 0 || ::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < text.size()) {
            std::fprintf(stderr, "map-write %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        const auto size = static_cast<std::size_t>(st.st_size);
        void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (mapped == MAP_FAILED) {
            std::fprintf(stderr, "map-write %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        std::memset(mapped, '\n', size);
        std::memcpy(mapped, text.data(), text.size());
        ::munmap(mapped, size);
        if (arg(4) && std::string_view(arg(4)) == "held") {
            int pair[2];
            if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return 1;
            const int sent[3] = {fd, pair[0], pair[1]};
            alignas(cmsghdr) char control[CMSG_SPACE(sizeof sent)] = {};
            char byte = 'x';
            iovec io{&byte, 1};
            msghdr message{};
            message.msg_iov = &io;
            message.msg_iovlen = 1;
            message.msg_control = control;
            message.msg_controllen = sizeof control;
            cmsghdr* header = CMSG_FIRSTHDR(&message);
            header->cmsg_level = SOL_SOCKET;
            header->cmsg_type = SCM_RIGHTS;
            header->cmsg_len = CMSG_LEN(sizeof sent);
            std::memcpy(CMSG_DATA(header), sent, sizeof sent);
            if (::sendmsg(pair[0], &message, 0) != 1) return 1;
            ::close(pair[0]);
            ::close(pair[1]);
        }
        ::close(fd);
        return 0;
    }
    if (cmd == "print-env") {
        for (char** e = environ; *e != nullptr; ++e)
            std::printf("%s\n", *e);
        return 0;
    }
    if (cmd == "list-fds") {
        std::vector<int> fds;
        DIR* dir = ::opendir("/proc/self/fd");
        if (dir == nullptr) return 1;
        int own = ::dirfd(dir);
        while (dirent* entry = ::readdir(dir)) {
            if (entry->d_name[0] == '.') continue;
            int fd = std::atoi(entry->d_name);
            if (fd != own) fds.push_back(fd);
        }
        ::closedir(dir);
        for (int fd : fds)
            std::printf("%d\n", fd);
        return 0;
    }
    if (cmd == "cat") {
        char buf[65536];
        ssize_t n;
        while ((n = ::read(0, buf, sizeof buf)) > 0) {
            if (::write(1, buf, static_cast<size_t>(n)) != n) return 1;
        }
        return n < 0 ? 1 : 0;
    }
    if (cmd == "bytes" && arg(2)) {
        long count = std::atol(arg(2));
        char c = arg(3) ? arg(3)[0] : 'x';
        std::string chunk(65536, c);
        while (count > 0) {
            size_t n = static_cast<size_t>(std::min<long>(count, static_cast<long>(chunk.size())));
            if (::write(1, chunk.data(), n) != static_cast<ssize_t>(n)) return 1;
            count -= static_cast<long>(n);
        }
        return 0;
    }
    if (cmd == "stderr-bytes" && arg(2) && arg(3)) {
        std::fprintf(stderr, "%s\n", arg(3));
        std::fflush(stderr);
        long count = std::atol(arg(2));
        std::string chunk(4096, '.');
        chunk.back() = '\n';
        while (count > 0) {
            size_t n = static_cast<size_t>(std::min<long>(count, static_cast<long>(chunk.size())));
            if (::write(2, chunk.data(), n) != static_cast<ssize_t>(n)) return 1;
            count -= static_cast<long>(n);
        }
        return 3;
    }
    if (cmd == "setxattr" && arg(2) && arg(3) && arg(4)) {
        if (::setxattr(arg(2), arg(3), arg(4), std::strlen(arg(4)), 0) != 0) {
            std::fprintf(stderr, "setxattr %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "ioctl" && arg(2)) {
        const int fd = ::open(arg(2), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
            std::fprintf(stderr, "open %s: %s\n", arg(2), std::strerror(errno));
            return 2;
        }
        for (int i = 3; i < argc; ++i) {
            const unsigned long request = std::strtoul(argv[i], nullptr, 16);
            alignas(8) char buffer[256] = {};
            const std::string what = std::string("ioctl ") + argv[i];
            if (::ioctl(fd, request, buffer) != 0 && errno == EPERM) {
                denied(what, EPERM);
            } else {
                std::printf("ALLOWED %s\n", what.c_str());
            }
        }
        ::close(fd);
        return 0;
    }
    if (cmd == "setflags" && arg(2)) {
        int fd = ::open(arg(2), O_RDONLY | O_CLOEXEC);
        int flags = 0;
        if (fd < 0 || ::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
            std::fprintf(stderr, "open/getflags %s: %s\n", arg(2), std::strerror(errno));
            return 2;
        }
        flags |= FS_NOATIME_FL;
        if (::ioctl(fd, FS_IOC_SETFLAGS, &flags) != 0) {
            std::fprintf(stderr, "setflags %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "io-uring") {
        io_uring_params params{};
        long fd = ::syscall(SYS_io_uring_setup, 4, &params);
        if (fd < 0) {
            std::fprintf(stderr, "io_uring_setup: %s\n", std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "kill-self" && arg(2)) {
        ::raise(std::atoi(arg(2)));
        return 0;
    }

    // ---- attacks (see the header) --------------------------------------------------------------
    if (cmd == "open-write") {
        if (argc > 2) {
            for (int i = 2; i < argc; ++i)
                open_write(argv[i]);
        } else {
            for (const std::string& path : lines_of(read_all(0)))
                open_write(path);
        }
        return 0;
    }
    if (cmd == "open-read" && arg(2)) {
        for (int i = 2; i < argc; ++i) {
            int fd = -1;
            attempt(std::string("open-read ") + argv[i], [&] {
                fd = ::open(argv[i], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                return fd >= 0;
            });
            if (fd >= 0) ::close(fd);
        }
        return 0;
    }
    if ((cmd == "write-existing" || cmd == "create-each") && arg(2) && arg(3)) {
        const std::string text = arg(2);
        const int flags = cmd == "create-each" ? O_CREAT | O_EXCL : O_NONBLOCK | O_NOCTTY;
        for (int i = 3; i < argc; ++i) {
            const std::string what = cmd.substr(0, cmd.find('-')) + " " + argv[i];
            int fd = ::open(argv[i], O_WRONLY | O_CLOEXEC | flags, 0644);
            if (fd < 0) {
                const int error = errno;
                denied(what, error);
                continue;
            }
            attempt(what, [&] {
                return ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
            });
            ::close(fd);
        }
        return 0;
    }
    if (cmd == "rewrite-same" && arg(2)) {
        for (int i = 2; i < argc; ++i) {
            const std::string path = argv[i];
            std::optional<std::string> value;
            int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (in < 0) {
                const int error = errno;
                denied("read " + path, error);
            } else {
                value = read_all(in);
                ::close(in);
            }
            // Opened for writing whether or not the value could be read; written only with it.
            int out = -1;
            attempt("open-write " + path, [&] {
                out = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
                return out >= 0;
            });
            if (out < 0) continue;
            if (value) {
                attempt("rewrite " + path, [&] {
                    return ::write(out, value->data(), value->size()) ==
                           static_cast<ssize_t>(value->size());
                });
            }
            ::close(out);
        }
        return 0;
    }
    if (cmd == "wait-then-create" && arg(2) && arg(3) && arg(4)) {
        say("WAITING");
        say(wait_for_file(arg(2), std::atol(arg(4))) ? "READY" : "TIMEOUT");
        int fd = -1;
        attempt(std::string("create ") + arg(3), [&] {
            fd = ::open(arg(3), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            return fd >= 0;
        });
        if (fd >= 0) ::close(fd);
        return 0;
    }
    if (cmd == "shm-attach" && arg(2)) {
        const auto key = static_cast<key_t>(std::strtol(arg(2), nullptr, 0));
        int id = -1;
        attempt("shmget", [&] {
            id = ::shmget(key, 0, 0);
            return id >= 0;
        });
        if (id < 0) return 0;
        void* at = ::shmat(id, nullptr, 0);
        if (at == reinterpret_cast<void*>(static_cast<std::intptr_t>(-1))) {
            const int error = errno;
            denied("shmat", error);
            return 0;
        }
        allowed("shmat");
        std::memcpy(at, "pwned", 5);
        allowed("shm-write");
        ::shmdt(at);
        return 0;
    }
    if (cmd == "sysv-create" && arg(2)) {
        const auto key = static_cast<key_t>(std::strtol(arg(2), nullptr, 0));
        attempt("shmget", [&] { return ::shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600) >= 0; });
        attempt("semget", [&] { return ::semget(key + 1, 1, IPC_CREAT | IPC_EXCL | 0600) >= 0; });
        attempt("msgget", [&] { return ::msgget(key + 2, IPC_CREAT | IPC_EXCL | 0600) >= 0; });
        attempt("shmget-private",
                [&] { return ::shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600) >= 0; });
        attempt("semget-private", [&] { return ::semget(IPC_PRIVATE, 1, IPC_CREAT | 0600) >= 0; });
        attempt("msgget-private", [&] { return ::msgget(IPC_PRIVATE, IPC_CREAT | 0600) >= 0; });
        return 0;
    }
    if (cmd == "mq-create" && arg(2)) {
        // The raw call (no librt): the kernel takes the name without its leading slash.
        const char* name = arg(2)[0] == '/' ? arg(2) + 1 : arg(2);
        attempt("mq_open", [&] {
            return ::syscall(SYS_mq_open, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600,
                             nullptr) >= 0;
        });
        return 0;
    }
    if (cmd == "keyring" && arg(2)) {
        attempt("add_key", [&] {
            return ::syscall(SYS_add_key, "user", arg(2), "x", 1UL, KEY_SPEC_USER_KEYRING) >= 0;
        });
        attempt("keyctl", [&] {
            return ::syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0L) >= 0;
        });
        // No callout information: a miss never starts /sbin/request-key on the host.
        attempt("request_key", [&] {
            return ::syscall(SYS_request_key, "user", arg(2), nullptr, 0L) >= 0 || errno == ENOKEY;
        });
        return 0;
    }
    if ((cmd == "abstract-connect" || cmd == "abstract-send") && arg(2)) {
        const bool stream = cmd == "abstract-connect";
        int sock = ::socket(AF_UNIX, (stream ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
        if (sock < 0) {
            const int error = errno;
            denied("socket", error);
            return 0;
        }
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        const size_t length = std::min(std::strlen(arg(2)), sizeof address.sun_path - 1);
        std::memcpy(address.sun_path + 1, arg(2), length);
        const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length);
        const auto* target = reinterpret_cast<const sockaddr*>(&address);
        if (stream) {
            attempt(std::string("connect @") + arg(2),
                    [&] { return ::connect(sock, target, size) == 0; });
        } else {
            attempt(std::string("sendto @") + arg(2),
                    [&] { return ::sendto(sock, "pwned", 5, 0, target, size) == 5; });
        }
        ::close(sock);
        return 0;
    }
    if (cmd == "reuseport-listen" && arg(2)) {
        const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (sock < 0) {
            denied("socket", errno);
            return 0;
        }
        const int one = 1;
        attempt("reuseport-option", [&] {
            return ::setsockopt(sock, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) == 0;
        });
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(static_cast<std::uint16_t>(std::atoi(arg(2))));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        attempt(std::string("reuseport-listen ") + arg(2), [&] {
            return ::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
                   ::listen(sock, 8) == 0;
        });
        ::close(sock);
        return 0;
    }
    if (cmd == "odd-connects" && arg(2)) {
        sockaddr_in6 v6{};
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(81);
        ::inet_pton(AF_INET6, "2606:4700::1112", &v6.sin6_addr);
        int sock = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        (void)::connect(sock, reinterpret_cast<const sockaddr*>(&v6), 24);
        ::close(sock);
        sockaddr_in v4{};
        v4.sin_family = AF_INET;
        v4.sin_port = htons(82);
        ::inet_pton(AF_INET, "93.184.216.35", &v4.sin_addr);
        sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        (void)::syscall(SYS_connect, sock, &v4, 0x100000000UL | sizeof v4);
        ::close(sock);
        v4.sin_port = htons(83);
        ::inet_pton(AF_INET, "93.184.216.36", &v4.sin_addr);
        // Every process waits until the pipe closes, then all connect at once.
        int gate[2] = {-1, -1};
        if (::pipe2(gate, O_CLOEXEC) != 0) return 1;
        const int count = std::atoi(arg(2));
        for (int i = 0; i < count; ++i) {
            if (::fork() == 0) {
                ::close(gate[1]);
                char byte = 0;
                (void)::read(gate[0], &byte, 1);
                const int each = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                (void)::connect(each, reinterpret_cast<const sockaddr*>(&v4), sizeof v4);
                ::_exit(0);
            }
        }
        ::close(gate[0]);
        ::close(gate[1]);
        while (::wait(nullptr) > 0) {
        }
        return 0;
    }
    if (cmd == "net-probe" && arg(5)) {
        const auto inet = [](const char* port) {
            sockaddr_in address{};
            address.sin_family = AF_INET;
            address.sin_port = htons(static_cast<std::uint16_t>(std::atoi(port)));
            address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            return address;
        };
        // A socket of the arguments given, then `use` on it; a refused socket() is the denial.
        const auto with_socket = [](const std::string& what, int family, int type, int protocol,
                                    auto&& use) {
            const int sock = ::socket(family, type | SOCK_CLOEXEC, protocol);
            if (sock < 0) {
                denied(what, errno);
                return;
            }
            attempt(what, [&] { return use(sock); });
            ::close(sock);
        };
        const sockaddr_in tcp = inet(arg(2));
        with_socket("tcp-connect", AF_INET, SOCK_STREAM, 0, [&](int sock) {
            return ::connect(sock, reinterpret_cast<const sockaddr*>(&tcp), sizeof tcp) == 0;
        });
        const sockaddr_in udp = inet(arg(3));
        with_socket("udp-send", AF_INET, SOCK_DGRAM, 0, [&](int sock) {
            return ::sendto(sock, "pwned", 5, 0, reinterpret_cast<const sockaddr*>(&udp),
                            sizeof udp) == 5;
        });
        with_socket("raw-socket", AF_INET, SOCK_RAW, IPPROTO_ICMP, [](int) { return true; });
        with_socket("packet-socket", AF_PACKET, SOCK_RAW, 0, [](int) { return true; });
        // vsock is in no network namespace: from any, it reaches the hypervisor (CID 2).
        with_socket("vsock-socket", AF_VSOCK, SOCK_STREAM, 0, [](int) { return true; });
        // An ICMP echo through an unprivileged ping socket, where ping_group_range allows one.
        with_socket("ping-send", AF_INET, SOCK_DGRAM, IPPROTO_ICMP, [&](int sock) {
            const unsigned char echo[8] = {8, 0, 0, 0, 0, 0, 0, 1};
            sockaddr_in loopback = inet("0");
            return ::sendto(sock, echo, sizeof echo, 0,
                            reinterpret_cast<const sockaddr*>(&loopback),
                            sizeof loopback) == static_cast<ssize_t>(sizeof echo);
        });
        const auto unix_connect = [&](const std::string& what, const char* name, bool abstract) {
            with_socket(what, AF_UNIX, SOCK_STREAM, 0, [&](int sock) {
                sockaddr_un address{};
                address.sun_family = AF_UNIX;
                const std::size_t offset = abstract ? 1 : 0;
                const std::size_t length =
                    std::min(std::strlen(name), sizeof address.sun_path - 1 - offset);
                std::memcpy(address.sun_path + offset, name, length);
                const auto size =
                    static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + length);
                return ::connect(sock, reinterpret_cast<const sockaddr*>(&address), size) == 0;
            });
        };
        unix_connect(std::string("unix-connect ") + arg(4), arg(4), false);
        unix_connect(std::string("abstract-connect @") + arg(5), arg(5), true);
        for (int i = 6; arg(i) != nullptr; ++i)
            unix_connect(std::string("unix-connect ") + arg(i), arg(i), false);
        // A datagram socket may send to any named one: only a stream pair stays the run's own.
        // AF_UNIX makes a SOCK_RAW pair a datagram one.
        const std::string dgram = std::string(arg(4)) + ".dgram";
        for (const auto& probe : {std::pair<const char*, int>{"dgram-pair-sendto ", SOCK_DGRAM},
                                  std::pair<const char*, int>{"raw-pair-sendto ", SOCK_RAW}}) {
            const int type = probe.second;  // not a structured binding: clang 14 cannot capture one
            attempt(probe.first + dgram, [&] {
                int pair[2];
                if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, pair) != 0) return false;
                sockaddr_un address{};
                address.sun_family = AF_UNIX;
                std::memcpy(address.sun_path, dgram.data(),
                            std::min(dgram.size(), sizeof address.sun_path - 1));
                const bool sent =
                    ::sendto(pair[0], "pwned", 5, 0, reinterpret_cast<const sockaddr*>(&address),
                             sizeof address) == 5;
                const int error = errno;
                ::close(pair[0]);
                ::close(pair[1]);
                errno = error;
                return sent;
            });
        }
        // socketpair() of another family than AF_UNIX (AF_TIPC makes pairs, where the kernel has
        // it) makes sockets that socket()'s rules never see.
        attempt("tipc-pair", [] {
            int pair[2];
            if (::socketpair(AF_TIPC, SOCK_RDM | SOCK_CLOEXEC, 0, pair) != 0) return false;
            ::close(pair[0]);
            ::close(pair[1]);
            return true;
        });
        attempt("socketpair", [] {
            int pair[2];
            if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
            ::close(pair[0]);
            ::close(pair[1]);
            return true;
        });
        // A pair's socket may still take a name: an abstract one is the host's where the run has
        // no network namespace, and a host daemon binding it later would find it taken.
        const std::string squat = std::string(arg(5)) + "-squat";
        attempt("pair-bind @" + squat, [&] {
            int pair[2];
            if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
            sockaddr_un address{};
            address.sun_family = AF_UNIX;
            const std::size_t length = std::min(squat.size(), sizeof address.sun_path - 1);
            std::memcpy(address.sun_path + 1, squat.data(), length);
            const bool bound =
                ::bind(pair[0], reinterpret_cast<const sockaddr*>(&address),
                       static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length)) == 0;
            const int error = errno;
            ::close(pair[0]);
            ::close(pair[1]);
            errno = error;
            return bound;
        });
        return 0;
    }
    if (cmd == "dev-use") {
        // Opens `path` with `flags` and runs `use` on the fd; both must succeed.
        const auto use = [](const char* path, int flags, auto&& operation) {
            attempt(std::string("use ") + path, [&] {
                int fd = ::open(path, flags | O_CLOEXEC);
                if (fd < 0) return false;
                const bool ok = operation(fd);
                const int error = errno;
                ::close(fd);
                errno = error;
                return ok;
            });
        };
        char buf[16] = {};
        use("/dev/null", O_RDWR, [](int fd) { return ::write(fd, "x", 1) == 1; });
        use("/dev/zero", O_RDWR,
            [&](int fd) { return ::read(fd, buf, sizeof buf) == sizeof buf && buf[0] == 0; });
        use("/dev/full", O_WRONLY,
            [](int fd) { return ::write(fd, "x", 1) < 0 && errno == ENOSPC; });
        for (const char* source : {"/dev/urandom", "/dev/random"}) {
            use(source, O_RDONLY, [&](int fd) { return ::read(fd, buf, sizeof buf) > 0; });
        }
        const std::string line = "via /dev/stdout\n";
        use("/dev/stdout", O_WRONLY, [&](int fd) {
            return ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
        });
        return 0;
    }
    if (cmd == "proc-attack" && arg(2) && arg(3)) {
        say("WAITING");
        if (!wait_for_file(arg(2), std::atol(arg(3)))) {
            say("TIMEOUT");
            return 0;
        }
        int fd = ::open(arg(2), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            const int error = errno;
            denied(std::string("read ") + arg(2), error);
            return 0;
        }
        std::vector<long> pids;
        for (const std::string& line : lines_of(read_all(fd)))
            pids.push_back(std::atol(line.c_str()));
        ::close(fd);
        pids.push_back(static_cast<long>(::getppid()));
        pids.push_back(1);
        std::vector<long> done;
        for (long pid : pids) {
            bool seen = false;
            for (long earlier : done)
                seen = seen || earlier == pid;
            if (seen || pid <= 0) continue;
            done.push_back(pid);
            attack_process(pid);
        }
        // Ids that own no process: the kernel would answer ESRCH, the filter EPERM first.
        const id_t nobody = 2147480000U;
        attempt("setpriority-user", [&] { return ::setpriority(PRIO_USER, nobody, 0) == 0; });
        attempt("setpriority-pgrp", [&] { return ::setpriority(PRIO_PGRP, nobody, 0) == 0; });
        return 0;
    }
    if (cmd == "clone3") {
        for (int into_cgroup = 0; into_cgroup <= (arg(2) ? 1 : 0); ++into_cgroup) {
            const std::string what = into_cgroup ? "clone3-into-cgroup" : "clone3";
            clone_args args{};
            args.exit_signal = SIGCHLD;
            int dir = -1;
            if (into_cgroup) {
                dir = ::open(arg(2), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dir < 0) {
                    const int error = errno;
                    denied(what + " (open " + arg(2) + ")", error);
                    continue;
                }
                args.flags = CLONE_INTO_CGROUP;
                args.cgroup = static_cast<decltype(args.cgroup)>(dir);
            }
            long child = -1;
            attempt(what, [&] {
                child = ::syscall(SYS_clone3, &args, sizeof args);
                if (child == 0) _exit(0);
                return child > 0;
            });
            if (child > 0) ::waitpid(static_cast<pid_t>(child), nullptr, 0);
            if (dir >= 0) ::close(dir);
        }
        return 0;
    }
    if (cmd == "clone-parent") {
        // The child exits at once: were it allowed, it would be a zombie of the command's
        // parent, which reaps only the command.
        attempt("clone-parent", [] {
            const long child = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0L, 0L, 0L, 0L);
            if (child == 0) _exit(0);
            return child > 0;
        });
        return 0;
    }
    if (cmd == "quota-fill" && arg(2) && std::string(arg(2)) == "inotify-watches" && arg(3) &&
        arg(4)) {
        const long wanted = std::atol(arg(3));
        const auto read_number = [](const char* path) {
            const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
            const std::string value = fd >= 0 ? read_all(fd) : std::string("0");
            if (fd >= 0) ::close(fd);
            return std::atol(value.c_str());
        };
        const long max_watches = read_number("/proc/sys/user/max_inotify_watches");
        const long max_instances = read_number("/proc/sys/user/max_inotify_instances");
        std::printf("MAX %ld\n", max_watches);
        // Instances to spare: the limit is reached with at most half of them. (Fewer instances
        // would take more files, which cost more to make than the watches do.) Named relative to
        // DIR: hundreds of thousands of lookups of a long path add up.
        const long files = max_watches / std::max(1L, max_instances / 2) + 1;
        if (::chdir(arg(4)) != 0) {
            std::fprintf(stderr, "quota-fill: %s: %s\n", arg(4), std::strerror(errno));
            return 1;
        }
        std::vector<std::string> paths;
        for (long i = 0; i < files; ++i) {
            paths.push_back("w" + std::to_string(i));
            if (!write_text(paths.back().c_str(), "")) {
                std::fprintf(stderr, "quota-fill: %s/%s: %s\n", arg(4), paths.back().c_str(),
                             std::strerror(errno));
                return 1;
            }
        }
        long held = 0;
        int refusal = 0;
        while (held < wanted && refusal == 0) {
            const int instance = ::inotify_init1(IN_CLOEXEC);
            if (instance < 0) {
                refusal = errno;
                break;
            }
            for (std::size_t i = 0; i < paths.size() && held < wanted; ++i, ++held) {
                if (::inotify_add_watch(instance, paths[i].c_str(), IN_ATTRIB) < 0) {
                    refusal = errno;
                    break;
                }
            }
        }
        return hold(held, refusal);
    }
    if (cmd == "quota-fill" && arg(2) && arg(3)) {
        const std::string kind = arg(2);
        const long wanted = std::atol(arg(3));
        const char* max_file = kind == "inotify"    ? "/proc/sys/user/max_inotify_instances"
                               : kind == "fanotify" ? "/proc/sys/user/max_fanotify_groups"
                                                    : nullptr;
        if (max_file != nullptr) {
            const int fd = ::open(max_file, O_RDONLY | O_CLOEXEC);
            const std::string value = fd >= 0 ? read_all(fd) : std::string("unreadable\n");
            if (fd >= 0) ::close(fd);
            std::printf("MAX %s", value.c_str());
        }
        if (kind == "sigqueue") {
            sigset_t rt;
            sigemptyset(&rt);
            sigaddset(&rt, SIGRTMIN);
            sigprocmask(SIG_BLOCK, &rt, nullptr);
        }
        if (kind == "tcp-queue" || kind == "tcp-connections") {
            if (kind == "tcp-connections") {
                rlimit descriptors{};
                ::getrlimit(RLIMIT_NOFILE, &descriptors);
                descriptors.rlim_cur = descriptors.rlim_max;
                ::setrlimit(RLIMIT_NOFILE, &descriptors);
            }
            const auto [queued, refusal] =
                kind == "tcp-queue" ? queue_on_loopback(wanted)
                                    : queue_on_loopback(1L << 20, static_cast<int>(wanted));
            return hold(queued, refusal);
        }
        long held = 0;
        int refusal = 0;
        for (; held < wanted; ++held) {
            long fd = -1;
            if (kind == "inotify") {
                fd = ::inotify_init1(IN_CLOEXEC);
            } else if (kind == "fanotify") {
                fd = ::fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC, O_RDONLY);
            } else if (kind == "sigqueue") {
                fd = ::sigqueue(::getpid(), SIGRTMIN, sigval{}) == 0 ? 0 : -1;
            } else if (kind == "pty") {
                fd = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
                if (fd >= 0 && ::unlockpt(static_cast<int>(fd)) != 0) fd = -1;
            } else if (kind == "aio") {
                unsigned long context = 0;
                fd = ::syscall(SYS_io_setup, 1024, &context);
            } else if (kind == "mqueue") {
                const std::string name =
                    "cordon-quota-" + std::to_string(::getpid()) + "-" + std::to_string(held);
                fd = ::syscall(SYS_mq_open, name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC,
                               0600, nullptr);
            } else {
                return usage();
            }
            if (fd < 0) {
                refusal = errno;
                break;
            }
        }
        return hold(held, refusal);
    }
    if (cmd == "userns") {
        // clone first: after a successful unshare the caller's uid is unmapped and a nested
        // namespace would be refused for that reason alone.
        long child = -1;
        attempt("clone-newuser", [&] {
            child = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0L, 0L, 0L, 0L);
            if (child == 0) _exit(0);
            return child > 0;
        });
        if (child > 0) ::waitpid(static_cast<pid_t>(child), nullptr, 0);
        attempt("unshare-newuser", [&] { return ::unshare(CLONE_NEWUSER) == 0; });
        return 0;
    }
    if (cmd == "daemonize-exec" && arg(2) && arg(3)) {
        // The daemon holds the write end of `ready` until its exec closes it: once the read
        // below sees EOF, the daemon runs as `sleep MS MARKER` (or is dead).
        int ready[2];
        if (::pipe2(ready, O_CLOEXEC) != 0) return 1;
        pid_t first = ::fork();
        if (first == 0) {
            ::close(ready[0]);
            ::setsid();
            pid_t daemon = ::fork();
            if (daemon == 0) {
                detach_stdio();
                char self[] = "/proc/self/exe";
                char sleep_word[] = "sleep";
                char* daemon_argv[] = {self, sleep_word, argv[3], argv[2], nullptr};
                ::execv(self, daemon_argv);
                _exit(127);
            }
            std::printf("DAEMON %d\n", static_cast<int>(daemon));
            std::fflush(stdout);
            _exit(0);
        }
        ::close(ready[1]);
        char byte;
        while (::read(ready[0], &byte, 1) > 0) {
        }
        ::waitpid(first, nullptr, 0);
        return 0;
    }
    if (cmd == "fork-bomb" && arg(2) && arg(3)) {
        const long max = std::atol(arg(2));
        const long ms = std::atol(arg(3));
        long forked = 0;
        for (; forked < max; ++forked) {
            pid_t child = ::fork();
            if (child == 0) {
                detach_stdio();
                sleep_ms(ms);
                _exit(0);
            }
            if (child < 0) {
                const int error = errno;
                std::printf("FORKED %ld\n", forked);
                denied("fork", error);
                return 0;
            }
        }
        std::printf("FORKED %ld\n", forked);
        allowed("fork (no limit met)");
        return 0;
    }
    if (cmd == "cgroup-escape") {
        int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        const std::vector<std::string> mounts =
            fd >= 0 ? lines_of(read_all(fd)) : std::vector<std::string>{};
        if (fd >= 0) ::close(fd);
        fd = ::open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
        const std::vector<std::string> groups =
            fd >= 0 ? lines_of(read_all(fd)) : std::vector<std::string>{};
        if (fd >= 0) ::close(fd);
        for (const std::string& group : groups) {
            // ID:controllers:path; the hierarchy is cgroup2 for ID 0, else the v1 mount whose
            // options name one of the controllers.
            const size_t first = group.find(':');
            const size_t second = group.find(':', first + 1);
            if (first == std::string::npos || second == std::string::npos) continue;
            const std::string controllers = group.substr(first + 1, second - first - 1);
            const std::string path = group.substr(second + 1);
            for (const std::string& mount : mounts) {
                const size_t dash = mount.find(" - ");
                if (dash == std::string::npos) continue;
                char root[512] = {};
                char point[512] = {};
                char fstype[64] = {};
                char options[512] = {};
                if (std::sscanf(mount.c_str(), "%*s %*s %*s %511s %511s", root, point) != 2 ||
                    std::sscanf(mount.c_str() + dash + 3, "%63s %*s %511s", fstype, options) != 2) {
                    continue;
                }
                const bool v2 = controllers.empty() && std::strcmp(fstype, "cgroup2") == 0;
                bool v1 = false;
                if (!controllers.empty() && std::strcmp(fstype, "cgroup") == 0) {
                    const std::string wanted =
                        "," + controllers.substr(0, controllers.find(',')) + ",";
                    v1 = ("," + std::string(options) + ",").find(wanted) != std::string::npos;
                }
                if (!v2 && !v1) continue;
                // The cgroup's directory below the mount, then each ancestor up to the mount.
                std::string relative = path;
                const std::string mount_root = root;
                if (mount_root != "/" && relative.compare(0, mount_root.size(), mount_root) == 0) {
                    relative = relative.substr(mount_root.size());
                }
                for (;;) {
                    const std::string dir = std::string(point) + (relative == "/" ? "" : relative);
                    for (const char* file :
                         {"cgroup.procs", "cgroup.threads", "cgroup.kill", "cgroup.subtree_control",
                          "pids.max", "memory.max", "memory.limit_in_bytes", "tasks"}) {
                        const std::string target = dir + "/" + file;
                        if (::access(target.c_str(), F_OK) == 0) open_write(target);
                    }
                    if (relative.empty() || relative == "/") break;
                    const size_t slash = relative.rfind('/');
                    relative =
                        slash == 0 || slash == std::string::npos ? "/" : relative.substr(0, slash);
                }
            }
        }
        return 0;
    }
    if (cmd == "link-each" && arg(2) && arg(3)) {
        for (int i = 3; i < argc; ++i) {
            const char* slash = std::strrchr(argv[i], '/');
            const std::string link = std::string(arg(2)) + "/" + (slash ? slash + 1 : argv[i]);
            attempt(std::string("link ") + argv[i],
                    [&] { return ::link(argv[i], link.c_str()) == 0; });
        }
        return 0;
    }
    if (cmd == "lock-probe" && arg(2)) {
        std::vector<std::string> paths;
        attempt(std::string("list ") + arg(2), [&] { return list_dir(arg(2), &paths); });
        for (int i = 3; i < argc; ++i)
            paths.emplace_back(argv[i]);
        for (const std::string& path : paths)
            lock_attempt(path);
        return 0;
    }
    if (cmd == "lock-squat-bg" && arg(2) && arg(3)) {
        const long ms = std::atol(arg(3));
        pid_t squatter = ::fork();
        if (squatter == 0) {
            ::setsid();
            detach_stdio();
            std::vector<int> held;
            for (long waited = 0; waited < ms; waited += 20) {
                std::vector<std::string> paths;
                list_dir(arg(2), &paths);
                for (const std::string& path : paths) {
                    for (int flags : {O_RDWR, O_RDONLY}) {
                        int fd = ::open(path.c_str(), flags | O_NOFOLLOW);
                        if (fd < 0) continue;
                        if (::flock(fd, LOCK_EX | LOCK_NB) == 0 ||
                            ::flock(fd, LOCK_SH | LOCK_NB) == 0) {
                            held.push_back(fd);
                        } else {
                            ::close(fd);
                        }
                        break;
                    }
                }
                sleep_ms(20);
            }
            _exit(0);
        }
        std::printf("STARTED %d\n", static_cast<int>(squatter));
        std::fflush(stdout);
        sleep_ms(ms);
        return 0;
    }
    if (cmd == "lease" && arg(2)) {
        for (int i = 2; i < argc; ++i) {
            const std::string what = std::string("lease ") + argv[i];
            const int fd = ::open(argv[i], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            if (fd < 0) {
                const int error = errno;
                denied(what + " (open)", error);
                continue;
            }
            bool taken = false;
            attempt(what, [&] { return taken = ::fcntl(fd, F_SETLEASE, F_RDLCK) == 0; });
            if (taken) (void)::fcntl(fd, F_SETLEASE, F_UNLCK);
            ::close(fd);
        }
        return 0;
    }
    if (cmd == "connect-unix" && arg(2)) {
        for (int i = 2; i < argc; ++i) {
            sockaddr_un address{};
            address.sun_family = AF_UNIX;
            std::strncpy(address.sun_path, argv[i], sizeof address.sun_path - 1);
            const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            attempt(std::string("connect-unix ") + argv[i], [&] {
                return fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&address),
                                            sizeof address) == 0;
            });
            if (fd >= 0) ::close(fd);
        }
        return 0;
    }
    if (cmd == "kill" && arg(2)) {
        for (int i = 2; i < argc; ++i) {
            const auto pid = static_cast<pid_t>(std::atol(argv[i]));
            attempt(std::string("kill ") + argv[i], [&] { return ::kill(pid, SIGTERM) == 0; });
        }
        return 0;
    }
    if (cmd == "prlimit" && arg(2) && arg(3)) {
        const auto pid = static_cast<pid_t>(std::atol(arg(2)));
        const auto value = static_cast<rlim_t>(std::atol(arg(3)));
        const rlimit limit{value, value};
        attempt(std::string("prlimit ") + arg(2),
                [&] { return ::prlimit(pid, RLIMIT_NOFILE, &limit, nullptr) == 0; });
        return 0;
    }
    return usage();
}
