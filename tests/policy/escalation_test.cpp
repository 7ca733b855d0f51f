// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Escalation: strictly wider or refused without asking, the pairing rules, and each outcome's
// exact text.
#include <gtest/gtest.h>

#include <algorithm>

#include "cordon/escalate.hpp"
#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace {

using sandbox::sandbox_mode;

TEST(Escalation, OnlyStrictlyWiderModesAreWider) {
    EXPECT_EQ(wider_modes(sandbox_mode::read_only),
              (std::vector{sandbox_mode::workspace_write, sandbox_mode::danger_full_access}));
    EXPECT_EQ(wider_modes(sandbox_mode::workspace_write),
              (std::vector{sandbox_mode::danger_full_access}));
    EXPECT_TRUE(wider_modes(sandbox_mode::danger_full_access).empty());
    EXPECT_FALSE(is_strictly_wider(sandbox_mode::read_only, sandbox_mode::read_only));
    EXPECT_FALSE(is_strictly_wider(sandbox_mode::read_only, sandbox_mode::workspace_write));
}

TEST(Escalation, PairingRules) {
    EXPECT_EQ(check_escalation_fields(false, std::nullopt), std::nullopt);
    EXPECT_EQ(check_escalation_fields(true, "needs to write the build"), std::nullopt);
    EXPECT_EQ(check_escalation_fields(true, std::nullopt),
              "invalid escalation: sandbox_permissions requires a justification");
    EXPECT_EQ(check_escalation_fields(false, "why"),
              "invalid escalation: justification is only valid together with "
              "sandbox_permissions");
    EXPECT_EQ(check_escalation_fields(true, "  \t\n"),
              "invalid justification: expected a non-empty sentence");
    EXPECT_EQ(check_escalation_fields(true, "", "--escalate"),
              "invalid justification: expected a non-empty sentence");
    EXPECT_EQ(check_escalation_fields(false, "why", "--escalate"),
              "invalid escalation: justification is only valid together with --escalate");
}

escalation_request widen(sandbox_mode to, sandbox_mode from = sandbox_mode::read_only) {
    escalation_request request;
    request.requested_mode = to;
    request.effective_mode = from;
    request.justification = "write the build output";
    request.command = "make";
    return request;
}

TEST(Escalation, NotWiderIsRefusedWithoutAsking) {
    approval_service service;
    int asked = 0;
    service.add_responder(std::make_shared<function_responder>(
        "count", [&asked](const approval_request&, std::stop_token) {
            ++asked;
            return std::optional(approval_outcome::allowed_once);
        }));
    for (auto [to, from] : {std::pair{sandbox_mode::read_only, sandbox_mode::read_only},
                            std::pair{sandbox_mode::workspace_write, sandbox_mode::workspace_write},
                            std::pair{sandbox_mode::read_only, sandbox_mode::danger_full_access}}) {
        const auto result = approve_escalation(widen(to, from), &service);
        EXPECT_FALSE(result.granted);
        EXPECT_FALSE(result.decision);
        EXPECT_EQ(result.error, "sandbox escalation to \"" + std::string(sandbox::to_string(to)) +
                                    "\" is not strictly wider than this call's current \"" +
                                    std::string(sandbox::to_string(from)) + "\" mode");
    }
    EXPECT_EQ(asked, 0);
}

TEST(Escalation, NoServiceIsItsOwnRefusal) {
    const auto result = approve_escalation(widen(sandbox_mode::workspace_write), nullptr);
    EXPECT_FALSE(result.granted);
    EXPECT_EQ(result.error,
              "sandbox escalation to \"workspace-write\" requires approval, but no approval "
              "service is composed");
}

