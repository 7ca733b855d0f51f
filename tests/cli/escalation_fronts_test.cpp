// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// One escalation for both front ends: `cordon run --escalate` and the MCP `bash` tool build their
// question with the same builder (policy::make_escalation, through cordon::escalate), so that the
// same command asked for in the same place, with the same environment override, puts the same
// question to the approval service. Read where both leave it: the approval/asked event of their
// session logs. The approval policy is `never`, so nothing waits for an answer and nothing runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "mcp/mcp_peer.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

// The one approval/asked event of the session log at `log`, or null.
json asked_event(const fs::path& log) {
    json found;
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
        json event = json::parse(line);
        if (event["type"] != "approval/asked") continue;
        EXPECT_TRUE(found.is_null()) << "two questions in " << log;
        found = std::move(event);
    }
    return found;
}

TEST(EscalationFronts, RunAndTheBashToolAskTheSameQuestion) {
    temp_dir workspace;
    temp_dir state;  // under /var/tmp, where no workspace-write run writes
    const fs::path run_log = state / "run.jsonl";
    const fs::path mcp_log = state / "mcp.jsonl";
    const std::string command = "touch made";
    const std::string why = "the test compares the questions";

    const cli_result run =
        run_cordon({"run", "--workspace", workspace.path().string(), "--session", run_log.string(),
                    "--approval", "never", "--escalate", "workspace-write", "--justification", why,
                    "--env", "CORDON_FRONTS=1", "-c", command},
                   workspace.path());
    EXPECT_EQ(run.exit_code, cli::exit_not_approved) << run.err;

    {
        mcp_peer peer({"--workspace", workspace.path().string(), "--session", mcp_log.string(),
                       "--approval", "never"});
        peer.initialize();
        const json result = peer.call(1, "bash",
                                      {{"command", command},
                                       {"sandbox_permissions", "workspace-write"},
                                       {"justification", why},
                                       {"env", {{"CORDON_FRONTS", "1"}}}});
        EXPECT_EQ(result["structuredContent"]["status"], "not_run") << result.dump();
    }
    EXPECT_FALSE(fs::exists(workspace / "made"));

    json from_run = asked_event(run_log);
    json from_mcp = asked_event(mcp_log);
    ASSERT_TRUE(from_run.is_object());
    ASSERT_TRUE(from_mcp.is_object());
    EXPECT_EQ(from_run["tool"], "cordon run");
    EXPECT_EQ(from_mcp["tool"], "bash");
    EXPECT_EQ(from_run["mode"], "workspace-write");
    EXPECT_EQ(from_run["from"], "read-only");
    EXPECT_EQ(from_run["workdir"], workspace.path().string());
    EXPECT_EQ(from_run["env"], json::array({"CORDON_FRONTS=1"}));
    for (json* event : {&from_run, &from_mcp}) {
        for (const char* differs : {"id", "at", "tool"})
            event->erase(differs);
    }
    EXPECT_EQ(from_run, from_mcp);
}

}  // namespace
}  // namespace cordon::test
