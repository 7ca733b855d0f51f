// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/spawn.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "cordon/limits.hpp"
#include "runtime/child_stack.hpp"
#include "runtime/clone3.hpp"
#include "runtime/spawn_child_linux.hpp"

namespace cordon::runtime {

// ThreadSanitizer cannot follow a child that shares the parent's memory: its interceptors would
// record what the child does (the descriptors it closes, the signals it masks) as the suspended
// parent thread's own actions. Under TSan every spawn forks. AddressSanitizer can: the child's own
// code is left uninstrumented (CORDON_CHILD_SIDE), its calls into libc only read the shadow, and
// the shadow that instrumented callees' frames leave poisoned on its stack is cleared once it is
// gone (clone_vfork, below). The ASan+UBSan suites thus run the vfork path that ships.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CORDON_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CORDON_TSAN 1
#endif

spawn_method default_spawn_method() noexcept {
#if defined(CORDON_TSAN)
    return spawn_method::fork;
#else
    return spawn_method::vfork;
#endif
}

std::variant<std::string, int> resolve_program(std::string_view program,
                                               const std::vector<std::string>& env,
                                               const std::filesystem::path& cwd) {
    if (program.empty()) return ENOENT;
    auto executable = [](const std::string& path) -> int {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) return errno;
        if (S_ISDIR(st.st_mode)) return EACCES;
        if (::access(path.c_str(), X_OK) != 0) return errno;
        return 0;
    };
    if (program.find('/') != std::string_view::npos) {
        // A path with a slash is not searched; a relative one names a file under the child's
        // working directory, where execve will look for it after the chdir.
        std::string path(program);
        std::string checked =
            program.front() == '/' || cwd.empty() ? path : (cwd / std::string(program)).string();
        if (int error = executable(checked); error != 0) return error;
        return path;
    }
    std::string path_list = "/usr/local/bin:/usr/bin:/bin";
    for (const auto& entry : env) {
        if (entry.rfind("PATH=", 0) == 0) {
            path_list = entry.substr(5);
            break;
        }
    }
    int first_error = ENOENT;
    std::size_t start = 0;
    while (start <= path_list.size()) {
        std::size_t end = path_list.find(':', start);
        if (end == std::string::npos) end = path_list.size();
        std::string dir = path_list.substr(start, end - start);
        if (dir.empty()) dir = ".";
        std::string candidate = dir + "/" + std::string(program);
        // Checked (and exec'd) where the child will be, not where the spawner happens to be.
        if (candidate.front() != '/' && !cwd.empty()) candidate = (cwd / candidate).string();
        int error = executable(candidate);
        if (error == 0) return candidate;
        // As execvp: remember EACCES so "found but not executable" beats "not found".
        if (error == EACCES) first_error = EACCES;
        start = end + 1;
    }
    return first_error;
}

namespace {

CORDON_CHILD_SIDE int child_entry(void* arg) {
    detail::run_child(*static_cast<const detail::child_plan*>(arg));
}

struct blocked_signals {
    sigset_t previous;
    blocked_signals() noexcept {
        sigset_t all;
        ::sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &previous);
    }
    ~blocked_signals() { ::pthread_sigmask(SIG_SETMASK, &previous, nullptr); }
    blocked_signals(const blocked_signals&) = delete;
    blocked_signals& operator=(const blocked_signals&) = delete;
};

// The child born in the cgroup `birth` (runtime/clone3.hpp); -1 with errno when the kernel, the
// build or a filter cannot, or the cgroup refuses: the caller then clones as before, and the
// child's join reports what the cgroup says.
pid_t clone3_into_cgroup(detail::child_plan& plan, int& pidfd, detail::child_stack& stack,
                         int birth) {
    // Where the kernel (before 5.3, or 5.7 for the cgroup: E2BIG) or a filter refuses clone3
    // itself, it is not asked again: every spawn would pay a failed call.
    static std::atomic<bool> refused{false};
    if (birth < 0 || !detail::clone3_entry_built() || refused.load(std::memory_order_relaxed)) {
        errno = ENOSYS;
        return -1;
    }
    char* const low = static_cast<char*>(stack.guard()) + stack.guard_size();
    clone_args args{};
    args.flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_INTO_CGROUP;
    args.pidfd = reinterpret_cast<std::uintptr_t>(&pidfd);
    args.exit_signal = SIGCHLD;
    args.stack = reinterpret_cast<std::uintptr_t>(low);
    args.stack_size = static_cast<std::uint64_t>(static_cast<char*>(stack.top()) - low);
    args.cgroup = static_cast<unsigned>(birth);  // >= 0 (above)
    plan.born_in_first_cgroup = true;
    const pid_t pid = detail::clone3_call(args, child_entry, &plan);
    if (pid < 0) {
        const int error = errno;
        plan.born_in_first_cgroup = false;  // no child read it
        pidfd = -1;  // the kernel may have written one before the cgroup refused the child
        if (error == ENOSYS || error == E2BIG) refused.store(true, std::memory_order_relaxed);
        errno = error;
    }
    return pid;
}

