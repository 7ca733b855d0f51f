// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "policy/escalation.hpp"

#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "policy/display.hpp"

namespace cordon::policy {

using sandbox::sandbox_mode;

namespace {

int width(sandbox_mode mode) {
    switch (mode) {
        case sandbox_mode::read_only:
            return 0;
        case sandbox_mode::workspace_write:
            return 1;
        case sandbox_mode::danger_full_access:
            return 2;
    }
    return 0;
}

std::string quoted(sandbox_mode mode) {
    return "\"" + std::string(sandbox::to_string(mode)) + "\"";
}

std::string quoted(const network_request& network) {
    return "\"" + to_string(network) + "\"";
}

}  // namespace

bool is_strictly_wider(sandbox_mode requested, sandbox_mode effective) noexcept {
    return width(requested) > width(effective);
}

std::vector<sandbox_mode> wider_modes(sandbox_mode mode) {
    std::vector<sandbox_mode> out;
    for (auto each : {sandbox_mode::workspace_write, sandbox_mode::danger_full_access}) {
        if (is_strictly_wider(each, mode)) out.push_back(each);
    }
    return out;
}

std::optional<std::string> check_escalation_fields(bool requested,
                                                   const std::optional<std::string>& justification,
                                                   std::string_view field) {
    const std::string name(field);
    if (requested && !justification) {
        return "invalid escalation: " + name + " requires a justification";
    }
    if (!requested && justification) {
        return "invalid escalation: justification is only valid together with " + name;
    }
    if (justification && justification->find_first_not_of(" \t\r\n") == std::string::npos) {
        return std::string("invalid justification: expected a non-empty sentence");
    }
    return std::nullopt;
}

escalation_result approve_escalation(const escalation_request& request, approval_service* service,
                                     std::stop_token cancel) {
    escalation_result result;
    const sandbox_mode mode = request.requested_mode;
    result.requested = mode;
    const network_request from_network =
        network_under(request.effective_mode, request.effective_network);
    const network_request to_network =
        network_under(mode, joined(request.effective_network,
                                   request.requested_network.value_or(request.effective_network)));
    result.requested_network = to_network;
    const bool network_only = request.requested_network && mode == request.effective_mode;
    const bool network_wider = !covers(from_network, to_network);
    if (network_only && !network_wider) {
        result.error = "sandbox escalation to network " + quoted(*request.requested_network) +
                       " is not wider than this call's current network " + quoted(from_network);
        return result;
    }
    if (!network_only && !is_strictly_wider(mode, request.effective_mode)) {
        result.error = "sandbox escalation to " + quoted(mode) +
                       " is not strictly wider than this call's current " +
                       quoted(request.effective_mode) + " mode";
        return result;
    }
    // A domain the denied list refuses stays refused whatever the answer: nobody is asked.
    if (request.requested_network && to_network.policy == sandbox::network_policy::proxy) {
        for (const std::string& domain : request.requested_network->domains) {
            if (auto refusing = denied_by(request.denied_domains, domain, request.proxy_resolve)) {
                result.error = "sandbox escalation to network " +
                               quoted(*request.requested_network) + " asks for \"" + domain +
                               "\", which denied_domains refuses (\"" + *refusing + "\")";
                return result;
            }
        }
    }
    // The host's whole network would reach what the operator's denied list refuses: no answer
    // widens that, so nobody is asked (danger-full-access, which confines nothing, is a mode).
    if (request.requested_network && network_wider &&
        to_network.policy == sandbox::network_policy::allow && sandbox::is_confined(mode) &&
        !request.denied_domains.empty()) {
        std::string listed;
        for (std::size_t i = 0; i < request.denied_domains.size() && i < 3; ++i) {
            listed += (i == 0 ? "\"" : ", \"") + request.denied_domains[i] + "\"";
        }
        if (request.denied_domains.size() > 3) listed += ", ...";
        result.error =
            "sandbox escalation to network \"allow\" would open what denied_domains "
            "refuses (" +
            listed + "); ask for the domains the command needs instead";
        return result;
    }
    // What the texts name: the mode as before, the network when it was asked for and widens.
    const bool names_network = request.requested_network && network_wider;
    std::string target = network_only ? "" : quoted(mode);
    if (names_network) {
        target += (target.empty() ? "network " : " with network ") + quoted(to_network);
    }
    if (service == nullptr) {
        result.error = "sandbox escalation to " + target +
                       " requires approval, but no approval service is composed";
        return result;
    }
    approval_request asked;
    asked.tool = request.tool;
    asked.command = request.command;
    asked.workdir = request.workdir;
    asked.env = request.env;
    asked.inherited = request.inherited;
    asked.environment = request.environment;
    asked.writable_path = request.writable_path;
    asked.input = request.input;
    asked.policy = request.policy;
    asked.effective_mode = request.effective_mode;
    asked.requested_mode = mode;
    asked.effective_network = from_network;
    asked.requested_network = to_network;
    // Unconfined, the policy line already says nothing is confined: the network line is for the
    // confined modes, where it is what was asked for.
    asked.network = sandbox::is_confined(mode)
                        ? network_change(from_network, to_network, request.proxy_resolve)
                        : "";
    asked.justification = request.justification;
    if (network_only) {
        asked.reason =
            "escalate sandbox network to " + to_string(to_network) + ": " + request.justification;
    } else {
        asked.reason = "escalate sandbox to " + std::string(sandbox::to_string(mode)) +
                       (names_network ? ", network " + to_string(to_network) : std::string()) +
                       ": " + request.justification;
    }
    result.decision = service->request(asked, std::move(cancel));
    switch (result.decision->outcome) {
        case approval_outcome::allowed_once:
        case approval_outcome::allowed_for_session:
            result.granted = mode;
            result.granted_network = to_network;
            break;
        case approval_outcome::rejected:
            result.error = "the user rejected escalating this " + request.subject + " to " + target;
            // Nobody was asked: say so rather than blame the user.
            if (result.decision->source == decided_by::policy) {
                result.error += " (the approval policy is \"never\": nobody was asked)";
            } else if (result.decision->source == decided_by::rule) {
                result.error = "sandbox escalation to " + target + " is refused: approval rule \"" +
                               shown_safely(result.decision->rule) +
                               "\" forbids it (nobody was asked)";
            }
            break;
        case approval_outcome::cancelled:
            result.error = "approval for escalating to " + target + " was cancelled";
            break;
        case approval_outcome::unavailable:
            result.error = "sandbox escalation to " + target +
                           " requires approval, but no approval channel is available";
            // A session log that could not record the question (locked by another process,
            // say) is not a missing terminal: the error says which it was.
            if (result.decision->detail.starts_with(unrecorded_question)) {
                result.error += " (" + result.decision->detail + ")";
            }
            break;
    }
    return result;
}

std::string denial_marker(sandbox_mode mode) {
    return "[sandbox: file access denied under " + std::string(sandbox::to_string(mode)) +
           " mode]\n";
}

std::string escalation_hint(std::string_view subject) {
    return "[sandbox: escalation available \u2014 retry this exact " + std::string(subject) +
           " once with sandbox_permissions (the narrowest wider mode that suffices) + "
           "justification; the approval prompt asks the user]\n";
}

std::string network_escalation_hint(std::string_view subject) {
    return "[sandbox: escalation available \u2014 retry this exact " + std::string(subject) +
           " once with sandbox_network \"allow\" + justification; the approval prompt asks the "
           "user]\n";
}

std::string cli_network_escalation_hint() {
    return "[sandbox: escalation available \u2014 retry this exact command once with "
           "--escalate-network allow --justification TEXT; cordon asks on this terminal]\n";
}

std::string network_domain_escalation_hint(std::string_view domain, std::string_view subject) {
    return "[sandbox: network access to " + std::string(domain) +
           " was blocked \u2014 retry this exact " + std::string(subject) +
           " once with sandbox_domains [" + base::dump_json(nlohmann::json(std::string(domain))) +
           "] + justification; the approval prompt asks the user]\n";
}

std::string cli_network_domain_escalation_hint(std::string_view domain) {
    // `[2606:4700::1111]:443` is a glob to a shell: quoted, it is one word as written.
    const std::string word = domain.find('[') == std::string_view::npos
                                 ? std::string(domain)
                                 : "'" + std::string(domain) + "'";
    return "[sandbox: network access to " + std::string(domain) +
           " was blocked \u2014 retry this exact command once with --escalate-domain " + word +
           " --justification TEXT; cordon asks on this terminal]\n";
}

std::string cli_escalation_hint() {
    return "[sandbox: escalation available \u2014 retry this exact command once with --escalate "
           "MODE (the narrowest wider mode that suffices) --justification TEXT; cordon asks on "
           "this terminal]\n";
}

bool escalation_possible(sandbox_mode mode, approval_policy policy, bool can_ask) noexcept {
    return mode != sandbox_mode::danger_full_access && policy == approval_policy::ask && can_ask;
}

std::string policy_change(sandbox::sandbox_mode to, const sandbox::path_rules& rules,
                          const std::filesystem::path& workspace) {
    // The keys found in the workspace are the run's own to read: not counted as hidden.
    std::vector<std::filesystem::path> own;
    std::error_code ec;
    if (std::filesystem::path canonical = std::filesystem::weakly_canonical(workspace, ec);
        !ec && canonical.is_absolute()) {
        own.push_back(std::move(canonical));
    }
    const std::vector<std::filesystem::path> hidden = sandbox::effective_deny_read(rules, own);
    if (to == sandbox::sandbox_mode::danger_full_access) {
        std::string text = "nothing is confined";
        if (!rules.protect.empty()) text += ": the protected names (.git/hooks, .bashrc, ...)";
        if (!hidden.empty()) {
            text += rules.protect.empty() ? ": the " : " and the ";
            text += "hidden credential stores (~/.ssh, ...)";
        }
        if (!rules.protect.empty() || !hidden.empty()) text += " stop applying";
        return text;
    }
    std::string text;
    if (to == sandbox::sandbox_mode::workspace_write) {
        text = "writes " + workspace.string();
        for (const auto& root : rules.writable_roots)
            text += ", " + root.string();
        text += " and a " + std::string(sandbox::to_string(rules.tmp)) + " /tmp";
    }
    const auto add = [&text](const std::string& part) {
        text += (text.empty() ? "" : "; ") + part;
    };
    if (to == sandbox::sandbox_mode::workspace_write) {
        add(rules.protect.empty()
                ? "no protected names"
                : std::to_string(rules.protect.size()) +
                      " protected names (.git/hooks, .bashrc, ...) stay read-only");
        if (!rules.read_only.empty()) {
            add(std::to_string(rules.read_only.size()) + " read-only paths stay read-only");
        }
    }
    add(hidden.empty() ? "no hidden paths"
                       : std::to_string(hidden.size()) + " credential stores stay unreadable");
    return text;
}

}  // namespace cordon::policy
