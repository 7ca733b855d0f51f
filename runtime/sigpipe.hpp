// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Writing to a pipe whose reader may be gone, without SIGPIPE and without touching the process's
// disposition of it (the host's business).
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace cordon::runtime {

// write(2), with the SIGPIPE it may raise blocked on this thread for the call and, when this write
// raised it, consumed before the mask is restored: the caller sees EPIPE and nothing else.
ssize_t write_without_sigpipe(int fd, const char* data, std::size_t size);

}  // namespace cordon::runtime
