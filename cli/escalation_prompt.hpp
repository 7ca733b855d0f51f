// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run --escalate`: the question whether this one run may go under a wider mode, asked at
// the terminal (cordon/terminal_prompt.hpp) through the approval chain (cordon/approval.hpp), and
// the "approval" object of the record that says how it was answered.
//
// SIGINT, SIGTERM or SIGHUP while someone is being asked withdraws the question (`cancelled`, and
// the audit pair is still written) instead of killing cordon between the two events.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "cli/run_options.hpp"
#include "cli/standing.hpp"
#include "cordon/mode.hpp"

namespace cordon::cli {

struct escalation_answer {
    std::optional<sandbox::sandbox_mode> granted;
    // With `granted`: the network to run with (policy::with_network() makes the rules).
    policy::network_request granted_network;
    std::string error;  // the exact refusal text when not granted
    nlohmann::json approval;
    int interrupted_by = 0;  // the signal that withdrew the question, or 0
};

// Asks whether `checked.escalate` (and `checked.escalate_network`) may be granted for this run,
// standing under `stand`.
[[nodiscard]] escalation_answer ask_to_escalate(const validated& checked, const standing& stand);

}  // namespace cordon::cli
