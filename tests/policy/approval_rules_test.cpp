// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Approval rules: what a person writes down ahead of time. A rule loads only when its examples
// say what it matches; it covers what its pattern says and nothing a program could read as "run
// this"; the approval service applies it without asking, and records which rule decided.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cordon/approval.hpp"
#include "cordon/approval_rules.hpp"
#include "policy/escalation.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace {

using nlohmann::json;
using sandbox::sandbox_mode;

json npm_scripts() {
    return json{{"name", "npm-scripts"},
                {"pattern", {"npm", "run", {"build", "test"}, "<operand>..."}},
                {"mode", "workspace-write"},
                {"match", {"npm run build", "npm run test src/a.test.js"}},
                {"not_match", {"npm run lint", "npm run build --script-shell ./sh"}}};
}

command_rule rule_of(const json& text) {
    auto parsed = parse_rule(text);
    if (auto* error = std::get_if<std::string>(&parsed)) ADD_FAILURE() << *error;
    return std::get<command_rule>(std::move(parsed));
}

std::string refusal_of(const json& text) {
    auto parsed = parse_rule(text);
    if (std::holds_alternative<command_rule>(parsed)) {
        ADD_FAILURE() << "loaded: " << text.dump();
        return "";
    }
    return std::get<std::string>(parsed);
}

TEST(ApprovalRules, ARuleWhoseExamplesDoNotSayWhatItMatchesDoesNotLoad) {
    json rule = npm_scripts();
    rule["match"].push_back("npm run lint");
    EXPECT_EQ(refusal_of(rule),
              "approval rule \"npm-scripts\": example \"npm run lint\" does not match `npm run "
              "{build|test} <operand>...`");

    rule = npm_scripts();
    rule["not_match"].push_back("npm run test unit");
    EXPECT_EQ(refusal_of(rule),
              "approval rule \"npm-scripts\": example \"npm run test unit\" in \"not_match\" "
              "matches `npm run {build|test} <operand>...`");

    rule = npm_scripts();
    rule["match"] = json::array();
    EXPECT_EQ(refusal_of(rule),
              "approval rule \"npm-scripts\": \"match\" needs at least one example: a rule is "
              "checked against them");

    rule = npm_scripts();
    rule["match"].push_back("npm run build && curl x | sh");
    EXPECT_NE(refusal_of(rule).find("it is not a simple command"), std::string::npos);
}

TEST(ApprovalRules, AMalformedRuleIsRefusedInOneLine) {
    const auto with = [](const char* key, json value) {
        json rule = npm_scripts();
        if (value.is_null()) {
            rule.erase(key);
        } else {
            rule[key] = std::move(value);
        }
        return refusal_of(rule);
    };
    EXPECT_EQ(with("name", nullptr), "an approval rule needs a \"name\"");
    EXPECT_EQ(with("pattern", json::array()),
              "approval rule \"npm-scripts\": \"pattern\" must be a non-empty list");
    EXPECT_EQ(with("pattern", {"<operand>", "run"}),
              "approval rule \"npm-scripts\": the first word must name the program, not "
              "<operand>");
    EXPECT_EQ(with("pattern", {"<operand>..."}),
              "approval rule \"npm-scripts\": the first word must name the program, not "
              "<operand>...");
    EXPECT_EQ(with("pattern", {"npm", "<operand>...", "run"}),
              "approval rule \"npm-scripts\": <operand>... may only end the pattern");
    EXPECT_EQ(with("pattern", {"npm", "<option>"}),
              "approval rule \"npm-scripts\": unknown placeholder \"<option>\" (<operand> or, "
              "last, <operand>... or <any>...)");
    EXPECT_EQ(with("pattern", {"npm", "<any>..."}),
              "approval rule \"npm-scripts\": an allow rule names every word it allows: "
              "<any>... is for forbid rules (<operand>... for operands)");
    EXPECT_EQ(with("pattern", {"npm", {"run", "<operand>"}}),
              "approval rule \"npm-scripts\": a placeholder such as \"<operand>\" stands alone, "
              "not in a list");
    EXPECT_EQ(with("mode", "read-only"),
              "approval rule \"npm-scripts\": \"mode\" must be \"workspace-write\" or "
              "\"danger-full-access\"");
    EXPECT_EQ(with("mode", nullptr),
              "approval rule \"npm-scripts\": an allow rule needs a \"mode\"");
    EXPECT_EQ(with("decision", "maybe"),
              "approval rule \"npm-scripts\": \"decision\" must be \"allow\" or \"forbid\"");
    EXPECT_EQ(with("decision", "forbid"),
              "approval rule \"npm-scripts\": a forbid rule has no \"mode\"");
    EXPECT_EQ(with("matches", json::array()),
              "approval rule \"npm-scripts\": unknown key \"matches\"");
    EXPECT_EQ(with("match", "npm run build"),
              "approval rule \"npm-scripts\": \"match\" is not a list of commands");
}

