// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The runtime's fd helpers on top of cordon::unique_fd (cordon/unique_fd.hpp).
#pragma once

#include "cordon/unique_fd.hpp"

namespace cordon::runtime {

using cordon::unique_fd;

// pipe2(O_CLOEXEC); both ends invalid on failure (errno set).
struct pipe_pair {
    unique_fd read;
    unique_fd write;
};
[[nodiscard]] bool make_pipe(pipe_pair& out) noexcept;

}  // namespace cordon::runtime
