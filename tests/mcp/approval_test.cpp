// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Approval and escalation in `cordon mcp`, as scripted conversations with the real server: the
// client declares elicitation and answers each way (or not at all), the server's policy says
// `never`, the client cannot be asked, the call is cancelled while the question is out; each
// escalated call runs under the wider mode exactly once, and the session log holds the audit
// pair of every question.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "mcp/mcp_peer.hpp"
#include "support.hpp"

namespace cordon::test {
namespace {

using namespace std::chrono_literals;

const json asks_by_form = {{"elicitation", json::object()}};

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

std::vector<json> log_events(const std::filesystem::path& log) {
    std::vector<json> events;
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);)
        events.push_back(json::parse(line));
    return events;
}

json escalated(std::string command, std::string mode, std::string why = "the test needs it") {
    return json{{"command", std::move(command)},
                {"sandbox_permissions", std::move(mode)},
                {"justification", std::move(why)}};
}

class McpApproval : public ::testing::Test {
protected:
    // The session log lies outside both the workspace and /tmp (temp_dir is under /var/tmp), where
    // no workspace-write run can write it.
    std::filesystem::path log() const { return state_ / "session.jsonl"; }

    std::vector<std::string> server_args(std::vector<std::string> more = {}) const {
        std::vector<std::string> args{"--workspace", workspace_.path().string(), "--session",
                                      log().string()};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    }

    temp_dir workspace_;
    temp_dir state_;
};

// A read-only server: the write is denied (with the hint, since escalation is possible), allowed
// once when asked for and accepted, and denied again on the next plain call.
TEST_F(McpApproval, AnAcceptedEscalationRunsThatOneCallUnderTheWiderMode) {
    mcp_peer peer(server_args());
    peer.initialize("2025-11-25", asks_by_form);

    const json denied = peer.call(1, "bash", {{"command", "touch first"}});
    EXPECT_EQ(denied["structuredContent"]["sandbox"]["denied"], true) << text_of(denied);
    const std::string denial = "[sandbox: file access denied under read-only mode]\n";
    const std::string hint =
        "[sandbox: escalation available \u2014 retry this exact command once with "
        "sandbox_permissions (the narrowest wider mode that suffices) + justification; the "
        "approval prompt asks the user]\n";
    EXPECT_TRUE(contains(text_of(denied), denial + hint)) << text_of(denied);
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "first"));

    peer.start_call(2, "bash", escalated("touch first", "workspace-write", "create the marker"));
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
    EXPECT_TRUE(asked["id"].is_string());
    const json& params = asked["params"];
    EXPECT_EQ(params["mode"], "form");
    const std::string message = params["message"];
    EXPECT_TRUE(contains(message, "\n  command:  touch first")) << message;
    EXPECT_TRUE(contains(message, workspace_.path().string())) << message;
    EXPECT_TRUE(contains(message, "read-only \u2192 workspace-write")) << message;
    EXPECT_TRUE(contains(message, "\n  reason:   (the agent's words) create the marker\n"))
        << message;
    const json& schema = params["requestedSchema"];
    EXPECT_EQ(schema["type"], "object");
    EXPECT_FALSE(schema.contains("required")) << "no field may be required";
    ASSERT_EQ(schema["properties"]["scope"]["oneOf"].size(), 2U) << schema.dump();
    peer.answer(asked, {{"action", "accept"}});

    const json allowed = peer.reply_to(2)["result"];
    EXPECT_EQ(allowed["isError"], false) << text_of(allowed);
    const json& record = allowed["structuredContent"];
    EXPECT_EQ(record["sandbox"]["mode"], "workspace-write");
    EXPECT_EQ(record["exitCode"], 0);
    EXPECT_EQ(record["approval"]["asked"], true);
    EXPECT_EQ(record["approval"]["action"], "accept");
    EXPECT_EQ(record["approval"]["outcome"], "allowed-once");
    EXPECT_TRUE(std::filesystem::exists(workspace_ / "first"));

    const json again = peer.call(3, "bash", {{"command", "touch second"}});
    EXPECT_EQ(again["structuredContent"]["sandbox"]["mode"], "read-only");
    EXPECT_EQ(again["structuredContent"]["sandbox"]["denied"], true) << text_of(again);
    EXPECT_FALSE(again["structuredContent"].contains("approval"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "second"));

    // The audit pair, under one id.
    const std::string id = record["approval"]["id"];
    ASSERT_FALSE(id.empty());
    int asked_events = 0;
    int decided_events = 0;
    for (const json& event : log_events(log())) {
        if (event.value("id", "") != id) continue;
        if (event["type"] == "approval/asked") {
            ++asked_events;
            EXPECT_EQ(event["tool"], "bash");
            EXPECT_EQ(event["command"], "touch first");
            EXPECT_EQ(event["mode"], "workspace-write");
        } else if (event["type"] == "approval/decided") {
            ++decided_events;
            EXPECT_EQ(event["outcome"], "allowed-once");
            EXPECT_EQ(event["by"], "mcp-elicitation");
        }
    }
    EXPECT_EQ(asked_events, 1);
    EXPECT_EQ(decided_events, 1);
}

