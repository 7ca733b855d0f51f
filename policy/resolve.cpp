#include "policy/resolve.hpp"

#include "sandbox/policy.hpp"

namespace cordon::policy {

resolved_policy resolve(const deployment& where, const resolve_request& request) {
    resolved_policy out;
    const session_state* session = request.session;
    if (request.mode) {
        out.mode = *request.mode;
    } else if (session != nullptr && session->mode) {
        out.mode = *session->mode;
    } else {
        out.mode = where.default_mode;
    }
    const std::filesystem::path& root =
        session != nullptr && session->cwd ? *session->cwd : where.workspace_root;
    out.workspace_root = sandbox::canonical_path(root);
    return out;
}

}  // namespace cordon::policy
