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

#include <string>

#include "cli/run_options.hpp"
#include "cli/settings.hpp"
#include "cli/standing.hpp"
#include "cordon/escalate.hpp"

namespace cordon::cli {

struct escalation_answer {
    // granted: checked.request now runs under the granted mode and network.
    policy::escalation_status status = policy::escalation_status::not_granted;
    std::string error;  // the exact refusal text when not granted or refused
    nlohmann::json approval;
    int interrupted_by = 0;  // the signal that withdrew the question, or 0
};

// Asks whether `checked.escalate` (and `checked.escalate_network`) may be granted for this run,
// whose request stands under `stand`, with the approval policy, timeout and rules of `effective`
// (cordon/escalate.hpp: the one escalation of every front end).
[[nodiscard]] escalation_answer ask_to_escalate(validated& checked, const standing& stand,
                                                const settings& effective,
                                                const policy::escalation_setting& setting);

}  // namespace cordon::cli
