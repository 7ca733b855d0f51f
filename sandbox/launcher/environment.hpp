// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The command's environment, read by cordon-landlock from --env-fd: the launcher itself is started
// with an empty one, so that no loader variable of the command's choosing ever reaches it.
#pragma once

#include "sandbox/launcher/reporter.hpp"

namespace cordon::launcher {

// Reads NUL-terminated NAME=value entries from `fd` (and closes it). The block is mapped
// privately and the entries are used in place; the pointer array comes from an anonymous mapping.
// Exits 125 through `report` when the block cannot be read or is not NUL-terminated.
[[nodiscard]] char** read_environment(const reporter& report, int fd) noexcept;

}  // namespace cordon::launcher
