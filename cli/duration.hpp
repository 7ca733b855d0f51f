// Parsing of the durations and sizes the CLI accepts.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cordon::cli {

// "500ms", "30s", "2m", "1h"; a bare number is seconds, as for timeout(1). Positive only.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// A positive decimal byte count, e.g. "64000".
[[nodiscard]] std::optional<std::uint64_t> parse_byte_count(std::string_view text);

// A positive size with an optional binary suffix: "1048576", "512K", "256M", "2G" (also "KiB",
// "MiB", "GiB"; any case).
[[nodiscard]] std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace cordon::cli
