// What a workspace-write run must not be able to write, and where it must not write at all.
//
// Everything that runs unconfined after the run: every runner (not only the one this run uses),
// cordon's own executable and what they load — the dynamic loader, the shared objects mapped into
// this process, the loader's configuration, the system library directories with glibc-hwcaps
// (searched first) — and the directories cordon takes runners from. A run under which the command
// could replace any of them is refused: a later run, in this process or the next, would execute
// the replacement before any confinement. Callers add their own (the executor: its spill files).
//
// And pseudo filesystems: a workspace that is, lies in or contains procfs, sysfs, a cgroup
// hierarchy, /dev or the like would make writable what is not a file at all — sysctls, other
// processes, cgroup membership, devices, cordon's liveness locks under /dev/shm.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/mountinfo.hpp"

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

using base::mount_entry;

// This process's mounts, read once for all the checks of a run; the reason when
// /proc/self/mountinfo cannot be read or parsed (a check without the table refuses).
[[nodiscard]] std::variant<std::vector<mount_entry>, std::string> read_mounts();

// The first protected path that lies inside one of `writable_roots` (canonical), as a one-line
// explanation; nullopt when none does.
[[nodiscard]] std::optional<std::string> exposed_by(
    std::span<const protected_path> paths, std::span<const std::filesystem::path> writable_roots);

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

// Why `root` (canonical) must not be writable at all: it is, lies in or contains /dev, /proc,
// /sys or, per `mounts`, a mount of a pseudo filesystem. nullopt when it is an ordinary
// directory.
[[nodiscard]] std::optional<std::string> pseudo_filesystem_at(
    const std::filesystem::path& root, const std::vector<mount_entry>& mounts);

// The directories the loader's configuration `conf` (/etc/ld.so.conf) names, following its
// `include` globs (at most 8 deep) and understanding comments and old-style "dir=type" entries:
// where the next ldconfig (any package install) looks for the libraries of programs that run
// unconfined.
[[nodiscard]] std::vector<std::filesystem::path> loader_configuration_directories(
    const std::filesystem::path& conf);

// True when `path` is `root` or lies beneath it (both canonical).
[[nodiscard]] bool is_within(const std::filesystem::path& path, const std::filesystem::path& root);

}  // namespace cordon::sandbox
