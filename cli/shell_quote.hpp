// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// POSIX shell quoting for printing argv so that a user can paste it back into a shell.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace cordon::cli {

// The word unchanged when it needs no quoting, else single-quoted with ' as '\''.
[[nodiscard]] std::string shell_quote(std::string_view word);
[[nodiscard]] std::string shell_join(std::span<const std::string> argv);

}  // namespace cordon::cli
