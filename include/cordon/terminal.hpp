// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A run under a pseudo-terminal (docs/terminal.md): its size.
#pragma once

#include <cstdint>

#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

struct terminal_size {
    std::uint16_t rows = 24;
    std::uint16_t cols = 80;
};

}  // namespace cordon::runtime

namespace cordon {
using runtime::terminal_size;
}  // namespace cordon
CORDON_PUBLIC_END
