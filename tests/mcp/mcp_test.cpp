// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon mcp` in a scripted JSON-RPC conversation: the handshake, every kind of malformed input
// (each answered, the server going on), the five tools against real commands under a real
// sandbox, cancellation, progress, the job cap, and the end of the server (input closed,
// SIGTERM), after which no process a command started may be left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <thread>

#include "base/json_text.hpp"
#include "fuzz/tool_schemas.hpp"
#include "mcp/mcp_peer.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::test {
namespace {

using namespace std::chrono_literals;

std::string marker(std::string_view what) {
    return "cordon-mcp-" + std::string(what) + "-" + std::to_string(::getpid());
}

class McpServer : public ::testing::Test {
protected:
    temp_dir workspace_;
};

TEST_F(McpServer, TheHandshakeNegotiatesTheProtocolVersion) {
    for (const std::string version : {"2025-06-18", "2025-11-25"}) {
        mcp_peer peer({"--workspace", workspace_.path().string()});
        const json reply = peer.request(1, "initialize",
                                        {{"protocolVersion", version},
                                         {"capabilities", json::object()},
                                         {"clientInfo", {{"name", "t"}, {"version", "0"}}}});
        EXPECT_EQ(reply["result"]["protocolVersion"], version);
        EXPECT_EQ(reply["result"]["serverInfo"]["name"], "cordon");
        EXPECT_EQ(reply["result"]["serverInfo"]["version"], CORDON_VERSION);  // as --version
        EXPECT_TRUE(reply["result"]["capabilities"].contains("tools"));
        EXPECT_FALSE(reply["result"]["instructions"].get<std::string>().empty());
    }
    mcp_peer peer({"--workspace", workspace_.path().string()});
    // Before initialize, only ping is answered.
    EXPECT_TRUE(peer.request(1, "ping").contains("result"));
    EXPECT_EQ(peer.request(2, "tools/list")["error"]["code"], -32600);
    const json older = peer.request(3, "initialize",
                                    {{"protocolVersion", "2024-11-05"},
                                     {"capabilities", json::object()},
                                     {"clientInfo", {{"name", "t"}, {"version", "0"}}}});
    EXPECT_EQ(older["result"]["protocolVersion"], "2025-11-25") << "the newest it supports";
    EXPECT_EQ(peer.request(4, "initialize", {{"protocolVersion", "2025-11-25"}})["error"]["code"],
              -32600)
        << "initialize twice";
}

TEST_F(McpServer, EveryMalformedInputIsAnsweredAndTheServerGoesOn) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const auto error_for = [&peer](const std::string& line) {
        peer.send_line(line);
        return peer.reply_to(nullptr);
    };
    EXPECT_EQ(error_for("{not json")["error"]["code"], -32700);
    EXPECT_EQ(error_for(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])")["error"]["code"], -32600)
        << "a batch";
    EXPECT_EQ(error_for("42")["error"]["code"], -32600);
    EXPECT_EQ(error_for(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})")["error"]["code"],
              -32600)
        << "an id that is neither a string nor an integer";
    peer.send_line(R"({"id":5,"method":"ping"})");
    EXPECT_EQ(peer.reply_to(5)["error"]["code"], -32600) << "no jsonrpc member: answered by id";
    // A line over the limit (8 MiB) is dropped whole, answered once, and the next line is read.
    peer.send_line(R"({"jsonrpc":"2.0","id":99,"method":"ping","params":{"pad":")" +
                   std::string(9 << 20, 'x') + "\"}}");
    const json huge = peer.reply_to(nullptr);
    EXPECT_EQ(huge["error"]["code"], -32600);
    EXPECT_NE(huge["error"]["message"].get<std::string>().find("over the limit"),
              std::string::npos);

    EXPECT_EQ(peer.request(6, "no/such/method")["error"]["code"], -32601);
    EXPECT_EQ(peer.request("seven", "tools/call", {{"name", "bsh"}})["error"]["code"], -32602)
        << "an unknown tool";
    EXPECT_EQ(
        peer.request(8, "tools/call", {{"name", "bash"}, {"arguments", "ls"}})["error"]["code"],
        -32602)
        << "arguments that are not an object";
    EXPECT_EQ(peer.request(9, "tools/call", {{"arguments", json::object()}})["error"]["code"],
              -32602)
        << "no tool name";

    // A wrong argument is the model's to correct: a tool error, not a protocol error.
    for (const json& args :
         {json{{"command", 5}}, json::object(), json{{"command", "true"}, {"bogus", 1}},
          json{{"command", "true"}, {"timeout_ms", "soon"}},
          json{{"command", "true"}, {"timeout_ms", 0}},
          json{{"command", "true"}, {"env", {{"A", 1}}}}, json{{"command", "   "}},
          json{{"command", "true"}, {"workdir", "no/such/dir"}}}) {
        const json result = peer.call(10, "bash", args);
        EXPECT_EQ(result["isError"], true) << args.dump();
        EXPECT_NE(text_of(result).find("bash"), std::string::npos) << text_of(result);
    }
    // A reply from the client to a request the server never sent is ignored.
    peer.send_line(R"({"jsonrpc":"2.0","id":"x","result":{}})");
    EXPECT_TRUE(peer.request(11, "ping").contains("result")) << "the server is still there";
}

