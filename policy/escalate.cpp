// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/escalate.hpp"

#include <utility>

#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"

namespace cordon::policy {

escalation_outcome escalate(runtime::run_request& request, const escalation_ask& ask,
                            const escalation_setting& setting, approval_service& service,
                            std::stop_token cancel) {
    escalation_outcome out;
    const sandbox::sandbox_mode mode = ask.mode.value_or(request.mode);
    // A run the wider mode would refuse (the session log where it could write, ...) is refused
    // before anyone is asked: a yes to it would run nothing.
    if (ask.mode && sandbox::is_confined(mode) && is_strictly_wider(mode, request.mode) &&
        setting.provider != nullptr) {
        sandbox::sandbox_policy wider{mode, request.workspace_root};
        wider.rules = request.rules;
        if (auto refused = setting.provider->refusal(wider, setting.protected_paths)) {
            out.status = escalation_status::refused;
            out.error = *refused;
            return out;
        }
    }
    escalation_request asked;
    asked.requested_mode = mode;
    asked.effective_mode = request.mode;
    asked.requested_network = ask.network;
    asked.effective_network = network_of(request.network);
    asked.denied_domains = request.network.denied_domains;
    asked.justification = ask.justification;
    asked.subject = ask.subject;
    asked.tool = ask.tool;
    asked.command = ask.command;
    asked.workdir = request.workdir.value_or(request.workspace_root);
    asked.env = env_overrides(request.env);
    asked.input = ask.input;
    asked.policy = policy_change(mode, request.rules, request.workspace_root);
    escalation_result result = approve_escalation(asked, &service, std::move(cancel));
    out.approval = to_json(result);
    out.decision = result.decision;
    if (!result.granted) {
        out.error = std::move(result.error);
        return out;
    }
    out.status = escalation_status::granted;
    request.mode = *result.granted;
    request.network = with_network(std::move(request.network), result.granted_network);
    return out;
}

}  // namespace cordon::policy
