// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Removing a tree a command could have written: a run's private /tmp, a probe's workspace, what
// a judgement takes out of the user's tree. cordon removes it outside any sandbox, so the tree is
// an attacker's to shape, and the removal must never reach anything outside it:
//
// - every step is an *at() call relative to a directory descriptor, and no symlink is followed
//   (a symlink is an entry like any other: it is unlinked, what it points to stays);
// - only one directory of the tree is open at a time, and the walk keeps no stack frame per level:
//   a chain far deeper than the descriptor limit (or PATH_MAX) goes like any other tree, where
//   std::filesystem::remove_all keeps a descriptor per level and fails with EMFILE;
// - the way back up ("..") must lead to the very directory the walk came down from, or the walk
//   stops: a directory moved out of the tree while it was walked takes nothing with it from where
//   it now lies;
// - the walk never enters another filesystem (a mount point inside the tree, by device and mount
//   id): what is mounted there is not the tree's;
// - a directory of the effective uid that denies its owner listing or removing (mode 000) gets
//   u+rwx first: its owner may, and a command must not make its tree unremovable that way.
//
// What cannot be removed is passed over: everything else goes, and the first reason something
// stayed is returned.
#pragma once

#include <optional>
#include <string>

namespace cordon::base {

// Removes the entry `name` of the directory `dir` (a descriptor, O_PATH allowed) and everything
// beneath it, as the paragraph above says; nullopt when nothing stayed, the first reason
// otherwise. `name` is one entry: "", ".", ".." and names holding '/' are refused.
[[nodiscard]] std::optional<std::string> remove_tree(int dir, const std::string& name);

// The same, for the one directory the descriptor `same_as` is open on: when `name` is now another
// inode (a command renamed the directory away and put something in its place), nothing is
// removed and the reason says so.
[[nodiscard]] std::optional<std::string> remove_tree(int dir, const std::string& name, int same_as);

}  // namespace cordon::base