// require_escalated is danger-full-access; a 2025-06-18 client gets no mode and a plain enum.
TEST_F(McpApproval, RequireEscalatedAsksForFullAccessInTheClientsProtocol) {
    mcp_peer peer(server_args());
    peer.initialize("2025-06-18", asks_by_form);
    // The command carries a sequence that would erase the line it is shown on: it is shown
    // escaped, as it would run.
    peer.start_call(1, "bash", escalated("echo outside #\r\x1b[2K", "require_escalated"));
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
    EXPECT_FALSE(asked["params"].contains("mode"));
    EXPECT_TRUE(contains(asked["params"]["message"], "\n  command:  echo outside #\\r\\x1b[2K\n"))
        << asked["params"]["message"];
    EXPECT_FALSE(contains(asked["params"]["message"], "\x1b"));
    const json& scope = asked["params"]["requestedSchema"]["properties"]["scope"];
    // A command shown with escapes is never offered the session scope.
    EXPECT_EQ(scope["enum"], json::array({"once"})) << scope.dump();
    EXPECT_EQ(scope["enumNames"], json::array({"Allow once"})) << scope.dump();
    EXPECT_FALSE(scope.contains("oneOf"));
    EXPECT_TRUE(contains(asked["params"]["message"], "read-only \u2192 danger-full-access"));
    peer.answer(asked, {{"action", "accept"}, {"content", {{"scope", "once"}}}});
    const json result = peer.reply_to(1)["result"];
    EXPECT_EQ(result["structuredContent"]["sandbox"]["mode"], "danger-full-access")
        << result.dump();
    EXPECT_EQ(result["structuredContent"]["output"], "outside\n");
}

// Anything but a clear accept runs nothing, and the result says which answer it was.
TEST_F(McpApproval, DeclineCancelAndAnErrorReplyRunNothing) {
    struct answer {
        json reply;  // a result, or {"error": ...}
        std::string action;
        std::string outcome;
        std::string text;
    };
    const std::vector<answer> answers{
        {{{"action", "decline"}},
         "decline",
         "rejected",
         "the user rejected escalating this command to \"workspace-write\""},
        {{{"action", "cancel"}},
         "cancel",
         "cancelled",
         "approval for escalating to \"workspace-write\" was cancelled"},
        {{{"error", {{"code", -32601}, {"message", "Method not found"}}}},
         "error",
         "unavailable",
         "sandbox escalation to \"workspace-write\" requires approval, but no approval channel "
         "is available"},
        {{{"action", "accept"}, {"content", {{"scope", "forever"}}}},
         "error",
         "unavailable",
         "sandbox escalation to \"workspace-write\" requires approval, but no approval channel "
         "is available"},
    };
    mcp_peer peer(server_args());
    peer.initialize("2025-11-25", asks_by_form);
    int id = 1;
    for (const auto& each : answers) {
        peer.start_call(id, "bash", escalated("touch never", "workspace-write"));
        const json asked = peer.server_request();
        ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
        if (each.reply.contains("error")) {
            peer.send({{"jsonrpc", "2.0"}, {"id", asked["id"]}, {"error", each.reply["error"]}});
        } else {
            peer.answer(asked, each.reply);
        }
        const json result = peer.reply_to(id++)["result"];
        EXPECT_EQ(result["isError"], true) << result.dump();
        EXPECT_EQ(text_of(result), each.text);
        EXPECT_EQ(result["structuredContent"]["approval"]["asked"], true);
        EXPECT_EQ(result["structuredContent"]["approval"]["action"], each.action);
        EXPECT_EQ(result["structuredContent"]["approval"]["outcome"], each.outcome);
        EXPECT_FALSE(std::filesystem::exists(workspace_ / "never")) << each.reply.dump();
    }
}

