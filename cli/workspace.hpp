// The mode, backend and workspace a command line names, checked the same way for `cordon run`
// and `cordon mcp`. Each returns the value, or the one-line message for a usage error.
#pragma once

#include <filesystem>
#include <string>
#include <variant>

#include "sandbox/local_provider.hpp"
#include "sandbox/mode.hpp"

namespace cordon::cli {

[[nodiscard]] std::variant<sandbox::sandbox_mode, std::string> parse_mode_option(
    const std::string& text);
[[nodiscard]] std::variant<sandbox::backend_choice, std::string> parse_backend_option(
    const std::string& text);

// The canonical directory `raw` names ("" is the current directory), or why it cannot be the
// workspace: it does not exist, is not a directory, or (for workspace-write) reaches its
// directory through a symlink, which would let whoever planted the symlink choose what becomes
// writable.
[[nodiscard]] std::variant<std::filesystem::path, std::string> resolve_workspace(
    const std::string& raw, sandbox::sandbox_mode mode);

}  // namespace cordon::cli
