// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A cordon killed outright cannot end its runs. Each host holds an exclusive flock(2) on a lock
// file for its lifetime, and the next host to be created ends what is left in the cgroups whose
// lock is free (cgroup.hpp). Private to runtime/; called by cgroup_host::create() only, before
// the host has any run and never on an event loop.
#pragma once

#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "runtime/unique_fd.hpp"

namespace cordon::runtime::cgroup_reaper {

// The lock directory (empty `path`: /dev/shm/cordon-cgroup-locks-<euid>), trusted only when this
// user owns it and nobody else can enter it; the reason otherwise.
[[nodiscard]] std::variant<unique_fd, std::string> open_lock_directory(std::filesystem::path path);

// Ends the runs of every host under `bases` whose lock file in `lock_directory` is free, and
// removes their cgroups and lock files.
void reap_stale_hosts(int lock_directory, const std::vector<std::filesystem::path>& bases);

}  // namespace cordon::runtime::cgroup_reaper