// A JSON value is copied and destroyed recursively: nesting past a limit is refused before it is
// parsed, wherever it is (params, an id, a cancellation's requestId).
TEST_F(McpServer, DeepNestingIsRefusedNotFollowed) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
    peer.send_line(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":)" + deep + "}}");
    EXPECT_EQ(peer.reply_to(nullptr)["error"]["code"], -32600);
    peer.send_line(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
                   deep + "}}");
    EXPECT_EQ(peer.reply_to(nullptr)["error"]["code"], -32600);
    // Odd but shallow: an array as a cancellation's requestId is ignored.
    peer.send_line(
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[[1]]}})");
    // Numbers a tool cannot take are refused or clamped, never converted out of range.
    const json huge = peer.call(2, "bash", {{"command", "true"}, {"timeout_ms", 1e300}});
    EXPECT_EQ(huge["isError"], true);
    const json fraction = peer.call(3, "bash", {{"command", "true"}, {"yield_ms", 1.5}});
    EXPECT_EQ(fraction["isError"], true);
    const json far = peer.call(4, "bash", {{"command", "echo x"}});
    const json past_the_end = peer.call(5, "job_output",
                                        {{"job_id", far["structuredContent"]["job_id"]},
                                         {"offset", std::numeric_limits<std::uint64_t>::max()}});
    EXPECT_EQ(past_the_end["structuredContent"]["nextOffset"], 2);
    EXPECT_TRUE(peer.request(6, "ping").contains("result"));
}

// A client that stops reading holds up nothing: calls go on, and the end of the server (here a
// SIGTERM) still ends every job's tree and the server at once.
TEST_F(McpServer, AClientThatStopsReadingDoesNotHoldTheServer) {
    const std::string tag = marker("unread");
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const json started = peer.call(1, "bash",
                                   {{"command", "exec -a \"$M\" sleep 600"},
                                    {"env", {{"M", tag}}},
                                    {"run_in_background", true}});
    ASSERT_EQ(started["structuredContent"]["status"], "running");
    ASSERT_TRUE(wait_for_processes_with_cmdline(tag, 1, 30s));
    // Far more than a pipe holds, never read.
    for (int i = 0; i < 4; ++i) {
        peer.send({{"jsonrpc", "2.0"},
                   {"id", 10 + i},
                   {"method", "tools/call"},
                   {"params",
                    {{"name", "bash"},
                     {"arguments",
                      {{"command", "head -c 900000 /dev/zero | tr '\\0' a"},
                       {"max_output_bytes", 1000000}}}}}});
    }
    for (int i = 0; i < 2000; ++i)
        peer.send({{"jsonrpc", "2.0"}, {"id", 100 + i}, {"method", "ping"}});
    ASSERT_TRUE(peer.wait_until_unread_output_backs_up()) << "the server never wrote its replies";
    ::kill(peer.pid(), SIGTERM);
    const auto status = peer.wait_exit(20s, /*drain=*/false);
    ASSERT_TRUE(status) << "the server waited for its client to read";
    EXPECT_EQ(WEXITSTATUS(*status), 128 + SIGTERM);
    EXPECT_TRUE(live_processes_with_cmdline(tag).empty());
}

// Output cut on a character boundary: the budget's edge inside a multi-byte character still
// gives the head, the note and the tail, and a filter over a line longer than a read moves on.
TEST_F(McpServer, CharacterAndLineBoundariesNeverStallAReader) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const json cut =
        peer.call(1, "bash",
                  {{"command",
                    "printf 'a%.0s' $(seq 999); for i in $(seq 5000); do printf '\\xc3\\xa9'; "
                    "done; echo; echo END"},
                   {"max_output_bytes", 1000},
                   {"verbose", true}});
    const json& record = cut["structuredContent"];
    EXPECT_EQ(record["bytes"]["output"], 999 + 10000 + 1 + 4);
    EXPECT_GT(record["omittedBytes"].get<std::uint64_t>(), 9000U);
    EXPECT_EQ(record["complete"], true);
    EXPECT_NE(record["output"].get<std::string>().find("END\n"), std::string::npos);
    EXPECT_NE(text_of(cut).find(": completed]"), std::string::npos) << text_of(cut);

    const json long_line =
        peer.call(2, "bash",
                  {{"command", "head -c 5000 /dev/zero | tr '\\0' x; echo; echo match; echo other"},
                   {"run_in_background", true}});
    const std::string id = long_line["structuredContent"]["job_id"];
    (void)peer.call(3, "job_output", {{"job_id", id}, {"wait", "exit"}, {"max_bytes", 1}});
    std::uint64_t offset = 0;
    std::string matched;
    int reads = 0;
    for (; reads < 50; ++reads) {
        const json got = peer.call(4 + reads, "job_output",
                                   {{"job_id", id},
                                    {"offset", offset},
                                    {"filter", "^match$"},
                                    {"max_bytes", 1000},
                                    {"wait", "none"}});
        matched += got["structuredContent"]["output"].get<std::string>();
        ASSERT_GT(got["structuredContent"]["nextOffset"].get<std::uint64_t>(), offset)
            << "the cursor did not move";
        offset = got["structuredContent"]["nextOffset"];
        if (got["structuredContent"].value("complete", true)) break;  // said only when false
    }
    EXPECT_EQ(matched, "match\n");
    EXPECT_LT(reads, 50);
}

