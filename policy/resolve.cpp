// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "policy/resolve.hpp"

#include "cordon/policy.hpp"

namespace cordon::policy {

std::variant<resolved_policy, std::string> resolve(const deployment& where,
                                                   const resolve_request& request) {
    resolved_policy out;
    const session_state* session = request.session;
    if (request.mode) {
        out.mode = *request.mode;
    } else if (session != nullptr && session->mode) {
        out.mode = *session->mode;
    } else {
        out.mode = where.default_mode;
    }
    const bool from_session = session != nullptr && session->cwd;
    const std::filesystem::path& root = from_session ? *session->cwd : where.workspace_root;
    out.workspace_root = sandbox::canonical_path(root);
    if (root.is_absolute() && root == root.lexically_normal() && out.workspace_root != root) {
        return "the workspace root " + root.string() + " now resolves to " +
               out.workspace_root.string() + ": a symlink stands where it was; nothing runs (" +
               (from_session ? "put the directory back, or start a new session"
                             : "give the real path") +
               ")";
    }
    return out;
}

}  // namespace cordon::policy
