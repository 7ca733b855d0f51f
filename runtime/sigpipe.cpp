// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/sigpipe.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace cordon::runtime {

// The signal a write raises is directed at the writing thread, so blocking it on this thread is
// enough.
ssize_t write_without_sigpipe(int fd, const char* data, std::size_t size) {
    sigset_t pipe_only;
    sigset_t previous;
    ::sigemptyset(&pipe_only);
    ::sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    sigset_t pending;
    ::sigpending(&pending);
    const bool already_pending = ::sigismember(&pending, SIGPIPE) == 1;
    const ssize_t n = ::write(fd, data, size);
    const int error = errno;
    if (n < 0 && error == EPIPE && !already_pending) {
        const timespec no_wait{};
        while (::sigtimedwait(&pipe_only, nullptr, &no_wait) < 0 && errno == EINTR) {
        }
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    errno = error;
    return n;
}

}  // namespace cordon::runtime
