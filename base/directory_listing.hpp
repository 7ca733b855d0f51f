// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Listing a directory held by a descriptor (O_PATH ones too), and making one of this user's
// listable: what every walk of a tree a command shaped starts from (base/tree_removal.hpp, the
// sandbox's judgement and quarantine). The listing is taken whole and the descriptor it used is
// closed again, so that a walk holds no descriptor per level.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cordon::base {

// The names in the directory `dir` ("." and ".." left out), read through a descriptor of its own
// (`dir` may be O_PATH); nullopt and errno when it cannot be listed.
[[nodiscard]] std::optional<std::vector<std::string>> names_in(int dir);

// Gives the directory `dir` (this user's) u+rx when it lacks them: its owner may. True when it
// was given; false with errno EACCES when those were not what stood in the way, EPERM when it is
// not this user's directory.
bool make_listable(int dir);

}  // namespace cordon::base