// A pattern covers what it says: its words, its alternatives, plain operands where it has
// <operand>; never an option, an assignment, a word starting with + or @, or shell syntax.
TEST(ApprovalRules, APatternCoversOnlyWhatItSays) {
    const command_rule rule = rule_of(npm_scripts());
    EXPECT_TRUE(matches(rule, "npm run build"));
    EXPECT_TRUE(matches(rule, "npm run test src/a.test.js src/b.test.js"));
    EXPECT_TRUE(matches(rule, "npm run 'build'"));
    for (const char* command :
         {"npm run lint", "npm run", "npm run build --script-shell ./sh", "npm run build -- -x",
          "npm run build FOO=bar", "npm run build @file", "npm run build +x",
          "npm run build; curl x | sh", "npm run build $(id)", "NODE_OPTIONS=x npm run build",
          "npx run build", "npm --prefix /tmp run build"}) {
        EXPECT_FALSE(matches(rule, command)) << command;
    }

    // Without <operand>... nothing may follow; <operand> is exactly one plain word.
    const command_rule tar = rule_of({{"name", "untar"},
                                      {"pattern", {"tar", "xf", "<operand>"}},
                                      {"mode", "workspace-write"},
                                      {"match", {"tar xf data.tar"}},
                                      {"not_match", {"tar xf data.tar -I ./tools/x"}}});
    EXPECT_FALSE(matches(tar, "tar xf -I ./x"));
    EXPECT_FALSE(matches(tar, "tar xf a.tar b.tar"));
    EXPECT_FALSE(matches(tar, "tar xf"));
    EXPECT_EQ(describe(tar), "tar xf <operand>");
    // Its JSON form reads back as the same rule.
    EXPECT_EQ(to_json(rule_of(to_json(rule))), to_json(rule));
}

approval_request call(std::string command, sandbox_mode mode = sandbox_mode::workspace_write) {
    approval_request request;
    request.tool = "test";
    request.command = std::move(command);
    request.workdir = "/src/app";
    request.effective_mode = sandbox_mode::read_only;
    request.requested_mode = mode;
    request.justification = "j";
    return request;
}

TEST(ApprovalRules, TheServiceAppliesThemWithoutAskingAndRecordsWhichDecided) {
    test::temp_dir dir;
    auto opened = session_log::open_or_create(dir / "s.jsonl", dir.path());
    auto log = std::make_shared<const session_log>(std::get<session_log>(std::move(opened)));
    approval_options options;
    options.rules.push_back(rule_of(npm_scripts()));
    options.rules.push_back(rule_of({{"name", "no-rm"},
                                     {"pattern", {"rm", "<any>..."}},
                                     {"decision", "forbid"},
                                     {"match", {"rm -r build", "rm"}}}));
    approval_service service(options, log);
    int asked = 0;
    service.add_responder(std::make_shared<function_responder>(
        "person", [&asked](const approval_request&, std::stop_token) {
            ++asked;
            return std::optional(approval_outcome::allowed_once);
        }));

    const approval_decision allowed = service.request(call("npm run build"));
    EXPECT_EQ(allowed.outcome, approval_outcome::allowed_once);
    EXPECT_EQ(allowed.source, decided_by::rule);
    EXPECT_EQ(allowed.by, "rule");
    EXPECT_EQ(allowed.rule, "npm-scripts");
    EXPECT_FALSE(allowed.asked);
    EXPECT_FALSE(allowed.grant);
    EXPECT_EQ(asked, 0);

    const approval_decision forbidden = service.request(call("rm -rf --no-preserve-root /"));
    EXPECT_EQ(forbidden.outcome, approval_outcome::rejected);
    EXPECT_EQ(forbidden.rule, "no-rm");
    EXPECT_EQ(asked, 0);

    // Asked instead: a mode wider than the rule's; a call that sets the environment or feeds
    // stdin; one that asks for network; an option the pattern does not name; one whose PATH holds
    // a directory a run can write.
    (void)service.request(call("npm run build", sandbox_mode::danger_full_access));
    approval_request env = call("npm run build");
    env.env = {"NODE_OPTIONS=--require ./x.js"};
    (void)service.request(env);
    approval_request input = call("npm run build");
    input.input = "stdin: 3 bytes: x\\n";
    (void)service.request(input);
    approval_request network = call("npm run build");
    network.requested_network = network_request{sandbox::network_policy::allow, {}};
    (void)service.request(network);
    (void)service.request(call("npm run build --script-shell ./sh"));
    approval_request planted = call("npm run build");
    planted.writable_path = {"/src/app/node_modules/.bin"};
    (void)service.request(planted);
    EXPECT_EQ(asked, 6);

    // The log names the rule that decided.
    const auto state = std::get<session_state>(log->state());
    std::vector<std::string> rules;
    for (const auto& event : state.events) {
        if (event.type == event_type::approval_decided && event.body.contains("rule")) {
            rules.push_back(event.body["rule"].get<std::string>());
        }
    }
    EXPECT_EQ(rules, (std::vector<std::string>{"npm-scripts", "no-rm"}));
    EXPECT_TRUE(state.grants.empty());

    // A policy of never still refuses first.
    approval_options never = options;
    never.policy = approval_policy::never;
    approval_service refusing(never);
    EXPECT_EQ(refusing.request(call("npm run build")).source, decided_by::policy);
}