// tools/list is in the context of every session that connects: all five tools in 4.5 KB, the
// wire's bytes, with what a model needs to call them (each input's schema; the hints that differ
// from MCP's defaults) and no outputSchema (results are compact and vary with what happened).
// 4 KB held them until the terminal (tty, screen, keys, wait_for, quiet_ms, rows and cols:
// about 130 tokens).
TEST_F(McpServer, ToolsAreListedInFourAndAHalfKilobytesWithTheirInputSchemas) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const json listed = peer.request(1, "tools/list");
    EXPECT_LE(base::dump_json(listed).size(), 4608U) << base::dump_json(listed);
    const json tools = listed["result"]["tools"];
    ASSERT_EQ(tools.size(), 5U);
    for (const auto& tool : tools) {
        const std::string name = tool["name"];
        EXPECT_EQ(tool["inputSchema"]["type"], "object") << name;
        EXPECT_FALSE(tool.contains("outputSchema")) << name;
        EXPECT_FALSE(tool["description"].get<std::string>().empty()) << name;
        for (const auto& property : tool["inputSchema"]["properties"].items()) {
            EXPECT_TRUE(property.value().contains("type")) << name << "." << property.key();
        }
        EXPECT_EQ(tool["inputSchema"]["properties"].contains("verbose"), name != "job_list")
            << name;
        if (name == "bash") {
            EXPECT_FALSE(tool.contains("annotations")) << "destructive, open world: the defaults";
        } else if (name == "job_output" || name == "job_list") {
            EXPECT_EQ(tool["annotations"]["readOnlyHint"], true) << name;
        }
    }

    // What tools/list declares is what a call is checked against: every listed tool is known,
    // and an argument its inputSchema does not name is refused with the names it does.
    int id = 2;
    for (const auto& tool : tools) {
        const std::string name = tool["name"];
        const json refused = peer.call(id++, name, {{"no_such_argument", 1}});
        EXPECT_EQ(refused["isError"], true) << name << ": " << refused.dump();
        std::string names;
        for (const auto& property : tool["inputSchema"]["properties"].items())
            names += (names.empty() ? "" : ", ") + property.key();
        EXPECT_EQ(text_of(refused), "invalid arguments for " + name +
                                        ": unknown argument \"no_such_argument\" (" + name +
                                        " takes " + names + ")")
            << refused.dump();
    }
    const json unknown = peer.request(id, "tools/call", {{"name", "no_such_tool"}});
    EXPECT_EQ(unknown["error"]["message"], "Unknown tool: no_such_tool") << unknown.dump();
}

// The tool_arguments fuzz target reads the real tools' arguments against a copy of what
// tools/list declares (tests/fuzz/tool_schemas.hpp): the copy is what the server lists.
TEST_F(McpServer, TheFuzzTargetsCopyOfTheToolsIsWhatToolsListGives) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const json tools = peer.request(1, "tools/list")["result"]["tools"];
    EXPECT_EQ(json::parse(::cordon::fuzz::tool_schemas), tools)
        << "tests/fuzz/tool_schemas.hpp is out of date; tools/list gives:\n"
        << base::dump_json(tools, 2);
}

