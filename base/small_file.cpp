// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/small_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::base {

std::string read_error::describe(const std::filesystem::path& path) const {
    return "cannot read " + path.string() + ": " + std::strerror(error);
}

read_result read_small_fd(int fd, std::size_t limit) {
    std::string text;
    char buffer[4096];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR) continue;
            return read_error{errno};
        }
        if (got == 0) return text;
        if (static_cast<std::size_t>(got) > limit - text.size()) return read_error{EFBIG};
        text.append(buffer, static_cast<std::size_t>(got));
    }
}

read_result read_small_file(const std::filesystem::path& path, std::size_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return read_error{errno};
    read_result out = read_small_fd(fd, limit);
    ::close(fd);
    return out;
}

}  // namespace cordon::base