TEST(ApprovalRules, AForbiddingRuleSaysSoInTheEscalationsError) {
    approval_options options;
    options.rules.push_back(rule_of({{"name", "no-curl"},
                                     {"pattern", {"curl", "<operand>..."}},
                                     {"decision", "forbid"},
                                     {"match", {"curl example.com"}}}));
    approval_service service(options);
    escalation_request request;
    request.requested_mode = sandbox_mode::danger_full_access;
    request.effective_mode = sandbox_mode::read_only;
    request.justification = "fetch";
    request.command = "curl example.com";
    const escalation_result result = approve_escalation(request, &service);
    EXPECT_FALSE(result.granted);
    EXPECT_EQ(result.error,
              "sandbox escalation to \"danger-full-access\" is refused: approval rule \"no-curl\" "
              "forbids it (nobody was asked)");
}

// A forbid rule wins wherever it stands: an allow rule of the system's does not switch off a
// forbid rule the person wrote after it.
TEST(ApprovalRules, AForbiddingRuleWinsOverAnEarlierAllowingOne) {
    approval_options options;
    options.rules.push_back(rule_of({{"name", "git-anything"},
                                     {"pattern", {"git", "<operand>..."}},
                                     {"mode", "danger-full-access"},
                                     {"match", {"git push origin main"}}}));
    options.rules.push_back(rule_of({{"name", "no-push"},
                                     {"pattern", {"git", "push", "<any>..."}},
                                     {"decision", "forbid"},
                                     {"match", {"git push --force"}}}));
    approval_service service(options);
    const approval_decision pushed = service.request(call("git push origin main"));
    EXPECT_EQ(pushed.outcome, approval_outcome::rejected);
    EXPECT_EQ(pushed.rule, "no-push");
    const approval_decision fetched = service.request(call("git fetch origin"));
    EXPECT_EQ(fetched.outcome, approval_outcome::allowed_once);
    EXPECT_EQ(fetched.rule, "git-anything");
}

// Unconfined, the network is the host's: a rule that allows danger-full-access applies to a call
// that asks for no network of its own.
TEST(ApprovalRules, ARuleOfDangerFullAccessAppliesToAnUnconfinedCall) {
    approval_options options;
    options.rules.push_back(rule_of({{"name", "make-install"},
                                     {"pattern", {"make", "install"}},
                                     {"mode", "danger-full-access"},
                                     {"match", {"make install"}}}));
    approval_service service(options);
    escalation_request request;
    request.requested_mode = sandbox_mode::danger_full_access;
    request.effective_mode = sandbox_mode::read_only;
    request.justification = "install";
    request.command = "make install";
    const escalation_result result = approve_escalation(request, &service);
    ASSERT_TRUE(result.granted) << result.error;
    EXPECT_EQ(*result.granted, sandbox_mode::danger_full_access);
    ASSERT_TRUE(result.decision);
    EXPECT_EQ(result.decision->rule, "make-install");
    // But a call that would inherit an exported function is asked about: nobody here.
    approval_request inherited = call("make install", sandbox_mode::danger_full_access);
    inherited.requested_network = network_request{sandbox::network_policy::allow, {}};
    inherited.inherited = {"BASH_FUNC_make%%=() { id; }"};
    EXPECT_EQ(service.request(inherited).source, decided_by::none);
}

// A rule built by hand is checked as one read from JSON: one that does not hold is refused.
TEST(ApprovalRules, ARuleBuiltByHandIsCheckedWhenTheServiceIsMade) {
    command_rule anything;
    anything.name = "anything";
    anything.pattern = {word_pattern{word_pattern::kind::words, {"npm"}}};
    anything.more = command_rule::tail::any;
    anything.match = {"npm exec evil"};
    approval_options options;
    options.rules.push_back(anything);
    EXPECT_THROW(approval_service{options}, std::invalid_argument);
    options.rules.back().match.clear();
    options.rules.back().more = command_rule::tail::operands;
    EXPECT_THROW(approval_service{options}, std::invalid_argument);
}

}  // namespace
}  // namespace cordon::policy
