// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The sandbox vocabulary: file-effect modes and how completely a backend enforces them.
//
//     request.mode = cordon::sandbox_mode::workspace_write;
//     if (auto mode = cordon::parse_sandbox_mode("read-only")) request.mode = *mode;
//
// Modes govern file effects only; network and process visibility are outside the vocabulary.
// `enforcement` is a reported fact about the selected backend on this host, never upgraded.
#pragma once

#include <optional>
#include <string_view>
#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::sandbox {

enum class sandbox_mode {
    read_only,           // no writes anywhere except the /dev/null sink
    workspace_write,     // writes under the workspace root and a backend-defined /tmp
    danger_full_access,  // no confinement; never reaches a provider
};

enum class enforcement {
    full,     // every file effect the mode blocks is governed
    partial,  // the backend is active but governs only a subset (older Landlock ABI)
};

[[nodiscard]] std::string_view to_string(sandbox_mode mode) noexcept;
[[nodiscard]] std::string_view to_string(enforcement value) noexcept;

// Parses the exact spellings "read-only", "workspace-write", "danger-full-access".
[[nodiscard]] std::optional<sandbox_mode> parse_sandbox_mode(std::string_view text) noexcept;

[[nodiscard]] constexpr bool is_confined(sandbox_mode mode) noexcept {
    return mode != sandbox_mode::danger_full_access;
}

}  // namespace cordon::sandbox

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using sandbox::enforcement;
using sandbox::is_confined;
using sandbox::parse_sandbox_mode;
using sandbox::sandbox_mode;
using sandbox::to_string;
}  // namespace cordon
CORDON_PUBLIC_END
