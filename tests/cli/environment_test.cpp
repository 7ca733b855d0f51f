// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The command's environment through a real `cordon run`, as a user would see it: the default
// scrub of credential-shaped names and of URLs with a password, --env-clear, --env-keep and
// --env-unset (globs), --env winning over all of them; the test child prints what it got.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

extern char** environ;

namespace cordon::test {
namespace {

// What cordon's own environment holds beside the test's (scrubbed) one: a workstation's worth
// of credentials under the names people give them, and ordinary variables.
const std::map<std::string, std::optional<std::string>> workstation{
    {"OPENAI_API_KEY", "sk-1"},
    {"PGPASSWORD", "hunter2"},
    {"DB_PASSWD", "hunter2"},
    {"CLIENT_SECRET", "s"},
    {"GITHUB_TOKEN", "ghp_1"},
    {"MY_CRED", "hunter2"},
    {"NPM_AUTH", "a"},
    {"SSH_AUTH_SOCK", "/run/user/1/ssh-agent"},
    {"AWS_SESSION_TOKEN", "t"},
    {"DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1/bus"},
    {"SESSION_COOKIE", "c"},
    {"SIGNING_PRIVATE", "p"},
    {"GITHUB_PAT", "ghp_2"},
    {"MYSQL_PWD", "hunter2"},
    {"DATABASE_URL", "postgres://u:hunter2@db/app"},
    {"https_proxy", "http://u:hunter2@proxy:3128"},
    {"CORDON_CLI_PLAIN", "plain"},
    {"GIT_AUTHOR_NAME", "A U Thor"},
    {"XDG_SESSION_TYPE", "tty"},
    {"JAVA_HOME", "/usr/lib/jvm/x"},
    {"NO_PROXY", "localhost"},
    {"HTTP_PROXY", "http://proxy:3128"},
    {"LC_CTYPE", "C.UTF-8"},
    {"TZ", "UTC"},
};

const std::set<std::string> credentials{"OPENAI_API_KEY",    "PGPASSWORD",
                                        "DB_PASSWD",         "CLIENT_SECRET",
                                        "GITHUB_TOKEN",      "MY_CRED",
                                        "NPM_AUTH",          "SSH_AUTH_SOCK",
                                        "AWS_SESSION_TOKEN", "DBUS_SESSION_BUS_ADDRESS",
                                        "SESSION_COOKIE",    "SIGNING_PRIVATE",
                                        "GITHUB_PAT",        "MYSQL_PWD",
                                        "DATABASE_URL",      "https_proxy"};

// The environment the command printed, by `cordon run --json ... -- <child> print-env` in
// `mode`, with `flags` before the command.
std::map<std::string, std::string> env_under(const std::vector<std::string>& flags,
                                             const std::filesystem::path& workspace,
                                             const std::string& mode = "danger-full-access") {
    std::vector<std::string> args{"run", "--json", "--mode", mode};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", test_child_path().string(), "print-env"});
    const cli_result result = run_cordon(args, workspace, {}, workstation);
    EXPECT_EQ(result.exit_code, 0) << result.err << result.out;
    std::map<std::string, std::string> env;
    if (result.exit_code != 0) return env;
    const auto record = nlohmann::json::parse(result.out);
    for (const auto& line : split_lines(record.at("stdout").at("text").get<std::string>())) {
        const auto equals = line.find('=');
        if (equals != std::string::npos) env[line.substr(0, equals)] = line.substr(equals + 1);
    }
    return env;
}

class CliEnvironment : public ::testing::Test {
protected:
    temp_dir workspace_;
};

TEST_F(CliEnvironment, EveryCredentialShapedVariableIsDroppedAndOrdinaryOnesPass) {
    for (const std::string mode : {"danger-full-access", "read-only"}) {
        SCOPED_TRACE(mode);
        auto env = env_under({}, workspace_.path(), mode);
        for (const auto& name : credentials) {
            EXPECT_FALSE(env.contains(name)) << name;
        }
        for (const auto& [name, value] : workstation) {
            if (!credentials.contains(name)) {
                EXPECT_EQ(env[name], *value) << name;
            }
        }
        EXPECT_EQ(env["PATH"], std::getenv("PATH"));
        EXPECT_EQ(env["TERM"], "dumb");
        EXPECT_EQ(env["NO_COLOR"], "1");
    }
}

TEST_F(CliEnvironment, EnvClearLeavesExactlyTheMinimalSetTheDefaultsAndEnv) {
    std::set<std::string> expected{"GIT_PAGER",        "NO_COLOR", "PAGER", "TERM",
                                   "CORDON_CLI_GIVEN", "LC_CTYPE", "TZ"};
    const std::set<std::string> minimal{"PATH", "HOME", "USER",   "LOGNAME", "SHELL",
                                        "LANG", "TERM", "TMPDIR", "TZ"};
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string text(*entry);
        const std::string name = text.substr(0, text.find('='));
        if (minimal.contains(name) || name.rfind("LC_", 0) == 0) expected.insert(name);
    }
    for (const std::string mode : {"danger-full-access", "read-only"}) {
        SCOPED_TRACE(mode);
        const auto env =
            env_under({"--env-clear", "--env", "CORDON_CLI_GIVEN=1"}, workspace_.path(), mode);
        std::set<std::string> names;
        for (const auto& [name, value] : env)
            names.insert(name);
        EXPECT_EQ(names, expected);
        EXPECT_EQ(env.at("TZ"), "UTC");
    }
}

TEST_F(CliEnvironment, EnvKeepWithAGlobRescuesAScrubbedName) {
    auto env = env_under(
        {"--env-keep", "*_PAT", "--env-keep", "SSH_AUTH_SOCK", "--env-keep", "DATABASE_UR?"},
        workspace_.path());
    EXPECT_EQ(env["GITHUB_PAT"], "ghp_2");
    EXPECT_EQ(env["SSH_AUTH_SOCK"], "/run/user/1/ssh-agent");
    EXPECT_EQ(env["DATABASE_URL"], "postgres://u:hunter2@db/app");
    EXPECT_FALSE(env.contains("GITHUB_TOKEN")) << "the rest of the scrub holds";

    // Over --env-clear too.
    env = env_under({"--env-clear", "--env-keep", "JAVA_*"}, workspace_.path());
    EXPECT_EQ(env["JAVA_HOME"], "/usr/lib/jvm/x");
    EXPECT_FALSE(env.contains("CORDON_CLI_PLAIN"));
}

TEST_F(CliEnvironment, EnvUnsetWithAGlobRemovesNames) {
    const auto env = env_under({"--env-unset", "*PROXY*", "--env-unset", "GIT_AUTHOR_?AME",
                                "--env-unset", "PAGER", "--env-keep", "NO_PROXY"},
                               workspace_.path());
    EXPECT_FALSE(env.contains("NO_PROXY")) << "unset wins over keep";
    EXPECT_FALSE(env.contains("HTTP_PROXY"));
    EXPECT_FALSE(env.contains("GIT_AUTHOR_NAME"));
    EXPECT_FALSE(env.contains("PAGER")) << "a default is unset too";
    EXPECT_EQ(env.at("GIT_PAGER"), "cat");
    EXPECT_EQ(env.at("CORDON_CLI_PLAIN"), "plain");
}

TEST_F(CliEnvironment, AnExplicitEnvWinsOverEverything) {
    const auto env = env_under({"--env-clear", "--env-unset", "GITHUB_*", "--env",
                                "GITHUB_TOKEN=given", "--env", "GITHUB_PAT=also"},
                               workspace_.path());
    EXPECT_EQ(env.at("GITHUB_TOKEN"), "given");
    EXPECT_EQ(env.at("GITHUB_PAT"), "also");
}

}  // namespace
}  // namespace cordon::test
