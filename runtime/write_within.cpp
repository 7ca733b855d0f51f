// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/write_within.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "runtime/sigpipe.hpp"

namespace cordon::runtime {

namespace {

// What is left until `deadline`, in whole milliseconds rounded up (so that a wait under a
// millisecond is not a busy loop of zero-timeout polls), and 0 once it has passed.
int milliseconds_until(std::chrono::steady_clock::time_point deadline) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return 0;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return static_cast<int>(std::min<std::chrono::milliseconds::rep>(ms, INT_MAX));
}

}  // namespace

write_result write_within(int fd, std::string_view data,
                          std::chrono::steady_clock::time_point deadline) {
    write_result out;
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0) return {write_end::failed, 0, errno};
    const std::size_t piece = (flags & O_NONBLOCK) != 0 ? data.size() : std::size_t{PIPE_BUF};
    while (out.written < data.size()) {
        pollfd room{fd, POLLOUT, 0};
        const int ready = ::poll(&room, 1, milliseconds_until(deadline));
        if (ready < 0) {
            if (errno == EINTR) continue;
            out.end = write_end::failed;
            out.error = errno;
            return out;
        }
        if (ready == 0) {
            out.end = write_end::timed_out;
            return out;
        }
        if ((room.revents & POLLNVAL) != 0) {
            out.end = write_end::failed;
            out.error = EBADF;
            return out;
        }
        // Written even after POLLERR or POLLHUP: the write says what they mean (EPIPE, EIO).
        const std::size_t size = std::min(piece, data.size() - out.written);
        const ssize_t n = write_without_sigpipe(fd, data.data() + out.written, size);
        if (n >= 0) {
            out.written += static_cast<std::size_t>(n);
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
            // Someone else took the room poll() saw; poll again, unless the reader hung up and no
            // room will come.
            if ((room.revents & (POLLERR | POLLHUP)) == 0) continue;
            errno = EPIPE;
        }
        out.end = write_end::failed;
        out.error = errno;
        return out;
    }
    return out;
}

}  // namespace cordon::runtime
