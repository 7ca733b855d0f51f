// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What cordons that are gone left in the shared temporary directories, and who removes it: the
// next cordon of the same uid, whatever it does. A probe's workspace (/var/tmp/cordon-probe-*,
// /tmp/cordon-probe-* where /var/tmp cannot be used) and a Landlock run's private /tmp
// (/tmp/cordon-tmp-*) are each held with a lock by the cordon that made them
// (base/locked_directory.hpp); one whose lock is free was left by a cordon killed outright, and
// is removed as a tree (base/tree_removal.hpp: at any depth, never following a symlink, never
// leaving the tree). Every local provider sweeps once per process as it is made, so that a
// cordon that takes a cached verdict (no probe) or runs under bwrap (no private /tmp directory)
// removes them too. Spill directories have their own sweep, with a budget
// (runtime/output_collector.hpp), and cgroups theirs (runtime/cgroup_reaper.hpp).
#pragma once

#include <cstddef>
#include <filesystem>

namespace cordon::sandbox {

// Removes every `cordon-probe-*` directory of this uid under `parent` (canonical) whose lock is
// free; how many went whole (probe.cpp).
std::size_t sweep_dead_probe_workspaces(const std::filesystem::path& parent);

// The sweeps above and sweep_dead_private_tmps(), once per process (later calls do nothing).
void sweep_what_dead_cordons_left();

}  // namespace cordon::sandbox
