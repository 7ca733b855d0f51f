// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/launcher/forwarder.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "sandbox/confinement_extras.hpp"

namespace cordon::launcher {

namespace {

using sandbox::launcher_stage;

bool child_exited(pid_t child) noexcept {
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT) < 0) {
        if (errno != EINTR) return true;  // nothing to wait for: the caller's waitid says so
    }
    return info.si_pid != 0;
}

}  // namespace

forwarder start_forwarder(const reporter& report, int channel, int port) noexcept {
    forwarder out;
    struct stat status {};
    int type = 0;
    socklen_t length = sizeof type;
    if (::fstat(channel, &status) != 0 || !S_ISSOCK(status.st_mode) ||
        ::getsockopt(channel, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_SEQPACKET) {
        report.fail(launcher_stage::usage, EBADF,
                    "usage error: --proxy-fd %d is not the proxy's socket", channel);
    }
    const int flags = ::fcntl(channel, F_GETFD);
    if (flags < 0 || ::fcntl(channel, F_SETFD, flags | FD_CLOEXEC) != 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error, "proxy fd error: %s", std::strerror(error));
    }
    out.channel = channel;

    // Non-blocking: a client that gives up between poll() and accept4() never holds the loop.
    out.listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    if (out.listener < 0 ||
        ::setsockopt(out.listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(out.listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(out.listener, SOMAXCONN) != 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error,
                    "cannot listen for the network proxy on 127.0.0.1:%d: %s", port,
                    std::strerror(error));
    }

    sigset_t child_signal;
    ::sigemptyset(&child_signal);
    ::sigaddset(&child_signal, SIGCHLD);
    out.child_exits = ::signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
    if (out.child_exits < 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error, "cannot watch the command: %s",
                    std::strerror(error));
    }
    return out;
}

void forward_until_exit(forwarder& state, pid_t child) noexcept {
    const auto stop_listening = [&state] {
        if (state.listener >= 0) ::close(state.listener);
        state.listener = -1;
    };
    while (!child_exited(child)) {
        // The channel is polled for its hang-up alone: once the proxy's end is closed, no new
        // connection is accepted, so none waits in the backlog for a proxy that will not come.
        pollfd fds[3] = {{state.child_exits, POLLIN, 0},
                         {state.listener, POLLIN, 0},
                         {state.listener >= 0 ? state.channel : -1, 0, 0}};
        if (::poll(fds, 3, -1) < 0) {
            if (errno == EINTR) continue;
            break;  // cannot watch: refuse rather than queue, and let the caller wait
        }
        if (fds[0].revents != 0) {
            signalfd_siginfo info;
            while (::read(state.child_exits, &info, sizeof info) > 0) {
            }
        }
        if (fds[2].revents & (POLLHUP | POLLERR)) stop_listening();
        if (state.listener >= 0 && (fds[1].revents & POLLIN)) {
            const int client = ::accept4(state.listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) continue;  // the client gave up, or out of descriptors: it retries
            // A connection the proxy cannot take now (full, short of memory) is closed and the
            // client sees a reset; once the proxy's end is gone the port closes.
            const int error = sandbox::extras::send_fd(state.channel, client, MSG_DONTWAIT);
            if (error == EPIPE || error == ECONNRESET || error == ENOTCONN) stop_listening();
            ::close(client);
        }
    }
    stop_listening();
}

}  // namespace cordon::launcher
