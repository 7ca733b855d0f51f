// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network in escalation and approval: a call may ask for the network as it asks for a wider
// mode, the question says exactly what changes, the texts of mode-only escalations stay as they
// were, and a standing grant never covers a call that asks for more network than it was given
// under (nor does one logged before grants recorded their network).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "cordon/network_request.hpp"
#include "cordon/session_log.hpp"
#include "policy/command_prefix.hpp"
#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace {

// How the question names the host's whole network: what it opens, not only its name.
const std::string opens_everything =
    "allow (every destination, the host's own loopback, its private network and cloud metadata "
    "included)";

using sandbox::network_policy;
using sandbox::sandbox_mode;
using test::temp_dir;

network_request net(network_policy policy, std::vector<std::string> domains = {}) {
    return {policy, std::move(domains)};
}

escalation_request asking(std::optional<network_request> network,
                          sandbox_mode to = sandbox_mode::read_only,
                          sandbox_mode from = sandbox_mode::read_only) {
    escalation_request request;
    request.requested_mode = to;
    request.effective_mode = from;
    request.requested_network = network;
    request.effective_network = net(network_policy::deny);
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
    const auto only = approve_escalation(asking(net(network_policy::allow)), &service);
    ASSERT_TRUE(only.granted);
    EXPECT_EQ(*only.granted, sandbox_mode::read_only);
    EXPECT_EQ(only.granted_network, net(network_policy::allow));
    ASSERT_EQ(person.asked.size(), 1u);
    EXPECT_EQ(person.asked[0].network, "deny \u2192 " + opens_everything);
    EXPECT_EQ(person.asked[0].requested_network, net(network_policy::allow));
    EXPECT_EQ(person.asked[0].effective_network, net(network_policy::deny));
    EXPECT_EQ(person.asked[0].reason, "escalate sandbox network to allow: fetch the dependencies");

    const auto both = approve_escalation(
        asking(net(network_policy::allow), sandbox_mode::workspace_write), &service);
    ASSERT_TRUE(both.granted);
    EXPECT_EQ(*both.granted, sandbox_mode::workspace_write);
    EXPECT_EQ(both.granted_network, net(network_policy::allow));
    EXPECT_EQ(person.asked[1].network, "deny \u2192 " + opens_everything);
    EXPECT_EQ(person.asked[1].reason,
              "escalate sandbox to workspace-write, network allow: fetch the dependencies");

    // A mode-only escalation keeps the network it stands under and its question as it was.
    const auto mode_only =
        approve_escalation(asking(std::nullopt, sandbox_mode::workspace_write), &service);
    ASSERT_TRUE(mode_only.granted);
    EXPECT_EQ(mode_only.granted_network, net(network_policy::deny));
    EXPECT_EQ(person.asked[2].network, "");
    EXPECT_EQ(person.asked[2].reason,
              "escalate sandbox to workspace-write: fetch the dependencies");

    // danger-full-access has the host's network: the grant says so, the policy line says
    // nothing is confined (no network line of its own).
    const auto unconfined =
        approve_escalation(asking(std::nullopt, sandbox_mode::danger_full_access), &service);
    EXPECT_EQ(unconfined.granted_network, net(network_policy::allow));
    EXPECT_EQ(person.asked[3].network, "");
    EXPECT_EQ(person.asked[3].requested_network, net(network_policy::allow));
}