// Agents pay for every byte of every result: a plain call carries its output (in the text and
// in structuredContent) and at most 400 bytes more, of which the sandbox's mode and enforcement.
// The policy's lists, byte counts and false flags come with verbose; a denial is always said.
TEST_F(McpServer, APlainResultCarriesItsOutputAndLittleElse) {
    mcp_peer peer({"--mode", "workspace-write", "--workspace", workspace_.path().string()});
    peer.initialize();
    const json plain = peer.call(1, "bash", {{"command", "echo hi"}});
    const std::string output = "hi\n";
    EXPECT_LE(base::dump_json(plain).size(), 400 + 2 * output.size()) << base::dump_json(plain);
    const json& structured = plain["structuredContent"];
    std::set<std::string> keys;
    for (const auto& item : structured.items())
        keys.insert(item.key());
    EXPECT_EQ(keys, (std::set<std::string>{"job_id", "status", "exitCode", "output", "nextOffset",
                                           "sandbox"}))
        << structured.dump();
    EXPECT_EQ(structured["output"], output);
    EXPECT_EQ(structured["sandbox"], json({{"mode", "workspace-write"}, {"enforcement", "full"}}));

    const json verbose = peer.call(2, "bash", {{"command", "echo hi"}, {"verbose", true}});
    EXPECT_EQ(verbose["structuredContent"]["bytes"]["stdout"], 3) << verbose.dump();
    EXPECT_EQ(verbose["structuredContent"]["sandbox"]["denied"], false);
    EXPECT_TRUE(verbose["structuredContent"]["sandbox"]["policy"].contains("hidden"));

    const json denied = peer.call(3, "bash", {{"command", "echo x > /etc/cordon-mcp-compact"}});
    EXPECT_EQ(denied["structuredContent"]["sandbox"]["denied"], true) << denied.dump();
    EXPECT_EQ(denied["structuredContent"]["sandbox"]["denial"], "file");
    EXPECT_EQ(denied["structuredContent"]["exitCode"], 1);
}

TEST_F(McpServer, AForegroundCallReturnsTheRecordAndTheMarkers) {
    mcp_peer peer({"--mode", "workspace-write", "--workspace", workspace_.path().string()});
    peer.initialize();
    const json result = peer.call(
        1, "bash",
        {{"command", "echo out; echo err >&2; echo made > here; exit 3"}, {"verbose", true}});
    EXPECT_EQ(result["isError"], false) << "a non-zero exit is not a tool error";
    const json& record = result["structuredContent"];
    EXPECT_EQ(record["status"], "completed");
    EXPECT_EQ(record["exitCode"], 3);
    EXPECT_EQ(record["outcome"], "exited");
    EXPECT_EQ(record["output"], "out\nerr\n");
    EXPECT_EQ(record["bytes"]["stdout"], 4);
    EXPECT_EQ(record["bytes"]["stderr"], 4);
    EXPECT_EQ(record["sandbox"]["mode"], "workspace-write");
    EXPECT_EQ(record["sandbox"]["enforcement"], "full");
    EXPECT_EQ(record["sandbox"]["denied"], false);
    EXPECT_EQ(text_of(result).rfind("out\nerr\n[exit code: 3]\n", 0), 0U) << text_of(result);
    EXPECT_EQ(read_file(workspace_ / "here"), "made\n");

    // The same server's sandbox refuses a write outside the workspace, and says so.
    const json denied = peer.call(2, "bash", {{"command", "echo x > /etc/cordon-mcp-denied"}});
    EXPECT_EQ(denied["structuredContent"]["sandbox"]["denied"], true) << text_of(denied);
    EXPECT_NE(text_of(denied).find("[sandbox: file access denied under workspace-write mode]"),
              std::string::npos);
    EXPECT_FALSE(std::filesystem::exists("/etc/cordon-mcp-denied"));

    // stdin, the environment and the working directory.
    std::filesystem::create_directory(workspace_ / "sub");
    const json fed = peer.call(3, "bash",
                               {{"command", "cat; echo \"$GREETING\"; pwd"},
                                {"stdin", "from stdin\n"},
                                {"env", {{"GREETING", "hello"}}},
                                {"workdir", "sub"}});
    EXPECT_EQ(fed["structuredContent"]["output"],
              "from stdin\nhello\n" + (workspace_ / "sub").string() + "\n");
}

