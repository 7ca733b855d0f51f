// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one write of a buffer to a descriptor whose reader may be slow, gone, or never read again:
// it waits for room (poll) only until a deadline, never raises SIGPIPE, and says how it ended as a
// value. cordon's own lines to its stderr, the MCP server's replies and a job's stdin use it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

namespace cordon::runtime {

enum class write_end {
    written,    // all of the buffer
    timed_out,  // the deadline came with no room for the rest
    failed,     // write(2) or poll(2) failed: `error` says why (EPIPE: the reader is gone)
};

struct write_result {
    write_end end = write_end::written;
    std::size_t written = 0;  // bytes written, however it ended
    int error = 0;            // the errno, when `end` is failed
};

// Writes `data` to `fd`, waiting for room at most until `deadline`. A deadline already past still
// writes what fits at once. A blocking descriptor is written PIPE_BUF bytes at a time after poll()
// reports room, which a pipe then takes without blocking (pipe(7)); a non-blocking one takes what
// fits. EINTR is retried; a reader that hung up is EPIPE, without SIGPIPE (sigpipe.hpp). The
// deadline holds for pipes, sockets and non-blocking descriptors: a blocking terminal that reports
// room (POLLOUT) may still block a write past it when output is stopped (^S).
[[nodiscard]] write_result write_within(int fd, std::string_view data,
                                        std::chrono::steady_clock::time_point deadline);

}  // namespace cordon::runtime