pid_t clone_vfork(detail::child_plan& plan, int& pidfd, int cgroup_birth_fd) {
    // The thread's own guarded stack (child_stack.hpp): the vfork child is done with it by the
    // time clone returns.
    detail::child_stack* stack = detail::child_stack::for_this_thread();
    if (stack == nullptr) return -1;
    pid_t pid = clone3_into_cgroup(plan, pidfd, *stack, cgroup_birth_fd);
    if (pid >= 0) {
        stack->unpoison();
        return pid;
    }
    void* top = stack->top();
    pid = ::clone(child_entry, top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &plan, &pidfd);
    if (pid < 0 && errno == EINVAL) {
        // Kernels before 5.2 have no CLONE_PIDFD; the caller falls back to waitpid polling.
        pidfd = -1;
        pid = ::clone(child_entry, top, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
    }
    // Under AddressSanitizer the frames of what the child called poisoned their redzones in the
    // shadow we share, and those that exec'd never cleared them.
    stack->unpoison();
    return pid;
}

pid_t plain_fork(detail::child_plan& plan, int& pidfd) {
    pid_t pid = ::fork();
    if (pid == 0) detail::run_child(plan);
    if (pid > 0) {
        // The child cannot be reaped before we wait for it, so the pid is still ours.
        pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
        if (pidfd >= 0) ::fcntl(pidfd, F_SETFD, FD_CLOEXEC);
    }
    return pid;
}

}  // namespace

spawn_result spawn(const spawn_request& request) {
    if (request.argv.empty()) return spawn_error{spawn_stage::resolve, ENOENT};
    if (request.cgroup_join_fds.size() > max_cgroups) {
        return spawn_error{spawn_stage::cgroup, EMFILE};
    }
    std::variant<std::string, int> resolved = request.argv.front();
    if (request.exec_fd < 0) {
        resolved = resolve_program(request.argv.front(), request.env, request.cwd);
        if (const int* error = std::get_if<int>(&resolved)) {
            return spawn_error{spawn_stage::resolve, *error};
        }
    }
    const std::string& path = std::get<std::string>(resolved);

    // Every array the child reads is built here, before it exists.
    std::vector<char*> argv;
    argv.reserve(request.argv.size() + 1);
    for (const auto& arg : request.argv)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    envp.reserve(request.env.size() + 1);
    for (const auto& entry : request.env)
        envp.push_back(const_cast<char*>(entry.c_str()));
    envp.push_back(nullptr);
    std::string cwd = request.cwd.string();

    // The run's trees, for the child to idmap (sandbox/identity.hpp).
    std::vector<sandbox::child_tree> trees;
    long become_uid = -1;
    long become_gid = -1;
    const char* passwd = nullptr;
    const char* group = nullptr;
    if (request.identity != nullptr) {
        if (!request.identity->passwd.empty()) passwd = request.identity->passwd.c_str();
        if (!request.identity->group.empty()) group = request.identity->group.c_str();
        for (const sandbox::idmapped_tree& tree : request.identity->trees) {
            trees.push_back({tree.path.c_str(), tree.device, tree.inode, tree.mapping->get(),
                             tree.bind_fd, tree.read_only, -1});
        }
        if (request.identity->identity.reserved &&
            (request.identity->switch_in_spawner || request.confinement != nullptr)) {
            become_uid = request.identity->identity.uid;
            become_gid = request.identity->identity.gid;
        }
    }

    int floor = 10;
    for (const auto& mapping : request.fds)
        floor = std::max(floor, mapping.child_fd + 1);
    // The child holds every source twice for a moment (moved above the targets, then placed), and
    // its error pipe, image and the Landlock rung's two rulesets above them: past the soft limit
    // on descriptors it could place none.
    if (rlimit limit{};
        ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        static_cast<rlim_t>(floor) + request.fds.size() + trees.size() + 4 > limit.rlim_cur) {
        return spawn_error{spawn_stage::fds, EMFILE};
    }
    std::vector<int> moved(request.fds.size());
    // The soft descriptor limit the command gets, when the program raised its own
    // (cordon/limits.hpp): set in the child, where nothing is read any more.
    rlim_t descriptor_limit = 0;
    if (const auto wanted = commands_descriptor_limit()) {
        if (rlimit limit{}; ::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur != *wanted) {
            descriptor_limit = static_cast<rlim_t>(*wanted);
        }
    }

    pipe_pair errors;
    if (!make_pipe(errors)) return spawn_error{spawn_stage::resources, errno};

    detail::child_plan plan{path.c_str(),
                            argv.data(),
                            envp.data(),
                            cwd.c_str(),
                            request.fds.data(),
                            request.fds.size(),
                            moved.data(),
                            request.cgroup_join_fds.data(),
                            request.cgroup_join_fds.size(),
                            false,
                            request.exec_fd,
                            errors.write.get(),
                            floor,
                            request.die_with_spawning_thread ? ::getpid() : 0,
                            request.confinement,
                            request.controlling_terminal,
                            descriptor_limit,
                            trees.data(),
                            trees.size(),
                            passwd,
                            group,
                            become_uid,
                            become_gid};

    int pidfd = -1;
    pid_t pid;
    {
        blocked_signals guard;
        pid = request.method == spawn_method::vfork
                  ? clone_vfork(plan, pidfd, request.cgroup_birth_fd)
                  : plain_fork(plan, pidfd);
    }
    if (pid < 0) return spawn_error{spawn_stage::resources, errno};
    errors.write.reset();

    detail::child_failure failure{};
    ssize_t got;
    do {
        got = ::read(errors.read.get(), &failure, sizeof failure);
    } while (got < 0 && errno == EINTR);

    spawned_child child;
    child.pid = pid;
    child.pidfd.reset(pidfd);
    if (got == 0) return child;  // EOF: the CLOEXEC pipe closed on a successful exec

    // The child failed before exec, or we cannot tell whether it did: make sure it is gone and
    // reap it, so that no zombie (and no unaccounted process) is left, and report the stage.
    const int read_error = got < 0 ? errno : 0;
    if (got != static_cast<ssize_t>(sizeof failure)) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got != static_cast<ssize_t>(sizeof failure)) {
        return spawn_error{spawn_stage::resources, read_error != 0 ? read_error : EPROTO};
    }
    return spawn_error{static_cast<spawn_stage>(failure.stage), failure.error, failure.step};
}

}  // namespace cordon::runtime
