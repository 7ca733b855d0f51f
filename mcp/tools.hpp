// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

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

#include "cordon/mcp_server.hpp"
#include "cordon/mode.hpp"
#include "cordon/policy.hpp"

namespace cordon::mcp {

// Inline output budgets, in bytes (max_output_bytes, max_bytes).
inline constexpr std::int64_t default_output_bytes = 30'000;
inline constexpr std::int64_t least_output_bytes = 1'000;
inline constexpr std::int64_t most_output_bytes = 1'000'000;
inline constexpr std::int64_t default_yield_ms = 30'000;
inline constexpr std::int64_t most_yield_ms = 50'000;
inline constexpr std::int64_t default_wait_ms = 10'000;
inline constexpr std::int64_t most_wait_ms = 30'000;
// A job under a terminal is shown once its output has been quiet this long (an interactive
// program waits for a key), unless a call says otherwise (job_write's quiet_ms).
inline constexpr std::chrono::milliseconds screen_quiet{500};
// The most text of a screen a result holds (its rows are in it twice: text and structured).
// (Escaped in JSON, a character outside the BMP takes 12 bytes for its 4.)
inline constexpr std::size_t screen_budget_bytes = 256 * 1024;
// Lines of scrollback a call may ask for.
inline constexpr std::int64_t most_scrollback_lines = 1'000;

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
