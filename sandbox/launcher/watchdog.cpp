// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/launcher/watchdog.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::launcher {

namespace {

constexpr int alive_fd = 3;      // the pipe's read end: end-of-file when the cordon process goes
constexpr int kill_file_fd = 4;  // the cgroup host's cgroup.kill

// In the forked child. The launcher is single-threaded, so any call is safe here; these are
// system calls on the descriptors it was given.
[[noreturn]] void watch_until_orphaned() noexcept {
    ::setsid();
    // Nothing but its two descriptors: a caller's pipe held here on 0-2 would stay open for as
    // long as the cordon process lives.
    ::syscall(SYS_close_range, static_cast<unsigned>(kill_file_fd + 1), ~0U, 0U);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2; ++fd) {
        if (null < 0 || ::dup2(null, fd) < 0) ::close(fd);
    }
    if (null >= 0) ::close(null);
    ::prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM})
        ::sigaction(sig, &ignore, nullptr);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    char byte;
    ssize_t n;
    while ((n = ::read(alive_fd, &byte, 1)) != 0) {
        if (n < 0 && errno != EINTR) break;
    }
    if (::write(kill_file_fd, "1", 1) != 1) {
        // the host is gone or stopped listening: nothing is left to tell
    }
    ::_exit(0);
}

}  // namespace

int watch_cgroup(const reporter& report) noexcept {
    struct stat alive {};
    if (::fstat(alive_fd, &alive) != 0 || !S_ISFIFO(alive.st_mode) ||
        (::fcntl(alive_fd, F_GETFL) & O_ACCMODE) != O_RDONLY) {
        report.fail(sandbox::launcher_stage::usage, EBADF,
                    "usage error: --watch-cgroup needs the read end of a pipe on fd 3");
    }
    // Blocking reads: only end-of-file may end the watch (an EAGAIN would kill the runs of a
    // cordon that lives).
    if (::fcntl(alive_fd, F_SETFL, ::fcntl(alive_fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        report.fail(sandbox::launcher_stage::usage, errno,
                    "usage error: --watch-cgroup cannot make fd 3 blocking");
    }
    if ((::fcntl(kill_file_fd, F_GETFL) & O_ACCMODE) != O_WRONLY) {
        report.fail(sandbox::launcher_stage::usage, EBADF,
                    "usage error: --watch-cgroup needs a cgroup.kill open for writing on fd 4");
    }
    const pid_t watchdog = ::fork();
    if (watchdog == 0) watch_until_orphaned();
    return watchdog < 0 ? 1 : 0;
}

}  // namespace cordon::launcher