TEST(NetworkEscalation, EachRefusalNamesTheNetwork) {
    // Not wider: nobody is asked.
    approval_service service;
    recorder person;
    service.add_responder(person.responder(approval_outcome::rejected));
    auto already = asking(net(network_policy::allow));
    already.effective_network = net(network_policy::allow);
    EXPECT_EQ(approve_escalation(already, &service).error,
              "sandbox escalation to network \"allow\" is not wider than this call's current "
              "network \"allow\"");
    EXPECT_EQ(approve_escalation(asking(net(network_policy::deny)), &service).error,
              "sandbox escalation to network \"deny\" is not wider than this call's current "
              "network \"deny\"");
    EXPECT_EQ(
        approve_escalation(asking(net(network_policy::allow), sandbox_mode::danger_full_access,
                                  sandbox_mode::danger_full_access),
                           &service)
            .error,
        "sandbox escalation to network \"allow\" is not wider than this call's current "
        "network \"allow\"");
    EXPECT_TRUE(person.asked.empty());

    EXPECT_EQ(approve_escalation(asking(net(network_policy::allow)), nullptr).error,
              "sandbox escalation to network \"allow\" requires approval, but no approval "
              "service is composed");
    EXPECT_EQ(approve_escalation(asking(net(network_policy::allow)), &service).error,
              "the user rejected escalating this command to network \"allow\"");
    EXPECT_EQ(
        approve_escalation(asking(net(network_policy::allow), sandbox_mode::workspace_write),
                           &service)
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
    const nlohmann::json out =
        to_json(approve_escalation(asking(net(network_policy::allow)), &service));
    EXPECT_EQ(out["network"], "allow");
    EXPECT_EQ(out["mode"], "read-only");
    EXPECT_EQ(out["grant"]["network"], "allow");
}

approval_request call(std::string command, network_request network) {
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

    const auto first = service.request(call("npm test", net(network_policy::deny)));
    ASSERT_TRUE(first.grant);
    EXPECT_EQ(first.grant->network, net(network_policy::deny));
    // The same command under deny: covered, nobody asked.
    EXPECT_EQ(service.request(call("npm test", net(network_policy::deny))).source,
              decided_by::grant);
    EXPECT_EQ(person.asked.size(), 1u);
    // With the network: asked again, and the new grant is the network's.
    const auto wider = service.request(call("npm test", net(network_policy::allow)));
    EXPECT_EQ(wider.source, decided_by::responder);
    EXPECT_EQ(person.asked.size(), 2u);
    ASSERT_TRUE(wider.grant);
    EXPECT_EQ(wider.grant->network, net(network_policy::allow));
    // An allow grant covers a call under deny too (it asks for less).
    EXPECT_TRUE(
        covers(*wider.grant, "npm test", sandbox_mode::workspace_write, net(network_policy::deny)));

    // What the log says, read back: the asked event records the network beside the mode, the
    // grant its network.
    const auto state = std::get<session_state>(log->state());
    ASSERT_EQ(state.grants.size(), 2u);
    EXPECT_EQ(state.grants[0].network, net(network_policy::deny));
    EXPECT_EQ(state.grants[1].network, net(network_policy::allow));
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
    EXPECT_EQ(state.grants[0].network, net(network_policy::deny));
    EXPECT_FALSE(covers(state.grants[0], "npm ci", sandbox_mode::workspace_write,
                        net(network_policy::allow)));
    // A network outside the vocabulary is a corrupt line, not ignored.
    decided["grant"]["network"] = "everything";
    EXPECT_NE(invalid_event(decided), std::nullopt);
    asked["network"] = "everything";
    EXPECT_NE(invalid_event(asked), std::nullopt);
}

// The order: deny < proxy(a) < proxy(a, b) < allow, each covering those before it and none
// after; proxy domains compared as canonical strings (a wildcard stands for no name here).
TEST(NetworkRequest, CoversFollowsTheOrderAndTheDomains) {
    const std::vector<network_request> chain{
        net(network_policy::deny), net(network_policy::proxy, {"a.example"}),
        net(network_policy::proxy, {"a.example", "b.example"}), net(network_policy::allow)};
    for (std::size_t wider = 0; wider < chain.size(); ++wider) {
        for (std::size_t narrower = 0; narrower < chain.size(); ++narrower) {
            EXPECT_EQ(covers(chain[wider], chain[narrower]), wider >= narrower)
                << to_string(chain[wider]) << " / " << to_string(chain[narrower]);
        }
    }
    // Order of the domains does not matter; a domain neither has does.
    EXPECT_TRUE(covers(net(network_policy::proxy, {"b.example", "a.example"}),
                       net(network_policy::proxy, {"a.example", "b.example"})));
    EXPECT_FALSE(covers(net(network_policy::proxy, {"a.example"}),
                        net(network_policy::proxy, {"b.example"})));
    EXPECT_FALSE(covers(net(network_policy::proxy, {"*.example"}),
                        net(network_policy::proxy, {"a.example"})));
    // Proxy to nothing is still more than deny: deny never covers a proxy.
    EXPECT_FALSE(covers(net(network_policy::deny), net(network_policy::proxy)));
    EXPECT_TRUE(covers(net(network_policy::proxy), net(network_policy::deny)));
}

TEST(NetworkRequest, JoinedChangeTextAndRules) {
    const auto a = net(network_policy::proxy, {"a.example"});
    const auto ab = net(network_policy::proxy, {"a.example", "b.example"});
    EXPECT_EQ(joined(a, net(network_policy::proxy, {"b.example", "a.example"})), ab);
    EXPECT_EQ(joined(net(network_policy::deny), a), a);
    EXPECT_EQ(joined(a, net(network_policy::deny)), a);
    EXPECT_EQ(joined(a, net(network_policy::allow)), net(network_policy::allow));
    EXPECT_EQ(joined(net(network_policy::deny), net(network_policy::deny)),
              net(network_policy::deny));

    EXPECT_EQ(to_string(ab), "proxy: a.example, b.example");
    EXPECT_EQ(to_string(net(network_policy::proxy)), "proxy");
    EXPECT_EQ(to_string(net(network_policy::allow)), "allow");
    EXPECT_EQ(network_change(net(network_policy::deny),
                             net(network_policy::proxy, {"registry.npmjs.org"})),
              "deny \u2192 proxy: registry.npmjs.org");
    EXPECT_EQ(
        network_change(a, net(network_policy::proxy, {"a.example", "b.example", "c.example"})),
        "proxy \u2192 proxy: +b.example, +c.example");
    EXPECT_EQ(network_change(a, net(network_policy::allow)),
              "proxy: a.example \u2192 " + opens_everything);
    EXPECT_EQ(network_change(ab, a), "");
    EXPECT_EQ(network_change(net(network_policy::allow), net(network_policy::allow)), "");

    // The rules a granted call runs with: the domains added, nothing else touched.
    sandbox::network_rules rules;
    rules.policy = network_policy::deny;
    rules.allowed_domains = {"a.example"};
    rules.denied_domains = {"*.bad.example"};
    rules.proxy_resolve = {{"localtest.example", "127.0.0.1"}};
    const auto granted =
        with_network(rules, net(network_policy::proxy, {"b.example", "a.example"}));
    EXPECT_EQ(granted.policy, network_policy::proxy);
    EXPECT_EQ(granted.allowed_domains, (std::vector<std::string>{"a.example", "b.example"}));
    EXPECT_EQ(granted.denied_domains, rules.denied_domains);
    EXPECT_EQ(granted.proxy_resolve, rules.proxy_resolve);
    EXPECT_EQ(with_network(rules, net(network_policy::allow)).policy, network_policy::allow);
    EXPECT_EQ(network_of(rules), net(network_policy::deny)) << "deny lets no domain through";
    EXPECT_EQ(network_of(granted), net(network_policy::proxy, {"a.example", "b.example"}));
    EXPECT_EQ(network_under(sandbox_mode::danger_full_access, a), net(network_policy::allow));
    EXPECT_EQ(network_under(sandbox_mode::workspace_write, a), a);

    const std::vector<std::string> denied{"*.bad.example", "evil.example:443", "10.0.0.1"};
    EXPECT_EQ(denied_by(denied, "x.bad.example"), "*.bad.example");
    EXPECT_EQ(denied_by(denied, "*.y.bad.example:80"), "*.bad.example");
    EXPECT_EQ(denied_by(denied, "bad.example"), std::nullopt) << "a wildcard is below, not at";
    EXPECT_EQ(denied_by(denied, "evil.example:443"), "evil.example:443");
    EXPECT_EQ(denied_by(denied, "evil.example"), std::nullopt) << "other ports stay allowed";
    EXPECT_EQ(denied_by(denied, "10.0.0.1"), "10.0.0.1");
}

escalation_request under_proxy(std::vector<std::string> standing,
                               std::optional<network_request> asked) {
    escalation_request request = asking(std::move(asked));
    request.effective_network = net(network_policy::proxy, std::move(standing));
    return request;
}

TEST(NetworkEscalation, AProxyEscalationSaysWhichDomainsItAdds) {
    approval_service service;
    recorder person;
    service.add_responder(person.responder(approval_outcome::allowed_once));
    const auto first =
        approve_escalation(asking(net(network_policy::proxy, {"registry.npmjs.org"})), &service);
    ASSERT_TRUE(first.granted);
    EXPECT_EQ(first.granted_network, net(network_policy::proxy, {"registry.npmjs.org"}));
    ASSERT_EQ(person.asked.size(), 1u);
    EXPECT_EQ(person.asked[0].network, "deny \u2192 proxy: registry.npmjs.org");
    EXPECT_EQ(person.asked[0].reason,
              "escalate sandbox network to proxy: registry.npmjs.org: fetch the dependencies");

    // Standing under proxy(a), asking for b: the call would run with both.
    const auto more = approve_escalation(
        under_proxy({"a.example"}, net(network_policy::proxy, {"b.example"})), &service);
    ASSERT_TRUE(more.granted);
    EXPECT_EQ(more.granted_network, net(network_policy::proxy, {"a.example", "b.example"}));
    EXPECT_EQ(more.requested_network, more.granted_network);
    EXPECT_EQ(person.asked[1].network, "proxy \u2192 proxy: +b.example");
    EXPECT_EQ(person.asked[1].effective_network, net(network_policy::proxy, {"a.example"}));

    const auto everything =
        approve_escalation(under_proxy({"a.example"}, net(network_policy::allow)), &service);
    EXPECT_EQ(everything.granted_network, net(network_policy::allow));
    EXPECT_EQ(person.asked[2].network, "proxy: a.example \u2192 " + opens_everything);

    const auto with_mode = approve_escalation(
        asking(net(network_policy::proxy, {"a.example"}), sandbox_mode::workspace_write), &service);
    EXPECT_EQ(person.asked[3].reason,
              "escalate sandbox to workspace-write, network proxy: a.example: fetch the "
              "dependencies");
    EXPECT_EQ(with_mode.granted_network, net(network_policy::proxy, {"a.example"}));
}

TEST(NetworkEscalation, AProxyEscalationThatAddsNothingOrADeniedDomainIsRefusedUnasked) {
    approval_service service;
    recorder person;
    service.add_responder(person.responder(approval_outcome::rejected));
    EXPECT_EQ(approve_escalation(under_proxy({"a.example", "b.example"},
                                             net(network_policy::proxy, {"b.example"})),
                                 &service)
                  .error,
              "sandbox escalation to network \"proxy: b.example\" is not wider than this call's "
              "current network \"proxy: a.example, b.example\"");
    auto under_allow = asking(net(network_policy::proxy, {"a.example"}));
    under_allow.effective_network = net(network_policy::allow);
    EXPECT_EQ(approve_escalation(under_allow, &service).error,
              "sandbox escalation to network \"proxy: a.example\" is not wider than this call's "
              "current network \"allow\"");
    auto denied = asking(net(network_policy::proxy, {"ok.example", "x.bad.example"}));
    denied.denied_domains = {"*.bad.example"};
    EXPECT_EQ(approve_escalation(denied, &service).error,
              "sandbox escalation to network \"proxy: ok.example, x.bad.example\" asks for "
              "\"x.bad.example\", which denied_domains refuses (\"*.bad.example\")");
    // An address asked for in a form that carries a denied one is the denied one.
    auto carried = asking(net(network_policy::proxy, {"[::ffff:93.184.216.34]:443"}));
    carried.denied_domains = {"93.184.216.34"};
    EXPECT_EQ(approve_escalation(carried, &service).error,
              "sandbox escalation to network \"proxy: [::ffff:93.184.216.34]:443\" asks for "
              "\"[::ffff:93.184.216.34]:443\", which denied_domains refuses (\"93.184.216.34\")");
    // And the other way: a denied IPv6 form denies the IPv4 address it carries.
    auto plain = asking(net(network_policy::proxy, {"127.0.0.1:18080"}));
    plain.denied_domains = {"::ffff:127.0.0.1"};
    EXPECT_EQ(approve_escalation(plain, &service).error,
              "sandbox escalation to network \"proxy: 127.0.0.1:18080\" asks for "
              "\"127.0.0.1:18080\", which denied_domains refuses (\"::ffff:127.0.0.1\")");
    // A name the operator maps to a denied address is that address.
    auto mapped = asking(net(network_policy::proxy, {"db.test:5432"}));
    mapped.denied_domains = {"10.0.0.5"};
    mapped.proxy_resolve = {{"db.test", "10.0.0.5"}};
    EXPECT_EQ(approve_escalation(mapped, &service).error,
              "sandbox escalation to network \"proxy: db.test:5432\" asks for \"db.test:5432\", "
              "which denied_domains refuses (\"10.0.0.5\")");
    // The host's whole network would reach what the operator denies: refused, whatever the
    // standing network, and a wider mode alone is still asked about.
    for (const auto& standing :
         {net(network_policy::deny), net(network_policy::proxy, {"a.example"})}) {
        auto everything = asking(net(network_policy::allow));
        everything.effective_network = standing;
        everything.denied_domains = {"gist.github.com", "*.bad.example", "10.0.0.5", "x.example"};
        EXPECT_EQ(approve_escalation(everything, &service).error,
                  "sandbox escalation to network \"allow\" would open what denied_domains refuses "
                  "(\"gist.github.com\", \"*.bad.example\", \"10.0.0.5\", ...); ask for the "
                  "domains the command needs instead");
    }
    EXPECT_TRUE(person.asked.empty());
    EXPECT_EQ(approve_escalation(asking(net(network_policy::proxy, {"a.example"})), &service).error,
              "the user rejected escalating this command to network \"proxy: a.example\"");
}

// An address asked for says what it is and which ports it opens, in words a person reads
// correctly: "+127.0.0.1" alone reads like the sandbox's own loopback.
TEST(NetworkRequest, AnAddressAskedForSaysWhatItIs) {
    const auto deny = net(network_policy::deny);
    const auto a = net(network_policy::proxy, {"a.example"});
    EXPECT_EQ(network_change(deny, net(network_policy::proxy, {"127.0.0.1:18080"})),
              "deny \u2192 proxy: 127.0.0.1:18080 (the host's own loopback, port 18080)");
    EXPECT_EQ(network_change(a, net(network_policy::proxy,
                                    {"a.example", "169.254.169.254", "[::1]:80", "10.1.2.3:22",
                                     "[::ffff:127.0.0.1]:80", "93.184.216.34:443", "192.0.2.1"})),
              "proxy \u2192 proxy: +169.254.169.254 (link-local, where cloud metadata services "
              "answer, every port), +[::1]:80 (the host's own loopback, port 80), +10.1.2.3:22 (a "
              "private network address, port 22), +[::ffff:127.0.0.1]:80 (the host's own "
              "loopback, port 80), +93.184.216.34:443, +192.0.2.1 (a special-purpose address, "
              "every port)");
}

// A name proxy_resolve maps is shown with where it leads: a bare "+db.test" would hide that it
// is the host's own loopback.
TEST(NetworkEscalation, AMappedNameAskedForSaysWhereItLeads) {
    approval_service service;
    recorder person;
    service.add_responder(person.responder(approval_outcome::rejected));
    auto mapped = asking(net(network_policy::proxy, {"db.test:5432", "*.corp.test"}));
    mapped.proxy_resolve = {
        {"db.test", "127.0.0.1"}, {"a.corp.test", "10.1.2.3"}, {"cdn.test", "93.184.216.34"}};
    (void)approve_escalation(mapped, &service);
    ASSERT_EQ(person.asked.size(), 1U);
    EXPECT_EQ(person.asked[0].network,
              "deny \u2192 proxy: db.test:5432 (mapped to 127.0.0.1, the host's own loopback, "
              "port 5432), *.corp.test (a.corp.test mapped to 10.1.2.3, a private network "
              "address, every port)");
}

TEST(NetworkEscalation, TheJsonNamesTheDomains) {
    approval_service service;
    recorder person;
    service.add_responder(person.responder(approval_outcome::allowed_for_session));
    const nlohmann::json out = to_json(approve_escalation(
        under_proxy({"a.example"}, net(network_policy::proxy, {"b.example"})), &service));
    EXPECT_EQ(out["network"], "proxy");
    EXPECT_EQ(out["domains"], nlohmann::json({"a.example", "b.example"}));
    EXPECT_EQ(out["grant"]["network"], "proxy");
    EXPECT_EQ(out["grant"]["domains"], nlohmann::json({"a.example", "b.example"}));
    // Under deny and allow there is no domains field.
    const nlohmann::json plain =
        to_json(approve_escalation(asking(net(network_policy::allow)), &service));
    EXPECT_FALSE(plain.contains("domains"));
}

TEST(NetworkGrants, AProxyGrantCoversNoDomainItWasNotGiven) {
    temp_dir dir;
    auto opened = session_log::open_or_create(dir / "s.jsonl", dir.path());
    auto log = std::make_shared<const session_log>(std::get<session_log>(std::move(opened)));
    approval_service service({}, log);
    recorder person;
    service.add_responder(person.responder(approval_outcome::allowed_for_session));

    auto first = call("npm ci", net(network_policy::proxy, {"registry.npmjs.org"}));
    first.effective_network = net(network_policy::proxy, {"a.example"});
    const auto granted = service.request(first);
    ASSERT_TRUE(granted.grant);
    EXPECT_EQ(granted.grant->network, net(network_policy::proxy, {"registry.npmjs.org"}));
    EXPECT_EQ(service.request(call("npm ci", net(network_policy::deny))).source, decided_by::grant);
    EXPECT_EQ(
        service.request(call("npm ci", net(network_policy::proxy, {"registry.npmjs.org"}))).source,
        decided_by::grant);
    EXPECT_EQ(person.asked.size(), 1u);
    const auto wider = service.request(
        call("npm ci", net(network_policy::proxy, {"registry.npmjs.org", "b.example"})));
    EXPECT_EQ(wider.source, decided_by::responder);
    EXPECT_EQ(person.asked.size(), 2u);
    EXPECT_FALSE(covers(*granted.grant, "npm ci", sandbox_mode::workspace_write,
                        net(network_policy::allow)));

    // The log, read back: the question's network and domains on both sides, each grant's.
    const auto state = std::get<session_state>(log->state());
    ASSERT_EQ(state.grants.size(), 2u);
    EXPECT_EQ(state.grants[0].network, net(network_policy::proxy, {"registry.npmjs.org"}));
    EXPECT_EQ(state.grants[1].network,
              net(network_policy::proxy, {"registry.npmjs.org", "b.example"}));
    const auto asked = std::find_if(state.events.begin(), state.events.end(), [](const auto& e) {
        return e.type == event_type::approval_asked;
    });
    ASSERT_NE(asked, state.events.end());
    EXPECT_EQ(asked->body["network"], "proxy");
    EXPECT_EQ(asked->body["domains"], nlohmann::json({"registry.npmjs.org"}));
    EXPECT_EQ(asked->body["network_from"], "proxy");
    EXPECT_EQ(asked->body["domains_from"], nlohmann::json({"a.example"}));
}

TEST(NetworkGrants, AProxyGrantLoggedWithoutDomainsCoversNoDomain) {
    nlohmann::json decided{
        {"type", "approval/decided"},
        {"id", "ap-1"},
        {"outcome", "allowed-for-session"},
        {"by", "person"},
        {"grant", {{"prefix", {"npm", "ci"}}, {"mode", "read-only"}, {"network", "proxy"}}}};
    EXPECT_EQ(invalid_event(decided), std::nullopt);
    auto state = fold({{"approval/decided", decided, 1}});
    ASSERT_EQ(state.grants.size(), 1u);
    EXPECT_EQ(state.grants[0].network, net(network_policy::proxy));
    EXPECT_FALSE(covers(state.grants[0], "npm ci", sandbox_mode::read_only,
                        net(network_policy::proxy, {"a.example"})));
    EXPECT_TRUE(
        covers(state.grants[0], "npm ci", sandbox_mode::read_only, net(network_policy::deny)));

    // Domains in their canonical text only, as an array of strings.
    decided["grant"]["domains"] = {"a.example"};
    EXPECT_EQ(invalid_event(decided), std::nullopt);
    state = fold({{"approval/decided", decided, 1}});
    EXPECT_EQ(state.grants[0].network, net(network_policy::proxy, {"a.example"}));
    for (const nlohmann::json& bad :
         {nlohmann::json("a.example"), nlohmann::json({1}), nlohmann::json({"A.Example"}),
          nlohmann::json({"not a host"})}) {
        decided["grant"]["domains"] = bad;
        EXPECT_EQ(invalid_event(decided), "\"domains\" is not a list of domains") << bad;
    }
    nlohmann::json asked{{"type", "approval/asked"},
                         {"id", "ap-2"},
                         {"mode", "read-only"},
                         {"network", "proxy"},
                         {"domains_from", {1}}};
    EXPECT_EQ(invalid_event(asked), "\"domains_from\" is not a list of domains");
}

TEST(NetworkHints, TheDomainHintsNameTheBlockedDomain) {
    EXPECT_EQ(network_domain_escalation_hint("registry.npmjs.org"),
              "[sandbox: network access to registry.npmjs.org was blocked \u2014 retry this exact "
              "command once with sandbox_domains [\"registry.npmjs.org\"] + justification; the "
              "approval prompt asks the user]\n");
    EXPECT_EQ(network_domain_escalation_hint("a.example", "call"),
              "[sandbox: network access to a.example was blocked \u2014 retry this exact call "
              "once with sandbox_domains [\"a.example\"] + justification; the approval prompt "
              "asks the user]\n");
    EXPECT_EQ(cli_network_domain_escalation_hint("registry.npmjs.org"),
              "[sandbox: network access to registry.npmjs.org was blocked \u2014 retry this exact "
              "command once with --escalate-domain registry.npmjs.org --justification TEXT; "
              "cordon asks on this terminal]\n");
    // An IPv6 destination is quoted: unquoted, a shell would take it for a glob.
    EXPECT_EQ(cli_network_domain_escalation_hint("[2606:4700::1111]:443"),
              "[sandbox: network access to [2606:4700::1111]:443 was blocked \u2014 retry this "
              "exact command once with --escalate-domain '[2606:4700::1111]:443' --justification "
              "TEXT; cordon asks on this terminal]\n");
}

}  // namespace
}  // namespace cordon::policy
