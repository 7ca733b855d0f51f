// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one JSON form of an escalation's result: the "approval" object of `cordon run --json` and
// of the MCP `bash` tool's structured result (docs/approval.md, docs/mcp.md).
//
//   {"asked": bool, "action": "...", "outcome": "allowed-once" | ... | null, "id": "ap-..." | null,
//    "mode": "<requested mode>", "by": "terminal" | "grant" | ... | null,
//    "grant": {"id", "covers", "mode"} (when a grant was made or covered the call),
//    "detail": "..." (when there is something to say)}
//
// `asked`: a responder (the person at the terminal, the MCP client) was consulted. `action`: what
// decided, in the words of the MCP elicitation (accept, decline, cancel, error, timeout,
// rejected-by-policy, session-grant, unavailable, not-wider).
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "policy/escalation.hpp"

namespace cordon::policy {

// "accept", "decline", ... as above.
[[nodiscard]] std::string_view action_of(const escalation_result& result) noexcept;

[[nodiscard]] nlohmann::json to_json(const escalation_result& result);

}  // namespace cordon::policy
