// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/cgroup_watchdog.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/spawn.hpp"
#include "sandbox/runner_path.hpp"

namespace cordon::runtime {

namespace fs = std::filesystem;

std::variant<cgroup_watchdog, std::string> cgroup_watchdog::start(const fs::path& directory) {
    const auto why = [](const std::string& what) { return what + ": " + std::strerror(errno); };
    // The launcher that confined runs would take, trusted as they trust it (runner_path.hpp).
    const sandbox::launcher_lookup launcher =
        sandbox::find_launcher(sandbox::launcher_candidates());
    if (!launcher.refused.empty()) return "no watchdog to start: " + launcher.refused;
    unique_fd program(::open(launcher.path.c_str(), O_PATH | O_CLOEXEC));
    if (!program) return why("cannot open " + launcher.path.string());

    const fs::path kill_path = directory / "cgroup.kill";
    unique_fd kill_file(::open(kill_path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!kill_file) return why("cannot open " + kill_path.string());
    unique_fd dev_null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!dev_null) return why("cannot open /dev/null");
    pipe_pair alive;
    if (!make_pipe(alive)) return why("cannot make the watchdog's pipe");

    spawn_request request;
    request.argv = {"cordon-landlock", "--watch-cgroup"};
    request.cwd = "/";
    request.fds = {{dev_null.get(), 0},
                   {dev_null.get(), 1},
                   {dev_null.get(), 2},
                   {alive.read.get(), 3},
                   {kill_file.get(), 4}};
    request.exec_fd = program.get();
    spawn_result spawned = spawn(request);
    if (const auto* error = std::get_if<spawn_error>(&spawned)) {
        return "cannot start the watchdog: " + describe(*error, launcher.path.string());
    }
    // The launcher forks the watchdog and exits at once (sandbox/launcher/watchdog.hpp).
    const spawned_child& first = std::get<spawned_child>(spawned);
    int status = 0;
    bool reaped = true;
    while (::waitpid(first.pid, &status, 0) < 0) {
        if (errno == EINTR) continue;
        // Reaped by someone else (a host program's SIGCHLD handler, SIGCHLD ignored): its end is
        // waited for on its pidfd, and what it did is told by the pipe below.
        reaped = false;
        if (first.pidfd) {
            pollfd ended{first.pidfd.get(), POLLIN, 0};
            while (::poll(&ended, 1, 10'000) < 0 && errno == EINTR) {
            }
        }
        break;
    }
    if (reaped && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        return "cannot start the watchdog: " + launcher.path.string() + " --watch-cgroup " +
               (WIFEXITED(status) ? "exited " + std::to_string(WEXITSTATUS(status))
                                  : "was killed by signal " + std::to_string(WTERMSIG(status)));
    }
    alive.read.reset();  // the watchdog's copy is the one reader left
    cgroup_watchdog started(std::move(alive.write));
    if (!started.running()) {
        return "cannot start the watchdog: " + launcher.path.string() +
               " --watch-cgroup left no reader of its pipe";
    }
    return started;
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
