// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What the tools of `cordon mcp` (mcp/bash_tool.cpp, mcp/job_tools.cpp) work with: the call they
// answer, the server as they see it (tool_context), and the few helpers that shape their results.
// The dispatcher (mcp/server.cpp) implements tool_context; the registry (mcp/tools.hpp) names the
// tools and their handlers.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <variant>

#include "cordon/escalate.hpp"
#include "cordon/jobs.hpp"
#include "cordon/mcp_server.hpp"
#include "mcp/job_view.hpp"
#include "policy/escalation.hpp"

namespace cordon::mcp {

// One tools/call in flight.
struct call {
    nlohmann::json id;
    nlohmann::json progress_token;  // null: the caller asked for no progress
    // Progress counts the milliseconds since the call came, so that it grows through the
    // approval and the wait for the command alike.
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    // The progress last sent: each notification must carry more than the one before (MCP), and
    // the approval's ticker and the wait for the job may send from two threads.
    std::mutex progress_mutex;
    std::int64_t last_progress = -1;  // guarded by progress_mutex
    std::atomic<bool> cancelled{false};
    std::stop_source withdraw;  // takes back a question the call is waiting on
    std::mutex mutex;
    std::shared_ptr<runtime::job> job;  // a bash call's job while the call waits for it
};

// The server as a tool sees it. Every member may be called from any call's thread.
class tool_context {
public:
    virtual ~tool_context() = default;

    [[nodiscard]] virtual const server_options& options() const noexcept = 0;
    [[nodiscard]] virtual runtime::supervisor& jobs() noexcept = 0;
    // The jobs' provider (null: danger-full-access only), also asked before an escalation
    // whether the wider run would be refused.
    [[nodiscard]] virtual const std::shared_ptr<sandbox::provider>& provider() const noexcept = 0;
    // The tool's entry of tools/list (its name and its inputSchema, from which its arguments are
    // read).
    [[nodiscard]] virtual const nlohmann::json& declared(std::string_view tool) const = 0;

    // Waits until `ready(slice_deadline)` says so, `deadline` passes or the call is cancelled;
    // meanwhile sends progress when the call asked for it. True when ready. Every wait is on a
    // job, so a server that shuts down ends it by ending the job.
    virtual bool wait_for(call& running, std::chrono::steady_clock::time_point deadline,
                          const std::function<bool(std::chrono::steady_clock::time_point)>& ready,
                          const std::function<std::string()>& progress) = 0;
    // Asks whether this one call may run under a wider mode (cordon/escalate.hpp) and, granted,
    // widens `request`. Blocks until decided; meanwhile a call with a progress token hears that
    // it waits for the user.
    virtual policy::escalation_outcome escalate(call& running, runtime::run_request& request,
                                                const policy::escalation_ask& ask,
                                                const policy::escalation_setting& setting) = 0;
    // A job as a tool shows it, with the escalation hint after a denial when a retry could be
    // allowed.
    [[nodiscard]] virtual job_view show(const runtime::job& job,
                                        const runtime::job_snapshot& snapshot,
                                        const window& shown) const = 0;
};

// A tool's result: the text, the structured content (none when null) and isError.
[[nodiscard]] nlohmann::json text_result(std::string text, nlohmann::json structured,
                                         bool is_error);
// A call the caller got wrong, or that cannot be done: the model reads it and corrects itself.
[[nodiscard]] nlohmann::json tool_error(std::string message);
// A job's result: its text, and its structured content compact() unless the call asked `verbose`.
[[nodiscard]] nlohmann::json tool_result(const job_view& shown, bool verbose = false);

// "job-3 running for 2.0s, 812 bytes of output".
[[nodiscard]] std::string progress_of(const runtime::job& job);
// The job, or the tool error that names the running ones.
[[nodiscard]] std::variant<std::shared_ptr<runtime::job>, nlohmann::json> find_job(
    const runtime::supervisor& jobs, const std::string& id);
[[nodiscard]] std::uint64_t stream_size(const runtime::job& job, runtime::job_output which);
[[nodiscard]] std::string shortened(const std::string& text, std::size_t most);

// The handlers, one per tool (the registry in mcp/tools.cpp names them). Each returns the
// tools/call result, or null for a cancelled call (which gets no reply).
nlohmann::json run_bash(tool_context& context, call& running, const nlohmann::json& given);
nlohmann::json run_job_output(tool_context& context, call& running, const nlohmann::json& given);
nlohmann::json run_job_write(tool_context& context, call& running, const nlohmann::json& given);
nlohmann::json run_job_kill(tool_context& context, call& running, const nlohmann::json& given);
nlohmann::json run_job_list(tool_context& context, call& running, const nlohmann::json& given);

}  // namespace cordon::mcp
