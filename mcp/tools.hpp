// The tools `cordon mcp` offers: one table (tools()) of each tool's name, its tools/list entry
// (input and output schemas, annotations; the limits they quote come from the server's options)
// and its handler. tools/list, the known-name check and the dispatch all come from it; a tool's
// arguments are read against its own inputSchema (mcp/arguments.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/mode.hpp"
#include "sandbox/policy.hpp"

namespace cordon::mcp {

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

// Inline output budgets, in bytes (max_output_bytes, max_bytes).
inline constexpr std::int64_t default_output_bytes = 30'000;
inline constexpr std::int64_t least_output_bytes = 1'000;
inline constexpr std::int64_t most_output_bytes = 1'000'000;
inline constexpr std::int64_t default_yield_ms = 30'000;
inline constexpr std::int64_t most_yield_ms = 50'000;
inline constexpr std::int64_t default_wait_ms = 10'000;
inline constexpr std::int64_t most_wait_ms = 30'000;

struct call;
class tool_context;

struct tool {
    std::string_view name;
    // Its tools/list entry but the name: title, description, inputSchema, outputSchema,
    // annotations.
    nlohmann::json (*describe)(const tool_limits& limits);
    // The tools/call result, or null for a cancelled call (mcp/tool_context.hpp).
    nlohmann::json (*run)(tool_context& context, call& running, const nlohmann::json& arguments);
};

// Every tool, in the order tools/list gives them.
[[nodiscard]] std::span<const tool> tools();
// The tool named `name`, or null.
[[nodiscard]] const tool* find_tool(std::string_view name);

// {"tools": [...]}, the tools/list result.
[[nodiscard]] nlohmann::json tool_list(const tool_limits& limits);

}  // namespace cordon::mcp
