// The tools `cordon mcp` offers, as tools/list describes them: names, input and output schemas,
// annotations. The limits they quote come from the server's options.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>

#include "sandbox/mode.hpp"

namespace cordon::mcp {

struct tool_limits {
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
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

// {"tools": [...]}, the tools/list result.
[[nodiscard]] nlohmann::json tool_list(const tool_limits& limits);

}  // namespace cordon::mcp