// One runner failure reads the same through `cordon run --json` and through an MCP job: the same
// outcome and the same error object (no sandbox-exec on Linux: the Seatbelt rung is unusable, and
// nothing may run unconfined).
TEST_F(McpServer, ARunnerFailedJobReportsWhatCordonRunReports) {
    const std::string command = cordon_path().string() +
                                " run --json --backend seatbelt --workspace '" +
                                workspace_.path().string() + "' -c true";
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string printed;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
        printed.append(buffer, n);
    const int status = ::pclose(pipe);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 125);
    const json ran = json::parse(printed);
    ASSERT_EQ(ran["outcome"], "runner-failed") << printed;
    ASSERT_TRUE(ran["error"].is_object()) << printed;
    EXPECT_EQ(ran["error"]["code"], "SANDBOX_UNAVAILABLE");

    mcp_peer peer({"--backend", "seatbelt", "--workspace", workspace_.path().string()});
    peer.initialize();
    const json started = peer.call(1, "bash", {{"command", "true"}, {"run_in_background", true}});
    ASSERT_TRUE(started["structuredContent"].contains("job_id")) << started.dump();
    const std::string id = started["structuredContent"]["job_id"];
    const json read = peer.call(2, "job_output", {{"job_id", id}, {"wait", "exit"}});
    const json& job = read["structuredContent"];
    EXPECT_EQ(read["isError"], true);
    EXPECT_EQ(job["status"], "failed_to_start");
    EXPECT_EQ(job["outcome"], ran["outcome"]) << job.dump();
    EXPECT_EQ(job["error"], ran["error"]) << job.dump();
    EXPECT_EQ(job["sandbox"]["runnerFailed"], true);
    EXPECT_NE(
        text_of(read).find("[sandbox unavailable: " + ran["error"]["message"].get<std::string>()),
        std::string::npos)
        << text_of(read);

    // job_list says the same of it.
    const json listed = peer.call(3, "job_list", json::object());
    ASSERT_EQ(listed["structuredContent"]["jobs"].size(), 1U) << listed.dump();
    EXPECT_EQ(listed["structuredContent"]["jobs"][0]["outcome"], ran["outcome"]);
    EXPECT_EQ(listed["structuredContent"]["jobs"][0]["error"], ran["error"]);
}

TEST_F(McpServer, ALongCallBecomesAJobReadByCursor) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    // The command cannot end before the test releases it: the call can only return by yielding.
    const std::filesystem::path release = workspace_ / "release";
    const json yielded = peer.call(
        1, "bash",
        {{"command", "echo first; while [ ! -e \"$R\" ]; do sleep 0.01; done; echo second"},
         {"env", {{"R", release.string()}}},
         {"yield_ms", 200}});
    ASSERT_EQ(yielded["structuredContent"]["status"], "running") << yielded.dump();
    std::ofstream{release}.flush();
    const std::string id = yielded["structuredContent"]["job_id"];
    EXPECT_NE(text_of(yielded).find(id + ": running"), std::string::npos) << text_of(yielded);

    // The default offset continues after what the client already got.
    const std::uint64_t got = yielded["structuredContent"]["nextOffset"];
    const json rest = peer.call(2, "job_output", {{"job_id", id}, {"wait", "exit"}});
    EXPECT_EQ(rest["structuredContent"].value("offset", std::uint64_t{0}), got);  // said when not 0
    EXPECT_EQ(rest["structuredContent"]["status"], "completed");
    EXPECT_FALSE(rest["structuredContent"].contains("complete")) << "complete: said only when not";
    // Any offset can be read again; a negative one counts from the end.
    EXPECT_EQ(
        peer.call(3, "job_output", {{"job_id", id}, {"offset", 0}})["structuredContent"]["output"],
        "first\nsecond\n");
    EXPECT_EQ(
        peer.call(4, "job_output", {{"job_id", id}, {"offset", -7}})["structuredContent"]["output"],
        "second\n");
    EXPECT_EQ(
        peer.call(
            5, "job_output",
            {{"job_id", id}, {"offset", 0}, {"stream", "stderr"}})["structuredContent"]["output"],
        "");
    // A filter keeps matching lines without consuming the rest.
    EXPECT_EQ(
        peer.call(
            6, "job_output",
            {{"job_id", id}, {"offset", 0}, {"filter", "^sec"}})["structuredContent"]["output"],
        "second\n");
    const json bad_filter = peer.call(7, "job_output", {{"job_id", id}, {"filter", "(["}});
    EXPECT_EQ(bad_filter["isError"], true);

    const json unknown = peer.call(8, "job_output", {{"job_id", "job-999"}});
    EXPECT_EQ(unknown["isError"], true);
    EXPECT_NE(text_of(unknown).find("job-999"), std::string::npos);
}

// The session log is cordon's: a confined call can neither read it nor take its lock (a
// read-only job that held its flock once held every later call of the server for its whole
// life), on either rung. A process outside the sandbox that holds the lock (a
// danger-full-access job, any process of the user) holds no call either: reads take no lock.
TEST_F(McpServer, NoJobCanHoldTheSessionLogsLock) {
    for (const std::string backend : {"bwrap", "landlock"}) {
        SCOPED_TRACE(backend);
        temp_dir state;
        const std::filesystem::path log = state / "session.jsonl";
        mcp_peer peer({"--workspace", workspace_.path().string(), "--session", log.string(),
                       "--backend", backend});
        peer.initialize();
        json tried = peer.call(1, "bash",
                               {{"command", "exec 9<\"$L\" && flock -x 9 && echo LOCKED"},
                                {"env", {{"L", log.string()}}}});
        ASSERT_FALSE(tried.contains("timeout"));
        EXPECT_EQ(tried["structuredContent"]["output"].get<std::string>().find("LOCKED"),
                  std::string::npos)
            << tried.dump();
        EXPECT_NE(tried["structuredContent"]["exitCode"], 0) << tried.dump();

        // `cordon run --session` hides it the same way.
        std::ofstream(workspace_ / "readable") << "x";
        const auto run_reading = [&](const std::filesystem::path& target) {
            const std::string command =
                cordon_path().string() + " run --backend " + backend + " --workspace '" +
                workspace_.path().string() + "' --session '" + log.string() +
                "' -- sh -c 'exec 9<\"$0\"' '" + target.string() + "' >/dev/null 2>&1";
            const int status = std::system(command.c_str());
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        };
        EXPECT_EQ(run_reading(workspace_ / "readable"), 0);
        EXPECT_NE(run_reading(log), 0);

        const int holder = ::open(log.c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(holder, 0);
        ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);
        json later = peer.call(2, "bash", {{"command", "echo after"}}, 30s);
        ::close(holder);
        ASSERT_FALSE(later.contains("timeout")) << "the call waited for the lock's holder";
        EXPECT_EQ(later["structuredContent"]["output"], "after\n") << later.dump();
    }
}

