// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// An owning file descriptor, the one type every layer uses. Every fd cordon opens is born
// CLOEXEC (pipe2(O_CLOEXEC), open(O_CLOEXEC), ...: no window in which a concurrent spawn could
// inherit it); this type only guarantees that it is closed exactly once.
//
//     auto input = std::make_shared<const cordon::unique_fd>(::open(path, O_RDONLY | O_CLOEXEC));
//     request.stdin_fd = input;  // handed to the command as its stdin, closed with the last owner
#pragma once

#include <unistd.h>

#include <utility>
#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon {

class unique_fd {
public:
    unique_fd() noexcept = default;
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    ~unique_fd() { reset(); }
    unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
    unique_fd& operator=(unique_fd&& other) noexcept {
        if (this != &other) reset(other.release());
        return *this;
    }
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;

    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
    [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

}  // namespace cordon
CORDON_PUBLIC_END