TEST(Escalation, EachOutcomeMapsToItsText) {
    const std::vector<std::pair<approval_outcome, std::string>> cases = {
        {approval_outcome::allowed_once, ""},
        {approval_outcome::allowed_for_session, ""},
        {approval_outcome::rejected,
         "the user rejected escalating this command to \"danger-full-access\""},
        {approval_outcome::cancelled,
         "approval for escalating to \"danger-full-access\" was cancelled"},
        {approval_outcome::unavailable,
         "sandbox escalation to \"danger-full-access\" requires approval, but no approval "
         "channel is available"},
    };
    for (const auto& [outcome, text] : cases) {
        approval_service service;
        approval_request seen;
        service.add_responder(std::make_shared<function_responder>(
            "fixed", [&seen, answer = outcome](const approval_request& request, std::stop_token) {
                seen = request;
                return std::optional(answer);
            }));
        const auto result = approve_escalation(widen(sandbox_mode::danger_full_access), &service);
        ASSERT_TRUE(result.decision);
        EXPECT_EQ(result.decision->outcome, outcome);
        EXPECT_EQ(result.error, text);
        EXPECT_EQ(result.granted.has_value(), text.empty());
        if (result.granted) {
            EXPECT_EQ(*result.granted, sandbox_mode::danger_full_access);
        }
        EXPECT_EQ(seen.reason, "escalate sandbox to danger-full-access: write the build output");
        EXPECT_EQ(seen.effective_mode, sandbox_mode::read_only);
        EXPECT_EQ(seen.requested_mode, sandbox_mode::danger_full_access);
    }
}

TEST(Escalation, ARejectionByThePolicySaysNobodyWasAsked) {
    approval_service service({approval_policy::never});
    EXPECT_EQ(approve_escalation(widen(sandbox_mode::workspace_write), &service).error,
              "the user rejected escalating this command to \"workspace-write\" (the approval "
              "policy is \"never\": nobody was asked)");
}

TEST(Escalation, TheSubjectNamesWhatWasRejected) {
    approval_service service;
    service.add_responder(
        std::make_shared<function_responder>("no", [](const approval_request&, std::stop_token) {
            return std::optional(approval_outcome::rejected);
        }));
    auto request = widen(sandbox_mode::workspace_write);
    request.subject = "operation";
    EXPECT_EQ(approve_escalation(request, &service).error,
              "the user rejected escalating this operation to \"workspace-write\"");
}

TEST(Escalation, Markers) {
    EXPECT_EQ(denial_marker(sandbox_mode::read_only),
              "[sandbox: file access denied under read-only mode]\n");
    EXPECT_EQ(escalation_hint(),
              "[sandbox: escalation available \u2014 retry this exact command once with "
              "sandbox_permissions (the narrowest wider mode that suffices) + justification; the "
              "approval prompt asks the user]\n");
    EXPECT_NE(escalation_hint("operation").find("this exact operation once"), std::string::npos);
    EXPECT_NE(cli_escalation_hint().find("--escalate"), std::string::npos);
}

TEST(Escalation, PossibleOnlyWithAWiderModeAPolicyThatAsksAndSomeoneToAsk) {
    EXPECT_TRUE(escalation_possible(sandbox_mode::read_only, approval_policy::ask, true));
    EXPECT_TRUE(escalation_possible(sandbox_mode::workspace_write, approval_policy::ask, true));
    EXPECT_FALSE(escalation_possible(sandbox_mode::danger_full_access, approval_policy::ask, true));
    EXPECT_FALSE(escalation_possible(sandbox_mode::read_only, approval_policy::never, true));
    EXPECT_FALSE(escalation_possible(sandbox_mode::read_only, approval_policy::ask, false));
}

// One JSON shape for every consumer (cordon run --json, the MCP bash tool).
TEST(EscalationJson, NotWiderWasNeverPutToTheService) {
    approval_service service;
    const auto result =
        approve_escalation(widen(sandbox_mode::read_only, sandbox_mode::workspace_write), &service);
    EXPECT_EQ(to_json(result), nlohmann::json::parse(R"({"asked": false, "action": "not-wider",
        "outcome": null, "id": null, "mode": "read-only", "network": "deny", "by": null})"));
}

TEST(EscalationJson, AnAnswerSaysWhoGaveItAndWhatItGranted) {
    approval_service service;
    service.add_responder(std::make_shared<function_responder>(
        "terminal", [](const approval_request&, std::stop_token) {
            return std::optional(approval_outcome::allowed_for_session);
        }));
    const auto first = to_json(approve_escalation(widen(sandbox_mode::workspace_write), &service));
    EXPECT_EQ(first["asked"], true);
    EXPECT_EQ(first["action"], "accept");
    EXPECT_EQ(first["outcome"], "allowed-for-session");
    EXPECT_EQ(first["mode"], "workspace-write");
    EXPECT_EQ(first["by"], "terminal");
    ASSERT_TRUE(first.contains("grant")) << first.dump();
    EXPECT_EQ(first["grant"]["covers"], "exactly `make`") << first.dump();
    EXPECT_EQ(first["grant"]["mode"], "workspace-write");
    EXPECT_EQ(first.contains("detail"), false);

    // The grant now covers the same command: nobody is asked.
    const auto covered =
        to_json(approve_escalation(widen(sandbox_mode::workspace_write), &service));
    EXPECT_EQ(covered["asked"], false);
    EXPECT_EQ(covered["action"], "session-grant");
    EXPECT_EQ(covered["by"], "grant");
    EXPECT_EQ(covered["grant"]["id"], first["grant"]["id"]);
}

