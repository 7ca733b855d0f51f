// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A cordon killed outright cannot end its runs. Each host holds an exclusive flock(2) on a lock
// file for its lifetime, and the next host to be created ends what is left in the cgroups whose
// lock is free (cgroup.hpp). Private to runtime/; called by cgroup_host::create() only, before
// the host has any run and never on an event loop.
//
// The lock file records, before the host makes any cgroup, every directory it may make, in every
// hierarchy (the v2 tree, and the v1 `pids` and `memory` ones of a hybrid host), each with the
// identity (st_dev, st_ino) of the cgroup it is made in. A reaper removes exactly those, wherever
// they lie, so that a cordon in any cgroup scope ends a dead cordon's runs, and a host's lock file
// goes only once every one of its directories is gone: the lock is what leads the next reaper to
// them. Paths are seen from namespaces, identities are not: a reaper in another mount namespace
// (a restarted service's private /tmp, a container sharing /dev/shm) uses a recorded path when the
// cgroup at its parent is the one recorded, or a base of its own that is that cgroup. What it
// cannot place that way it looks for by the host's name under its own bases, as for a lock file
// that records nothing (an earlier cordon's), and the lock file then stays for a reaper that can.
// Only a directory named after the host, in a cgroup filesystem, made by this euid, is removed.
// A hidden lock file (being made) a minute old was left by a cordon killed while making it, and
// goes.
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

// What a host's lock file holds: the cgroup directories it may make (each named after the host)
// and the identity of each one's parent; empty when a parent cannot be stat'ed or a path cannot be
// written on one line.
[[nodiscard]] std::string lock_record(const std::vector<std::filesystem::path>& directories);

// Ends the runs of every host whose lock file in `lock_directory` is free, removes the cgroups its
// lock file records (or, for a lock file that records nothing, those of its name under `bases`),
// and then its lock file.
void reap_stale_hosts(int lock_directory, const std::vector<std::filesystem::path>& bases);

}  // namespace cordon::runtime::cgroup_reaper
