// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon's own limits are cordon's to keep (docs/network.md, "What the proxy holds"): a real
// `cordon mcp` started under a low descriptor limit raises its own, gives its commands the one it
// was started with, and keeps the connections its runs open to the proxy within a budget, so that
// background jobs holding idle connections never make the next call fail.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/mcp_peer.hpp"
#include "real_backend.hpp"
#include "support.hpp"

namespace cordon::test {
namespace {

// Starts the server through bash after `ulimit` (-S: the soft limit only; without: both).
std::vector<std::string> under_ulimit(const std::string& flags) {
    return {"/bin/bash", "-c", "ulimit " + flags + " && exec \"$0\" \"$@\""};
}

// "Max open files  <soft>  <hard>  files" of /proc/<pid>/limits.
std::pair<std::string, std::string> open_files_limits(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("Max open files")) continue;
        std::istringstream words(line.substr(14));
        std::string soft;
        std::string hard;
        words >> soft >> hard;
        return {soft, hard};
    }
    return {};
}

class McpLimits : public ::testing::TestWithParam<real_backend> {
protected:
    std::vector<std::string> server_args(std::vector<std::string> more = {}) const {
        std::vector<std::string> args{"--workspace", workspace_.path().string(), "--backend",
                                      std::string(backend_flag(GetParam()))};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    }
    temp_dir workspace_;
    scoped_backend_path path_{GetParam()};
};

// The server takes its hard limit; a command gets the soft limit the server was started with.
TEST_P(McpLimits, ACommandSeesTheSoftLimitCordonWasStartedWith) {
    mcp_peer peer(server_args(), under_ulimit("-Sn 200"));
    peer.initialize();
    const json result = peer.call(1, "bash", {{"command", "ulimit -Sn; ulimit -Hn"}});
    ASSERT_FALSE(result.contains("error")) << result.dump();
    const std::string text = text_of(result);
    const auto [soft, hard] = open_files_limits(peer.pid());
    ASSERT_FALSE(hard.empty());
    EXPECT_EQ(soft, hard) << "the server keeps the soft limit it was started with";
    EXPECT_TRUE(text.starts_with("200\n" + hard + "\n")) << text;
}

// Four background jobs each open 40 connections to the proxy port and send nothing; the server's
// soft and hard limits are 256, which it cannot raise. The proxy serves a quarter of the table's
// worth and closes the rest as they arrive; a new call still runs, and each job's result says
// how many of its connections were closed and why.
TEST_P(McpLimits, IdleProxyConnectionsOfBackgroundJobsLeaveRoomForTheNextCall) {
    mcp_peer peer(server_args({"--allow-domain", "a.example"}), under_ulimit("-n 256"));
    peer.initialize();
    const std::string opener =
        "port=${HTTP_PROXY##*:}; port=${port%%/*}; n=0; "
        "for i in $(seq 40); do exec {fd}<>/dev/tcp/127.0.0.1/$port && n=$((n+1)); done; "
        "echo opened $n; sleep 8";
    std::vector<std::string> jobs;
    for (int i = 0; i < 4; ++i) {
        const json started =
            peer.call(10 + i, "bash", {{"command", opener}, {"run_in_background", true}});
        ASSERT_TRUE(started.contains("structuredContent")) << started.dump();
        jobs.push_back(started["structuredContent"]["job_id"]);
    }
    // Every job has opened its connections (and holds them) before the next call.
    int id = 20;
    for (const std::string& job : jobs) {
        std::string seen;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (seen.find("opened") == std::string::npos &&
               std::chrono::steady_clock::now() < until) {
            const json got = peer.call(id++, "job_output", {{"job_id", job}, {"offset", 0}});
            seen = got["structuredContent"]["output"].get<std::string>();
        }
        ASSERT_NE(seen.find("opened 40"), std::string::npos) << seen;
    }
    const json next = peer.call(30, "bash", {{"command", "echo next call ran"}});
    EXPECT_NE(text_of(next).find("next call ran"), std::string::npos) << next.dump();

    unsigned long closed = 0;
    for (const std::string& job : jobs) {
        (void)peer.call(id++, "job_kill", {{"job_id", job}});
        const json ended =
            peer.call(id++, "job_output", {{"job_id", job}, {"offset", 0}, {"wait", "exit"}});
        const std::string text = text_of(ended);
        static const std::regex marker(
            R"(\[sandbox: the network proxy closed (\d+) new connections? as they arrived \(([^\]]*)\): a limit of cordon's, not the policy\])");
        std::smatch found;
        if (std::regex_search(text, found, marker)) {
            closed += std::stoul(found[1].str());
            EXPECT_NE(found[2].str().find("at once"), std::string::npos) << text;
        }
    }
    // 160 connections, at most 32 served at once (a quarter of 256, two descriptors each).
    EXPECT_GE(closed, 160U - 32U);
}

INSTANTIATE_TEST_SUITE_P(Rungs, McpLimits,
                         ::testing::Values(real_backend::bwrap, real_backend::landlock),
                         real_backend_name);

}  // namespace
}  // namespace cordon::test
