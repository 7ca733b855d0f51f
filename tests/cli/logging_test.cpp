// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon's own log lines, set through the library's cordon/logging.hpp as any program of the
// library sets them: on stderr only, warnings and errors by default, down to debug with
// --verbose. Standard output is the command's, or the MCP protocol's, and never holds one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

// Every line of `err` is a log line of one of `levels` ("cordon: [warning] ..."), or not a log
// line at all (a refusal's message); returns how many log lines there were.
int log_lines_at(const std::string& err, const std::vector<std::string_view>& levels) {
    int count = 0;
    for (const std::string& line : lines_of(err)) {
        if (line.rfind("cordon: [", 0) != 0) continue;
        ++count;
        bool known = false;
        for (const std::string_view level : levels)
            known = known || line.rfind("cordon: [" + std::string(level) + "] ", 0) == 0;
        EXPECT_TRUE(known) << "a log line at another level: " << line;
    }
    return count;
}

class CliLogs : public ::testing::Test {
protected:
    temp_dir workspace_{"/var/tmp", "cordon-cli-logs-"};
};

// `cordon mcp` whose input ends at once: the server says so at info, which --verbose shows on
// stderr and the default does not; stdout stays empty, as the protocol's.
TEST_F(CliLogs, VerboseShowsInfoAndDebugOnStderrAndTheDefaultDoesNot) {
    const cli_result verbose = run_cordon({"--verbose", "mcp"}, workspace_.path());
    EXPECT_EQ(verbose.exit_code, 0) << verbose.err;
    EXPECT_EQ(verbose.out, "");
    EXPECT_NE(verbose.err.find("cordon: [debug] sandbox verdict: "), std::string::npos)
        << verbose.err;
    EXPECT_NE(verbose.err.find("cordon: [info] mcp: the input ended; shutting down\n"),
              std::string::npos)
        << verbose.err;
    EXPECT_EQ(static_cast<std::size_t>(
                  log_lines_at(verbose.err, {"trace", "debug", "info", "warning", "error"})),
              lines_of(verbose.err).size())
        << "a line on stderr that is not a log line: " << verbose.err;

    const cli_result quiet = run_cordon({"mcp"}, workspace_.path());
    EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.out, "");
    (void)log_lines_at(quiet.err, {"warning", "error"});
    EXPECT_EQ(quiet.err.find("the input ended"), std::string::npos) << quiet.err;
}

// With --verbose the server logs every request at debug while it answers on stdout: every line of
// stdout is still a JSON-RPC message.
TEST_F(CliLogs, VerboseNeverWritesIntoTheMcpProtocol) {
    const std::string initialize =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
        R"("capabilities":{},"clientInfo":{"name":"logging-test","version":"1"}}})"
        "\n"
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
        "\n"
        R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"
        "\n";
    const cli_result r = run_cordon({"--verbose", "mcp"}, workspace_.path(),
                                    cli_stdin{.data = initialize, .fd = {}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("cordon: [debug] mcp: request tools/list 2"), std::string::npos) << r.err;
    const std::vector<std::string> messages = lines_of(r.out);
    ASSERT_EQ(messages.size(), 2u) << r.out;
    for (const std::string& message : messages) {
        const auto parsed = nlohmann::json::parse(message, nullptr, false);
        ASSERT_FALSE(parsed.is_discarded()) << "not a JSON-RPC message: " << message;
        EXPECT_EQ(parsed.value("jsonrpc", ""), "2.0") << message;
    }
    EXPECT_EQ(nlohmann::json::parse(messages[1])["id"], 2) << messages[1];
}

// A confined run: --verbose shows how the sandbox was decided, on stderr; the default shows no
// line below warning. The command's stdout is the command's alone either way.
TEST_F(CliLogs, ARunLogsOnStderrOnlyAndNothingBelowWarningByDefault) {
    const cli_result verbose = run_cordon(
        {"--verbose", "run", "--mode", "read-only", "-c", "echo ran"}, workspace_.path());
    EXPECT_NE(verbose.err.find("cordon: [debug] sandbox verdict: "), std::string::npos)
        << verbose.err;
    const cli_result quiet =
        run_cordon({"run", "--mode", "read-only", "-c", "echo ran"}, workspace_.path());
    (void)log_lines_at(quiet.err, {"warning", "error"});
    EXPECT_EQ(verbose.exit_code, quiet.exit_code) << verbose.err << quiet.err;
    if (quiet.exit_code == 0) {
        EXPECT_EQ(verbose.out, "ran\n");
        EXPECT_EQ(quiet.out, "ran\n");
        EXPECT_EQ(quiet.err, "") << "a log line in a plain run";
    } else {
        // No backend here (a real-backend phase fails on that elsewhere): the refusal is on
        // stderr, and stdout holds nothing.
        EXPECT_EQ(verbose.out, "");
        EXPECT_EQ(quiet.out, "");
    }
}

}  // namespace
}  // namespace cordon::test
