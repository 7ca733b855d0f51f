// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon mcp` and bytes that are not UTF-8 (docs/contract.md, "Bytes that are not UTF-8"): a
// workspace and a session log under a directory named with \xff, a command's output and a
// command that carry such bytes, and lines from the client that are not JSON text. Every reply
// parses as strict JSON (mcp_peer parses each line with nlohmann), each string unescapes to its
// bytes, and the server goes on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/json_text.hpp"
#include "mcp/mcp_peer.hpp"
#include "support.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

std::string unescaped_text(const json& text) {
    return base::unescape_invalid_utf8(text.get<std::string>());
}

class McpBytes : public ::testing::Test {
protected:
    void SetUp() override { fs::create_directories(workspace_ / "sub\xfe"); }

    temp_dir scratch_{"/var/tmp", "cordon-mcp-bytes-"};
    fs::path odd_ = scratch_.path() / "dir\xff";  // the name nlohmann::json::dump() threw on
    fs::path workspace_ = odd_ / "ws";
};

TEST_F(McpBytes, AWorkspaceAndOutputThatAreNotUtf8AreReportedWithTheirBytes) {
    mcp_peer peer({"--mode", "workspace-write", "--workspace", workspace_.string(), "--session",
                   (odd_ / "session.jsonl").string()});
    peer.initialize();

    const json ran = peer.call(
        1, "bash", {{"command", "pwd; printf 'a\\377\\342\\202b\\n'"}, {"verbose", true}});
    ASSERT_TRUE(ran.contains("structuredContent")) << ran.dump();
    EXPECT_EQ(ran["isError"], false) << text_of(ran);
    const json& record = ran["structuredContent"];
    EXPECT_EQ(record["exitCode"], 0);
    EXPECT_EQ(unescaped_text(record["output"]), workspace_.string() +
                                                    "\na\xff\xe2\x82"
                                                    "b\n");
    EXPECT_EQ(base::unescape_invalid_utf8(text_of(ran)).rfind(workspace_.string() + "\n", 0), 0U);
    ASSERT_FALSE(record["sandbox"]["policy"]["writableRoots"].empty()) << record.dump();
    EXPECT_EQ(unescaped_text(record["sandbox"]["policy"]["writableRoots"][0]), workspace_.string());

    // A path as the server reported it names the same directory when sent back, and a command
    // that holds the escape of \xff runs with the byte.
    const std::string sub = base::escape_invalid_utf8((workspace_ / "sub\xfe").string());
    const json there =
        peer.call(2, "bash",
                  {{"command", "pwd; printf %s '" + base::escape_invalid_utf8("\xff") +
                                   "' | od -An -tx1 | tr -d ' '"},
                   {"workdir", sub}});
    EXPECT_EQ(unescaped_text(there["structuredContent"]["output"]),
              (workspace_ / "sub\xfe").string() + "\nff\n")
        << text_of(there);

    // A job's label (the command) is listed with its bytes.
    const json started =
        peer.call(3, "bash", {{"command", "echo '\xf4\x8f\xbb\xbf'"}, {"run_in_background", true}});
    const json listed = peer.call(4, "job_list", json::object());
    EXPECT_NE(base::unescape_invalid_utf8(listed.dump()).find("echo '\xff'"), std::string::npos)
        << listed.dump();
    (void)started;
}

TEST_F(McpBytes, NulInACommandOrWorkdirIsAToolErrorAndTheServerGoesOn) {
    mcp_peer peer({"--workspace", workspace_.string()});
    peer.initialize();
    for (const json& args : {json{{"command", std::string("echo a\0b", 8)}},
                             json{{"command", "pwd"}, {"workdir", std::string("sub\0x", 5)}},
                             json{{"command", "true"}, {"env", {{"A", std::string("a\0", 2)}}}}}) {
        const json refused = peer.call(1, "bash", args);
        EXPECT_EQ(refused["isError"], true) << refused.dump();
        EXPECT_NE(text_of(refused).find("invalid arguments for bash"), std::string::npos)
            << text_of(refused);
    }
    EXPECT_TRUE(peer.request(2, "ping").contains("result"));
}

