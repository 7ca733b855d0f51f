// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Listing a directory held by a descriptor (O_PATH ones too), and making one of this user's
// listable: what every walk of a tree a command shaped starts from (base/tree_removal.hpp, the
// sandbox's judgement and quarantine). The listing is taken whole and the descriptor it used is
// closed again, so that a walk holds no descriptor per level.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

namespace cordon::base {

// The names in the directory `dir` ("." and ".." left out), read through a descriptor of its own
// (`dir` may be O_PATH); nullopt and errno when it cannot be listed.
[[nodiscard]] std::optional<std::vector<std::string>> names_in(int dir);

// Gives the directory `dir` (this user's, `dir` may be O_PATH) the owner rights of `wanted` it
// lacks: its owner may. True when they were given; false with errno EACCES when it had them all
// (they were not what stood in the way), EPERM when it is not this user's directory.
bool grant_owner_rights(int dir, mode_t wanted);

// grant_owner_rights() of u+rx: what listing the directory needs.
inline bool make_listable(int dir) {
    return grant_owner_rights(dir, S_IRUSR | S_IXUSR);
}

}  // namespace cordon::base
