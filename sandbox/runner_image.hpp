// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A runner held by descriptor: what cordon executes is what it checked, whatever is written to
// the runner's path afterwards.
#pragma once

#include <filesystem>
#include <string>
#include <variant>

#include "cordon/unique_fd.hpp"

namespace cordon::sandbox {

// Copies the executable at `path` into a sealed memfd (write, grow, shrink and further sealing
// forbidden) and returns it (CLOEXEC), or the reason it could not. Executing the copy means a
// confined command that later rewrites the file at `path` cannot replace the runner of this
// process's subsequent runs.
[[nodiscard]] std::variant<unique_fd, std::string> load_sealed_image(
    const std::filesystem::path& path);

// Opens the executable at `path` read-only (CLOEXEC) for execveat(AT_EMPTY_PATH), keeping its
// identity (and its set-user-ID bit, which a copy would lose) for the provider's lifetime.
[[nodiscard]] std::variant<unique_fd, std::string> open_runner(const std::filesystem::path& path);

}  // namespace cordon::sandbox
