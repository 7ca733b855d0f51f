// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a workspace-write run must not be able to write, and where it must not write at all.
//
// Everything that runs unconfined after the run: every runner (not only the one this run uses),
// cordon's own executable and what they load — the dynamic loader, the shared objects mapped into
// this process, the loader's configuration, the system library directories with glibc-hwcaps
// (searched first) — and the directories cordon takes runners from. A run under which the command
// could replace any of them is refused: a later run, in this process or the next, would execute
// the replacement before any confinement. Callers add their own (the executor: its spill files).
//
// What the mounts show (a bind, an overlay's layers, a loop image) is asked of the mount table in
// mount_exposure.hpp.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace cordon::sandbox {

struct protected_path {
    std::filesystem::path path;  // canonical
    std::string why;             // "runs unconfined in later runs", ...
};

using protected_paths = std::vector<protected_path>;

// Where this process learns what it is and what it loads; tests point them elsewhere.
struct process_view {
    std::filesystem::path maps = "/proc/self/maps";
    std::filesystem::path exe = "/proc/self/exe";
};

// The closure for `runners` (their canonical paths; missing ones are ignored) on this host:
// the runners, this executable (`view.exe`), every file mapped into this process (`view.maps`),
// /etc/ld.so.{preload,cache,conf,conf.d}, the system library directories and their glibc-hwcaps
// subdirectories, and `runner_directories`. Fails closed: when the maps cannot be read or the
// executable cannot be named (no /proc), the reason, never a closure with holes in it.
[[nodiscard]] std::variant<protected_paths, std::string> runner_closure(
    std::span<const std::filesystem::path> runners,
    std::span<const std::filesystem::path> runner_directories, const process_view& view = {});

// The first protected path that lies inside one of `writable_roots` (canonical), as a one-line
// explanation; nullopt when none does.
[[nodiscard]] std::optional<std::string> exposed_by(
    std::span<const protected_path> paths, std::span<const std::filesystem::path> writable_roots);

// The directories the loader's configuration `conf` (/etc/ld.so.conf) names, following its
// `include` globs (at most 8 deep) and understanding comments and old-style "dir=type" entries:
// where the next ldconfig (any package install) looks for the libraries of programs that run
// unconfined.
[[nodiscard]] std::vector<std::filesystem::path> loader_configuration_directories(
    const std::filesystem::path& conf);

// A protected path whose last component ends in '*' stands for every entry of its directory with
// that prefix ("/var/tmp/cordon-spill-*"): true when `root` lies inside one of them, which is as
// bad as a root holding them.
[[nodiscard]] bool inside_pattern(const std::filesystem::path& root,
                                  const std::filesystem::path& pattern);

// True when `path` is `root` or lies beneath it (both canonical).
[[nodiscard]] bool is_within(const std::filesystem::path& path, const std::filesystem::path& root);

}  // namespace cordon::sandbox
