// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-landlock: confines a command and execs it in place (docs/sandbox.md, "cordon-landlock").
// It is the last runner before every confined command: alone on hosts where bwrap is unusable, and
// inside bwrap, after bwrap's mounts are in place, everywhere else, so that a mount gap and a path
// gap must line up before anything escapes.
//
//   cordon-landlock [--status-fd N] [--env-fd N] [--no-landlock] [--private-ipc] [--deny-metadata]
//                   [--unshare-net] [--deny-unix-sockets] [--deny-sockets [--local-binding]]
//                   [--namespaced-sockets-only] [--proxy-fd N --proxy-port P] [--witness-fd N]
//                   [--read-root] [--deny-read PATH] [--ro PATH] [--rw PATH] [--ro-try PATH]
//                   [--rw-try PATH]
//                   [--ro-fd N] [--rw-fd N] [--quota-fd N] [--abi-cap N] [--report-ending]
//                   [--controlling-tty] [--identity UID:GID]
//                   -- ARGV...
//   cordon-landlock [--status-fd N] [--abi-cap N] --probe
//   cordon-landlock --watch-cgroup            (a cgroup host's watchdog: watchdog.hpp)
//
// Order: parse (command_line.hpp); read the command's environment from --env-fd
// (environment.hpp); query the ABI and build the ruleset (rules.hpp: the root read rules less
// every --deny-read path, then the
// --ro grants, then the --rw grants; every path opened once without following symlinks, every
// --*-fd used as given); raise the walls (sandbox/walls.hpp: a private IPC namespace unless
// --private-ipc says the caller made one, the run's kernel quotas (sandbox/quotas.hpp: the
// rlimits, and the user namespace's limits through --quota-fd), with --identity the run's own
// uid and gid (sandbox/identity.hpp), every capability dropped,
// no_new_privs and
// restrict_self, the seccomp filter, the partial-enforcement notice); every fd but 0-2
// close-on-exec; a `started` record; exec (with --report-ending: in a child, whose end this process
// reports in an `ended` record, report_ending.hpp). Every failure exits 125 with one failure record
// on the --status-fd (reporter.hpp, sandbox/launcher_status.hpp) and, when no record took the line
// whole, exactly one stderr line.
//
// The launcher is started with an empty environment and linked statically, so that no loader
// variable and no library of the command's choosing is ever loaded into it; the command gets the
// environment read from --env-fd (NUL-separated NAME=value entries).
//
// Built with -fno-exceptions -fno-rtti and libc only: fixed-size arrays, write(2) for output,
// mmap(2) for the environment.
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/confinement_extras.hpp"
#include "sandbox/exec_search.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/launcher/command_line.hpp"
#include "sandbox/launcher/environment.hpp"
#include "sandbox/launcher/report_ending.hpp"
#include "sandbox/launcher/reporter.hpp"
#include "sandbox/launcher/rules.hpp"
#include "sandbox/launcher/test_hook.hpp"
#include "sandbox/launcher/watchdog.hpp"
#include "sandbox/walls.hpp"

extern char** environ;

namespace {

using namespace cordon::launcher;
namespace landlock = cordon::sandbox::landlock;
namespace extras = cordon::sandbox::extras;
namespace walls = cordon::sandbox::walls;
using cordon::sandbox::launcher_stage;

// Makes the terminal on fd 0 the caller's controlling terminal, in a session of its own when it
// leads none (a process group leader cannot start one). errno, or 0.
int take_terminal() noexcept {
    if (::getsid(0) != ::getpid() && ::setsid() < 0) return errno;
    return ::ioctl(0, TIOCSCTTY, 0) == 0 ? 0 : errno;
}

// Marks every fd from 3 on close-on-exec: the command sees stdin, stdout and stderr only,
// whatever the runners before it passed down (bwrap keeps the fds it is given).
void cloexec_from_3() noexcept {
    if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
    // Kernels before 5.11: walk the range by hand.
    rlimit limit{};
    rlim_t max = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
    if (max > 65536) max = 65536;
    for (rlim_t fd = 3; fd < max; ++fd) {
        const int flags = ::fcntl(static_cast<int>(fd), F_GETFD);
        if (flags >= 0) ::fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC);
    }
}

