// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one mountinfo parser (proc_pid_mountinfo(5)), for the checks of what a workspace-write run
// reaches (sandbox/protected_paths.hpp) and for finding the cgroup hierarchies
// (runtime/cgroup.hpp).
//
// A line: "ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER-OPTIONS".
// The kernel escapes space, tab, newline and backslash in ROOT, MOUNT-POINT and SOURCE as \ooo.
// A line that does not have this shape makes the whole table an error rather than a line
// skipped: a table read wrongly could hide the very mount a check is looking for.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cordon::base {

// One line of mountinfo: which filesystem (device), which of its directories (root) appears where
// (point), and how.
struct mount_entry {
    std::string id;
    std::string parent;  // the mount it sits on: at the same point, the one it covers
    std::string device;  // "major:minor"
    std::filesystem::path root;
    std::filesystem::path point;
    std::string type;
    std::string source;
    bool read_only = false;     // the mount's own options; a read-only mount is written by nobody
    std::string super_options;  // the filesystem's, still escaped ("rw,lowerdir=...,upperdir=...")
};

// `text` with mountinfo's \ooo escapes decoded; anything else is kept as it is.
[[nodiscard]] std::string unescape_mount_field(std::string_view text);

// Every mount of a mountinfo text, in its order; the reason when a line is malformed.
[[nodiscard]] std::variant<std::vector<mount_entry>, std::string> parse_mountinfo(
    std::string_view text);

// /proc/self/mountinfo (or `path`) read and parsed; the reason when it cannot be read, is
// malformed or lists no mount at all (every process sees at least its root).
[[nodiscard]] std::variant<std::vector<mount_entry>, std::string> read_mountinfo(
    const std::filesystem::path& path = "/proc/self/mountinfo");

}  // namespace cordon::base
