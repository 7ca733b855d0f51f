// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// =================================================================================================
//  CHILD-SIDE CODE. Everything in this file runs between fork/clone and exec.
//
//  Rules: no allocation, no logging, no exceptions, no locks, no stdio; only async-signal-safe
//  system calls. Under spawn_method::vfork the child shares the parent's memory (CLONE_VM), so it
//  must not write to anything but its own stack, the plan's `moved` array and its trees' `tree_fd`
//  fields, which the parent sized for it and never reads. The parent blocks every signal around
//  the clone so that no parent handler can run here before dispositions are reset.
// =================================================================================================

#include "runtime/spawn_child_linux.hpp"

#include "sandbox/exec_search.hpp"
#include "sandbox/identity_child.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::runtime::detail {

namespace {

[[noreturn]] CORDON_CHILD_SIDE void fail(int error_fd, spawn_stage stage, int error,
                                         int step = 0) noexcept {
    child_failure record{static_cast<int>(stage), error, step};
    ssize_t written;
    do {
        written = ::write(error_fd, &record, sizeof record);
    } while (written < 0 && errno == EINTR);
    ::_exit(127);
}

// Marks every fd at or above 3 CLOEXEC except the targets: the child sees only what it was given,
// whatever the rest of the process opened without O_CLOEXEC.
CORDON_CHILD_SIDE void cloexec_everything_else(const child_plan& plan) noexcept {
    int start = 3;
    for (;;) {
        int next_target = -1;
        for (std::size_t i = 0; i < plan.fd_count; ++i) {
            int target = plan.fds[i].child_fd;
            if (target >= start && (next_target < 0 || target < next_target)) {
                next_target = target;
            }
        }
        unsigned int last = next_target < 0 ? ~0U : static_cast<unsigned int>(next_target - 1);
        if (next_target < 0 || next_target > start) {
            if (::syscall(SYS_close_range, static_cast<unsigned int>(start), last,
                          CLOSE_RANGE_CLOEXEC) != 0) {
                // Kernels before 5.11: walk the range by hand.
                rlimit limit{};
                rlim_t max = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
                if (max > 65536) max = 65536;
                rlim_t stop = next_target < 0 ? max : static_cast<rlim_t>(next_target);
                for (rlim_t fd = static_cast<rlim_t>(start); fd < stop; ++fd) {
                    int flags = ::fcntl(static_cast<int>(fd), F_GETFD);
                    if (flags >= 0) ::fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC);
                }
            }
        }
        if (next_target < 0) return;
        start = next_target + 1;
    }
}

}  // namespace

