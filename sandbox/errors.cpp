// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/sandbox_error.hpp"

namespace cordon::sandbox {

std::string sandbox_unavailable_message(sandbox_mode mode, const std::optional<std::string>& detail,
                                        const std::vector<unusable_backend>& backends) {
    std::string message = "sandbox mode \"";
    message += to_string(mode);
    message +=
        "\" is requested but no sandbox backend is usable on this host; refusing to run the "
        "command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), "
        "ensure sandbox-exec is usable (macOS) \u2014 Windows has no confinement backend yet "
        "\u2014 or switch the consumer to danger-full-access.";
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
                                                     std::vector<unusable_backend> backends)
    : std::runtime_error(sandbox_unavailable_message(mode, detail, backends)),
      mode_(mode),
      detail_(std::move(detail)),
      backends_(std::move(backends)) {}

}  // namespace cordon::sandbox
