// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon mcp` applies its environment options (--env-clear, --env-keep, --env-unset) to every
// command it runs, under its real sandbox: a bash call prints the environment it got. The default
// scrub holds there as it does for `cordon run`, and a call's own `env` wins over everything.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "mcp/mcp_peer.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::test {
namespace {

// NAME -> value of what `env` printed in a bash call's output.
std::map<std::string, std::string> printed_env(const json& result) {
    std::map<std::string, std::string> env;
    for (const auto& line : split_lines(result["structuredContent"]["output"].get<std::string>())) {
        const auto equals = line.find('=');
        if (equals != std::string::npos) env[line.substr(0, equals)] = line.substr(equals + 1);
    }
    return env;
}

class McpEnvironment : public ::testing::Test {
protected:
    temp_dir workspace_;
    // cordon mcp inherits these from the test (mcp_peer passes environ as it is).
    scoped_env token_{"CORDON_MCP_ENV_TOKEN", "t"};
    scoped_env pat_{"CORDON_MCP_ENV_PAT", "ghp_x"};
    scoped_env url_{"CORDON_MCP_ENV_DSN", "postgres://u:hunter2@db/app"};
    scoped_env plain_{"CORDON_MCP_ENV_PLAIN", "plain"};
    scoped_env other_{"CORDON_MCP_ENV_OTHER", "other"};
};

TEST_F(McpEnvironment, TheDefaultScrubAppliesToEveryCall) {
    mcp_peer peer({"--workspace", workspace_.path().string()});
    peer.initialize();
    for (int id : {1, 2}) {
        const json result = peer.call(id, "bash", {{"command", "env"}});
        ASSERT_EQ(result["structuredContent"]["exitCode"], 0) << text_of(result);
        const auto env = printed_env(result);
        EXPECT_FALSE(env.contains("CORDON_MCP_ENV_TOKEN"));
        EXPECT_FALSE(env.contains("CORDON_MCP_ENV_PAT"));
        EXPECT_FALSE(env.contains("CORDON_MCP_ENV_DSN")) << "a URL with a password";
        EXPECT_EQ(env.at("CORDON_MCP_ENV_PLAIN"), "plain");
        EXPECT_EQ(env.at("CORDON_MCP_ENV_OTHER"), "other");
    }
}

TEST_F(McpEnvironment, TheServersPolicyAppliesToEveryCallAndACallsEnvWins) {
    mcp_peer peer({"--workspace", workspace_.path().string(), "--env-clear", "--env-keep",
                   "CORDON_MCP_ENV_*", "--env-unset", "*_PLAIN", "--env-unset", "*_DSN"});
    peer.initialize();
    for (int id : {1, 2}) {
        const json result = peer.call(id, "bash", {{"command", "env"}});
        ASSERT_EQ(result["structuredContent"]["exitCode"], 0) << text_of(result);
        const auto env = printed_env(result);
        EXPECT_EQ(env.at("CORDON_MCP_ENV_TOKEN"), "t") << "kept by the glob";
        EXPECT_EQ(env.at("CORDON_MCP_ENV_PAT"), "ghp_x");
        EXPECT_EQ(env.at("CORDON_MCP_ENV_OTHER"), "other");
        EXPECT_FALSE(env.contains("CORDON_MCP_ENV_PLAIN")) << "unset over keep";
        EXPECT_FALSE(env.contains("CORDON_MCP_ENV_DSN"));
        EXPECT_EQ(env.at("PATH"), std::getenv("PATH"));
    }
    // Cleared: nothing of the test's environment but the minimal set and the kept names (bash
    // adds its own PWD, SHLVL and _).
    const json cleared = peer.call(3, "bash", {{"command", "env"}});
    for (const auto& [name, value] : printed_env(cleared)) {
        const bool minimal = name == "PATH" || name == "HOME" || name == "USER" ||
                             name == "LOGNAME" || name == "SHELL" || name == "LANG" ||
                             name.rfind("LC_", 0) == 0 || name == "TERM" || name == "TMPDIR" ||
                             name == "TZ";
        const bool defaults = name == "NO_COLOR" || name == "PAGER" || name == "GIT_PAGER";
        const bool bash = name == "PWD" || name == "SHLVL" || name == "_";
        EXPECT_TRUE(minimal || defaults || bash || name.rfind("CORDON_MCP_ENV_", 0) == 0) << name;
    }
    // The call's own env wins over the unset.
    const json given = peer.call(4, "bash",
                                 {{"command", "echo \"$CORDON_MCP_ENV_PLAIN\""},
                                  {"env", {{"CORDON_MCP_ENV_PLAIN", "given"}}}});
    EXPECT_EQ(given["structuredContent"]["output"], "given\n");
}

TEST_F(McpEnvironment, ABadNameIsOneLineAndExitTwo) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--env-keep", "A=B"},
                                                 std::vector<std::string>{"--env-unset", "[A-Z]*"},
                                                 std::vector<std::string>{"--env-unset", ""}}) {
        mcp_peer peer(args);
        peer.close_input();
        const auto status = peer.wait_exit(std::chrono::seconds(20));
        ASSERT_TRUE(status);
        EXPECT_EQ(WEXITSTATUS(*status), 2) << args[0] << " " << args[1];
    }
}

}  // namespace
}  // namespace cordon::test