// Blanks other than the ASCII space are counted in the question too, and a command that cannot be
// shown whole is offered no session scope: a client that answers with one anyway runs nothing.
TEST_F(McpApproval, BlankPaddingIsCountedAndSuchACommandIsNeverGrantedForTheSession) {
    std::string padding;
    for (int i = 0; i < 600; ++i)
        padding += "\u3000";
    const std::string padded = "echo ok" + padding + "; touch pwned" + padding + "echo done";
    mcp_peer peer(server_args());
    peer.initialize("2025-11-25", asks_by_form);
    peer.start_call(1, "bash", escalated(padded, "workspace-write"));
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create") << asked.dump();
    const std::string message = asked["params"]["message"];
    EXPECT_TRUE(contains(
        message, "\n  command:  echo ok\\u{3000}{600}; touch pwned\\u{3000}{600}echo done\n"))
        << message;
    EXPECT_FALSE(contains(message, "\u3000")) << message;
    EXPECT_TRUE(contains(message, "Not offered for the session")) << message;
    const json& scope = asked["params"]["requestedSchema"]["properties"]["scope"];
    ASSERT_EQ(scope["oneOf"].size(), 1U) << scope.dump();
    EXPECT_EQ(scope["oneOf"][0]["const"], "once");
    peer.answer(asked, {{"action", "accept"}, {"content", {{"scope", "session"}}}});
    const json result = peer.reply_to(1)["result"];
    EXPECT_EQ(result["isError"], true) << result.dump();
    EXPECT_EQ(result["structuredContent"]["approval"]["outcome"], "unavailable");
    EXPECT_FALSE(result["structuredContent"]["approval"].contains("grant"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "pwned"));
    for (const json& event : log_events(log()))
        EXPECT_FALSE(event.contains("grant")) << event.dump();
}

TEST_F(McpApproval, AnUnansweredQuestionIsWithdrawnAtTheTimeout) {
    mcp_peer peer(server_args({"--approval-timeout", "1s"}));
    peer.initialize("2025-11-25", asks_by_form);
    peer.start_call(1, "bash", escalated("touch late", "workspace-write"));
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create");
    const json result = peer.reply_to(1)["result"];
    EXPECT_EQ(result["isError"], true);
    EXPECT_EQ(result["structuredContent"]["approval"]["action"], "timeout") << result.dump();
    EXPECT_EQ(result["structuredContent"]["approval"]["outcome"], "cancelled");
    // The server takes its question back.
    (void)peer.replies_until(std::chrono::steady_clock::now() + 1s);
    bool withdrawn = false;
    for (const auto& note : peer.notifications()) {
        withdrawn |= note["method"] == "notifications/cancelled" &&
                     note["params"]["requestId"] == asked["id"];
    }
    EXPECT_TRUE(withdrawn);
    // A late answer changes nothing.
    peer.answer(asked, {{"action", "accept"}});
    EXPECT_TRUE(peer.request(2, "ping").contains("result"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "late"));
}

TEST_F(McpApproval, AClientThatCannotBeAskedIsNotAskedAndNothingRuns) {
    mcp_peer peer(server_args());
    peer.initialize();  // no elicitation capability
    const json denied = peer.call(1, "bash", {{"command", "touch nope"}});
    EXPECT_FALSE(contains(text_of(denied), "escalation available")) << text_of(denied);
    const json result = peer.call(2, "bash", escalated("touch nope", "workspace-write"));
    EXPECT_EQ(result["isError"], true);
    EXPECT_EQ(text_of(result),
              "sandbox escalation to \"workspace-write\" requires approval, but no approval "
              "channel is available");
    EXPECT_EQ(result["structuredContent"]["approval"]["asked"], false);
    EXPECT_EQ(result["structuredContent"]["approval"]["action"], "unavailable");
    for (const auto& reply : peer.replies_until(std::chrono::steady_clock::now() + 300ms))
        EXPECT_FALSE(reply.contains("method")) << "the server asked: " << reply.dump();
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "nope"));
}

