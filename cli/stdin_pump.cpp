// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/stdin_pump.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string_view>
#include <system_error>
#include <thread>

#include "sandbox/write_all.hpp"

namespace cordon::cli {

namespace {

// Reads what the source has, waiting for it without spinning; 0 at end-of-file, -1 on error.
ssize_t read_when_ready(int fd, char* buffer, std::size_t size) {
    for (;;) {
        pollfd ready{fd, POLLIN, 0};
        if (::poll(&ready, 1, -1) < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        const ssize_t n = ::read(fd, buffer, size);
        if (n >= 0) return n;
        if (errno != EINTR && errno != EAGAIN) return -1;
    }
}

void pump(unique_fd source, unique_fd sink) {
    // The cordon program ignores SIGPIPE; block it here as well, so that a host embedding this
    // never dies of the command closing its stdin.
    sigset_t pipe_only;
    ::sigemptyset(&pipe_only);
    ::sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
    std::array<char, 64 * 1024> buffer{};
    for (;;) {
        const ssize_t n = read_when_ready(source.get(), buffer.data(), buffer.size());
        if (n <= 0) return;  // end of the source (or it failed): the command sees end-of-file
        if (!write_all(sink.get(), std::string_view(buffer.data(), static_cast<std::size_t>(n)))) {
            return;  // EPIPE: the command closed its stdin
        }
    }
}

}  // namespace

std::variant<unique_fd, std::error_code> start_stdin_pump(unique_fd source) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return std::error_code(errno, std::generic_category());
    unique_fd read_end(ends[0]);
    unique_fd write_end(ends[1]);
    try {
        std::thread(pump, std::move(source), std::move(write_end)).detach();
    } catch (const std::system_error& error) {
        // No thread was created: the arguments, moved into the thread's state, are closed with
        // it, and the read end here.
        return error.code();
    }
    return read_end;
}

}  // namespace cordon::cli
