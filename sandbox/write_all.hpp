// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Writing a whole buffer to a descriptor, the loop every writer of cordon's own needs.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace cordon {

// Writes all of `data`, through short writes and EINTR. False on any other error (errno says
// which: EPIPE when the reader went away, EAGAIN on a full non-blocking descriptor).
[[nodiscard]] inline bool write_all(int fd, std::string_view data) noexcept {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

}  // namespace cordon