TEST_F(McpApproval, ApprovalNeverRejectsWithoutAsking) {
    mcp_peer peer(server_args({"--approval", "never"}));
    peer.initialize("2025-11-25", asks_by_form);
    const json denied = peer.call(1, "bash", {{"command", "touch nope"}});
    EXPECT_FALSE(contains(text_of(denied), "escalation available")) << text_of(denied);
    const json result = peer.call(2, "bash", escalated("touch nope", "workspace-write"));
    EXPECT_EQ(result["isError"], true);
    EXPECT_EQ(text_of(result),
              "the user rejected escalating this command to \"workspace-write\" (the approval "
              "policy is \"never\": nobody was asked)");
    EXPECT_EQ(result["structuredContent"]["approval"]["action"], "rejected-by-policy");
    EXPECT_EQ(result["structuredContent"]["approval"]["asked"], false);
    for (const auto& reply : peer.replies_until(std::chrono::steady_clock::now() + 300ms))
        EXPECT_FALSE(reply.contains("method")) << "the server asked: " << reply.dump();
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "nope"));
}

// "session" covers exactly the same command (its words, however quoted) under the same mode, and
// nothing else.
TEST_F(McpApproval, ASessionGrantCoversExactlyTheCommandUnderThatModeOnly) {
    mcp_peer peer(server_args());
    peer.initialize("2025-11-25", asks_by_form);
    peer.start_call(1, "bash", escalated("touch made one", "workspace-write"));
    json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create");
    peer.answer(asked, {{"action", "accept"}, {"content", {{"scope", "session"}}}});
    const json first = peer.reply_to(1)["result"];
    EXPECT_EQ(first["structuredContent"]["approval"]["outcome"], "allowed-for-session")
        << first.dump();
    EXPECT_TRUE(std::filesystem::exists(workspace_ / "one"));

    // The same words and mode: allowed without a question.
    std::filesystem::remove(workspace_ / "one");
    const json covered = peer.call(2, "bash", escalated("touch 'made' one", "workspace-write"));
    EXPECT_EQ(covered["isError"], false) << covered.dump();
    EXPECT_EQ(covered["structuredContent"]["approval"]["asked"], false);
    EXPECT_EQ(covered["structuredContent"]["approval"]["action"], "session-grant");
    EXPECT_EQ(covered["structuredContent"]["approval"]["outcome"], "allowed-for-session");
    EXPECT_TRUE(std::filesystem::exists(workspace_ / "one"));

    // Another operand, another mode, or the same command with the environment changed
    // (BASH_ENV runs a file first) or fed on stdin (which a `python3 -` would run) is asked again,
    // and declined here; the question shows the environment and the input.
    json bent = escalated("touch made six", "workspace-write");
    bent["env"] = {{"BASH_ENV", (workspace_ / "evil.sh").string()}};
    json fed = escalated("touch made seven", "workspace-write");
    fed["stdin"] = "touch eight\n";
    // Nor an option added to the command the grant was given for.
    for (const json& args : {escalated("touch made two", "workspace-write"),
                             escalated("touch other three", "workspace-write"),
                             escalated("touch made four", "danger-full-access"), bent, fed,
                             escalated("touch made --reference=one nine", "workspace-write")}) {
        peer.start_call(3, "bash", args);
        asked = peer.server_request();
        ASSERT_EQ(asked["method"], "elicitation/create") << args.dump();
        if (args.contains("env")) {
            EXPECT_TRUE(
                contains(asked["params"]["message"].get<std::string>(),
                         "\n  env:      BASH_ENV=" + (workspace_ / "evil.sh").string() + "\n"))
                << asked.dump();
        }
        if (args.contains("stdin")) {
            EXPECT_TRUE(contains(asked["params"]["message"].get<std::string>(),
                                 "\n  stdin: 12 bytes: touch eight\\n\n"))
                << asked.dump();
        }
        peer.answer(asked, {{"action", "decline"}});
        EXPECT_EQ(peer.reply_to(3)["result"]["isError"], true);
    }
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "two"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "three"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "four"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "six"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "seven"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "nine"));
    // And the grant does not widen a call that did not ask for it.
    const json plain = peer.call(4, "bash", {{"command", "touch made five"}});
    EXPECT_EQ(plain["structuredContent"]["sandbox"]["denied"], true);
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "five"));
    // The grant is on record.
    bool recorded = false;
    for (const json& event : log_events(log())) {
        recorded |= event["type"] == "approval/decided" && event.contains("grant") &&
                    event["grant"]["prefix"] == json::array({"touch", "made", "one"}) &&
                    event["grant"]["workdir"] == workspace_.path().string();
    }
    EXPECT_TRUE(recorded);
}

