// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The `cordon` program and bytes that are not UTF-8 (docs/contract.md, "Bytes that are not
// UTF-8"): a command, a workspace, a working directory, a session log and a configuration file
// under a directory named with \xff. Each JSON document parses as strict JSON, each string
// unescapes to its very bytes, and the exit code is the command's (it used to be 134: nlohmann's
// type_error 316, uncaught, and nothing printed under --json).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/json_text.hpp"
#include "cli/commands.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

// The strict parse of one JSON document with every string unescaped; a test failure (and null)
// when it is not one.
nlohmann::json parsed_document(const cli_result& r) {
    nlohmann::json out;
    try {
        out = nlohmann::json::parse(r.out);
    } catch (const nlohmann::json::exception& error) {
        ADD_FAILURE() << error.what() << "\nstdout: " << r.out << "\nstderr: " << r.err;
        return nullptr;
    }
    base::unescape_json_strings(out);
    return out;
}

class CliBytes : public ::testing::Test {
protected:
    void SetUp() override { fs::create_directories(workspace_ / "sub\xfe"); }

    temp_dir scratch_{"/var/tmp", "cordon-cli-bytes-"};
    fs::path odd_ = scratch_.path() / "dir\xff";
    fs::path workspace_ = odd_ / "ws";
    fs::path log_ = odd_ / "session.jsonl";
};

TEST_F(CliBytes, ASessionRunInAWorkspaceUnderSuchANameKeepsEveryByte) {
    const cli_result r =
        run_cordon({"run", "--session", log_.string(), "--json", "--", "echo", "\xff"}, workspace_);
    if (r.exit_code == cli::exit_sandbox_unavailable &&
        r.out.find("SANDBOX_UNAVAILABLE") != std::string::npos)
        CORDON_SKIP_OR_FAIL("no sandbox backend: " + r.out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json record = parsed_document(r);
    EXPECT_EQ(record["outcome"], "exited");
    EXPECT_EQ(record["stdout"]["text"], "\xff\n");

    // The command's own exit code, with bytes on both streams and a working directory that is
    // not UTF-8 either.
    const cli_result failed = run_cordon(
        {"run", "--session", log_.string(), "--json", "--workdir",
         (workspace_ / "sub\xfe").string(), "-c", "pwd; printf '\\300\\257' >&2; exit 7"},
        workspace_);
    EXPECT_EQ(failed.exit_code, 7) << failed.err;
    const nlohmann::json record7 = parsed_document(failed);
    EXPECT_EQ(record7["exitCode"], 7);
    EXPECT_EQ(record7["stdout"]["text"], (workspace_ / "sub\xfe").string() + "\n");
    EXPECT_EQ(record7["stderr"]["text"], "\xc0\xaf");

    // The session the runs created: its root is the workspace, byte for byte, shown and as JSON.
    const cli_result shown = run_cordon({"session", "show", log_.string(), "--json"}, workspace_);
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    const nlohmann::json session = parsed_document(shown);
    EXPECT_EQ(session["root"], workspace_.string());
    EXPECT_EQ(session["path"], log_.string());
    const cli_result text = run_cordon({"session", "show", log_.string()}, workspace_);
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("dir\\xff/ws"), std::string::npos) << text.out;
}

TEST_F(CliBytes, AWorkspaceWriteRunAndConfineReportTheWorkspaceWithItsBytes) {
    const cli_result r = run_cordon({"run", "--json", "--mode", "workspace-write", "--workspace",
                                     workspace_.string(), "-c", "touch made; echo '\xed\xa0\x80'"},
                                    odd_);
    if (r.exit_code == cli::exit_sandbox_unavailable &&
        r.out.find("SANDBOX_UNAVAILABLE") != std::string::npos)
        CORDON_SKIP_OR_FAIL("no sandbox backend: " + r.out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json record = parsed_document(r);
    EXPECT_EQ(record["stdout"]["text"], "\xed\xa0\x80\n");
    ASSERT_FALSE(record["sandbox"]["policy"]["writableRoots"].empty()) << r.out;
    EXPECT_EQ(record["sandbox"]["policy"]["writableRoots"][0], workspace_.string());
    EXPECT_TRUE(fs::exists(workspace_ / "made"));

    const cli_result confined =
        run_cordon({"confine", "--json", "--mode", "workspace-write", "--workspace",
                    workspace_.string(), "--", "echo", "\xe2\x82"},
                   odd_);
    const nlohmann::json argv = parsed_document(confined);
    ASSERT_TRUE(argv.is_array() || argv.contains("error")) << confined.out;
    if (argv.is_array()) {
        EXPECT_EQ(argv.back(), "\xe2\x82");
    }
}

TEST_F(CliBytes, ConfigShowAndProbeReportPathsWithTheirBytes) {
    fs::create_directories(odd_ / "conf");
    std::ofstream(odd_ / "conf" / "config.toml") << "timeout = \"30s\"\n";
    const cli_result config = run_cordon({"config", "show", "--json"}, workspace_, {},
                                         {{"CORDON_CONFIG_DIRS", (odd_ / "conf").string()}});
    EXPECT_EQ(config.exit_code, 0) << config.err;
    const nlohmann::json settings = parsed_document(config);
    ASSERT_EQ(settings["files"].size(), 1U) << config.out;
    EXPECT_EQ(settings["files"][0], (odd_ / "conf" / "config.toml").string());
    // A path that holds a NUL would end at it in every system call: refused, one line, exit 2.
    std::ofstream(odd_ / "conf" / "config.toml") << "writable_roots = [\"/tmp\\u0000x\"]\n";
    const cli_result nul = run_cordon({"config", "show", "--json"}, workspace_, {},
                                      {{"CORDON_CONFIG_DIRS", (odd_ / "conf").string()}});
    EXPECT_EQ(nul.exit_code, cli::exit_usage) << nul.out;
    EXPECT_TRUE(nul.out.empty()) << nul.out;
    EXPECT_NE(nul.err.find("writable_roots: a path holds a NUL byte"), std::string::npos)
        << nul.err;

    // A cordon whose runners lie under such a name (/var/tmp is writable by everyone: each rung
    // is refused, and says where its runner is).
    fs::create_directories(odd_ / "bin");
    fs::copy_file(cordon_path(), odd_ / "bin" / "cordon");
    fs::copy_file(launcher_path(), odd_ / "bin" / "cordon-landlock");
    const std::string copy = (odd_ / "bin" / "cordon").string();
    cli_result probe;
    {
        runtime::process_spec spec;
        spec.argv = {copy, "probe", "--json"};
        spec.env = runtime::build_environment(environ, {});
        spec.cwd = workspace_;
        spec.timeout = std::chrono::seconds(60);
        const runtime::process_outcome outcome = runtime::run_process(std::move(spec));
        probe.exit_code = outcome.exit_code.value_or(-1);
        probe.out = outcome.stdout_output.text;
        probe.err = outcome.stderr_output.text;
    }
    EXPECT_TRUE(probe.exit_code == 0 || probe.exit_code == cli::exit_sandbox_unavailable)
        << probe.exit_code << probe.err;
    const nlohmann::json report = parsed_document(probe);
    EXPECT_NE(base::dump_json(report).find("cordon-landlock"), std::string::npos) << probe.out;
    bool named = false;
    for (const auto& rung : report["rungs"]) {
        for (const auto& [key, value] : rung.items()) {
            if (value.is_string() &&
                value.get<std::string>().find((odd_ / "bin").string()) != std::string::npos) {
                named = true;
            }
        }
    }
    EXPECT_TRUE(named) << probe.out;
}

}  // namespace
}  // namespace cordon::test