TEST_F(McpServer, LongOutputKeepsItsHeadAndTailAndTheRestIsReadable) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const json result = peer.call(
        1, "bash", {{"command", "seq 1 20000"}, {"max_output_bytes", 2000}, {"verbose", true}});
    const json& record = result["structuredContent"];
    const std::string full = [] {
        std::string all;
        for (int i = 1; i <= 20000; ++i)
            all += std::to_string(i) + "\n";
        return all;
    }();
    EXPECT_EQ(record["bytes"]["output"], full.size());
    const std::uint64_t omitted = record["omittedBytes"];
    EXPECT_GT(omitted, full.size() - 2100);
    const std::string text = record["output"];
    EXPECT_EQ(text.rfind("1\n2\n3\n", 0), 0U) << "the head";
    EXPECT_NE(text.find("19999\n20000\n"), std::string::npos) << "the tail";
    EXPECT_NE(text.find("bytes omitted"), std::string::npos);
    // The omitted bytes come back by offset, byte for byte.
    const std::size_t head = full.find("\n", 390) + 1;
    const json middle = peer.call(
        2, "job_output", {{"job_id", record["job_id"]}, {"offset", head}, {"max_bytes", 1000}});
    EXPECT_EQ(middle["structuredContent"]["output"].get<std::string>(), full.substr(head, 1000));
}

TEST_F(McpServer, StdinKeptOpenIsWrittenByJobWrite) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const json started =
        peer.call(1, "bash",
                  {{"command", "while read -r l; do echo \"got $l\"; done; echo bye"},
                   {"run_in_background", true},
                   {"keep_stdin_open", true}});
    const std::string id = started["structuredContent"]["job_id"];
    const json first =
        peer.call(2, "job_write", {{"job_id", id}, {"data", "one\n"}, {"wait_ms", 5000}});
    EXPECT_EQ(first["structuredContent"]["output"], "got one\n");
    EXPECT_EQ(first["structuredContent"]["written"], 4);
    (void)peer.call(3, "job_write", {{"job_id", id}, {"eof", true}});
    const json done = peer.call(4, "job_output", {{"job_id", id}, {"wait", "exit"}, {"offset", 0}});
    EXPECT_EQ(done["structuredContent"]["output"], "got one\nbye\n");
    EXPECT_EQ(done["structuredContent"]["exitCode"], 0);

    const json ended = peer.call(5, "job_write", {{"job_id", id}, {"data", "late\n"}});
    EXPECT_EQ(ended["isError"], true);
    const json closed = peer.call(6, "bash", {{"command", "sleep 5"}, {"run_in_background", true}});
    const json refused = peer.call(
        7, "job_write", {{"job_id", closed["structuredContent"]["job_id"]}, {"data", "x"}});
    EXPECT_EQ(refused["isError"], true);
    EXPECT_NE(text_of(refused).find("keep_stdin_open"), std::string::npos) << text_of(refused);
}

