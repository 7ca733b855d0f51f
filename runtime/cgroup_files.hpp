// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What cordon reads and writes in the cgroup filesystems, for the hosts and scopes (cgroup.cpp)
// and the reaper (cgroup_reaper.cpp): where this process's cgroups are, a cgroup's members and
// keyed files, and the kill. Private to runtime/.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/mountinfo.hpp"

namespace cordon::runtime::cgroup_files {

// "<what>: <strerror(error)>".
[[nodiscard]] std::string failed(std::string_view what, int error);

// The whole file, or "" when it cannot be read.
[[nodiscard]] std::string read_file(const std::filesystem::path& path);

// Whether `word` is one of the whitespace-separated words of `text` (cgroup.controllers).
[[nodiscard]] bool has_word(std::string_view text, std::string_view word);

// What the kernel says about this process's cgroups: read once per host.
struct cgroup_view {
    std::vector<base::mount_entry> mounts;  // /proc/self/mountinfo
    std::string cgroups;                    // /proc/self/cgroup
};

// The directory of this process's cgroup in the hierarchy of `controller` ("" for v2), or why
// there is none.
[[nodiscard]] std::variant<std::filesystem::path, std::string> own_directory(
    const cgroup_view& view, std::string_view controller);

// 0, or the errno of the failing open or write.
[[nodiscard]] int write_file(const std::filesystem::path& path, std::string_view text);

// The value of `key` in a flat keyed file ("key value" per line), 0 when absent; nullopt when
// the file cannot be read.
[[nodiscard]] std::optional<std::uint64_t> keyed_value(const std::filesystem::path& path,
                                                       std::string_view key);

// The processes of a cgroup.procs file, one per line.
[[nodiscard]] std::vector<pid_t> members(const std::filesystem::path& procs);

// SIGKILLs every member of `cgroup` through cgroup.kill, or member by member without it.
void kill_members(const std::filesystem::path& cgroup);

}  // namespace cordon::runtime::cgroup_files
