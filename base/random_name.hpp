// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A random part for names that no other process's may share, a dead one's included (a cgroup
// host, a window record): not a secret.
#pragma once

#include <string>

namespace cordon::base {

// Sixteen hexadecimal digits from getrandom(2), without waiting; from the monotonic clock where
// the kernel's pool is not ready yet.
[[nodiscard]] std::string random_hex64();

}  // namespace cordon::base