CORDON_CHILD_SIDE void run_child(const child_plan& plan) noexcept {
    // The error pipe may sit at a number some target will take; move it above them first.
    int error_fd = ::fcntl(plan.error_fd, F_DUPFD_CLOEXEC, plan.scratch_fd_floor);
    if (error_fd < 0) fail(plan.error_fd, spawn_stage::fds, errno);
    // Likewise the image to execute, which stays CLOEXEC.
    int exec_fd = -1;
    if (plan.exec_fd >= 0) {
        exec_fd = ::fcntl(plan.exec_fd, F_DUPFD_CLOEXEC, plan.scratch_fd_floor);
        if (exec_fd < 0) fail(error_fd, spawn_stage::fds, errno);
    }
    // And the Landlock rung's rulesets, used after the descriptors are placed.
    sandbox::child_confinement_fds walls_fds;
    if (plan.confinement != nullptr) {
        if (const int error = sandbox::lift_child_confinement(*plan.confinement,
                                                              plan.scratch_fd_floor, &walls_fds);
            error != 0) {
            fail(error_fd, spawn_stage::fds, error);
        }
    }

    // Default dispositions: the parent ignores SIGPIPE and may handle others; the command must
    // start with a clean slate. SIGKILL and SIGSTOP fail harmlessly.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig)
        ::sigaction(sig, &default_action, nullptr);

    // Die with the spawning thread. Had it already died before prctl, the child was reparented
    // and must go now.
    if (plan.parent > 0) {
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0L, 0L, 0L) != 0) {
            fail(error_fd, spawn_stage::signals, errno);
        }
        if (::getppid() != plan.parent) ::_exit(127);
    }

    // A new session: the child leads its own process group (pgid == pid), which cordon signals
    // as a whole, and it has no controlling terminal to read from or be stopped by.
    if (::setsid() < 0) fail(error_fd, spawn_stage::session, errno);

    // First in line for the OOM killer, whatever fills the memory: the command, its runner and
    // everything they start inherit 1000 (proc(5)), so that the agent and cordon are never
    // chosen before the run. Raising the score needs no privilege; without /proc (or where the
    // host forbids the write) the run's memory limit still holds, so this is not a failure.
    if (const int adj = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); adj >= 0) {
        if (::write(adj, "1000", 4) != 4) {
            // not a failure (above)
        }
        ::close(adj);
    }

    // `0` is the writer: the process in a v2 cgroup.procs, this one thread in a v1 `tasks` (the
    // whole process, which has no other).
    for (std::size_t i = plan.born_in_first_cgroup ? 1 : 0; i < plan.cgroup_count; ++i) {
        if (::write(plan.cgroup_join_fds[i], "0", 1) < 0) {
            fail(error_fd, spawn_stage::cgroup, errno);
        }
    }

    // The run's own mount namespace, its trees idmapped (sandbox/identity.hpp): while the child
    // is still root, and before the working directory is entered through them.
    if (const int error = sandbox::attach_idmapped_trees(
            plan.trees, plan.tree_count, plan.scratch_fd_floor, plan.passwd, plan.group);
        error != 0) {
        fail(error_fd, spawn_stage::confine, error,
             static_cast<int>(sandbox::launcher_stage::idmap));
    }

    // Move every source fd out of the way first, so that placing one cannot clobber another's
    // source; dup2 onto the target then clears CLOEXEC on exactly the targets.
    int* const moved = plan.moved;
    for (std::size_t i = 0; i < plan.fd_count; ++i) {
        moved[i] = ::fcntl(plan.fds[i].parent_fd, F_DUPFD_CLOEXEC, plan.scratch_fd_floor);
        if (moved[i] < 0) fail(error_fd, spawn_stage::fds, errno);
    }
    for (std::size_t i = 0; i < plan.fd_count; ++i) {
        if (::dup2(moved[i], plan.fds[i].child_fd) < 0) fail(error_fd, spawn_stage::fds, errno);
    }
    cloexec_everything_else(plan);
    // A runner binds the idmapped tree where it would have bound the directory.
    if (const int error = sandbox::place_idmapped_trees(plan.trees, plan.tree_count); error != 0) {
        fail(error_fd, spawn_stage::confine, error,
             static_cast<int>(sandbox::launcher_stage::idmap));
    }

    // The terminal on fd 0 becomes the session's (tty_ioctl(4)): its line discipline then sends
    // Ctrl-C's SIGINT, SIGWINCH and the hangup to this process group, the foreground one.
    if (plan.controlling_terminal && ::ioctl(0, TIOCSCTTY, 0) < 0) {
        fail(error_fd, spawn_stage::session, errno);
    }

    if (plan.cwd != nullptr && plan.cwd[0] != '\0' && ::chdir(plan.cwd) < 0) {
        fail(error_fd, spawn_stage::chdir, errno);
    }

    // The Landlock rung, where the launcher would have applied it: after the session, the
    // cgroup, the descriptors and the working directory, right before the command's exec.
    if (plan.confinement != nullptr) {
        sandbox::launcher_stage step = sandbox::launcher_stage::ruleset;
        if (const int error = sandbox::apply_child_confinement(*plan.confinement, walls_fds, &step,
                                                               plan.become_uid, plan.become_gid);
            error != 0) {
            fail(error_fd, spawn_stage::confine, error, static_cast<int>(step));
        }
    }

    // The descriptor limit the program was started with. Last before exec: what the child opened
    // above (the Landlock rung's ruleset and paths) was not held to it; the descriptors above it
    // that the child still has are all close-on-exec. Rlimits are per process, so the parent
    // keeps its own even under CLONE_VM.
    if (plan.descriptor_limit > 0) {
        rlimit limit{};
        if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) fail(error_fd, spawn_stage::fds, errno);
        limit.rlim_cur =
            plan.descriptor_limit < limit.rlim_max ? plan.descriptor_limit : limit.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) fail(error_fd, spawn_stage::fds, errno);
    }

    // The run's own uid, last (bwrap is started as it): nothing above may need root after it.
    if (plan.confinement == nullptr && plan.become_uid >= 0) {
        if (const int error = sandbox::become(static_cast<uid_t>(plan.become_uid),
                                              static_cast<gid_t>(plan.become_gid));
            error != 0) {
            fail(error_fd, spawn_stage::confine, error,
                 static_cast<int>(sandbox::launcher_stage::identity));
        }
    }

    sigset_t empty;
    ::sigemptyset(&empty);
    if (::sigprocmask(SIG_SETMASK, &empty, nullptr) < 0)
        fail(error_fd, spawn_stage::signals, errno);

    if (exec_fd >= 0) {
        // The fd is CLOEXEC: the kernel holds the file open while it loads it, which works for
        // ELF images (not for #! scripts, which the runner never is).
        ::syscall(SYS_execveat, exec_fd, "", plan.argv, plan.envp, AT_EMPTY_PATH);
    } else if (plan.confinement != nullptr) {
        // Found as the launcher finds it: on PATH, under confinement, past entries it closes.
        errno = sandbox::exec_searching(plan.argv, plan.envp);
    } else {
        ::execve(plan.path, plan.argv, plan.envp);
    }
    fail(error_fd, spawn_stage::exec, errno);
}

}  // namespace cordon::runtime::detail
