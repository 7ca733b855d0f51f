// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The Landlock rung's private /tmp: /tmp/cordon-tmp-XXXXXX, a directory of the run's own (bwrap
// gives the same run a tmpfs instead), removed with what the command left in it once the run is
// over. A cordon killed outright (SIGKILL, a crash) cannot remove it: this process holds an
// exclusive flock(2) on each of its directories for as long as it uses it
// (base/locked_directory.hpp), and every later cordon removes every cordon-tmp-* of its uid whose
// lock is free as it starts (sandbox/leftovers.hpp), the way a dead cordon's cgroups are reaped
// (runtime/cgroup_reaper.hpp). A command that locks a directory of its uid keeps it from being
// swept while it lives, and never makes cordon wait. Either way the directory goes as a tree the
// command shaped (base/tree_removal.hpp): at any depth, no symlink followed, never beyond it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <variant>

#include "cordon/unique_fd.hpp"

namespace cordon::sandbox {

class private_tmp_directory {
public:
    // Makes and locks a new directory under `parent` (canonical), after sweeping the dead once per
    // process; the reason when it cannot.
    [[nodiscard]] static std::variant<std::shared_ptr<const private_tmp_directory>, std::string>
    create(const std::filesystem::path& parent);
    ~private_tmp_directory();
    private_tmp_directory(const private_tmp_directory&) = delete;
    private_tmp_directory& operator=(const private_tmp_directory&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

private:
    private_tmp_directory(std::filesystem::path path, unique_fd lock)
        : path_(std::move(path)), lock_(std::move(lock)) {}
    std::filesystem::path path_;
    unique_fd lock_;  // the directory, flock(LOCK_EX) held: proof that its run is alive
};

// Removes every `cordon-tmp-*` directory of this uid under `parent` whose lock is free (its
// cordon is gone); returns how many it removed.
std::size_t sweep_dead_private_tmps(const std::filesystem::path& parent);

}  // namespace cordon::sandbox
