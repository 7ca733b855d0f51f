// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/workspace.hpp"

#include "cordon/policy.hpp"

namespace cordon::cli {

std::variant<std::filesystem::path, std::string> resolve_workspace(const std::string& raw,
                                                                   sandbox::sandbox_mode mode) {
    std::error_code ec;
    const std::filesystem::path named = raw.empty() ? "." : raw;
    // Symlinks resolve before "..", as chdir does; the lexical form only tells whether the path
    // went through a symlink at all.
    std::filesystem::path workspace = sandbox::canonical_path(named);
    std::filesystem::path given = std::filesystem::absolute(named, ec).lexically_normal();
    if (!given.has_filename() && given != given.root_path()) given = given.parent_path();
    if (std::filesystem::exists(workspace, ec) && workspace != given &&
        mode == sandbox::sandbox_mode::workspace_write) {
        // A symlink on the way decides which directory becomes writable; one planted by an
        // earlier run would hand this one another directory.
        return "workspace " + given.string() + " resolves through a symlink to " +
               workspace.string() + "; give the real path";
    }
    if (!std::filesystem::exists(workspace, ec)) {
        return "workspace does not exist: " + workspace.string();
    }
    if (!std::filesystem::is_directory(workspace, ec)) {
        return "workspace is not a directory: " + workspace.string();
    }
    return workspace;
}

}  // namespace cordon::cli
