// The network in escalation and approval: a call may ask for the network as it asks for a wider
// mode, the question says exactly what changes, the texts of mode-only escalations stay as they
// were, and a standing grant never covers a call that asks for more network than it was given
// under (nor does one logged before grants recorded their network).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "policy/command_prefix.hpp"
#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"
#include "policy/session_log.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace {

using sandbox::network_policy;
using sandbox::sandbox_mode;
using test::temp_dir;

escalation_request asking(std::optional<network_policy> network,
                          sandbox_mode to = sandbox_mode::read_only,
                          sandbox_mode from = sandbox_mode::read_only) {
    escalation_request request;
    request.requested_mode = to;
    request.effective_mode = from;
    request.requested_network = network;
    request.effective_network = network_policy::deny;
    request.justification = "fetch the dependencies";
    request.command = "npm ci";
    return request;
}

// A responder that remembers the question and answers `outcome`.
struct recorder {
    std::vector<approval_request> asked;
    std::shared_ptr<approval_responder> responder(approval_outcome outcome) {
        return std::make_shared<function_responder>(
            "person", [this, outcome](const approval_request& request, std::stop_token) {
                asked.push_back(request);
                return std::optional(outcome);
            });
    }
};

TEST(NetworkEscalation, TheQuestionSaysWhatChangesInTheNetwork) {
    approval_service service;
    recorder person;
    service.add_responder(person.responder(approval_outcome::allowed_once));
    const auto only = approve_escalation(asking(network_policy::allow), &service);
    ASSERT_TRUE(only.granted);
    EXPECT_EQ(*only.granted, sandbox_mode::read_only);
    EXPECT_EQ(only.granted_network, network_policy::allow);
    ASSERT_EQ(person.asked.size(), 1u);
    EXPECT_EQ(person.asked[0].network, "deny \u2192 allow");
    EXPECT_EQ(person.asked[0].requested_network, network_policy::allow);
    EXPECT_EQ(person.asked[0].effective_network, network_policy::deny);
    EXPECT_EQ(person.asked[0].reason, "escalate sandbox network to allow: fetch the dependencies");

    const auto both =
        approve_escalation(asking(network_policy::allow, sandbox_mode::workspace_write), &service);
    ASSERT_TRUE(both.granted);
    EXPECT_EQ(*both.granted, sandbox_mode::workspace_write);
    EXPECT_EQ(both.granted_network, network_policy::allow);
    EXPECT_EQ(person.asked[1].network, "deny \u2192 allow");
    EXPECT_EQ(person.asked[1].reason,
              "escalate sandbox to workspace-write, network allow: fetch the dependencies");

    // A mode-only escalation keeps the network it stands under and its question as it was.
    const auto mode_only =
        approve_escalation(asking(std::nullopt, sandbox_mode::workspace_write), &service);
    ASSERT_TRUE(mode_only.granted);
    EXPECT_EQ(mode_only.granted_network, network_policy::deny);
    EXPECT_EQ(person.asked[2].network, "");
    EXPECT_EQ(person.asked[2].reason,
              "escalate sandbox to workspace-write: fetch the dependencies");

    // danger-full-access has the host's network: the grant says so, the policy line says
    // nothing is confined (no network line of its own).
    const auto unconfined =
        approve_escalation(asking(std::nullopt, sandbox_mode::danger_full_access), &service);
    EXPECT_EQ(unconfined.granted_network, network_policy::allow);
    EXPECT_EQ(person.asked[3].network, "");
    EXPECT_EQ(person.asked[3].requested_network, network_policy::allow);
}

TEST(NetworkEscalation, EachRefusalNamesTheNetwork) {
    // Not wider: nobody is asked.
    approval_service service;
    recorder person;
    service.add_responder(person.responder(approval_outcome::rejected));
    auto already = asking(network_policy::allow);
    already.effective_network = network_policy::allow;
    EXPECT_EQ(approve_escalation(already, &service).error,
              "sandbox escalation to network \"allow\" is not wider than this call's current "
              "network \"allow\"");
    EXPECT_EQ(approve_escalation(asking(network_policy::deny), &service).error,
              "sandbox escalation to network \"deny\" is not wider than this call's current "
              "network \"deny\"");
    EXPECT_EQ(approve_escalation(asking(network_policy::allow, sandbox_mode::danger_full_access,
                                        sandbox_mode::danger_full_access),
                                 &service)
                  .error,
              "sandbox escalation to network \"allow\" is not wider than this call's current "
              "network \"allow\"");
    EXPECT_TRUE(person.asked.empty());

    EXPECT_EQ(approve_escalation(asking(network_policy::allow), nullptr).error,
              "sandbox escalation to network \"allow\" requires approval, but no approval "
              "service is composed");
    EXPECT_EQ(approve_escalation(asking(network_policy::allow), &service).error,
              "the user rejected escalating this command to network \"allow\"");
    EXPECT_EQ(
        approve_escalation(asking(network_policy::allow, sandbox_mode::workspace_write), &service)
            .error,
        "the user rejected escalating this command to \"workspace-write\" with network \"allow\"");
    // The mode-only text is exactly what it was.
    EXPECT_EQ(
        approve_escalation(asking(std::nullopt, sandbox_mode::workspace_write), &service).error,
        "the user rejected escalating this command to \"workspace-write\"");
}