// A line that is not JSON text (bytes that are not UTF-8, an escaped lone surrogate, an overlong
// form) is a parse error, answered with a null id, and the server reads on.
TEST_F(McpBytes, LinesThatAreNotJsonTextAreParseErrors) {
    mcp_peer peer({"--workspace", workspace_.string()});
    peer.initialize();
    const std::string call = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":)"
                             R"({"name":"bash","arguments":{"command":"echo )";
    for (const std::string& bad :
         {std::string("\xff"), std::string("\xe2\x82"), std::string("\xc0\xaf"),
          std::string("\xed\xa0\x80"), std::string("\\ud800"), std::string("\\udcff x")}) {
        peer.send_line(call + bad + "\"}}}");
        const json reply = peer.reply_to(nullptr);
        EXPECT_EQ(reply["error"]["code"], -32700) << reply.dump();
    }
    EXPECT_TRUE(peer.request(8, "ping").contains("result")) << "the server is still there";
}

// An escalation of a command that is not UTF-8, asked through the client: the question shows its
// bytes escaped and offers "once" only (a command shown with escapes never gets a standing grant:
// docs/approval.md), a session answer to it grants nothing, and the audit pair is logged with the
// command's very bytes (the session log reads back the bytes it wrote).
TEST_F(McpBytes, ACommandThatIsNotUtf8IsAllowedOnceOnlyAndLoggedWithItsBytes) {
    const fs::path log = odd_ / "session.jsonl";
    mcp_peer peer({"--workspace", workspace_.string(), "--session", log.string()});
    peer.initialize("2025-11-25", {{"elicitation", json::object()}});
    const std::string command = "touch " + base::escape_invalid_utf8("made\xff");
    const json escalate = {{"command", command},
                           {"sandbox_permissions", "workspace-write"},
                           {"justification", "why \xf4\x8f\xbb\xbf"}};
    peer.start_call(1, "bash", escalate);
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
    EXPECT_NE(asked["params"]["message"].get<std::string>().find("\n  command:  touch made\\xff"),
              std::string::npos)
        << asked.dump();
    const json& scope = asked["params"]["requestedSchema"]["properties"]["scope"];
    ASSERT_EQ(scope["oneOf"].size(), 1u) << scope.dump();
    EXPECT_EQ(scope["oneOf"][0]["const"], "once") << scope.dump();
    peer.answer(asked, {{"action", "accept"}, {"content", {{"scope", "once"}}}});
    const json allowed = peer.reply_to(1)["result"];
    EXPECT_EQ(allowed["structuredContent"]["exitCode"], 0) << allowed.dump();
    EXPECT_EQ(allowed["structuredContent"]["approval"]["outcome"], "allowed-once");
    EXPECT_TRUE(fs::exists(workspace_ / "made\xff"));
    fs::remove(workspace_ / "made\xff");

    // Asked again (no grant was made), and a session answer that the client was not offered
    // allows nothing.
    peer.start_call(2, "bash", escalate);
    const json again = peer.server_request();
    ASSERT_EQ(again["method"], "elicitation/create") << again.dump();
    peer.answer(again, {{"action", "accept"}, {"content", {{"scope", "session"}}}});
    const json refused = peer.reply_to(2)["result"];
    EXPECT_EQ(refused["structuredContent"]["approval"]["outcome"], "unavailable") << refused.dump();
    EXPECT_FALSE(fs::exists(workspace_ / "made\xff"));

    // The log on disk is strict JSON, and its command is the command's bytes, escaped.
    std::ifstream in(log);
    int asked_events = 0;
    for (std::string line; std::getline(in, line);) {
        const json event = json::parse(line);
        if (event["type"] == "approval/asked") {
            EXPECT_EQ(unescaped_text(event["command"]), "touch made\xff");
            EXPECT_EQ(unescaped_text(event["justification"]), "why \xff");
            ++asked_events;
        }
    }
    EXPECT_EQ(asked_events, 2);
}

}  // namespace
}  // namespace cordon::test