TEST(EscalationJson, APolicyRefusalSaysWhy) {
    approval_service service({approval_policy::never});
    const auto shown = to_json(approve_escalation(widen(sandbox_mode::workspace_write), &service));
    EXPECT_EQ(shown["asked"], false);
    EXPECT_EQ(shown["action"], "rejected-by-policy");
    EXPECT_EQ(shown["outcome"], "rejected");
    EXPECT_EQ(shown["by"], "policy");
    EXPECT_EQ(shown["detail"], "the approval policy is never");
}

// The one builder of the question (both front ends reach it through escalate()): each field is
// the request's as it stands or the ask's.
TEST(MakeEscalation, TheQuestionIsTheRequestAndTheAskAsTheyStand) {
    const test::temp_dir workspace;
    runtime::run_request request;
    request.argv = {"/bin/bash", "-c", "npm install"};
    request.mode = sandbox_mode::read_only;
    request.workspace_root = workspace.path();
    request.workdir = workspace.path() / "sub";
    request.env["CORDON_BUILDER"] = "1";
    request.network.policy = sandbox::network_policy::proxy;
    request.network.allowed_domains = {"a.example"};
    request.network.denied_domains = {"evil.example"};
    request.network.proxy_resolve = {{"b.example", "192.0.2.1"}};
    escalation_ask ask;
    ask.mode = sandbox_mode::workspace_write;
    ask.network = network_request{sandbox::network_policy::proxy, {"b.example"}};
    ask.justification = "npm install writes node_modules";
    ask.tool = "cordon run";
    ask.subject = "command";
    ask.command = "npm install";
    ask.input = "stdin: the file x";

    const escalation_request asked = make_escalation(request, ask);
    EXPECT_EQ(asked.requested_mode, sandbox_mode::workspace_write);
    EXPECT_EQ(asked.effective_mode, sandbox_mode::read_only);
    EXPECT_EQ(asked.requested_network, ask.network);
    EXPECT_EQ(asked.effective_network,
              (network_request{sandbox::network_policy::proxy, {"a.example"}}));
    EXPECT_EQ(asked.denied_domains, std::vector<std::string>{"evil.example"});
    ASSERT_EQ(asked.proxy_resolve.size(), 1U);
    EXPECT_EQ(asked.proxy_resolve[0].name, "b.example");
    EXPECT_EQ(asked.justification, ask.justification);
    EXPECT_EQ(asked.subject, "command");
    EXPECT_EQ(asked.tool, "cordon run");
    EXPECT_EQ(asked.command, "npm install");
    EXPECT_EQ(asked.workdir, workspace.path() / "sub");
    EXPECT_EQ(asked.env, std::vector<std::string>{"CORDON_BUILDER=1"});
    EXPECT_NE(std::find(asked.environment.begin(), asked.environment.end(), "CORDON_BUILDER=1"),
              asked.environment.end());
    EXPECT_EQ(asked.input, "stdin: the file x");
    EXPECT_EQ(asked.policy,
              policy_change(sandbox_mode::workspace_write, request.rules, workspace.path()));

    // Without a workdir the question names the root; a network-only ask asks for the mode it
    // stands under.
    request.workdir.reset();
    ask.mode.reset();
    const escalation_request network_only = make_escalation(request, ask);
    EXPECT_EQ(network_only.workdir, workspace.path());
    EXPECT_EQ(network_only.requested_mode, sandbox_mode::read_only);
    EXPECT_EQ(network_only.effective_mode, sandbox_mode::read_only);
}

