// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a workspace-write run reaches through filesystems rather than spellings, per this
// process's mount table (read once per run): a bind mount of a runner's directory inside the
// workspace, an overlay whose layers a root holds, a loop device whose image lies in the
// workspace, FUSE. And pseudo filesystems: a workspace that is, lies in or contains procfs,
// sysfs, a cgroup hierarchy, /dev or the like would make writable what is not a file at all —
// sysctls, other processes, cgroup membership, devices, cordon's liveness locks under /dev/shm.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/mountinfo.hpp"
#include "sandbox/protected_paths.hpp"

namespace cordon::sandbox {

using base::mount_entry;

// This process's mounts; the reason when /proc/self/mountinfo cannot be read or parsed (a check
// without the table refuses). A run's checks read it through one mount_snapshot, not here.
[[nodiscard]] std::variant<std::vector<mount_entry>, std::string> read_mounts();

// How many times this process has called read_mounts(): a run's plan reads the table once
// (local_provider::plan), which the tests hold it to.
[[nodiscard]] std::uint64_t mount_table_reads() noexcept;

// The mount table of one run's plan, read on first need and then kept: every check of the plan
// (the workspace's refusal, the other names of a denied path, the judgement's scope) reads this
// one table, and a run whose checks need none reads none. Not thread-safe: one plan's own.
class mount_snapshot {
public:
    [[nodiscard]] const std::variant<std::vector<mount_entry>, std::string>& table();

private:
    std::optional<std::variant<std::vector<mount_entry>, std::string>> table_;
};

// The same question asked of filesystems rather than of spellings, per `mounts`: the first
// protected path that one of `writable_roots` reaches because a mount shows it there (a bind
// mount of a runner's directory inside the workspace, a workspace that is itself such a bind, a
// workspace file bound onto a library, a loop device whose image lies in the workspace), or
// because an overlay writes or shows it from a layer a root holds; nullopt when none is. A FUSE
// filesystem on either side, an overlay whose layers cannot be placed, and a block device that
// sysfs cannot say is or is not a loop device are refused too.
// exposed_by() cannot see these: the paths differ.
[[nodiscard]] std::optional<std::string> exposed_through_mounts(
    std::span<const protected_path> paths, std::span<const std::filesystem::path> writable_roots,
    const std::vector<mount_entry>& mounts);

// The other names `path` (canonical, existing) has through `mounts`: where another mount of its
// filesystem, whose root holds it, shows it (a bind mount of the home at /mnt/home, a second mount
// of the same disk), each checked to be the same file. A denied read is hidden under each of them:
// on the Landlock rung a read grant of such a name is a grant of the file itself, and of every
// path beneath it.
[[nodiscard]] std::vector<std::filesystem::path> other_names(
    const std::filesystem::path& path, const std::vector<mount_entry>& mounts);

// Why `root` (canonical) must not be writable at all: it is, lies in or contains /dev, /proc,
// /sys or, per `mounts`, a mount of a pseudo filesystem. nullopt when it is an ordinary
// directory.
[[nodiscard]] std::optional<std::string> pseudo_filesystem_at(
    const std::filesystem::path& root, const std::vector<mount_entry>& mounts);

}  // namespace cordon::sandbox
