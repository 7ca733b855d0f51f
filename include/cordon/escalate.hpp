// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Escalation, whole: one call asks to run under a wider mode (or with more network) than the one
// it stands under. escalate() plans the wider run, builds the question, asks through the approval
// service, and, when the answer is yes, applies the grant to the run request. `cordon run
// --escalate`, the MCP `bash` tool and a program that links the library all go through it.
//
//     cordon::escalation_ask ask;
//     ask.mode = cordon::sandbox_mode::workspace_write;
//     ask.justification = "npm install writes node_modules";
//     ask.command = "npm install";
//     ask.tool = "my-agent";
//     const cordon::escalation_outcome decided =
//         cordon::escalate(request, ask, {provider.get(), protected_paths}, approvals);
//     if (decided.status != cordon::escalation_status::granted) { report(decided.error); return; }
//     const cordon::run_record record = cordon::run(provider, request);  // the granted mode
//
// In order (docs/approval.md, "Escalation"): a run the wider mode would refuse (its session log
// writable, a workspace on /proc, ...) is `refused` before anyone is asked; then an escalation
// that is not wider, a denied domain, no service, the approval policy, the approval rules, the
// session's grants and the responders decide (cordon/approval.hpp); the texts of every refusal
// are docs/approval.md's. The question shows the request's own working directory, environment
// overrides, what the command would inherit that changes what a shell runs, and what the wider
// mode changes beyond the mode (its policy line): what the person reads is what runs. A grant
// made here records the whole environment the command starts with (build_environment() of this
// process's, request.env and request.environment) and covers no call that starts with another.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/approval.hpp"
#include "cordon/export.hpp"
#include "cordon/mode.hpp"
#include "cordon/network_request.hpp"
#include "cordon/provider.hpp"
#include "cordon/run.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::policy {

// What one call asks for beyond its standing policy (the request's mode and network).
struct escalation_ask {
    std::optional<sandbox::sandbox_mode> mode;  // nullopt: the standing one (network only)
    std::optional<network_request> network;     // more network; nullopt: none
    std::string justification;                  // the agent's one sentence; required
    std::string tool = "bash";                  // who asks, as the question and the log name it
    std::string subject = "command";            // as in "the user rejected escalating this command"
    std::string command;                        // the command as the person asked will see it
    // What the call feeds the command's stdin, describe_input(); empty when nothing.
    std::string input;
};

// What the call stands beside: the provider whose refusal() says what the wider mode would refuse
// (null: nothing is refused before asking), and the paths no run may write (the session log, the
// configuration).
struct escalation_setting {
    sandbox::provider* provider = nullptr;
    std::vector<std::filesystem::path> protected_paths;
};

enum class escalation_status {
    granted,      // the request now runs under the granted mode and network
    not_granted,  // not wider, rejected, cancelled, or nobody to ask: nothing runs
    refused,      // the wider run itself would be refused: nobody was asked, nothing runs
};

struct escalation_outcome {
    escalation_status status = escalation_status::not_granted;
    std::string error;  // the one-line text when not granted or refused
    // The record's "approval" object (docs/approval.md), null when refused.
    nlohmann::json approval;
    std::optional<approval_decision> decision;  // absent when nobody was asked
};

// The names of an environment whose value changes what a shell or the dynamic loader runs, whatever
// the command's words: bash's own inputs (BASH_ENV, ENV, SHELLOPTS, BASHOPTS, PS4, BASH_XTRACEFD,
// exported functions BASH_FUNC_*%%) and ld.so's (LD_*, GLIBC_TUNABLES). What the command would
// inherit of them is shown with the question and makes the call one no grant or rule covers.
[[nodiscard]] bool inherited_runner_variable(std::string_view name) noexcept;

// Decides `ask` for `request` (its mode, workspace root, rules, network, workdir, env as they
// stand) and, granted, widens request.mode and request.network. `cancel` withdraws the question.
[[nodiscard]] escalation_outcome escalate(runtime::run_request& request, const escalation_ask& ask,
                                          const escalation_setting& setting,
                                          approval_service& service, std::stop_token cancel = {});

}  // namespace cordon::policy

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using policy::escalate;
using policy::escalation_ask;
using policy::escalation_outcome;
using policy::escalation_setting;
using policy::escalation_status;
using policy::inherited_runner_variable;
}  // namespace cordon
CORDON_PUBLIC_END
