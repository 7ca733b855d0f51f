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
    EXPECT_EQ(property["enum"], json::array({"use_default", "allow"})) << bash.dump();
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
    EXPECT_NE(message.find("with the network (deny \u2192 allow) under read-only?"),
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

}  // namespace
}  // namespace cordon::test
