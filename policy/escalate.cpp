// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/escalate.hpp"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "cordon/environment.hpp"
#include "cordon/policy.hpp"
#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"
#include "sandbox/protected_paths.hpp"

namespace cordon::policy {

namespace {

// What a run of `request` would start with, as the executor builds it from this process's
// environment, without what differs from one call to the next for no reason of the command's:
// the shell's OLDPWD, SHLVL and _. (PWD stays: bash keeps an inherited PWD that names the
// working directory through a link, and a `cd ..` then goes elsewhere.)
std::vector<std::string> starting_environment(const runtime::run_request& request) {
    std::vector<std::string> out =
        runtime::build_environment(environ, request.env, request.environment);
    std::erase_if(out, [](const std::string& entry) {
        const std::string_view name = std::string_view(entry).substr(0, entry.find('='));
        return name == "OLDPWD" || name == "SHLVL" || name == "_";
    });
    return out;
}

// The directories of `environment`'s PATH that a run could write: relative ones (the working
// directory is the run's), and those within what workspace-write writes (the workspace, the
// writable roots, /tmp, $TMPDIR) or /dev/shm. Whatever the standing mode: a run allowed once
// into workspace-write could have planted there too.
std::vector<std::string> writable_path_of(const std::vector<std::string>& environment,
                                          const runtime::run_request& request) {
    std::vector<std::string> out;
    const auto path =
        std::find_if(environment.begin(), environment.end(),
                     [](const std::string& entry) { return entry.starts_with("PATH="); });
    if (path == environment.end()) return out;
    std::vector<std::filesystem::path> writable = sandbox::writable_roots(
        {sandbox::sandbox_mode::workspace_write, request.workspace_root, request.rules});
    writable.emplace_back("/dev/shm");
    std::string_view rest = std::string_view(*path).substr(5);
    for (;;) {
        const std::size_t colon = rest.find(':');
        const std::string_view entry = rest.substr(0, colon);
        const std::filesystem::path dir(entry);
        const bool planted =
            dir.is_relative() ||
            std::any_of(writable.begin(), writable.end(),
                        [&dir](const std::filesystem::path& root) {
                            return sandbox::is_within(sandbox::canonical_path(dir), root);
                        });
        if (planted && std::find(out.begin(), out.end(), entry) == out.end()) {
            out.emplace_back(entry);
        }
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
    }
    return out;
}

}  // namespace

bool inherited_runner_variable(std::string_view name) noexcept {
    static constexpr std::string_view shell[] = {
        "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "BASH_XTRACEFD", "PS4", "GLIBC_TUNABLES"};
    return std::find(std::begin(shell), std::end(shell), name) != std::end(shell) ||
           name.starts_with("BASH_FUNC_") || name.starts_with("LD_");
}

escalation_request make_escalation(const runtime::run_request& request, const escalation_ask& ask) {
    const sandbox::sandbox_mode mode = ask.mode.value_or(request.mode);
    escalation_request asked;
    asked.requested_mode = mode;
    asked.effective_mode = request.mode;
    asked.requested_network = ask.network;
    asked.effective_network = network_of(request.network);
    asked.denied_domains = request.network.denied_domains;
    asked.proxy_resolve = request.network.proxy_resolve;
    asked.justification = ask.justification;
    asked.subject = ask.subject;
    asked.tool = ask.tool;
    asked.command = ask.command;
    asked.workdir = request.workdir.value_or(request.workspace_root);
    asked.env = env_overrides(request.env);
    asked.environment = starting_environment(request);
    asked.writable_path = writable_path_of(asked.environment, request);
    for (const std::string& entry : asked.environment) {
        const std::string name = entry.substr(0, entry.find('='));
        if (inherited_runner_variable(name) && !request.env.contains(name)) {
            asked.inherited.push_back(entry);
        }
    }
    asked.input = ask.input;
    asked.policy = policy_change(mode, request.rules, request.workspace_root);
    return asked;
}

void apply_grant(runtime::run_request& request, const escalation_result& result) {
    if (!result.granted) return;
    if (result.decision && result.decision->source == decided_by::rule) {
        // A rule vouches for words, not for what the caller's environment makes of them
        // (NODE_OPTIONS, MAKEFILES, GIT_CONFIG_*, a HOME of the agent's choosing): the run it
        // allows starts from the minimal environment, in the account's own home.
        request.environment.clear = true;
        request.environment.keep.clear();
        if (const std::filesystem::path home = sandbox::account_home(); !home.empty()) {
            request.env["HOME"] = home.string();
        }
    }
    request.mode = *result.granted;
    request.network = with_network(std::move(request.network), result.granted_network);
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
    escalation_result result =
        approve_escalation(make_escalation(request, ask), &service, std::move(cancel));
    out.approval = to_json(result);
    out.decision = result.decision;
    if (!result.granted) {
        out.error = std::move(result.error);
        return out;
    }
    out.status = escalation_status::granted;
    apply_grant(request, result);
    return out;
}

}  // namespace cordon::policy
