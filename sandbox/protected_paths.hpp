// What a workspace-write run must not be able to write: everything that runs unconfined after
// it. That is every runner (not only the one this run uses) and cordon's own executable, and what
// they load: the dynamic loader, the shared objects mapped into this process, the loader's
// configuration and the system library directories (with glibc-hwcaps, which the loader searches
// first). A run under which the command could replace any of them is refused: a later run, in
// this process or the next, would execute the replacement before any confinement.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cordon::sandbox {

struct protected_paths {
    std::vector<std::filesystem::path> files;        // canonical
    std::vector<std::filesystem::path> directories;  // canonical
};

// The closure for `runners` (their canonical paths; missing ones are ignored) on this host:
// the runners, /proc/self/exe, every file mapped into this process, /etc/ld.so.{preload,cache,
// conf,conf.d}, the system library directories and their glibc-hwcaps subdirectories.
[[nodiscard]] protected_paths runner_closure(std::span<const std::filesystem::path> runners);

// The first protected path that lies inside one of `writable_roots` (canonical), as a one-line
// explanation; nullopt when none does.
[[nodiscard]] std::optional<std::string> exposed_by(
    const protected_paths& paths, std::span<const std::filesystem::path> writable_roots);

// True when `path` is `root` or lies beneath it (both canonical).
[[nodiscard]] bool is_within(const std::filesystem::path& path, const std::filesystem::path& root);

}  // namespace cordon::sandbox
