// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Escalation: one call asks to run under a wider mode than the standing one, with a reason.
// Checked and decided before anything runs; the grant applies to that call only (or, for
// allowed-for-session, to that very command under that mode, in that working directory). The
// texts are the ones agents already know (reference: the escalation vocabulary of the system
// cordon re-implements). Front ends call escalate() (cordon/escalate.hpp), which builds the
// question (make_escalation), runs approve_escalation() and applies the grant (apply_grant), all
// below.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/approval.hpp"
#include "cordon/escalate.hpp"
#include "cordon/mode.hpp"
#include "cordon/network_request.hpp"
#include "cordon/policy.hpp"

namespace cordon::policy {

// read-only < workspace-write < danger-full-access.
[[nodiscard]] bool is_strictly_wider(sandbox::sandbox_mode requested,
                                     sandbox::sandbox_mode effective) noexcept;
// The modes strictly wider than `mode`, narrowest first.
[[nodiscard]] std::vector<sandbox::sandbox_mode> wider_modes(sandbox::sandbox_mode mode);

// The pairing rules of the two fields: both or neither, and a justification that is a
// non-empty sentence. `requested` is the escalation field as given (nullopt: absent). The exact
// errors:
//   invalid escalation: sandbox_permissions requires a justification
//   invalid escalation: justification is only valid together with sandbox_permissions
//   invalid justification: expected a non-empty sentence
// `field` names the escalation field in the first two ("sandbox_permissions"; the CLI says
// "--escalate").
[[nodiscard]] std::optional<std::string> check_escalation_fields(
    bool requested, const std::optional<std::string>& justification,
    std::string_view field = "sandbox_permissions");

struct escalation_request {
    // A network-only escalation asks for the mode it stands under (requested == effective).
    sandbox::sandbox_mode requested_mode = sandbox::sandbox_mode::danger_full_access;
    sandbox::sandbox_mode effective_mode = sandbox::sandbox_mode::read_only;
    // The network asked for (nullopt: the standing one) and the one the call stands under
    // (network_of() its rules). What the call would run with is joined(effective, requested):
    // asking adds to the standing network, never takes from it.
    std::optional<network_request> requested_network;
    network_request effective_network;
    // The call's denied_domains: asking for a domain one of them refuses is refused before
    // anyone is asked (the proxy would refuse it whatever the answer).
    std::vector<std::string> denied_domains;
    // The call's proxy_resolve: a name asked for is shown with the address it is mapped to, and
    // one mapped to a denied address is refused before anyone is asked.
    std::vector<sandbox::host_mapping> proxy_resolve;
    std::string justification;
    std::string subject = "command";  // as in "the user rejected escalating this command"
    std::string tool = "bash";
    std::string command;
    std::filesystem::path workdir;
    std::vector<std::string> env;            // as approval_request::env
    std::vector<std::string> inherited;      // as approval_request::inherited
    std::vector<std::string> environment;    // as approval_request::environment
    std::vector<std::string> writable_path;  // as approval_request::writable_path
    std::string input;                       // as approval_request::input
    std::string policy;                      // as approval_request::policy
};

// What escalating to `to` under `rules` changes beyond the mode, in one line: an unconfined run
// drops every protected name and hidden credential store; a confined one keeps them (and says
// where it may write). Never silent: a wider mode never drops a protection unseen.
[[nodiscard]] std::string policy_change(sandbox::sandbox_mode to, const sandbox::path_rules& rules,
                                        const std::filesystem::path& workspace);

struct escalation_result {
    sandbox::sandbox_mode requested = sandbox::sandbox_mode::danger_full_access;  // as asked
    network_request requested_network;  // what the call would run with (joined, network_under)
    std::optional<sandbox::sandbox_mode> granted;  // the mode to run this one call under
    // With `granted`: the network to run it with (the host's under danger-full-access); the
    // call's rules are with_network(its standing rules, granted_network).
    network_request granted_network;
    std::optional<approval_decision> decision;  // absent when nobody was asked
    std::string error;                          // the exact refusal text when not granted
};

// The ordered, fail-closed sequence: not strictly wider (never asks):
//   sandbox escalation to "<mode>" is not strictly wider than this call's current "<effective>"
//   mode
// (a network-only escalation, whose mode is the effective one, that asks for no more network:
//   sandbox escalation to network "<asked>" is not wider than this call's current network
//   "<effective network>"
// with each network as to_string() spells it: "allow", "proxy: a.example"; and one that asks for
// a domain the call's denied_domains refuse:
//   sandbox escalation to network "<asked>" asks for "<domain>", which denied_domains refuses
//   ("<denied pattern>"))
// Below, "<mode>" stands for the target: "<mode>" alone when only the mode widens (the texts are
// then exactly the ones before the network policy existed), network "<to>" when only the
// network does, "<mode>" with network "<to>" when both do, <to> being what the call would run
// with ("allow", "proxy: a.example, b.example"). The reason adds ", network <to>" (or is
// "escalate sandbox network to <to>: ..."), and the request's `network` says what changes
// (network_change(): "deny \u2192 proxy: registry.npmjs.org").
// no service:
//   sandbox escalation to "<mode>" requires approval, but no approval service is composed
// then asks with reason "escalate sandbox to <mode>: <justification>" and maps the outcome:
//   rejected:    the user rejected escalating this <subject> to "<mode>"
//                (+ ` (the approval policy is "never": nobody was asked)` when the policy decided)
//   cancelled:   approval for escalating to "<mode>" was cancelled
//   unavailable: sandbox escalation to "<mode>" requires approval, but no approval channel is
//   available
[[nodiscard]] escalation_result approve_escalation(const escalation_request& request,
                                                   approval_service* service,
                                                   std::stop_token cancel = {});

// The question `ask` puts beside `request` (its mode, workspace root, rules, network, workdir and
// env as they stand): the one builder of the escalation_request, whichever front end asks
// (escalate(), cordon/escalate.hpp). The environment is the one a run of `request` would start
// with, built from this process's.
[[nodiscard]] escalation_request make_escalation(const runtime::run_request& request,
                                                 const escalation_ask& ask);

// Applies a grant to `request`, once, in the one place every front end's escalation goes
// through: its mode and network become the granted ones, and a run a rule allowed starts from
// the minimal environment in the account's home. Nothing when `result` granted nothing.
void apply_grant(runtime::run_request& request, const escalation_result& result);

// The model-facing markers, each one line with its newline.
//   [sandbox: file access denied under <mode> mode]
[[nodiscard]] std::string denial_marker(sandbox::sandbox_mode mode);
//   [sandbox: escalation available — retry this exact <subject> once with sandbox_permissions
//   (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]
[[nodiscard]] std::string escalation_hint(std::string_view subject = "command");
// The same for a person at a terminal, naming cordon run's flags.
[[nodiscard]] std::string cli_escalation_hint();
// After a denial of the network (the record's sandbox.denial "network"): retry with the network
// allowed, over MCP (sandbox_network) and at a terminal (--escalate-network).
[[nodiscard]] std::string network_escalation_hint(std::string_view subject = "command");
[[nodiscard]] std::string cli_network_escalation_hint();
// After the proxy refused `domain` (a destination host as the proxy names it): retry asking for
// that domain.
//   [sandbox: network access to <domain> was blocked \u2014 retry this exact <subject> once with
//   sandbox_domains ["<domain>"] + justification; the approval prompt asks the user]
[[nodiscard]] std::string network_domain_escalation_hint(std::string_view domain,
                                                         std::string_view subject = "command");
//   [sandbox: network access to <domain> was blocked \u2014 retry this exact command once with
//   --escalate-domain <domain> --justification TEXT; cordon asks on this terminal]
[[nodiscard]] std::string cli_network_domain_escalation_hint(std::string_view domain);

// Whether a denied call may be retried escalated: a wider mode exists, the effective policy is
// `ask`, and someone can be asked.
[[nodiscard]] bool escalation_possible(sandbox::sandbox_mode mode, approval_policy policy,
                                       bool can_ask) noexcept;

}  // namespace cordon::policy
