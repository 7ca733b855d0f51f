// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Listing a directory a command may have shaped: by descriptor, never by a path it could swap.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cordon::sandbox {

// The names in the directory open (O_PATH or not) as `dir`, without "." and ".."; nullopt and
// errno when it cannot be listed.
[[nodiscard]] std::optional<std::vector<std::string>> names_in(int dir);

// Gives the directory open (O_PATH or not) as `dir` its owner's read and search permission when
// the effective uid owns it and lacks them: a command that owns what it made can take them away
// to hide what lies beneath from whoever judges it. False when it is not ours, or the change
// failed (errno).
bool make_listable(int dir);

}  // namespace cordon::sandbox
