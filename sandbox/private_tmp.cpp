// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/private_tmp.hpp"

#include <mutex>
#include <set>
#include <string_view>
#include <system_error>

#include "base/locked_directory.hpp"
#include "base/log.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view prefix = "cordon-tmp-";

}  // namespace

std::size_t sweep_dead_private_tmps(const fs::path& parent) {
    std::size_t removed = 0;
    for (const base::locked_directory& dead : base::abandoned_directories(parent, prefix)) {
        std::error_code ec;
        fs::remove_all(dead.path, ec);  // never follows a symlink inside
        if (!ec) ++removed;
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
    std::error_code ec;
    fs::remove_all(path_, ec);  // never follows a symlink the command left; unlocked after
}

}  // namespace cordon::sandbox
