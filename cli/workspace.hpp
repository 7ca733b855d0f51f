// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The workspace a command line names, checked the same way for `cordon run` and `cordon mcp`
// (cli/standing.hpp); the mode and the backend are checked while parsing (cli/options.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <variant>

#include "cordon/mode.hpp"

namespace cordon::cli {

// The canonical directory `raw` names ("" is the current directory), or why it cannot be the
// workspace: it does not exist, is not a directory, or (for workspace-write) reaches its
// directory through a symlink, which would let whoever planted the symlink choose what becomes
// writable.
[[nodiscard]] std::variant<std::filesystem::path, std::string> resolve_workspace(
    const std::string& raw, sandbox::sandbox_mode mode);

}  // namespace cordon::cli