// The two filters walls::apply() chooses between: whether SysV IPC must be refused is known only
// once it has tried to make an IPC namespace.
void build_filters(const reporter& report, const command_line& line, extras::filter_program& own,
                   extras::filter_program& shared) noexcept {
    extras::filter_options options;
    options.deny_metadata = line.deny_metadata;
    options.deny_unix_sockets = line.deny_unix_sockets;
    options.deny_other_sockets = line.deny_sockets;
    options.allow_tcp_streams = line.deny_sockets && line.local_binding;
    options.namespaced_sockets_only = line.namespaced_sockets_only;
    int error = extras::build_filter(options, own);
    if (error == 0) {
        options.deny_sysv_ipc = true;
        error = extras::build_filter(options, shared);
    }
    if (error != 0) {
        report.fail(walls::stage_of(walls::step::seccomp), error, "%s: %s",
                    walls::reason_of(walls::step::seccomp), std::strerror(error));
    }
}

}  // namespace

int main(int argc, char** argv) {
    reporter report;
    command_line line;
    parse(argc, argv, report, line);
    if (line.probe) return probe(report, line.abi_cap);
    if (line.watch_cgroup) return watch_cgroup(report);
    test_hook::arm(line.command);
    test_hook::at(test_hook::step::setup);

    char** envp = line.env_fd >= 0 ? read_environment(report, line.env_fd) : environ;

    int abi = 0;
    walls::plan plan;
    plan.landlock = line.landlock;
    if (line.landlock) {
        abi = require_abi(report, line.abi_cap);
        plan.ruleset = build_ruleset(report, abi, line);
        plan.partial_notice = abi < landlock::full_filesystem_abi;
    }
    extras::filter_program own_ipc;
    extras::filter_program shared_ipc;
    build_filters(report, line, own_ipc, shared_ipc);
    plan.own_ipc = &own_ipc;
    plan.shared_ipc = &shared_ipc;
    extras::filter_program witness;
    if (line.witness_fd >= 0) {
        if (const int error = extras::build_witness_filter(witness); error != 0) {
            report.fail(walls::stage_of(walls::step::seccomp), error, "%s: %s",
                        walls::reason_of(walls::step::seccomp), std::strerror(error));
        }
        plan.witness = &witness;
        plan.witness_channel = line.witness_fd;
    }
    plan.own_ipc_given = line.private_ipc;
    plan.user_sysctls = line.quota_fd;
    plan.unshare_net = line.unshare_net;
    plan.become_uid = line.become_uid;
    plan.become_gid = line.become_gid;
    if (line.deny_sockets && line.landlock && abi >= landlock::network_abi) {
        landlock::failure failure{};
        plan.network_ruleset = landlock::create_network_ruleset(abi, line.local_binding, &failure);
        if (plan.network_ruleset < 0) {
            report.fail(failure.stage, failure.error, "%s: %s",
                        walls::reason_of(walls::step::landlock), std::strerror(failure.error));
        }
    }

    walls::step failed = walls::step::landlock;
    if (const int error = walls::apply(plan, &failed); error != 0) {
        report.fail(walls::stage_of(failed), error, "%s: %s", walls::reason_of(failed),
                    std::strerror(error));
    }
    if (plan.landlock) ::close(plan.ruleset);
    if (plan.network_ruleset >= 0) ::close(plan.network_ruleset);
    if (line.quota_fd >= 0) ::close(line.quota_fd);  // a way into the host's /proc: never kept
    cloexec_from_3();

    // The terminal on fd 0 becomes this session's: the launcher leads it (bwrap's
    // --new-session, or cordon's spawn, made it so, with no terminal), and the command it execs,
    // or runs as its child with --report-ending, stays in its process group, where cordon's
    // signals find it. Ctrl-C's SIGINT reaches the command; this process blocks it
    // (report_ending.hpp).
    if (line.controlling_tty) {
        if (const int error = take_terminal(); error != 0) {
            report.fail(launcher_stage::spawn, error, "cannot make the terminal the command's: %s",
                        std::strerror(error));
        }
    }
    if (line.report_ending) {
        run_and_report(report, abi >= landlock::scopes_abi ? abi : 0, line.command, envp,
                       line.proxy_fd, line.proxy_port);
    }
    // A signal from here on ends the launcher, the leader: the runner's own status says how.
    test_hook::at(test_hook::step::before_started);
    report.started();
    test_hook::at(test_hook::step::after_started);
    const int error = cordon::sandbox::exec_searching(line.command, envp);
    report.fail(launcher_stage::exec, error, "exec failed: %s: %s", line.command[0],
                std::strerror(error));
}