TEST_F(McpServer, JobKillEndsTheWholeTreeWithTheSignalAskedFor) {
    mcp_peer peer({"--mode", "danger-full-access", "--workspace", workspace_.path().string()});
    peer.initialize();
    const std::string tag = marker("kill");
    // A leader that ignores TERM and a child of its own that ignores it too.
    const json started = peer.call(
        1, "bash",
        {{"command", "trap '' TERM; (exec -a \"$M-child\" sleep 60) & exec -a \"$M\" sleep 60"},
         {"env", {{"M", tag}}},
         {"run_in_background", true}});
    const std::string id = started["structuredContent"]["job_id"];
    ASSERT_TRUE(wait_for_processes_with_cmdline(tag, 2, 30s));
    const json killed = peer.call(2, "job_kill", {{"job_id", id}, {"grace_ms", 200}});
    EXPECT_EQ(killed["structuredContent"]["killed"], true);
    EXPECT_EQ(killed["structuredContent"]["status"], "killed");
    EXPECT_EQ(killed["structuredContent"]["signal"], "SIGKILL") << "after the grace";
    EXPECT_TRUE(live_processes_with_cmdline(tag).empty()) << "the tree is gone when it returns";
    const json again = peer.call(3, "job_kill", {{"job_id", id}});
    EXPECT_EQ(again["structuredContent"]["killed"], false);
    EXPECT_EQ(again["isError"], false);

    // Killed once it runs (a job killed while it is prepared never runs, and has no signal).
    const json interrupted = peer.call(4, "bash",
                                       {{"command", "exec -a \"$M-int\" sleep 60"},
                                        {"env", {{"M", tag}}},
                                        {"run_in_background", true}});
    ASSERT_TRUE(wait_for_processes_with_cmdline(tag + "-int", 1, 30s));
    const json by_int = peer.call(
        5, "job_kill", {{"job_id", interrupted["structuredContent"]["job_id"]}, {"signal", "INT"}});
    EXPECT_EQ(by_int["structuredContent"]["signal"], "SIGINT");
    const json listed = peer.call(6, "job_list");
    ASSERT_EQ(listed["structuredContent"]["jobs"].size(), 2U);
    for (const auto& each : listed["structuredContent"]["jobs"])
        EXPECT_EQ(each["status"], "killed") << each.dump();
}

TEST_F(McpServer, TheRunningJobCapRefusesWithTheJobsToKill) {
    mcp_peer peer({"--max-jobs", "2", "--workspace", workspace_.path().string()});
    peer.initialize();
    std::vector<std::string> ids;
    for (int i = 0; i < 2; ++i) {
        ids.push_back(peer.call(
            i, "bash",
            {{"command", "sleep 60"}, {"run_in_background", true}})["structuredContent"]["job_id"]);
    }
    const json refused = peer.call(3, "bash", {{"command", "true"}});
    EXPECT_EQ(refused["isError"], true);
    for (const auto& id : ids)
        EXPECT_NE(text_of(refused).find(id), std::string::npos) << text_of(refused);
    (void)peer.call(4, "job_kill", {{"job_id", ids[0]}, {"signal", "KILL"}});
    const json admitted = peer.call(5, "bash", {{"command", "echo in"}});
    EXPECT_EQ(admitted["structuredContent"]["output"], "in\n");
    const json listed = peer.call(6, "job_list", {{"status", "running"}});
    EXPECT_EQ(listed["structuredContent"]["limits"]["maxRunning"], 2);
    EXPECT_EQ(listed["structuredContent"]["jobs"].size(), 1U);
}

TEST_F(McpServer, ACancelledCallEndsItsTreeAndIsNotAnswered) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    const std::string tag = marker("cancel");
    peer.send({{"jsonrpc", "2.0"},
               {"id", 1},
               {"method", "tools/call"},
               {"params",
                {{"name", "bash"},
                 {"arguments", {{"command", "exec -a \"$M\" sleep 60"}, {"env", {{"M", tag}}}}}}}});
    ASSERT_TRUE(wait_for_processes_with_cmdline(tag, 1, 30s));
    // A slow call never holds up a ping.
    EXPECT_TRUE(peer.request(2, "ping", json::object()).contains("result"));
    peer.send({{"jsonrpc", "2.0"},
               {"method", "notifications/cancelled"},
               {"params", {{"requestId", 1}, {"reason", "changed my mind"}}}});
    EXPECT_TRUE(wait_no_process_with_cmdline(tag, 15s));
    EXPECT_TRUE(peer.request(3, "ping").contains("result"));
    for (const auto& reply : peer.replies_until(std::chrono::steady_clock::now() + 500ms))
        EXPECT_NE(reply["id"], 1) << "a cancelled call got a reply";
}

TEST_F(McpServer, AWaitingCallSendsProgressWithItsToken) {
    // A tick every 50 ms; the command waits until the test has heard three.
    mcp_peer peer({"--workspace", workspace_.path().string(), "--progress-interval", "50ms"});
    peer.initialize();
    const std::filesystem::path release = workspace_ / "release";
    peer.send({{"jsonrpc", "2.0"},
               {"id", 1},
               {"method", "tools/call"},
               {"params",
                {{"name", "bash"},
                 {"arguments",
                  {{"command", "while [ ! -e \"$R\" ]; do sleep 0.01; done; echo done"},
                   {"env", {{"R", release.string()}}}}},
                 {"_meta", {{"progressToken", "tok-1"}}}}}});
    ASSERT_TRUE(peer.wait_for_notifications(3)) << "no progress while the call waited";
    std::ofstream{release}.flush();
    const json reply = peer.reply_to(1);
    EXPECT_EQ(reply["result"]["structuredContent"]["output"], "done\n");
    double last = -1;
    for (const auto& note : peer.notifications()) {
        EXPECT_EQ(note["method"], "notifications/progress");
        EXPECT_EQ(note["params"]["progressToken"], "tok-1");
        EXPECT_GT(note["params"]["progress"].get<double>(), last);
        last = note["params"]["progress"].get<double>();
    }
}

