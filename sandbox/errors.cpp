// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/sandbox_error.hpp"

namespace cordon::sandbox {

std::string sandbox_unavailable_message(sandbox_mode mode, const std::optional<std::string>& detail,
                                        const std::vector<unusable_backend>& backends,
                                        const std::optional<unenforced_policy>& gap) {
    std::string message = "sandbox mode \"";
    message += to_string(mode);
    if (gap) {
        message += "\" is requested with a policy that the usable sandbox backend (" +
                   gap->backend + ") cannot wholly enforce; refusing to run the command. " +
                   gap->backend + " cannot enforce: " + gap->parts +
                   ". Accept the gap (--accept-partial, path_rules::accept_partial) or narrow the "
                   "policy.";
    } else {
        message +=
            "\" is requested but no sandbox backend is usable on this host; refusing to run the "
            "command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), "
            "ensure sandbox-exec is usable (macOS) \u2014 Windows has no confinement backend yet "
            "\u2014 or switch the consumer to danger-full-access.";
    }
    if (detail) {
        message += " Runner failure: ";
        message += *detail;
    }
    if (!backends.empty()) {
        message += " Unusable backends: ";
        for (std::size_t i = 0; i < backends.size(); ++i) {
            if (i > 0) message += "; ";
            message += backends[i].backend + ": " + backends[i].reason;
        }
        message += ".";
    }
    return message;
}

sandbox_unavailable_error::sandbox_unavailable_error(sandbox_mode mode,
                                                     std::optional<std::string> detail,
                                                     std::vector<unusable_backend> backends,
                                                     std::optional<unenforced_policy> gap)
    : std::runtime_error(sandbox_unavailable_message(mode, detail, backends, gap)),
      mode_(mode),
      detail_(std::move(detail)),
      backends_(std::move(backends)),
      gap_(std::move(gap)) {}

}  // namespace cordon::sandbox
