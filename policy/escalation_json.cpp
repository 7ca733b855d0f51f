// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "policy/escalation_json.hpp"

#include "policy/command_prefix.hpp"

namespace cordon::policy {

using nlohmann::json;

std::string_view action_of(const escalation_result& result) noexcept {
    if (!result.decision) return "not-wider";
    const approval_decision& decision = *result.decision;
    switch (decision.source) {
        case decided_by::responder:
            switch (decision.outcome) {
                case approval_outcome::allowed_once:
                case approval_outcome::allowed_for_session:
                    return "accept";
                case approval_outcome::rejected:
                    return "decline";
                case approval_outcome::cancelled:
                    return "cancel";
                case approval_outcome::unavailable:
                    return "error";  // an error reply, or an answer outside the vocabulary
            }
            return "error";
        case decided_by::timeout:
            return "timeout";
        case decided_by::cancel:
            return "cancel";
        case decided_by::policy:
            return "rejected-by-policy";
        case decided_by::rule:
            return decision.outcome == approval_outcome::rejected ? "rejected-by-rule"
                                                                  : "allowed-by-rule";
        case decided_by::grant:
            return "session-grant";
        case decided_by::none:
        case decided_by::unrecorded:
            return "unavailable";  // nobody could be asked, or the question was not recorded
    }
    return "unavailable";
}

json to_json(const escalation_result& result) {
    json out{{"asked", result.decision && result.decision->asked},
             {"action", action_of(result)},
             {"outcome", nullptr},
             {"id", nullptr},
             {"mode", sandbox::to_string(result.requested)},
             {"by", nullptr}};
    put_network(out, result.requested_network, "network", "domains");
    if (const auto& decision = result.decision) {
        out["outcome"] = to_string(decision->outcome);
        if (!decision->id.empty()) out["id"] = decision->id;
        if (!decision->by.empty()) out["by"] = decision->by;
        if (decision->grant) {
            out["grant"] = {{"id", decision->grant->id},
                            {"covers", describe(*decision->grant)},
                            {"mode", sandbox::to_string(decision->grant->mode)}};
            put_network(out["grant"], decision->grant->network, "network", "domains");
        }
        if (!decision->rule.empty()) out["rule"] = decision->rule;
        if (!decision->detail.empty()) out["detail"] = decision->detail;
    }
    return out;
}

}  // namespace cordon::policy