// A cancelled bash call takes its question back, runs nothing and is not answered. Meanwhile a
// call with a progress token hears that it waits for the user.
TEST_F(McpApproval, CancellingTheCallWithdrawsItsQuestion) {
    mcp_peer peer(server_args({"--progress-interval", "50ms"}));
    peer.initialize("2025-11-25", asks_by_form);
    peer.start_call(1, "bash", escalated("touch cancelled", "workspace-write"),
                    {{"progressToken", "wait-1"}});
    const json asked = peer.server_request();
    ASSERT_EQ(asked["method"], "elicitation/create");
    bool waiting = false;
    for (std::size_t heard = 1; !waiting && peer.wait_for_notifications(heard); ++heard) {
        const json& note = peer.notifications()[heard - 1];
        waiting = note["method"] == "notifications/progress" &&
                  note["params"]["progressToken"] == "wait-1" &&
                  contains(note["params"]["message"], "waiting for user approval");
    }
    EXPECT_TRUE(waiting) << "no progress while the question was out";
    peer.send({{"jsonrpc", "2.0"},
               {"method", "notifications/cancelled"},
               {"params", {{"requestId", 1}, {"reason", "changed my mind"}}}});
    EXPECT_TRUE(peer.request(2, "ping").contains("result"));
    for (const auto& reply : peer.replies_until(std::chrono::steady_clock::now() + 1s))
        EXPECT_NE(reply["id"], 1) << "a cancelled call got a reply";
    bool withdrawn = false;
    for (const auto& note : peer.notifications()) {
        withdrawn |= note["method"] == "notifications/cancelled" &&
                     note["params"]["requestId"] == asked["id"];
    }
    EXPECT_TRUE(withdrawn) << "the question was not withdrawn";
    peer.answer(asked, {{"action", "accept"}});  // too late
    EXPECT_TRUE(peer.request(3, "ping").contains("result"));
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "cancelled"));
}

// The server ends while a question is out: it neither hangs nor runs the command.
TEST_F(McpApproval, TheServerEndsWhileAQuestionIsOut) {
    mcp_peer peer(server_args());
    peer.initialize("2025-11-25", asks_by_form);
    peer.start_call(1, "bash", escalated("touch orphan", "workspace-write"));
    ASSERT_EQ(peer.server_request()["method"], "elicitation/create");
    peer.close_input();
    const auto status = peer.wait_exit(20s);
    ASSERT_TRUE(status) << "the server hung on its question";
    EXPECT_EQ(WEXITSTATUS(*status), 0);
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "orphan"));
}