// A grant widens the request once: its mode and network; a rule's also starts the run from the
// minimal environment in the account's home. Nothing granted changes nothing.
TEST(ApplyGrant, WidensTheModeAndTheNetworkOnce) {
    runtime::run_request request;
    request.mode = sandbox_mode::read_only;
    request.network.policy = sandbox::network_policy::deny;
    request.environment.keep = {"MY_*"};
    escalation_result refused;
    apply_grant(request, refused);
    EXPECT_EQ(request.mode, sandbox_mode::read_only);
    EXPECT_EQ(request.network.policy, sandbox::network_policy::deny);

    escalation_result granted;
    granted.granted = sandbox_mode::workspace_write;
    granted.granted_network = network_request{sandbox::network_policy::proxy, {"a.example"}};
    granted.decision = approval_decision{};
    granted.decision->source = decided_by::responder;
    apply_grant(request, granted);
    EXPECT_EQ(request.mode, sandbox_mode::workspace_write);
    EXPECT_EQ(request.network.policy, sandbox::network_policy::proxy);
    EXPECT_EQ(request.network.allowed_domains, std::vector<std::string>{"a.example"});
    EXPECT_FALSE(request.environment.clear);
    EXPECT_EQ(request.environment.keep, std::vector<std::string>{"MY_*"});

    runtime::run_request ruled;
    ruled.environment.keep = {"MY_*"};
    granted.decision->source = decided_by::rule;
    apply_grant(ruled, granted);
    EXPECT_EQ(ruled.mode, sandbox_mode::workspace_write);
    EXPECT_TRUE(ruled.environment.clear);
    EXPECT_TRUE(ruled.environment.keep.empty());
    if (const auto home = sandbox::account_home(); !home.empty()) {
        EXPECT_EQ(ruled.env["HOME"], home.string());
    }
}

}  // namespace
}  // namespace cordon::policy

namespace cordon::policy {
namespace {

// A wider mode never drops a protection unseen: the question says what stays and what goes.
TEST(PolicyChange, SaysWhatStaysUnderAConfinedModeAndWhatAnUnconfinedOneDrops) {
    sandbox::path_rules rules;
    rules.deny_credential_stores = false;  // this host's: the two below stand in for them
    rules.deny_read = {"/home/u/.ssh", "/home/u/.aws"};
    rules.writable_roots = {"/srv/cache"};
    const std::string wider =
        policy_change(sandbox::sandbox_mode::workspace_write, rules, "/home/u/project");
    EXPECT_EQ(wider, "writes /home/u/project, /srv/cache and a private /tmp; " +
                         std::to_string(rules.protect.size()) +
                         " protected names (.git/hooks, .bashrc, ...) stay read-only; 2 "
                         "credential stores stay unreadable");
    EXPECT_EQ(policy_change(sandbox::sandbox_mode::danger_full_access, rules, "/home/u/project"),
              "nothing is confined: the protected names (.git/hooks, .bashrc, ...) and the hidden "
              "credential stores (~/.ssh, ...) stop applying");
    rules.protect.clear();
    rules.allow_read = {"/"};
    EXPECT_EQ(policy_change(sandbox::sandbox_mode::danger_full_access, rules, "/w"),
              "nothing is confined");
    EXPECT_EQ(policy_change(sandbox::sandbox_mode::workspace_write, rules, "/w"),
              "writes /w, /srv/cache and a private /tmp; no protected names; no hidden paths");
}

namespace fs = std::filesystem;

// The keys found in the workspace are the run's own to read: the question does not count them
// among what stays unreadable, and counts them for a run elsewhere.
TEST(PolicyChange, TheWorkspacesOwnKeysAreNotCountedAsHidden) {
    const test::temp_dir home{"/var/tmp", "cordon-policy-change-"};
    const test::scoped_env home_variable("HOME", home.path().string());
    const std::string key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + std::string(64, 'K') +
                            "\n-----END OPENSSH PRIVATE KEY-----\n";
    fs::create_directories(home.path() / "proj" / "test");
    test::write_file(home.path() / "proj" / "test" / "key", key);
    sandbox::path_rules rules;
    const auto hidden = [&rules](const std::filesystem::path& workspace) {
        const std::string text =
            policy_change(sandbox::sandbox_mode::workspace_write, rules, workspace);
        const std::size_t end = text.find(" credential stores stay unreadable");
        const std::size_t start = text.rfind("; ", end);
        EXPECT_NE(end, std::string::npos) << text;
        return std::stoul(text.substr(start + 2, end - start - 2));
    };
    EXPECT_EQ(hidden(home.path() / "proj") + 1, hidden("/w"));
}

}  // namespace
}  // namespace cordon::policy
