// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/escalate.hpp"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "cordon/environment.hpp"
#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"

namespace cordon::policy {

namespace {

// What a run of `request` would start with, as the executor builds it from this process's
// environment, without what differs from one call to the next for no reason of the command's:
// the shell's PWD, OLDPWD, SHLVL and _.
std::vector<std::string> starting_environment(const runtime::run_request& request) {
    std::vector<std::string> out =
        runtime::build_environment(environ, request.env, request.environment);
    std::erase_if(out, [](const std::string& entry) {
        const std::string_view name = std::string_view(entry).substr(0, entry.find('='));
        return name == "PWD" || name == "OLDPWD" || name == "SHLVL" || name == "_";
    });
    return out;
}

}  // namespace

bool inherited_runner_variable(std::string_view name) noexcept {
    static constexpr std::string_view shell[] = {
        "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "BASH_XTRACEFD", "PS4", "GLIBC_TUNABLES"};
    return std::find(std::begin(shell), std::end(shell), name) != std::end(shell) ||
           name.starts_with("BASH_FUNC_") || name.starts_with("LD_");
}

escalation_outcome escalate(runtime::run_request& request, const escalation_ask& ask,
                            const escalation_setting& setting, approval_service& service,
                            std::stop_token cancel) {
    escalation_outcome out;
    if (auto wrong = check_escalation_fields(true, ask.justification)) {
        out.error = *wrong;
        return out;
    }
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
    asked.environment = starting_environment(request);
    for (const std::string& entry : asked.environment) {
        const std::string name = entry.substr(0, entry.find('='));
        if (inherited_runner_variable(name) && !request.env.contains(name)) {
            asked.inherited.push_back(entry);
        }
    }
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
