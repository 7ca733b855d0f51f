// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace cordon::runtime {

bool make_pipe(pipe_pair& out) noexcept {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    out.read.reset(fds[0]);
    out.write.reset(fds[1]);
    return true;
}

}  // namespace cordon::runtime