TEST_F(McpApproval, EveryMisuseOfTheEscalationFieldsIsRefusedWithItsText) {
    mcp_peer peer(server_args({"--mode", "workspace-write"}));
    peer.initialize("2025-11-25", asks_by_form);
    const std::vector<std::pair<json, std::string>> cases{
        {{{"command", "true"}, {"sandbox_permissions", "danger-full-access"}},
         "invalid escalation: sandbox_permissions requires a justification"},
        {{{"command", "true"}, {"justification", "because"}},
         "invalid escalation: justification is only valid together with sandbox_permissions"},
        {{{"command", "true"}, {"sandbox_permissions", "use_default"}, {"justification", "x"}},
         "invalid escalation: justification is only valid together with sandbox_permissions"},
        {{{"command", "true"},
          {"sandbox_permissions", "danger-full-access"},
          {"justification", "  "}},
         "invalid justification: expected a non-empty sentence"},
        {escalated("true", "workspace-write"),
         "sandbox escalation to \"workspace-write\" is not strictly wider than this call's "
         "current \"workspace-write\" mode"},
    };
    int id = 1;
    for (const auto& [args, text] : cases) {
        const json result = peer.call(id++, "bash", args);
        EXPECT_EQ(result["isError"], true) << args.dump();
        EXPECT_EQ(text_of(result), text) << args.dump();
    }
    const json bad = peer.call(id++, "bash", escalated("true", "root"));
    EXPECT_EQ(bad["isError"], true);
    EXPECT_TRUE(contains(text_of(bad), "sandbox_permissions")) << text_of(bad);
    // use_default alone is no escalation at all.
    const json plain =
        peer.call(id++, "bash", {{"command", "echo fine"}, {"sandbox_permissions", "use_default"}});
    EXPECT_EQ(plain["structuredContent"]["output"], "fine\n") << plain.dump();
    for (const auto& reply : peer.replies_until(std::chrono::steady_clock::now() + 300ms))
        EXPECT_FALSE(reply.contains("method")) << "the server asked: " << reply.dump();
}

TEST_F(McpApproval, ASessionLogThatCannotBeReadRunsNothing) {
    mcp_peer peer(server_args());
    peer.initialize("2025-11-25", asks_by_form);
    EXPECT_EQ(peer.call(1, "bash", {{"command", "echo ok"}})["isError"], false);
    {
        std::ofstream append(log(), std::ios::app);
        append << "{not an event\n";
    }
    const json result = peer.call(2, "bash", {{"command", "echo ok"}});
    EXPECT_EQ(result["isError"], true);
    EXPECT_TRUE(contains(text_of(result), log().string())) << text_of(result);
    EXPECT_TRUE(contains(text_of(result), "line 2")) << text_of(result);
}

// The log is where a confined command must not write: a workspace-write deployment refuses to
// start with it in the workspace, and an escalated workspace-write run is refused.
TEST_F(McpApproval, TheSessionLogIsOutOfReachOfEveryRun) {
    const auto inside = workspace_ / "session.jsonl";
    {
        mcp_peer peer({"--mode", "workspace-write", "--workspace", workspace_.path().string(),
                       "--session", inside.string()});
        peer.close_input();
        const auto status = peer.wait_exit(20s);
        ASSERT_TRUE(status);
        EXPECT_EQ(WEXITSTATUS(*status), 2);
        EXPECT_FALSE(std::filesystem::exists(inside)) << "refused, yet created";
    }
    mcp_peer peer({"--workspace", workspace_.path().string(), "--session", inside.string()});
    peer.initialize("2025-11-25", asks_by_form);
    // Refused before anyone is asked: the wider run could write the log.
    peer.start_call(1, "bash", escalated("echo tampered >> session.jsonl", "workspace-write"));
    const json result = peer.reply_to(1)["result"];
    EXPECT_EQ(result["isError"], true) << result.dump();
    EXPECT_TRUE(contains(result["content"][0]["text"].get<std::string>(),
                         "refusing to ask for workspace-write"))
        << result.dump();
    for (const json& event : log_events(inside))
        EXPECT_NE(event["type"], "approval/asked") << event.dump();
    // (The command's text is in the log, in its approval/asked event; no line is the command's.)
    EXPECT_FALSE(contains(read_file(inside), "\ntampered\n"));
    for (const json& event : log_events(inside))
        EXPECT_TRUE(event.contains("type")) << event.dump();
}

TEST_F(McpApproval, ABadApprovalInvocationIsOneLineAndExitTwo) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--approval", "sometimes"},
          std::vector<std::string>{"--approval-timeout", "soon"},
          std::vector<std::string>{"--session", (state_ / "no" / "such" / "log").string()}}) {
        mcp_peer peer(args);
        peer.close_input();
        const auto status = peer.wait_exit(20s);
        ASSERT_TRUE(status);
        EXPECT_EQ(WEXITSTATUS(*status), 2) << args[0];
    }
}

}  // namespace
}  // namespace cordon::test