// The end of the server: its input closing or a SIGTERM ends every job's tree, a TERM-trapping
// one included, and the server exits.
TEST_F(McpServer, ClosingTheInputOrSigtermLeavesNoProcess) {
    for (const bool by_signal : {false, true}) {
        const std::string tag = marker(by_signal ? "sigterm" : "eof");
        mcp_peer peer({"--mode", "workspace-write", "--workspace", workspace_.path().string()});
        peer.initialize();
        for (int i = 0; i < 3; ++i) {
            const json started = peer.call(
                i, "bash",
                {{"command",
                  "trap '' TERM; (exec -a \"$M-child\" sleep 600) & exec -a \"$M\" sleep 600"},
                 {"env", {{"M", tag}}},
                 {"run_in_background", true}});
            ASSERT_EQ(started["structuredContent"]["status"], "running") << started.dump();
        }
        // And one call still waiting for its command.
        peer.send({{"jsonrpc", "2.0"},
                   {"id", 9},
                   {"method", "tools/call"},
                   {"params",
                    {{"name", "bash"},
                     {"arguments",
                      {{"command", "exec -a \"$M-fg\" sleep 600"}, {"env", {{"M", tag}}}}}}}});
        ASSERT_TRUE(wait_for_processes_with_cmdline(tag, 7, 30s));
        if (by_signal) {
            ::kill(peer.pid(), SIGTERM);
        } else {
            peer.close_input();
        }
        const auto status = peer.wait_exit(20s);
        ASSERT_TRUE(status) << "the server did not exit";
        if (by_signal) {
            EXPECT_EQ(WEXITSTATUS(*status), 128 + SIGTERM);
        } else {
            EXPECT_EQ(WEXITSTATUS(*status), 0);
        }
        EXPECT_TRUE(live_processes_with_cmdline(tag).empty()) << "a job's tree outlived the server";
    }
}

// The policy beyond the mode applies to every call the server makes, foreground and background:
// protected names stay, a denied read is a denial, an extra writable root is writable.
TEST_F(McpServer, ThePolicyFlagsApplyToEveryCall) {
    temp_dir outside{"/var/tmp", "cordon-mcp-policy-"};
    write_file(outside / "secret", "TOKEN-123\n");
    std::filesystem::create_directory(outside / "extra");
    mcp_peer peer({"--mode", "workspace-write", "--workspace", workspace_.path().string(),
                   "--deny-read", (outside / "secret").string(), "--writable-root",
                   (outside / "extra").string(), "--protect", "build.sh"});
    peer.initialize();
    write_file(workspace_ / "build.sh", "make\n");
    const json read =
        peer.call(1, "bash", {{"command", "cat '" + (outside / "secret").string() + "'"}});
    EXPECT_EQ(read["structuredContent"]["sandbox"]["denied"], true) << text_of(read);
    EXPECT_EQ(text_of(read).find("TOKEN-123"), std::string::npos) << text_of(read);
    const json job =
        peer.call(2, "bash",
                  {{"command", "echo evil > build.sh; echo evil > .envrc; echo in > '" +
                                   (outside / "extra" / "f").string() + "'; exit 0"},
                   {"run_in_background", true}});
    const std::string id = job["structuredContent"]["job_id"];
    const json done = peer.call(3, "job_output", {{"job_id", id}, {"wait", "exit"}});
    EXPECT_EQ(done["structuredContent"]["exitCode"], 0) << text_of(done);
    EXPECT_EQ(read_file(workspace_ / "build.sh"), "make\n");
    EXPECT_FALSE(std::filesystem::exists(workspace_ / ".envrc"));
    EXPECT_EQ(read_file(outside / "extra" / "f"), "in\n");
}

TEST_F(McpServer, ABadInvocationIsOneLineAndExitTwo) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--mode", "bogus"},
          std::vector<std::string>{"--workspace", (workspace_ / "missing").string()},
          std::vector<std::string>{"--max-jobs", "0"},
          std::vector<std::string>{"--timeout", "soon"},
          std::vector<std::string>{"--tmp", "shared"},
          std::vector<std::string>{"--unprotect", ".not-protected"},
          std::vector<std::string>{"--writable-root", (workspace_ / "missing").string()}}) {
        mcp_peer peer(args);
        peer.close_input();
        const auto status = peer.wait_exit(20s);
        ASSERT_TRUE(status);
        EXPECT_EQ(WEXITSTATUS(*status), 2) << args[0];
    }
}

}  // namespace
}  // namespace cordon::test
