// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/private_tmp.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>

#include "base/locked_directory.hpp"
#include "base/log.hpp"
#include "base/tree_removal.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view prefix = "cordon-tmp-";

// Removes the directory `name` of `parent` (canonical), which must still be the one open as
// `same_as`, with all the command left in it, whatever its depth (base/tree_removal.hpp). The
// reason when something stayed.
std::optional<std::string> remove_private_tmp(const fs::path& parent, const std::string& name,
                                              int same_as) {
    unique_fd parent_fd(::open(parent.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!parent_fd) return "cannot open " + parent.string() + ": " + std::strerror(errno);
    return base::remove_tree(parent_fd.get(), name, same_as);
}

}  // namespace

std::size_t sweep_dead_private_tmps(const fs::path& parent) {
    std::size_t removed = 0;
    for (const base::locked_directory& dead : base::abandoned_directories(parent, prefix)) {
        if (auto stayed = remove_private_tmp(parent, dead.name, dead.fd.get())) {
            log::debug("cannot remove all of {}: {}", dead.path.string(), *stayed);
        } else {
            ++removed;
        }
    }
    if (removed > 0) log::info("removed {} private /tmp left by cordons that are gone", removed);
    return removed;
}

std::variant<std::shared_ptr<const private_tmp_directory>, std::string>
private_tmp_directory::create(const fs::path& parent) {
    {
        // Once per parent and process: the first private /tmp sweeps, the others need not.
        static std::mutex mutex;
        static std::set<fs::path> swept;
        std::lock_guard lock(mutex);
        if (swept.insert(parent).second) (void)sweep_dead_private_tmps(parent);
    }
    auto made = base::make_locked_directory(parent, prefix);
    if (auto* failed = std::get_if<std::string>(&made)) {
        return "cannot make the run's private /tmp: " + *failed;
    }
    auto& directory = std::get<base::locked_directory>(made);
    return std::shared_ptr<const private_tmp_directory>(
        new private_tmp_directory(std::move(directory.path), std::move(directory.fd)));
}

private_tmp_directory::~private_tmp_directory() {
    // Unlocked only after: a sweep never takes it while it is being removed.
    if (auto stayed =
            remove_private_tmp(path_.parent_path(), path_.filename().string(), lock_.get())) {
        log::warn("cannot remove all of the run's private /tmp {}: {}", path_.string(), *stayed);
    }
}

}  // namespace cordon::sandbox