TEST(NetworkEscalation, TheJsonNamesTheNetworkAskedForAndGranted) {
    approval_service service;
    recorder person;
    service.add_responder(person.responder(approval_outcome::allowed_for_session));
    const nlohmann::json out = to_json(approve_escalation(asking(network_policy::allow), &service));
    EXPECT_EQ(out["network"], "allow");
    EXPECT_EQ(out["mode"], "read-only");
    EXPECT_EQ(out["grant"]["network"], "allow");
}

approval_request call(std::string command, network_policy network) {
    approval_request request;
    request.command = std::move(command);
    request.effective_mode = sandbox_mode::read_only;
    request.requested_mode = sandbox_mode::workspace_write;
    request.requested_network = network;
    request.justification = "j";
    return request;
}

TEST(NetworkGrants, AGrantNeverWidensTheNetworkItWasGivenUnder) {
    temp_dir dir;
    auto opened = session_log::open_or_create(dir / "s.jsonl", dir.path());
    auto log = std::make_shared<const session_log>(std::get<session_log>(std::move(opened)));
    approval_service service({}, log);
    recorder person;
    service.add_responder(person.responder(approval_outcome::allowed_for_session));

    const auto first = service.request(call("npm test", network_policy::deny));
    ASSERT_TRUE(first.grant);
    EXPECT_EQ(first.grant->network, network_policy::deny);
    // The same prefix under deny: covered, nobody asked.
    EXPECT_EQ(service.request(call("npm test unit", network_policy::deny)).source,
              decided_by::grant);
    EXPECT_EQ(person.asked.size(), 1u);
    // With the network: asked again, and the new grant is the network's.
    const auto wider = service.request(call("npm test", network_policy::allow));
    EXPECT_EQ(wider.source, decided_by::responder);
    EXPECT_EQ(person.asked.size(), 2u);
    ASSERT_TRUE(wider.grant);
    EXPECT_EQ(wider.grant->network, network_policy::allow);
    // An allow grant covers a call under deny too (it asks for less).
    EXPECT_TRUE(
        covers(*wider.grant, "npm test", sandbox_mode::workspace_write, network_policy::deny));

    // What the log says, read back: the asked event records the network beside the mode, the
    // grant its network.
    const auto state = std::get<session_state>(log->state());
    ASSERT_EQ(state.grants.size(), 2u);
    EXPECT_EQ(state.grants[0].network, network_policy::deny);
    EXPECT_EQ(state.grants[1].network, network_policy::allow);
    bool saw = false;
    for (const auto& event : state.events) {
        if (event.type != event_type::approval_asked) continue;
        EXPECT_TRUE(event.body.contains("network_from"));
        if (event.body["network"] == "allow") saw = true;
    }
    EXPECT_TRUE(saw);
}

TEST(NetworkGrants, AGrantLoggedWithoutANetworkIsReadAsDeny) {
    nlohmann::json asked{{"type", "approval/asked"},
                         {"id", "ap-1"},
                         {"tool", "bash"},
                         {"command", "npm ci"},
                         {"mode", "workspace-write"}};
    nlohmann::json decided{{"type", "approval/decided"},
                           {"id", "ap-1"},
                           {"outcome", "allowed-for-session"},
                           {"by", "person"},
                           {"grant", {{"prefix", {"npm", "ci"}}, {"mode", "workspace-write"}}}};
    EXPECT_EQ(invalid_event(asked), std::nullopt);
    EXPECT_EQ(invalid_event(decided), std::nullopt);
    const auto state = fold({{"approval/asked", asked, 1}, {"approval/decided", decided, 2}});
    ASSERT_EQ(state.grants.size(), 1u);
    EXPECT_EQ(state.grants[0].network, network_policy::deny);
    EXPECT_FALSE(
        covers(state.grants[0], "npm ci", sandbox_mode::workspace_write, network_policy::allow));
    // A network outside the vocabulary is a corrupt line, not ignored.
    decided["grant"]["network"] = "proxy";
    EXPECT_NE(invalid_event(decided), std::nullopt);
    asked["network"] = "everything";
    EXPECT_NE(invalid_event(asked), std::nullopt);
}

}  // namespace
}  // namespace cordon::policy
