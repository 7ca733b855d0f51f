// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// =================================================================================================
//  CHILD-SIDE CODE (after fork, never exec'd). The watchdog (cgroup_watchdog.hpp) is forked from
//  a process that may run many threads: everything after the fork below is async-signal-safe
//  system calls on descriptors opened before it. No allocation, logging, exceptions or locks.
// =================================================================================================
#include "runtime/cgroup_watchdog.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::runtime {

namespace {

[[noreturn]] void watch_until_orphaned(int alive, int kill_file, int dev_null) noexcept {
    // Nothing of the host's but the two descriptors: a pipe end of a run held here would keep
    // that run's output open for as long as cordon lives.
    const int alive_moved = ::fcntl(alive, F_DUPFD_CLOEXEC, 5);
    const int kill_moved = ::fcntl(kill_file, F_DUPFD_CLOEXEC, 5);
    if (alive_moved < 0 || kill_moved < 0) ::_exit(1);
    for (int fd = 0; fd <= 2; ++fd)
        ::dup2(dev_null, fd);
    if (::dup2(alive_moved, 3) < 0 || ::dup2(kill_moved, 4) < 0) ::_exit(1);
    ::syscall(SYS_close_range, 5U, ~0U, 0U);
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
    while ((n = ::read(3, &byte, 1)) != 0) {
        if (n < 0 && errno != EINTR) break;
    }
    if (::write(4, "1", 1) != 1) {
        // the host is gone or stopped listening: nothing is left to tell
    }
    ::_exit(0);
}

}  // namespace

std::variant<cgroup_watchdog, std::string> cgroup_watchdog::start(
    const std::filesystem::path& directory) {
    const auto why = [](const std::string& what) { return what + ": " + std::strerror(errno); };
    const std::filesystem::path kill_path = directory / "cgroup.kill";
    unique_fd kill_file(::open(kill_path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!kill_file) return why("cannot open " + kill_path.string());
    unique_fd dev_null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!dev_null) return why("cannot open /dev/null");
    pipe_pair alive;
    if (!make_pipe(alive)) return why("cannot make the watchdog's pipe");

    const pid_t child = ::fork();
    if (child < 0) return why("cannot start the watchdog");
    if (child == 0) {
        // A session of its own, then the watchdog as a grandchild that init adopts.
        ::setsid();
        // _Fork: the async-signal-safe fork (no atfork handlers), as this child of a possibly
        // multi-threaded process must use.
        const pid_t watchdog = ::_Fork();
        if (watchdog == 0) {
            ::close(alive.write.get());
            watch_until_orphaned(alive.read.get(), kill_file.get(), dev_null.get());
        }
        ::_exit(watchdog < 0 ? 1 : 0);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return std::string("cannot start the watchdog: its first fork failed");
    }
    return cgroup_watchdog(std::move(alive.write));
}

bool cgroup_watchdog::running() const noexcept {
    if (!alive_) return false;
    // A pipe's write end reports POLLERR once no reader is left, whatever events were asked for.
    pollfd watched{alive_.get(), 0, 0};
    if (::poll(&watched, 1, 0) <= 0) return true;
    return (watched.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
}

void cgroup_watchdog::forget() noexcept {
    if (alive_) ::close(alive_.release());
}

}  // namespace cordon::runtime
