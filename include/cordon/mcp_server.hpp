// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon mcp`: a Model Context Protocol server over stdio (docs/mcp.md). It offers cordon as a
// shell tool to agents in any language: `bash` runs a command under the standing sandbox mode
// (the session's, else the server's) and returns within a bounded time, turning a long command
// into a background job; job_output, job_write, job_kill and job_list work on those jobs. Jobs
// belong to the server's supervisor (jobs.hpp), so that none outlives the server.
//
//     cordon::mcp::server_options options;
//     options.workspace = "/home/me/src/app";
//     options.bash = "/bin/bash";
//     cordon::mcp::server(cordon::make_local_provider(), std::move(options))
//         .serve(STDIN_FILENO, STDOUT_FILENO);
//
// Escalation: a bash call may ask to run under a wider mode with a justification. The server's
// approval service (approval.hpp) decides before anything runs; when the client declared
// form elicitation, its chain asks the person behind the client (docs/mcp.md).
//
// Concurrency: one thread reads the input and answers what is quick (initialize, ping,
// tools/list, cancellations) at once; every tools/call runs on a thread of its own, so that a
// slow call never holds up another call or a ping. Replies are written whole, one line each, in
// the order they are ready.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cordon/approval.hpp"
#include "cordon/export.hpp"
#include "cordon/jobs.hpp"
#include "cordon/policy.hpp"
#include "cordon/provider.hpp"
#include "cordon/session_log.hpp"
#include "cordon/version.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::mcp {

// What the tools offer, as their schemas say it: the mode and network of a call, its timeouts,
// the cap on running jobs.
struct tool_limits {
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    // The server's network policy, as the bash tool's schema names it (server_options::network
    // is what every call runs with).
    sandbox::network_policy network = sandbox::network_policy::deny;
    std::vector<std::string> allowed_domains;            // under proxy, as the schema names them
    std::chrono::milliseconds default_timeout{120'000};  // a bash call that is not backgrounded
    std::chrono::milliseconds max_timeout{600'000};
    std::chrono::milliseconds job_timeout{1'800'000};  // run_in_background
    std::chrono::milliseconds max_job_timeout{7'200'000};
    std::size_t max_jobs = 10;
};

struct server_options {
    tool_limits limits;
    std::filesystem::path workspace;  // absolute and canonical
    std::filesystem::path bash;       // the shell `bash` calls run with -c
    // The policy's parts beyond the mode, applied to every call (policy.hpp).
    sandbox::path_rules rules;
    // The network of every bash call (docs/network.md); a call may ask for more by escalation.
    sandbox::network_rules network;
    // The session the server serves, or null. Its sandbox/mode and working directory are the
    // standing policy of every call (else limits.mode and `workspace`); its approval/policy
    // wins over approval.policy; it records every question and its answer, and the grants.
    // Keep it where no confined command can write (jobs.executor.protected_paths).
    std::shared_ptr<const policy::session_log> session;
    // The configured approval policy, and how long a question may stay unanswered.
    policy::approval_options approval;
    // How the environment of every command the server runs is filtered (a call's own `env`
    // still wins).
    runtime::environment_policy environment;
    // The memory limit of every command the server runs (0: unlimited; nullopt: the executor's
    // default, half of the host's memory). A limit this host cannot enforce fails each call.
    std::optional<std::uint64_t> max_memory;
    // How jobs run (kill plan, output limits, spill root, ...). Its cap and lifetime come from
    // `limits`.
    runtime::supervisor_options jobs;
    // A call that waits and has a progress token hears from the server at least this often.
    std::chrono::milliseconds progress_interval{5'000};
    // When the input ends or the server is told to stop: how long a job's tree has between
    // SIGTERM and SIGKILL. Short, as MCP clients follow the closing of stdin with SIGTERM after
    // about 2 s.
    std::chrono::milliseconds shutdown_grace{500};
    std::size_t max_line_bytes = 8 << 20;  // a longer message is refused, and the server goes on
    std::size_t max_calls_in_flight = 64;
    std::string version = CORDON_VERSION_STRING;  // serverInfo.version
};

class server {
public:
    // `provider` as for runtime::executor (null: danger-full-access only).
    server(std::shared_ptr<sandbox::provider> provider, server_options options);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Serves messages from `in` and answers on `out` until `in` ends, `interrupt` (when not -1)
    // becomes readable, or `out` breaks. Then it ends every job's tree (SIGTERM, SIGKILL after
    // shutdown_grace), waits for every call, and returns. Call once.
    void serve(int in, int out, int interrupt = -1);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace cordon::mcp
CORDON_PUBLIC_END
