// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/launcher/report_ending.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/exec_search.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/launcher/forwarder.hpp"
#include "sandbox/launcher/test_hook.hpp"

namespace cordon::launcher {

namespace landlock = sandbox::landlock;
using sandbox::launcher_stage;

void run_and_report(const reporter& report, int scope_abi, char** command, char** envp,
                    int proxy_fd, int proxy_port) noexcept {
    sigset_t all;
    sigset_t previous;
    ::sigfillset(&all);
    ::sigprocmask(SIG_SETMASK, &all, &previous);
    forwarder proxy;
    if (proxy_fd >= 0) proxy = start_forwarder(report, proxy_fd, proxy_port);
    if (::prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error, "cannot make the launcher non-dumpable: %s",
                    std::strerror(error));
    }
    int exec_check[2];
    if (::pipe2(exec_check, O_CLOEXEC) != 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error, "cannot start the command: %s",
                    std::strerror(error));
    }
    test_hook::at(test_hook::step::before_fork);
    const pid_t child = ::fork();
    if (child < 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error, "cannot start the command: %s",
                    std::strerror(error));
    }
    if (child == 0) {
        ::close(exec_check[0]);
        if (scope_abi > 0) {
            // A failure here is the child's to report, like an exec failure: the parent, told
            // through the pipe, then writes nothing more.
            landlock::failure failure{};
            const int scope = landlock::create_scope_ruleset(scope_abi, &failure);
            const int error = scope < 0 ? failure.error : landlock::restrict_self(scope);
            if (error != 0) {
                (void)write_all(exec_check[1], reinterpret_cast<const char*>(&error), sizeof error);
                report.fail(launcher_stage::ruleset, error, "landlock scope error: %s",
                            std::strerror(error));
            }
            ::close(scope);
        }
        // `started` before the signals are let in: a deadline's SIGTERM pending since the fork
        // then ends a command that has a `started` record (and an `ended` one from the parent),
        // never leaves an `ended` record without one. Only SIGKILL can end this child before
        // the record; the channel then holds an `ended` record alone, which says exactly that.
        test_hook::at(test_hook::step::before_started);
        report.started();
        test_hook::at(test_hook::step::after_started);
        ::sigprocmask(SIG_SETMASK, &previous, nullptr);
        const int error = sandbox::exec_searching(command, envp);
        (void)write_all(exec_check[1], reinterpret_cast<const char*>(&error), sizeof error);
        report.fail(launcher_stage::exec, error, "exec failed: %s: %s", command[0],
                    std::strerror(error));
    }
    // cordon's polite signals go to the members of the run's cgroup it sees: one that reached this
    // process before the child existed is pending here (blocked), and is the command's. Forwarded,
    // so that a deadline landing just before the fork is not lost until the kill plan's SIGKILL.
    sigset_t pending;
    if (::sigpending(&pending) == 0) {
        const int polite_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
        for (const int polite : polite_signals) {
            if (::sigismember(&pending, polite) == 1) ::kill(child, polite);
        }
    }
    ::close(exec_check[1]);
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2; ++fd) {
        if (devnull >= 0) {
            ::dup2(devnull, fd);
        } else {
            ::close(fd);
        }
    }
    int exec_error = 0;
    ssize_t got;
    while ((got = ::read(exec_check[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR) {
    }
    if (got == 0 && proxy.channel >= 0) forward_until_exit(proxy, child);
    siginfo_t info{};
    int waited;
    while ((waited = ::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED)) < 0 &&
           errno == EINTR) {
    }
    if (got > 0) ::_exit(sandbox::launcher_failure_exit);  // the child reported it
    // The ending is unknown (cannot happen while this process owns its only child): say nothing
    // rather than something false.
    if (waited < 0) ::_exit(sandbox::launcher_failure_exit);
    if (info.si_code == CLD_EXITED) {
        report.ended(info.si_status, 0);
        test_hook::at(test_hook::step::after_ended);
        ::_exit(info.si_status);
    }
    report.ended(-1, info.si_status);
    test_hook::at(test_hook::step::after_ended);
    ::_exit(128 + info.si_status);
}

}  // namespace cordon::launcher
