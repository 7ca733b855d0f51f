// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Which policy a call runs under.
//
//   mode: an approved explicit mode (an escalation granted for this call)
//         > the session's last sandbox/mode event
//         > the deployment's default mode
//   root: the session's working directory (recorded when the session was created)
//         > the deployment's workspace root
// The root is resolved by the filesystem before it is normalised lexically (sandbox::
// canonical_path): `link/..` lands where chdir(2) would, the physical parent of the link's
// target, not the lexical parent.
//
// A root spelled without `.` or `..` (as a session records it: canonical when it was created) must
// still resolve to itself. If it does not, a symlink now stands where the root was (a run that
// could write the root's parent, /tmp under the Landlock rung, can put one there), and following
// it would hand the session's standing mode and grants to a directory nobody chose: refused.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <variant>

#include "cordon/mode.hpp"
#include "cordon/session_log.hpp"

namespace cordon::policy {

struct deployment {
    sandbox::sandbox_mode default_mode = sandbox::sandbox_mode::read_only;
    std::filesystem::path workspace_root;  // the fallback root
};

struct resolve_request {
    const session_state* session = nullptr;     // none: the deployment's policy
    std::optional<sandbox::sandbox_mode> mode;  // approved explicit mode
};

struct resolved_policy {
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    std::filesystem::path workspace_root;  // absolute, canonical as above
};

// The policy, or why the root cannot be used (one line).
[[nodiscard]] std::variant<resolved_policy, std::string> resolve(const deployment& where,
                                                                 const resolve_request& request);

}  // namespace cordon::policy
