// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network in `cordon mcp` (docs/network.md): the server's --network applies to every bash
// call, the tool's schema names it, and a call asks for the network through the escalation path
// (sandbox_network + justification), with a question that says what changes and a session log
// that records it. The kernel's refusal under deny is the backends' to test, not this.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "mcp/mcp_peer.hpp"
#include "support.hpp"
#include "support/http_test_server.hpp"

namespace cordon::test {
namespace {

const json network_client_asks_by_form = {{"elicitation", json::object()}};

json asking_network(std::string command) {
    return json{{"command", std::move(command)},
                {"sandbox_network", "allow"},
                {"justification", "fetch the dependencies"}};
}

class McpNetwork : public ::testing::Test {
protected:
    std::vector<std::string> server_args(std::vector<std::string> more = {}) const {
        std::vector<std::string> args{"--workspace", workspace_.path().string(), "--session",
                                      (state_ / "session.jsonl").string()};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    }
    temp_dir workspace_;
    temp_dir state_;
};

TEST_F(McpNetwork, TheServersPolicyAppliesToEveryCallAndTheSchemaNamesIt) {
    mcp_peer peer(server_args({"--network", "allow"}));
    peer.initialize("2025-11-25", network_client_asks_by_form);
    const json tools = peer.request(1, "tools/list")["result"]["tools"];
    json bash;
    for (const json& tool : tools) {
        if (tool["name"] == "bash") bash = tool;
    }
    const json& property = bash["inputSchema"]["properties"]["sandbox_network"];
    EXPECT_EQ(property["enum"], json::array({"use_default", "proxy", "allow"})) << bash.dump();
    const json& domains = bash["inputSchema"]["properties"]["sandbox_domains"];
    EXPECT_EQ(domains["type"], "array") << bash.dump();
    EXPECT_EQ(domains["items"], json({{"type", "string"}}));
    EXPECT_NE(property["description"].get<std::string>().find("the server's network: allow"),
              std::string::npos)
        << property.dump();
    // The call stands under the server's allow: asking for it is not wider, and nobody is asked.
    const json result = peer.call(2, "bash", asking_network("true"));
    EXPECT_EQ(result["isError"], true);
    EXPECT_EQ(text_of(result),
              "sandbox escalation to network \"allow\" is not wider than this call's current "
              "network \"allow\"");
    const json missing = peer.call(3, "bash", {{"command", "true"}, {"sandbox_network", "allow"}});
    EXPECT_EQ(text_of(missing), "invalid escalation: sandbox_network requires a justification");
}

TEST_F(McpNetwork, ACallAsksForTheNetworkAndTheQuestionSaysWhatChanges) {
    mcp_peer peer(server_args());
    peer.initialize("2025-11-25", network_client_asks_by_form);
    peer.start_call(1, "bash", asking_network("npm ci"));
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
    const std::string message = asked["params"]["message"];
    EXPECT_NE(message.find("a wider network\n"), std::string::npos) << message;
    EXPECT_NE(message.find("\n  mode:     read-only\n  network:  deny \u2192 allow (every "
                           "destination, the host's own loopback, its private network and cloud "
                           "metadata included)\n"),
              std::string::npos)
        << message;
    peer.answer(asked, {{"action", "decline"}});
    const json result = peer.reply_to(1)["result"];
    EXPECT_EQ(result["isError"], true);
    EXPECT_EQ(result["structuredContent"]["message"],
              "the user rejected escalating this command to network \"allow\"");
    EXPECT_EQ(result["structuredContent"]["approval"]["network"], "allow");

    std::ifstream in(state_ / "session.jsonl");
    bool recorded = false;
    for (std::string line; std::getline(in, line);) {
        const json event = json::parse(line);
        if (event["type"] != "approval/asked") continue;
        EXPECT_EQ(event["network"], "allow");
        EXPECT_EQ(event["network_from"], "deny");
        EXPECT_EQ(event["reason"], "escalate sandbox network to allow: fetch the dependencies");
        recorded = true;
    }
    EXPECT_TRUE(recorded);
}

// sandbox_domains: an array of domain patterns; each wrong shape is the tool's usual argument
// error, before anyone is asked or anything runs.
TEST_F(McpNetwork, SandboxDomainsIsCheckedLikeEveryArgument) {
    mcp_peer peer(server_args());
    peer.initialize("2025-11-25", network_client_asks_by_form);
    const auto calling = [](json domains, std::string network = "") {
        json args{{"command", "true"},
                  {"sandbox_domains", std::move(domains)},
                  {"justification", "fetch the dependencies"}};
        if (!network.empty()) args["sandbox_network"] = network;
        return args;
    };
    const std::vector<std::pair<json, std::string>> cases{
        {calling("a.example"),
         "invalid arguments for bash: sandbox_domains must be an array of strings, not a string"},
        {calling({"a.example", 1}),
         "invalid arguments for bash: sandbox_domains must be an array of strings, not one "
         "holding an integer"},
        {calling({"a b"}),
         "invalid arguments for bash: sandbox_domains: invalid domain \"a b\": is not a host name"},
        {calling({"*"}),
         "invalid arguments for bash: sandbox_domains: invalid domain \"*\": matches every name "
         "(use network allow)"},
        {calling(json::array()), "invalid arguments for bash: sandbox_domains is empty"},
        {calling({"a.example"}, "allow"),
         "invalid arguments for bash: sandbox_domains needs sandbox_network \"proxy\", not "
         "\"allow\""},
        {json{{"command", "true"},
              {"sandbox_network", "proxy"},
              {"justification", "fetch the dependencies"}},
         "invalid arguments for bash: sandbox_network \"proxy\" needs sandbox_domains"},
        {json{{"command", "true"}, {"sandbox_domains", {"a.example"}}},
         "invalid escalation: sandbox_domains requires a justification"},
    };
    int id = 1;
    for (const auto& [args, message] : cases) {
        const json result = peer.call(id++, "bash", args);
        EXPECT_EQ(result["isError"], true) << args.dump();
        EXPECT_EQ(text_of(result), message) << args.dump();
    }
}

// A call asks for a domain: the question names exactly the domains added, the refusal and the
// approval name them, and the session log records them beside the standing ones.
TEST_F(McpNetwork, ACallAsksForADomainAndTheQuestionNamesIt) {
    mcp_peer peer(server_args({"--allow-domain", "a.example"}));
    peer.initialize("2025-11-25", network_client_asks_by_form);
    const json tools = peer.request(1, "tools/list")["result"]["tools"];
    for (const json& tool : tools) {
        if (tool["name"] != "bash") continue;
        const std::string described =
            tool["inputSchema"]["properties"]["sandbox_network"]["description"];
        EXPECT_NE(described.find("(the server's network: proxy to a.example)"), std::string::npos)
            << described;
    }
    peer.start_call(2, "bash",
                    {{"command", "npm ci"},
                     {"sandbox_domains", {"Registry.NPMJS.org", "a.example"}},
                     {"justification", "fetch the dependencies"}});
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
    const std::string message = asked["params"]["message"];
    EXPECT_NE(message.find("\n  mode:     read-only\n  network:  proxy \u2192 proxy: "
                           "+registry.npmjs.org\n"),
              std::string::npos)
        << message;
    peer.answer(asked, {{"action", "decline"}});
    const json result = peer.reply_to(2)["result"];
    EXPECT_EQ(result["structuredContent"]["message"],
              "the user rejected escalating this command to network \"proxy: a.example, "
              "registry.npmjs.org\"");
    EXPECT_EQ(result["structuredContent"]["approval"]["network"], "proxy");
    EXPECT_EQ(result["structuredContent"]["approval"]["domains"],
              json({"a.example", "registry.npmjs.org"}));

    std::ifstream in(state_ / "session.jsonl");
    bool recorded = false;
    for (std::string line; std::getline(in, line);) {
        const json event = json::parse(line);
        if (event["type"] != "approval/asked") continue;
        EXPECT_EQ(event["network"], "proxy");
        EXPECT_EQ(event["domains"], json({"a.example", "registry.npmjs.org"}));
        EXPECT_EQ(event["network_from"], "proxy");
        EXPECT_EQ(event["domains_from"], json({"a.example"}));
        recorded = true;
    }
    EXPECT_TRUE(recorded);
}

// Under the server's proxy, a call reaches an allowed name; a refused one is a network denial
// whose structured record and text name the destination, with a hint that asks for the domain;
// and a call that asks for that domain, once granted, reaches it. The names are mapped to a
// server on loopback (--proxy-resolve): never an outside address.
TEST_F(McpNetwork, AProxyRefusalNamesTheDomainAndAGrantedDomainIsReached) {
    http_test_server server;
    const std::string port = std::to_string(server.port());
    mcp_peer peer(
        server_args({"--network", "proxy", "--allow-domain", "localtest.example", "--proxy-resolve",
                     "localtest.example=127.0.0.1", "--proxy-resolve", "other.example=127.0.0.1"}));
    peer.initialize("2025-11-25", network_client_asks_by_form);

    const json reached = peer.call(
        1, "bash",
        {{"command", "curl -sS http://localtest.example:" + port + "/"}, {"verbose", true}});
    EXPECT_EQ(reached["isError"], false) << text_of(reached);
    EXPECT_NE(text_of(reached).find("hello from the test server"), std::string::npos);
    EXPECT_EQ(reached["structuredContent"]["sandbox"]["network"]["policy"], "proxy");

    const json refused =
        peer.call(2, "bash", {{"command", "curl -sSf http://other.example:" + port + "/"}});
    const json& sandbox = refused["structuredContent"]["sandbox"];
    EXPECT_EQ(sandbox["denied"], true) << refused.dump();
    EXPECT_EQ(sandbox["denial"], "network");
    EXPECT_EQ(sandbox["network"]["blocked"][0]["destination"], "other.example:" + port);
    EXPECT_EQ(sandbox["network"]["blocked"][0]["reason"], "not in allowed_domains");
    const std::string text = text_of(refused);
    EXPECT_NE(text.find("[sandbox: network access to other.example:" + port +
                        " (not in allowed_domains) blocked under read-only mode, network proxy]"),
              std::string::npos)
        << text;
    // The hint names exactly the host and port refused.
    EXPECT_NE(text.find("sandbox_domains [\"other.example:" + port + "\"]"), std::string::npos)
        << text;
    EXPECT_EQ(server.requests(), 1);

    peer.start_call(3, "bash",
                    {{"command", "curl -sSf http://other.example:" + port + "/"},
                     {"sandbox_domains", {"other.example"}},
                     {"justification", "the test server"},
                     {"verbose", true}});
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
    peer.answer(asked, {{"action", "accept"}});
    const json granted = peer.reply_to(3)["result"];
    EXPECT_EQ(granted["isError"], false) << text_of(granted);
    EXPECT_NE(text_of(granted).find("hello from the test server"), std::string::npos);
    EXPECT_EQ(granted["structuredContent"]["sandbox"]["network"]["allowedDomains"],
              json({"localtest.example", "other.example"}));
    EXPECT_EQ(server.requests(), 2);
}

// A refusal that asking cannot lift offers nothing to ask for: not the denied name, not a name
// that is none (one junk SOCKS5 request), not the host's loopback; and never the whole network
// in its place. The operator's denied list is never widened: asking for the host's network is
// refused unasked. An address asked for is named for what it is.
TEST_F(McpNetwork, ARefusalAskingCannotLiftOffersNothingToAskFor) {
    http_test_server server;
    const std::string port = std::to_string(server.port());
    mcp_peer peer(
        server_args({"--network", "proxy", "--allow-domain", "localtest.example", "--deny-domain",
                     "denied.example", "--proxy-resolve", "localtest.example=127.0.0.1"}));
    peer.initialize("2025-11-25", network_client_asks_by_form);

    const std::vector<std::pair<std::string, std::string>> refusals = {
        {"curl -sSf http://denied.example:" + port + "/", "denied.example:" + port},
        // SOCKS5: greeting, then CONNECT to the "name" "a b]c" on port 80.
        {"exec 3<>/dev/tcp/127.0.0.1/3128; printf '\\x05\\x01\\x00\\x05\\x01\\x00\\x03\\x05a "
         "b]c\\x00\\x50' >&3; head -c 12 <&3 >/dev/null; exit 1",
         "a\\x20b\\x5dc:80"},
        {"curl -sSf --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:" + port + "/",
         "127.0.0.1:" + port},
    };
    int id = 1;
    for (const auto& [command, destination] : refusals) {
        const json refused = peer.call(id++, "bash", {{"command", command}});
        const json& sandbox = refused["structuredContent"]["sandbox"];
        EXPECT_EQ(sandbox["denial"], "network") << command << "\n" << refused.dump();
        ASSERT_EQ(sandbox["network"]["blocked"].size(), 1U) << refused.dump();
        EXPECT_EQ(sandbox["network"]["blocked"][0]["destination"], destination);
        EXPECT_EQ(sandbox["network"]["blocked"][0]["askable"], false);
        const std::string text = text_of(refused);
        EXPECT_NE(text.find("[sandbox: network access to " + destination), std::string::npos)
            << text;
        EXPECT_EQ(text.find("escalation available"), std::string::npos) << text;
        EXPECT_EQ(text.find("retry"), std::string::npos) << text;
    }
    EXPECT_EQ(server.requests(), 0);

    const json everything = peer.call(
        id++, "bash",
        {{"command", "true"}, {"sandbox_network", "allow"}, {"justification", "fetch it"}});
    EXPECT_EQ(everything["isError"], true);
    EXPECT_EQ(text_of(everything),
              "sandbox escalation to network \"allow\" would open what denied_domains refuses "
              "(\"denied.example\"); ask for the domains the command needs instead");

    peer.start_call(id, "bash",
                    {{"command",
                      "curl -sSf --noproxy '' -x http://127.0.0.1:3128 "
                      "http://127.0.0.1:" +
                          port + "/"},
                     {"sandbox_domains", {"127.0.0.1:" + port}},
                     {"justification", "the test server"}});
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
    const std::string message = asked["params"]["message"];
    EXPECT_NE(message.find("network:  proxy \u2192 proxy: +127.0.0.1:" + port +
                           " (the host's own loopback, port " + port + ")"),
              std::string::npos)
        << message;
    peer.answer(asked, {{"action", "decline"}});
    EXPECT_EQ(peer.reply_to(id)["result"]["isError"], true);
    EXPECT_EQ(server.requests(), 0);
}

}  // namespace
}  // namespace cordon::test
